"""``tiengow train ppo`` (``tiengow.training.ppo``, run by ``tiengow.training.ppo_runner``).

    tiengow train ppo --config configs/ppo.yaml [--set lr=1e-4 --set num_envs=512 ...]
                      [--out PATH] [--json] [--ray [ADDRESS] --rollout-workers K]
    tiengow train ppo --resume runs/train-ppo/<timestamp>/ppo.pt [--set max_seconds=600 ...]

Outputs default to a new folder ``runs/train-ppo/<timestamp>`` (checkpoint, TensorBoard events,
``curve.json`` and ``curve.png``); the last lines say where they went.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import time
from collections.abc import Callable

from tiengow.agents.infra import json_text

from .common import PLAIN_INTERVAL, add_config_options, add_ray_options, config_overrides, ray_collection


def add_parser(train_subparsers: argparse._SubParsersAction) -> None:
    """Add ``ppo`` under ``tiengow train``."""
    p = train_subparsers.add_parser("ppo", help="PPO self-play with an opponent pool (configs/ppo.yaml)")
    add_config_options(
        p,
        "training.ppo.PpoConfig",
        "ppo",
        "--set lr=1e-4 --set max_seconds=600 (max_seconds counts "
        "the training time of this run, a resumed one included)",
        "runs/train-ppo/<timestamp>/ppo.pt, or with --resume the checkpoint's own path",
    )
    p.add_argument(
        "--resume",
        metavar="CHECKPOINT",
        help="continue a run exactly from its checkpoint, with the config it stores (plus --set)",
    )
    add_ray_options(p, "rollouts")
    p.set_defaults(handler=cmd_train_ppo)


def cmd_train_ppo(args: argparse.Namespace) -> int:
    """Train with a live progress bar on a terminal, or plain periodic lines into a log file."""
    from rich.console import Console

    from tiengow.training.exploit import snapshot_exploitability
    from tiengow.training.ppo import PpoConfig
    from tiengow.training.ppo_eval import plot_curve, time_to_strength
    from tiengow.training.ppo_runner import train

    ray = ray_collection(args)
    overrides = config_overrides(args)
    if args.resume is not None and args.config is None:
        config = PpoConfig.for_resume(args.resume, overrides)
    else:
        config = PpoConfig.from_file(args.config, overrides)
    console = Console(stderr=True)
    plot = importlib.util.find_spec("matplotlib") is not None
    if not plot:
        print(
            "tiengow: the learning-curve PNG needs matplotlib (the train extra); curve.json will have the points",
            file=sys.stderr,
        )
    with _progress(console, config.updates * config.num_envs * config.rollout_steps) as advance:
        summary = train(
            config,
            resume=args.resume,
            progress=advance,
            notice=_notice(console),
            ray=ray,
            exploitability=snapshot_exploitability if config.exploit_interval else None,
        )
    png = None
    if plot and summary["log_dir"] and summary["curve"]:
        png = os.path.join(summary["log_dir"], "curve.png")
        plot_curve(summary["curve"], png)
    strength = time_to_strength(summary["curve"])
    if args.json:
        print(
            json_text(
                {**{k: v for k, v in summary.items() if k != "curve"}, "curve_png": png, "time_to_strength": strength}
            )
        )
        return 0
    print(
        f"wrote {summary['out']}: {summary['update']} updates, {summary['global_step']:,} env steps, "
        f"{summary['elapsed'] / 60:.1f} min of training, {summary['steps_per_second']:,.0f} env steps/s "
        "in this session"
    )
    if summary["log_dir"]:
        print(
            f"  TensorBoard: tensorboard --logdir {summary['log_dir']}; evaluations in "
            f"{os.path.join(summary['log_dir'], 'curve.json')}" + (f", plotted in {png}" if png else "")
        )
    for point in [p for p in summary["curve"] if "opponent" in p][-len(config.eval_opponents) :]:
        print(
            f"  last eval: {point['chips_per_hand']:+.3f} chips/hand vs {point['opponent']} "
            f"(95% CI [{point['ci95'][0]:+.3f}, {point['ci95'][1]:+.3f}])"
        )
    for opponent, first in strength.items():
        reached = (
            "no evaluation of this run had its CI above zero"
            if first is None
            else f"CI above zero from {first['minutes']:.1f} min of training ({first['step']:,} env steps)"
        )
        print(f"  time to strength vs {opponent}: {reached}")
    return 0


def _notice(console) -> Callable[[str], None]:
    """Notices: through rich on a terminal (above the bar), as plain lines otherwise."""
    if console.is_terminal:
        return lambda text: console.print(text, markup=False, highlight=False)
    return lambda text: print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _progress(console, total_steps: int):
    """A ``progress(steps, point)`` callback: a rich bar on a terminal; otherwise a plain line at the
    first update, then every PLAIN_INTERVAL seconds, and at the last."""
    window: list[tuple[float, int]] = []

    def describe(steps: int, point: dict) -> str:
        now = time.perf_counter()
        window.append((now, steps))
        del window[:-20]
        rate = (
            (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
            if len(window) > 1
            else point["steps_per_second"]
        )
        chips = f"  pool {point['episode_chips']:+.2f}" if "episode_chips" in point else ""
        return f"{rate:,.0f} steps/s  {point['hands_per_second']:,.0f} hands/s{chips}  ent {point['entropy']:.2f}"

    if console.is_terminal:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )
        task = progress.add_task("ppo", total=total_steps)
        with progress:
            yield lambda steps, point: progress.update(
                task, completed=steps, description="ppo " + describe(steps, point)
            )
        return
    last: list = [None, None]  # (time of the last line, the last line not yet printed)

    def advance(steps: int, point: dict) -> None:
        now = time.perf_counter()
        remaining = (
            f" ({point['remaining_seconds'] / 60:.1f} min left of max_seconds)" if "remaining_seconds" in point else ""
        )
        line = (
            f"ppo update {point['update']}: {steps:,}/{total_steps:,} env steps, "
            f"{point['elapsed'] / 60:.1f} min of training{remaining}, {describe(steps, point)}"
        )
        if last[0] is None or now - last[0] >= PLAIN_INTERVAL:
            print(line, file=sys.stderr, flush=True)
            last[:] = [now, None]
        else:
            last[1] = line

    yield advance
    if last[1] is not None:
        print(last[1], file=sys.stderr, flush=True)
