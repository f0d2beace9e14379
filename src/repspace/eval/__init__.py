"""Evaluation tasks: how good is a space, and what each choice costs in quality."""
