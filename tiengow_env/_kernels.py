"""The compiled game core: every function here is ``@njit(cache=True)``.

Kernels take the three int64 arrays described in ``layout.py`` (``state``, ``table``,
``rules``) plus scalars, and write only into ``state``, ``out`` or ``scratch`` arguments.
Randomness comes from a caller-owned xorshift64 generator (``rng``, a uint64 array of one
element), so the same seed gives the same deals and playouts with or without the JIT.

Conventions: seats are 0..players-1 and play passes to ``(seat + 1) % players``. Hands are
masks over physical tiles; legality is tested on canonical masks (tiles.py), and a played
combination removes the lowest held copies of each of its types.
"""
import numpy as np
from numba import njit

from .layout import (MAX_SEATS, PHASE_DECLARE, PHASE_FOLLOW, PHASE_LEAD, PHASE_OVER,
                     R_BIG_SIX, R_COMBOS, R_DECK, R_EARLY_DEATH, R_HAND_BANKER, R_HAND_SIZE,
                     R_HEAVEN_LEADS, R_LAST_BONUS, R_LEAD_BY_TYPE, R_LEAD_IDS, R_LEAD_START, R_MUST_BEAT, R_PAR,
                     R_PAY_OVER_PAR, R_PLAYERS, R_RED_DOT, R_SHUTOUT_BONUS, R_SINGLE_21,
                     R_SINGLE_42, R_STAKE_QUARTET, R_STAKE_SUPREME, R_STREAK_FACTOR, R_ZERO_POINTS,
                     RED_DOT_AUTO, RED_DOT_CHOICE, S_ACTED, S_BANKER, S_BANKER_FIRST, S_BEST,
                     S_BEST_SEAT, S_BONUS, S_COLS, S_DEALT, S_DECLARER, S_DOOMED, S_DOWN, S_HAND,
                     S_LEADER, S_LEN, S_LOG, S_MULT_LAST, S_MULT_SHUT, S_OWED, S_PHASE, S_SETTLE,
                     S_SIZE, S_STREAK, S_TABLE, S_TO_ACT, S_TRICK, S_UP, S_WINNER, STAKE_QUARTET,
                     STAKE_SUPREME, T_BEAT_END, T_BEAT_START, T_LAST_BONUS, T_MASK, T_SIZE,
                     T_STAKE)
from .tiles import CIVIL_LOW, LITTLE_THREE, NUM_TYPES, RED_PIPS, TILE_TYPE, TYPE_BITS, TYPE_MASK

_CIVIL_LOW = np.int64(CIVIL_LOW)
_CIVIL_ALL = np.int64((int(CIVIL_LOW) << 1) | int(CIVIL_LOW))
_TILE_TYPE = TILE_TYPE.astype(np.int64)
_TYPE_MASK = TYPE_MASK.astype(np.int64)
_TYPE_LOW = np.left_shift(1, TYPE_BITS[:, 0]).astype(np.int64)  # copy 0 of each type
_TILE_RED = RED_PIPS[TILE_TYPE].astype(np.int64)
DISCARD_SET = np.int64(1) << 40  # perft decision code: DISCARD_SET | canonical mask


