"""Checks of values that come from outside, shared by the rules, the game and the envs.

Messages about hostile input stay one short line: ``short_repr`` cuts a huge or deeply
nested value. Everything here runs before play, never inside the compiled loops.
"""

from __future__ import annotations

import functools
import json
import math
import numbers
import os
import reprlib
import stat
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# Chips are int64 in the core: RULES.md section 8 bounds every payment and seat total of a
# hand (RuleSet.payment_bound), and rules or a streak that could pass this are refused.
INT64_MAX = 2**63 - 1

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 40, 40, 40


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters and three levels of nesting."""
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001  (a hostile __repr__, or an int of more than 4300 digits)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


MAX_LISTED_ACTIONS = 40  # an illegal-action message names at most this many legal actions


def legal_list(legal: Sequence[int] | np.ndarray, name: Callable[[int], str] | None) -> str:
    """The legal action ids, with ``name(id)`` each unless ``name`` is None, for an error
    message: the first ``MAX_LISTED_ACTIONS`` and how many more (a lead can have over a hundred)."""
    shown = ", ".join(f"{a} ({name(int(a))})" if name else str(int(a)) for a in legal[:MAX_LISTED_ACTIONS])
    more = len(legal) - MAX_LISTED_ACTIONS
    return shown + (f", and {more} more (legal_actions() lists them all)" if more > 0 else "")


def is_integer(value: object) -> bool:
    """A Python or numpy integer, and not a bool (bool is a subclass of int)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_number(value: object, what: str) -> float:
    """A finite real number (a Python or numpy int or float, not a bool) as a float; ValueError
    naming ``what`` otherwise."""
    try:
        finite = (
            isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and math.isfinite(float(value))
        )
    except OverflowError:  # an int beyond the floats
        finite = False
    if not finite:
        raise ValueError(f"{what} must be a finite number, got {type(value).__name__} {short_repr(value)}")
    return float(value)


def check_reward_scale(scale: object, most_chips: int, dtype: type) -> float:
    """``reward_scale`` as a float, once ``most_chips`` (the most an episode can pay, in chips)
    times it stays finite in the rewards' ``dtype``; ValueError otherwise."""
    scale = check_number(scale, "reward_scale")
    if abs(scale) * most_chips > float(np.finfo(dtype).max):
        raise ValueError(
            f"reward_scale {scale:g} times the most an episode can pay ({most_chips:,} chips) "
            f"overflows the {np.dtype(dtype).name} rewards; expected at most "
            f"{float(np.finfo(dtype).max) / most_chips:.3g}"
        )
    return scale


def check_seed(seed: object) -> int:
    """A seed as an int: a non-negative integer (not a bool, a float or a string), or None for
    a fresh one from the operating system; the core's generator takes it modulo 2^64."""
    if seed is None:
        return int(np.random.SeedSequence().entropy) % 2**64
    if not is_integer(seed) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer (or None), got {type(seed).__name__} {short_repr(seed)}")
    return int(seed) % 2**64


def check_reset_options(options: object) -> None:
    """``reset(options=...)``: None or a dict. These envs read no option (the rules and the
    opponents are set when the env is made); a dict's keys are ignored, as PettingZoo's API test
    expects of every env."""
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict or None, got {type(options).__name__} {short_repr(options)}")


MAX_SMALL_FILE_BYTES = 2**20


def read_small_file(path: str, what: str) -> bytes:
    """The bytes of a small input file (a rules file, a config), read up to a limit, so that a
    device or an endless stream is refused at once; ValueError starting with ``what`` (the
    file as the message names it) when it cannot be read or is too large."""
    check_not_a_pipe(path, what)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SMALL_FILE_BYTES + 1)
    except OSError as err:
        raise ValueError(f"cannot read {what}: {err.strerror or err}") from None
    if len(raw) > MAX_SMALL_FILE_BYTES:
        raise ValueError(f"{what} is larger than {MAX_SMALL_FILE_BYTES >> 20} MB: too large to be one")
    return raw


def check_not_a_pipe(path: str, what: str) -> None:
    """ValueError when ``path`` is a named pipe (FIFO) or a socket: opening one waits for a writer."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the open that follows says why
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        raise ValueError(f"{what} is a pipe or a socket, not a file: reading it would wait for a writer")


class DuplicateKeyError(ValueError):
    """A JSON object or a YAML mapping that gives one key twice: which value was meant is unknown."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"the key {short_repr(key)} appears twice in one object")
        out[key] = value
    return out


def load_json(text: str | bytes) -> Any:
    """``json.loads`` that refuses an object giving a key twice (``DuplicateKeyError``) instead
    of keeping the last value, as every input of the project is read."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def load_yaml(text: str | bytes) -> Any:
    """``yaml.safe_load`` that refuses a mapping giving a key twice (a ``yaml`` error with the
    line and column of the second) instead of keeping the last value."""
    import yaml

    return yaml.load(text, Loader=_unique_keys_loader())


@functools.cache
def _unique_keys_loader() -> type:
    import re

    import yaml
    from yaml.constructor import ConstructorError

    class UniqueKeysLoader(yaml.SafeLoader):  # and reads 1e-4 as a number, as YAML 1.2 and people do
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                seen = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *base": its keys may be overridden
                        continue
                    key = self.construct_object(key_node, deep=True)
                    try:
                        duplicate = key in seen
                    except TypeError:  # an unhashable key: SafeLoader says so itself
                        continue
                    if duplicate:
                        raise ConstructorError(
                            "while reading a mapping",
                            node.start_mark,
                            f"the key {short_repr(key)} appears twice",
                            key_node.start_mark,
                        )
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)

    # YAML 1.1 (PyYAML) reads a float only with a dot and a signed exponent: 1e-4 and 2.5e3 were text
    UniqueKeysLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+$"), list("-+0123456789")
    )
    return UniqueKeysLoader
