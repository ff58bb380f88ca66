"""What the training commands share, once: the config options (``--config``, ``--set
NAME=VALUE``, ``--out``, ``--json``) and how they become a config (``config_overrides``), the
parser and resume of the trainers that play hands and then fit, Ray's options, and the plain
progress lines of a log file."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from tiengow.options import MAX_WORKERS, int_option

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


def add_resumable_trainer(
    train_subparsers: argparse._SubParsersAction,
    name: str,
    help_text: str,
    config_class: str,
    example: str,
    output: str,
    handler: Callable[[argparse.Namespace], int],
) -> None:
    """``tiengow train NAME`` of a trainer that plays hands in workers, then fits (distill,
    locator): the config options (the shipped config NAME, the checkpoint ``output`` in a new run
    folder by default) and ``--resume PARTIAL`` (read by ``read_partial_config``)."""
    p = train_subparsers.add_parser(name, help=help_text)
    add_config_options(p, config_class, name, example, f"runs/train-{name}/<timestamp>/{output}")
    p.add_argument(
        "--resume",
        metavar="PARTIAL",
        help="go on with a run stopped by Ctrl-C or SIGTERM, from the OUT.partial file it wrote, with "
        "the settings it stores (--set may change those of the fit)",
    )
    p.set_defaults(handler=handler)


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


def add_ray_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--ray [ADDRESS]`` and ``--rollout-workers K`` of the commands that train PPO (read by ``ray_collection``)."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help=f"collect {what} with Ray actors: on a local Ray instance, or on the cluster at ADDRESS",
    )
    parser.add_argument(
        "--rollout-workers",
        type=int_option(1, MAX_WORKERS),
        default=None,
        metavar="K",
        help="Ray rollout workers (actors), each with its own share of num_envs (with --ray; default 2)",
    )


def ray_collection(args: argparse.Namespace) -> Any:
    """The ``ppo_runner.RayCollection`` of ``--ray`` and ``--rollout-workers``, or None without ``--ray``."""
    if args.ray is None:
        if args.rollout_workers is not None:
            raise ValueError("--rollout-workers needs --ray (local training collects in one thread)")
        return None
    from tiengow.training.ppo_runner import RayCollection

    return RayCollection(args.ray, 2 if args.rollout_workers is None else args.rollout_workers)
