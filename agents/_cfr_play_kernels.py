"""Compiled kernels a CFR policy needs to *play*: every function here is ``@njit(cache=True)``.

The trainers (``training/_cfr_kernels.py``, ``cfr_tabular.py``, ``mccfr.py``) learn over
exactly these definitions, so that a policy means the same thing in training and in play:

* the exact game tree of a small rule set (``exact_tree.py``): its walk, which numbers the
  information sets and their action slots (the index of a tabular policy), and the hash of
  what the acting seat can see, by which a tabular policy finds its information set in play;
* the full-game abstraction (``abstraction.py``): bucket keys, abstract options, the
  rule-based discard, and the action of an abstract policy table.

Randomness comes from the core's xorshift64 generator (``tiengow_env._kernels.seed_rng`` and
``rand_below``), seeded by the caller, so a seed gives the same play with or without the JIT.
"""

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.typed import Dict

from tiengow_env import _kernels as K
from tiengow_env import _state_kernels as SK
from tiengow_env._policy_kernels import combo_cost, keep_value  # the expert's discard rule, one definition
from tiengow_env.layout import (
    LOG_LEADER,
    LOG_SIZE,
    LOG_WINNER,
    LOG_WINNING,
    MAX_SEATS,
    MAX_TRICKS,
    PHASE_DECLARE,
    PHASE_FOLLOW,
    PHASE_LEAD,
    PHASE_OVER,
    R_COMBOS,
    R_DECK,
    R_PAR,
    R_PLAYERS,
    STAKE_SUPREME,
    T_BEAT_END,
    T_BEAT_START,
    T_MASK,
    T_SIZE,
    T_STAKE,
    T_STRENGTH,
    declare_action,
    is_discard,
    legal_len,
)
from tiengow_env.state import STATE_LEN
from tiengow_env.tiles import TILE_TYPE, TILE_WORTH, TYPE_MASK

_TILE_TYPE = TILE_TYPE.astype(np.int64)
_TYPE_MASK = TYPE_MASK.astype(np.int64)
UNIT = 1.0 / 2147483648.0  # 2**-31: rand_below(rng, 2**31) * UNIT is uniform in [0, 1)


@njit(cache=True)
def uniform(rng):
    """A float uniform in [0, 1) from the core's generator."""
    return K.rand_below(rng, 2147483648) * UNIT


@njit(cache=True)
def net_chips(state, seat):
    return float(SK.chips(state, seat))


# ============================================================================ the exact tree
# A flat game tree of a small rule set (exact_tree.GameTree). Node n: ``player[n]`` (the seat
# to act, -1 at a terminal), ``infoset[n]``, ``first_child[n]`` and ``num_children[n]`` (the
# children are contiguous, in the order of the legal actions), ``depth[n]`` (decisions since
# the deal), ``utility[n, p]`` (terminal chips). Nodes 0..D-1 are the deal roots. A node's
# children always come after it, so ascending index order visits parents first.
#
# Information sets (tiengow_env/tree.py): seat s's key is its seat, its dealt hand and its
# view of the decisions so far. The view is interned as a sequence id: each decision (seat,
# action) appends the event the observer sees, with another seat's face-down tile hidden.
# ``out.view_hash[n]`` (when that array is not empty) receives ``view_hash`` of decision node n
# (0 at terminals): the tabular agent finds its information set in play by that hash.


class TreeArrays(NamedTuple):
    """The flat tree as the CFR kernels read it (the arrays of ``exact_tree.GameTree``)."""

    root_weight: np.ndarray  # float64 (D,): chance probability of each deal
    player: np.ndarray  # int64 (N,): seat to act, -1 at a terminal
    infoset: np.ndarray  # int64 (N,)
    first_child: np.ndarray  # int64 (N,)
    num_children: np.ndarray  # int64 (N,)
    utility: np.ndarray  # float64 (N, P): terminal chips per seat
    info_player: np.ndarray  # int64 (I,)
    info_offset: np.ndarray  # int64 (I,): first slot
    info_size: np.ndarray  # int64 (I,): legal actions
    level_nodes: np.ndarray  # int64 (N,): nodes sorted by depth
    level_start: np.ndarray  # int64: level_nodes[level_start[d]:level_start[d + 1]] are at depth d


