"""Compiled kernels of CFR *learning*: every function here is ``@njit(cache=True)``.

The Python modules ``cfr_tabular.py`` (CFR, CFR+, best response) and ``mccfr.py``
(external-sampling MCCFR) check inputs, allocate the arrays and call these kernels; each
section below belongs to one of them and cites the equations it implements. What a policy
needs to play, and so what learning must share with play (the exact tree and its information
sets, the full-game abstraction), is in ``tiengow.agents._cfr_play_kernels``. Kernels write
only into arguments named ``out`` or ``scratch`` or into the learning tables they are given
(``regret``, ``strategy_sum``).

Randomness comes from the core's xorshift64 generator (``tiengow_env._kernels.seed_rng`` and
``rand_below``), seeded by the caller, so a seed gives the same run with or without the JIT.

References:
  [Z07]  Zinkevich, Johanson, Bowling, Piccione. Regret Minimization in Games with Incomplete
         Information. NIPS 2007.
  [HM00] Hart, Mas-Colell. A Simple Adaptive Procedure Leading to Correlated Equilibrium.
         Econometrica 2000 (regret matching).
  [T14]  Tammelin. Solving Large Imperfect Information Games Using CFR+. arXiv:1407.5042.
  [L09]  Lanctot, Waugh, Zinkevich, Bowling. Monte Carlo Sampling for Regret Minimization in
         Extensive Games. NIPS 2009.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from tiengow.agents._cfr_play_kernels import (
    NUM_ABSTRACT,
    abstract_view,
    discard_action,
    net_chips,
    uniform,
)
from tiengow_env import _kernels as K
from tiengow_env import _state_kernels as SK
from tiengow_env.layout import (
    PHASE_FOLLOW,
    PHASE_OVER,
    R_COMBOS,
    R_HAND_SIZE,
    R_PLAYERS,
    is_discard,
    legal_len,
)
from tiengow_env.state import STATE_LEN


class CfrScratch(NamedTuple):
    """Scratch of ``cfr_pass``: per slot, then per node (float64)."""

    sigma: np.ndarray  # (S,): the current strategy
    reach_self: np.ndarray  # (N,): the traverser's reach
    reach_other: np.ndarray  # (N,): the reach of chance and the other seats
    value: np.ndarray  # (N,): the traverser's value


class ResponseScratch(NamedTuple):
    """Scratch of ``best_response_value`` (float64)."""

    reach: np.ndarray  # (N,): the reach of chance and the other seats
    value: np.ndarray  # (N,): the best response's value
    action_value: np.ndarray  # (S,): per slot, the value of its action summed over the set


class TraversalScratch(NamedTuple):
    """Scratch of ``game_traversal``, one row per open frame (``depth_max`` rows)."""

    legal: np.ndarray  # int64 (legal_len(C),): legal_actions' list
    state: np.ndarray  # int64 (STATE_LEN,): the state being played
    frames: np.ndarray  # int64 (depth_max, STATE_LEN): the state of each open decision
    keys: np.ndarray  # int64 (depth_max,): its bucket
    options: np.ndarray  # int64 (depth_max, NUM_ABSTRACT): its concrete options
    sigma: np.ndarray  # float64 (depth_max, NUM_ABSTRACT): its strategy
    values: np.ndarray  # float64 (depth_max, NUM_ABSTRACT): the values of the options explored
    next: np.ndarray  # int64 (depth_max,): the next option to try


# ============================================================================ regret matching
@njit(cache=True)
def regret_matching(regret, offset, size, out):
    """Current strategy of one information set [HM00; Z07 eq. 8]:

        sigma(I, a) = R+(I, a) / sum_b R+(I, b)   if the sum is positive, else 1 / |A(I)|,

    with R+ = max(R, 0), over slots ``offset .. offset + size - 1`` of ``regret``."""
    total = 0.0
    for k in range(size):
        if regret[offset + k] > 0.0:
            total += regret[offset + k]
    for k in range(size):
        if total > 0.0:
            out[offset + k] = max(regret[offset + k], 0.0) / total
        else:
            out[offset + k] = 1.0 / size


@njit(cache=True)
def all_regret_matching(regret, info_offset, info_size, out):
    for info in range(info_offset.shape[0]):
        regret_matching(regret, info_offset[info], info_size[info], out)


@njit(cache=True)
def normalise(strategy_sum, info_offset, info_size, out):
    """Average strategy [Z07 eq. 4]: sigma_bar(I, a) = S(I, a) / sum_b S(I, b) (uniform if 0)."""
    for info in range(info_offset.shape[0]):
        off, size = info_offset[info], info_size[info]
        total = 0.0
        for k in range(size):
            total += strategy_sum[off + k]
        for k in range(size):
            out[off + k] = strategy_sum[off + k] / total if total > 0.0 else 1.0 / size


# ============================================================================ CFR and CFR+
@njit(cache=True)
def cfr_pass(traverser, weight, plus, tree, regret, strategy_sum, scratch):
    """One CFR update of ``traverser``'s regrets and average strategy (alternating updates).

    Counterfactual value [Z07 eq. 5-7], with pi_{-i} the reach of chance and the other seats:
        v_i(sigma, h)        = sum_a sigma(h, a) v_i(sigma, ha),       v_i(z) = u_i(z)
        r(I, a)             += sum_{h in I} pi_{-i}(h) (v_i(sigma, ha) - v_i(sigma, h))
        S(I, a)             += w_t pi_i(h) sigma(I, a)       (w_t = 1, or t for CFR+ [T14])
    CFR+ [T14 eq. 3] keeps the cumulative regrets non-negative after the update:
        R+(I, a) = max(R+(I, a) + r(I, a), 0).
    The current strategy sigma^t comes from regret matching before the pass. ``tree`` is a
    TreeArrays, ``scratch`` a CfrScratch.
    """
    root_weight, player, infoset, first_child = tree.root_weight, tree.player, tree.infoset, tree.first_child
    num_children, utility = tree.num_children, tree.utility
    info_player, info_offset, info_size = tree.info_player, tree.info_offset, tree.info_size
    scratch_sigma, scratch_reach_self, scratch_reach_other, scratch_value = scratch
    all_regret_matching(regret, info_offset, info_size, scratch_sigma)
    N = player.shape[0]
    D = root_weight.shape[0]
    for d in range(D):
        scratch_reach_self[d] = 1.0
        scratch_reach_other[d] = root_weight[d]
    for node in range(N):  # top-down: parents come before their children
        p = player[node]
        if p < 0:
            continue
        off = info_offset[infoset[node]]
        c0 = first_child[node]
        for k in range(num_children[node]):
            if p == traverser:
                scratch_reach_self[c0 + k] = scratch_reach_self[node] * scratch_sigma[off + k]
                scratch_reach_other[c0 + k] = scratch_reach_other[node]
            else:
                scratch_reach_self[c0 + k] = scratch_reach_self[node]
                scratch_reach_other[c0 + k] = scratch_reach_other[node] * scratch_sigma[off + k]
    for node in range(N - 1, -1, -1):  # bottom-up
        p = player[node]
        if p < 0:
            scratch_value[node] = utility[node, traverser]
            continue
        off = info_offset[infoset[node]]
        c0 = first_child[node]
        value = 0.0
        for k in range(num_children[node]):
            value += scratch_sigma[off + k] * scratch_value[c0 + k]
        scratch_value[node] = value
        if p == traverser:
            other = scratch_reach_other[node]
            mine = scratch_reach_self[node]
            for k in range(num_children[node]):
                regret[off + k] += other * (scratch_value[c0 + k] - value)
                strategy_sum[off + k] += weight * mine * scratch_sigma[off + k]
    if plus:
        for info in range(info_player.shape[0]):
            if info_player[info] == traverser:
                for k in range(info_size[info]):
                    s = info_offset[info] + k
                    if regret[s] < 0.0:
                        regret[s] = 0.0
    root_value = 0.0
    for d in range(D):
        root_value += root_weight[d] * scratch_value[d]
    return root_value


# ============================================================================ best response
@njit(cache=True)
def policy_values(policy, tree, scratch_value, out):
    """Expected chips of every seat when all play ``policy`` (per slot) on ``tree`` (a
    TreeArrays): ``out[p]``."""
    root_weight, player, infoset, first_child = tree.root_weight, tree.player, tree.infoset, tree.first_child
    num_children, utility = tree.num_children, tree.utility
    info_offset = tree.info_offset
    N = player.shape[0]
    P = utility.shape[1]
    for node in range(N - 1, -1, -1):
        if player[node] < 0:
            for p in range(P):
                scratch_value[node, p] = utility[node, p]
            continue
        off = info_offset[infoset[node]]
        c0 = first_child[node]
        for p in range(P):
            value = 0.0
            for k in range(num_children[node]):
                value += policy[off + k] * scratch_value[c0 + k, p]
            scratch_value[node, p] = value
    out[:] = 0.0
    for d in range(root_weight.shape[0]):
        for p in range(P):
            out[p] += root_weight[d] * scratch_value[d, p]


@njit(cache=True)
def best_response_value(responder, policy, tree, scratch, out_best):
    """Value of ``responder``'s best response to the other seats playing ``policy``.

    With pi_{-i}(h) the reach of chance and the other seats, a best response picks at each of
    the responder's information sets, deepest first,
        a*(I) = argmax_a sum_{h in I} pi_{-i}(h) v_BR(ha),
    and v_BR(h) = v_BR(h a*(I)); elsewhere v_BR(h) = sum_a policy(h, a) v_BR(ha). Every node of
    an information set has the same depth (perfect recall; build_tree checks it), so the tree
    is valued level by level, from the deepest. ``out_best[I]`` receives a*(I) (slot index).
    ``tree`` is a TreeArrays, ``scratch`` a ResponseScratch.
    """
    root_weight, player, infoset, first_child = tree.root_weight, tree.player, tree.infoset, tree.first_child
    num_children, utility = tree.num_children, tree.utility
    info_offset, info_size = tree.info_offset, tree.info_size
    level_nodes, level_start = tree.level_nodes, tree.level_start
    scratch_reach, scratch_value, scratch_action_value = scratch
    N = player.shape[0]
    D = root_weight.shape[0]
    for d in range(D):
        scratch_reach[d] = root_weight[d]
    for node in range(N):
        p = player[node]
        if p < 0:
            continue
        off = info_offset[infoset[node]]
        c0 = first_child[node]
        for k in range(num_children[node]):
            scratch_reach[c0 + k] = scratch_reach[node] * (1.0 if p == responder else policy[off + k])
    scratch_action_value[:] = 0.0
    out_best[:] = -1
    for level in range(level_start.shape[0] - 2, -1, -1):
        lo, hi = level_start[level], level_start[level + 1]
        for i in range(lo, hi):  # the responder's action values at this depth
            node = level_nodes[i]
            if player[node] == responder:
                off = info_offset[infoset[node]]
                c0 = first_child[node]
                for k in range(num_children[node]):
                    scratch_action_value[off + k] += scratch_reach[node] * scratch_value[c0 + k]
        for i in range(lo, hi):
            node = level_nodes[i]
            p = player[node]
            if p < 0:
                scratch_value[node] = utility[node, responder]
                continue
            info = infoset[node]
            off = info_offset[info]
            c0 = first_child[node]
            if p == responder:
                if out_best[info] < 0:
                    best = 0
                    for k in range(1, info_size[info]):
                        if scratch_action_value[off + k] > scratch_action_value[off + best]:
                            best = k
                    out_best[info] = best
                scratch_value[node] = scratch_value[c0 + out_best[info]]
            else:
                value = 0.0
                for k in range(num_children[node]):
                    value += policy[off + k] * scratch_value[c0 + k]
                scratch_value[node] = value
    total = 0.0
    for d in range(D):
        total += root_weight[d] * scratch_value[d]
    return total


# ============================================================================ ES-MCCFR, exact tree
@njit(cache=True)
def sample_slot(sigma, offset, size, rng):
    """A slot drawn from the distribution ``sigma[offset : offset + size]``."""
    u = uniform(rng)
    acc = 0.0
    for k in range(size):
        acc += sigma[offset + k]
        if u < acc:
            return k
    return size - 1


@njit(cache=True)
def tree_traversal(
    root, traverser, weight, tree, regret, strategy_sum, rng, scratch_sigma, scratch_values, scratch_frames
):
    """External sampling [L09 section 3.2, Algorithm 1]: one sampled traversal from ``root``.

    At the traverser's nodes every action is explored and the sampled counterfactual regret
        r~(I, a) = v~_i(sigma_{I->a}, h) - v~_i(sigma, h)
    is added (the importance weights cancel under external sampling [L09 eq. 9]). At the
    other seats' nodes one action is sampled from sigma, and sigma is added to that seat's
    average strategy (weighted by ``weight``: 1, or t for linear averaging).

    The recursion is unrolled onto an explicit stack (numba cannot cache recursive
    functions): ``scratch_frames[f]`` is an open traverser node, ``scratch_values[f, k]`` the
    values of its children explored so far.
    """
    player, infoset, first_child, utility = tree.player, tree.infoset, tree.first_child, tree.utility
    info_offset, info_size = tree.info_offset, tree.info_size
    depth = 0
    node = root
    while True:
        while player[node] >= 0 and player[node] != traverser:  # the other seats: sample one move
            info = infoset[node]
            off, size = info_offset[info], info_size[info]
            regret_matching(regret, off, size, scratch_sigma)
            for k in range(size):
                strategy_sum[off + k] += weight * scratch_sigma[off + k]
            node = first_child[node] + sample_slot(scratch_sigma, off, size, rng)
        if player[node] == traverser:  # open a frame; explore its first child
            scratch_frames[depth, 0] = node
            scratch_frames[depth, 1] = 0
            depth += 1
            node = first_child[node]
            continue
        value = utility[node, traverser]
        while True:  # close every frame whose children are all explored
            if depth == 0:
                return value
            frame = scratch_frames[depth - 1, 0]
            k = scratch_frames[depth - 1, 1]
            scratch_values[depth - 1, k] = value
            info = infoset[frame]
            off, size = info_offset[info], info_size[info]
            if k + 1 < size:
                scratch_frames[depth - 1, 1] = k + 1
                node = first_child[frame] + k + 1
                break
            regret_matching(regret, off, size, scratch_sigma)
            value = 0.0
            for j in range(size):
                value += scratch_sigma[off + j] * scratch_values[depth - 1, j]
            for j in range(size):
                regret[off + j] += scratch_values[depth - 1, j] - value
            depth -= 1


@njit(cache=True)
def es_mccfr_tree(first_iteration, iterations, linear, root_cdf, tree, regret, strategy_sum, rng, scratch_sigma):
    """``iterations`` ES-MCCFR iterations on the exact tree (a TreeArrays): per iteration, one
    traversal per seat (alternating), each from a deal sampled by its chance weight (``root_cdf``)."""
    players = tree.utility.shape[1]
    info_size = tree.info_size
    D = root_cdf.shape[0]
    widest = 1
    for info in range(info_size.shape[0]):
        widest = max(widest, info_size[info])
    scratch_values = np.zeros((256, widest), dtype=np.float64)
    scratch_frames = np.zeros((256, 2), dtype=np.int64)
    for t in range(first_iteration, first_iteration + iterations):
        weight = float(t + 1) if linear else 1.0
        for traverser in range(players):
            u = uniform(rng) * root_cdf[D - 1]
            lo, hi = 0, D - 1
            while lo < hi:  # first root whose cumulative weight exceeds u
                mid = (lo + hi) // 2
                if root_cdf[mid] > u:
                    hi = mid
                else:
                    lo = mid + 1
            tree_traversal(
                lo, traverser, weight, tree, regret, strategy_sum, rng, scratch_sigma, scratch_values, scratch_frames
            )


# ============================================================================ ES-MCCFR, full game
@njit(cache=True)
def apply_abstract(state, action, single_of_type, table, rules):
    """Apply a concrete first action; a discard goes on by the discard rule until the seat has
    put down all the tiles it owes."""
    seat = SK.to_act(state)
    C = rules[R_COMBOS]
    K.step(state, action, table, rules)
    if is_discard(action, C):
        while SK.phase(state) == PHASE_FOLLOW and SK.to_act(state) == seat and SK.owed(state) > 0:
            K.step(state, discard_action(state, seat, single_of_type, table, rules), table, rules)


@njit(cache=True)
def _current_strategy(regret, key, options, out):
    """Regret matching [HM00] over the available options of bucket ``key``."""
    total = 0.0
    count = 0
    for a in range(NUM_ABSTRACT):
        if options[a] >= 0:
            count += 1
            if regret[key, a] > 0.0:
                total += regret[key, a]
    for a in range(NUM_ABSTRACT):
        if options[a] < 0:
            out[a] = 0.0
        elif total > 0.0:
            out[a] = max(regret[key, a], 0.0) / total
        else:
            out[a] = 1.0 / count


@njit(cache=True)
def game_traversal(start, traverser, weight, single_of_type, table, rules, regret, strategy_sum, rng, work):
    """External-sampling traversal [L09 Algorithm 1] of the abstract game from ``start``, played
    by the compiled core: regrets r~(I, a) = v~(I -> a) - v~(I) at the traverser's buckets; one
    sampled option elsewhere, whose seat adds sigma to its average strategy.

    The recursion is unrolled onto an explicit stack (numba cannot cache recursive functions):
    frame f keeps the state of an open traverser decision (``scratch_frames[f]``), its bucket,
    options, strategy, the values of the options explored so far and the next option to try
    (``work``, a TraversalScratch).
    """
    (
        scratch,
        scratch_state,
        scratch_frames,
        scratch_keys,
        scratch_options,
        scratch_sigma,
        scratch_values,
        scratch_next,
    ) = work
    state = scratch_state
    state[:] = start
    sigma = np.empty(NUM_ABSTRACT, dtype=np.float64)
    options = np.empty(NUM_ABSTRACT, dtype=np.int64)
    depth = 0
    while True:
        while SK.phase(state) != PHASE_OVER:
            seat = SK.to_act(state)
            key = abstract_view(state, single_of_type, table, rules, scratch, options)
            if key < 0:
                apply_abstract(state, options[0], single_of_type, table, rules)
                continue
            _current_strategy(regret, key, options, sigma)
            if seat == traverser:
                break
            u = uniform(rng)
            pick = -1
            acc = 0.0
            for a in range(NUM_ABSTRACT):
                if options[a] >= 0:
                    strategy_sum[key, a] += weight * sigma[a]
                    acc += sigma[a]
                    if pick < 0 and u < acc:
                        pick = a
            if pick < 0:
                for a in range(NUM_ABSTRACT):
                    if options[a] >= 0:
                        pick = a
            apply_abstract(state, options[pick], single_of_type, table, rules)
        if SK.phase(state) != PHASE_OVER:  # the traverser decides: open a frame, try its first option
            scratch_frames[depth, :] = state
            scratch_keys[depth] = key
            scratch_options[depth, :] = options
            scratch_sigma[depth, :] = sigma
            first = 0
            while options[first] < 0:
                first += 1
            scratch_next[depth] = first
            depth += 1
            apply_abstract(state, options[first], single_of_type, table, rules)
            continue
        value = net_chips(state, traverser)
        while True:  # close every frame whose options are all explored
            if depth == 0:
                return value
            f = depth - 1
            a = scratch_next[f]
            scratch_values[f, a] = value
            a += 1
            while a < NUM_ABSTRACT and scratch_options[f, a] < 0:
                a += 1
            if a < NUM_ABSTRACT:
                scratch_next[f] = a
                state[:] = scratch_frames[f]
                apply_abstract(state, scratch_options[f, a], single_of_type, table, rules)
                break
            value = 0.0
            for b in range(NUM_ABSTRACT):
                if scratch_options[f, b] >= 0:
                    value += scratch_sigma[f, b] * scratch_values[f, b]
            key = scratch_keys[f]
            for b in range(NUM_ABSTRACT):
                if scratch_options[f, b] >= 0:
                    regret[key, b] += scratch_values[f, b] - value
            depth -= 1


@njit(cache=True)
def es_mccfr_game(first_iteration, iterations, linear, table, rules, single_of_type, regret, strategy_sum, rng):
    """``iterations`` ES-MCCFR iterations of the abstract full game: per iteration one random
    deal and dice banker (RULES.md section 3), then one traversal per seat on that deal."""
    players = rules[R_PLAYERS]
    depth_max = 4 * rules[R_HAND_SIZE] * players + 8  # more than the decisions of one hand
    state = np.zeros(STATE_LEN, dtype=np.int64)
    frames = np.zeros((depth_max, STATE_LEN), dtype=np.int64)
    keys = np.zeros(depth_max, dtype=np.int64)
    options = np.zeros((depth_max, NUM_ABSTRACT), dtype=np.int64)
    sigma = np.zeros((depth_max, NUM_ABSTRACT), dtype=np.float64)
    values = np.zeros((depth_max, NUM_ABSTRACT), dtype=np.float64)
    nxt = np.zeros(depth_max, dtype=np.int64)
    scratch = np.zeros(legal_len(rules[R_COMBOS]), dtype=np.int64)
    hands = np.zeros(4, dtype=np.int64)
    start = np.zeros(STATE_LEN, dtype=np.int64)
    work = TraversalScratch(scratch, state, frames, keys, options, sigma, values, nxt)
    for t in range(first_iteration, first_iteration + iterations):
        weight = float(t + 1) if linear else 1.0
        K.deal(rng, rules, hands)
        banker = K.dice_banker(rng, players)
        K.new_hand(start, hands, banker, 1, table, rules)
        for traverser in range(players):
            game_traversal(start, traverser, weight, single_of_type, table, rules, regret, strategy_sum, rng, work)
    return 0