# ----------------------------------------------------------------------------- bits
@njit(cache=True)
def popcount(x):
    """Set bits of a mask below 2**32 (SWAR, no loop)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@njit(cache=True)
def lowest_bit(x):
    """Index of the lowest set bit of a non-zero mask."""
    return popcount((x & -x) - 1)


@njit(cache=True)
def canonical(hand):
    """Canonical mask of a hand: the lowest copies of each type it holds (tiles.py)."""
    low = (hand | (hand >> 1)) & _CIVIL_LOW
    both = hand & (hand >> 1) & _CIVIL_LOW
    return (hand & ~_CIVIL_ALL) | low | (both << 1)


@njit(cache=True)
def take(hand, need):
    """The physical tiles of ``hand`` that realise the canonical mask ``need``.

    A civil type needed once is taken from whichever copy the hand holds (copy 0 first).
    """
    once = need & _CIVIL_LOW & ~(need >> 1)
    return (need & ~once) | (once & hand) | ((once & ~hand) << 1)


@njit(cache=True)
def red_pips(hand):
    n = 0
    while hand:
        b = lowest_bit(hand)
        n += _TILE_RED[b]
        hand &= hand - 1
    return n


# ----------------------------------------------------------------------------- random
@njit(cache=True)
def rand_below(rng, k):
    """Uniform integer in [0, k) from the xorshift64 generator ``rng`` (uint64[1])."""
    x = rng[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    rng[0] = x
    return np.int64(((x >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))  # Lemire's multiply-shift


@njit(cache=True)
def seed_rng(rng, seed):
    """Seed the generator from any integer (splitmix-style scrambling, never zero)."""
    x = np.uint64(seed) ^ np.uint64(0x9E3779B97F4A7C15)
    for _ in range(4):
        x ^= x >> np.uint64(31)
        x ^= x << np.uint64(11)
        x ^= x >> np.uint64(17)
    if x == np.uint64(0):
        x = np.uint64(0x2545F4914F6CDD1D)
    rng[0] = x


@njit(cache=True)
def deal(rng, rules, out):
    """Uniformly random deal of the rule set's deck: writes one mask per seat into ``out``."""
    deck = rules[R_DECK]
    players = rules[R_PLAYERS]
    hand_size = rules[R_HAND_SIZE]
    bits = np.empty(32, dtype=np.int64)
    n = 0
    for b in range(32):
        if (deck >> b) & 1:
            bits[n] = b
            n += 1
    for i in range(n - 1, 0, -1):  # Fisher-Yates
        j = rand_below(rng, i + 1)
        bits[i], bits[j] = bits[j], bits[i]
    for s in range(players):
        hand = np.int64(0)
        for k in range(hand_size):
            hand |= np.int64(1) << bits[s * hand_size + k]
        out[s] = hand


# ----------------------------------------------------------------------------- a new hand
@njit(cache=True)
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


@njit(cache=True)
def next_red_dot_holder(state, seat, rules):
    """First seat from ``seat`` on, in play order and before returning to the banker, whose
    dealt hand has exactly one red pip; -1 when there is none (or One Red Dot is off)."""
    if rules[R_RED_DOT] == 0:
        return -1
    players = rules[R_PLAYERS]
    banker = state[S_BANKER]
    s = seat
    while True:
        if red_pips(state[S_DEALT + s]) == 1:
            return s
        s = (s + 1) % players
        if s == banker:
            return -1


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def declare(state, seat, table, rules):
    """One Red Dot: the hand ends at once, the declarer is W with every column."""
    state[S_DECLARER] = seat
    state[S_WINNER] = seat
    state[S_COLS + seat] = rules[R_HAND_SIZE]
    finish(state, table, rules)


# ----------------------------------------------------------------------------- legal moves
@njit(cache=True)
def legal_actions(state, table, rules, out):
    """Write the acting seat's legal action ids (layout.py) into ``out``; return their count."""
    phase = state[S_PHASE]
    n = 0
    if phase == PHASE_OVER:
        return 0
    C = rules[R_COMBOS]
    if phase == PHASE_DECLARE:
        out[0] = C + NUM_TYPES
        out[1] = C + NUM_TYPES + 1
        return 2
    seat = state[S_TO_ACT]
    hand = state[S_HAND + seat]
    held = canonical(hand)
    if phase == PHASE_LEAD:
        if not rules[R_LEAD_BY_TYPE]:
            return scan_leads(rules, held, 0, C, out, 0)
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
    remaining = held & (_CIVIL_LOW | ~_CIVIL_ALL)
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


@njit(cache=True)
def scan_leads(rules, held, lo, hi, out, n):
    """Append the combinations lo..hi-1 of the lead index that ``held`` can make."""
    masks = R_LEAD_IDS + rules[R_COMBOS]
    for k in range(lo, hi):
        out[n] = rules[R_LEAD_IDS + k]  # branch-free: keep the slot only when the hand can make it
        n += held & rules[masks + k] == rules[masks + k]
    return n


