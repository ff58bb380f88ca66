"""The compiled game core: every function here is ``@njit(cache=True)``.

Kernels take the three int64 arrays described in ``layout.py`` (``state``, ``table``,
``rules``) plus scalars, and write only into ``state``, ``out`` or ``scratch`` arguments.
Randomness comes from a caller-owned xorshift64 generator (``rng``, a uint64 array of one
element), so the same seed gives the same deals and playouts with or without the JIT.

Kernels that allocate nothing and run once per hand or per decision are compiled with
``_nrt=False``, without numba's reference-counting runtime: with it, each array handed to a
function, or to a helper inlined in a loop, costs a locked increment and decrement that numba
cannot always prune (in ``random_playout`` they took about 40% of the time).

Conventions: seats are 0..players-1 and play passes to ``(seat + 1) % players``. Hands are
masks over physical tiles; legality is tested on canonical masks (tiles.py), and a played
combination removes the lowest held copies of each of its types.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ._numba_cache import register
from .layout import (
    ENV_EPISODE_OVER,
    ENV_ILLEGAL,
    ENV_NEXT_HAND,
    ENV_PLAYING,
    GAME_ILLEGAL,
    H_COUNT,
    H_DOWN,
    H_UP,
    HISTORY_LEN,
    HISTORY_STRIDE,
    KIND_BEAT,
    KIND_DECLARE,
    KIND_DECLINE,
    KIND_DISCARD,
    KIND_LEAD,
    LEAD_CHUNK,
    LOG_LEADER,
    LOG_SIZE,
    LOG_STRIDE,
    LOG_WINNER,
    LOG_WINNING,
    MAX_SEATS,
    MAX_TRICKS,
    PHASE_DECLARE,
    PHASE_FOLLOW,
    PHASE_LEAD,
    PHASE_OVER,
    R_BIG_SIX,
    R_COMBOS,
    R_DECK,
    R_EARLY_DEATH,
    R_HAND_BANKER,
    R_HAND_SIZE,
    R_HEAVEN_LEADS,
    R_LAST_BONUS,
    R_LEAD_BY_TYPE,
    R_LEAD_IDS,
    R_LEAD_START,
    R_MUST_BEAT,
    R_PAR,
    R_PAY_OVER_PAR,
    R_PLAYERS,
    R_RED_DOT,
    R_SHUTOUT_BONUS,
    R_SINGLE_42,
    R_STAKE_QUARTET,
    R_STAKE_SUPREME,
    R_STREAK_FACTOR,
    R_ZERO_POINTS,
    RED_DOT_AUTO,
    RED_DOT_CHOICE,
    REP_BONUS,
    REP_FORCED,
    REP_KIND,
    REP_SEAT,
    REP_SETTLE,
    REP_STATUS,
    REP_TILES,
    REP_TRICK,
    REP_WINNER,
    REP_WINNING,
    REPORT_LEN,
    S_ACTED,
    S_BANKER,
    S_BANKER_FIRST,
    S_BEST,
    S_BEST_SEAT,
    S_BONUS,
    S_COLS,
    S_DEALT,
    S_DECLARER,
    S_DOOMED,
    S_DOWN,
    S_HAND,
    S_LEADER,
    S_LEN,
    S_LOG,
    S_MULT_LAST,
    S_MULT_SHUT,
    S_OWED,
    S_PHASE,
    S_SETTLE,
    S_SIZE,
    S_STREAK,
    S_TABLE,
    S_TO_ACT,
    S_TRICK,
    S_UP,
    S_WINNER,
    STAKE_QUARTET,
    STAKE_SUPREME,
    STEP_HAND_OVER,
    STEP_TRICK_OVER,
    T_BEAT_END,
    T_BEAT_START,
    T_COLS,
    T_LAST_BONUS,
    T_MASK,
    T_SIZE,
    T_STAKE,
    T_STRENGTH,
    W_LOG,
    W_ROW,
    W_ROW_LEADER,
    W_ROW_SIZE,
    W_SCRATCH,
    decisions_len,
    declare_action,
    decline_action,
    legal_len,
)
from .tiles import CIVIL_LOW, LITTLE_THREE, NUM_TYPES, RED_PIPS, TILE_TYPE, TILE_WORTH, TYPE_BITS, TYPE_MASK

register()  # before the first kernel: each cached kernel is checked against every file it is built from

_CIVIL_LOW = np.int64(CIVIL_LOW)
_CIVIL_ALL = np.int64((int(CIVIL_LOW) << 1) | int(CIVIL_LOW))
_TILE_TYPE = TILE_TYPE.astype(np.int64)
_TYPE_MASK = TYPE_MASK.astype(np.int64)
_TYPE_BIT = TYPE_BITS[:, 0].astype(np.int64)  # bit of copy 0 of each type
_COPY0 = _CIVIL_LOW | ~_CIVIL_ALL & np.int64(0xFFFFFFFF)  # the copy-0 bits of all types
_TYPE_LOW = np.left_shift(1, _TYPE_BIT).astype(np.int64)
# One Red Dot (exactly one red pip in a hand) is one mask test: the hand's tiles with red pips
# must be a single tile, and that tile must have exactly one.
_RED_TILES = np.int64(sum(1 << b for b in range(32) if RED_PIPS[TILE_TYPE[b]] > 0))
_ONE_RED_TILES = np.int64(sum(1 << b for b in range(32) if RED_PIPS[TILE_TYPE[b]] == 1))
DISCARD_SET = np.int64(1) << 40  # perft decision code: DISCARD_SET | canonical mask


# ----------------------------------------------------------------------------- bits
@njit(cache=True, inline="always")
def popcount(x):
    """Set bits of a mask below 2**32 (SWAR, no loop)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


def _make_debruijn(width: int, multiplier: int) -> np.ndarray:
    """table[((b & -b) * multiplier mod 2**width) >> (width - log2(width))] = index of the lowest
    set bit of b, for a de Bruijn sequence ``multiplier`` of order log2(width)."""
    shift = width - (width.bit_length() - 1)
    table = np.zeros(width, dtype=np.int64)
    for bit in range(width):
        table[(((1 << bit) * multiplier) % (1 << width)) >> shift] = bit
    return table


_DEBRUIJN = _make_debruijn(32, 0x077CB531)
_DEBRUIJN64 = _make_debruijn(64, 0x03F79D71B4CB0A89)


@njit(cache=True, inline="always")
def lowest_bit(x):
    """Index of the lowest set bit of a non-zero mask below 2**32 (de Bruijn multiply)."""
    return _DEBRUIJN[(((x & -x) * 0x077CB531) & 0xFFFFFFFF) >> 27]


@njit(cache=True, inline="always")
def lowest_bit64(x):
    """Index of the lowest set bit of a non-zero int64 (any of its 64 bits)."""
    return _DEBRUIJN64[(((x & -x) * 0x03F79D71B4CB0A89) >> 58) & 63]  # the product wraps; & 63 undoes the sign


@njit(cache=True, inline="always")
def canonical(hand):
    """Canonical mask of a hand: the lowest copies of each type it holds (tiles.py)."""
    low = (hand | (hand >> 1)) & _CIVIL_LOW
    both = hand & (hand >> 1) & _CIVIL_LOW
    return (hand & ~_CIVIL_ALL) | low | (both << 1)


