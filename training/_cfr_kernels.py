"""Compiled kernels of the CFR family: every function here is ``@njit(cache=True)``.

The Python modules ``cfr_tabular.py`` (exact tree, CFR, CFR+, best response), ``mccfr.py``
(external-sampling MCCFR) and ``abstraction.py`` (the full-game buckets) check inputs,
allocate the arrays and call these kernels; each section below belongs to one of them and
cites the equations it implements. Kernels write only into arguments named ``out`` or
``scratch`` or into the learning tables they are given (``regret``, ``strategy_sum``).

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
import numpy as np
from numba import njit, types
from numba.typed import Dict

from tiengow_env import _kernels as K
from tiengow_env._policy_kernels import combo_cost, keep_value  # the expert's discard rule, one definition
from tiengow_env.layout import (
    PHASE_DECLARE,
    PHASE_FOLLOW,
    PHASE_LEAD,
    PHASE_OVER,
    R_COMBOS,
    R_DECK,
    R_HAND_SIZE,
    R_PAR,
    R_PLAYERS,
    S_ACTED,
    S_BONUS,
    S_COLS,
    S_DEALT,
    S_DOWN,
    S_HAND,
    S_LEN,
    S_OWED,
    S_PHASE,
    S_SETTLE,
    S_SIZE,
    S_TO_ACT,
    S_UP,
    STAKE_SUPREME,
    T_BEAT_END,
    T_BEAT_START,
    T_MASK,
    T_SIZE,
    T_STAKE,
    T_STRENGTH,
)
from tiengow_env.tiles import NUM_TYPES, TILE_TYPE, TILE_WORTH, TYPE_MASK

_TILE_TYPE = TILE_TYPE.astype(np.int64)
_TYPE_MASK = TYPE_MASK.astype(np.int64)
UNIT = 1.0 / 2147483648.0  # 2**-31: rand_below(rng, 2**31) * UNIT is uniform in [0, 1)


@njit(cache=True)
def uniform(rng):
    """A float uniform in [0, 1) from the core's generator."""
    return K.rand_below(rng, 2147483648) * UNIT


@njit(cache=True)
def net_chips(state, seat):
    return float(state[S_BONUS + seat] + state[S_SETTLE + seat])


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


# ============================================================================ the exact tree
# A flat game tree of a small rule set (cfr_tabular.GameTree). Node n: ``player[n]`` (the seat
# to act, -1 at a terminal), ``infoset[n]``, ``first_child[n]`` and ``num_children[n]`` (the
# children are contiguous, in the order of the legal actions), ``depth[n]`` (decisions since
# the deal), ``utility[n, p]`` (terminal chips). Nodes 0..D-1 are the deal roots. A node's
# children always come after it, so ascending index order visits parents first.
#
# Information sets (tiengow_env/tree.py): seat s's key is its seat, its dealt hand and its
# view of the decisions so far. The view is interned as a sequence id: each decision (seat,
# action) appends the event the observer sees, with another seat's face-down tile hidden.

@njit(cache=True)
def _event(seat, action, observer, combos, num_actions, players, face_up):
    """What ``observer`` sees of ``seat`` taking ``action``: 1 + action, or 0 for a hidden tile."""
    seen = action + 1
    if not face_up and seat != observer and combos <= action < combos + NUM_TYPES:
        seen = 0
    return seat * (num_actions + 1) + seen


