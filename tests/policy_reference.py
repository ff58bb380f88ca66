"""The Python ``greedy`` and ``expert`` agents as they were written before the compiled
policies (``tiengow_env._policy_kernels``) became their one definition: slow, obvious
numpy over the observation, kept as the reference the compiled policies are tested against
(tests/test_search_policies.py), as ``tiengow_env.reference`` is for the game core.
"""

from __future__ import annotations

import numpy as np

from tiengow.agents.base import Agent
from tiengow_env.combos import table_for
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NUM_TYPES, TILE_WORTH


class TableAgent(Agent):
    """Shared decoding of observations and actions for the heuristic agents."""

    def __init__(self, rules: RuleSet, seed: int = 0):
        super().__init__(rules, seed)
        table = table_for(rules)
        self.C = table.num_combos
        self.counts = np.zeros((self.C, NUM_TYPES), dtype=np.int64)
        for j, c in enumerate(table.combos):
            np.add.at(self.counts[j], list(c.types), 1)
        self.size = self.counts.sum(axis=1)
        self.strength = np.array([c.strength for c in table.combos])
        self.cls = np.array([table.table[j, 2] for j in range(self.C)])
        self.beat_range = table.table[:, 4:6]
        self.is_supreme = np.array([c.cls == "supreme_pair" for c in table.combos])
        self.deck = np.bincount(np.array(rules.deck_types), minlength=NUM_TYPES)
        self.layout = ObservationLayout(rules.players, rules.hand_size)
        self.declare = self.C + NUM_TYPES

    def views(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return self.layout.views(observation)

    def unseen(self, v: dict[str, np.ndarray]) -> np.ndarray:
        """Tiles this seat has not seen: in other hands, or face down at other seats."""
        seen = v["hand"] + v["up"].sum(axis=0) + v["down"].sum(axis=0)
        return np.maximum(self.deck - np.rint(seen).astype(np.int64), 0)

    def beatable(self, j: int, pool: np.ndarray) -> bool:
        """Can some combination beating ``j`` be made from the tiles ``pool``?"""
        lo, hi = self.beat_range[j]
        return bool(hi > lo and (self.counts[lo:hi] <= pool).all(axis=1).any())

    def discard(self, hand: np.ndarray, legal_types: np.ndarray, unseen: np.ndarray | None) -> int:
        """The discard action of the tile worth least to keep."""
        keep = np.array([self.keep_value(t, hand, unseen) for t in legal_types])
        return self.C + int(legal_types[int(np.argmin(keep))])

    def keep_value(self, t: int, hand: np.ndarray, unseen: np.ndarray | None) -> float:
        return float(TILE_WORTH[t])


class ReferenceGreedy(TableAgent):
    """Simple and sensible: lead the largest, strongest combination; beat with the cheapest
    beating combination; otherwise discard the weakest tiles."""

    name = "reference-greedy"

    def act(self, observation, mask, game=None) -> int:
        legal = np.flatnonzero(mask)
        if legal[-1] >= self.declare:
            return self.declare if mask[self.declare] else int(legal[-1])
        plays = legal[legal < self.C]
        v = self.views(observation)
        if v["phase"][1] > 0:  # lead
            return int(max(plays, key=lambda j: (self.size[j], self.strength[j])))
        if len(plays):
            return int(min(plays, key=lambda j: self.strength[j]))
        hand = np.rint(v["hand"]).astype(np.int64)
        return self.discard(hand, legal - self.C, None)


class ReferenceExpert(TableAgent):
    """The expert of ``tiengow.agents.baselines.ExpertAgent`` (its docstring states the rules),
    written again in numpy as the reference its compiled policy is compared with."""

    name = "reference-expert"

    def act(self, observation, mask, game=None) -> int:
        legal = np.flatnonzero(mask)
        if mask[self.declare] if len(mask) > self.declare else False:
            return self.declare
        v = self.views(observation)
        hand = np.rint(v["hand"]).astype(np.int64)
        unseen = self.unseen(v)
        plays = legal[legal < self.C]
        if v["phase"][1] > 0:
            return self.lead(plays, hand, unseen, v)
        discards = legal[(legal >= self.C) & (legal < self.declare)] - self.C
        if len(plays):
            beat = self.follow(plays, unseen, v)
            if beat is not None or not len(discards):  # must_beat_if_able leaves no discard
                return beat if beat is not None else int(min(plays, key=lambda j: self.strength[j]))
        return self.discard(hand, discards, unseen)

    def lead(self, plays: np.ndarray, hand: np.ndarray, unseen: np.ndarray, v) -> int:
        tiles_left = int(hand.sum())
        whole = [j for j in plays if self.size[j] == tiles_left]
        if whole:
            return int(whole[0])
        sure = [j for j in plays if not self.beatable(j, unseen)]
        supreme = [j for j in sure if self.is_supreme[j]]
        others = [j for j in sure if not self.is_supreme[j]]
        if supreme:
            rest = hand - self.counts[supreme[0]]
            if not others or not self.all_sure(rest, unseen):
                return int(supreme[0])
        if others:
            return int(max(others, key=lambda j: (self.size[j], -self.cost(j, hand, unseen))))
        if v["columns"][0] == 0 and tiles_left <= 3:
            return int(max(plays, key=lambda j: (self.size[j], self.strength[j])))
        singles = [j for j in plays if self.size[j] == 1]
        return int(min(singles or plays, key=lambda j: self.cost(j, hand, unseen)))

    def all_sure(self, hand: np.ndarray, unseen: np.ndarray) -> bool:
        """Can ``hand`` be led out entirely in sure singles and combinations (roughly: every
        tile type held forms a sure single)?"""
        for t in np.flatnonzero(hand):
            single = np.flatnonzero((self.size == 1) & (self.counts[:, t] == 1))
            if not len(single) or self.beatable(int(single[0]), unseen):
                return False
        return True

    def follow(self, plays: np.ndarray, unseen: np.ndarray, v) -> int | None:
        last = int(round(v["acted"][0])) == self.rules.players - 1
        safe = [j for j in plays if last or not self.beatable(j, unseen)]
        if safe:
            return int(min(safe, key=lambda j: self.strength[j]))
        columns = int(round(v["columns"][0]))
        if columns < self.rules.par:
            return int(max(plays, key=lambda j: self.strength[j]))
        return None

    def cost(self, j: int, hand: np.ndarray, unseen: np.ndarray) -> float:
        """What playing combination j gives up: the keep value of its tiles."""
        return sum(self.keep_value(int(t), hand, unseen) * n for t, n in enumerate(self.counts[j]) if n)

    def keep_value(self, t: int, hand: np.ndarray, unseen: np.ndarray | None) -> float:
        value = float(TILE_WORTH[t])
        makeable = (self.counts <= hand).all(axis=1) & (self.counts[:, t] > 0) & (self.size > 1)
        value += 0.5 * float(self.size[makeable].max(initial=0))
        if unseen is not None:
            single = np.flatnonzero((self.size == 1) & (self.counts[:, t] == 1))
            if len(single) and not self.beatable(int(single[0]), unseen):
                value += 1.0
        return value
