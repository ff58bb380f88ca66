"""PPO's evaluation during training, in a background process, and the learning-curve plot.

``BackgroundEval`` plays the duplicate evaluation (``tiengow.agents.arena.evaluate``, the same
as ``tiengow eval``) of a snapshot of the learner against each opponent in a spawned process
at a lower priority, so training goes on while it plays. At most one evaluation is in flight:
a new one is skipped while the last still plays (no backlog).
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing as mp
import os
import tempfile
from collections.abc import Callable
from typing import Any

from .ppo_checkpoints import save_checkpoint


def evaluate_snapshot(path: str, opponents: list[str], deals: int, seed: int, rules: Any) -> list[dict]:
    """Runs in the evaluation process: duplicate chips per hand of ``ppo:path`` against each
    opponent; the snapshot file is removed afterwards."""
    try:
        os.nice(5)  # let training have the cores first
    except OSError:
        pass
    import torch
    torch.set_num_threads(1)
    from tiengow.agents.arena import evaluate
    from tiengow.agents.ppo import register_ppo
    register_ppo()
    results = []
    for opponent in opponents:
        result = evaluate(f"ppo:{path}", opponent, deals, seed=seed, rules=rules, workers=1)
        results.append({"opponent": opponent, "chips_per_hand": result.chips_per_hand, "ci95": result.ci95})
    os.unlink(path)
    return results


class BackgroundEval:
    """Duplicate evaluations of snapshots in one spawned worker process (module docstring)."""

    def __init__(self, opponents: list[str], deals: int, seed: int, rules: Any, notice: Callable[[str], None]):
        self.opponents, self.deals, self.seed, self.rules, self.notice = list(opponents), deals, seed, rules, notice
        self.executor = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
        self.futures: list[tuple[concurrent.futures.Future, int, float]] = []

    @property
    def busy(self) -> bool:
        """An evaluation is in flight (or done and not yet collected)."""
        return bool(self.futures)

    def submit(self, payload: dict, step: int, seconds: float) -> None:
        """Evaluate the policy of ``payload`` (a checkpoint's ``config`` and ``model``), reached at
        ``step`` env steps after ``seconds`` of training."""
        fd, path = tempfile.mkstemp(prefix="ppo-eval-", suffix=".pt")
        os.close(fd)
        save_checkpoint(path, payload)
        future = self.executor.submit(evaluate_snapshot, path, self.opponents, self.deals, self.seed, self.rules)
        self.futures.append((future, step, seconds))

    def results(self, wait: bool) -> list[dict]:
        """The finished evaluations as curve points ``{step, seconds, opponent, chips_per_hand,
        ci95}`` (``wait``: wait for the one in flight). A failed evaluation is reported by
        ``notice`` and dropped: it must not stop training."""
        points = []
        for item in list(self.futures):
            future, step, seconds = item
            if not (wait or future.done()):
                continue
            self.futures.remove(item)
            try:
                results = future.result()
            except concurrent.futures.CancelledError:
                continue
            except Exception as err:
                self.notice(f"evaluation at step {step:,} failed: {err}")
                continue
            points += [{"step": step, "seconds": seconds, **r} for r in results]
        return points

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def plot_curve(curve: list[dict], path: str, title: str = "PPO learning curve") -> None:
    """Write the evaluations of a run (``curve.json``, or a checkpoint's ``curve``) as a PNG: duplicate
    chips per hand against each opponent, with the 95% CI, over the minutes of training."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for opponent in sorted({point["opponent"] for point in curve}):
        points = sorted((p for p in curve if p["opponent"] == opponent), key=lambda p: p["step"])
        minutes = [p["seconds"] / 60 for p in points]
        ax.plot(minutes, [p["chips_per_hand"] for p in points], marker="o", ms=3, label=f"vs {opponent}")
        ax.fill_between(minutes, [p["ci95"][0] for p in points], [p["ci95"][1] for p in points], alpha=0.2)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("minutes of training (2-core CPU, shared)")
    ax.set_ylabel("duplicate chips per hand (95% CI)")
    steps = max((p["step"] for p in curve), default=0)
    ax.set_title(f"{title}: {steps / 1e6:.0f}M env steps")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = ["BackgroundEval", "evaluate_snapshot", "plot_curve"]
