"""MTEB's protocol for classification and clustering (``--protocol mteb``) against mteb's own task classes.

Usage: ``.venv/bin/python benchmarks/eval_mteb_protocol.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only mteb-protocol`` (into EVALUATION.md).

repspace's ``protocol="mteb"`` (:mod:`repspace.engines.eval.mteb_protocol`) and
mteb 2.26.24's ``AbsTaskClassification`` / ``AbsTaskClustering`` /
``AbsTaskClusteringLegacy`` run in-process on the same vectors, through the
harness of ``tests/engines/eval/test_mteb_protocol.py`` (a task subclass holding
the data in memory, an encoder object returning each text's vector): sklearn's
bundled sets as vectors, and STS-B sentences labelled by their pair's gold score
embedded by the static model. One BLAS thread. ``--quick``: wine only.
"""

from __future__ import annotations

import csv
import math
import sys
import warnings
from typing import Any

import common as c
import numpy as np

TESTS = c.REPO / "tests" / "engines" / "eval"
DATA = c.REPO.parent / "shared" / "data"
CLUSTERING_KEYS = ["v_measure", "v_measure_std", "ami", "ami_std"]


def _harness() -> Any:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    import test_mteb_protocol

    return test_mteb_protocol


def _largest(ours: dict[str, float], theirs: dict[str, Any], keys: list[str]) -> float:
    """The largest |ours - mteb's| over the keys mteb writes (its NaN: a score neither side defines)."""
    return max(abs(ours[k] - theirs[k]) for k in keys
               if k in theirs and not (isinstance(theirs[k], float) and math.isnan(theirs[k])))


def _row(protocol: str, data: str, r: Any, theirs: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    return {"protocol": protocol, "data": data, "metric": r.main_metric, "repspace": r.main_score,
            "mteb": theirs["main_score"], "largest_difference": _largest(r.scores, theirs, keys)}


def _stsb(name: str, n: int | None) -> Any:
    from repspace.engines.eval.labels import LabelledTexts

    path = DATA / "stsb" / f"stsb-en-{name}.csv"
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))[:n]
    return LabelledTexts([a for a, _, _ in rows], ["similar" if float(s) >= 2.5 else "apart" for _, _, s in rows],
                         path.stem)


def measure(quick: bool) -> dict[str, Any]:
    """Each table row (ours, mteb's, the largest difference) and repspace's own protocol on digits."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine
    from threadpoolctl import threadpool_limits

    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval._encode import as_encode
    from repspace.engines.eval.labels import _vectors_and_labels, classification, clustering
    from repspace.engines.eval.mteb_protocol import clustering_task

    h = _harness()
    keys = h.CLASSIFICATION_KEYS
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MTEB's logistic regression stops at 100 iterations on raw pixels
        x, y = load_wine(return_X_y=True)
        x, t = x.astype(np.float32), h._names(len(y))
        theirs = h.mteb_classification(None, (t, y.tolist()), h._table(t, x))
        rows.append(_row("classification, 5-fold CV", "wine 178", classification(x, y, protocol="mteb"), theirs,
                         keys))
        if quick:
            return {"rows": rows}
        c.log("evaluation: mteb protocol, digits")
        x, y = load_digits(return_X_y=True)
        x, t = x.astype(np.float32), h._names(len(y))
        theirs = h.mteb_classification((t[:1000], y[:1000].tolist()), (t[1000:], y[1000:].tolist()), h._table(t, x))
        r = classification(x[1000:], y[1000:], train=(x[:1000], y[:1000]), protocol="mteb")
        rows.insert(0, _row("classification, train/test", f"digits 1000/{len(y) - 1000}", r, theirs, keys))
        theirs = h.mteb_clustering(t, y.tolist(), h._table(t, x))
        r = clustering(x, y, protocol="mteb")
        rows.append(_row("clustering, fast (4% embedded)", f"digits {len(y)} ({r.info['n_items']} embedded)", r,
                         theirs, CLUSTERING_KEYS))
        theirs = h.mteb_clustering(t, y.tolist(), h._table(t, x), max_fraction_of_documents_to_embed=None)
        r = clustering_task(x, y, prepare=_vectors_and_labels, max_fraction=None)
        rows.append(_row("clustering, fast (all embedded)", f"digits {len(y)}", r, theirs, CLUSTERING_KEYS))
        theirs = h.mteb_clustering(t, y.tolist(), h._table(t, x), legacy=True)
        rows.append(_row("clustering, legacy", f"digits {len(y)}", clustering(x, y, protocol="mteb-legacy"), theirs,
                         ["v_measure", "v_measure_std"]))
        own = {"accuracy": classification(x, y).main_score, "v_measure": clustering(x, y).main_score}
        c.log("evaluation: mteb protocol, breast cancer and STS-B")
        x, y = load_breast_cancer(return_X_y=True)
        order = np.random.default_rng(0).permutation(len(y))
        x, y, t = x.astype(np.float32)[order], y[order], h._names(len(y))
        theirs = h.mteb_classification((t[:369], y[:369].tolist()), (t[369:], y[369:].tolist()), h._table(t, x))
        r = classification(x[369:], y[369:], train=(x[:369], y[:369]), protocol="mteb", bootstrap=0)
        rows.insert(1, _row("classification, binary (ap)", f"breast cancer 369/{len(y) - 369}", r, theirs, keys))
        train, test = _stsb("train", 2000), _stsb("test", None)
        encode, ids = as_encode(get_encoder("static")), {"apart": 0, "similar": 1}
        theirs = h.mteb_classification((train.texts, [ids[v] for v in train.labels]),
                                       (test.texts, [ids[v] for v in test.labels]), h.TableEncoder(encode=encode))
        r = classification(encode, test, train=train, protocol="mteb")
        rows.append(_row("classification, texts, static model", f"STS-B sentences {len(train)}/{len(test)}", r,
                         theirs, keys))
        theirs = h.mteb_clustering(test.texts, [ids[v] for v in test.labels], h.TableEncoder(encode=encode),
                                   max_fraction_of_documents_to_embed=None)
        r = clustering_task(encode, test, prepare=_vectors_and_labels, max_fraction=None)
        rows.append(_row("clustering, texts, static model", f"STS-B test sentences {len(test)}", r, theirs,
                         CLUSTERING_KEYS))
    return {"rows": rows, "digits_repspace_protocol": own}


HEADER = """\
## MTEB's protocol for classification and clustering (`--protocol mteb`)

