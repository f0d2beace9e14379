"""Write docs/API.md from the public modules: each capability, its summary and every name it exports.

Run ``make api`` (or ``python docs/api_page.py``) after changing a public module's ``__all__``;
tests/test_public_api.py fails while the page misses a name.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import repspace

SRC = Path(repspace.__file__).resolve().parent
PAGE = Path(__file__).resolve().parent / "API.md"

INTRO = """# The public API

Import a capability by name; each module re-exports its supported names with `__all__`, and each name is the
object its implementation defines (the layers under `repspace/core`, `engines`, `workflows` and `interfaces`,
described in [ARCHITECTURE.md](ARCHITECTURE.md), are the implementation, not the API). Every function and class
has a docstring with a runnable example: `help(repspace.search.search_space)`.

```python
import numpy as np
from repspace.store import Store
from repspace.compare import cka
import repspace.interpret as ri
```

This page is written by `docs/api_page.py` (`make api`); tests/test_public_api.py checks that it lists every name.
"""


def _first_line(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ").replace("|", "\\|")


def _kind(obj: object) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    return "function" if callable(obj) else "constant"


def _value(obj: object) -> str:
    """A constant's value when it reads well in one line (no memory addresses), else its type."""
    text = repr(obj)
    if " at 0x" in text or len(text) > 100:
        return f"a {type(obj).__name__} of {len(obj)}" if hasattr(obj, "__len__") else f"a {type(obj).__name__}"
    return f"`{text}`"


def page() -> str:
    """The page's Markdown."""
    parts = [INTRO]
    for stem in sorted(p.stem for p in SRC.glob("*.py") if p.stem != "__init__"):
        mod = importlib.import_module(f"repspace.{stem}")
        parts.append(f"## repspace.{stem}\n\n{_first_line(mod)}\n\n| name | kind | what it is |\n| --- | --- | --- |")
        for name in sorted(mod.__all__, key=str.lower):
            obj = getattr(mod, name)
            what = _first_line(obj) if _kind(obj) != "constant" else _value(obj)
            parts.append(f"| `{name}` | {_kind(obj)} | {what} |")
        parts.append("")
    return "\n".join(parts)


if __name__ == "__main__":
    PAGE.write_text(page(), encoding="utf-8")
    print(f"wrote {PAGE}")
