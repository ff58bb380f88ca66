"""CFR training runs (``tiengow train cfr --config cfr_micro``) and policy files.

Algorithms (``CfrConfig.algorithm``):

* ``cfr+`` / ``cfr``: full-width tabular CFR+ / vanilla CFR with alternating updates over the
  exact information sets of a small preset (``cfr_tabular.py``);
* ``mccfr``: external-sampling MCCFR on the same exact tree (``mccfr.TreeMCCFR``);
* ``mccfr_abstract``: external-sampling MCCFR of the full game over the information and action
  abstraction of ``tiengow.agents.abstraction`` (``mccfr.GameMCCFR``); its policy drives the
  ``cfr`` agent.

Every ``log_every`` iterations a run measures its average strategy: NashConv (exact best
responses, ``cfr_tabular.nash_conv``) on small presets, chips per hand against baselines
(duplicate deals, as ``tiengow eval``) for the full game. The curve goes to TensorBoard when a
writer is available (``torch.utils.tensorboard``, else the ``tensorboard`` package; otherwise
a one-line notice) and into the returned summary.

Policy files are those the ``cfr`` agent plays (``tiengow.agents.cfr``: the format, its
writer ``save_policy`` and its reader ``load_policy``, re-exported here): runs write them
through that one definition, so every policy that ``tiengow nashconv`` accepts also plays.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tiengow.agents.base import make_agent
from tiengow.agents.cfr import ACTS, FORMAT, VERSION, CfrAgent, load_policy, save_policy, tabular_policy_for
from tiengow_env.rules import RuleSet

from .config import build, check_agent_specs, read_settings
from .interrupt import Interrupted, stop_on_signal
from .runs import ScalarLog

ALGORITHMS = ("cfr+", "cfr", "mccfr", "mccfr_abstract")


# ============================================================================ config
@dataclass
class CfrConfig:
    """One CFR training run (shipped: ``configs/cfr_micro.yaml``, ``configs/cfr.yaml``)."""

    algorithm: str = "cfr+"
    """cfr+ | cfr | mccfr (exact tree of a small preset) | mccfr_abstract (full game, abstraction)"""
    rules: Any = "micro"
    """preset name, rules file, or a dict of switches"""
    banker: int = 0
    """the fixed banker of the exact tree (small presets)"""
    iterations: int = 1000
    """iterations to run (CFR: full passes; MCCFR: one sampled traversal per seat)"""
    seconds: float | None = None
    """stop earlier once this many seconds have passed (None: no time limit)"""
    target_ratio: float | None = None
    """small presets: stop once NashConv <= target_ratio x the uniform policy's NashConv"""
    delay: int = 0
    """CFR+: iteration t weighs max(t - delay, 0) in the average strategy"""
    linear: bool = True
    """MCCFR: weigh iteration t's strategy by t in the average (else 1)"""
    seed: int = 0
    """seed of the MCCFR sampling and of the evaluation deals"""
    log_every: int = 10
    """iterations between measurements (NashConv, or chips against baselines)"""
    eval_deals: int = 100
    """full game: duplicate deals per baseline at each measurement"""
    eval_opponents: list[str] = field(default_factory=lambda: ["greedy"])
    """full game: baselines measured against"""
    act: str = "sample"
    """how the cfr agent plays an abstract policy: sample its average strategy, or argmax"""
    out: str = "cfr_policy.npz"
    """where the policy file is written"""
    log_dir: str | None = "runs/cfr"
    """TensorBoard directory (None: no logging); tiengow train cfr logs beside the policy unless
    --log-dir or the config's own log_dir says otherwise"""

    @classmethod
    def from_file(cls, path: str, **overrides: Any) -> CfrConfig:
        """Read a YAML (or JSON) config; ValueError naming the file and the problem."""
        data = read_settings(path)
        data.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls.from_dict(data)
        except ValueError as err:
            raise ValueError(f"config {path}: {err}") from None

    @classmethod
    def from_dict(cls, data: dict) -> CfrConfig:
        return build(cls, data)

    def validate(self) -> None:
        """Raise ValueError on the first setting out of range; build each of eval_opponents."""
        rules = RuleSet.from_spec(self.rules)
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}")
        for name in ("iterations", "log_every"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        # type(), so that true is refused as the policy file's loader refuses a bool banker
        if type(self.banker) is not int or not 0 <= self.banker < rules.players:
            raise ValueError(
                f"banker must be a seat, a whole number from 0 to {rules.players - 1}, got {self.banker!r}"
            )
        if type(self.eval_deals) is not int or self.eval_deals < 0:
            raise ValueError(f"eval_deals must be an integer >= 0, got {self.eval_deals!r}")
        if type(self.delay) is not int or self.delay < 0:
            raise ValueError(f"delay must be an integer >= 0, got {self.delay!r}")
        for name in ("seconds", "target_ratio"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf
            ):  # also refuses nan
                raise ValueError(f"{name} must be a finite number > 0 or null, got {value!r}")
        if not isinstance(self.linear, bool):
            raise ValueError(f"linear must be true or false, got {self.linear!r}")
        if type(self.seed) is not int or not 0 <= self.seed < 2**63:
            raise ValueError(f"seed must be a whole number from 0 to 2^63 - 1, got {self.seed!r}")
        check_agent_specs("eval_opponents", self.eval_opponents, rules)
        if self.act not in ACTS:
            raise ValueError(f"act must be one of {', '.join(ACTS)}, got {self.act!r}")


# ============================================================================ training
def train(
    config: CfrConfig,
    out: str | None = None,
    progress: Callable[[int, dict], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> dict:
    """Run ``config``, write the policy file (``out`` or ``config.out``) and return a summary
    with the measured curve and the ``log_dir`` logged to. ``progress(iterations_done,
    last_measurement)`` is called after each chunk of ``log_every`` iterations."""
    config.validate()
    out = out or config.out
    rules = RuleSet.from_spec(config.rules)
    log = ScalarLog(config.log_dir, notice)
    try:
        run = _train_abstract if config.algorithm == "mccfr_abstract" else _train_tabular
        return {**run(config, rules, out, log, progress), "log_dir": config.log_dir}
    finally:
        log.close()


def _run_in_chunks(
    config: CfrConfig,
    run: Callable[[int], None],
    measure: Callable[[dict], bool],
    progress: Callable[[int, dict], None] | None,
) -> tuple[list[dict], int, float, int | None]:
    """``run(n)`` iterations in chunks of ``log_every``; after each, ``measure(point)`` adds its
    figures to the curve point and says whether the target is reached. Stops there, at
    ``iterations``, or once ``seconds`` of training have passed, or at SIGINT or SIGTERM after the
    chunk under way (``interrupt.py``). Returns (curve, iterations done, seconds of training, the
    signal that stopped it or None)."""
    curve: list[dict] = []
    done = 0
    train_seconds = 0.0
    with stop_on_signal() as stop:
        while done < config.iterations and not stop:
            chunk = min(config.log_every, config.iterations - done)
            tick = time.perf_counter()
            run(chunk)
            train_seconds += time.perf_counter() - tick
            done += chunk
            point: dict[str, Any] = {"iteration": done, "seconds": round(train_seconds, 3)}
            reached = measure(point)
            curve.append(point)
            if progress:
                progress(chunk, point)
            if reached or (config.seconds is not None and train_seconds >= config.seconds):
                break
    return curve, done, train_seconds, stop.signal


def _train_tabular(
    config: CfrConfig, rules: RuleSet, out: str, log: ScalarLog, progress: Callable[[int, dict], None] | None
) -> dict:
    from .cfr_tabular import TabularCFR, build_tree, nash_conv
    from .mccfr import TreeMCCFR

    start = time.perf_counter()
    tree = build_tree(rules, config.banker)
    uniform = nash_conv(tree, tree.uniform_policy())["nash_conv"]
    if config.algorithm == "mccfr":
        solver: Any = TreeMCCFR(tree, seed=config.seed, linear=config.linear)
    else:
        solver = TabularCFR(tree, plus=config.algorithm == "cfr+", delay=config.delay)
    build_seconds = time.perf_counter() - start

    def run(chunk: int) -> None:
        if config.algorithm == "mccfr":
            solver.run(chunk)
        else:
            for _ in range(chunk):
                solver.iteration()

    def measure(point: dict) -> bool:
        value = nash_conv(tree, solver.average_policy())["nash_conv"]
        point.update(nash_conv=value, ratio=value / uniform if uniform > 0 else 0.0)
        log.add("nashconv/nash_conv", value, point["iteration"])
        log.add("nashconv/ratio_to_uniform", point["ratio"], point["iteration"])
        return config.target_ratio is not None and point["ratio"] <= config.target_ratio

    curve, done, train_seconds, stopped = _run_in_chunks(config, run, measure, progress)
    policy = solver.average_policy()
    meta = {
        "algorithm": config.algorithm,
        "rules": rules.switches(),
        "rules_name": rules.name,
        "iterations": done,
        "seconds": round(train_seconds, 3),
        "build_seconds": round(build_seconds, 3),
        "seed": config.seed,
        "nash_conv": curve[-1]["nash_conv"],
        "uniform_nash_conv": uniform,
        "infosets": tree.num_infosets,
        "curve": curve,
    }
    save_policy(
        out, "tabular", meta, policy=policy, fingerprint=np.array(tree.fingerprint()), banker=np.array(tree.banker)
    )
    _raise_if_stopped(stopped, done, out)
    return {"out": out, **meta}


def _train_abstract(
    config: CfrConfig, rules: RuleSet, out: str, log: ScalarLog, progress: Callable[[int, dict], None] | None
) -> dict:
    from .mccfr import GameMCCFR

    solver = GameMCCFR(rules, seed=config.seed, linear=config.linear)

    def measure(point: dict) -> bool:
        keys, rows = solver.average_policy()
        point["buckets"] = int(len(keys))
        log.add("charts/buckets", len(keys), point["iteration"])
        if config.eval_deals:
            for opponent in config.eval_opponents:
                mean, half = evaluate_abstract(
                    keys, rows, config.act, rules, opponent, config.eval_deals, seed=config.seed + 1
                )
                point[f"chips_vs_{opponent}"] = mean
                point[f"ci95_vs_{opponent}"] = half
                log.add(f"charts/chips_vs_{opponent}", mean, point["iteration"])
        return False

    curve, done, train_seconds, stopped = _run_in_chunks(config, solver.run, measure, progress)
    keys, rows = solver.average_policy()
    meta = {
        "algorithm": config.algorithm,
        "rules": rules.switches(),
        "rules_name": rules.name,
        "iterations": done,
        "seconds": round(train_seconds, 3),
        "seed": config.seed,
        "buckets": int(len(keys)),
        "curve": curve,
    }
    save_policy(out, "abstract", meta, keys=keys, probabilities=rows, act=np.array(config.act))
    _raise_if_stopped(stopped, done, out)
    return {"out": out, **meta}


def _raise_if_stopped(signal_number: int | None, done: int, out: str) -> None:
    """After a signal: the average strategy so far is written (it plays and ``tiengow nashconv``
    reads it); a CFR run does not resume (its regrets and strategy sums are not kept)."""
    if signal_number is not None:
        raise Interrupted(
            signal_number,
            f"after {done:,} iterations (the average strategy so far is written; a "
            "CFR run does not resume: start a new one with more iterations)",
            out,
            None,
        )


def evaluate_abstract(
    keys: np.ndarray, rows: np.ndarray, act: str, rules: RuleSet, opponent: str, deals: int, seed: int = 0
) -> tuple[float, float]:
    """Duplicate evaluation (as ``agents.arena.evaluate``) of an in-memory abstract policy against
    copies of ``opponent``: (mean chips per hand, 95% half-width)."""
    from tiengow.agents.arena import mean_and_half_width, play_deals

    candidate = CfrAgent(rules, 0, keys, rows, sample=act == "sample")
    opponents = [make_agent(opponent, rules) for _ in range(rules.players)]
    return mean_and_half_width(play_deals(candidate, opponents, rules, seed, 0, deals)[:, :, 0].mean(axis=1))


__all__ = [
    "CfrConfig",
    "train",
    "save_policy",
    "load_policy",
    "tabular_policy_for",
    "evaluate_abstract",
    "ScalarLog",
    "ALGORITHMS",
    "FORMAT",
    "VERSION",
]
