"""mteb's own task classes run in-process on vectors we already have: the reference of the MTEB-protocol tests.

:class:`TableEncoder` is an object mteb 2.26.24 accepts as an encoder (its ``EncoderProtocol``): it answers
every text mteb asks for with the vector a table gives it (queries from a table of their own, so an
asymmetric model's two sides are kept), and scores with the cosine in float64. The task classes below are
mteb's abstract tasks given the data in memory instead of a Hugging Face download; mteb's evaluators,
its metrics and its handling of the data (ids, filtering, normalisation) do the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mteb", reason="mteb is a test dependency (pyproject.toml, extra 'test')")

from datasets import Dataset, DatasetDict  # noqa: E402
from mteb.abstasks.task_metadata import TaskMetadata  # noqa: E402
from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining  # noqa: E402
from mteb.abstasks.text.summarization import AbsTaskSummarization  # noqa: E402
from mteb.models import ModelMeta  # noqa: E402
from mteb.types import PromptType  # noqa: E402

_GENERAL = {
    "description": "repspace's data run through mteb's own evaluator in-process (a test reference).",
    "reference": "https://github.com/embeddings-benchmark/mteb",
    "dataset": {"path": "NA", "revision": "NA"},
    "category": "t2t",
    "eval_splits": ["test"],
    "eval_langs": ["eng-Latn"],
    "date": ("2024-01-01", "2024-01-01"),
    "dialect": ["Written"],
    "domains": [],
    "task_subtypes": [],
    "license": "cc-by-4.0",
    "annotations_creators": "derived",
    "modalities": ["text"],
    "sample_creation": "found",
    "bibtex_citation": "",
}


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-300)
    b = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-300)
    return a @ b.T


class TableEncoder:
    """An mteb encoder whose vectors are looked up: ``documents[text]``, and ``queries[text]`` for queries."""

    def __init__(self, documents: Mapping[str, np.ndarray], queries: Mapping[str, np.ndarray] | None = None) -> None:
        self.documents = documents
        self.queries = queries if queries is not None else documents
        self.asked: list[str] = []

    def encode(self, inputs: Any, *, task_metadata: Any = None, hf_split: str = "", hf_subset: str = "",
               prompt_type: PromptType | None = None, **kwargs: Any) -> np.ndarray:
        table = self.queries if prompt_type == PromptType.query else self.documents
        rows = []
        for batch in inputs:
            for text in batch["text"]:
                self.asked.append(text)
                rows.append(np.asarray(table[text], dtype=np.float64))
        return np.stack(rows)

    def similarity(self, a: Any, b: Any) -> np.ndarray:
        a, b = np.asarray(a), np.asarray(b)
        sims = _cosine(np.atleast_2d(a), np.atleast_2d(b))
        return sims if a.ndim > 1 or b.ndim > 1 else sims.reshape(())

    def similarity_pairwise(self, a: Any, b: Any) -> np.ndarray:
        a, b = np.atleast_2d(np.asarray(a)), np.atleast_2d(np.asarray(b))
        return np.array([_cosine(x[None], y[None])[0, 0] for x, y in zip(a, b)])

    @property
    def mteb_model_meta(self) -> ModelMeta:
        return ModelMeta.create_empty(overwrites={"name": "repspace/table-encoder", "revision": "test"})


class BitextTask(AbsTaskBitextMining):
    """mteb's bitext-mining task on two aligned lists of sentences."""

    metadata = TaskMetadata(type="BitextMining", name="RepspaceBitext", main_score="f1", **_GENERAL)

    def __init__(self, sentences1: Sequence[str], sentences2: Sequence[str]) -> None:
        super().__init__()
        self._data = {"sentence1": list(sentences1), "sentence2": list(sentences2)}

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        self.dataset = DatasetDict({"test": Dataset.from_dict(self._data)})
        self.data_loaded = True


class SummarizationTask(AbsTaskSummarization):
    """mteb's summarization task (SummarizationEvaluator, SummEvalSummarization.v2's) on rows in SummEval's layout."""

    metadata = TaskMetadata(type="Summarization", name="RepspaceSummarization", main_score="cosine_spearman",
                            **_GENERAL)
    min_score = 0
    max_score = 5

    def __init__(self, rows: Mapping[str, list[Any]]) -> None:
        super().__init__()
        self._data = dict(rows)

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        self.dataset = DatasetDict({"test": Dataset.from_dict(self._data)})
        self.data_loaded = True


def reranking_task(rows: Mapping[str, list[Any]]) -> Any:
    """mteb's reranking task (``AbsTaskReranking``) given rows in its reranking layout, converted by mteb itself.

    ``AbsTaskReranking.transform_old_dataset_format`` turns ``query``/``positive``/``negative`` rows into
    retrieval data (its ids, its filtering of queries without a negative) for the tasks it lists in
    ``OLD_FORMAT_RERANKING_TASKS``; the task is listed there while it loads.
    """
    import warnings

    from mteb.abstasks.text import reranking as module

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)

        class RerankingTask(module.AbsTaskReranking):
            metadata = TaskMetadata(type="Reranking", name="RepspaceReranking", main_score="map_at_1000",
                                    **_GENERAL)

            def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
                listed = module.OLD_FORMAT_RERANKING_TASKS
                listed.append(self.metadata.name)
                try:
                    self.transform_old_dataset_format(DatasetDict({"test": Dataset.from_dict(dict(rows))}))
                finally:
                    listed.remove(self.metadata.name)

        return RerankingTask()


def evaluate(task: Any, model: TableEncoder) -> dict[str, Any]:
    """The scores mteb's task computes for the model on its ``test`` split, ``default`` subset."""
    return task.evaluate(model, "test", encode_kwargs={"batch_size": 64, "show_progress_bar": False})["default"]
