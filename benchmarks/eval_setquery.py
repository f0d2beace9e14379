"""Set queries (SetCSE, ``repspace search --all-of --none-of``) on GloVe word analogies, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_setquery.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only set-queries`` (into EVALUATION.md).

Google's analogy questions (``a : b :: c : d``, gensim's ``questions-words.txt``) asked as set queries over the
:data:`VOCAB` most frequent GloVe 6B 50d words in a stored cosine space: ``all_of = [b, c]``, ``none_of = [a]``,
correct when the first hit is ``d`` (the examples are never hits). Beside it, the reference: gensim's
``KeyedVectors.evaluate_word_analogies`` (3CosAdd, ``restrict_vocab`` the same words) on the same vectors; and a
mean-over-all-of minus mean-over-none-of reading of the query, to show why each example is its own set.
``--quick``: the first 1,000 questions.
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

import common as c

#: Most frequent GloVe words searched (gensim's restrict_vocab: questions with a rarer word are skipped).
VOCAB = 30_000
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
QUICK_QUESTIONS = 1000


def _questions(path: Path, vocab: set[str]) -> list[tuple[str, str, str, str]]:
    """The analogy questions whose four words are all in ``vocab`` (lower-cased, section lines skipped)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        words = line.lower().split()
        if len(words) == 4 and not line.startswith(":") and all(w in vocab for w in words):
            out.append((words[0], words[1], words[2], words[3]))
    return out


def _mean_reading(ids: list[str], x: np.ndarray, questions: list[tuple[str, str, str, str]]) -> float:
    """Accuracy of ``mean(cos to b, c) - cos to a`` (one set per side), by numpy over the same words."""
    row = {w: i for i, w in enumerate(ids)}
    u = x.astype(np.float64) / np.linalg.norm(x.astype(np.float64), axis=1, keepdims=True)
    right = 0
    for a, b, cc, d in questions:
        s = u @ ((u[row[b]] + u[row[cc]]) / 2 - u[row[a]])
        s[[row[a], row[b], row[cc]]] = -np.inf
        right += ids[int(np.argmax(s))] == d
    return right / len(questions)


def measure(quick: bool) -> dict[str, Any]:
    """Accuracy@1 of the set queries, of gensim's 3CosAdd, and of the mean reading; their timings."""
    from gensim.models import KeyedVectors
    from gensim.test.utils import datapath

    from repspace import Store
    from repspace.workflows.demo import glove_records
    from repspace.workflows.search.set_search import set_search

    rec = glove_records()
    ids, x = rec.ids[:VOCAB], np.asarray(rec.vectors[:VOCAB], dtype=np.float32)
    path = Path(datapath("questions-words.txt"))
    questions = _questions(path, set(ids))
    if quick:
        questions = questions[:QUICK_QUESTIONS]
    c.log(f"evaluation: set queries, {len(questions)} analogy questions over {VOCAB} GloVe words")
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s.db")
        sp = store.create_space("glove", dim=x.shape[1], metric="cosine")
        sp.add(ids, x)
        t0 = time.perf_counter()
        right = sum(set_search(sp, all_of=[b, cc], none_of=[a], k=1, method="exact")[0].id == d
                    for a, b, cc, d in questions)
        ours_s = time.perf_counter() - t0
        queen = [h.id for h in set_search(sp, all_of=["king", "woman"], none_of=["man"], k=3)]
        store.close()
    kv = KeyedVectors(x.shape[1])
    kv.add_vectors(ids, x)
    t0 = time.perf_counter()
    sections = [] if quick else kv.evaluate_word_analogies(str(path), restrict_vocab=VOCAB)[1]
    gensim_s = time.perf_counter() - t0
    total = [s for s in sections if s["section"] == "Total accuracy"]
    gensim = None if not total else len(total[0]["correct"]) / (len(total[0]["correct"]) + len(total[0]["incorrect"]))
    gensim_n = None if not total else len(total[0]["correct"]) + len(total[0]["incorrect"])
    return {"vocab": VOCAB, "questions": len(questions), "accuracy": right / len(questions),
            "seconds": round(ours_s, 1), "gensim_accuracy": gensim, "gensim_questions": gensim_n,
            "gensim_seconds": round(gensim_s, 1), "mean_reading_accuracy": _mean_reading(ids, x, questions),
            "king_woman_man": queen}


INTRO = """\
## Set queries (SetCSE): `repspace search SPACE --all-of ID --none-of ID`

A set query ranks a space's items by their summed cosine to the `--all-of` examples minus their summed cosine to
the `--none-of` examples, the examples left out: SetCSE's operation series (S104) with each example a set of its
own, without the paper's contrastive fine-tuning of the encoder. Checked here on Google's word analogies
(`a : b :: c : d` asked as `--all-of b --all-of c --none-of a`, right when the first hit is `d`) over the
{vocab:,} most frequent GloVe 6B 50d words in a stored cosine space, beside gensim's
`KeyedVectors.evaluate_word_analogies` (3CosAdd, the same words) as the reference. Measured by
`benchmarks/eval_setquery.py` (`benchmarks/evaluation.py --only set-queries`) with
`repspace.workflows.search.set_search.set_search`, what the command runs, on the machine above."""


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the accuracy beside gensim's, the mean reading, king + woman - man."""
    lines = INTRO.format(vocab=res.get("vocab", VOCAB)).splitlines()
    if "accuracy" not in res:
        return lines
    g = res["gensim_accuracy"]
    lines += ["", "| query | questions | accuracy@1 | seconds |", "| --- | --- | --- | --- |",
              f"| set query (ours) | {res['questions']:,} | {res['accuracy']:.4f} | {res['seconds']} |"]
    if g is not None:
        lines.append(f"| gensim 3CosAdd (reference) | {res['gensim_questions']:,} | {g:.4f} | "
                     f"{res['gensim_seconds']} |")
    lines.append(f"| mean of all-of minus mean of none-of | {res['questions']:,} | "
                 f"{res['mean_reading_accuracy']:.4f} | - |")
    text = (f"king + woman - man: {', '.join(res['king_woman_man'])} (the first three hits). The sum over "
            "single-example sets is 3CosAdd, and answers as gensim does; averaging each side instead weights the "
            "one none-of example twice as much as each all-of one and loses most analogies, so each example is its "
            "own set.")
    return lines + ["", *textwrap.fill(text, width=WIDTH).splitlines()]


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, f"the first {QUICK_QUESTIONS} questions, no gensim")


if __name__ == "__main__":
    sys.exit(main())