class TreeBuild(NamedTuple):
    """What ``build_tree`` fills: per node (N rows) and per information set or slot (N rows
    at most; the counts it returns say how many are used)."""

    player: np.ndarray
    infoset: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    depth: np.ndarray
    utility: np.ndarray
    info_player: np.ndarray
    info_offset: np.ndarray
    info_size: np.ndarray
    info_depth: np.ndarray
    info_key: np.ndarray
    slot_action: np.ndarray
    view_hash: np.ndarray  # empty: no view hashes


VIEW_LEN = 14 + 7 * MAX_SEATS + 4 * MAX_TRICKS
_M1, _M2, _BASE = 1_000_000_007, 998_244_353, 1_000_003  # two primes: a 60-bit polynomial hash


@njit(cache=True)
def visible_view(state, face_up, rules, out):
    """What the acting seat sees, as integers in ``out`` (``VIEW_LEN``, zero padded), with seats
    counted from the banker.

    The view is the seat's own dealt tiles, hand and face-down tiles; every seat's face-up
    tiles, tiles in hand, face-down count (the tiles too under ``face_up``), columns and trick
    bonus; the current trick (its leader, size, best combination and owner, how many have
    acted, the face-up tiles each seat has put on the table, and the seat's own face-down
    ones: another seat that acted without a face-up play gave up ``size`` tiles); the
    completed tricks (leader, winner, size, winning combination); the phase, the tiles the seat
    still owes, early death and the One Red Dot declarer. Hidden tiles and the banker's streak
    are left out. Physical copies are read as types (``canonical``) and seats relative to the
    banker, so a deal of the exact tree (banker fixed, copies in seat order) and the same deal
    with another banker or other copies give the same view.
    """
    players = rules[R_PLAYERS]
    banker = SK.banker(state)
    seat = SK.to_act(state)
    out[:] = 0
    out[0] = (seat - banker) % players
    out[1] = SK.phase(state)
    out[2] = SK.owed(state)
    out[3] = SK.size(state)
    out[4] = SK.acted(state)
    out[5] = (SK.leader(state) - banker) % players if SK.leader(state) >= 0 else -1
    out[6] = SK.best(state)
    out[7] = (SK.best_seat(state) - banker) % players if SK.best_seat(state) >= 0 else -1
    out[8] = SK.tricks_done(state)
    out[9] = SK.doomed(state)
    out[10] = (SK.declarer(state) - banker) % players if SK.declarer(state) >= 0 else -1
    out[11] = K.canonical(SK.dealt(state, seat))
    out[12] = K.canonical(SK.hand(state, seat))
    out[13] = K.canonical(SK.down(state, seat))
    i = 14
    for q in range(players):
        p = (banker + q) % players
        down = SK.down(state, p)
        on_table = SK.on_table(state, p)
        shown = face_up or p == seat
        out[i] = K.canonical(SK.up(state, p))
        out[i + 1] = K.popcount(SK.hand(state, p))
        out[i + 2] = K.canonical(down) if shown else K.popcount(down)
        out[i + 3] = SK.columns(state, p)
        out[i + 4] = SK.bonus(state, p)
        out[i + 5] = K.canonical(on_table & ~down)
        out[i + 6] = K.canonical(on_table & down) if shown else 0  # how many follows from the acted seats
        i += 7
    i = 14 + 7 * MAX_SEATS
    for k in range(SK.tricks_done(state)):
        out[i] = (SK.trick_log(state, k, LOG_LEADER) - banker) % players
        out[i + 1] = (SK.trick_log(state, k, LOG_WINNER) - banker) % players
        out[i + 2] = SK.trick_log(state, k, LOG_SIZE)
        out[i + 3] = SK.trick_log(state, k, LOG_WINNING)
        i += 4


