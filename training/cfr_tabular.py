"""Exact tabular CFR and CFR+ on small rule sets, with exact best responses and NashConv.

The exact tree of a small rule set, its information sets and action slots, is defined with the
agents (``tiengow.agents.exact_tree``: the ``cfr`` agent plays a tabular policy on it) and
re-exported here: ``build_tree``, ``GameTree``, ``deal_weights``, ``check_policy``. CFR, CFR+
and best responses are compiled loops over its flat arrays (``_cfr_kernels.py``); a policy is
one probability per slot (slot ``info_offset[I] + k`` is the k-th legal action of set I).

    tree = build_tree("micro")
    solver = TabularCFR(tree, plus=True)
    for _ in range(1000):
        solver.iteration()
    nash_conv(tree, solver.average_policy())     # {"nash_conv": ..., "per_seat": [...], ...}

NashConv [Lanctot et al. 2017, "A Unified Game-Theoretic Approach to Multiagent RL", eq. 2]:
    NashConv(pi) = sum_i ( max_{pi_i'} u_i(pi_i', pi_{-i}) - u_i(pi) ),
each seat's best response taken against the other seats' (average) strategies.
"""

from __future__ import annotations

import numpy as np

from tiengow.agents.exact_tree import GameTree, build_tree, check_policy, deal_weights

from . import _cfr_kernels as CK


# ============================================================================ CFR and CFR+
class TabularCFR:
    """Full-width CFR [Zinkevich et al. 2007] or CFR+ [Tammelin 2014] with alternating updates.

    Each ``iteration()`` updates the seats one after another (seat 0's pass already sees the
    strategies the earlier passes of this iteration left). CFR+ differs from vanilla CFR in
    three ways: regret-matching+ (cumulative regrets floored at 0, ``_cfr_kernels.cfr_pass``),
    alternating updates (used by both here), and a linearly weighted average strategy
    (iteration t weighs max(t - delay, 0)).
    """

    def __init__(self, tree: GameTree, plus: bool = True, delay: int = 0):
        self.tree = tree
        self.plus = plus
        self.delay = delay
        self.iterations = 0
        S, N = tree.num_slots, tree.num_nodes
        self.regret = np.zeros(S)
        self.strategy_sum = np.zeros(S)
        self._scratch = CK.CfrScratch(np.zeros(S), np.zeros(N), np.zeros(N), np.zeros(N))

    def iteration(self) -> None:
        t = self.iterations + 1
        weight = float(max(t - self.delay, 0)) if self.plus else 1.0
        arrays = self.tree.arrays()
        for seat in range(self.tree.players):
            CK.cfr_pass(seat, weight, self.plus, arrays, self.regret, self.strategy_sum, self._scratch)
        self.iterations = t

    def current_policy(self) -> np.ndarray:
        out = np.zeros(self.tree.num_slots)
        CK.all_regret_matching(self.regret, self.tree.info_offset, self.tree.info_size, out)
        return out

    def average_policy(self) -> np.ndarray:
        """The average strategy, per slot: what converges (and what NashConv is measured on)."""
        out = np.zeros(self.tree.num_slots)
        CK.normalise(self.strategy_sum, self.tree.info_offset, self.tree.info_size, out)
        return out


# ============================================================================ NashConv
def policy_values(tree: GameTree, policy: np.ndarray) -> np.ndarray:
    """Expected chips per seat when every seat plays ``policy``."""
    policy = check_policy(tree, policy)
    out = np.zeros(tree.players)
    CK.policy_values(policy, tree.arrays(), np.zeros((tree.num_nodes, tree.players)), out)
    return out


def best_response(tree: GameTree, policy: np.ndarray, seat: int) -> tuple[float, np.ndarray]:
    """(value, best action slot per information set) of ``seat``'s best response to the other
    seats playing ``policy``; the slot is -1 at information sets of other seats."""
    policy = check_policy(tree, policy)
    best = np.zeros(tree.num_infosets, dtype=np.int64)
    scratch = CK.ResponseScratch(np.zeros(tree.num_nodes), np.zeros(tree.num_nodes), np.zeros(tree.num_slots))
    value = CK.best_response_value(seat, policy, tree.arrays(), scratch, best)
    return float(value), best


def nash_conv(tree: GameTree, policy: np.ndarray) -> dict:
    """NashConv of ``policy`` (module doc) with each seat's best-response value and value."""
    values = policy_values(tree, policy)
    br = np.array([best_response(tree, policy, seat)[0] for seat in range(tree.players)])
    gains = br - values
    return {
        "nash_conv": float(gains.sum()),
        "per_seat": [float(g) for g in gains],
        "best_response_values": [float(v) for v in br],
        "values": [float(v) for v in values],
    }


__all__ = [
    "GameTree",
    "build_tree",
    "deal_weights",
    "TabularCFR",
    "policy_values",
    "best_response",
    "nash_conv",
    "check_policy",
]
