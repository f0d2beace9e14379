"""Meaning-preserving perturbations of a sentence, made locally and seeded: the inputs of a robustness test.

A robustness evaluation (PTEB's, for instance) scores a task again on inputs
changed in ways that keep their meaning, and reports how much the score drops.
Its perturbations here are small, local and reproducible (no model, no
download):

* :func:`typos`: one character swapped with its neighbour, dropped or
  inserted in a word of more than 3 letters (its first letter kept), so each
  changed word is one edit away from the original (Damerau's distance);
* :func:`casing`: a word turned lower case, upper case or title case;
* :func:`punctuation`: a terminal or inner mark (``. , ; : ! ?``) dropped, a
  comma added between two words, or a full stop added at the end;
* :func:`synonyms`: a content word replaced by another lemma of its first
  WordNet sense (read from Debian's WordNet 3.0 files with
  :mod:`repspace.engines.learn.wordnet`; see :func:`synonyms` for the rule);
* :func:`reorder`: two clauses swapped around ``and`` or a comma, only where
  that is safe (see :func:`reorder` for the rule).

Each is a pure function ``(text, rng, rate) -> text``: ``rate`` is the share
of the text's eligible sites changed, rounded up, so a text with any eligible
site changes at least once; ``rng`` a :class:`numpy.random.Generator`.
:func:`perturb` applies some of them to many texts, each text with a generator
of its own derived from ``(seed, its index)``: the same seed gives the same
texts, whatever else is perturbed and in whatever order.

Examples
--------
>>> perturb(["A man is playing a guitar and a woman is singing."], "reorder")
['A woman is singing and a man is playing a guitar.']
>>> perturb(["A man is playing a guitar."], ["casing", "typos"], rate=0.5, seed=3)
['a Man is Playing a gitar.']
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from repspace.core.checks import check_choice, check_scalar, check_strings
from repspace.core.errors import InputError
from repspace.engines.learn.wordnet import DEFAULT_ROOT, read_synsets, wordnet_available

__all__ = [
    "DEFAULT_RATE",
    "PERTURBATIONS",
    "casing",
    "parse_perturbations",
    "perturb",
    "punctuation",
    "reorder",
    "synonyms",
    "typos",
]

#: The perturbations, in the order reports list them.
PERTURBATIONS = ("typos", "casing", "punctuation", "synonyms", "reorder")
#: Share of a text's eligible sites each perturbation changes when not told (rounded up: at least one).
DEFAULT_RATE = 0.1

#: A word: a run of letters, apostrophes inside it included (``woman's``; digits and ``_`` split words).
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
#: A word's leading run of letters (before an apostrophe): where :func:`typos` edits.
_LETTERS = re.compile(r"[^\W\d_]+")
#: The marks :func:`punctuation` drops.
_MARKS = ".,;:!?"
#: The parts of speech searched for a synonym, in the order that breaks ties.
_POS = ("n", "v", "a", "r")

#: Function words never replaced by a synonym (WordNet lists some as nouns: "a" the vitamin, "in" the inch,
#: "it" information technology, "one" the number, "will" the testament).
_FUNCTION_WORDS = frozenset("""
a an the this that these those some any no every each either neither both all another other such what which
who whom whose whoever whatever i me my mine myself you your yours yourself we us our ours ourselves he him
his himself she her hers herself it its itself they them their theirs themselves one ones there here
and or but nor so yet if then than because as since while when where whether though although unless until
of in on at by for with without to from into onto upon over under about above below between among through
across along around after before behind beyond during against toward towards off out up down near past via
be am is are was were been being have has had having do does did done doing will would shall should can
could may might must ought not no yes very too also just only even still again ever never always
zero two three four five six seven eight nine ten hundred thousand million first second
""".split())

#: Auxiliaries and copulas: a finite verb that marks a clause for :func:`reorder`.
_AUXILIARIES = frozenset("""
is are was were am has have had will would can could shall should may might must does do did
""".split())
#: Words after which the order of two clauses matters, a clause leans on the other, or one clause reports
#: the other: none may occur in either part :func:`reorder` swaps.
_ORDER_WORDS = frozenset("""
then so after before because since until when whenever while once as where which who whom whose that if
what how why whether unless whereas but or nor yet though although thus therefore afterwards later first
finally also too both either neither other others same respectively meanwhile next again say says said tell
tells told according report reports reported claim claims claimed believe believes believed think thinks thought add adds added
""".split())
#: Pronouns that may point back into the first clause: none may occur in the second.
_PRONOUNS = frozenset("""
it he she they him her them his hers its their theirs himself herself itself themselves one ones there this
those these such
""".split())
#: A token of :func:`reorder`'s clause test: letters (apostrophes inside) or digits.
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


# ----------------------------------------------------------------------------- shared


def _chosen(rng: np.random.Generator, n_sites: int, rate: float) -> list[int]:
    """``ceil(rate * n_sites)`` site numbers drawn without replacement, in increasing order."""
    if n_sites == 0:
        return []
    k = min(n_sites, math.ceil(round(rate * n_sites, 9)))
    return sorted(int(i) for i in rng.choice(n_sites, size=k, replace=False))


def _edited(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, replacement)`` applied (spans do not overlap)."""
    out, at = [], 0
    for start, end, new in sorted(edits):
        out.append(text[at:start])
        out.append(new)
        at = end
    out.append(text[at:])
    return "".join(out)


