"""The evaluation workflow: resolve what to measure, run tasks and sweeps, record results.

The tasks themselves are pure functions in :mod:`repspace.eval`; this layer
feeds them encoders (every layer from one pass) or stored spaces, and writes
what they return to the store.
"""

from repspace.evaluate._run import TASKS, EvalReport, evaluate, load_data, run, run_task, save_results, space_labels
from repspace.evaluate._subjects import Subject, encoder_subjects, space_subject

__all__ = ["TASKS", "EvalReport", "run", "Subject", "encoder_subjects", "space_subject", "evaluate", "load_data",
           "run_task", "save_results", "space_labels"]
