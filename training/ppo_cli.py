"""Command-line parser and handler for ``tiengow train ppo``.

Wiring (``tiengow/cli.py``): ``add_train_ppo_parser(train_subparsers)`` adds ``ppo`` under
``tiengow train``. The parser sets ``handler`` = ``cmd_train_ppo`` (``(args) -> exit status``); it raises
ValueError with a message for people.

    tiengow train ppo --config configs/ppo.yaml [--set lr=1e-4 --set num_envs=512 ...]
                      [--resume runs/ppo/ppo.pt] [--out PATH] [--json]
                      [--ray [ADDRESS] --rollout-workers K]
"""
from __future__ import annotations

import argparse
import json
import time


def add_train_ppo_parser(train_subparsers: argparse._SubParsersAction) -> None:
    p = train_subparsers.add_parser("ppo", help="PPO self-play with an opponent pool (configs/ppo.yaml)")
    p.add_argument("--config", help="YAML config (training.ppo.PpoConfig): a file, or a shipped name (ppo); "
                                     "default: the built-in defaults")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a config field (repeatable), e.g. --set lr=1e-4 --set num_envs=512")
    p.add_argument("--resume", metavar="CHECKPOINT", help="continue a run exactly from its checkpoint")
    p.add_argument("--out", help="checkpoint path (same as --set out=PATH)")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="collect rollouts with Ray actors: on a local Ray instance, or on the cluster at ADDRESS")
    p.add_argument("--rollout-workers", type=int, default=None, metavar="K",
                   help="Ray rollout workers (actors), each with its own share of num_envs (with --ray; default 2)")
    p.set_defaults(handler=cmd_train_ppo)


def cmd_train_ppo(args: argparse.Namespace) -> int:
    """Train with a live progress bar (env steps, steps/s, chips against the pool, last eval)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from .ppo import PpoConfig, train
    if args.rollout_workers is not None and args.ray is None:
        raise ValueError("--rollout-workers needs --ray (local training collects in one thread)")
    workers = 2 if args.rollout_workers is None else args.rollout_workers
    overrides = list(args.set) + ([f"out={args.out}"] if args.out else [])
    config = PpoConfig.from_file(args.config, overrides)
    console = Console(stderr=True)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TimeRemainingColumn(), console=console)
    task = progress.add_task("ppo", total=config.total_steps)
    window: list[tuple[float, int]] = []
    printed = [time.perf_counter()]  # without a terminal (a log file), a plain line every 30 s

    def advance(steps: int, point: dict) -> None:
        now = time.perf_counter()
        window.append((now, steps))
        del window[:-20]
        rate = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0]) if len(window) > 1 \
            else point["steps_per_second"]
        chips = f"  pool {point['episode_chips']:+.2f}" if "episode_chips" in point else ""
        description = (f"ppo {rate:,.0f} steps/s  {point['hands_per_second']:,.0f} hands/s{chips}  "
                       f"ent {point['entropy']:.2f}")
        progress.update(task, completed=steps, description=description)
        if not console.is_terminal and now - printed[0] >= 30:
            printed[0] = now
            console.print(f"{steps:,}/{config.total_steps:,} env steps  {description}")

    with progress:
        summary = train(config, resume=args.resume, progress=advance, notice=lambda text: console.print(text),
                        ray_address=args.ray, rollout_workers=workers)
    if args.json:
        print(json.dumps({k: v for k, v in summary.items() if k != "curve"}))
        return 0
    print(f"wrote {summary['out']}: {summary['update']} updates, {summary['global_step']:,} env steps, "
          f"{summary['elapsed'] / 60:.1f} min of training, {summary['steps_per_second']:,.0f} env steps/s "
          "in this session")
    for point in summary["curve"][-len(config.eval_opponents):]:
        print(f"  last eval: {point['chips_per_hand']:+.3f} chips/hand vs {point['opponent']} "
              f"(95% CI [{point['ci95'][0]:+.3f}, {point['ci95'][1]:+.3f}])")
    return 0


__all__ = ["add_train_ppo_parser", "cmd_train_ppo"]
