"""Options that several commands share, written once: ``Annotated`` aliases and option groups.

An option group is a frozen dataclass (a subclass of :class:`OptionGroup`) whose
fields are ``Annotated`` Typer parameters with their defaults. A command names a
group as one of its parameters, and :func:`grouped` spreads the group's fields
into the command's signature at that place, so that Typer sees the same options
(names, help, defaults and order) as if they were written out; the command then
gets one group object built from their values. The commands of a
:class:`GroupedTyper` (every ``repspace GROUP COMMAND``) are spread so when
registered. Written here because Typer has no option groups of its own: it
reads a command's signature, so the groups are spread into one.

Examples
--------
>>> from dataclasses import dataclass
>>> from typing import Annotated
>>> import typer
>>> @dataclass(frozen=True)
... class Paging(OptionGroup):
...     limit: Annotated[int, typer.Option(min=1, help="Rows at most.")] = 10
...     offset: Annotated[int, typer.Option(min=0, help="Rows skipped.")] = 0
>>> @grouped
... def list_cmd(name: Annotated[str, typer.Argument()], paging: Paging, json: Json = False) -> str:
...     return f"{name} {paging.limit} {paging.offset} {json}"
>>> list(inspect.signature(list_cmd).parameters)
['name', 'limit', 'offset', 'json']
>>> list_cmd(name="docs", limit=5, offset=0, json=True)
'docs 5 0 True'
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

#: ``--json`` of the commands that print their result as JSON.
Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]

F = TypeVar("F", bound=Callable[..., Any])


class OptionGroup:
    """Base of the option groups: a frozen dataclass of ``Annotated`` Typer parameters (see the module)."""


def _is_group(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, OptionGroup)


def grouped(func: F) -> F:
    """``func`` with each parameter typed by an :class:`OptionGroup` spread into that group's fields.

    Typer passes every parameter by name: write them keyword-only (``*,`` first)
    where a group without a default follows a parameter with one. A group's
    default (its defaults, ``HeadRun()``) serves Python callers only: Typer
    passes every field. ``func`` itself is returned when it names no group.
    """
    signature = inspect.signature(func, eval_str=True)
    if not any(_is_group(p.annotation) for p in signature.parameters.values()):
        return func
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, list[str]]] = {}
    for p in signature.parameters.values():
        if not _is_group(p.annotation):
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        hints = typing.get_type_hints(p.annotation, include_extras=True)
        fields = dataclasses.fields(p.annotation)
        groups[p.name] = (p.annotation, [f.name for f in fields])
        params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=hints[f.name],
                                     default=inspect.Parameter.empty if f.default is dataclasses.MISSING
                                     else f.default) for f in fields]
    names = [p.name for p in params]
    if len(set(names)) != len(names) or set(groups) & set(names):
        raise TypeError(f"{func.__qualname__}: option groups repeat a parameter name ({names})")

    @functools.wraps(func)
    def command(**values: Any) -> Any:
        for name, (group, fields) in groups.items():
            values[name] = group(**{f: values.pop(f) for f in fields})
        return func(**values)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return typing.cast(F, command)


class GroupedTyper(typer.Typer):
    """A Typer whose commands may name option groups: each is :func:`grouped` when registered.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from typing import Annotated
    >>> from typer.testing import CliRunner
    >>> @dataclass(frozen=True)
    ... class Size(OptionGroup):
    ...     rows: Annotated[int, typer.Option(min=1, help="Rows.")] = 2
    >>> group = GroupedTyper()
    >>> @group.command("show")
    ... def show(size: Size, json: Json = False) -> None:
    ...     print(size.rows, json)
    >>> @group.command("other")
    ... def other() -> None: ...
    >>> CliRunner().invoke(group, ["show", "--rows", "3", "--json"]).output.split()
    ['3', 'True']
    """

    def command(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        register = super().command(*args, **kwargs)

        def decorator(func: F) -> F:
            register(grouped(func))
            return func

        return decorator
