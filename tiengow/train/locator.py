"""``tiengow train locator`` (``tiengow.training.locator``).

    tiengow train locator --config locator [--set hands=2000 --set teacher=search ...]
                          [--out PATH] [--json]
    tiengow train locator --resume runs/train-locator/<timestamp>/locator.pt.partial

The checkpoint goes to ``runs/train-locator/<timestamp>/locator.pt`` unless ``--out`` (or
``--set out=PATH``) says otherwise; the last lines say where it went and how to play with it.
"""

from __future__ import annotations

import argparse

from tiengow.agents.infra import json_text

from .common import PlainProgress, add_resumable_trainer, read_partial_config


def add_parser(train_subparsers: argparse._SubParsersAction) -> None:
    """Add ``locator`` under ``tiengow train``."""
    add_resumable_trainer(
        train_subparsers,
        "locator",
        "the tile locator: learn where the hidden tiles lie from hands of search (configs/locator.yaml)",
        "training.locator.LocatorConfig",
        "--set hands=200 --set epochs=1",
        "locator.pt",
        cmd_train_locator,
    )


def cmd_train_locator(args: argparse.Namespace) -> int:
    """Play and fit with plain progress lines on stderr; print where the checkpoint went."""
    from tiengow.training.locator import LocatorConfig, train_locator

    config, resume = read_partial_config(LocatorConfig, args)
    show = PlainProgress("locator")

    def progress(stage: str, count: int, gain: float) -> None:
        if stage == "play":
            show(f"{count:,}/{config.hands:,} hands played by {config.teacher}", last=count >= config.hands)
        else:
            show(f"step {count:,}, held-out gain over the uniform deal {gain:+.4f} nats a hidden tile", last=True)

    summary = train_locator(config, progress=progress, resume=resume)
    if args.json:
        print(json_text(summary))
        return 0
    print(
        f"wrote {summary['out']}: {summary['states']:,} information states of {summary['hands']:,} hands, played "
        f"in {summary['play_seconds'] / 60:.1f} min, fitted in {summary['fit_seconds'] / 60:.1f} min"
    )
    print(
        f"  held-out loss ({summary['held_out']:,} states): {summary['held_out_nats']:.4f} nats a hidden tile, "
        f"the uniform deal {summary['uniform_nats']:.4f} (gain {summary['gain_nats']:+.4f})"
    )
    print(f"  search with it: tiengow eval champion:locator={summary['out']} --vs search")
    return 0
