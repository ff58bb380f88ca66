"""``cfr[:path]``: plays the average strategy of a full-game MCCFR policy (``training/cfr.py``).

The policy maps the acting seat's bucket (``training/abstraction.py``: features of its own
tiles and of the public state, nothing hidden) to a distribution over a few abstract actions,
each naming one concrete action. Without a path it loads the shipped policy
``agents/policies/cfr_standard.npz`` (trained by ``tiengow train cfr --config configs/cfr.yaml
--out agents/policies/cfr_standard.npz``).
A bucket the policy never reached falls back to the greedy agent's choice. The policy is
sampled (or, if the file says ``act: argmax``, its most likely action is played).
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from tiengow_env import _kernels as K
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

from .base import Agent

DEFAULT_POLICY = Path(__file__).resolve().parent / "policies" / "cfr_standard.npz"


class CfrAgent(Agent):
    """Acts from an abstract policy table: sorted bucket ``keys`` and ``probabilities`` rows."""

    name = "cfr"
    uses_game = True  # the bucket features are computed from the state, reading only what the seat knows

    def __init__(self, rules: RuleSet, seed: int, keys: np.ndarray, probabilities: np.ndarray, sample: bool = True):
        super().__init__(rules, seed)
        from tiengow.training import _cfr_kernels as CK
        from tiengow.training.abstraction import single_of_type

        from tiengow_env.combos import table_for
        self._ck = CK
        self.keys = np.ascontiguousarray(keys, dtype=np.int64)
        self.probabilities = np.ascontiguousarray(probabilities, dtype=np.float64)
        self.sample = sample
        self.combos = table_for(rules)
        self._single = single_of_type(rules)
        self._scratch = np.zeros(self.combos.num_actions + 2, dtype=np.int64)
        self._options = np.zeros(CK.NUM_ABSTRACT, dtype=np.int64)
        self._xorshift = np.zeros(1, dtype=np.uint64)
        self.fallbacks = 0  # decisions in buckets the policy does not cover
        self.reset(seed)

    def reset(self, seed: int) -> None:
        super().reset(seed)
        K.seed_rng(self._xorshift, np.uint64(int(seed) % 2**64))

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        if game is None:
            raise ValueError("the cfr agent reads its bucket from the game: call act(observation, mask, game=game)")
        table, rules = self.combos.table, self.combos.rules_array
        action = self._ck.policy_action(game.state, self.keys, self.probabilities, self.sample, self._single, table,
                                        rules, self._xorshift, self._scratch, self._options)
        if action < 0:
            self.fallbacks += 1
            action = K.greedy_action(game.state, table, rules, self._scratch)
        return int(action)

    def act_batch(self, observations, masks):
        raise ValueError("the cfr agent reads its bucket from the game: use act(..., game=game)")


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> tuple[np.ndarray, np.ndarray, str]:
    from tiengow.training.cfr import load_policy
    loaded = load_policy(path)
    if loaded["kind"] != "abstract":
        raise ValueError(f"{path} is a tabular policy of an exact small tree (for tiengow nashconv); the cfr agent "
                         "needs an abstract full-game policy (tiengow train cfr --config configs/cfr.yaml)")
    return loaded["keys"], loaded["probabilities"], loaded["act"]


def make_cfr_agent(argument: str | None, rules: RuleSet, seed: int = 0) -> CfrAgent:
    """Factory for the registry: ``cfr`` (the shipped policy) or ``cfr:path/to/policy.npz``."""
    path = str(DEFAULT_POLICY) if argument is None else argument
    if not os.path.exists(path):
        raise ValueError(f"cfr policy file {path} does not exist; expected a .npz written by tiengow train cfr"
                         + ("" if argument else " (the shipped policy is missing: reinstall, or give cfr:PATH)"))
    keys, probabilities, act = _load(os.path.abspath(path), os.path.getmtime(path))
    return CfrAgent(RuleSet.from_spec(rules), seed, keys, probabilities, sample=act == "sample")


__all__ = ["CfrAgent", "make_cfr_agent", "DEFAULT_POLICY"]
