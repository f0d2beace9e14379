"""Evaluation tasks: how good is a space, and what each choice costs in quality.

Every task is a pure function of an ``encode`` callable (or arrays) and its
data, returning a :class:`TaskResult` in MTEB's shape (:mod:`repspace.engines.eval.mteb_format`
writes MTEB's results files). The store, layers and caching live in
:mod:`repspace.workflows.evaluate`; a researcher with a model and a notebook calls these directly.

Examples
--------
>>> import numpy as np
>>> from repspace.engines.eval import StsPairs, sts
>>> from repspace.engines.encoders import get_encoder
>>> pairs = StsPairs(["a cat", "a man runs", "stocks fell"], ["a kitten", "a man jogs", "a cat"],
...                  np.array([5.0, 4.0, 0.0]), "toy")
>>> sts(get_encoder("static"), pairs).main_metric
'spearman'
"""

from repspace.engines.eval._encode import (
    EncodeFn,
    TextCache,
    as_encode,
    as_query_encode,
)
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.bitext import BitextPairs, bitext, bitext_scores, load_bitext
from repspace.engines.eval.comparisons import compare_results
from repspace.engines.eval.bias import load_word_set, weat, weat_association, weat_p_value
from repspace.engines.eval.compression import (
    Codec,
    parse_dims,
    parse_precisions,
    plot_tradeoff,
    sweep_codecs,
    tradeoff_figure,
    tradeoff_rows,
)
from repspace.engines.eval.evalrank import evalrank, partner_ranks, positive_rows
from repspace.engines.eval.fewshot import few_shot, sample_shots
from repspace.engines.eval.knn_classify import knn_classification, knn_predict
from repspace.engines.eval.labels import (
    LabelledTexts,
    classification,
    clustering,
    load_labelled,
)
from repspace.engines.eval.mteb_format import (
    MTEB_VERSION,
    data_revision,
    parse_languages,
)
from repspace.engines.eval.pairclass import (
    PairLabels,
    load_pairs,
    pairclass,
    pairclass_scores,
)
from repspace.engines.eval.part_data import PART_TASKS, PartLabels, read_parts, select_part
from repspace.engines.eval.partition import Partition, PartScore, macro_interval
from repspace.engines.eval.probing import PROBING_TASKS, ProbingData, load_probing, load_probing_dir, probing
from repspace.engines.eval.ranking import ranking_scores
from repspace.engines.eval.reranking import RerankingData, load_reranking, reranking, reranking_scores
from repspace.engines.eval.retrieval import (
    BeirData,
    load_beir,
    retrieval,
    retrieval_from_vectors,
)
from repspace.engines.eval.sts import StsPairs, load_sts, sts, sts_scores
from repspace.engines.eval.uncertainty import Comparison
from repspace.engines.eval.units import Units
from repspace.engines.eval.summarization import (
    SummarizationData,
    load_summarization,
    summarization,
    summarization_scores,
)
from repspace.engines.eval.words import (
    Analogies,
    WordPairs,
    WordVectors,
    analogy,
    load_analogies,
    load_word_pairs,
    wordsim,
)

__all__ = [
    "TaskResult", "MTEB_VERSION", "data_revision", "parse_languages",
    "Units", "Comparison", "compare_results",
    "PART_TASKS", "PartLabels", "read_parts", "select_part", "Partition", "PartScore", "macro_interval",
    "EncodeFn", "TextCache", "as_encode", "as_query_encode",
    "StsPairs", "load_sts", "sts", "sts_scores",
    "BeirData", "load_beir", "retrieval", "retrieval_from_vectors", "ranking_scores",
    "WordVectors", "WordPairs", "Analogies", "load_word_pairs", "load_analogies", "wordsim", "analogy",
    "LabelledTexts", "load_labelled", "clustering", "classification",
    "few_shot", "sample_shots", "knn_classification", "knn_predict",
    "PairLabels", "load_pairs", "pairclass", "pairclass_scores",
    "RerankingData", "load_reranking", "reranking", "reranking_scores",
    "BitextPairs", "load_bitext", "bitext", "bitext_scores",
    "SummarizationData", "load_summarization", "summarization", "summarization_scores",
    "Codec", "parse_dims", "parse_precisions", "sweep_codecs", "tradeoff_rows", "tradeoff_figure",
    "plot_tradeoff",
    "evalrank", "partner_ranks", "positive_rows",
    "load_word_set", "weat", "weat_association", "weat_p_value",
    "PROBING_TASKS", "ProbingData", "load_probing", "load_probing_dir", "probing",
]