@njit(cache=True)
def count_tree_nodes(hands, banker, table, rules):
    """Nodes of the action tree over the deals ``hands`` (D, MAX_SEATS), terminals included."""
    scratch = np.empty(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    stack = np.empty((4096, S_LEN), dtype=np.int64)
    total = 0
    for d in range(hands.shape[0]):
        K.new_hand(stack[0], hands[d], banker, 1, table, rules)
        top = 1
        while top > 0:
            top -= 1
            total += 1
            if stack[top, S_PHASE] == PHASE_OVER:
                continue
            n = K.legal_actions(stack[top], table, rules, scratch)
            parent = stack[top].copy()
            for k in range(n):
                stack[top + k, :] = parent
                K.step(stack[top + k], scratch[k], table, rules)
            top += n
    return total


@njit(cache=True)
def build_tree(hands, banker, table, rules, num_actions, face_up, num_nodes,
               out_player, out_infoset, out_first_child, out_num_children, out_depth, out_utility,
               out_info_player, out_info_offset, out_info_size, out_info_depth, out_info_key, out_slot_action):
    """Fill the flat tree (layout above); return (nodes, information sets, slots, error).

    ``error`` is 0, or 1 when two nodes of one information set disagree on the legal actions
    or on the depth (which would break perfect recall)."""
    players = rules[R_PLAYERS]
    combos = rules[R_COMBOS]
    events = players * (num_actions + 1)
    scratch = np.empty(combos + NUM_TYPES + 2, dtype=np.int64)
    stack = np.empty((4096, S_LEN), dtype=np.int64)
    stack_node = np.empty(4096, dtype=np.int64)
    stack_seq = np.zeros((4096, players), dtype=np.int64)
    sequences = Dict.empty(key_type=types.int64, value_type=types.int64)
    infosets = Dict.empty(key_type=types.int64, value_type=types.int64)
    D = hands.shape[0]
    next_node = D
    num_infosets = 0
    num_slots = 0
    error = 0
    for d in range(D):
        K.new_hand(stack[0], hands[d], banker, 1, table, rules)
        stack_node[0] = d
        stack_seq[0, :] = 0
        out_depth[d] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack_node[top]
            state = stack[top].copy()
            seq = stack_seq[top].copy()
            if state[S_PHASE] == PHASE_OVER:
                out_player[node] = -1
                out_infoset[node] = -1
                out_first_child[node] = -1
                out_num_children[node] = 0
                for p in range(players):
                    out_utility[node, p] = net_chips(state, p)
                continue
            seat = state[S_TO_ACT]
            n = K.legal_actions(state, table, rules, scratch)
            key = (seq[seat] * players + seat) * (np.int64(1) << 32) + K.canonical(state[S_DEALT + seat])
            if key not in infosets:
                info = num_infosets
                infosets[key] = info
                out_info_player[info] = seat
                out_info_offset[info] = num_slots
                out_info_size[info] = n
                out_info_depth[info] = out_depth[node]
                out_info_key[info] = key
                for k in range(n):
                    out_slot_action[num_slots + k] = scratch[k]
                num_slots += n
                num_infosets += 1
            else:
                info = infosets[key]
                if out_info_size[info] != n or out_info_depth[info] != out_depth[node]:
                    error = 1
                else:
                    for k in range(n):
                        if out_slot_action[out_info_offset[info] + k] != scratch[k]:
                            error = 1
            out_player[node] = seat
            out_infoset[node] = info
            out_first_child[node] = next_node
            out_num_children[node] = n
            for k in range(n):
                child = next_node + k
                out_depth[child] = out_depth[node] + 1
                stack[top + k, :] = state
                K.step(stack[top + k], scratch[k], table, rules)
                stack_node[top + k] = child
                for o in range(players):
                    code = seq[o] * events + _event(seat, scratch[k], o, combos, num_actions, players, face_up)
                    if code in sequences:
                        nxt = sequences[code]
                    else:
                        nxt = len(sequences) + 1  # 0 is the empty sequence
                        sequences[code] = nxt
                    stack_seq[top + k, o] = nxt
            next_node += n
            top += n
    if next_node != num_nodes:
        error = 2
    return next_node, num_infosets, num_slots, error


# ============================================================================ CFR and CFR+
@njit(cache=True)
def cfr_pass(traverser, weight, plus, root_weight, player, infoset, first_child, num_children, utility,
             info_player, info_offset, info_size, regret, strategy_sum, scratch_sigma, scratch_reach_self,
             scratch_reach_other, scratch_value):
    """One CFR update of ``traverser``'s regrets and average strategy (alternating updates).

    Counterfactual value [Z07 eq. 5-7], with pi_{-i} the reach of chance and the other seats:
        v_i(sigma, h)        = sum_a sigma(h, a) v_i(sigma, ha),       v_i(z) = u_i(z)
        r(I, a)             += sum_{h in I} pi_{-i}(h) (v_i(sigma, ha) - v_i(sigma, h))
        S(I, a)             += w_t pi_i(h) sigma(I, a)       (w_t = 1, or t for CFR+ [T14])
    CFR+ [T14 eq. 3] keeps the cumulative regrets non-negative after the update:
        R+(I, a) = max(R+(I, a) + r(I, a), 0).
    The current strategy sigma^t comes from regret matching before the pass.
    """
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
def policy_values(policy, root_weight, player, infoset, first_child, num_children, utility, info_offset,
                  scratch_value, out):
    """Expected chips of every seat when all play ``policy`` (per slot): ``out[p]``."""
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
def best_response_value(responder, policy, root_weight, player, infoset, first_child, num_children, utility,
                        info_offset, info_size, level_nodes, level_start, scratch_reach, scratch_value,
                        scratch_action_value, out_best):
    """Value of ``responder``'s best response to the other seats playing ``policy``.

    With pi_{-i}(h) the reach of chance and the other seats, a best response picks at each of
    the responder's information sets, deepest first,
        a*(I) = argmax_a sum_{h in I} pi_{-i}(h) v_BR(ha),
    and v_BR(h) = v_BR(h a*(I)); elsewhere v_BR(h) = sum_a policy(h, a) v_BR(ha). Every node of
    an information set has the same depth (perfect recall; build_tree checks it), so the tree
    is valued level by level, from the deepest. ``out_best[I]`` receives a*(I) (slot index).
    """
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
def tree_traversal(root, traverser, weight, player, infoset, first_child, info_offset, info_size, utility, regret,
                   strategy_sum, rng, scratch_sigma, scratch_values, scratch_frames):
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
def es_mccfr_tree(first_iteration, iterations, linear, root_cdf, player, infoset, first_child, utility, info_offset,
                  info_size, regret, strategy_sum, rng, scratch_sigma):
    """``iterations`` ES-MCCFR iterations on the exact tree: per iteration, one traversal per
    seat (alternating), each from a deal sampled by its chance weight (``root_cdf``)."""
    players = utility.shape[1]
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
            tree_traversal(lo, traverser, weight, player, infoset, first_child, info_offset, info_size, utility,
                           regret, strategy_sum, rng, scratch_sigma, scratch_values, scratch_frames)


# ============================================================================ abstraction
# The full-game information and action abstraction (documented in abstraction.py). Abstract
# actions: leads 0..3, answers 4..6; each maps to one concrete first action id.
A_LEAD_BIG, A_LEAD_SURE, A_LEAD_LOW, A_LEAD_HIGH, A_BEAT_CHEAP, A_BEAT_STRONG, A_DISCARD = range(7)
NUM_ABSTRACT = 7
KIND_LEAD, KIND_FOLLOW = 0, 1
# Mixed-radix sizes of the bucket features (abstraction.py documents each one).
RADIX_TILES, RADIX_COLUMNS, RADIX_SURE, RADIX_ZERO, RADIX_SIZE, RADIX_ACTED = 11, 4, 5, 3, 5, 4
LEAD_KEYS = RADIX_TILES * RADIX_COLUMNS * RADIX_SURE * 2 * RADIX_ZERO * 16
FOLLOW_KEYS = RADIX_TILES * RADIX_SIZE * RADIX_ACTED * RADIX_COLUMNS * 2 * 2 * RADIX_SURE * 8
NUM_KEYS = LEAD_KEYS + FOLLOW_KEYS


@njit(cache=True)
def beatable(combo, pool, table):
    """Can a combination that beats ``combo`` be made from the tiles ``pool`` (any mask)?"""
    held = K.canonical(pool)
    for j in range(table[combo, T_BEAT_START], table[combo, T_BEAT_END]):
        if held & table[j, T_MASK] == table[j, T_MASK]:
            return True
    return False


@njit(cache=True)
def unseen_tiles(state, seat, rules):
    """Tiles ``seat`` has not seen: other hands and other seats' face-down tiles."""
    players = rules[R_PLAYERS]
    seen = state[S_HAND + seat] | state[S_DOWN + seat]
    for p in range(players):
        seen |= state[S_UP + p]
    return rules[R_DECK] & ~seen


@njit(cache=True)
def discard_action(state, seat, single_of_type, table, rules):
    """The rule-based discard: one tile of the type worth least to keep."""
    hand = state[S_HAND + seat]
    unseen = unseen_tiles(state, seat, rules)
    best_t = -1
    best_v = 1e18
    remaining = K.canonical(hand)
    while remaining:
        t = _TILE_TYPE[K.lowest_bit(remaining)]
        remaining &= ~_TYPE_MASK[t]
        v = keep_value(t, hand, unseen, single_of_type, table, rules)
        if v < best_v:
            best_v = v
            best_t = t
    return rules[R_COMBOS] + best_t


@njit(cache=True)
def _column_bucket(columns, par):
    if columns == 0:
        return 0
    if columns < par:
        return 1
    return 2 if columns == par else 3


@njit(cache=True)
def abstract_view(state, single_of_type, table, rules, scratch, out_options):
    """The acting seat's bucket key and abstract options (abstraction.py documents both).

    ``out_options[a]`` receives the concrete action of abstract action a, or -1 where a is not
    available or repeats an earlier option. Returns the key (0 .. NUM_KEYS-1), or -1 when the
    seat has no choice (then ``out_options[0]`` holds the action to take). Reads only what the
    acting seat may know: its own tiles, the face-up tiles, counts and columns.
    """
    out_options[:] = -1
    phase = state[S_PHASE]
    seat = state[S_TO_ACT]
    C = rules[R_COMBOS]
    players = rules[R_PLAYERS]
    par = rules[R_PAR]
    if phase == PHASE_DECLARE:
        out_options[0] = C + NUM_TYPES  # One Red Dot under `choice`: always declare
        return -1
    if phase == PHASE_FOLLOW and state[S_OWED] > 0:
        out_options[0] = discard_action(state, seat, single_of_type, table, rules)
        return -1
    n = K.legal_actions(state, table, rules, scratch)
    if n == 1:
        out_options[0] = scratch[0]
        return -1
    hand = state[S_HAND + seat]
    unseen = unseen_tiles(state, seat, rules)
    tiles = K.popcount(hand)
    columns = _column_bucket(state[S_COLS + seat], par)
    # Tiles of the hand that some sure lead (one that no unseen tiles can beat) would use.
    held = K.canonical(hand)
    sure_mask = np.int64(0)
    for j in range(C):
        m = table[j, T_MASK]
        if held & m == m and not beatable(j, unseen, table):
            sure_mask |= m
    sure = min(K.popcount(sure_mask), RADIX_SURE - 1)
    if phase == PHASE_LEAD:
        big, sure_lead, low, high = -1, -1, -1, -1
        supreme = 0
        for i in range(n):
            j = scratch[i]
            if big < 0 or table[j, T_SIZE] > table[big, T_SIZE] or (
                    table[j, T_SIZE] == table[big, T_SIZE] and table[j, T_STRENGTH] > table[big, T_STRENGTH]):
                big = j
            if table[j, T_STAKE] == STAKE_SUPREME:
                supreme = 1
            if not beatable(j, unseen, table):
                if sure_lead < 0 or table[j, T_SIZE] > table[sure_lead, T_SIZE] or (
                        table[j, T_SIZE] == table[sure_lead, T_SIZE]
                        and combo_cost(j, hand, unseen, single_of_type, table, rules)
                        < combo_cost(sure_lead, hand, unseen, single_of_type, table, rules)):
                    sure_lead = j
            if table[j, T_SIZE] == 1:
                t = _TILE_TYPE[K.lowest_bit(table[j, T_MASK])]
                if low < 0 or keep_value(t, hand, unseen, single_of_type, table, rules) < keep_value(
                        _TILE_TYPE[K.lowest_bit(table[low, T_MASK])], hand, unseen, single_of_type, table, rules):
                    low = j
                if high < 0 or TILE_WORTH[t] > TILE_WORTH[_TILE_TYPE[K.lowest_bit(table[high, T_MASK])]]:
                    high = j
        out_options[A_LEAD_BIG] = big
        if sure_lead >= 0 and sure_lead != big:
            out_options[A_LEAD_SURE] = sure_lead
        if low >= 0 and low != big and low != sure_lead:
            out_options[A_LEAD_LOW] = low
        if high >= 0 and high != big and high != sure_lead and high != low:
            out_options[A_LEAD_HIGH] = high
        mask = 0
        for a in range(1, 4):
            if out_options[a] >= 0:
                mask |= 1 << (a - 1)
        if mask == 0:
            return -1
        zero = 0
        for p in range(players):
            if p != seat and state[S_COLS + p] == 0:
                zero += 1
        key = min(tiles, RADIX_TILES - 1)
        key = key * RADIX_COLUMNS + columns
        key = key * RADIX_SURE + sure
        key = key * 2 + supreme
        key = key * RADIX_ZERO + min(zero, RADIX_ZERO - 1)
        key = key * 16 + mask
        return key
    # Following, before any tile of an answer: beats come first in the legal list, weakest first.
    cheap, strong, discard = -1, -1, -1
    for i in range(n):
        a = scratch[i]
        if a < C:
            if cheap < 0:
                cheap = a
            strong = a
        else:
            discard = a
    if cheap < 0:  # no beat: the rule-based discard
        out_options[0] = discard_action(state, seat, single_of_type, table, rules)
        return -1
    last = state[S_ACTED] == players - 1
    out_options[A_BEAT_CHEAP] = cheap
    if strong != cheap:
        out_options[A_BEAT_STRONG] = strong
    if discard >= 0:
        out_options[A_DISCARD] = discard_action(state, seat, single_of_type, table, rules)
    mask = (1 if strong != cheap else 0) | (2 if discard >= 0 else 0)
    if mask == 0:
        out_options[0] = cheap
        out_options[A_BEAT_CHEAP] = -1
        return -1
    cheap_sure = 1 if last or not beatable(cheap, unseen, table) else 0
    strong_sure = 1 if last or not beatable(strong, unseen, table) else 0
    key = min(tiles, RADIX_TILES - 1)
    key = key * RADIX_SIZE + state[S_SIZE]
    key = key * RADIX_ACTED + min(state[S_ACTED], RADIX_ACTED - 1)
    key = key * RADIX_COLUMNS + columns
    key = key * 2 + cheap_sure
    key = key * 2 + strong_sure
    key = key * RADIX_SURE + sure
    key = key * 8 + mask
    return LEAD_KEYS + key


@njit(cache=True)
def apply_abstract(state, action, single_of_type, table, rules):
    """Apply a concrete first action; a discard goes on by the discard rule until the seat has
    put down all the tiles it owes."""
    seat = state[S_TO_ACT]
    C = rules[R_COMBOS]
    K.step(state, action, table, rules)
    if C <= action < C + NUM_TYPES:
        while state[S_PHASE] == PHASE_FOLLOW and state[S_TO_ACT] == seat and state[S_OWED] > 0:
            K.step(state, discard_action(state, seat, single_of_type, table, rules), table, rules)


# ============================================================================ ES-MCCFR, full game
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
def game_traversal(start, traverser, weight, single_of_type, table, rules, regret, strategy_sum, rng, scratch,
                   scratch_state, scratch_frames, scratch_keys, scratch_options, scratch_sigma, scratch_values,
                   scratch_next):
    """External-sampling traversal [L09 Algorithm 1] of the abstract game from ``start``, played
    by the compiled core: regrets r~(I, a) = v~(I -> a) - v~(I) at the traverser's buckets; one
    sampled option elsewhere, whose seat adds sigma to its average strategy.

    The recursion is unrolled onto an explicit stack (numba cannot cache recursive functions):
    frame f keeps the state of an open traverser decision (``scratch_frames[f]``), its bucket,
    options, strategy, the values of the options explored so far and the next option to try.
    """
    state = scratch_state
    state[:] = start
    sigma = np.empty(NUM_ABSTRACT, dtype=np.float64)
    options = np.empty(NUM_ABSTRACT, dtype=np.int64)
    depth = 0
    while True:
        while state[S_PHASE] != PHASE_OVER:
            seat = state[S_TO_ACT]
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
        if state[S_PHASE] != PHASE_OVER:  # the traverser decides: open a frame, try its first option
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
    state = np.zeros(S_LEN, dtype=np.int64)
    frames = np.zeros((depth_max, S_LEN), dtype=np.int64)
    keys = np.zeros(depth_max, dtype=np.int64)
    options = np.zeros((depth_max, NUM_ABSTRACT), dtype=np.int64)
    sigma = np.zeros((depth_max, NUM_ABSTRACT), dtype=np.float64)
    values = np.zeros((depth_max, NUM_ABSTRACT), dtype=np.float64)
    nxt = np.zeros(depth_max, dtype=np.int64)
    scratch = np.zeros(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    hands = np.zeros(4, dtype=np.int64)
    start = np.zeros(S_LEN, dtype=np.int64)
    for t in range(first_iteration, first_iteration + iterations):
        weight = float(t + 1) if linear else 1.0
        K.deal(rng, rules, hands)
        banker = (K.rand_below(rng, 6) + K.rand_below(rng, 6) + 1) % players
        K.new_hand(start, hands, banker, 1, table, rules)
        for traverser in range(players):
            game_traversal(start, traverser, weight, single_of_type, table, rules, regret, strategy_sum, rng, scratch,
                           state, frames, keys, options, sigma, values, nxt)
    return 0


@njit(cache=True)
def policy_action(state, keys, probabilities, sample, single_of_type, table, rules, rng, scratch, options):
    """The action of a policy table (rows ``probabilities`` for the sorted bucket ``keys``) for
    the acting seat: -1 when the bucket is not in the table (the caller falls back)."""
    key = abstract_view(state, single_of_type, table, rules, scratch, options)
    if key < 0:
        return options[0]
    row = np.searchsorted(keys, key)
    if row >= keys.shape[0] or keys[row] != key:
        return -1
    total = 0.0
    for a in range(NUM_ABSTRACT):
        if options[a] >= 0:
            total += probabilities[row, a]
    if total <= 0.0:
        return -1
    if not sample:
        best = -1
        for a in range(NUM_ABSTRACT):
            if options[a] >= 0 and (best < 0 or probabilities[row, a] > probabilities[row, best]):
                best = a
        return options[best]
    u = uniform(rng) * total
    acc = 0.0
    last = -1
    for a in range(NUM_ABSTRACT):
        if options[a] >= 0:
            acc += probabilities[row, a]
            last = a
            if u < acc:
                return options[a]
    return options[last]
