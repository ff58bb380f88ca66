"""``tiengow train distill`` (``tiengow.training.distill``).

    tiengow train distill --config distill [--set teacher=champion:1500 --set hands=11500 ...]
                          [--out PATH] [--json]
    tiengow train distill --resume runs/train-distill/<timestamp>/distilled.pt.partial

The checkpoint goes to ``runs/train-distill/<timestamp>/distilled.pt`` unless ``--out`` (or
``--set out=PATH``) says otherwise; the last lines say where it went and how to play it.
"""

from __future__ import annotations

import argparse
import math

from tiengow.agents.infra import json_text

from .common import PlainProgress, add_resumable_trainer, read_partial_config


def add_parser(train_subparsers: argparse._SubParsersAction) -> None:
    """Add ``distill`` under ``tiengow train``."""
    add_resumable_trainer(
        train_subparsers,
        "distill",
        "expert iteration: distil a search bot's choices into a PPO network (configs/distill.yaml)",
        "training.distill.DistillConfig",
        "--set hands=200 --set teacher=search",
        "distilled.pt",
        cmd_train_distill,
    )


def cmd_train_distill(args: argparse.Namespace) -> int:
    """Label and fit with plain progress lines on stderr; print where the checkpoint went."""
    from tiengow.training.distill import DistillConfig, distill

    config, resume = read_partial_config(DistillConfig, args)
    show = PlainProgress("distill")

    def progress(stage: str, count: int, agreement: float) -> None:
        if stage == "label":
            show(f"{count:,}/{config.hands:,} hands labelled by {config.teacher}", last=count >= config.hands)
        elif math.isnan(agreement):
            show(f"epoch {count}/{config.epochs}", last=True)
        else:
            show(
                f"epoch {count}/{config.epochs}, agreement with the teacher on held-out decisions {agreement:.1%}",
                last=True,
            )

    summary = distill(config, progress=progress, resume=resume)
    if args.json:
        print(json_text(summary))
        return 0
    print(
        f"wrote {summary['out']}: {summary['decisions']:,} decisions of {summary['hands']:,} hands, labelled in "
        f"{summary['label_seconds'] / 60:.1f} min, fitted in {summary['fit_seconds'] / 60:.1f} min"
    )
    if summary["held_out"]:
        print(
            f"  agreement with {config.teacher} on {summary['held_out']:,} held-out decisions: "
            f"{summary['agreement_before']:.1%} before, {summary['agreement_after']:.1%} after"
        )
    else:
        print(
            f"  no decisions held out (validation={config.validation:g} of {summary['decisions']:,} decisions): "
            "agreement with the teacher not measured"
        )
    print(
        f"  play it: tiengow eval ppo:{summary['out']} --vs ppo; search with it: "
        f"tiengow eval champion:prior={summary['out']} --vs search"
    )
    return 0
