"""Command-line parser and handler for ``tiengow train distill`` (``training/distill.py``).

    tiengow train distill --config distill [--set teacher=champion:1500 --set hands=11500 ...]
                          [--out PATH] [--json]

The checkpoint goes to ``runs/train-distill/<timestamp>/distilled.pt`` unless ``--out`` (or
``--set out=PATH``) says otherwise; the last lines say where it went and how to play it.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

from tiengow.agents.infra import json_text

PLAIN_INTERVAL = 30.0  # seconds between progress lines


def add_train_distill_parser(train_subparsers: argparse._SubParsersAction) -> None:
    p = train_subparsers.add_parser("distill", help="expert iteration: distil a search bot's choices into a PPO "
                                                    "network (configs/distill.yaml)")
    p.add_argument("--config", help="YAML config (training.distill.DistillConfig): a file, or a shipped name "
                                    "(distill); default: the built-in defaults")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a config field (repeatable), e.g. --set hands=200 --set teacher=search")
    p.add_argument("--out", help="checkpoint path (same as --set out=PATH); default: "
                                 "runs/train-distill/<timestamp>/distilled.pt")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON (default: a text summary)")
    p.set_defaults(handler=cmd_train_distill)


def cmd_train_distill(args: argparse.Namespace) -> int:
    from .distill import DistillConfig, distill
    out = [f"out={json.dumps(args.out)}"] if args.out else []  # a path as it is, not read as YAML
    config = DistillConfig.from_file(args.config, list(args.set) + out)
    start = time.perf_counter()
    last = [-PLAIN_INTERVAL]

    def progress(stage: str, count: int, agreement: float) -> None:
        now = time.perf_counter() - start
        if stage == "label" and now - last[0] < PLAIN_INTERVAL and count < config.hands:
            return
        last[0] = now
        done = (f"{count:,}/{config.hands:,} hands labelled by {config.teacher}" if stage == "label"
                else f"epoch {count}/{config.epochs}" if math.isnan(agreement)
                else f"epoch {count}/{config.epochs}, agreement with the teacher on held-out decisions {agreement:.1%}")
        print(f"distill: {done}, {now / 60:.1f} min", file=sys.stderr, flush=True)

    summary = distill(config, progress=progress)
    if args.json:
        print(json_text(summary))
        return 0
    print(f"wrote {summary['out']}: {summary['decisions']:,} decisions of {summary['hands']:,} hands, labelled in "
          f"{summary['label_seconds'] / 60:.1f} min, fitted in {summary['fit_seconds'] / 60:.1f} min")
    if summary["held_out"]:
        print(f"  agreement with {config.teacher} on {summary['held_out']:,} held-out decisions: "
              f"{summary['agreement_before']:.1%} before, {summary['agreement_after']:.1%} after")
    else:
        print(f"  no decisions held out (validation={config.validation:g} of {summary['decisions']:,} decisions): "
              "agreement with the teacher not measured")
    print(f"  play it: tiengow eval ppo:{summary['out']} --vs ppo; search with it: "
          f"tiengow eval champion:prior={summary['out']} --vs search")
    return 0


__all__ = ["add_train_distill_parser", "cmd_train_distill"]
