"""Reading training configs: one YAML mapping of settings into a config dataclass
(``TrainerConfig``, the base of the trainers' configs).

``--config`` takes a file path or the name of a config shipped inside the package
(``tiengow.configs``: ``ppo``, ``cfr``, ``cfr_micro``), so that ``tiengow train cfr --config
cfr_micro`` works from any folder, editable install or wheel. A path that exists wins over a
shipped name.
"""

from __future__ import annotations

import dataclasses
import math
import os
from importlib import resources
from typing import Any, TypeVar

from tiengow_env.checks import load_yaml, read_small_file
from tiengow_env.rules import parse_error_text

Config = TypeVar("Config")
SHIPPED = "tiengow.configs"


def shipped_configs() -> list[str]:
    """Names of the configs shipped in the package (``tiengow.configs``), sorted."""
    return sorted(entry.name[:-5] for entry in resources.files(SHIPPED).iterdir() if entry.name.endswith(".yaml"))


def config_text(spec: str) -> tuple[str, str]:
    """(text, where) of a config given as a path or a shipped name (module doc); ValueError
    listing the shipped names when it is neither."""
    name = spec[:-5] if spec.endswith(".yaml") else spec
    if os.path.exists(spec) and not (os.path.isdir(spec) and name in shipped_configs()):  # a folder ppo/ is no config
        raw = read_small_file(spec, f"config {spec}")
        try:
            return raw.decode("utf-8"), spec
        except UnicodeDecodeError as err:
            raise ValueError(
                f"config {spec} is not a text (UTF-8) file: byte {err.start} is "
                f"{err.object[err.start : err.start + 1]!r}"
            ) from None
    name = spec[:-5] if spec.endswith(".yaml") else spec
    if name in shipped_configs():
        return resources.files(SHIPPED).joinpath(name + ".yaml").read_text(encoding="utf-8"), f"{name} (shipped)"
    raise ValueError(
        f"config {spec!r} is neither a file nor a shipped config; shipped configs: {', '.join(shipped_configs())}"
    )


def read_settings(spec: str) -> dict[str, Any]:
    """The mapping of settings in a YAML (or JSON) config, given as a path or a shipped name;
    ValueError naming the config and the problem."""
    text, where = config_text(spec)
    try:
        data = load_yaml(text)
    except Exception as err:  # yaml raises its own error types; all mean a malformed file
        raise ValueError(f"config {where} is not valid YAML: {parse_error_text(err)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"config {where} must be a mapping of settings, got {type(data).__name__}")
    return data


def build(cls: type[Config], data: dict[str, Any]) -> Config:
    """``cls(**data)`` after refusing unknown settings, then ``validate()``."""
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(names))
    if len(unknown) > 1 and 2 * len(unknown) > len(data):
        raise ValueError(
            f"{len(unknown)} of its {len(data)} settings are not this trainer's ({', '.join(unknown[:4])}"
            f"{', ...' * (len(unknown) > 4)}): a config for another trainer? This one's settings are: "
            f"{', '.join(names)}"
        )
    if unknown:
        raise ValueError(f"unknown setting {unknown[0]!r}; settings are: {', '.join(names)}")
    config = cls(**data)
    config.validate()
    return config


def check_ranges(config: object, integers: tuple, numbers: tuple, positive: set[str]) -> None:
    """ValueError on the first setting of ``config`` out of its range: ``integers`` (name, low,
    high) are whole numbers; ``numbers`` (name, low, high, whether null is allowed) are finite
    numbers, above ``low`` for a name in ``positive``."""
    for name, low, high in integers:
        value = getattr(config, name)
        if type(value) is not int or not low <= value <= high:
            raise ValueError(f"{name} must be a whole number from {low} to {high:,}, got {value!r}")
    for name, low, high, optional in numbers:
        value = getattr(config, name)
        if value is None and optional:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not low <= value <= high
            or (value == low and name in positive)
        ):
            bound = f"> {low}" if name in positive else f">= {low}"
            wanted = f"a finite number {bound}" if high == math.inf else f"a number from {low} to {high}"
            raise ValueError(f"{name} must be {wanted}{' or null' * optional}, got {value!r}")


def check_agent_specs(name: str, specs: object, rules: object) -> None:
    """ValueError unless the setting ``name`` is a list of agent specs that build under ``rules``
    (checked with the config, not at the first evaluation)."""
    from tiengow.agents.base import make_agent

    if not isinstance(specs, list) or not all(isinstance(spec, str) for spec in specs):
        raise ValueError(f"{name} must be a list of agent specs, as in [greedy, expert], got {specs!r}")
    for spec in specs:
        try:
            make_agent(spec, rules)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None


def parse_overrides(items: list[str]) -> dict:
    """``["lr=1e-4", "pool_weights={greedy: 1}"]`` -> ``{"lr": 0.0001, ...}`` (values read as YAML)."""
    out = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set takes name=value, as in --set lr=1e-4; got {item!r}")
        try:
            value = load_yaml(text)
        except Exception as err:  # yaml's own error types
            raise ValueError(f"--set {item!r}: the value is not valid YAML ({parse_error_text(err)})") from None
        out[name.strip()] = value  # a name given twice: the later wins, as later options do
    return out


def read_config(cls: type[Config], path: str | None, overrides: list[str] | None = None) -> Config:
    """A config dataclass from a YAML config (a path or a shipped name; None: the defaults) with
    ``name=value`` overrides (``--set``) on top; ValueError naming the config and the problem."""
    data = read_settings(path) if path is not None else {}
    data.update(parse_overrides(overrides or []))
    try:
        return build(cls, data)
    except ValueError as err:
        raise ValueError(f"config {path or '(defaults)'}: {err}") from None


class TrainerConfig:
    """What the trainers' config dataclasses share (ppo, distill, locator): read from a YAML config
    and ``--set`` overrides, built from a dict, written as one. Each gives its own ``validate()``
    (``build`` calls it): ValueError on the first setting out of range."""

    @classmethod
    def from_file(cls: type[Config], path: str | None, overrides: list[str] | None = None) -> Config:
        """A YAML config (a path or a shipped name; None: the defaults) with ``name=value``
        overrides (values in YAML syntax) on top; ValueError naming the config and the problem."""
        return read_config(cls, path, overrides)

    @classmethod
    def from_dict(cls: type[Config], data: dict) -> Config:
        """``cls(**data)``, refusing unknown settings, validated."""
        return build(cls, data)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
