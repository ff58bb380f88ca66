"""Baseline agents: ``random``, ``greedy`` and ``expert``.

They read only the acting seat's observation (``tiengow_env.observation``): their own tiles,
what has been played face up, their own discards, and the public state of the trick.
``greedy`` and ``expert`` are thin wrappers of the compiled policies
(``tiengow_env._kernels.greedy_choice`` and ``tiengow_env._policy_kernels.expert_choice``),
which are their one definition: search rollouts, PPO's opponent pool and these agents all
play the same rules. ``tests/policy_reference.py`` keeps the plain-numpy version they are
tested against.
"""

from __future__ import annotations

import numpy as np

from tiengow_env import _policy_kernels as PK
from tiengow_env.combos import table_for
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NUM_TYPES

from .base import Agent, Bot


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation, mask, game=None) -> int:
        _, masks = self.check_batch(np.asarray(observation)[None], np.asarray(mask)[None])
        return int(self.rng.choice(np.flatnonzero(masks[0])))


class CompiledPolicyAgent(Agent):
    """An agent that plays a compiled policy (``_policy_kernels.POLICY_*``) from observations."""

    policy = PK.POLICY_GREEDY

    def __init__(self, rules: RuleSet, seed: int = 0):
        super().__init__(rules, seed)
        self.combos = table_for(rules)
        self.offsets = ObservationLayout(rules.players, rules.hand_size).offsets
        self.singles = np.empty(NUM_TYPES, dtype=np.int64)
        PK.single_of_type(self.combos.table, self.singles)
        self._scratch = np.empty(self.combos.num_actions, dtype=np.int64)
        self._one = np.empty(1, dtype=np.int64)

    def act(self, observation: np.ndarray, mask: np.ndarray, game=None) -> int:
        self.act_into(*self.check_batch(np.asarray(observation)[None], np.asarray(mask)[None]), self._one)
        return int(self._one[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks = self.check_batch(observations, masks)
        out = np.empty(len(observations), dtype=np.int64)
        self.act_into(observations, masks, out)
        return out

    def act_into(self, observations: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        """One compiled call for a batch: out[i] is the action for row i (rows as ``check_batch``
        passes them: this reads any array it is given)."""
        PK.batch_from_observations(
            self.policy,
            observations,
            masks,
            self.offsets,
            self.singles,
            self.combos.table,
            self.combos.rules_array,
            self._scratch,
            out,
        )


class GreedyAgent(CompiledPolicyAgent):
    """Simple and sensible: lead the largest, strongest combination; beat with the cheapest
    beating combination; otherwise discard the weakest tiles."""

    name = "greedy"
    policy = PK.POLICY_GREEDY


class ExpertAgent(CompiledPolicyAgent):
    """A tile-counting heuristic player.

    * **Counting.** The unseen tiles are the deck less its own hand, every face-up tile and its
      own face-down tiles. A combination is *sure* when no beating combination can be made from
      the unseen tiles: no other hand can hold one.
    * **Leading.** With one combination left in hand, play it. Otherwise lead sure combinations,
      the largest first (more columns). The Supreme pair is a sure lead that only counts when
      led: it is kept for the last trick (where it also doubles the settlement) only when every
      other tile can be led as a sure winner first; otherwise it is cashed at once. Without a
      sure lead, give up the lead cheaply with the weakest loose single, unless the seat has no
      column and few tiles (early death looms): then lead its strongest play.
    * **Following.** Win when it is certain (last to act, or a sure beat), with the cheapest
      such beat. Below par (4 columns in the standard game), or with no column at all, also
      try the strongest beat when a win is only possible.
    * **Discarding.** Throw the tiles worth least to keep: a tile is worth its rank in its
      suit, more if it belongs to a combination the hand can make (keep combinations together),
      and more still if it is a sure single.
    * **One Red Dot.** Always declare: every other player pays at the shutout rate.
    """

    name = "expert"
    policy = PK.POLICY_EXPERT


RANDOM = Bot("heuristic", "a uniformly random legal action", None, lambda config, rules, seed: RandomAgent(rules, seed))
GREEDY = Bot(
    "heuristic",
    "leads its largest, strongest play; beats as cheaply as it can",
    None,
    lambda config, rules, seed: GreedyAgent(rules, seed),
)
EXPERT = Bot(
    "heuristic",
    "counts the unseen tiles: cashes sure winners, beats only when certain",
    None,
    lambda config, rules, seed: ExpertAgent(rules, seed),
)
