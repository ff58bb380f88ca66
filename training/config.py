"""Reading training configs: one YAML mapping of settings into a config dataclass."""
from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from tiengow_env.rules import parse_error_text

Config = TypeVar("Config")


def read_settings(path: str) -> dict[str, Any]:
    """The mapping of settings in a YAML (or JSON) file; ValueError naming the file and the problem."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise ValueError(f"cannot read config {path}: {err.strerror}") from None
    try:
        import yaml
        data = yaml.safe_load(text)
    except Exception as err:  # yaml raises its own error types; all mean a malformed file
        raise ValueError(f"config {path} is not valid YAML: {parse_error_text(err)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"config {path} must be a mapping of settings, got {type(data).__name__}")
    return data


def build(cls: type[Config], data: dict[str, Any]) -> Config:
    """``cls(**data)`` after refusing unknown settings, then ``validate()``."""
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ValueError(f"unknown setting {unknown[0]!r}; settings are: {', '.join(names)}")
    config = cls(**data)
    config.validate()
    return config