@njit(cache=True)
def view_hash(state, face_up, rules, scratch_view):
    """A 60-bit hash of ``visible_view`` (two polynomial hashes modulo primes; Python's
    integer semantics, so the same value with or without the JIT)."""
    visible_view(state, face_up, rules, scratch_view)
    h1, h2 = 0, 0
    for i in range(scratch_view.shape[0]):
        x = scratch_view[i]
        h1 = (h1 * _BASE + x % _M1) % _M1
        h2 = (h2 * _BASE + x % _M2) % _M2
    return h1 * _M2 + h2


@njit(cache=True)
def _event(seat, action, observer, combos, num_actions, players, face_up):
    """What ``observer`` sees of ``seat`` taking ``action``: 1 + action, or 0 for a hidden tile."""
    seen = action + 1
    if not face_up and seat != observer and is_discard(action, combos):
        seen = 0
    return seat * (num_actions + 1) + seen


@njit(cache=True)
def count_tree_nodes(hands, banker, table, rules):
    """Nodes of the action tree over the deals ``hands`` (D, MAX_SEATS), terminals included."""
    scratch = np.empty(legal_len(rules[R_COMBOS]), dtype=np.int64)
    stack = np.empty((4096, STATE_LEN), dtype=np.int64)
    total = 0
    for d in range(hands.shape[0]):
        K.new_hand(stack[0], hands[d], banker, 1, table, rules)
        top = 1
        while top > 0:
            top -= 1
            total += 1
            if SK.phase(stack[top]) == PHASE_OVER:
                continue
            n = K.legal_actions(stack[top], table, rules, scratch)
            parent = stack[top].copy()
            for k in range(n):
                stack[top + k, :] = parent
                K.step(stack[top + k], scratch[k], table, rules)
            top += n
    return total


@njit(cache=True)
def build_tree(hands, banker, table, rules, num_actions, face_up, num_nodes, out):
    """Fill the flat tree ``out`` (a TreeBuild; layout above); return (nodes, information sets,
    slots, error).

    ``error`` is 0, or 1 when two nodes of one information set disagree on the legal actions
    or on the depth (which would break perfect recall)."""
    players = rules[R_PLAYERS]
    combos = rules[R_COMBOS]
    events = players * (num_actions + 1)
    scratch = np.empty(legal_len(combos), dtype=np.int64)
    stack = np.empty((4096, STATE_LEN), dtype=np.int64)
    stack_node = np.empty(4096, dtype=np.int64)
    stack_seq = np.zeros((4096, players), dtype=np.int64)
    sequences = Dict.empty(key_type=types.int64, value_type=types.int64)
    infosets = Dict.empty(key_type=types.int64, value_type=types.int64)
    views = out.view_hash.shape[0] > 0
    scratch_view = np.empty(VIEW_LEN, dtype=np.int64)
    D = hands.shape[0]
    next_node = D
    num_infosets = 0
    num_slots = 0
    error = 0
    for d in range(D):
        K.new_hand(stack[0], hands[d], banker, 1, table, rules)
        stack_node[0] = d
        stack_seq[0, :] = 0
        out.depth[d] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack_node[top]
            state = stack[top].copy()
            seq = stack_seq[top].copy()
            if SK.phase(state) == PHASE_OVER:
                out.player[node] = -1
                out.infoset[node] = -1
                out.first_child[node] = -1
                out.num_children[node] = 0
                for p in range(players):
                    out.utility[node, p] = net_chips(state, p)
                if views:
                    out.view_hash[node] = 0
                continue
            seat = SK.to_act(state)
            n = K.legal_actions(state, table, rules, scratch)
            key = (seq[seat] * players + seat) * (np.int64(1) << 32) + K.canonical(SK.dealt(state, seat))
            if key not in infosets:
                info = num_infosets
                infosets[key] = info
                out.info_player[info] = seat
                out.info_offset[info] = num_slots
                out.info_size[info] = n
                out.info_depth[info] = out.depth[node]
                out.info_key[info] = key
                for k in range(n):
                    out.slot_action[num_slots + k] = scratch[k]
                num_slots += n
                num_infosets += 1
            else:
                info = infosets[key]
                if out.info_size[info] != n or out.info_depth[info] != out.depth[node]:
                    error = 1
                else:
                    for k in range(n):
                        if out.slot_action[out.info_offset[info] + k] != scratch[k]:
                            error = 1
            out.player[node] = seat
            out.infoset[node] = info
            if views:
                out.view_hash[node] = view_hash(state, face_up, rules, scratch_view)
            out.first_child[node] = next_node
            out.num_children[node] = n
            for k in range(n):
                child = next_node + k
                out.depth[child] = out.depth[node] + 1
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
    seen = SK.hand(state, seat) | SK.down(state, seat)
    for p in range(players):
        seen |= SK.up(state, p)
    return rules[R_DECK] & ~seen


