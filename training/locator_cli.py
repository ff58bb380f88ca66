"""Command-line parser and handler for ``tiengow train locator`` (``training/locator.py``).

    tiengow train locator --config locator [--set hands=2400 --set teacher=search ...]
                          [--out PATH] [--json]

The checkpoint goes to ``runs/train-locator/<timestamp>/locator.pt`` unless ``--out`` (or
``--set out=PATH``) says otherwise; the last lines say where it went and how to play with it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from tiengow.agents.infra import json_text

PLAIN_INTERVAL = 30.0  # seconds between progress lines


def add_train_locator_parser(train_subparsers: argparse._SubParsersAction) -> None:
    p = train_subparsers.add_parser("locator", help="the tile locator: learn where the hidden tiles lie from hands "
                                                    "of search (configs/locator.yaml)")
    p.add_argument("--config", help="YAML config (training.locator.LocatorConfig): a file, or a shipped name "
                                    "(locator); default: the built-in defaults")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a config field (repeatable), e.g. --set hands=200 --set epochs=1")
    p.add_argument("--out", help="checkpoint path (same as --set out=PATH); default: "
                                 "runs/train-locator/<timestamp>/locator.pt")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON (default: a text summary)")
    p.set_defaults(handler=cmd_train_locator)


def cmd_train_locator(args: argparse.Namespace) -> int:
    from .locator import LocatorConfig, train_locator
    out = [f"out={json.dumps(args.out)}"] if args.out else []  # a path as it is, not read as YAML
    config = LocatorConfig.from_file(args.config, list(args.set) + out)
    start = time.perf_counter()
    last = [-PLAIN_INTERVAL]

    def progress(stage: str, count: int, gain: float) -> None:
        now = time.perf_counter() - start
        if stage == "play" and now - last[0] < PLAIN_INTERVAL and count < config.hands:
            return
        last[0] = now
        done = (f"{count:,}/{config.hands:,} hands played by {config.teacher}" if stage == "play"
                else f"step {count:,}, held-out gain over the uniform deal {gain:+.4f} nats a hidden tile")
        print(f"locator: {done}, {now / 60:.1f} min", file=sys.stderr, flush=True)

    summary = train_locator(config, progress=progress)
    if args.json:
        print(json_text(summary))
        return 0
    print(f"wrote {summary['out']}: {summary['states']:,} information states of {summary['hands']:,} hands, played "
          f"in {summary['play_seconds'] / 60:.1f} min, fitted in {summary['fit_seconds'] / 60:.1f} min")
    print(f"  held-out loss ({summary['held_out']:,} states): {summary['held_out_nats']:.4f} nats a hidden tile, "
          f"the uniform deal {summary['uniform_nats']:.4f} (gain {summary['gain_nats']:+.4f})")
    print(f"  search with it: tiengow eval champion:locator={summary['out']} --vs search")
    return 0


__all__ = ["add_train_locator_parser", "cmd_train_locator"]
