"""Reports rendered from result objects: self-contained HTML pages (geometry, dictionary, evaluation results).

Examples
--------
>>> import numpy as np
>>> from repspace.engines.geometry import diagnose
>>> page = diagnosis_html(diagnose(np.random.default_rng(0).standard_normal((300, 8)), k=5), title="random")
>>> page.startswith("<!DOCTYPE html>"), page.count("<svg")
(True, 4)
"""

from repspace.interfaces.reports.diagnosis_html import (
    LAYER_METRICS,
    diagnosis_html,
    write_diagnosis_html,
)
from repspace.interfaces.reports.dictionary_html import dictionary_html, write_dictionary_html
from repspace.interfaces.reports.eval_html import eval_report_html, write_eval_report_html
from repspace.interfaces.reports.layer_profile_html import layer_profile_html, write_layer_profile_html

__all__ = ["LAYER_METRICS", "diagnosis_html", "dictionary_html", "eval_report_html", "layer_profile_html",
           "write_diagnosis_html", "write_dictionary_html", "write_eval_report_html", "write_layer_profile_html"]
