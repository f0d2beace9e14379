"""Progress reports: the one callback signature every long-running call takes.

A progress callback is ``progress(phase, done, total)``: ``phase`` names the
step (``"encode"``, ``"encode queries"``, ``"index"``, ``"write"``, ...),
``done`` is how many units of it are finished so far (cumulative, not an
increment) and ``total`` how many there are. The same callable can therefore
be handed to an encoder, an index build, an ingest or an evaluation, and a
front end draws one bar per phase (the CLI's ``progress_bar`` is exactly such
a callable). Engines and workflows never draw anything themselves.

Code that finishes work in chunks counts them with a :class:`Tally`.

Examples
--------
>>> from repspace.core.progress import Tally
>>> seen = []
>>> tally = Tally(lambda phase, done, total: seen.append((phase, done, total)), "encode", 5)
>>> tally(2); tally(3)
>>> seen
[('encode', 0, 5), ('encode', 2, 5), ('encode', 5, 5)]
"""

from __future__ import annotations

from collections.abc import Callable

#: ``progress(phase, done, total)``, ``done`` cumulative within ``phase``.
Progress = Callable[[str, int, int], None]


class Tally:
    """Count the units of one phase as chunks finish, reporting the running total.

    Calling the tally with ``k`` adds ``k`` finished units and reports
    ``progress(phase, done, total)``. It reports ``(phase, 0, total)`` once when
    made, so a bar appears with its length before the first chunk finishes.

    Parameters
    ----------
    progress : Progress or None
        The callback; ``None`` makes a tally that only counts.
    phase : str
        The phase the counts belong to.
    total : int
        How many units the phase has.

    Examples
    --------
    >>> tally = Tally(None, "write", 10)
    >>> tally(4); tally(6); tally.done
    10
    """

    __slots__ = ("progress", "phase", "total", "done")

    def __init__(self, progress: Progress | None, phase: str, total: int) -> None:
        self.progress = progress
        self.phase = phase
        self.total = int(total)
        self.done = 0
        if progress is not None:
            progress(phase, 0, self.total)

    def __call__(self, k: int) -> None:
        self.done += int(k)
        if self.progress is not None:
            self.progress(self.phase, self.done, self.total)


def relabel(progress: Progress | None, phase: str) -> Progress | None:
    """The same callback with every report moved to ``phase``.

    Used where one caller runs the same step several times and wants each
    run on its own bar (a benchmark building one index per spec).

    Examples
    --------
    >>> seen = []
    >>> relabel(lambda *a: seen.append(a), "hnsw32")("index", 3, 9)
    >>> seen
    [('hnsw32', 3, 9)]
    """
    if progress is None:
        return None
    return lambda _phase, done, total: progress(phase, done, total)