@njit(cache=True, inline="always")
def take(hand, need):
    """The physical tiles of ``hand`` that realise the canonical mask ``need``.

    A civil type needed once is taken from whichever copy the hand holds (copy 0 first).
    """
    once = need & _CIVIL_LOW & ~(need >> 1)
    return (need & ~once) | (once & hand) | ((once & ~hand) << 1)


@njit(cache=True, inline="always")
def one_red_pip(hand):
    """True when the hand shows exactly one red pip (RULES.md, One Red Dot)."""
    red = hand & _RED_TILES
    return red & (red - 1) == 0 and red & _ONE_RED_TILES != 0


# ----------------------------------------------------------------------------- random
@njit(cache=True, inline="always")
def rand_below(rng, k):
    """Uniform integer in [0, k) from the xorshift64 generator ``rng`` (uint64[1])."""
    x = xorshift(rng[0])
    rng[0] = x
    return below(x, k)


@njit(cache=True, inline="always")
def xorshift(x):
    """The generator's next state."""
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    return x


@njit(cache=True, inline="always")
def below(x, k):
    """The draw in [0, k) that generator state ``x`` gives (Lemire's multiply-shift)."""
    return np.int64(((x >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


_LOW32 = np.uint64(0xFFFFFFFF)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment: 2^64 / golden ratio, odd


@njit(cache=True, inline="always")
def _mul64(a, b):
    """``a * b`` modulo 2^64 from 32-bit halves: the same bits as a wrapping multiply, without
    the overflow warnings numpy raises when the JIT is off."""
    low = (a & _LOW32) * (b & _LOW32)
    middle = (((a >> np.uint64(32)) * (b & _LOW32)) & _LOW32) + (((a & _LOW32) * (b >> np.uint64(32))) & _LOW32)
    middle += low >> np.uint64(32)
    return ((middle & _LOW32) << np.uint64(32)) | (low & _LOW32)


@njit(cache=True, inline="always")
def _add64(a, b):
    """``a + b`` modulo 2^64, without numpy's overflow warning when the JIT is off."""
    low = (a & _LOW32) + (b & _LOW32)
    high = (a >> np.uint64(32)) + (b >> np.uint64(32)) + (low >> np.uint64(32))
    return ((high & _LOW32) << np.uint64(32)) | (low & _LOW32)


@njit(cache=True)
def splitmix64(seed):
    """SplitMix64's first output for ``seed`` (Steele, Lea and Flood, OOPSLA 2014; the
    finaliser constants are Stafford's "Mix13"): a bijection of 64-bit words in which every
    input bit flips each output bit with probability about 1/2, so nearby seeds map to unrelated
    words."""
    z = _add64(np.uint64(seed), _GOLDEN)
    z = _mul64(z ^ (z >> np.uint64(30)), np.uint64(0xBF58476D1CE4E5B9))
    z = _mul64(z ^ (z >> np.uint64(27)), np.uint64(0x94D049BB133111EB))
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def seed_rng(rng, seed):
    """Seed the generator from any integer through ``splitmix64``, so that any two different
    seeds, adjacent or not, start unrelated streams (xorshift's own steps are linear and would
    keep nearby seeds related). Zero, xorshift's one fixed point, is replaced."""
    x = splitmix64(seed)
    if x == np.uint64(0):
        x = _GOLDEN
    rng[0] = x


@njit(cache=True)
def deal(rng, rules, out):
    """Uniformly random deal of the rule set's deck: writes one mask per seat into ``out``."""
    deal_with(rng, rules, np.empty(32, dtype=np.int64), out)


@njit(cache=True, inline="always")
def deal_with(rng, rules, bits, out):
    """``deal``, shuffling in the caller's ``bits`` (32 entries): a playout loop deals without
    allocating."""
    deck = rules[R_DECK]
    players = rules[R_PLAYERS]
    hand_size = rules[R_HAND_SIZE]
    n = 0
    for b in range(32):
        if (deck >> b) & 1:
            bits[n] = b
            n += 1
    # Fisher-Yates, the generator's state kept in a register: through rng[0], every draw
    # waited on the store of the one before (a third of the deal's time).
    x = rng[0]
    for i in range(n - 1, 0, -1):
        x = xorshift(x)
        j = below(x, i + 1)
        bits[i], bits[j] = bits[j], bits[i]
    rng[0] = x
    for s in range(players):
        hand = np.int64(0)
        for k in range(hand_size):
            hand |= np.int64(1) << bits[s * hand_size + k]
        out[s] = hand


@njit(cache=True, inline="always")
def dice_banker(rng, players):
    """The first banker of a match (RULES.md section 3): two dice d1 + d2 from ``rng``, counted
    from seat 0, give seat (d1 + d2 - 1) mod players. Every dealer of a first hand uses this."""
    d1 = rand_below(rng, 6) + 1
    d2 = rand_below(rng, 6) + 1
    return (d1 + d2 - 1) % players


# ----------------------------------------------------------------------------- a new hand
@njit(cache=True, _nrt=False)
def new_hand(state, hands, banker, streak, table, rules):
    """Start a hand from dealt masks: One Red Dot, then the first leader."""
    state[:] = 0
    players = rules[R_PLAYERS]
    for s in range(players):
        state[S_HAND + s] = hands[s]
        state[S_DEALT + s] = hands[s]
    state[S_BANKER] = banker
    state[S_STREAK] = streak
    state[S_BANKER_FIRST] = -1
    state[S_WINNER] = -1
    state[S_DECLARER] = -1
    state[S_BEST] = -1
    state[S_BEST_SEAT] = -1
    state[S_MULT_LAST] = 1
    state[S_MULT_SHUT] = 1
    mode = rules[R_RED_DOT]
    holder = next_red_dot_holder(state, banker, rules)
    if holder >= 0 and mode == RED_DOT_AUTO:
        declare(state, holder, table, rules)
    elif holder >= 0 and mode == RED_DOT_CHOICE:
        state[S_PHASE] = PHASE_DECLARE
        state[S_TO_ACT] = holder
    else:
        start_play(state, rules)


@njit(cache=True, _nrt=False)
def next_red_dot_holder(state, seat, rules):
    """First seat from ``seat`` on, in play order and before returning to the banker, whose
    dealt hand has exactly one red pip; -1 when there is none (or One Red Dot is off)."""
    if rules[R_RED_DOT] == 0:
        return -1
    players = rules[R_PLAYERS]
    banker = state[S_BANKER]
    s = seat
    while True:
        if one_red_pip(state[S_DEALT + s]):
            return s
        s = (s + 1) % players
        if s == banker:
            return -1


@njit(cache=True, _nrt=False)
def start_play(state, rules):
    players = rules[R_PLAYERS]
    leader = state[S_BANKER]
    if rules[R_HEAVEN_LEADS]:
        for k in range(players):
            s = (state[S_BANKER] + k) % players
            if state[S_HAND + s] & _TYPE_MASK[0]:
                leader = s
                break
    start_trick(state, leader, rules)


@njit(cache=True, inline="always")
def start_trick(state, leader, rules):
    players = rules[R_PLAYERS]
    state[S_PHASE] = PHASE_LEAD
    state[S_TO_ACT] = leader
    state[S_LEADER] = leader
    state[S_ACTED] = 0
    state[S_OWED] = 0
    state[S_BEST] = -1
    state[S_BEST_SEAT] = -1
    doomed = rules[R_EARLY_DEATH]
    for s in range(players):
        state[S_TABLE + s] = 0
        if popcount(state[S_HAND + s]) != 1:
            doomed = 0
    state[S_DOOMED] = doomed


@njit(cache=True, _nrt=False)
def declare(state, seat, table, rules):
    """One Red Dot: the hand ends at once, the declarer is W with every column."""
    state[S_DECLARER] = seat
    state[S_WINNER] = seat
    state[S_COLS + seat] = rules[R_HAND_SIZE]
    finish(state, table, rules)


# ----------------------------------------------------------------------------- legal moves
@njit(cache=True, inline="always")
def legal_actions(state, table, rules, out):
    """Write the acting seat's legal action ids (layout.py) into ``out``; return their count."""
    phase = state[S_PHASE]
    n = 0
    if phase == PHASE_OVER:
        return 0
    C = rules[R_COMBOS]
    if phase == PHASE_DECLARE:
        out[0] = declare_action(C)
        out[1] = decline_action(C)
        return 2
    seat = state[S_TO_ACT]
    hand = state[S_HAND + seat]
    held = canonical(hand)
    if phase == PHASE_LEAD:
        if not rules[R_LEAD_BY_TYPE]:
            return all_leads(rules, held, out)
        remaining = held & (_CIVIL_LOW | ~_CIVIL_ALL)  # copy 0 of each type held
        while remaining:
            t = _TILE_TYPE[lowest_bit(remaining)]
            remaining &= remaining - 1
            n = scan_leads(rules, held, rules[R_LEAD_START + t], rules[R_LEAD_START + t + 1], out, n)
        return n
    if state[S_OWED] == 0:
        best = state[S_BEST]
        for j in range(table[best, T_BEAT_START], table[best, T_BEAT_END]):
            out[n] = j
            n += held & table[j, T_MASK] == table[j, T_MASK]
        if n > 0 and rules[R_MUST_BEAT]:
            return n
    remaining = held & _COPY0  # copy 0 of each type held: one discard per type
    while remaining:
        out[n] = C + _TILE_TYPE[lowest_bit(remaining)]
        remaining &= remaining - 1
        n += 1
    return n


@njit(cache=True)
def legal_mask(state, table, rules, scratch, out):
    """Legal actions as a 0/1 vector ``out`` of length num_actions."""
    out[:] = 0
    n = legal_actions(state, table, rules, scratch)
    for i in range(n):
        out[scratch[i]] = 1
    return n


@njit(cache=True, inline="always")
def lead_masks(rules):
    """Where the lead index's masks begin: after the ids, padded as layout.lead_padded says."""
    return R_LEAD_IDS + (rules[R_COMBOS] + LEAD_CHUNK - 1) // LEAD_CHUNK * LEAD_CHUNK


@njit(cache=True, inline="always")
def all_leads(rules, held, out):
    """Write every combination ``held`` can make, in lead-index order; return their count.

    Each chunk of LEAD_CHUNK masks becomes one bit set in a loop of fixed length, which LLVM
    turns into vector compares (a scalar pass cost about 3x as much); then only the few set
    bits are written out.
    """
    masks = lead_masks(rules)
    n = 0
    for base in range(0, masks - R_LEAD_IDS, LEAD_CHUNK):
        found = np.int64(0)
        for k in range(LEAD_CHUNK):
            m = rules[np.uint64(masks + base + k)]  # unsigned: no test for a negative index
            found |= np.int64(held & m == m) << k
        while found:
            out[n] = rules[np.uint64(R_LEAD_IDS + base + lowest_bit64(found))]
            found &= found - 1
            n += 1
    return n


@njit(cache=True, inline="always")
def scan_leads(rules, held, lo, hi, out, n):
    """Append the combinations lo..hi-1 of the lead index that ``held`` can make."""
    masks = lead_masks(rules)
    for k in range(lo, hi):
        out[n] = rules[R_LEAD_IDS + k]  # branch-free: keep the slot only when the hand can make it
        n += held & rules[masks + k] == rules[masks + k]
    return n


# ----------------------------------------------------------------------------- applying
@njit(cache=True, inline="always")
def step(state, action, table, rules, report=None):
    """Apply one legal action of the acting seat, then any forced early-death discards.

    With a ``report`` (layout.REPORT_LEN entries), also write what the step did into it: the
    decision, the forced discards, the end of a trick and the payments. Without one (the
    playouts), numba prunes every report write at compile time, so the step costs what it did.
    """
    C = rules[R_COMBOS]
    players = rules[R_PLAYERS]
    seat = state[S_TO_ACT]
    phase = state[S_PHASE]
    if report is not None:
        report[:] = 0
        report[REP_SEAT] = seat
        report[REP_TRICK] = state[S_TRICK]
        report[REP_WINNER] = -1
        report[REP_WINNING] = -1
    if phase == PHASE_DECLARE:
        if action == declare_action(C):
            if report is not None:
                report[REP_KIND] = KIND_DECLARE
            declare(state, seat, table, rules)
        else:
            if report is not None:
                report[REP_KIND] = KIND_DECLINE
            nxt = (seat + 1) % players  # holders decide in play order from the banker, once each
            holder = -1 if nxt == state[S_BANKER] else next_red_dot_holder(state, nxt, rules)
            if holder < 0:
                start_play(state, rules)
            else:
                state[S_TO_ACT] = holder
        if report is not None:
            settle_report(state, players, report)
        return
    if action < C:
        tiles = take(state[S_HAND + seat], table[action, T_MASK])
        state[S_HAND + seat] ^= tiles
        state[S_UP + seat] |= tiles
        state[S_TABLE + seat] = tiles
        state[S_BEST] = action
        state[S_BEST_SEAT] = seat
        state[S_ACTED] += 1
        if report is not None:
            report[REP_KIND] = KIND_LEAD if phase == PHASE_LEAD else KIND_BEAT
            report[REP_TILES] = tiles
        if phase == PHASE_LEAD:
            state[S_SIZE] = table[action, T_SIZE]
            state[S_PHASE] = PHASE_FOLLOW
            if seat == state[S_BANKER] and state[S_BANKER_FIRST] < 0:
                state[S_BANKER_FIRST] = unbeatable_in_own_eyes(state, action, table, rules)
        state[S_TO_ACT] = next_seat(seat, players)
    else:
        tile = take(state[S_HAND + seat], _TYPE_LOW[action - C])
        state[S_HAND + seat] ^= tile
        state[S_DOWN + seat] |= tile
        state[S_TABLE + seat] |= tile
        if report is not None:
            report[REP_KIND] = KIND_DISCARD
            report[REP_TILES] = tile
        if state[S_OWED] == 0:
            state[S_OWED] = state[S_SIZE]
        state[S_OWED] -= 1
        if state[S_OWED] == 0:
            state[S_ACTED] += 1
            state[S_TO_ACT] = next_seat(seat, players)
    advance(state, table, rules, report)
    if report is not None:
        settle_report(state, players, report)


@njit(cache=True, inline="always")
def next_seat(seat, players):
    """(seat + 1) % players by a compare: numba's signed modulo is a division, a sign fix-up and a
    zero test, on the path from one decision to the next (about 4% of a random playout)."""
    return 0 if seat + 1 == players else seat + 1


@njit(cache=True, inline="always")
def settle_report(state, players, report):
    """The report's end: when the hand is over, its status and the settlement (paid once)."""
    if state[S_PHASE] == PHASE_OVER:
        report[REP_STATUS] = STEP_HAND_OVER
        for s in range(players):
            report[REP_SETTLE + s] = state[S_SETTLE + s]


@njit(cache=True, inline="always")
def advance(state, table, rules, report=None):
    """Close a full trick, and apply early-death discards, until a real decision or the end."""
    players = rules[R_PLAYERS]
    while state[S_PHASE] == PHASE_FOLLOW:
        if state[S_ACTED] == players:
            end_trick(state, table, rules, report)
        elif state[S_DOOMED] and state[S_COLS + state[S_TO_ACT]] == 0:
            seat = state[S_TO_ACT]
            tile = state[S_HAND + seat]
            state[S_HAND + seat] = 0
            state[S_DOWN + seat] |= tile
            state[S_TABLE + seat] |= tile
            state[S_ACTED] += 1
            state[S_TO_ACT] = next_seat(seat, players)
            if report is not None:
                report[REP_FORCED + seat] = tile
        else:
            return


@njit(cache=True, inline="always")
def end_trick(state, table, rules, report=None):
    players = rules[R_PLAYERS]
    banker = state[S_BANKER]
    winner = state[S_BEST_SEAT]
    best = state[S_BEST]
    k = state[S_TRICK]
    log = S_LOG + LOG_STRIDE * k
    state[log + LOG_LEADER] = state[S_LEADER]
    state[log + LOG_WINNER] = winner
    state[log + LOG_SIZE] = state[S_SIZE]
    state[log + LOG_WINNING] = best
    state[S_TRICK] = k + 1
    state[S_COLS + winner] += state[S_SIZE]
    if report is not None:
        report[REP_STATUS] = STEP_TRICK_OVER
        report[REP_WINNER] = winner
        report[REP_WINNING] = best
    kind = table[best, T_STAKE]
    stake = 0
    if kind == STAKE_SUPREME:
        stake = rules[R_STAKE_SUPREME]
    elif kind == STAKE_QUARTET:
        stake = rules[R_STAKE_QUARTET]
    if stake:
        factor = banker_factor(state, rules)
        for p in range(players):
            if p != winner:
                chips = stake * (factor if p == banker or winner == banker else 1)
                state[S_BONUS + p] -= chips
                state[S_BONUS + winner] += chips
                if report is not None:
                    report[REP_BONUS + p] -= chips
                    report[REP_BONUS + winner] += chips
    if state[S_HAND + winner] == 0:
        state[S_WINNER] = winner
        finish(state, table, rules)
    else:
        start_trick(state, winner, rules)


@njit(cache=True, _nrt=False)
def banker_factor(state, rules):
    """Factor of a payment that involves this hand's banker: 2, or 1 + streak."""
    return 1 + state[S_STREAK] if rules[R_STREAK_FACTOR] else 2


@njit(cache=True, _nrt=False)
def unbeatable_in_own_eyes(state, combo, table, rules):
    """1 if no combination beating ``combo`` can be made from the deck outside the banker's
    dealt hand (counting copies), else 0 (RULES.md section 6, shutout exception)."""
    outside = canonical(rules[R_DECK] & ~state[S_DEALT + state[S_BANKER]])
    for j in range(table[combo, T_BEAT_START], table[combo, T_BEAT_END]):
        if outside & table[j, T_MASK] == table[j, T_MASK]:
            return 0
    return 1


@njit(cache=True, _nrt=False)
def finish(state, table, rules):
    """Settlement at the end of the hand (RULES.md section 6)."""
    players = rules[R_PLAYERS]
    par = rules[R_PAR]
    banker = state[S_BANKER]
    w = state[S_WINNER]
    state[S_PHASE] = PHASE_OVER
    state[S_TO_ACT] = -1
    shut = 1
    if rules[R_SHUTOUT_BONUS]:
        for p in range(players):
            if state[S_COLS + p] == rules[R_HAND_SIZE] and not (p == banker and state[S_BANKER_FIRST] == 1):
                shut = 2
    last = 1
    captor = -1
    if state[S_DECLARER] < 0:
        log = S_LOG + LOG_STRIDE * (state[S_TRICK] - 1)
        leader = state[log + LOG_LEADER]
        winning = state[log + LOG_WINNING]
        if rules[R_LAST_BONUS] and table[winning, T_LAST_BONUS]:
            last = 2
        # Big Six captures Little Three: the leader of a last single 2-1 pays for everyone.
        if (
            rules[R_BIG_SIX]
            and state[log + LOG_SIZE] == 1
            and w != leader
            and winning == rules[R_SINGLE_42]
            and state[S_TABLE + leader] == _TYPE_LOW[LITTLE_THREE]
        ):
            captor = leader
    state[S_MULT_LAST] = last
    state[S_MULT_SHUT] = shut
    factor = banker_factor(state, rules)
    for p in range(players):
        if p == w:
            continue
        c = state[S_COLS + p]
        points = 0  # > 0: p pays W; < 0: W pays p
        if c == 0:
            points = rules[R_ZERO_POINTS]
        elif c < par:
            points = par - c
        elif c > par and rules[R_PAY_OVER_PAR]:
            points = par - c
        f = 2
        if rules[R_HAND_BANKER]:
            f = factor if (p == banker or w == banker) else 1
        chips = points * f * last * shut
        payer = captor if (chips > 0 and captor >= 0) else p
        state[S_SETTLE + payer] -= chips
        state[S_SETTLE + w] += chips


# ----------------------------------------------------------------------------- playouts
@njit(cache=True, _nrt=False)  # no reference counting: see the module docstring
def random_playout(state, table, rules, rng, scratch):
    """Play the hand to the end with uniformly random legal actions; return the steps taken."""
    steps = 0
    while state[S_PHASE] != PHASE_OVER:
        n = legal_actions(state, table, rules, scratch)
        step(state, scratch[rand_below(rng, n)], table, rules)
        steps += 1
    return steps


@njit(cache=True)
def random_hands(num_hands, seed, table, rules, out_net):
    """Deal and play ``num_hands`` random hands entirely in compiled code.

    The banker is drawn with the dice of RULES.md section 3; ``out_net`` (num_hands, players)
    receives each hand's net chips. Returns the total number of decisions taken.
    """
    players = rules[R_PLAYERS]
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    state = np.zeros(S_LEN, dtype=np.int64)
    hands = np.zeros(MAX_SEATS, dtype=np.int64)
    bits = np.zeros(32, dtype=np.int64)
    scratch = np.zeros(legal_len(rules[R_COMBOS]), dtype=np.int64)
    steps = 0
    for i in range(num_hands):
        deal_with(rng, rules, bits, hands)
        banker = dice_banker(rng, players)
        new_hand(state, hands, banker, 1, table, rules)
        steps += random_playout(state, table, rules, rng, scratch)
        for s in range(players):
            out_net[i, s] = state[S_BONUS + s] + state[S_SETTLE + s]
    return steps


# ----------------------------------------------------------------------------- perft
@njit(cache=True)
def decisions(state, table, rules, scratch, out):
    """Distinct decisions (RULES.md section 8) of the acting seat; return their count.

    Leads, beats and declare/decline are action ids; a discard is ``DISCARD_SET | m`` with
    ``m`` the canonical mask of the whole multiset of tiles that go down.
    """
    n = legal_actions(state, table, rules, scratch)
    if state[S_PHASE] != PHASE_FOLLOW:
        out[:n] = scratch[:n]
        return n
    C = rules[R_COMBOS]
    count = 0
    discards = False
    for i in range(n):
        if scratch[i] < C:
            out[count] = scratch[i]
            count += 1
        else:
            discards = True
    if discards:
        held = canonical(state[S_HAND + state[S_TO_ACT]])
        size = state[S_SIZE]
        sub = held
        while True:  # every sub-multiset of `size` tiles: the canonical submasks of `held`
            if popcount(sub) == size and canonical(sub) == sub:
                out[count] = DISCARD_SET | sub
                count += 1
            if sub == 0:
                break
            sub = (sub - 1) & held
    return count


@njit(cache=True)
def apply_decision(state, decision, table, rules):
    if decision & DISCARD_SET:
        C = rules[R_COMBOS]
        tiles = decision & ~DISCARD_SET
        while tiles:
            step(state, C + _TILE_TYPE[lowest_bit(tiles)], table, rules)
            tiles &= tiles - 1
    else:
        step(state, decision, table, rules)


@njit(cache=True)
def perft(state, depth, table, rules):
    """Number of distinct decision sequences of length ``depth``; a finished hand counts once."""
    if depth == 0 or state[S_PHASE] == PHASE_OVER:
        return 1
    width = decisions_len(rules[R_COMBOS])
    states = np.empty((depth + 1, S_LEN), dtype=np.int64)
    moves = np.empty((depth, width), dtype=np.int64)
    counts = np.zeros(depth, dtype=np.int64)
    index = np.zeros(depth, dtype=np.int64)
    scratch = np.empty(width, dtype=np.int64)
    states[0] = state
    total = 0
    level = 0
    counts[0] = decisions(states[0], table, rules, scratch, moves[0])
    while level >= 0:
        if index[level] == counts[level]:
            level -= 1
            if level >= 0:
                index[level] += 1
            continue
        child = states[level + 1]
        child[:] = states[level]
        apply_decision(child, moves[level, index[level]], table, rules)
        if level + 1 == depth or child[S_PHASE] == PHASE_OVER:
            total += 1
            index[level] += 1
        else:
            level += 1
            index[level] = 0
            counts[level] = decisions(states[level], table, rules, scratch, moves[level])
    return total


# ----------------------------------------------------------------------------- search
# The greedy policy's preferences as integer keys, each action's key unique (its id in the low
# bits): the choice is one arg-max or arg-min, whose comparisons compile to selects where the
# comparison chain they replace mispredicted.
_WORTH_RANK = np.unique(TILE_WORTH, return_inverse=True)[1].astype(np.int64)  # discard the least worth
_ID_BITS = 21  # above every action id; sizes and strengths are below 2**21 too
_LOW_IDS = (1 << _ID_BITS) - 1
_DISCARD_KEY = (np.int64(1) << 50) | (_WORTH_RANK << _ID_BITS)  # after every beat's key
# the key of discarding the type of each bit, its type in the low bits
_BIT_DISCARD_KEY = (_WORTH_RANK[_TILE_TYPE] << 5) | _TILE_TYPE


@njit(cache=True, inline="always", _nrt=False)  # no reference counting: see the module docstring
def greedy_action(state, table, rules, scratch):
    """The greedy policy's action for the seat to act (``greedy_choice``); a follow decision
    is made without listing the legal actions (``greedy_follow``)."""
    if state[S_PHASE] == PHASE_FOLLOW:
        return greedy_follow(state, table, rules)
    n = legal_actions(state, table, rules, scratch)
    return greedy_choice(scratch, n, state[S_PHASE] == PHASE_LEAD, table, rules)


@njit(cache=True, inline="always")
def greedy_choice(legal, n, lead, table, rules):
    """The greedy policy among the legal actions ``legal[:n]`` (any order; ties go to the
    lowest id): lead the largest, then strongest, combination; beat with the weakest beating
    combination; otherwise discard the tile worth least; always declare One Red Dot."""
    C = rules[R_COMBOS]
    low = legal[0]
    for i in range(1, n):
        low = min(low, legal[i])
    if low >= declare_action(C):  # the One Red Dot choice: declare
        return declare_action(C)
    best = low
    if lead:
        top = np.int64(-1)
        for i in range(n):
            j = legal[i]
            key = (table[j, T_SIZE] << (2 * _ID_BITS)) | (table[j, T_STRENGTH] << _ID_BITS) | (_LOW_IDS - j)
            if key > top:
                top, best = key, j
        return best
    top = np.int64(1) << 62
    for i in range(n):
        j = legal[i]
        key = (table[j, T_STRENGTH] << _ID_BITS) | j if j < C else _DISCARD_KEY[j - C] | j
        if key < top:
            top, best = key, j
    return best


@njit(cache=True, inline="always")
def greedy_follow(state, table, rules):
    """``greedy_choice`` at a follow decision, from the hand: the first combination of the
    beat range the hand makes (the range runs from the weakest up), else the discard of the
    type held worth least. The follow rules are ``legal_actions``'."""
    held = canonical(state[S_HAND + state[S_TO_ACT]])
    if state[S_OWED] == 0:
        best = state[S_BEST]
        for j in range(table[best, T_BEAT_START], table[best, T_BEAT_END]):
            if held & table[j, T_MASK] == table[j, T_MASK]:
                return j
    remaining = held & _COPY0
    key = np.int64(1) << 62
    while remaining:
        key = min(key, _BIT_DISCARD_KEY[lowest_bit(remaining)])
        remaining &= remaining - 1
    return rules[R_COMBOS] + (key & 31)


@njit(cache=True)
def determinize(state, seat, face_up, rules, rng, out):
    """A full state consistent with what ``seat`` knows, into ``out``.

    The tiles hidden from ``seat`` (the other hands, and the other seats' face-down tiles
    unless discards are face up) are dealt again at random, each seat keeping its number of
    tiles in hand and face down. Everything public stays as it is.
    """
    determinize_with(state, seat, face_up, rules, rng, np.empty(32, dtype=np.int64), out)


@njit(cache=True, inline="always")
def determinize_with(state, seat, face_up, rules, rng, bits, out):
    """``determinize``, shuffling in the caller's ``bits`` (32 entries): a search draws its
    worlds without allocating."""
    players = rules[R_PLAYERS]
    for k in range(S_LEN):
        out[k] = state[k]
    hidden = np.int64(0)
    for s in range(players):
        if s != seat:
            hidden |= state[S_HAND + s] | (0 if face_up else state[S_DOWN + s])
    n = 0
    while hidden:  # in tile order, so the draw depends only on which tiles are hidden, not where they are
        bits[n] = lowest_bit(hidden)
        hidden &= hidden - 1
        n += 1
    x = rng[0]  # Fisher-Yates with the generator's state in a register, as deal_with does
    for i in range(n - 1, 0, -1):
        x = xorshift(x)
        j = below(x, i + 1)
        bits[i], bits[j] = bits[j], bits[i]
    rng[0] = x
    k = 0
    for s in range(players):
        if s == seat:
            continue
        hand = np.int64(0)
        for _ in range(popcount(state[S_HAND + s])):
            hand |= np.int64(1) << bits[k]
            k += 1
        down = state[S_DOWN + s]
        if not face_up:
            down = np.int64(0)
            for _ in range(popcount(state[S_DOWN + s])):
                down |= np.int64(1) << bits[k]
                k += 1
        place_hidden(state, s, hand, down, face_up, out)


@njit(cache=True, inline="always")
def place_hidden(state, s, hand, down, face_up, out):
    """Seat ``s``'s hidden tiles in a world ``out`` dealt again from ``state``: its ``hand``,
    its face-down tiles ``down`` (``state``'s own when discards are face up), and what follows."""
    out[S_HAND + s] = hand
    out[S_DOWN + s] = down
    out[S_DEALT + s] = hand | down | state[S_UP + s]
    # the trick on the table: its face-up tiles, and as many face-down ones as the seat put
    # down in it (which of the dealt-again tiles they are is as arbitrary as the deal), so
    # that the world's information state is the seat's
    table = state[S_TABLE + s] & state[S_UP + s]
    on_table = state[S_TABLE + s] & state[S_DOWN + s]
    if face_up:
        table |= on_table
    else:
        spare = down
        for _ in range(popcount(on_table)):
            low = spare & -spare
            table |= low
            spare ^= low
    out[S_TABLE + s] = table


# ----------------------------------------------------------------------------- observations
# The observation and information-state encoders write the views that observation.py
# specifies; the episode helpers deal exactly as Game(seed=...) does (seed_rng, deal, then
# the dice), so that every view of one seed sees the same deals and bankers.
from .observation import (  # noqa: E402  (the observation layout imports nothing of the kernels)
    O_ACTED,
    O_BANKER,
    O_BEST,
    O_BEST_SEAT,
    O_CHIPS,
    O_COLUMNS,
    O_DEALT,
    O_DOOMED,
    O_DOWN,
    O_HAND,
    O_LEAD,
    O_LEADER,
    O_OWED,
    O_PHASE,
    O_SIZE,
    O_SIZE_TOTAL,
    O_STREAK,
    O_TILES_LEFT,
    O_TO_ACT,
    O_TRICK,
    O_TRICK_COUNT,
    O_TRICK_DOWN,
    O_TRICK_LEADER,
    O_TRICK_UP,
    O_UP,
)


@njit(cache=True, _nrt=False)
def write_counts(mask, out, offset):
    """Add the copies of each tile type in the physical mask to out[offset:offset + 21].

    The callers zero ``out`` first. The loop visits only the set bits (the lowest one found
    by a de Bruijn multiply), as most masks here hold only a few tiles.
    """
    while mask:
        out[offset + _TILE_TYPE[lowest_bit(mask)]] += 1
        mask &= mask - 1


@njit(cache=True)
def _relative(seat, observer, players):
    """Seat ``seat`` as seen from ``observer`` (0 = the observer); no division on the hot path."""
    r = seat - observer
    return r + players if r < 0 else r


@njit(cache=True, _nrt=False)
def write_observation(state, seat, table, rules, offsets, face_up, out):
    """Seat ``seat``'s observation (observation.py) into ``out[:D]``; seats relative to it.

    ``face_up`` (the ``discards_face_up`` switch) makes every seat's discards visible.
    """
    players = rules[R_PLAYERS]
    out[: offsets[O_SIZE_TOTAL]] = 0
    write_counts(state[S_HAND + seat], out, offsets[O_HAND])
    s = seat
    for r in range(players):  # s = seat r places after the observer
        if r == 0 or face_up:
            write_counts(state[S_DOWN + s], out, offsets[O_DOWN] + r * NUM_TYPES)
        write_counts(state[S_UP + s], out, offsets[O_UP] + r * NUM_TYPES)
        out[offsets[O_COLUMNS] + r] = state[S_COLS + s]
        out[offsets[O_TILES_LEFT] + r] = popcount(state[S_HAND + s])
        out[offsets[O_CHIPS] + r] = state[S_BONUS + s] + state[S_SETTLE + s]
        s += 1
        if s == players:
            s = 0
    phase = state[S_PHASE]
    if phase == PHASE_LEAD or phase == PHASE_FOLLOW:
        out[offsets[O_LEADER] + _relative(state[S_LEADER], seat, players)] = 1
    if phase == PHASE_FOLLOW:
        write_counts(state[S_TABLE + state[S_LEADER]], out, offsets[O_LEAD])  # a lead is face up
        write_counts(table[state[S_BEST], T_MASK], out, offsets[O_BEST])
        out[offsets[O_BEST_SEAT] + _relative(state[S_BEST_SEAT], seat, players)] = 1
        out[offsets[O_SIZE] + state[S_SIZE] - 1] = 1
        out[offsets[O_ACTED]] = state[S_ACTED]
        out[offsets[O_OWED]] = state[S_OWED]
    if state[S_TO_ACT] >= 0:
        out[offsets[O_TO_ACT] + _relative(state[S_TO_ACT], seat, players)] = 1
    out[offsets[O_PHASE] + phase] = 1
    out[offsets[O_BANKER] + _relative(state[S_BANKER], seat, players)] = 1
    out[offsets[O_TRICK] + min(state[S_TRICK], MAX_TRICKS)] = 1
    out[offsets[O_DOOMED]] = state[S_DOOMED]
    out[offsets[O_STREAK]] = state[S_STREAK]


@njit(cache=True)
def observe(state, seat, table, rules, offsets, face_up, scratch, obs_out, mask_out):
    """Observation and legal-action mask of ``seat`` (the mask is all 0 unless it is to act)."""
    write_observation(state, seat, table, rules, offsets, face_up, obs_out)
    if seat == state[S_TO_ACT]:
        legal_mask(state, table, rules, scratch, mask_out)
    else:
        mask_out[:] = 0


@njit(cache=True, _nrt=False)
def record_tricks(report, history):
    """Add the tiles of one step's ``report`` to the trick ``history`` (layout.py): the
    decision's tiles and any forced discards go to the rows of the report's trick, and a trick
    the step ended is counted. (Seats beyond the players put down nothing: their rows stay 0.)"""
    row = HISTORY_STRIDE * report[REP_TRICK]
    kind = report[REP_KIND]
    seat = report[REP_SEAT]
    if kind == KIND_LEAD or kind == KIND_BEAT:
        history[row + 2 * seat + H_UP] |= report[REP_TILES]
    elif kind == KIND_DISCARD:
        history[row + 2 * seat + H_DOWN] |= report[REP_TILES]
    for s in range(MAX_SEATS):
        history[row + 2 * s + H_DOWN] |= report[REP_FORCED + s]
    if report[REP_WINNER] >= 0:
        history[H_COUNT] = report[REP_TRICK] + 1


@njit(cache=True, inline="always")
def unpack_tables(tables):
    """(table, rules) from one array: the length of ``rules``, ``rules``, then ``table`` by rows.
    A ``Game`` hands its kernels this one array, as numba's dispatcher costs about 65 ns for
    each array argument of a call, and a ``Game`` calls once or twice a decision."""
    n = tables[0]
    rules = tables[1 : 1 + n]
    table = tables[1 + n :].reshape(((tables.size - 1 - n) // T_COLS, T_COLS))
    return table, rules


@njit(cache=True)
def game_legal(state, tables, work):
    """``legal_actions`` into a ``Game``'s work array (layout.W_SCRATCH); return their count."""
    table, rules = unpack_tables(tables)
    return legal_actions(state, table, rules, work[W_SCRATCH:])


@njit(cache=True)
def game_step(state, action, row, tables, work):
    """One decision of a ``Game``: check that ``action`` is legal, apply it, log its report at
    row ``row`` of the work array's log (with the trick's leader and size before it) and add its
    tiles to the trick history (layout.py). Returns the report's status, or GAME_ILLEGAL when the
    action is not legal now: then nothing has changed. One call per decision, as numba's
    dispatcher costs more than the step."""
    table, rules = unpack_tables(tables)
    n = legal_actions(state, table, rules, work[W_SCRATCH:])
    legal = False
    for i in range(n):
        if work[W_SCRATCH + i] == action:
            legal = True
            break
    if not legal:
        return GAME_ILLEGAL
    at = W_LOG + W_ROW * row
    work[at + W_ROW_LEADER] = state[S_LEADER]
    work[at + W_ROW_SIZE] = state[S_SIZE]
    report = work[at : at + REPORT_LEN]
    step(state, action, table, rules, report)
    record_tricks(report, work[:HISTORY_LEN])
    return report[REP_STATUS]


@njit(cache=True)
def _write_trick_row(k, leader, ups, downs, seat, players, offsets, face_up, out):
    out[offsets[O_TRICK_LEADER] + k * players + _relative(leader, seat, players)] = 1
    for r in range(players):
        s = (seat + r) % players
        row = (k * players + r) * NUM_TYPES
        write_counts(ups[s], out, offsets[O_TRICK_UP] + row)
        if r == 0 or face_up:
            write_counts(downs[s], out, offsets[O_TRICK_DOWN] + row)
        out[offsets[O_TRICK_COUNT] + k * players + r] = popcount(ups[s] | downs[s])


@njit(cache=True)
def write_information_state(state, history, seat, table, rules, offsets, face_up, out):
    """Seat ``seat``'s perfect-recall information state (observation.py) into ``out``."""
    players = rules[R_PLAYERS]
    write_observation(state, seat, table, rules, offsets, face_up, out)
    out[offsets[O_SIZE_TOTAL] :] = 0
    write_counts(state[S_DEALT + seat], out, offsets[O_DEALT])
    ups = np.zeros(MAX_SEATS, dtype=np.int64)
    downs = np.zeros(MAX_SEATS, dtype=np.int64)
    for k in range(history[H_COUNT]):
        for s in range(players):
            ups[s] = history[HISTORY_STRIDE * k + 2 * s + H_UP]
            downs[s] = history[HISTORY_STRIDE * k + 2 * s + H_DOWN]
        _write_trick_row(
            k, state[S_LOG + LOG_STRIDE * k + LOG_LEADER], ups, downs, seat, players, offsets, face_up, out
        )
    phase = state[S_PHASE]
    if (phase == PHASE_LEAD or phase == PHASE_FOLLOW) and state[S_TRICK] < MAX_TRICKS:
        for s in range(players):
            ups[s] = state[S_TABLE + s] & state[S_UP + s]
            downs[s] = state[S_TABLE + s] & state[S_DOWN + s]
        _write_trick_row(state[S_TRICK], state[S_LEADER], ups, downs, seat, players, offsets, face_up, out)


# ----------------------------------------------------------------------------- episodes
@njit(cache=True)
def first_hand(state, rng, table, rules, hands_buf):
    """A hand dealt as Game(seed=...) deals it: the deal, then two dice for the banker."""
    deal(rng, rules, hands_buf)
    banker = dice_banker(rng, rules[R_PLAYERS])
    new_hand(state, hands_buf, banker, 1, table, rules)


@njit(cache=True)
def next_hand(state, rng, table, rules, hands_buf):
    """The next hand of a match (RULES.md sections 3 and 7): W of the hand just over banks."""
    winner = state[S_WINNER]
    streak = state[S_STREAK] + 1 if winner == state[S_BANKER] else 1
    deal(rng, rules, hands_buf)
    new_hand(state, hands_buf, winner, streak, table, rules)


@njit(cache=True)
def settle_decided(state, rng, table, rules, hands_buf, chips):
    """While the hand is over before any decision (an automatic One Red Dot declaration), add
    its net chips to ``chips`` and deal the next hand of the match."""
    while state[S_PHASE] == PHASE_OVER:
        for s in range(rules[R_PLAYERS]):
            chips[s] += state[S_BONUS + s] + state[S_SETTLE + s]
        next_hand(state, rng, table, rules, hands_buf)


@njit(cache=True)
def begin_episode(state, rng, table, rules, history, hands_buf, pending):
    """Start an episode: ``first_hand``, then skip hands decided at the deal (their chips go to
    ``pending``, to be paid with the next step)."""
    pending[:] = 0
    first_hand(state, rng, table, rules, hands_buf)
    settle_decided(state, rng, table, rules, hands_buf, pending)
    history[:] = 0


@njit(cache=True)
def env_step(state, action, table, rules, rng, history, hands_left, scratch, hands_buf, report, delta):
    """One decision in an environment; ``delta`` receives each seat's chips paid by it, and
    ``report`` what the step did (layout.py).

    Returns ENV_ILLEGAL when ``action`` is not legal (nothing changes), ENV_PLAYING when play
    goes on, ENV_NEXT_HAND when a hand ended and the next hand of the match began
    (``hands_left`` > 1), ENV_EPISODE_OVER when the hand ended and it was the episode's last.
    Its arrays come one by one: called from Python once per step, it would pay numba's
    dispatcher about twice as much for them in tuples.
    """
    players = rules[R_PLAYERS]
    n = legal_actions(state, table, rules, scratch)
    legal = False
    for i in range(n):
        if scratch[i] == action:
            legal = True
            break
    if not legal:
        return ENV_ILLEGAL
    step(state, action, table, rules, report)
    record_tricks(report, history)
    for s in range(players):
        delta[s] = report[REP_BONUS + s] + report[REP_SETTLE + s]
    if report[REP_STATUS] != STEP_HAND_OVER:
        return ENV_PLAYING
    if hands_left <= 1:
        return ENV_EPISODE_OVER
    next_hand(state, rng, table, rules, hands_buf)
    settle_decided(state, rng, table, rules, hands_buf, delta)
    history[:] = 0
    return ENV_NEXT_HAND


# ----------------------------------------------------------------------------- vector env
# Inside, the vector kernels pass their arrays in four named tuples (numba compiles a field
# access to a plain load: in compiled code they cost nothing).


class VectorEnvs(NamedTuple):
    """One row or entry per env."""

    states: np.ndarray  # int64 (N, S_LEN): each env's hand in progress
    rngs: np.ndarray  # uint64 (N,): each env's xorshift state (deals and dice)
    pending: np.ndarray  # int64 (N, MAX_SEATS): chips of the next hand decided at its deal
    hands_done: np.ndarray  # int64 (N,): hands finished in the episode
    running: np.ndarray  # int64 (N, MAX_SEATS): net chips of the episode so far


class VectorTables(NamedTuple):
    """The rule set's tables and the observation offsets, shared by every env."""

    table: np.ndarray  # int64 (C, T_COLS)
    rules: np.ndarray  # int64, the R_* switches and the lead index
    offsets: np.ndarray  # int64 (NUM_OFFSETS,): ObservationLayout.offsets


class VectorScratch(NamedTuple):
    """Scratch space."""

    legal: np.ndarray  # int64 (legal_len(C),): legal_actions' list
    hands: np.ndarray  # int64 (MAX_SEATS,): a deal
    report: np.ndarray  # int64 (REPORT_LEN,): what the last step did
    history: np.ndarray  # int64 (HISTORY_LEN,): unused, the vector env keeps no trick history


class VectorOutputs(NamedTuple):
    """What the vector env returns, written in place (vector.py documents each)."""

    obs: np.ndarray  # float32 (N, D)
    masks: np.ndarray  # int8 (N, A)
    legal: np.ndarray  # int16 (N, A + 1): the count, then the legal ids
    seats: np.ndarray  # int64 (N,): the acting seat
    rewards: np.ndarray  # float32 (N, P)
    terminated: np.ndarray  # bool (N,)
    episode_net: np.ndarray  # int64 (N, P)


@njit(cache=True, inline="always")  # an out-of-line call here costs more than the work
def _vector_observe(i, envs, tables, face_up, scratch, out):
    """Env i's outputs: the acting seat, its observation, its mask, and its legal action ids
    (``legal[i, 0]`` = their count, then the ids in the core's order)."""
    state = envs.states[i]
    seat = state[S_TO_ACT]
    out.seats[i] = seat
    write_observation(state, seat, tables.table, tables.rules, tables.offsets, face_up, out.obs[i])
    n = legal_actions(state, tables.table, tables.rules, scratch.legal)
    out.masks[i, :] = 0
    out.legal[i, 0] = n
    for k in range(n):
        out.masks[i, scratch.legal[k]] = 1
        out.legal[i, k + 1] = scratch.legal[k]


# The two entry points that Python calls take the arrays one by one and pack the named tuples
# in compiled code, where packing is free: numba's dispatcher types a tuple argument in Python,
# field by field, which doubles the cost of a call (one env, a random action and a step,
# interleaved in one process: 7.1 us flat, 13.8 us with the named tuples as arguments; the
# gap, about 7 us per call, stays at 64 envs).
@njit(cache=True)
def vector_reset(
    states,
    rngs,
    pending,
    hands_done,
    running,
    reseed,
    seeds,
    table,
    rules,
    offsets,
    face_up,
    legal_scratch,
    hands_buf,
    report,
    history,
    obs,
    masks,
    legal,
    seats,
    rewards,
    terminated,
    episode_net,
):
    """Begin an episode in each env (with ``reseed``, after seeding env i's generator with
    ``seeds[i]``; else its stream continues) and write the first observations."""
    envs = VectorEnvs(states, rngs, pending, hands_done, running)
    tables = VectorTables(table, rules, offsets)
    scratch = VectorScratch(legal_scratch, hands_buf, report, history)
    out = VectorOutputs(obs, masks, legal, seats, rewards, terminated, episode_net)
    for i in range(states.shape[0]):
        rng = rngs[i : i + 1]
        if reseed:
            seed_rng(rng, seeds[i])
        begin_episode(states[i], rng, table, rules, history, hands_buf, pending[i])
        hands_done[i] = 0
        running[i, :] = 0
        _vector_observe(i, envs, tables, face_up, scratch, out)


@njit(cache=True)
def vector_step(
    states,
    rngs,
    pending,
    hands_done,
    running,
    actions,
    table,
    rules,
    offsets,
    face_up,
    hands,
    scale,
    legal_scratch,
    hands_buf,
    report,
    history,
    obs,
    masks,
    legal,
    seats,
    rewards,
    terminated,
    episode_net,
):
    """Step every env with ``actions[i]`` for its acting seat, in one compiled loop; each seat's
    chips paid, times ``scale``, go to ``rewards``, and an episode ends after ``hands`` hands.
    The arguments are the fields of the four named tuples above, in order, ``actions`` after
    the envs' and ``face_up, hands, scale`` after the tables'.

    Returns -1, or the index of the first env whose action is not legal under ``masks``
    (then nothing has changed). A finished episode is reset at once (its next hand comes from
    the same generator): ``terminated[i]`` is set, ``episode_net[i]`` holds its net chips, and
    the observation, mask, legal ids and seat already show the new episode.
    """
    num_actions = masks.shape[1]
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= num_actions or masks[i, a] == 0:
            return i
    _vector_step_all(
        VectorEnvs(states, rngs, pending, hands_done, running),
        actions,
        VectorTables(table, rules, offsets),
        face_up,
        hands,
        scale,
        VectorScratch(legal_scratch, hands_buf, report, history),
        VectorOutputs(obs, masks, legal, seats, rewards, terminated, episode_net),
    )
    return -1


@njit(cache=True, _nrt=False)  # no reference counting: see the module docstring
def _vector_step_all(envs, actions, tables, face_up, hands, scale, scratch, out):
    """vector_step's loop, once every action is known to be legal."""
    table, rules, report = tables.table, tables.rules, scratch.report
    states, rngs, pending, running = envs.states, envs.rngs, envs.pending, envs.running
    players = rules[R_PLAYERS]
    for i in range(states.shape[0]):
        state = states[i]
        step(state, actions[i], table, rules, report)
        done = False
        if report[REP_STATUS] == STEP_HAND_OVER:
            rng = rngs[i : i + 1]
            envs.hands_done[i] += 1
            if envs.hands_done[i] < hands:  # the next hand's chips, if decided at its deal, go to pending
                next_hand(state, rng, table, rules, scratch.hands)
                settle_decided(state, rng, table, rules, scratch.hands, pending[i])
            else:
                done = True
        for s in range(players):
            paid = pending[i, s] + report[REP_BONUS + s] + report[REP_SETTLE + s]
            pending[i, s] = 0
            running[i, s] += paid
            out.rewards[i, s] = paid * scale
        out.terminated[i] = done
        if done:
            for s in range(players):
                out.episode_net[i, s] = running[i, s]
                running[i, s] = 0
            envs.hands_done[i] = 0
            begin_episode(state, rngs[i : i + 1], table, rules, scratch.history, scratch.hands, pending[i])
        _vector_observe(i, envs, tables, face_up, scratch, out)


@njit(cache=True)
def random_legal_actions(legal, rngs, out):
    """out[i]: a uniformly random legal action of env i, from its legal ids (``legal[i, 0]``
    of them after the count); ``rngs`` holds one xorshift state per env."""
    for i in range(legal.shape[0]):
        out[i] = legal[i, 1 + rand_below(rngs[i : i + 1], legal[i, 0])]