@njit(cache=True)
def discard_action(state, seat, single_of_type, table, rules):
    """The rule-based discard: one tile of the type worth least to keep."""
    hand = SK.hand(state, seat)
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
    phase = SK.phase(state)
    seat = SK.to_act(state)
    C = rules[R_COMBOS]
    players = rules[R_PLAYERS]
    par = rules[R_PAR]
    if phase == PHASE_DECLARE:
        out_options[0] = declare_action(C)  # One Red Dot under `choice`: always declare
        return -1
    if phase == PHASE_FOLLOW and SK.owed(state) > 0:
        out_options[0] = discard_action(state, seat, single_of_type, table, rules)
        return -1
    n = K.legal_actions(state, table, rules, scratch)
    if n == 1:
        out_options[0] = scratch[0]
        return -1
    hand = SK.hand(state, seat)
    unseen = unseen_tiles(state, seat, rules)
    tiles = K.popcount(hand)
    columns = _column_bucket(SK.columns(state, seat), par)
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
            if (
                big < 0
                or table[j, T_SIZE] > table[big, T_SIZE]
                or (table[j, T_SIZE] == table[big, T_SIZE] and table[j, T_STRENGTH] > table[big, T_STRENGTH])
            ):
                big = j
            if table[j, T_STAKE] == STAKE_SUPREME:
                supreme = 1
            if not beatable(j, unseen, table):
                if (
                    sure_lead < 0
                    or table[j, T_SIZE] > table[sure_lead, T_SIZE]
                    or (
                        table[j, T_SIZE] == table[sure_lead, T_SIZE]
                        and combo_cost(j, hand, unseen, single_of_type, table, rules)
                        < combo_cost(sure_lead, hand, unseen, single_of_type, table, rules)
                    )
                ):
                    sure_lead = j
            if table[j, T_SIZE] == 1:
                t = _TILE_TYPE[K.lowest_bit(table[j, T_MASK])]
                if low < 0 or keep_value(t, hand, unseen, single_of_type, table, rules) < keep_value(
                    _TILE_TYPE[K.lowest_bit(table[low, T_MASK])], hand, unseen, single_of_type, table, rules
                ):
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
            if p != seat and SK.columns(state, p) == 0:
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
    last = SK.acted(state) == players - 1
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
    key = key * RADIX_SIZE + SK.size(state)
    key = key * RADIX_ACTED + min(SK.acted(state), RADIX_ACTED - 1)
    key = key * RADIX_COLUMNS + columns
    key = key * 2 + cheap_sure
    key = key * 2 + strong_sure
    key = key * RADIX_SURE + sure
    key = key * 8 + mask
    return LEAD_KEYS + key


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
