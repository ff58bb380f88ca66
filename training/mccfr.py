"""External-sampling Monte Carlo CFR [Lanctot et al. 2009], on the exact tree and on the full game.

External sampling samples chance and the other seats' actions (each from its current
strategy) and explores every action of the seat being updated (the *traverser*). The sampled
counterfactual regret at the traverser's information set I is then simply

    r~(I, a) = v~_i(sigma_{I->a}) - v~_i(sigma),            [L09 eq. 9; the weights cancel]

and each other seat adds its current strategy to its average strategy where it acts. One
iteration is one traversal per seat (alternating), all on one sampled deal.

* ``TreeMCCFR`` runs on an exact ``GameTree`` (``tiengow.agents.exact_tree``) (small presets), so that its average
  strategy can be measured exactly with NashConv.
* ``GameMCCFR`` runs on the full game through the compiled core (``tiengow_env._kernels``),
  over the information and action abstraction of ``tiengow.agents.abstraction``: tables are indexed by the
  integer bucket key, and each bucket has at most ``NUM_ABSTRACT`` abstract actions.

With ``linear=True`` iteration t's contribution to the average strategy is weighted by t
(linear averaging, as in CFR+ [Tammelin 2014] and Linear CFR [Brown & Sandholm 2019]).
Kernels: ``_cfr_kernels.es_mccfr_tree`` and ``_cfr_kernels.es_mccfr_game``.
"""

from __future__ import annotations

import numpy as np

from tiengow.agents.abstraction import NUM_ABSTRACT, NUM_KEYS, single_of_type
from tiengow.agents.exact_tree import GameTree
from tiengow_env import _kernels as K
from tiengow_env.combos import table_for
from tiengow_env.rules import RuleSet

from . import _cfr_kernels as CK


def _rng(seed: int) -> np.ndarray:
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, np.uint64(int(seed) % 2**64))
    return rng


class TreeMCCFR:
    """External-sampling MCCFR on an exact tree; tables per information-set slot."""

    def __init__(self, tree: GameTree, seed: int = 0, linear: bool = True):
        self.tree = tree
        self.linear = linear
        self.iterations = 0
        self.regret = np.zeros(tree.num_slots)
        self.strategy_sum = np.zeros(tree.num_slots)
        self._sigma = np.zeros(tree.num_slots)
        self._root_cdf = np.cumsum(tree.root_weight)
        self._rng = _rng(seed)

    def run(self, iterations: int) -> None:
        """``iterations`` more iterations (one traversal per seat each)."""
        CK.es_mccfr_tree(
            self.iterations,
            iterations,
            self.linear,
            self._root_cdf,
            self.tree.arrays(),
            self.regret,
            self.strategy_sum,
            self._rng,
            self._sigma,
        )
        self.iterations += iterations

    def average_policy(self) -> np.ndarray:
        out = np.zeros(self.tree.num_slots)
        CK.normalise(self.strategy_sum, self.tree.info_offset, self.tree.info_size, out)
        return out


class GameMCCFR:
    """External-sampling MCCFR of the abstract full game (``tiengow.agents.abstraction``).

    Tables are dense over the bucket keys (``NUM_KEYS`` x ``NUM_ABSTRACT``); the policy keeps
    only the buckets that were visited (``average_policy``).
    """

    def __init__(self, rules: object = "standard", seed: int = 0, linear: bool = True):
        self.rules = RuleSet.from_spec(rules)
        if self.rules.players > 4:
            raise ValueError("the abstraction supports at most 4 players")
        self.combos = table_for(self.rules)
        self.linear = linear
        self.iterations = 0
        self.regret = np.zeros((NUM_KEYS, NUM_ABSTRACT))
        self.strategy_sum = np.zeros((NUM_KEYS, NUM_ABSTRACT))
        self._single = single_of_type(self.rules)
        self._rng = _rng(seed)

    def run(self, iterations: int) -> None:
        """``iterations`` more iterations: one random deal each, one traversal per seat."""
        CK.es_mccfr_game(
            self.iterations,
            iterations,
            self.linear,
            self.combos.table,
            self.combos.rules_array,
            self._single,
            self.regret,
            self.strategy_sum,
            self._rng,
        )
        self.iterations += iterations

    def average_policy(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted bucket keys, average strategy rows (keys, NUM_ABSTRACT) float32) of the buckets
        whose average strategy has any weight; unavailable abstract actions are 0."""
        totals = self.strategy_sum.sum(axis=1)
        keys = np.flatnonzero(totals > 0).astype(np.int64)
        rows = self.strategy_sum[keys] / totals[keys, None]
        return keys, rows.astype(np.float32)


__all__ = ["TreeMCCFR", "GameMCCFR"]
