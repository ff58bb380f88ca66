"""Cost of each part of a random playout: ``python -m benchmarks.profile_core``.

Records the states and actions of 1,000 random hands, then times ``legal_actions`` and
``step`` over the recorded states (CPU time, best of 20 passes, per call), beside a plain
state copy (the step timing includes one) and a random draw.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from tiengow_env import _kernels as K
from tiengow_env import layout as L
from tiengow_env.combos import table_for
from tiengow_env.rules import RuleSet


@njit(cache=True)
def _record(hands, table, rules, states, actions):
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, 1)
    state = np.zeros(L.S_LEN, dtype=np.int64)
    dealt = np.zeros(L.MAX_SEATS, dtype=np.int64)
    scratch = np.zeros(table.shape[0] + 32, dtype=np.int64)
    n = 0
    for _ in range(hands):
        K.deal(rng, rules, dealt)
        K.new_hand(state, dealt, 0, 1, table, rules)
        while state[L.S_PHASE] != L.PHASE_OVER:
            action = scratch[K.rand_below(rng, K.legal_actions(state, table, rules, scratch))]
            states[n] = state
            actions[n] = action
            n += 1
            K.step(state, action, table, rules)
    return n


@njit(cache=True)
def _legal(states, n, table, rules):
    scratch = np.zeros(table.shape[0] + 32, dtype=np.int64)
    total = 0
    for i in range(n):
        total += K.legal_actions(states[i], table, rules, scratch)
    return total


@njit(cache=True)
def _copy_and_step(states, actions, n, table, rules, do_step):
    state = np.zeros(L.S_LEN, dtype=np.int64)
    total = 0
    for i in range(n):
        state[:] = states[i]
        if do_step:
            K.step(state, actions[i], table, rules)
        total += state[0]
    return total


@njit(cache=True)
def _deals(n, table, rules):
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, 1)
    state = np.zeros(L.S_LEN, dtype=np.int64)
    dealt = np.zeros(L.MAX_SEATS, dtype=np.int64)
    for _ in range(n):
        K.deal(rng, rules, dealt)
        K.new_hand(state, dealt, 0, 1, table, rules)
    return state[0]


def _best(fn, args, passes: int = 20) -> float:
    fn(*args)
    best = float("inf")
    for _ in range(passes):
        start = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    combos = table_for(RuleSet.from_spec("standard"))
    table, rules = combos.table, combos.rules_array
    states = np.zeros((40_000, L.S_LEN), dtype=np.int64)
    actions = np.zeros(40_000, dtype=np.int64)
    n = _record(1000, table, rules, states, actions)
    print(f"{n} decisions in 1,000 hands ({n / 1000:.1f} per hand); CPU time per call, best of 20:")
    copy = _best(_copy_and_step, (states, actions, n, table, rules, False))
    figures = {
        "legal_actions": _best(_legal, (states, n, table, rules)) / n,
        "step (copy subtracted)": (_best(_copy_and_step, (states, actions, n, table, rules, True)) - copy) / n,
        "deal + new_hand": _best(_deals, (100_000, table, rules)) / 100_000,
    }
    for name, seconds in figures.items():
        print(f"  {name:24s} {seconds * 1e9:7.1f} ns")


if __name__ == "__main__":
    main()
