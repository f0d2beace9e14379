"""The workflows: what a user runs over a store or with encoders, built from the engines.

ingest, search over a stored space, diagnose, compare, align, transform,
evaluate, the upgrade check, bench, export and the demo.
"""