def _rate(rate: float) -> float:
    return check_scalar(rate, "rate", float, low=0, high=1, include="right")


# ----------------------------------------------------------------------------- typos


def _typo(word: str, rng: np.random.Generator) -> str:
    """``word`` one edit away: two neighbours swapped, a letter dropped or one inserted, in its leading run of
    letters (before any apostrophe) and never at its first letter."""
    run = _LETTERS.match(word).group()
    rest = word[len(run):]
    swaps = [i for i in range(1, len(run) - 1) if run[i] != run[i + 1]]
    ops = ["drop", "insert"] + (["swap"] if swaps else [])
    op = ops[int(rng.integers(len(ops)))]
    if op == "swap":
        i = swaps[int(rng.integers(len(swaps)))]
        return run[:i] + run[i + 1] + run[i] + run[i + 2:] + rest
    if op == "drop":
        i = int(rng.integers(1, len(run)))
        return run[:i] + run[i + 1:] + rest
    i = int(rng.integers(1, len(run) + 1))
    letter = string.ascii_lowercase[int(rng.integers(26))]
    return run[:i] + (letter.upper() if run.isupper() else letter) + run[i:] + rest


def typos(text: str, rng: np.random.Generator, rate: float = DEFAULT_RATE) -> str:
    """Typos in a share of the words longer than 3 letters, one edit per word.

    A word is eligible when its letters before any apostrophe are more than 3
    (``woman`` of ``woman's``; not ``don't``). Each chosen word gets, in those
    letters and never at the first, one of: two neighbouring letters that
    differ swapped, a letter dropped, or a lower-case letter (upper case in
    an upper-case word) inserted. A changed word is therefore at
    Damerau-Levenshtein distance 1 from the original, and still one word.

    Parameters
    ----------
    text : str
    rng : numpy.random.Generator
    rate : float
        Share of the eligible words changed, rounded up (in (0, 1]).

    Returns
    -------
    str

    Examples
    --------
    >>> typos("A man is playing a guitar.", np.random.default_rng(0), rate=1.0)
    'A man is pliaying a gitar.'
    """
    words = [m for m in _WORD.finditer(text) if len(_LETTERS.match(m.group()).group()) > 3]
    return _edited(text, [(words[i].start(), words[i].end(), _typo(words[i].group(), rng))
                          for i in _chosen(rng, len(words), _rate(rate))])


# ----------------------------------------------------------------------------- casing


def _case_forms(word: str) -> list[str]:
    """The lower, upper and title forms of ``word`` that differ from it and change nothing but case."""
    forms = [word.lower(), word.upper(), word[:1].upper() + word[1:].lower()]
    out = []
    for form in forms:
        if form != word and form not in out and len(form) == len(word) and form.lower() == word.lower():
            out.append(form)
    return out


def casing(text: str, rng: np.random.Generator, rate: float = DEFAULT_RATE) -> str:
    """A share of the words turned lower case, upper case or title case (one of those that changes it).

    Only case changes: ``casing(t, rng).lower() == t.lower()``. Words whose
    letters have no case (or whose case forms change their length, as
    ``ß`` does) are left alone.

    Parameters
    ----------
    text : str
    rng : numpy.random.Generator
    rate : float
        Share of the words that have a case form changed, rounded up (in (0, 1]).

    Returns
    -------
    str

    Examples
    --------
    >>> casing("A man is playing a guitar.", np.random.default_rng(0), rate=0.5)
    'A man is PLAYING A GUITAR.'
    """
    words = [(m, forms) for m in _WORD.finditer(text) if (forms := _case_forms(m.group()))]
    edits = []
    for i in _chosen(rng, len(words), _rate(rate)):
        m, forms = words[i]
        edits.append((m.start(), m.end(), forms[int(rng.integers(len(forms)))]))
    return _edited(text, edits)


