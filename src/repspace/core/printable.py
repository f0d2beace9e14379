"""Text that came from users, made safe to show: control characters escaped, lengths capped, paths shortened.

Ids, texts and metadata are data: they may hold any character, and an error
message may echo any of them. Before such text reaches a terminal, a log or an
HTTP error body it goes through these functions, so that

* a control character (C0, DEL, C1: ``ESC``, ``NUL``, a carriage return, an
  OSC-8 hyperlink's bytes) is shown as an escape (``\\x1b``), never acted on;
* an error names what it refuses in a bounded excerpt, never the whole 16 MiB
  it was given;
* a path is shown relative to where the user stands, not as an absolute path
  that leaks the layout of the machine.

The rules are written by hand because they are a few regular expressions;
``rich.markup.escape`` does the markup part where rich renders (the CLI).

Examples
--------
>>> escape_controls("a\\x1b[31mred\\x07")
'a\\\\x1b[31mred\\\\x07'
>>> one_line("line one\\nline two")
'line one\\\\nline two'
>>> excerpt("x" * 100, limit=10)
"'xxxxxxxx… (100 characters)"
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["CONTROL", "MESSAGE_LIMIT", "EXCERPT_LIMIT", "escape_controls", "first_control", "excerpt", "one_line",
           "shown_path", "shown_paths"]

#: C0 controls, DEL and C1 controls: characters that a terminal acts on (or that end a line) rather than draws.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
#: Longest error line shown (characters): a message beyond it is cut, saying how long it was.
MESSAGE_LIMIT = 1000
#: Longest excerpt of a user's value inside a message.
EXCERPT_LIMIT = 80


def first_control(text: str) -> int | None:
    """The position of the first control character of ``text`` (C0, DEL, C1), or None.

    Examples
    --------
    >>> first_control("abc"), first_control("a\\x00b"), first_control("tab\\there")
    (None, 1, 3)
    """
    m = CONTROL.search(text)
    return None if m is None else m.start()


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, f"\\x{ord(c):02x}")


def escape_controls(text: str, *, keep: str = "") -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``), except those in ``keep``.

    A lone surrogate (a byte that was not UTF-8, read with ``surrogateescape``) is written as ``\\udcXX``.

    Examples
    --------
    >>> escape_controls("a\\tb\\n", keep="\\t")
    'a\\tb\\\\n'
    >>> escape_controls("\\x9b31m")  # the one-byte CSI of C1
    '\\\\x9b31m'
    """
    if keep:
        out = CONTROL.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)
    else:
        out = CONTROL.sub(_escape, text)
    if any("\ud800" <= c <= "\udfff" for c in out):
        out = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in out)
    return out


def excerpt(value: object, limit: int = EXCERPT_LIMIT) -> str:
    """``repr(value)`` with controls escaped, cut to about ``limit`` characters (saying how long the value was).

    For messages that name what they refuse: ``f"unknown field {excerpt(name)}"``.

    Examples
    --------
    >>> excerpt("short")
    "'short'"
    >>> excerpt("y" * 1000, limit=20)
    "'yyyyyyyyyyyyyyyyyy… (1000 characters)"
    """
    text = escape_controls(repr(value))
    if len(text) <= limit:
        return text
    size = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return text[: max(limit - 1, 1)] + "…" + size


def one_line(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """A message as one line: controls (newlines included) escaped, cut to ``limit`` characters.

    Examples
    --------
    >>> one_line("a" * 30, limit=12)
    'aaaaaaaaaaa… (30 characters)'
    """
    text = escape_controls(message)
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 1)] + f"… ({len(text)} characters)"


def shown_path(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
    """``path`` as a user should see it: relative to ``base`` (default: the working directory) when inside it,
    ``~/...`` when inside the home directory, else as given.

    Examples
    --------
    >>> shown_path("/data/project/store.db", base="/data/project")
    'store.db'
    >>> shown_path("/elsewhere/x.npy", base="/data/project")
    '/elsewhere/x.npy'
    """
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    try:
        root = Path(base) if base is not None else Path.cwd()
        return str(p.relative_to(root))
    except (ValueError, OSError):
        pass
    home = os.environ.get("HOME")
    if home and home != "/":
        try:
            return str(Path("~") / p.relative_to(home))
        except ValueError:
            pass
    return str(p)


def shown_paths(message: str, base: str | os.PathLike[str] | None = None) -> str:
    """``message`` with the absolute paths in it shown as :func:`shown_path` shows one: relative to ``base``
    (default: the working directory) when inside it, ``~/...`` when inside the home directory.

    For messages composed far from the user (a library error naming the store
    file): a path is known as a whole prefix (the folder and a separator, or
    the folder itself at the end of a word), never inside a longer name.

    Examples
    --------
    >>> shown_paths("cannot write store /data/project/s.db (see /data/projects/x)", base="/data/project")
    'cannot write store s.db (see /data/projects/x)'
    >>> shown_paths("no store in /data/project", base="/data/project")
    'no store in .'
    """
    try:
        root = str(Path(base) if base is not None else Path.cwd())
    except OSError:
        root = ""
    home = os.environ.get("HOME", "")
    shown = {p.rstrip(os.sep): s for p, s in ((home, "~"), (root, ".")) if len(p.rstrip(os.sep)) > 1}
    if not shown:
        return message
    prefixes = sorted(shown, key=len, reverse=True)  # the working directory inside home wins
    pattern = re.compile(r"(?<![\w.~/-])(" + "|".join(map(re.escape, prefixes)) + r")(/|(?![\w.~-]))")

    def replace(m: re.Match[str]) -> str:
        short = shown[m.group(1)]
        if m.group(2) == "/":
            return "" if short == "." else short + "/"
        return short

    return pattern.sub(replace, message)