# ----------------------------------------------------------------------------- applying
@njit(cache=True)
def step(state, action, table, rules):
    """Apply one legal action of the acting seat, then any forced early-death discards."""
    C = rules[R_COMBOS]
    players = rules[R_PLAYERS]
    seat = state[S_TO_ACT]
    phase = state[S_PHASE]
    if phase == PHASE_DECLARE:
        if action == C + NUM_TYPES:
            declare(state, seat, table, rules)
        else:
            nxt = next_red_dot_holder(state, (seat + 1) % players, rules)
            if nxt == state[S_BANKER] or nxt < 0:
                start_play(state, rules)
            else:
                state[S_TO_ACT] = nxt
        return
    if action < C:
        tiles = take(state[S_HAND + seat], table[action, T_MASK])
        state[S_HAND + seat] ^= tiles
        state[S_UP + seat] |= tiles
        state[S_TABLE + seat] = tiles
        state[S_BEST] = action
        state[S_BEST_SEAT] = seat
        state[S_ACTED] += 1
        if phase == PHASE_LEAD:
            state[S_SIZE] = table[action, T_SIZE]
            state[S_PHASE] = PHASE_FOLLOW
            if seat == state[S_BANKER] and state[S_BANKER_FIRST] < 0:
                state[S_BANKER_FIRST] = unbeatable_in_own_eyes(state, action, table, rules)
        state[S_TO_ACT] = (seat + 1) % players
    else:
        tile = take(state[S_HAND + seat], _TYPE_LOW[action - C])
        state[S_HAND + seat] ^= tile
        state[S_DOWN + seat] |= tile
        state[S_TABLE + seat] |= tile
        if state[S_OWED] == 0:
            state[S_OWED] = state[S_SIZE]
        state[S_OWED] -= 1
        if state[S_OWED] == 0:
            state[S_ACTED] += 1
            state[S_TO_ACT] = (seat + 1) % players
    advance(state, table, rules)


@njit(cache=True)
def advance(state, table, rules):
    """Close a full trick, and apply early-death discards, until a real decision or the end."""
    players = rules[R_PLAYERS]
    while state[S_PHASE] == PHASE_FOLLOW:
        if state[S_ACTED] == players:
            end_trick(state, table, rules)
        elif state[S_DOOMED] and state[S_COLS + state[S_TO_ACT]] == 0:
            seat = state[S_TO_ACT]
            tile = state[S_HAND + seat]
            state[S_HAND + seat] = 0
            state[S_DOWN + seat] |= tile
            state[S_TABLE + seat] |= tile
            state[S_ACTED] += 1
            state[S_TO_ACT] = (seat + 1) % players
        else:
            return


@njit(cache=True)
def end_trick(state, table, rules):
    players = rules[R_PLAYERS]
    banker = state[S_BANKER]
    winner = state[S_BEST_SEAT]
    best = state[S_BEST]
    k = state[S_TRICK]
    state[S_LOG + 4 * k] = state[S_LEADER]
    state[S_LOG + 4 * k + 1] = winner
    state[S_LOG + 4 * k + 2] = state[S_SIZE]
    state[S_LOG + 4 * k + 3] = best
    state[S_TRICK] = k + 1
    state[S_COLS + winner] += state[S_SIZE]
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
    if state[S_HAND + winner] == 0:
        state[S_WINNER] = winner
        finish(state, table, rules)
    else:
        start_trick(state, winner, rules)


@njit(cache=True)
def banker_factor(state, rules):
    """Factor of a payment that involves this hand's banker: 2, or 1 + streak."""
    return 1 + state[S_STREAK] if rules[R_STREAK_FACTOR] else 2


@njit(cache=True)
def unbeatable_in_own_eyes(state, combo, table, rules):
    """1 if no combination beating ``combo`` can be made from the deck outside the banker's
    dealt hand (counting copies), else 0 (RULES.md section 6, shutout exception)."""
    outside = canonical(rules[R_DECK] & ~state[S_DEALT + state[S_BANKER]])
    for j in range(table[combo, T_BEAT_START], table[combo, T_BEAT_END]):
        if outside & table[j, T_MASK] == table[j, T_MASK]:
            return 0
    return 1


@njit(cache=True)
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
        k = state[S_TRICK] - 1
        leader = state[S_LOG + 4 * k]
        winning = state[S_LOG + 4 * k + 3]
        if rules[R_LAST_BONUS] and table[winning, T_LAST_BONUS]:
            last = 2
        # Big Six captures Little Three: the leader of a last single 2-1 pays for everyone.
        if (rules[R_BIG_SIX] and state[S_LOG + 4 * k + 2] == 1 and w != leader
                and winning == rules[R_SINGLE_42] and state[S_TABLE + leader] == _TYPE_LOW[LITTLE_THREE]):
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
@njit(cache=True)
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
    scratch = np.zeros(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    steps = 0
    for i in range(num_hands):
        deal(rng, rules, hands)
        banker = (rand_below(rng, 6) + rand_below(rng, 6) + 1) % players
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
    width = rules[R_COMBOS] + 1100  # leads/beats + at most C(10, 4) = 210 discard sets (+ room)
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