# ----------------------------------------------------------------------------- punctuation


def _punctuation_sites(text: str) -> list[tuple[int, int, str]]:
    """Every edit :func:`punctuation` may make, as ``(start, end, replacement)`` in text order."""
    sites = []
    end = len(text.rstrip())
    for i, ch in enumerate(text):
        before = text[i - 1] if i else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        if ch in _MARKS and before.isalnum() and (after == "" or after.isspace()):
            sites.append((i, i + 1, ""))  # a mark after a word, ending it: dropped (not 3.5, not 1,000)
        elif ch == " " and before.isalpha() and after.isalpha():
            sites.append((i, i, ","))  # between two words: a comma added
    if end and text[end - 1].isalnum():
        sites.append((end, end, "."))  # no terminal mark: a full stop added
    return sites


def punctuation(text: str, rng: np.random.Generator, rate: float = DEFAULT_RATE) -> str:
    """Punctuation dropped or added at a share of the places where it can be.

    The places: each of ``. , ; : ! ?`` that follows a letter or digit and
    ends a word (followed by a space or the end: the dot of ``3.5`` and the
    comma of ``1,000`` stay), dropped; each space between two words, where
    a comma is added; and the end of a text without terminal punctuation,
    where a full stop is added. Only those marks change: removing
    ``. , ; : ! ?`` from the result gives the text with them removed.

    Parameters
    ----------
    text : str
    rng : numpy.random.Generator
    rate : float
        Share of the places changed, rounded up (in (0, 1]).

    Returns
    -------
    str

    Examples
    --------
    >>> punctuation("A man, in a hat, is playing a guitar.", np.random.default_rng(0), rate=0.3)
    'A man, in a hat is, playing a, guitar.'
    """
    sites = _punctuation_sites(text)
    return _edited(text, [sites[i] for i in _chosen(rng, len(sites), _rate(rate))])


# ----------------------------------------------------------------------------- synonyms


def _index_entries(path: Path) -> Iterable[tuple[str, int, int]]:
    """``(lemma, tagged senses, offset of the first sense)`` of each record of an ``index.<pos>`` file."""
    with path.open("r", encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):  # the licence header
                continue
            fields = line.split()
            n_pointers = int(fields[3])
            yield fields[0], int(fields[5 + n_pointers]), int(fields[6 + n_pointers])


@lru_cache(maxsize=2)
def _first_sense_synonyms(folder: Path) -> dict[str, tuple[str, ...]]:
    """Each WordNet word form to the other single-word, lower-case lemmas of its first sense (none: left out)."""
    best: dict[str, tuple[int, str, int]] = {}  # word -> (tagged senses, pos, first offset)
    lemmas: dict[str, dict[int, tuple[str, ...]]] = {}
    for pos in _POS:
        lemmas[pos] = {s.offset: s.lemmas for s in read_synsets(pos, folder).values()}
        for word, tagged, offset in _index_entries(folder / f"index.{_suffix(pos)}"):
            if word not in best or tagged > best[word][0]:
                best[word] = (tagged, pos, offset)
    out = {}
    for word, (_, pos, offset) in best.items():
        others = tuple(dict.fromkeys(w for w in lemmas[pos][offset] if w.isalpha() and w.islower() and w != word))
        if others:
            out[word] = others
    return out


def _suffix(pos: str) -> str:
    return {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}[pos]


def _wordnet_folder(root: str | Path | None = None) -> Path:
    """The WordNet folder, or one error line saying how to install it."""
    folder = DEFAULT_ROOT if root is None else Path(root)
    if not wordnet_available(folder):
        raise InputError(f"synonyms need WordNet 3.0 in {folder}: install Debian's wordnet-base (apt-get install "
                         "wordnet-base, or `make wordnet`), or leave synonyms out")
    return folder.resolve()


def _synonym_table(root: str | Path | None = None) -> dict[str, tuple[str, ...]]:
    return _first_sense_synonyms(_wordnet_folder(root))


