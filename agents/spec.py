"""Agent specs: ``name[:VALUE][:key=value]...`` parsed onto a bot's frozen config dataclass.

A bot with options declares one frozen dataclass. Each field has its default written once,
a one-line docstring below it (read by ``option_rows`` for ``tiengow agents`` and the docs),
and its range as field metadata (``ranged``, ``choice``). The class names the field a bare
value fills with ``POSITIONAL`` (``samples`` in ``pimc:64``, ``path`` in ``cfr:PATH``)::

    @dataclass(frozen=True)
    class PimcConfig:
        POSITIONAL: ClassVar[str] = "samples"
        samples: int = ranged(32, 1, 10**9)
        \"\"\"worlds each legal action is played out in\"\"\"

``parse_spec(name, argument, config)`` maps the text after ``name:`` onto the defaults with
``dataclasses.replace``: every key at most once, values checked against their type and
range, misspelt keys answered with the closest key. Booleans are written 0 or 1.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import math
import textwrap
import types
import typing
from typing import Any

MAX_NUMBER = 10**9  # the largest number any option takes unless its range says otherwise


def ranged(default: int | float, low: int | float, high: int | float) -> Any:
    """A numeric field from ``low`` to ``high`` (both included)."""
    return dataclasses.field(default=default, metadata={"range": (low, high)})


def choice(default: str, *choices: str) -> Any:
    """A text field that is one of ``choices``."""
    return dataclasses.field(default=default, metadata={"range": tuple(choices)})


def suggest(word: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the known word closest to ``word`` (case and spaces aside),
    or nothing when none is close."""
    close = difflib.get_close_matches(word.strip().lower(), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


@functools.cache
def field_docs(config: type) -> dict[str, str]:
    """The one-line docstring under each field of a config dataclass, by field name."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(config)))
    body = tree.body[0].body
    docs = {}
    for statement, following in zip(body, body[1:]):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def _types(config: type) -> dict[str, type]:
    """Each field's value type: int, float, bool or str (``str | None`` is a path, read as str)."""
    hints = typing.get_type_hints(config)
    out = {}
    for field in dataclasses.fields(config):
        hint = hints[field.name]
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
        out[field.name] = hint
    return out


def _type_name(kind: type, field: dataclasses.Field) -> str:
    if kind is bool:
        return "bool"
    if kind is str:
        return "choice" if "range" in field.metadata else "path"
    return kind.__name__


def option_rows(config: type | None) -> list[dict[str, Any]]:
    """Every option of a config: {key, type, default, range, doc}, as ``tiengow agents --json``
    prints them (range: [low, high], the choices, or null)."""
    if config is None:
        return []
    kinds, docs = _types(config), field_docs(config)
    return [
        {
            "key": f.name,
            "type": _type_name(kinds[f.name], f),
            "default": f.default,
            "range": list(f.metadata["range"])
            if "range" in f.metadata
            else ([0, 1] if kinds[f.name] is bool else None),
            "doc": docs.get(f.name, ""),
        }
        for f in dataclasses.fields(config)
    ]


def usage(name: str, config: type | None) -> str:
    """How a spec of this bot is written: ``pimc[:SAMPLES][:KEY=VALUE]...``."""
    if config is None or not dataclasses.fields(config):
        return name
    positional = getattr(config, "POSITIONAL", None)
    return name + (f"[:{positional.upper()}]" if positional else "") + "[:KEY=VALUE]..."


def _value(spec: str, key: str, text: str, kind: type, field: dataclasses.Field) -> Any:
    """``text`` read as the value of option ``key``; ValueError saying what it takes."""
    allowed = field.metadata.get("range")
    if kind is bool:
        if text not in ("0", "1"):
            raise ValueError(f"agent {spec!r}: {key} is 0 or 1, got {key}={text[:40]}")
        return text == "1"
    if kind is str:
        if allowed is not None and text not in allowed:
            raise ValueError(
                f"agent {spec!r}: {key} is one of {', '.join(allowed)}, got {key}={text[:40]}"
                + suggest(text, list(allowed))
            )
        return text
    low, high = allowed if allowed is not None else (0, MAX_NUMBER)
    whole = kind is int
    try:
        number = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        number = math.nan
    if not low <= number <= high or (whole and not number.is_integer()):  # refuses nan and inf
        what = "a whole number" if whole else "a number"
        raise ValueError(f"agent {spec!r}: {key} is {what} from {low:,} to {high:,}, got {key}={text[:40]}")
    return int(number) if whole else number


def parse_spec(name: str, argument: str | None, config: type | None) -> Any:
    """The config of spec ``name[:argument]``: the defaults of ``config`` with the argument's
    positional value and ``key=value`` options put in (module doc); ValueError, one line, when
    the argument is not one. ``config`` None: the bot takes no options."""
    spec = name if argument is None else f"{name}:{argument}"
    if argument is not None and not argument:
        form = f", or {usage(name, config)}" if config is not None else ""
        raise ValueError(f"agent spec {spec!r} ends with ':' and nothing after it; write {name!r} alone{form}")
    if config is None:
        if argument is not None:
            raise ValueError(f"agent {name!r} takes no options, got {spec!r}")
        return None
    kinds = _types(config)
    fields = {f.name: f for f in dataclasses.fields(config)}
    positional = getattr(config, "POSITIONAL", None)
    parts = argument.split(":") if argument else []
    if positional and parts and "=" not in parts[0]:
        parts[0] = f"{positional}={parts[0]}"
    merged: list[str] = []
    for part in parts:  # a path may hold ':' (C:\\x): it runs on to the next KEY=VALUE
        key = merged[-1].partition("=")[0] if merged else None
        if "=" not in part and key in kinds and kinds[key] is str and "range" not in fields[key].metadata:
            merged[-1] += ":" + part
        else:
            merged.append(part)
    parts = merged
    values: dict[str, Any] = {}
    for part in parts:
        key, eq, text = part.partition("=")
        if key not in fields:
            if not eq:
                raise ValueError(
                    f"agent {spec!r}: {part[:40]!r} is not KEY=VALUE; {name} is written "
                    f"{usage(name, config)}, keys {', '.join(fields)}"
                )
            raise ValueError(
                f"agent {spec!r}: unknown option {key[:40]!r}{suggest(key, list(fields))}; "
                f"{name} takes {', '.join(fields)}"
            )
        if not eq or not text:
            raise ValueError(f"agent {spec!r}: {key} needs a value, as in {key}=VALUE")
        if key in values:
            raise ValueError(f"agent {spec!r}: {key} is given twice")
        values[key] = _value(spec, key, text, kinds[key], fields[key])
    return dataclasses.replace(config(), **values)


def config_text(config: Any) -> list[str]:
    """One line per option of a built config, ``key = value  (doc)``, for ``tiengow agents SPEC``."""
    if config is None:
        return []
    docs = field_docs(type(config))
    width = max((len(f.name) for f in dataclasses.fields(config)), default=0)
    return [
        f"{f.name:<{width}} = {getattr(config, f.name)!s:<12} {docs.get(f.name, '')}"
        for f in dataclasses.fields(config)
    ]


__all__ = [
    "ranged",
    "choice",
    "suggest",
    "parse_spec",
    "option_rows",
    "usage",
    "field_docs",
    "config_text",
    "MAX_NUMBER",
]
