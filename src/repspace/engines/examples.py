"""A toy file for the examples of the engines' file readers.

Each reader's docstring example (STS and pair-classification CSVs, analogy
questions, corpora, edge lists, lexicons) used to spell out the same three
lines: import ``tempfile``, join a path in a new temporary folder, write the
toy text to it. :func:`example_file` is those lines, so that an example shows
the file it reads and the reader, not the setup; like the seeded toys of
:mod:`repspace.store` it is there for notebooks and tests too.

Examples
--------
>>> from repspace.engines.examples import example_file
>>> open(example_file("toy.txt", "one\\ntwo\\n")).read().split()
['one', 'two']
"""

from __future__ import annotations

import os
import tempfile

__all__ = ["example_file"]


def example_file(name: str, text: str) -> str:
    """Write ``text`` (UTF-8) to a file ``name`` in a new temporary folder, left for the system to clean.

    Parameters
    ----------
    name : str
        The file's name; readers that take a split or a data set name from it
        (``toy-dev.csv`` is split ``dev``) see it as given.
    text : str
        The file's content, written as is: no newline added, none translated.

    Returns
    -------
    str
        The file's path.

    Examples
    --------
    >>> import os
    >>> p = example_file("toy-test.csv", "a,b,1\\n")
    >>> os.path.basename(p), open(p, encoding="utf-8").read()
    ('toy-test.csv', 'a,b,1\\n')
    """
    path = os.path.join(tempfile.mkdtemp(), name)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return path
