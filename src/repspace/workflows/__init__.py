"""The workflows: what a user runs over a store or with encoders, built from the engines.

ingest, search over a stored space, diagnose, compare, align, transform,
evaluate, interpret, learn, the explorer's views and layouts, the upgrade
check, bench, export, the demo, and the distributed backend (Ray) as another
way to run a workflow's heavy steps.
"""