def _like(word: str, new: str) -> str:
    """``new`` in the case pattern of ``word``: upper case, capitalised, or as it is."""
    if len(word) > 1 and word.isupper():
        return new.upper()
    if word[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def synonyms(text: str, rng: np.random.Generator, rate: float = DEFAULT_RATE, *,
             root: str | Path | None = None) -> str:
    """A share of the content words replaced by a WordNet synonym from their first sense.

    The rule: a word (letters, an apostrophe inside) that is not a function
    word is looked up, lower-cased, in WordNet's ``index.noun``,
    ``index.verb``, ``index.adj`` and ``index.adv`` as it is written: its form
    must be found (no lemmatisation: ``runs`` and ``cars`` are left alone). A
    word ending in ``-ing`` is left alone too: in a sentence it is mostly a
    verb form, which WordNet lists as a noun (``slicing`` would become
    ``slice``). Without a part-of-speech tagger, the part of speech taken is
    the one under which the word has the most senses tagged in WordNet's
    SemCor counts (the index's ``tagsense_cnt``; ties: noun, verb, adjective,
    adverb), and the sense its first (most frequent) sense there. The
    candidates are that synset's other lemmas that are one word, all letters
    and lower case (no collocation, no proper name); a word without any is
    not eligible. A chosen word gets one of them at random, written in its
    case pattern (``Car`` becomes ``Auto``, ``CAR`` ``AUTO``).

    Parameters
    ----------
    text : str
    rng : numpy.random.Generator
    rate : float
        Share of the eligible words replaced, rounded up (in (0, 1]).
    root : path, optional
        The WordNet folder (default Debian's ``/usr/share/wordnet``).

    Returns
    -------
    str

    Raises
    ------
    InputError
        When the WordNet files are missing (install ``wordnet-base``).

    Examples
    --------
    >>> synonyms("The car is quick.", np.random.default_rng(0), rate=1.0)
    'The machine is speedy.'
    """
    table = _synonym_table(root)
    words = [(m, table[key]) for m in _WORD.finditer(text)
             if (key := m.group().lower()) in table and key not in _FUNCTION_WORDS and not key.endswith("ing")]
    edits = []
    for i in _chosen(rng, len(words), _rate(rate)):
        m, choices = words[i]
        edits.append((m.start(), m.end(), _like(m.group(), choices[int(rng.integers(len(choices)))])))
    return _edited(text, edits)


# ----------------------------------------------------------------------------- reorder

#: Where two clauses may meet: ``", and "``, ``" and "`` or ``", "`` (the joiner is kept as written).
_JOINER = re.compile(r",\s+and\s+|\s+and\s+|,\s+", re.IGNORECASE)


def _clause(side: str) -> bool:
    """A clause by a cheap test: a finite auxiliary or copula among its second to fifth tokens, none first."""
    tokens = [t.lower() for t in _TOKEN.findall(side)]
    return (len(tokens) >= 3 and tokens[0] not in _AUXILIARIES and any(t in _AUXILIARIES for t in tokens[1:5])
            and not any(t in _ORDER_WORDS for t in tokens))


def reorder(text: str, rng: np.random.Generator | None = None, rate: float = DEFAULT_RATE) -> str:
    """Two clauses swapped around ``and`` or a comma, where that is safe; otherwise the text as it is.

    The rule, conservative on purpose. The text (its terminal ``.``, ``!`` or
    ``?`` aside) has exactly one place where ``, and``, ``and`` or a comma
    joins two parts, and no ``;``, ``:``, quote or bracket. Each part is a
    clause by a cheap test: a finite auxiliary or copula (``is``, ``are``,
    ``was``, ``has``, ``will``, ``can``...) among its second to fifth tokens,
    and not as its first (``... and is looking up`` shares the first part's
    subject). Neither part holds a word that makes the order matter, ties the
    parts together or reports one of them (``then``, ``after``, ``because``,
    ``so``, ``but``, ``which``, ``that``, ``also``, ``both``, ``other``,
    ``said``...). The second part holds no pronoun that could point into the
    first (``it``, ``he``, ``they``, ``her``, ``one``, ``there``, ``this``...)
    and does not start with a digit (``2 girls are sitting and 1 is reading``).
    The parts then trade places around the same joiner, the terminal mark
    stays at the end, and the initial capital moves to the new first word; the
    old first word is lower-cased when it is a function word (``A``, ``The``,
    ``Two``), else left as written (it may be a name).

    A text has one site at most, so any ``rate`` above 0 swaps every text that
    qualifies; ``rng`` is not drawn from (it is taken for a common signature).

    Parameters
    ----------
    text : str
    rng : numpy.random.Generator, optional
    rate : float
        In (0, 1].

    Returns
    -------
    str

    Examples
    --------
    >>> reorder("Bounty hunting is illegal in Mexico, and the bounty hunter was charged with kidnapping.")
    'The bounty hunter was charged with kidnapping, and Bounty hunting is illegal in Mexico.'
    >>> reorder("A man and a woman are dancing.")  # "A man" is no clause
    'A man and a woman are dancing.'
    >>> reorder("A man is cutting a potato and a woman is peeling it.")  # "it" points back
    'A man is cutting a potato and a woman is peeling it.'
    """
    _rate(rate)
    body = text.strip()
    tail_at = len(body.rstrip(".!?"))
    body, tail = body[:tail_at], body[tail_at:]
    if not body or any(ch in body for ch in ";:\"“”()[]{}"):
        return text
    joints = list(_JOINER.finditer(body))
    if len(joints) != 1 or body.count(",") > 1 or len(re.findall(r"\band\b", body, re.IGNORECASE)) > 1:
        return text
    joint = joints[0]
    first, second = body[:joint.start()], body[joint.end():]
    if not (_clause(first) and _clause(second)) or second[:1].isdigit():
        return text
    if any(t.lower() in _PRONOUNS for t in _TOKEN.findall(second)):
        return text
    if first[:1].isupper():
        head = _TOKEN.match(first)
        if head is not None and head.group().lower() in _FUNCTION_WORDS and head.group() != "I":
            first = first[:1].lower() + first[1:]
        second = second[:1].upper() + second[1:]
    lead = text[:len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return f"{lead}{second}{joint.group()}{first}{tail}{trail}"


# ----------------------------------------------------------------------------- many texts

_KINDS: dict[str, Callable[..., str]] = {"typos": typos, "casing": casing, "punctuation": punctuation,
                                         "synonyms": synonyms, "reorder": reorder}


def parse_perturbations(spec: str | Sequence[str]) -> tuple[str, ...]:
    """The perturbations named, in the order given, checked; ``"all"`` names every one of :data:`PERTURBATIONS`.

    Parameters
    ----------
    spec : str or sequence of str
        ``"typos,casing"``, ``["typos", "casing"]`` or ``"all"``.

    Returns
    -------
    tuple of str

    Raises
    ------
    InputError
        An unknown or repeated name, none at all, or ``synonyms`` without the
        WordNet files (checked here, before any model is loaded).

    Examples
    --------
    >>> parse_perturbations("typos, casing")
    ('typos', 'casing')
    >>> parse_perturbations("all") == PERTURBATIONS
    True
    >>> parse_perturbations("typo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: perturbation must be one of typos, casing, ..., not 'typo'
    """
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    names = [n for n in names if n != ""]
    if names == ["all"]:
        names = list(PERTURBATIONS)
    if not names:
        raise InputError(f"no perturbation named: give some of {', '.join(PERTURBATIONS)} (or all)")
    out = tuple(check_choice(n, "perturbation", PERTURBATIONS) for n in names)
    if len(set(out)) != len(out):
        raise InputError(f"a perturbation is named twice: {', '.join(out)}")
    if "synonyms" in out:
        _wordnet_folder()
    return out


def perturb(texts: Sequence[str], kinds: str | Sequence[str], *, rate: float = DEFAULT_RATE,
            seed: int = 0, start: int = 0) -> list[str]:
    """Perturb each text with the perturbations named, in that order.

    Parameters
    ----------
    texts : sequence of str
    kinds : str or sequence of str
        Names from :data:`PERTURBATIONS` (``"typos,casing"``, see :func:`parse_perturbations`).
    rate : float
        Share of each text's eligible sites each perturbation changes, rounded
        up (in (0, 1]).
    seed : int
        Text ``i`` is perturbed with ``numpy.random.default_rng([seed, start + i])``:
        its result depends on the seed, its text and its index only.
    start : int
        The index of ``texts[0]`` in the whole collection, for a caller that
        perturbs a long stream of texts a batch at a time (the same texts as one call).

    Returns
    -------
    list of str
        One per text, in order (a text without an eligible site is returned as it is).

    Raises
    ------
    InputError
        Texts that are not strings, unknown perturbations, a rate outside
        (0, 1], a bad seed, or ``synonyms`` without WordNet.

    Examples
    --------
    >>> texts = ["A man is playing a guitar.", "Stocks fell sharply on Monday."]
    >>> perturb(texts, "typos", seed=1)
    ['A man is playinyg a guitar.', 'Stocks fell shaply on Monday.']
    >>> perturb(texts[1:], "typos", seed=1)  # at index 0 now: another generator
    ['Stocks felly sharply on Monday.']
    >>> perturb(texts[1:], "typos", seed=1, start=1)  # index 1 again, as in the whole list
    ['Stocks fell shaply on Monday.']
    """
    texts = check_strings(texts, "texts", "text")
    names = parse_perturbations(kinds)
    rate = _rate(rate)
    seed = check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    start = check_scalar(start, "start", int, low=0)
    out = []
    for i, text in enumerate(texts, start=start):
        rng = np.random.default_rng([seed, i])
        for name in names:
            text = _KINDS[name](text, rng, rate)
        out.append(text)
    return out
