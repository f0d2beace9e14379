"""The upgrade-check workflow: embed a retrieval data set with an old and a new model, then run the check.

Both encoders embed the corpus (documents side) and the queries (query side,
:meth:`~repspace.encoders.Encoder.encode_queries`, so asymmetric models such
as E5 get their prefixes); :func:`repspace.eval.upgrade.upgrade_retrieval`
does the rest on the arrays.

Examples
--------
>>> r = upgrade_check("static", "static", "../shared/data/cranfield-beir", pairs=[100],
...                   methods=["procrustes"], repeats=1)  # doctest: +SKIP
>>> r.row("old").ndcg_at_10 == r.row("new").ndcg_at_10  # doctest: +SKIP
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from repspace.eval.retrieval import BeirData, load_beir
from repspace.eval.upgrade import UpgradeCheck, upgrade_retrieval

__all__ = ["upgrade_check"]

#: ``progress(phase, done, total)``, as the CLI's progress bars take it.
PhaseProgress = Callable[[str, int, int], None]


def upgrade_check(
    old: str,
    new: str,
    data: str | Path | BeirData,
    *,
    pairs: str | Sequence[int | str] = (100, 300, 1000, "all"),
    methods: Sequence[str] = ("procrustes", "ridge", "unsupervised"),
    repeats: int = 3,
    seed: int = 0,
    split: str = "test",
    index: str | None = None,
    batch_size: int = 64,
    restarts: int = 3,
    progress: PhaseProgress | None = None,
) -> UpgradeCheck:
    """Embed ``data`` with the ``old`` and ``new`` encoders and measure whether mapped new queries can search the old index.

    Parameters
    ----------
    old, new : str
        Encoder specs (:func:`repspace.encoders.get_encoder`), e.g. ``minilm``
        and ``e5`` or ``model2vec:<folder>``.
    data : str, Path or BeirData
        A BEIR folder (corpus, queries, qrels) or loaded data.
    pairs, methods, repeats, seed, index, restarts
        As :func:`repspace.eval.upgrade.upgrade_retrieval`.
    split : str
        The qrels split of a folder.
    batch_size : int
        Texts per forward pass.
    progress : callable, optional
        ``progress(phase, done, total)`` while embedding and fitting.

    Returns
    -------
    UpgradeCheck
        Its ``info`` holds both encoders' provenance and the data set's name.
    """
    from repspace.encoders import get_encoder

    if not isinstance(data, BeirData):
        data = load_beir(data, split)
    encoders = {"old": get_encoder(old), "new": get_encoder(new)}
    docs, queries = list(data.corpus_texts), list(data.query_texts)
    vectors: dict[str, Any] = {}
    for side, enc in encoders.items():
        for what, texts, fn in (("documents", docs, enc.encode), ("queries", queries, enc.encode_queries)):
            phase = f"{side} {what}"
            done = [0]

            def tick(k: int, phase: str = phase, total: int = len(texts), done: list[int] = done) -> None:
                done[0] += k
                if progress is not None:
                    progress(phase, done[0], total)

            vectors[f"{what}_{side}"] = fn(texts, batch_size=batch_size, progress=tick)
    def fitted(done: int, total: int) -> None:
        if progress is not None:
            progress("maps", done, total)

    r = upgrade_retrieval(vectors["queries_old"], vectors["documents_old"], vectors["queries_new"],
                          vectors["documents_new"], data, pairs=pairs, methods=methods, repeats=repeats, seed=seed,
                          index=index, restarts=restarts, progress=fitted)
    r.info.update(data=data.name, split=data.split, old=encoders["old"].provenance(),
                  new=encoders["new"].provenance())
    return r
