"""EXPERIMENT (issue 49): rollouts by a learned softmax policy, fitted to search's own decisions,
in place of epsilon-greedy ones. Screened by an SPRT; removed if it loses."""

import numpy as np
from numba import njit

from . import _kernels as K
from ._search_kernels import chips, deal_world_with
from .layout import (
    PHASE_FOLLOW,
    PHASE_LEAD,
    PHASE_OVER,
    R_COMBOS,
    R_PLAYERS,
    S_ACTED,
    S_COLS,
    S_HAND,
    S_LEN,
    S_PHASE,
    S_SIZE,
    S_TO_ACT,
    T_SIZE,
    T_STRENGTH,
)
from .tiles import NUM_TYPES, TILE_WORTH

NF = 16
_WORTH = (np.unique(TILE_WORTH, return_inverse=True)[1] / 13.0).astype(np.float64)


@njit(cache=True)
def features(state, table, rules, scratch, feats):
    """The legal actions into scratch and their features into feats (n, NF); returns n (0: not a
    lead or follow decision)."""
    phase = state[S_PHASE]
    if phase != PHASE_LEAD and phase != PHASE_FOLLOW:
        return 0
    n = K.legal_actions(state, table, rules, scratch)
    g = K.greedy_choice(scratch, n, phase == PHASE_LEAD, table, rules)
    C = rules[R_COMBOS]
    seat = state[S_TO_ACT]
    left = K.popcount(state[S_HAND + seat])
    last = state[S_ACTED] == rules[R_PLAYERS] - 1
    final = left == state[S_SIZE]
    cols0 = state[S_COLS + seat] == 0
    for i in range(n):
        j = scratch[i]
        for f in range(NF):
            feats[i, f] = 0.0
        feats[i, 0] = 1.0 if j == g else 0.0
        if phase == PHASE_LEAD:
            feats[i, 1] = table[j, T_SIZE] / 4.0
            feats[i, 2] = table[j, T_STRENGTH] / 11.0
            feats[i, 10] = feats[i, 2] * left / 8.0
            feats[i, 11] = 1.0 if table[j, T_SIZE] == left else 0.0
            feats[i, 12] = feats[i, 1] * left / 8.0
        elif j < C:
            feats[i, 3] = 1.0
            feats[i, 4] = 1.0 if last else 0.0
            feats[i, 5] = table[j, T_STRENGTH] / 11.0
            feats[i, 7] = 1.0 if final else 0.0
            feats[i, 8] = 1.0 if cols0 else 0.0
            feats[i, 13] = feats[i, 5] if last else 0.0
            feats[i, 14] = state[S_SIZE] / 4.0
            feats[i, 15] = left / 8.0
        else:
            feats[i, 6] = _WORTH[j - C]
            feats[i, 9] = left / 8.0
    return n


@njit(cache=True)
def learned_action(state, weights, table, rules, rng, scratch, feats, logits):
    n = features(state, table, rules, scratch, feats)
    if n == 0:
        return K.greedy_action(state, table, rules, scratch)
    top = -1e300
    for i in range(n):
        s = 0.0
        for f in range(NF):
            s += feats[i, f] * weights[f]
        logits[i] = s
        top = max(top, s)
    total = 0.0
    for i in range(n):
        logits[i] = np.exp(logits[i] - top)
        total += logits[i]
    u = K.rand_below(rng, 1 << 30) / (1 << 30) * total
    for i in range(n):
        u -= logits[i]
        if u <= 0.0:
            return scratch[i]
    return scratch[n - 1]


@njit(cache=True)
def pimc_learned(state, seat, actions, bonus, samples, halving, paired, weights, pool, cdf, tables, rng, means, worlds_out, rounds_out):
    """``_search_kernels.pimc_values`` with the rollouts played by ``learned_action``."""
    table, rules, face_up = tables.table, tables.rules, tables.face_up
    count = actions.shape[0]
    world = np.empty(S_LEN, dtype=np.int64)
    child = np.empty(S_LEN, dtype=np.int64)
    scratch = np.empty(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    feats = np.empty((rules[R_COMBOS] + NUM_TYPES + 2, NF))
    logits = np.empty(rules[R_COMBOS] + NUM_TYPES + 2)
    bits = np.empty(32, dtype=np.int64)
    alive = np.arange(count)
    sums = np.zeros(count)
    totals = np.zeros(count)
    order = np.zeros(count)
    worlds_out[:] = 0
    rounds_out[:] = 0
    rounds = 1
    while halving and (1 << rounds) < count:
        rounds += 1
    budget = samples * count
    live = count
    for r in range(rounds):
        draws = max(1, budget // (rounds * live))
        for _ in range(draws):
            if pool.shape[0]:
                u = K.rand_below(rng, 1 << 20) / (1 << 20)
                world[:] = pool[min(np.searchsorted(cdf, u, side="right"), pool.shape[0] - 1)]
            else:
                deal_world_with(state, seat, face_up, table, rules, rng, bits, world)
            start = rng[0]
            for j in range(live):
                i = alive[j]
                if paired:
                    rng[0] = start
                child[:] = world
                K.step(child, actions[i], table, rules)
                while child[S_PHASE] != PHASE_OVER:
                    K.step(child, learned_action(child, weights, table, rules, rng, scratch, feats, logits), table, rules)
                sums[i] += chips(child, seat)
                totals[i] += 1.0
                worlds_out[i] += 1
        for j in range(live):
            rounds_out[alive[j]] = r + 1
            order[j] = -(sums[alive[j]] / totals[alive[j]] + bonus[alive[j]])
        ranked = alive[:live][np.argsort(order[:live], kind="mergesort")]
        live = (live + 1) // 2
        alive[:live] = ranked[:live]
    rounds_out[alive[0]] = rounds + 1
    for i in range(count):
        means[i] = sums[i] / totals[i]
