"""The evaluation workflow: resolve what to measure, run tasks and sweeps, record results.

The tasks themselves are pure functions in :mod:`repspace.engines.eval`; this layer
feeds them encoders (every layer from one pass) or stored spaces, and writes
what they return to the store. It also evaluates *repaired* spaces: a transform
(:mod:`repspace.engines.transforms`) fitted on the task's own vectors without labels, and
query-time hubness reduction for retrieval (see :mod:`repspace.workflows.evaluate._repair`),
and writes results in MTEB's results layout (:func:`write_mteb`). :func:`model_thresholds` reads a
model's similarity thresholds off a pair file. :func:`results_report` gathers results from ``--json`` files, MTEB
folders and the store, grouped by task with their tested comparisons (``repspace eval report`` renders it).
"""

from repspace.workflows.evaluate._compare import compare_saved
from repspace.workflows.evaluate._fewshot import run_fewshot, run_knn
from repspace.workflows.evaluate._intrinsic import (
    EVALRANK_KINDS,
    load_evalrank_data,
    run_evalrank,
    run_weat,
)
from repspace.workflows.evaluate._mteb import (
    MtebTask,
    lookup_mteb_task,
    write_mteb,
)
from repspace.workflows.evaluate._probing import run_probing
from repspace.workflows.evaluate._repair import (
    HUBNESS_METHODS,
    FittedTransform,
    fit_transform,
    hubness_retrieval,
    neighbour_hubness,
    parse_hubness,
    parse_transform,
)
from repspace.workflows.evaluate._run import (
    TASKS,
    EvalReport,
    evaluate,
    load_data,
    run,
    run_task,
    save_results,
    space_labels,
)
from repspace.workflows.evaluate._subjects import (
    Subject,
    encoder_subjects,
    space_subject,
)
from repspace.workflows.evaluate._report import (
    SIGNIFICANCE_LEVEL,
    ModelRow,
    ResultsReport,
    TaskReport,
    results_report,
)
from repspace.workflows.evaluate._thresholds import model_thresholds

__all__ = [
    "EVALRANK_KINDS",
    "HUBNESS_METHODS",
    "SIGNIFICANCE_LEVEL",
    "TASKS",
    "EvalReport",
    "FittedTransform",
    "ModelRow",
    "MtebTask",
    "ResultsReport",
    "Subject",
    "TaskReport",
    "compare_saved",
    "encoder_subjects",
    "evaluate",
    "fit_transform",
    "hubness_retrieval",
    "load_data",
    "load_evalrank_data",
    "lookup_mteb_task",
    "model_thresholds",
    "neighbour_hubness",
    "parse_hubness",
    "parse_transform",
    "run",
    "run_evalrank",
    "run_fewshot",
    "run_knn",
    "run_probing",
    "run_task",
    "results_report",
    "run_weat",
    "save_results",
    "space_labels",
    "space_subject",
    "write_mteb",
]
