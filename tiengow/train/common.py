"""What the training commands share, once: the config options (``--config``, ``--set
NAME=VALUE``, ``--out``, ``--json``) and how they become a config (``config_overrides``), the
resume of a partial run, and the plain progress lines of a log file."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

PLAIN_INTERVAL = 30.0  # seconds between progress lines in a log file


def add_config_options(
    parser: argparse.ArgumentParser, config_class: str, shipped: str, example: str, out_default: str
) -> None:
    """``--config``, ``--set NAME=VALUE`` (repeatable), ``--out`` and ``--json``: the options every
    trainer with a YAML config takes (read by ``config_overrides``)."""
    parser.add_argument(
        "--config",
        help=f"YAML config ({config_class}): a file, or a shipped name ({shipped}); default: the built-in defaults",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"override a config field (repeatable), e.g. {example}",
    )
    parser.add_argument("--out", help=f"checkpoint path (same as --set out=PATH); default: {out_default}")
    parser.add_argument("--json", action="store_true", help="print the run summary as JSON (default: a text summary)")


def config_overrides(args: argparse.Namespace) -> list[str]:
    """The ``--set`` items, then ``--out`` as ``out=PATH`` (the path as it is, not read as YAML)."""
    return list(args.set) + ([f"out={json.dumps(args.out)}"] if args.out else [])


def add_partial_resume(parser: argparse.ArgumentParser) -> None:
    """``--resume PARTIAL`` of the trainers that keep a stopped run's hands (distill, locator)."""
    parser.add_argument(
        "--resume",
        metavar="PARTIAL",
        help="go on with a run stopped by Ctrl-C or SIGTERM, from the OUT.partial file it wrote, with "
        "the settings it stores (--set may change those of the fit)",
    )


def read_partial_config(config_class: Any, args: argparse.Namespace) -> tuple[Any, Any]:
    """(config, the stopped run's work or None) from ``--config``/``--set``/``--out``, or from
    ``--resume PARTIAL`` (``config_class.for_resume``) with ``--set`` on top."""
    if args.resume is None:
        return config_class.from_file(args.config, config_overrides(args)), None
    if args.config is not None:
        raise ValueError(
            "--resume takes the run's settings from the partial file; drop --config (--set may change "
            "the fit's settings)"
        )
    return config_class.for_resume(args.resume, config_overrides(args))


class PlainProgress:
    """Progress lines on stderr for a log file: the first, then one every PLAIN_INTERVAL seconds,
    and any line marked ``last``; each says the minutes since the start."""

    def __init__(self, prefix: str):
        self.prefix, self.start, self.printed = prefix, time.perf_counter(), -PLAIN_INTERVAL

    def __call__(self, text: str, last: bool = False) -> None:
        now = time.perf_counter() - self.start
        if last or now - self.printed >= PLAIN_INTERVAL:
            self.printed = now
            print(f"{self.prefix}: {text}, {now / 60:.1f} min", file=sys.stderr, flush=True)
