"""A small, safe metadata filter language compiled to parameterized SQLite.

A filter such as ``year >= 2020 and lang in ('en', 'de') and not draft`` is
parsed into a tree of frozen dataclasses (:func:`parse`), compiled into a
boolean SQLite expression with ``?`` parameters (:func:`compile_sql`), or
evaluated in pure Python with exactly the same semantics (:func:`evaluate`).
:class:`Filter` bundles the three, and :func:`evaluate_columns` evaluates a
filter on whole columns of a space in numpy (what the store's selections use).

The package is split by stage, each module owning one:

* :mod:`.validate`: the limits and what a literal or key may be;
* :mod:`.nodes`: the syntax tree;
* :mod:`.parser`: text to tree;
* :mod:`.sql`: tree to parameterized SQLite (the reference semantics);
* :mod:`.evaluator`: tree evaluated on one item in Python;
* :mod:`.columns`: tree evaluated on columns in numpy;
* :mod:`.compiled`: the :class:`Filter` that bundles parse, SQL and matcher.

The per-generation cache of selections and columns belongs to the store
(:mod:`repspace.core.store._selections`), which owns the generations.

Items live in a table with the columns ``item_id TEXT``, ``text TEXT`` and
``meta TEXT`` (a JSON object); the column names can be changed.

Grammar
-------
Keywords (``and or not in is null like true false``) are case-insensitive::

    expr    := or
    or      := and ('or' and)*
    and     := not ('and' not)*
    not     := 'not' not | atom
    atom    := '(' expr ')'
             | field op literal                  op: = == != <> < <= > >=
             | field ['not'] 'in' '(' literal (',' literal)* [','] ')'
             | field 'is' ['not'] 'null'
             | field ['not'] 'like' string
             | field                             truthiness test
    field   := key ('.' key)*
    key     := [A-Za-z_][A-Za-z0-9_]*  |  `any key`   (write ` twice inside)
    literal := number | string | true | false | null
    number  := -?(digits[.digits] | .digits)([eE][+-]?digits)?
    string  := 'single' | "double"      (escapes: \\\\  \\'  \\" and nothing else)

``not`` binds tighter than ``and``, which binds tighter than ``or``:
``not a and b or c`` means ``((not a) and b) or c``. A key that is a keyword,
or that has characters outside ``[A-Za-z0-9_]``, must be written in
backquotes, e.g. ```my key`.`a.b` = 1``; ``a.b`` is the key ``b`` inside the
object at key ``a``. An integer literal is a 64-bit integer, a literal with a
``.`` or an exponent is a float (``1e3`` is the float 1000.0).

Fields
------
``_id`` is the item's id column and ``_text`` its text column; they have no
sub-keys. Every other field is a path of keys into the ``meta`` JSON object.
A top-level meta key literally named ``_id`` or ``_text`` cannot be reached
(backquoting does not change that).

Semantics
---------
Every atom is exactly true or false (there is no SQL ``NULL`` three-valued
logic), so ``not``, ``and`` and ``or`` behave like Python's. Comparisons are
typed; SQLite's cross-type ordering and type affinity never take part:

* a number literal only matches JSON numbers (integer or real; booleans are
  *not* numbers); ints and floats compare exactly, ``1 = 1.0`` is true;
* a string literal only matches JSON strings (and the text columns); strings
  compare by Unicode code point (SQLite's ``BINARY`` collation), so ``'2021'``
  never equals ``2021`` and ``'B' < 'a'``;
* ``true``/``false`` only match JSON booleans and only with ``=``/``!=``
  (ordering booleans is an error);
* ``null`` cannot be compared with ``=``, ``!=``, ``in`` or an ordering: it is
  an error that suggests ``is null``/``is not null``.

``x = v`` and ``x < v`` (``<=``, ``>``, ``>=``), ``x in (...)`` and
``x like p`` are false when ``x`` is missing, JSON ``null`` or of another type
than the literal. ``x != v`` (also ``<>``) is defined as ``not (x = v)``, so a
missing field matches ``x != 5``; likewise ``x not in (...)`` is
``not (x in (...))`` and ``x not like p`` is ``not (x like p)``. ``x is null``
is true when the key is missing or holds JSON ``null`` (and for a ``NULL``
column); ``x is not null`` is its negation. ``x`` alone (truthiness) is true
iff the value exists and is not ``null``, ``false``, ``0``, ``0.0``, ``""``,
``[]`` or ``{}``.

JSON arrays and objects are values of their own type: ``=``, ``in``, ``<`` and
``like`` are always false on them (there is no array-contains semantics in
this version), ``is null`` is false and truthiness tests emptiness. A path
that runs through a non-object (``a.b`` where ``a`` is a string or an array)
is a missing field; array elements cannot be addressed.

``like`` matches a whole string against a pattern in which ``%`` stands for
any run of characters and ``_`` for exactly one character; every other
character, including ``*``, ``?``, ``[`` and ``\\``, stands for itself and
there is no escape character. It is **case-sensitive** (compiled to SQLite's
``GLOB`` on a translated pattern, so ``PRAGMA case_sensitive_like`` and the
ICU extension cannot change it).

Integers in the JSON beyond the 64-bit range are read by SQLite as floats;
:func:`evaluate` does the same. Out of scope: JSON objects with duplicate keys
(SQLite takes the first, Python's :mod:`json` the last), strings containing NUL
characters (SQLite's JSON functions cut them there) and ``meta`` text that is
not valid JSON (SQLite raises "malformed JSON" for the rows it reaches).

Limits
------
A filter has at most 10,000 characters, nests ``(`` and ``not`` at most 64
deep, has fields of at most 64 keys and at most 1,000 values in one ``in``
list. Literals and keys must not contain NUL characters or lone surrogates.
Every violation, and every syntax error, raises
:class:`~repspace.core.errors.FilterError` with one line that says what was
expected and at which character position (counting from 1). :func:`parse`
raises nothing else for any ``str``.

Safety
------
User text never reaches SQL as code. The SQL text contains only fixed
keywords, functions, operators and type names, the column names given by the
caller, internal table aliases and ``?``; every literal, every LIKE pattern and
every key is a parameter. Keys of printable ASCII other than ``"`` and ``\\``
are passed as a JSON path parameter ``$."a"."b"``. Other keys are looked up
with ``json_each`` and a ``key = ?`` parameter because SQLite's path syntax
(3.40) cannot spell a ``"`` inside a key and compares keys with their raw,
still escaped, JSON text (so ``$."é"`` misses ``{"\\u00e9": 1}``, which is what
:func:`json.dumps` writes by default).

No maintained library parses a small language like this into SQL with every
literal and key as a bound parameter and a matching Python evaluator, so the
parser is a hand-written recursive descent over a small tokenizer.

Examples
--------
>>> import json, sqlite3
>>> db = sqlite3.connect(":memory:")
>>> _ = db.execute("CREATE TABLE items (item_id TEXT, text TEXT, meta TEXT)")
>>> rows = [
...     ("a", "first", {"year": 2021, "lang": "en"}),
...     ("b", "second", {"year": "2021", "lang": "de", "draft": True}),
...     ("c", None, {"year": 2019}),
... ]
>>> _ = db.executemany(
...     "INSERT INTO items VALUES (?, ?, ?)",
...     [(i, t, json.dumps(m)) for i, t, m in rows],
... )
>>> f = Filter.parse("year >= 2020 or lang in ('de',) and not draft")
>>> sorted(r[0] for r in db.execute(f"SELECT item_id FROM items WHERE {f.sql}", f.params))
['a']
>>> [i for i, t, m in rows if f.matches(i, t, m)]
['a']
"""

from repspace.core.filters.columns import Column, evaluate_columns, fields_of
from repspace.core.filters.compiled import Filter
from repspace.core.filters.evaluator import evaluate
from repspace.core.filters.nodes import And, Compare, Expr, Field, In, IsNull, Like, Node, Not, Or, Truthy
from repspace.core.filters.parser import parse
from repspace.core.filters.sql import compile_sql, field_sql
from repspace.core.filters.validate import MAX_DEPTH, MAX_IN_VALUES, MAX_LENGTH, Value

__all__ = [
    "MAX_LENGTH",
    "MAX_DEPTH",
    "MAX_IN_VALUES",
    "Value",
    "Node",
    "Field",
    "Compare",
    "In",
    "IsNull",
    "Like",
    "Truthy",
    "Not",
    "And",
    "Or",
    "Expr",
    "parse",
    "compile_sql",
    "field_sql",
    "evaluate",
    "Filter",
    "Column",
    "evaluate_columns",
    "fields_of",
]
