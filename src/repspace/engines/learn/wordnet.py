"""A reader of the WordNet 3.0 database files as Debian ships them: synsets, hypernym closures, synonym lexicons.

Debian's ``wordnet-base`` package installs Princeton's database in
``/usr/share/wordnet`` (``data.noun``, ``index.noun``, ... ; the format is
``man 5 wndb``). This module reads it directly. It is hand-written, about a
hundred lines, because NLTK's reader wants a ``lexnames`` file that Debian's
package does not ship, and NLTK would be a large dependency for so little.

What it gives:

* :func:`read_synsets`: every synset of a part of speech, named as NLTK names
  them (``mammal.n.01``: the synset's first lemma, lowercased, its part of
  speech, and the rank of the synset among that lemma's senses in
  ``index.<pos>``, two digits), with its lemmas and hypernym pointers (``@``)
  and instance-hypernym pointers (``@i``).
* :func:`hypernym_closure`: the (child, ancestor) pairs of the transitive
  closure of the hypernym relation under one synset, as Nickel & Kiela (2017)
  built their WordNet mammal hierarchy for Poincare embeddings.
* :func:`synonym_lexicon`: for each lemma the other lemmas of its synsets,
  Faruqui et al.'s (2015) "wordnet-synonyms" lexicon for retrofitting.

The files are parsed once per process (about a second for the nouns) and cached.

Examples
--------
>>> from repspace.engines.learn.wordnet import hypernym_closure, read_synsets, synonym_lexicon
>>> nouns = read_synsets("n")
>>> nouns["dog.n.01"].lemmas, nouns["dog.n.01"].hypernyms
(('dog', 'domestic_dog', 'Canis_familiaris'), ('canine.n.02', 'domestic_animal.n.01'))
>>> synonym_lexicon()["automobile"]
('auto', 'car', 'machine', 'motorcar')
>>> len(hypernym_closure("mammal.n.01"))
6540
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from repspace.core.checks import check_choice
from repspace.core.errors import InputError

__all__ = [
    "DEFAULT_ROOT",
    "MAMMAL_EXCLUDED",
    "Synset",
    "hypernym_closure",
    "read_synsets",
    "synonym_lexicon",
    "wordnet_available",
]

#: Where Debian's ``wordnet-base`` installs the WordNet 3.0 database.
DEFAULT_ROOT = Path("/usr/share/wordnet")

#: The file suffix of each part of speech (``s``, adjective satellites, live in ``data.adj``).
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

#: The synsets Nickel & Kiela's ``mammals_filter.txt`` drops from the mammal closure (as children: both are
#: leaves right under ``mammal.n.01``).
MAMMAL_EXCLUDED = frozenset({"tusker.n.01", "female_mammal.n.01"})

#: The syntactic marker an adjective may carry in data.adj: ``(a)``, ``(p)``, ``(ip)``.
_MARKER = re.compile(r"\((?:a|p|ip)\)$")


@dataclass(frozen=True)
class Synset:
    """One WordNet synset.

    Attributes
    ----------
    name : str
        NLTK's name, ``lemma.pos.NN`` (``pos`` is ``s`` for adjective satellites).
    pos : str
        ``n``, ``v``, ``a``, ``s`` or ``r``.
    offset : int
        Byte offset of the synset in ``data.<pos>`` (its identity in the database).
    lemmas : tuple of str
        The synset's words as the lexicographers entered them (case kept,
        ``_`` for spaces, adjective markers such as ``(a)`` removed).
    hypernyms, instance_hypernyms : tuple of str
        Names of the synsets its ``@`` and ``@i`` pointers lead to.
    """

    name: str
    pos: str
    offset: int
    lemmas: tuple[str, ...]
    hypernyms: tuple[str, ...]
    instance_hypernyms: tuple[str, ...]


def _root(root: str | Path | None) -> Path:
    return DEFAULT_ROOT if root is None else Path(root)


def wordnet_available(root: str | Path | None = None) -> bool:
    """Whether the WordNet data and index files of all four parts of speech are in ``root``.

    Parameters
    ----------
    root : path, optional
        The database folder; :data:`DEFAULT_ROOT` (Debian's) when omitted.

    Examples
    --------
    >>> wordnet_available("/nonexistent")
    False
    """
    folder = _root(root)
    return all((folder / f"{kind}.{suffix}").is_file() for suffix in _FILES.values() for kind in ("data", "index"))


def _file(folder: Path, kind: str, pos: str) -> Path:
    path = folder / f"{kind}.{_FILES[pos]}"
    if not path.is_file():
        raise InputError(f"WordNet file {path} is missing: install Debian's wordnet-base (apt-get install "
                         "wordnet-base) or pass root= a folder holding WordNet 3.0's data and index files")
    return path


def _check_pos(pos: object) -> str:
    return check_choice(pos, "pos", _FILES)


def _lines(path: Path) -> Iterable[str]:
    """The records of a WordNet file: every line but the licence header (lines starting with two spaces)."""
    with path.open("r", encoding="latin-1") as f:  # WordNet 3.0 is ASCII; latin-1 never fails on a stray byte
        for line in f:
            if not line.startswith("  "):
                yield line


@lru_cache(maxsize=8)
def _read(pos: str, folder: Path) -> dict[str, Synset]:
    """Parse ``index.<pos>`` and ``data.<pos>`` of ``folder`` (cached: the result is shared, never mutated)."""
    index_path, data_path = _file(folder, "index", pos), _file(folder, "data", pos)
    senses: dict[str, list[int]] = {}
    for line in _lines(index_path):
        f = line.split()
        n_synsets, n_pointers = int(f[2]), int(f[3])
        senses[f[0]] = [int(o) for o in f[6 + n_pointers:6 + n_pointers + n_synsets]]
    records: list[tuple[int, str, list[str], list[int], list[int]]] = []
    for line in _lines(data_path):
        f = line.split(" | ", 1)[0].split()
        offset, ss_type, n_words = int(f[0]), f[2], int(f[3], 16)
        lemmas = [_MARKER.sub("", f[4 + 2 * i]) for i in range(n_words)]
        at = 4 + 2 * n_words
        hyper, inst = [], []
        for j in range(int(f[at])):
            symbol, target, target_pos = f[at + 1 + 4 * j:at + 4 + 4 * j]
            if symbol in ("@", "@i") and target_pos == pos:
                (hyper if symbol == "@" else inst).append(int(target))
        records.append((offset, ss_type, lemmas, hyper, inst))
    names: dict[int, str] = {}
    for offset, ss_type, lemmas, _, _ in records:
        first = lemmas[0].lower()
        try:
            sense = senses[first].index(offset) + 1
        except (KeyError, ValueError):
            raise InputError(f"{data_path}: synset {offset:08d} ({first}) is not among the senses of {first!r} "
                             f"in {index_path}: the files are not one WordNet database") from None
        names[offset] = f"{first}.{ss_type}.{sense:02d}"
    return {names[o]: Synset(names[o], t, o, tuple(lem), tuple(names[h] for h in hy), tuple(names[i] for i in ins))
            for o, t, lem, hy, ins in records}


def read_synsets(pos: str = "n", root: str | Path | None = None) -> dict[str, Synset]:
    """Every synset of one part of speech, by NLTK-style name, in the order of ``data.<pos>``.

    Parameters
    ----------
    pos : {"n", "v", "a", "r"}
        Nouns, verbs, adjectives (satellites included, named ``x.s.NN``) or adverbs.
    root : path, optional
        The database folder; :data:`DEFAULT_ROOT` (Debian's ``wordnet-base``) when omitted.

    Returns
    -------
    dict of str to Synset
        82,115 noun synsets in WordNet 3.0.

    Raises
    ------
    InputError
        A missing file ("install Debian's wordnet-base"), or an unknown ``pos``.

    Examples
    --------
    >>> s = read_synsets("n")["mammal.n.01"]
    >>> s.lemmas, s.hypernyms, s.offset
    (('mammal', 'mammalian'), ('vertebrate.n.01',), 1861778)
    >>> read_synsets("n")["einstein.n.01"].instance_hypernyms
    ('physicist.n.01',)
    >>> read_synsets("x")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: pos must be one of n, v, a, r, not 'x'
    """
    return dict(_read(_check_pos(pos), _root(root).resolve()))


def _ancestors(synsets: dict[str, Synset]) -> dict[str, frozenset[str]]:
    """Each synset's ancestors as NLTK's closure script finds them (see :func:`hypernym_closure`)."""
    hyper_memo: dict[str, frozenset[str]] = {}

    def hyper_closure(name: str) -> frozenset[str]:
        """Ancestors through ``@`` only (iterative, memoised; WordNet's hypernym graph has no cycle)."""
        if name in hyper_memo:
            return hyper_memo[name]
        stack = [name]
        while stack:  # post-order without recursion
            n = stack.pop()
            if n in hyper_memo:
                continue
            pending = [h for h in synsets[n].hypernyms if h not in hyper_memo]
            if pending:
                stack.append(n)
                stack.extend(pending)
                continue
            out: set[str] = set()
            for h in synsets[n].hypernyms:
                out.add(h)
                out |= hyper_memo[h]
            hyper_memo[n] = frozenset(out - {n})
        return hyper_memo[name]

    result: dict[str, frozenset[str]] = {}
    for name, s in synsets.items():
        found = set(hyper_closure(name))
        seen: set[str] = set()
        todo = list(s.instance_hypernyms)
        while todo:  # the closure under @i, and each one's closure under @
            i = todo.pop()
            if i in seen or i == name:
                continue
            seen.add(i)
            found.add(i)
            found |= hyper_closure(i)
            todo.extend(synsets[i].instance_hypernyms)
        found.discard(name)
        result[name] = frozenset(found)
    return result


def hypernym_closure(root_synset: str = "mammal.n.01", root: str | Path | None = None,
                     exclude: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """The transitive closure of WordNet's hypernym relation under one synset, as sorted (child, ancestor) pairs.

    A synset's ancestors are found as the script of Nickel & Kiela (2017,
    ``wordnet/transitive_closure.py`` of facebookresearch/poincare-embeddings)
    finds them with NLTK: the closure of its hypernyms (``@``), and, for an
    instance (``einstein.n.01``), the closure of its instance hypernyms (``@i``)
    with each one's hypernym closure. The pairs kept are those whose child is
    a descendant of ``root_synset`` and whose ancestor is ``root_synset`` or one
    of its descendants (their ``mammal_closure.csv``: ``(x, mammal.n.01)``
    pairs included, no ``(x, x)`` pairs). Like NLTK's ``closure``, a hypernym
    chain does not go on through the instance hypernyms of a synset it reaches
    by ``@``: ``british_west_indies.n.01`` has the hypernym ``west_indies.n.01``,
    an instance of ``archipelago.n.01``, and no ancestor beyond it (18 noun
    synsets are so cut off from ``entity.n.01``). Over all nouns this gives the
    script's 743,086 pairs.

    Their mammal closure also drops the pairs whose child is ``tusker.n.01`` or
    ``female_mammal.n.01`` (two leaves right under ``mammal.n.01`` named by
    ``^`` lines of their ``mammals_filter.txt``; the other lines of that file
    name synsets outside the subtree, which the restriction drops anyway). By
    default this function drops them too, so ``hypernym_closure()`` is their
    data set: 1,180 synsets and 6,540 pairs from WordNet 3.0 (without the
    filter, ``exclude=()``: 1,182 and 6,542).

    Parameters
    ----------
    root_synset : str
        An NLTK-style synset name (``mammal.n.01``, ``feline.n.01``, ``move.v.02``).
    root : path, optional
        The database folder; :data:`DEFAULT_ROOT` when omitted.
    exclude : iterable of str, optional
        Synsets left out, with every pair they are part of. ``None``: Nickel &
        Kiela's filter for ``mammal.n.01`` (:data:`MAMMAL_EXCLUDED`), nothing
        for any other synset.

    Returns
    -------
    list of (str, str)
        ``(child, ancestor)`` pairs, sorted.

    Raises
    ------
    InputError
        An unknown synset, or a missing WordNet file.

    Examples
    --------
    >>> pairs = hypernym_closure()
    >>> len(pairs), len({c for c, _ in pairs} | {a for _, a in pairs})
    (6540, 1180)
    >>> ("dog.n.01", "canine.n.02") in pairs, ("dog.n.01", "mammal.n.01") in pairs, ("dog.n.01", "animal.n.01") in pairs
    (True, True, False)
    >>> hypernym_closure("feline.n.01")[:2]
    [('abyssinian.n.01', 'cat.n.01'), ('abyssinian.n.01', 'domestic_cat.n.01')]
    >>> hypernym_closure("felines.n.01")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: 'felines.n.01' is not a synset of /usr/share/wordnet/data.noun
    """
    if not isinstance(root_synset, str) or root_synset.count(".") < 2:
        raise InputError(f"root_synset must be a synset name such as 'mammal.n.01', not {root_synset!r}")
    pos = root_synset.rsplit(".", 2)[1]
    file_pos = "a" if pos == "s" else pos
    if file_pos not in _FILES:
        raise InputError(f"root_synset {root_synset!r} names no part of speech (n, v, a, s or r)")
    if exclude is None:
        excluded = MAMMAL_EXCLUDED if root_synset == "mammal.n.01" else frozenset()
    elif isinstance(exclude, str):
        excluded = frozenset([exclude])
    else:
        excluded = frozenset(exclude)
    pairs = _closure(root_synset, file_pos, _root(root).resolve())
    return [(c, a) for c, a in pairs if c not in excluded and a not in excluded]


@lru_cache(maxsize=16)
def _closure(root_synset: str, pos: str, folder: Path) -> tuple[tuple[str, str], ...]:
    synsets = _read(pos, folder)
    if root_synset not in synsets:
        raise InputError(f"{root_synset!r} is not a synset of {folder / ('data.' + _FILES[pos])}")
    ancestors = _ancestors_cached(pos, folder)
    below = {name for name, anc in ancestors.items() if root_synset in anc}
    nodes = below | {root_synset}
    return tuple(sorted((child, a) for child in below for a in ancestors[child] if a in nodes))


@lru_cache(maxsize=4)
def _ancestors_cached(pos: str, folder: Path) -> dict[str, frozenset[str]]:
    return _ancestors(_read(pos, folder))


def synonym_lexicon(root: str | Path | None = None,
                    pos: Iterable[str] = ("n", "v", "a", "r")) -> dict[str, tuple[str, ...]]:
    """Faruqui et al.'s (2015) "wordnet-synonyms" lexicon: each lemma's synonyms in WordNet.

    For each lemma (lowercased; ``_`` between the words of a collocation, as
    WordNet writes them) of a synset of the parts of speech ``pos``, the other
    lemmas (lowercased) of every synset containing it: sorted, without
    duplicates and without the lemma itself. Lemmas that share no synset with
    another are left out. Keys are in sorted order.

    Parameters
    ----------
    root : path, optional
        The database folder; :data:`DEFAULT_ROOT` (Debian's ``wordnet-base``) when omitted.
    pos : iterable of {"n", "v", "a", "r"}
        The parts of speech whose synsets count (adjectives include satellites).

    Returns
    -------
    dict of str to tuple of str
        With all four parts of speech, 110,390 lemmas of WordNet 3.0.

    Raises
    ------
    InputError
        As :func:`read_synsets` does, or when ``pos`` names no part of speech.

    Examples
    --------
    >>> lex = synonym_lexicon()
    >>> lex["car"][:5], len(lex["car"])
    (('auto', 'automobile', 'cable_car', 'elevator_car', 'gondola'), 10)
    >>> "dog" in lex["domestic_dog"], "car" in lex["car"]
    (True, False)
    >>> synonym_lexicon(pos=("r",))["quickly"]
    ('apace', 'chop-chop', 'cursorily', 'promptly', 'quick', 'rapidly', 'speedily')
    """
    if isinstance(pos, str):
        pos = (pos,)
    parts = tuple(sorted({_check_pos(p) for p in pos}))
    if not parts:
        raise InputError("pos names no part of speech: give some of 'n', 'v', 'a', 'r'")
    return dict(_lexicon(parts, _root(root).resolve()))


@lru_cache(maxsize=4)
def _lexicon(parts: tuple[str, ...], folder: Path) -> dict[str, tuple[str, ...]]:
    found: dict[str, set[str]] = {}
    for p in parts:
        for s in _read(p, folder).values():
            words = {w.lower() for w in s.lemmas}
            if len(words) < 2:
                continue
            for w in words:
                found.setdefault(w, set()).update(words - {w})
    return {w: tuple(sorted(found[w])) for w in sorted(found)}
