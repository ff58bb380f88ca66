"""Cost of each part of a random playout, then of a vector-env step and of a PIMC decision:
``python -m tiengow.benchmarks.profile_core``.

Records the states and actions of 200 random hands, then times ``legal_actions`` (lead
states and follow states apart) and ``step`` over the recorded states, beside a plain state copy (the step
timing includes one), the deal, ``new_hand`` and the whole playout (``random_hands``). CPU
time, best of 20 passes. The timing loops are compiled as the playout is (``_nrt=False``, see
``_kernels``), so that the parts cost what they cost inside it.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from tiengow_env import _kernels as K
from tiengow_env import _state_kernels as SK
from tiengow_env import layout as L
from tiengow_env.combos import table_for
from tiengow_env.rules import RuleSet
from tiengow_env.state import STATE_LEN, StateView


@njit(cache=True)
def _record(hands, table, rules, states, actions):
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, 1)
    state = np.zeros(STATE_LEN, dtype=np.int64)
    dealt = np.zeros(L.MAX_SEATS, dtype=np.int64)
    scratch = np.zeros(L.legal_len(table.shape[0]), dtype=np.int64)
    n = 0
    for _ in range(hands):
        K.deal(rng, rules, dealt)
        K.new_hand(state, dealt, 0, 1, table, rules)
        while SK.phase(state) != L.PHASE_OVER:
            action = scratch[K.rand_below(rng, K.legal_actions(state, table, rules, scratch))]
            states[n] = state
            actions[n] = action
            n += 1
            K.step(state, action, table, rules)
    return n


@njit(cache=True, _nrt=False)
def _legal(states, table, rules, scratch, passes):
    total = 0
    for _ in range(passes):
        for i in range(states.shape[0]):
            total += K.legal_actions(states[i], table, rules, scratch)
    return total


@njit(cache=True, _nrt=False)
def _copy_and_step(states, actions, n, table, rules, do_step, state, passes):
    total = 0
    for _ in range(passes):
        for i in range(n):
            for k in range(STATE_LEN):
                state[k] = states[i, k]
            if do_step:
                K.step(state, actions[i], table, rules)
            total += state[0]
    return total


@njit(cache=True, _nrt=False)
def _deals(n, rng, table, rules, bits, dealt, state, start_hand):
    for _ in range(n):
        K.deal_with(rng, rules, bits, dealt)
        if start_hand:
            K.new_hand(state, dealt, 0, 1, table, rules)
    return dealt[0]


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
    hands, passes = 200, 10  # 200 hands' states stay in the cache: the figures are not memory traffic
    states = np.zeros((10_000, STATE_LEN), dtype=np.int64)
    actions = np.zeros(10_000, dtype=np.int64)
    n = _record(hands, table, rules, states, actions)
    phases = np.array([StateView(state, combos.rules.players).phase for state in states[:n]])
    lead_states, follow_states = states[:n][phases == "lead"], states[:n][phases == "follow"]
    leads, follows = len(lead_states), len(follow_states)
    print(
        f"{n} decisions in {hands:,} hands ({n / hands:.1f} per hand: {leads / hands:.1f} leads, "
        f"{follows / hands:.1f} follows); CPU time, best of 20:"
    )
    scratch = np.zeros(combos.num_actions, dtype=np.int64)
    state = np.zeros(STATE_LEN, dtype=np.int64)
    copy = _best(_copy_and_step, (states, actions, n, table, rules, False, state, passes))
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, 1)
    bits = np.zeros(32, dtype=np.int64)
    dealt = np.zeros(L.MAX_SEATS, dtype=np.int64)
    deals = 100_000
    deal = _best(_deals, (deals, rng, table, rules, bits, dealt, state, False)) / deals
    net = np.zeros((20_000, combos.rules.players), dtype=np.int64)
    parts = {  # name: (seconds per call, calls per hand)
        "legal_actions, lead": (
            _best(_legal, (lead_states, table, rules, scratch, passes)) / leads / passes,
            leads / hands,
        ),
        "legal_actions, follow": (
            _best(_legal, (follow_states, table, rules, scratch, passes)) / follows / passes,
            follows / hands,
        ),
        "step (copy subtracted)": (
            (_best(_copy_and_step, (states, actions, n, table, rules, True, state, passes)) - copy) / n / passes,
            n / hands,
        ),
        "deal (deal_with)": (deal, 1),
        "new_hand": (_best(_deals, (deals, rng, table, rules, bits, dealt, state, True)) / deals - deal, 1),
        "whole hand (random_hands)": (_best(K.random_hands, (len(net), 1, table, rules, net)) / len(net), 1),
    }
    print(f"  {'':26s} {'per call':>10s} {'per hand':>10s}")
    for name, (seconds, calls) in parts.items():
        print(f"  {name:26s} {seconds * 1e9:7.1f} ns {seconds * calls * 1e6:7.2f} µs")
    print("Beyond the playout (CPU time, best of 7):")
    print(f"  {'VectorEnv.step, N = 4,096':26s} {_vector_step_ns(4096):7.1f} ns per env (random legal actions)")
    print(f"  {'pimc_values, 64 samples':26s} {_pimc_ms(64):7.2f} ms per decision (greedy rollouts)")


def _vector_step_ns(num_envs: int, calls: int = 40) -> float:
    from tiengow_env import VectorEnv

    env = VectorEnv(num_envs, seed=0)
    actions = np.zeros(num_envs, dtype=np.int64)

    def some_steps() -> None:
        for _ in range(calls):
            env.random_actions(actions)
            env.step(actions)

    return _best(some_steps, (), passes=7) / calls / num_envs * 1e9


def _pimc_ms(samples: int, decisions: int = 20) -> float:
    from tiengow_env.game import Game
    from tiengow_env.search import pimc_values

    games = [Game(seed=s) for s in range(decisions)]  # each at its first decision

    def decide_all() -> None:
        for game in games:
            pimc_values(game, samples=samples)

    return _best(decide_all, (), passes=7) / decisions * 1e3


if __name__ == "__main__":
    main()
