"""PPO's evaluation during training, in a background process, and the learning-curve plot.

``BackgroundEval`` plays the duplicate evaluation (``tiengow.agents.arena.evaluate``, the same
as ``tiengow eval``) of a snapshot of the learner against each opponent in a spawned process
at a lower priority, so training goes on while it plays. At most one evaluation is in flight:
a new one is skipped while the last still plays (no backlog).

It can also measure how exploitable the snapshot is (``exploit_interval``, ``training/exploit.py``):
on a rule set small enough for the exact tree, the exact best response's gain against three
copies of it (a curve point ``{"exploit": "exact", "gain": ...}``); otherwise the duplicate gain
of an exploiter trained against it for ``exploit_minutes`` (``{"exploit": "learned", "gain",
"ci95"}``, a lower bound). Curve points of the evaluation have an ``opponent``; these do not.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing as mp
import os
import tempfile
from collections.abc import Callable
from typing import Any

from .ppo_checkpoints import save_checkpoint


def evaluate_snapshot(path: str, opponents: list[str], deals: int, seed: int, rules: Any,
                      exploit_minutes: float | None = None) -> list[dict]:
    """Runs in the evaluation process: duplicate chips per hand of ``ppo:path`` against each
    opponent and, with ``exploit_minutes``, its exploitability (module docstring); the snapshot
    file is removed afterwards."""
    try:
        os.nice(5)  # let training have the cores first
    except OSError:
        pass
    import torch
    torch.set_num_threads(1)
    from tiengow.agents.arena import evaluate
    results = []
    for opponent in opponents:
        result = evaluate(f"ppo:{path}", opponent, deals, seed=seed, rules=rules, workers=1)
        results.append({"opponent": opponent, "chips_per_hand": result.chips_per_hand, "ci95": result.ci95})
    if exploit_minutes is not None:
        # Imported here: exploit.py trains with ppo.py, which imports this module.
        from .exploit import exact_gain, has_exact_tree, run_exploit
        if has_exact_tree(rules):
            results.append({"exploit": "exact", "gain": exact_gain(f"ppo:{path}", rules)["exact_gain"]})
        else:
            with tempfile.TemporaryDirectory(prefix="ppo-exploit-") as folder:
                report = run_exploit(f"ppo:{path}", rules, minutes=exploit_minutes, seed=seed, out=folder,
                                     deals=deals, curve=False, notice=lambda text: None)
            results.append({"exploit": "learned", "gain": report["gain"], "ci95": report["ci95"]})
    os.unlink(path)
    return results


class BackgroundEval:
    """Duplicate evaluations of snapshots in one spawned worker process (module docstring)."""

    def __init__(self, opponents: list[str], deals: int, seed: int, rules: Any, notice: Callable[[str], None],
                 exploit_minutes: float = 2.0):
        self.opponents, self.deals, self.seed, self.rules, self.notice = list(opponents), deals, seed, rules, notice
        self.exploit_minutes = exploit_minutes
        self.executor = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
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
        future = self.executor.submit(evaluate_snapshot, path, self.opponents if evaluate else [], self.deals,
                                      self.seed, self.rules, self.exploit_minutes if exploit else None)
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


__all__ = ["BackgroundEval", "evaluate_snapshot", "plot_curve", "time_to_strength"]
