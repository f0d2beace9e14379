"""The engines: pure computations, arrays (or callables) in, results out; no store.

``encoders``, ``search``, ``geometry``, ``compare``, ``align``, ``transforms``,
``eval``, ``interpret``, ``learn``. Each depends only on the core, and on no other engine except where
the import contract in pyproject.toml says why.
"""
