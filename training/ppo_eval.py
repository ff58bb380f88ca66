"""PPO's evaluation during training, in a background process, and the learning-curve plot.

``BackgroundEval`` plays the duplicate evaluation (``tiengow.agents.arena.evaluate``, the same
as ``tiengow eval``) of a snapshot of the learner against each opponent in a spawned process
at a lower priority, so training goes on while it plays. At most one evaluation is in flight:
a new one is skipped while the last still plays (no backlog).

It can also measure how exploitable the snapshot is (``exploit_interval``), with the function
the run is given (``exploit.snapshot_exploitability``, passed in rather than imported: the
exploiter it trains is itself a PPO run): a curve point ``{"exploit": "exact" or "learned",
"gain", ...}``. Curve points of the evaluation have an ``opponent``; these do not.

The evaluation process ignores SIGINT (a Ctrl-C at the terminal reaches every process of the
group): the trainer decides what a signal means (``interrupt.py``) and ends the process itself.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing as mp
import os
import signal
import tempfile
from collections.abc import Callable
from typing import Any

from .ppo_checkpoints import save_checkpoint


def _evaluation_process() -> None:
    """The evaluation process's start: a lower priority, and Ctrl-C left to the trainer."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.nice(5)  # let training have the cores first
    except OSError:
        pass


def evaluate_snapshot(
    path: str,
    opponents: list[str],
    deals: int,
    seed: int,
    rules: Any,
    exploit_minutes: float | None = None,
    exploitability: Callable | None = None,
) -> list[dict]:
    """Runs in the evaluation process: duplicate chips per hand of ``ppo:path`` against each
    opponent and, with ``exploit_minutes``, ``exploitability(spec, rules, minutes, seed, deals)``
    (module docstring); the snapshot file is removed afterwards."""
    import torch

    torch.set_num_threads(1)
    from tiengow.agents.arena import evaluate

    results = []
    for opponent in opponents:
        result = evaluate(f"ppo:{path}", opponent, deals, seed=seed, rules=rules, workers=1)
        results.append({"opponent": opponent, "chips_per_hand": result.chips_per_hand, "ci95": result.ci95})
    if exploit_minutes is not None and exploitability is not None:
        results.append(exploitability(f"ppo:{path}", rules, exploit_minutes, seed, deals))
    os.unlink(path)
    return results


class BackgroundEval:
    """Duplicate evaluations of snapshots in one spawned worker process (module docstring)."""

    def __init__(
        self,
        opponents: list[str],
        deals: int,
        seed: int,
        rules: Any,
        notice: Callable[[str], None],
        exploit_minutes: float = 2.0,
        exploitability: Callable | None = None,
    ):
        self.opponents, self.deals, self.seed, self.rules, self.notice = list(opponents), deals, seed, rules, notice
        self.exploit_minutes, self.exploitability = exploit_minutes, exploitability
        self.executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=1, mp_context=mp.get_context("spawn"), initializer=_evaluation_process
        )
        self.futures: list[tuple[concurrent.futures.Future, int, float]] = []

    @property
    def busy(self) -> bool:
        """An evaluation is in flight (or done and not yet collected)."""
        return bool(self.futures)

    def submit(self, payload: dict, step: int, seconds: float, evaluate: bool = True, exploit: bool = False) -> None:
        """Evaluate the policy of ``payload`` (a checkpoint's ``config`` and ``model``), reached at
        ``step`` env steps after ``seconds`` of training: against the opponents (``evaluate``), and
        how exploitable it is (``exploit``)."""
        fd, path = tempfile.mkstemp(prefix="ppo-eval-", suffix=".pt")
        os.close(fd)
        save_checkpoint(path, payload)
        future = self.executor.submit(
            evaluate_snapshot,
            path,
            self.opponents if evaluate else [],
            self.deals,
            self.seed,
            self.rules,
            self.exploit_minutes if exploit else None,
            self.exploitability,
        )
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
        """Stop: an evaluation still playing is ended (a finished run has collected them all)."""
        for process in list(getattr(self.executor, "_processes", {}).values()):
            process.terminate()  # else the interpreter's exit would wait for it
        self.executor.shutdown(wait=False, cancel_futures=True)


def time_to_strength(curve: list[dict]) -> dict[str, dict | None]:
    """For each evaluated opponent, the first evaluation whose whole 95% CI is above zero, as
    ``{"minutes", "step"}`` of training at its snapshot; ``None`` if no evaluation of the run got
    there."""
    first: dict[str, dict | None] = {}
    for point in sorted((p for p in curve if "opponent" in p), key=lambda p: p["step"]):
        first.setdefault(point["opponent"], None)
        if first[point["opponent"]] is None and point["ci95"][0] > 0:
            first[point["opponent"]] = {"minutes": round(point["seconds"] / 60, 2), "step": point["step"]}
    return first


def machine() -> str:
    """What the minutes of a curve were measured on: this machine's logical CPUs (the curve is
    plotted where it was trained)."""
    return f"{os.cpu_count() or 1} logical CPUs"


def plot_curve(curve: list[dict], path: str, title: str = "PPO learning curve") -> None:
    """Write the evaluations of a run (``curve.json``, or a checkpoint's ``curve``) as a PNG: duplicate
    chips per hand against each opponent, with the 95% CI, over the minutes of training."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    curve = [point for point in curve if "opponent" in point]  # exploitability points have none
    for opponent in sorted({point["opponent"] for point in curve}):
        points = sorted((p for p in curve if p["opponent"] == opponent), key=lambda p: p["step"])
        minutes = [p["seconds"] / 60 for p in points]
        ax.plot(minutes, [p["chips_per_hand"] for p in points], marker="o", ms=3, label=f"vs {opponent}")
        ax.fill_between(minutes, [p["ci95"][0] for p in points], [p["ci95"][1] for p in points], alpha=0.2)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel(f"minutes of training ({machine()})")
    ax.set_ylabel("duplicate chips per hand (95% CI)")
    steps = max((p["step"] for p in curve), default=0)
    ax.set_title(f"{title}: {steps / 1e6:.0f}M env steps")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = ["BackgroundEval", "evaluate_snapshot", "plot_curve", "time_to_strength"]
