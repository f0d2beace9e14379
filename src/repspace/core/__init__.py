"""The core layer: errors, the space description, arrays, exact k-NN, threads, filters and the SQLite store.

Imports nothing from the layers above (engines, workflows, interfaces); see
docs/ARCHITECTURE.md and the import contract in pyproject.toml.
"""
