"""The settings of a PPO run around the algorithm (``RunSettings``: time limit, evaluation,
checkpoints, outputs), what each ``PpoConfig`` setting may be, and the settings of a resumed run
or of one about to write: the config's side of ``training/ppo.py``, kept out of the algorithm's file.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tiengow.agents.base import make_agent
from tiengow_env.rules import RuleSet

from .config import TrainerConfig, check_agent_specs, check_ranges, parse_overrides
from .ppo_checkpoints import STRUCTURAL, load_checkpoint
from .runs import run_dir

Settings = TypeVar("Settings", bound="RunSettings")


@dataclass
class RunSettings(TrainerConfig):
    """The settings of ``ppo_runner.train`` around the algorithm; ``ppo.PpoConfig`` adds the algorithm's."""

    max_seconds: float | None = None
    """stop earlier, with a checkpoint, after this many seconds of training in this run (None: no limit)"""
    eval_interval: int = 25
    """updates between duplicate evaluations (in a background process), and one at the end (0: none)"""
    eval_deals: int = 200
    """duplicate deals per opponent at each evaluation"""
    eval_opponents: list = field(default_factory=lambda: ["greedy", "expert"])
    """agents the evaluation plays against (three copies each)"""
    eval_seed: int = 2024
    """seed of the evaluation deals (the same deals every time)"""
    exploit_interval: int = 0
    """updates between measurements of the policy's exploitability, and one at the end (0: none; docs/training.md)"""
    exploit_minutes: float = 2.0
    """training budget of each exploiter on the full game (exploit_interval)"""
    checkpoint_interval: int = 10
    """updates between checkpoints (and one at the end)"""
    out: str | None = None
    """checkpoint path (written atomically); None: ppo.pt in a new folder runs/train-ppo/<timestamp>"""
    log_dir: str | bool | None = None
    """TensorBoard folder, with curve.json (the evaluations); None: the checkpoint's folder; false: no logs"""
    overlap: bool = True
    """collect the next rollout while the learner updates (policy lag 1); False: strictly alternate"""

    @classmethod
    def for_resume(cls: type[Settings], checkpoint: str, overrides: list[str] | None = None) -> Settings:
        """The config ``checkpoint`` was trained with, writing to ``checkpoint`` itself, then
        ``name=value`` overrides on top. ValueError naming the field when an override changes a
        setting the checkpoint's arrays depend on."""
        saved = dict(load_checkpoint(checkpoint)["config"])
        changes = parse_overrides(overrides or [])
        for name in STRUCTURAL:
            if name in changes and changes[name] != saved.get(name):
                raise ValueError(
                    f"--set {name}={changes[name]!r}: {checkpoint} was trained with {name} = "
                    f"{saved.get(name)!r}, and its network, optimiser and envs depend on it; a resumed "
                    f"run keeps it (start a new run to change it)"
                )
        # The run goes on where the checkpoint is now (it may have been copied or moved): its own
        # path, and beside it the log, if the log was beside the checkpoint it was written to.
        if saved.get("log_dir") == (os.path.dirname(saved.get("out") or "") or "."):
            saved["log_dir"] = os.path.dirname(checkpoint) or "."
        saved["out"] = checkpoint
        saved.update(changes)
        try:
            return cls.from_dict(saved)
        except ValueError as err:
            raise ValueError(f"config of {checkpoint}: {err}") from None

    def with_outputs(self: Settings) -> Settings:
        """This config with its output paths made concrete: ``out`` None becomes ``ppo.pt`` in a new
        ``runs/train-ppo/<timestamp>`` folder, ``log_dir`` None the checkpoint's folder."""
        out = self.out if self.out is not None else os.path.join(run_dir("train ppo"), "ppo.pt")
        log_dir = os.path.dirname(out) or "." if self.log_dir is None else self.log_dir
        return dataclasses.replace(self, out=out, log_dir=log_dir)


# What each setting may be (``PpoConfig.validate``): whole numbers (name, low, high), and other
# numbers (name, low, high, whether null is allowed); a number in POSITIVE must be above its low.
INTEGERS = (
    ("hands", 1, 10**6),
    ("seed", 0, 2**63 - 1),
    ("total_steps", 1, 10**15),
    ("num_envs", 1, 2**20),
    ("rollout_steps", 1, 2**20),
    ("hidden", 1, 2**16),
    ("layers", 1, 64),
    ("update_epochs", 1, 10**4),
    ("minibatch_size", 1, 2**30),
    ("pool_size", 0, 10**4),
    ("pool_interval", 1, 10**9),
    ("eval_interval", 0, 10**9),
    ("eval_deals", 1, 10**7),
    ("eval_seed", 0, 2**63 - 1),
    ("exploit_interval", 0, 10**9),
    ("checkpoint_interval", 1, 10**9),
    ("threads", 1, 256),
)
NUMBERS = (
    ("max_seconds", 0, math.inf, True),
    ("lr", 0, math.inf, False),
    ("gamma", 0, 1, False),
    ("gae_lambda", 0, 1, False),
    ("clip_coef", 0, math.inf, False),
    ("ent_coef", 0, math.inf, False),
    ("vf_coef", 0, math.inf, False),
    ("max_grad_norm", 0, math.inf, False),
    ("target_kl", 0, math.inf, True),
    ("reward_scale", 0, math.inf, False),
    ("opponent_mix", 0, 1, False),
    ("exploit_minutes", 0, math.inf, False),
)
POSITIVE = {"max_seconds", "lr", "clip_coef", "max_grad_norm", "target_kl", "reward_scale", "exploit_minutes"}


def check_settings(config: Any) -> None:
    """Raise ValueError on the first setting out of range."""
    RuleSet.from_spec(config.rules)
    check_ranges(config, INTEGERS, NUMBERS, POSITIVE)
    for name in ("anneal_lr", "overlap"):
        if not isinstance(getattr(config, name), bool):
            raise ValueError(f"{name} must be true or false, got {getattr(config, name)!r}")
    if (
        not isinstance(config.pool_weights, dict)
        or not all(isinstance(k, str) for k in config.pool_weights)
        or any(
            isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w < math.inf
            for w in config.pool_weights.values()
        )
    ):
        raise ValueError(
            f"pool_weights maps past and agent specs (greedy, expert, pimc:8, ppo:PATH, ...) to "
            f"weights >= 0, got {config.pool_weights!r}"
        )
    for spec in config.pool_weights:
        if spec != "past":
            try:
                make_agent(spec, config.rules)
            except ValueError as err:
                raise ValueError(f"pool_weights: {err}") from None
    if config.opponent_mix > 0 and not sum(w for k, w in config.pool_weights.items() if k != "past") > 0:
        raise ValueError(
            "pool_weights needs an agent (greedy, expert, ...) with a weight > 0 when opponent_mix "
            "> 0 (the pool has no past snapshot before the first pool_interval updates)"
        )
    check_agent_specs("eval_opponents", config.eval_opponents, config.rules)
    if config.out is not None and (
        not isinstance(config.out, str)
        or not config.out
        or os.path.isdir(config.out)
        or config.out.endswith(("/", os.sep))
    ):
        raise ValueError(f"out is the checkpoint's file path (or null for a new run folder), got {config.out!r}")
    if config.log_dir is True or config.log_dir == "" or not isinstance(config.log_dir, (str, bool, type(None))):
        raise ValueError(
            f"log_dir is a folder, null (the checkpoint's folder) or false (no logging), got {config.log_dir!r}"
        )