`repspace eval classification|clustering --protocol mteb` runs mteb 2.26.24's own protocol
(`repspace.engines.eval.mteb_protocol`): classification trains `LogisticRegression(max_iter=100)` on 8 items
per label in each of 10 experiments (MTEB's compounding `RandomState(42)` shuffles; `--train FILE` is the
training split, else MTEB's 5-fold cross-validation path); clustering embeds `int(0.04 n)` documents
(`random.Random(42)`), then clusters 10 draws of 16,384 of them with replacement by `MiniBatchKMeans(k,
batch_size=512, n_init=1)` (`v_measure`, `ami`); `mteb-legacy` is MTEB's one-set `MiniBatchKMeans(batch_size=500)`.
Checked against mteb's task classes run in-process on the same vectors (a task subclass holding the data in
memory and an encoder object returning each text's vector; `tests/engines/eval/test_mteb_protocol.py`); the last
column is the largest difference over every score the task writes (accuracy, f1, f1_weighted, precision(_weighted),
recall(_weighted), ap(_weighted) where binary; v_measure, v_measure_std, ami, ami_std). sklearn's bundled sets
(no download) as vectors, and STS-B sentences labelled by their pair's gold score (similar: 2.5 or more) embedded
by the static model (tokenlearn, 64-d). Measured by `benchmarks/eval_mteb_protocol.py`, 1 BLAS thread.

| protocol | data (train/test) | main score | repspace | mteb | largest difference |
|---|---|---|---|---|---|"""
FINDINGS = """\
Every score is bit-identical (the goal was 1e-6). The protocols measure different things: on digits repspace's
own protocol gives accuracy {a:.4f} (5-fold, all training items) and V-measure {v:.4f} (k-means, 10 restarts, mean
of 5 seeds). MTEB's `ap` is the average precision of the predicted labels, and is written only when the test split
has two labels (MTEB writes NaN otherwise); the per-experiment lists MTEB writes (`scores_per_experiment`,
`v_measures`, `ami_scores`) sit in the result's `repspace` block."""


def _difference(d: float) -> str:
    return "0" if d == 0 else f"{d:.1e}"


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the protocol, the table, what it says."""
    lines = HEADER.splitlines()
    lines += [f"| {r['protocol']} | {r['data']} | {r['metric']} | {r['repspace']:.4f} | {r['mteb']:.4f} | "
              f"{_difference(r['largest_difference'])} |" for r in res["rows"]]
    own = res.get("digits_repspace_protocol")
    if own:
        lines += ["", *FINDINGS.format(a=own["accuracy"], v=own["v_measure"]).splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "wine only")


if __name__ == "__main__":
    sys.exit(main())
