"""The one progress signature: ``progress(phase, done, total)``, cumulative."""

from __future__ import annotations

from repspace.core.progress import Tally, relabel


def test_tally_reports_running_totals_from_zero() -> None:
    seen: list[tuple[str, int, int]] = []
    tally = Tally(lambda *a: seen.append(a), "encode", 7)
    for k in (3, 0, 4):
        tally(k)
    assert seen == [("encode", 0, 7), ("encode", 3, 7), ("encode", 3, 7), ("encode", 7, 7)]
    assert tally.done == 7


def test_tally_without_a_callback_only_counts() -> None:
    tally = Tally(None, "write", 2)
    tally(2)
    assert tally.done == 2


def test_relabel_moves_every_report_and_keeps_none() -> None:
    seen: list[tuple[str, int, int]] = []
    moved = relabel(lambda *a: seen.append(a), "old documents")
    assert moved is not None
    moved("encode", 1, 2)
    moved("anything", 2, 2)
    assert seen == [("old documents", 1, 2), ("old documents", 2, 2)]
    assert relabel(None, "x") is None
