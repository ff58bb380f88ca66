"""Compiled search kernels: PIMC with rollouts, an exact max-n endgame solver and
single-observer information-set MCTS. Every function is ``@njit(cache=True)``;
``tiengow_env.search`` checks inputs and allocates for them. The kernels take their arrays in a
few named tuples (``Tables``, ``Solver``, ``PimcSettings``, ...), defined here.

A *world* is a full state consistent with what the searching seat knows, drawn by
``_kernels.determinize`` (the tiles hidden from the seat dealt again at random). Searches read
the true state only through that sampler, so they never use hidden information.

References:
  [CPW12] Cowling, Powley, Whitehouse. Information Set Monte Carlo Tree Search. IEEE TCIAIG 2012.
  [LI86]  Luckhardt, Irani. An Algorithmic Solution of N-Person Games. AAAI 1986 (max-n).
  [KKS13] Karnin, Koren, Somekh. Almost Optimal Exploration in Multi-Armed Bandits. ICML 2013
          (sequential halving).
  [ASC24] Arjonilla, Saffidine, Cazenave. Perfect Information Monte Carlo with Postponing
          Reasoning. 2024 (extended PIMC).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from . import _kernels as K
from . import _policy_kernels as PK
from .layout import (
    LOG_LEADER,
    LOG_STRIDE,
    LOG_WINNER,
    LOG_WINNING,
    MAX_SEATS,
    PHASE_FOLLOW,
    PHASE_OVER,
    R_COMBOS,
    R_PLAYERS,
    S_ACTED,
    S_BANKER,
    S_BANKER_FIRST,
    S_BEST,
    S_BEST_SEAT,
    S_BONUS,
    S_COLS,
    S_DOOMED,
    S_DOWN,
    S_HAND,
    S_LEADER,
    S_LEN,
    S_LOG,
    S_OWED,
    S_PHASE,
    S_SETTLE,
    S_SIZE,
    S_TABLE,
    S_TO_ACT,
    S_TRICK,
)
from .tiles import NUM_TYPES, TILE_TYPE, TYPE_MASK

_TILE_TYPE = TILE_TYPE.astype(np.int64)
_TYPE_MASK = TYPE_MASK.astype(np.int64)
MAX_DEPTH = 48  # decisions left in a hand, at most: one per tile (32) plus the declare choices
TT_WORDS = 4  # a transposition-table key: four int64 words (endgame_key)
F_COUNT, F_INDEX, F_SLOT = 4, 5, 6  # solver frame columns after the key: legal count, next action, table slot
FRAME = 7
V_BEST = 4  # solver values column after the seats' chips: the actor's best so far
EPSILON_UNIT = 1 << 20  # a rollout's random-action probability, in steps of 1 / EPSILON_UNIT


class Tables(NamedTuple):
    """The rule set's tables every search kernel reads."""

    table: np.ndarray  # the combination table (``combos.ComboTable.table``)
    rules: np.ndarray  # the rules array (``combos.ComboTable.rules_array``)
    singles: np.ndarray  # the single of each tile type (``_policy_kernels.single_of_type``)
    face_up: bool  # whether discards go face up (``RuleSet.discards_face_up``)


class Solver(NamedTuple):
    """The exact endgame solver's stack and transposition table (``solve_endgame``), reused
    across worlds: an entry counts only when its stamp is the current world's."""

    states: np.ndarray  # int64 (MAX_DEPTH + 1, S_LEN): the state at each depth
    moves: np.ndarray  # int64 (MAX_DEPTH + 1, num_actions): the legal actions at each depth
    frames: np.ndarray  # int64 (MAX_DEPTH + 1, FRAME): key, legal count, next action, table slot
    values: np.ndarray  # float64 (MAX_DEPTH + 1, MAX_SEATS + 1): chips per seat, then the actor's best
    tt_keys: np.ndarray  # int64 (N, TT_WORDS), N a power of two
    tt_values: np.ndarray  # float64 (N, MAX_SEATS): chips still to come per seat
    tt_stamp: np.ndarray  # int64 (N,): the world each entry belongs to
    counter: np.ndarray  # int64 (1,): the last stamp used


class PimcSettings(NamedTuple):
    """How ``pimc_values`` spends its rollouts."""

    samples: int  # rollouts per legal action (in all, with halving)
    epsilon: float  # each rollout decision uniformly random with this probability, else greedy
    halving: bool  # sequential halving over the actions [KKS13]
    paired: bool  # every action of a world finished with the same random numbers


class Worlds(NamedTuple):
    """Given worlds to draw from instead of fresh ones: none when ``pool`` has no row."""

    pool: np.ndarray  # int64 (N, S_LEN): world states
    cdf: np.ndarray  # float64 (N,): ascending to 1; row i drawn with probability cdf[i] - cdf[i - 1]


class PimcOut(NamedTuple):
    """What ``pimc_values`` writes, one entry per action searched."""

    means: np.ndarray  # float64: mean chips over the worlds the action was played in
    worlds: np.ndarray  # int64: how many worlds those were
    rounds: np.ndarray  # int64: rounds of halving survived (the preferred action: one more than any other)


class IsmctsSettings(NamedTuple):
    """How ``ismcts`` searches."""

    iterations: int  # one world, one descent and one new node each
    exploration: float  # UCB1's constant on rewards of chips / scale
    scale: float  # chips per unit of reward
    epsilon: float  # each rollout decision uniformly random with this probability, else greedy


class Tree(NamedTuple):
    """The ISMCTS tree: one row per node."""

    links: np.ndarray  # int64 (iterations + 1, 5): N_PARENT, N_CHILD, N_SIBLING, N_EDGE, N_ACTOR
    stats: np.ndarray  # float64 (iterations + 1, 3): F_VISITS, F_REWARD, F_AVAILABLE


class IsmctsOut(NamedTuple):
    """What ``ismcts`` writes about the root's edges."""

    actions: np.ndarray  # int64: the edge (action id)
    visits: np.ndarray  # float64
    values: np.ndarray  # float64: mean chips of the searching seat


# ----------------------------------------------------------------------------- worlds
@njit(cache=True)
def banker_first_lead(state):
    """The banker's first lead when it can still matter, else -1.

    The shutout exception (RULES.md section 6) reads whether that lead was unbeatable in the
    banker's own eyes, which depends on the banker's hidden hand. It only matters while the
    banker has won every trick it led: then that lead won its trick, and the trick log (or the
    trick in progress) shows it.
    """
    banker = state[S_BANKER]
    for k in range(state[S_TRICK]):
        log = S_LOG + LOG_STRIDE * k
        if state[log + LOG_LEADER] == banker:
            return state[log + LOG_WINNING] if state[log + LOG_WINNER] == banker else -1
    if state[S_PHASE] == PHASE_FOLLOW and state[S_LEADER] == banker and state[S_BEST_SEAT] == banker:
        return state[S_BEST]
    return -1


@njit(cache=True)
def deal_world(state, seat, face_up, table, rules, rng, out):
    """A world for ``seat``: ``_kernels.determinize``, and the banker's first-lead flag worked
    out again from the world's banker hand (the true flag reads the banker's hidden tiles)."""
    deal_world_with(state, seat, face_up, table, rules, rng, np.empty(32, dtype=np.int64), out)


@njit(cache=True, _nrt=False)  # a call per world a search draws: see _kernels' docstring
def deal_world_with(state, seat, face_up, table, rules, rng, bits, out):
    """``deal_world``, shuffling in the caller's ``bits`` (32 entries)."""
    K.determinize_with(state, seat, face_up, rules, rng, bits, out)
    banker_first_again(state, seat, table, rules, out)


@njit(cache=True, inline="always")
def banker_first_again(state, seat, table, rules, out):
    """The banker's first-lead flag of world ``out`` worked out from its banker hand."""
    if state[S_BANKER] != seat and state[S_BANKER_FIRST] >= 0:
        first = banker_first_lead(state)
        out[S_BANKER_FIRST] = K.unbeatable_in_own_eyes(out, first, table, rules) if first >= 0 else 0


@njit(cache=True)
def deal_worlds(state, seat, face_up, table, rules, rng, out):
    """``deal_world`` into each row of ``out`` in turn (``search.sample_worlds``)."""
    bits = np.empty(32, dtype=np.int64)
    for i in range(out.shape[0]):
        deal_world_with(state, seat, face_up, table, rules, rng, bits, out[i])


LEAST_WEIGHT = 1e-12  # a place's weight for a tile, relative to the tile's likeliest place, at least this


@njit(cache=True)
def deal_located_worlds(state, seat, face_up, log_weights, table, rules, rng, out):
    """Worlds for ``seat``, one per row of ``out``, drawn exactly from a belief that weighs each
    hidden tile's place on its own: a world's probability is proportional to the product over
    the hidden tiles of exp(``log_weights[place, tile]``) (place s: seat s's hand; players + s:
    its face-down tiles), among the deals the uniform one gives (every place keeps its public
    size). The belief's mass over the tiles still to place, for every vector of sizes still
    open, is tabulated once; each tile's place is then drawn by its share of that mass, so the
    draws are exact and independent: no weights, and a world repeats only by chance. A place's
    weight for a tile is at least ``LEAST_WEIGHT`` of the tile's likeliest place's (no underflow)."""
    players = rules[R_PLAYERS]
    rows = np.empty(2 * MAX_SEATS, dtype=np.int64)  # the places, as rows of log_weights
    sizes = np.empty(2 * MAX_SEATS, dtype=np.int64)
    seats = np.empty(2 * MAX_SEATS, dtype=np.int64)
    m = 0
    hidden = np.int64(0)
    for s in range(players):
        if s == seat:
            continue
        hidden |= state[S_HAND + s]
        rows[m], sizes[m], seats[m] = s, K.popcount(state[S_HAND + s]), s
        m += 1
        if not face_up:
            hidden |= state[S_DOWN + s]
            rows[m], sizes[m], seats[m] = players + s, K.popcount(state[S_DOWN + s]), s
            m += 1
    n = K.popcount(hidden)
    bits = np.empty(n, dtype=np.int64)
    for j in range(n):  # in tile order
        bits[j] = K.lowest_bit(hidden)
        hidden &= hidden - 1
    weights = np.empty((n, m), dtype=np.float64)
    for j in range(n):
        top = -np.inf
        for p in range(m):
            top = max(top, log_weights[rows[p], bits[j]])
        for p in range(m):
            weights[j, p] = max(np.exp(log_weights[rows[p], bits[j]] - top), LEAST_WEIGHT)
    strides = np.empty(m, dtype=np.int64)
    total = 1
    for p in range(m):
        strides[p] = total
        total *= sizes[p] + 1
    mass = np.zeros(total)  # mass[c]: the belief's mass of placing the last k tiles, c's sizes open (summing to k)
    mass[0] = 1.0
    left = np.empty(m, dtype=np.int64)
    for c in range(1, total):
        r, k = c, 0
        for p in range(m):
            left[p] = r % (sizes[p] + 1)
            r //= sizes[p] + 1
            k += left[p]
        z = 0.0
        for p in range(m):
            if left[p]:
                z += weights[n - k, p] * mass[c - strides[p]]
        mass[c] = z
    places = np.empty(2 * MAX_SEATS, dtype=np.int64)
    x = rng[0]
    for i in range(out.shape[0]):
        c = total - 1
        for p in range(m):
            left[p] = sizes[p]
            places[p] = 0
        for j in range(n):
            x = K.xorshift(x)
            u = np.float64(x >> np.uint64(11)) * (1.0 / 9007199254740992.0) * mass[c]
            chosen = -1
            for p in range(m):
                if left[p]:
                    chosen = p
                    u -= weights[j, p] * mass[c - strides[p]]
                    if u < 0.0:
                        break
            places[chosen] |= np.int64(1) << bits[j]
            left[chosen] -= 1
            c -= strides[chosen]
        world = out[i]
        for k in range(S_LEN):
            world[k] = state[k]
        p = 0
        while p < m:
            hand = places[p]
            down = state[S_DOWN + seats[p]]
            if not face_up:
                p += 1
                down = places[p]
            K.place_hidden(state, seats[p], hand, down, face_up, world)
            p += 1
        banker_first_again(state, seat, table, rules, world)
    rng[0] = x


# ----------------------------------------------------------------------------- exact endgame
@njit(cache=True, inline="always")
def chips(state, seat):
    return state[S_BONUS + seat] + state[S_SETTLE + seat]


@njit(cache=True)
def endgame_key(state, out):
    """Everything the rest of a hand depends on, packed exactly into four words: the hands, the
    columns, the trick in progress (who acts, leader, best and its owner, counts, the tiles
    the leader put down, which Big Six reads) and the banker's first-lead flag. Chips won so far
    are left out: they only add to what follows, so the table stores what is still to come."""
    out[0] = state[S_HAND] | (state[S_HAND + 1] << 32)
    out[1] = state[S_HAND + 2] | (state[S_HAND + 3] << 32)
    word = np.int64(0)
    for s in range(MAX_SEATS):
        word = (word << 4) | state[S_COLS + s]
    word = (word << 3) | (state[S_TO_ACT] & 7)
    word = (word << 3) | state[S_LEADER]
    word = (word << 12) | (state[S_BEST] & 4095)
    word = (word << 3) | (state[S_BEST_SEAT] & 7)
    word = (word << 3) | state[S_ACTED]
    word = (word << 3) | state[S_OWED]
    word = (word << 3) | state[S_SIZE]
    word = (word << 2) | (state[S_BANKER_FIRST] & 3)
    word = (word << 1) | state[S_DOOMED]
    out[2] = word
    out[3] = state[S_TABLE + state[S_LEADER]] | (state[S_PHASE] << 40)


@njit(cache=True, inline="always")
def _slot(key, size):
    h = key[0] ^ (key[0] >> 23) ^ (key[1] << 7) ^ (key[1] >> 19) ^ (key[2] << 3) ^ (key[2] >> 29) ^ (key[3] >> 5)
    h ^= h >> 31
    h ^= h << 11
    h ^= h >> 17
    return h & (size - 1)


@njit(cache=True, inline="always")
def _lookup(state, frame, tt_keys, tt_values, tt_stamp, stamp, rules, out):
    """Fill ``frame``'s key and slot; on a hit write the stored value into ``out``."""
    endgame_key(state, frame)
    slot = _slot(frame, tt_stamp.shape[0])
    frame[F_SLOT] = slot
    if tt_stamp[slot] != stamp:
        return False
    for w in range(TT_WORDS):
        if tt_keys[slot, w] != frame[w]:
            return False
    for s in range(rules[R_PLAYERS]):
        out[s] = chips(state, s) + tt_values[slot, s]
    return True


@njit(cache=True, inline="always")
def _back_up(state, child, out):
    """A child's values reach its parent: the parent's actor keeps the best for itself (the
    first such child in legal order)."""
    actor = state[S_TO_ACT]
    if child[actor] > out[V_BEST]:
        out[V_BEST] = child[actor]
        for s in range(MAX_SEATS):
            out[s] = child[s]


@njit(cache=True)
def solve_endgame(solver, stamp, table, rules):
    """Max-n value of ``states[0]`` [LI86]: ``values[0, s]`` is seat s's final chips when
    every seat, from here on, plays to maximise its own (settlement, trick bonuses and every
    multiplier included; a seat indifferent between actions takes the first in legal order).
    Returns the number of nodes searched.

    Depth-first with an explicit stack (numba's cache cannot hold recursive functions), the
    ``solver``'s arrays (``Solver``): its transposition table holds entries of the current
    ``stamp`` only, so it is reused across worlds uncleared. The state is ``solver.states[0]``,
    its values land in ``solver.values[0]``.
    """
    states, moves, frames, values = solver.states, solver.moves, solver.frames, solver.values
    tt_keys, tt_values, tt_stamp = solver.tt_keys, solver.tt_values, solver.tt_stamp
    players = rules[R_PLAYERS]
    if states[0, S_PHASE] == PHASE_OVER:
        for s in range(players):
            values[0, s] = chips(states[0], s)
        return 1
    if _lookup(states[0], frames[0], tt_keys, tt_values, tt_stamp, stamp, rules, values[0]):
        return 1
    nodes = 1
    depth = 0
    frames[0, F_COUNT] = K.legal_actions(states[0], table, rules, moves[0])
    frames[0, F_INDEX] = 0
    values[0, V_BEST] = -1e300
    while True:
        state = states[depth]
        if frames[depth, F_INDEX] < frames[depth, F_COUNT]:
            child = states[depth + 1]
            child[:] = state
            K.step(child, moves[depth, frames[depth, F_INDEX]], table, rules)
            frames[depth, F_INDEX] += 1
            nodes += 1
            if child[S_PHASE] == PHASE_OVER:
                for s in range(players):
                    values[depth + 1, s] = chips(child, s)
            elif not _lookup(child, frames[depth + 1], tt_keys, tt_values, tt_stamp, stamp, rules, values[depth + 1]):
                depth += 1
                frames[depth, F_COUNT] = K.legal_actions(child, table, rules, moves[depth])
                frames[depth, F_INDEX] = 0
                values[depth, V_BEST] = -1e300
                continue
            _back_up(state, values[depth + 1], values[depth])
            continue
        slot = frames[depth, F_SLOT]  # every child is done: store what is still to come
        tt_stamp[slot] = stamp
        for w in range(TT_WORDS):
            tt_keys[slot, w] = frames[depth, w]
        for s in range(players):
            tt_values[slot, s] = values[depth, s] - chips(state, s)
        if depth == 0:
            return nodes
        depth -= 1
        _back_up(states[depth], values[depth + 1], values[depth])


# ----------------------------------------------------------------------------- PIMC
@njit(cache=True, _nrt=False)  # no reference counting in the rollout loop: see _kernels' docstring
def finish_world(state, epsilon, table, rules, rng, scratch):
    """Play ``state`` to the end of the hand by the greedy policy, each decision replaced by a
    uniformly random legal action with probability ``epsilon`` (the paired epsilon rollouts).
    The coin comes first: only a random choice lists the legal actions (``greedy_action``
    follows from the hand). The generator's state stays in a register."""
    threshold = np.int64(epsilon * EPSILON_UNIT)
    x = rng[0]
    while state[S_PHASE] != PHASE_OVER:
        action, x = rollout_action(state, threshold, table, rules, x, scratch)
        K.step(state, action, table, rules)
    rng[0] = x


@njit(cache=True, inline="always", _nrt=False)
def rollout_action(state, threshold, table, rules, x, scratch):
    """(action, the generator's next state): one decision of ``finish_world``'s policy from
    generator state ``x``, uniformly random with probability ``threshold / EPSILON_UNIT``."""
    explore = False
    if threshold > 0:
        x = K.xorshift(x)
        explore = K.below(x, EPSILON_UNIT) < threshold
    if explore:
        n = K.legal_actions(state, table, rules, scratch)
        x = K.xorshift(x)
        return scratch[K.below(x, n)], x
    return K.greedy_action(state, table, rules, scratch), x


@njit(cache=True, _nrt=False)  # a call per rollout, no reference counting: see _kernels' docstring
def rollout(world, action, seat, epsilon, table, rules, rng, scratch, child):
    """``seat``'s chips when ``action`` is played in ``world`` and the hand finished by
    ``finish_world``, played out in ``child`` (``world`` is left as it was)."""
    for k in range(S_LEN):
        child[k] = world[k]
    K.step(child, action, table, rules)
    finish_world(child, epsilon, table, rules, rng, scratch)
    return chips(child, seat)


@njit(cache=True)
def pimc_values(state, seat, actions, bonus, settings, worlds, tables, rng, out):
    """Mean chips of ``seat`` after each of ``actions`` over sampled worlds, each finished by
    ``finish_world``: ``settings.samples`` rollouts per action in all, every world shared by the
    actions played in it. Worlds are dealt afresh (``deal_world``), or, given a ``worlds`` pool,
    drawn from it by its ``cdf``: worlds resampled by a belief computed outside the kernel.

    Without ``settings.halving`` every action is played in the same worlds. With it the same
    rollouts are spent by sequential halving [KKS13]: in each of ceil(log2 K) rounds every
    action still in the race is played in the same new worlds, an equal share of the rollouts
    per round, and the better half goes on, so the last two are compared over many more worlds
    than a uniform split gives them. Actions are ranked by their mean plus their ``bonus`` (a
    prior's say, in chips; zeros for none). Writes ``out`` (``PimcOut``)."""
    table, rules, face_up = tables.table, tables.rules, tables.face_up
    pool, cdf = worlds.pool, worlds.cdf
    count = actions.shape[0]
    world = np.empty(S_LEN, dtype=np.int64)
    child = np.empty(S_LEN, dtype=np.int64)
    scratch = np.empty(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    bits = np.empty(32, dtype=np.int64)
    alive = np.arange(count)
    sums = np.zeros(count, dtype=np.float64)
    totals = np.zeros(count, dtype=np.float64)
    order = np.zeros(count, dtype=np.float64)
    out.worlds[:] = 0
    out.rounds[:] = 0
    rounds = 1
    while settings.halving and (1 << rounds) < count:
        rounds += 1
    budget = settings.samples * count
    live = count
    for r in range(rounds):
        draws = max(1, budget // (rounds * live))
        for _ in range(draws):
            if pool.shape[0]:
                u = K.rand_below(rng, EPSILON_UNIT) / EPSILON_UNIT
                world[:] = pool[min(np.searchsorted(cdf, u, side="right"), pool.shape[0] - 1)]
            else:
                deal_world_with(state, seat, face_up, table, rules, rng, bits, world)
            start = rng[0]
            for j in range(live):
                i = alive[j]
                if settings.paired:
                    rng[0] = start
                sums[i] += rollout(world, actions[i], seat, settings.epsilon, table, rules, rng, scratch, child)
                totals[i] += 1.0
                out.worlds[i] += 1
        for j in range(live):
            out.rounds[alive[j]] = r + 1
            order[j] = -(sums[alive[j]] / totals[alive[j]] + bonus[alive[j]])
        ranked = alive[:live][np.argsort(order[:live], kind="mergesort")]  # ties keep their order
        live = (live + 1) // 2
        alive[:live] = ranked[:live]
    out.rounds[alive[0]] = rounds + 1
    for i in range(count):
        out.means[i] = sums[i] / totals[i]


KEY_PRIME = (1 << 40) - 87  # the hash of a public sequence, kept below 2**40 so that key * 1009 fits


@njit(cache=True)
def pimc_extended(state, seat, actions, settings, worlds, tables, rng, out):
    """Extended PIMC at depth one [ASC24]: each action's value when ``seat``'s next decision is
    made once for each of its information sets, not once for each world.

    Every action is played in the same ``settings.samples`` worlds (paired). In each, the other
    seats move by ``finish_world``'s policy up to ``seat``'s next decision; the worlds that reach
    it by the same public moves form one information set. In a set of two worlds or more every
    legal action there is played out in each world, and the action chosen for the set is the
    best on average over half its worlds, valued on the other half (and the other way round), so
    that the maximum's noise does not inflate the value. A world alone in its set, or where the
    hand is over, is finished by ``finish_world``.
    ``settings.halving`` and ``settings.paired`` are not read. Writes ``out`` (``PimcOut``: every
    action's worlds are ``settings.samples``, its rounds 1) and returns the rollouts played."""
    table, rules, face_up = tables.table, tables.rules, tables.face_up
    pool, cdf = worlds.pool, worlds.cdf
    count = actions.shape[0]
    samples = settings.samples
    C = rules[R_COMBOS]
    width = C + NUM_TYPES + 2
    threshold = np.int64(settings.epsilon * EPSILON_UNIT)
    drawn = np.empty((samples, S_LEN), dtype=np.int64)
    starts = np.empty(samples, dtype=np.uint64)
    bits = np.empty(32, dtype=np.int64)
    for w in range(samples):
        if pool.shape[0]:
            u = K.rand_below(rng, EPSILON_UNIT) / EPSILON_UNIT
            drawn[w] = pool[min(np.searchsorted(cdf, u, side="right"), pool.shape[0] - 1)]
        else:
            deal_world_with(state, seat, face_up, table, rules, rng, bits, drawn[w])
    base = rng[0]
    for w in range(samples):  # each world its own stream of rollout draws
        starts[w] = K.splitmix64(K._add64(base, np.uint64(w))) | np.uint64(1)
    child = np.empty(S_LEN, dtype=np.int64)
    mids = np.empty((samples, S_LEN), dtype=np.int64)
    rest = np.empty(samples, dtype=np.uint64)
    scratch = np.empty(width, dtype=np.int64)
    legal = np.empty(width, dtype=np.int64)
    keys = np.empty(samples, dtype=np.int64)
    values = np.empty((samples, width), dtype=np.float64)
    sums = np.empty((2, width), dtype=np.float64)
    played = 0
    for i in range(count):
        for w in range(samples):  # each world up to the seat's next decision, keyed by the public moves
            rng[0] = starts[w]
            mid = mids[w]
            for k in range(S_LEN):
                mid[k] = drawn[w, k]
            K.step(mid, actions[i], table, rules)
            key = np.int64(0)
            while mid[S_PHASE] != PHASE_OVER and mid[S_TO_ACT] != seat:
                actor = mid[S_TO_ACT]
                action, rng[0] = rollout_action(mid, threshold, table, rules, rng[0], scratch)
                edge = action
                if not face_up and C <= action < C + NUM_TYPES:
                    edge = width  # a face-down discard: its tile is hidden
                key = (key * 1009 + actor * (width + 1) + edge + 1) % KEY_PRIME
                K.step(mid, action, table, rules)
            keys[w] = key
            rest[w] = rng[0]
        order = np.argsort(keys, kind="mergesort")
        total = 0.0
        first = 0
        while first < samples:  # one information set (a run of equal keys) at a time
            last = first
            while last + 1 < samples and keys[order[last + 1]] == keys[order[first]]:
                last += 1
            n = 0
            if last > first and mids[order[first], S_PHASE] != PHASE_OVER:  # the set's legal actions:
                n = K.legal_actions(mids[order[first]], table, rules, legal)  # the hand and public moves decide them
            sums[:, :n] = 0.0
            for m in range(first, last + 1):
                w = order[m]
                for j in range(n):
                    rng[0] = rest[w]
                    values[w, j] = rollout(mids[w], legal[j], seat, settings.epsilon, table, rules, rng, scratch, child)
                    sums[(m - first) % 2, j] += values[w, j]
                played += n
            for m in range(first, last + 1):
                w = order[m]
                if n:  # the best over the other half of the set's worlds
                    total += values[w, np.argmax(sums[1 - (m - first) % 2, :n])]
                else:  # alone in its set, or the hand over: finished by the rollouts
                    rng[0] = rest[w]
                    for k in range(S_LEN):
                        child[k] = mids[w, k]
                    finish_world(child, settings.epsilon, table, rules, rng, scratch)
                    total += chips(child, seat)
                    played += 1
            first = last + 1
        out.means[i] = total / samples
        out.worlds[i] = samples
        out.rounds[i] = 1
    return played


# ----------------------------------------------------------------------------- ISMCTS
# A node of the tree is the observer's view after a sequence of public moves. An edge is an
# action id, except that another seat's discard shows the observer only that tiles went down:
# all its discards are one edge, HIDDEN_DISCARD, after which that seat puts down every tile it
# owes by the expert's discard rule in the world at hand.
N_PARENT, N_CHILD, N_SIBLING, N_EDGE, N_ACTOR = 0, 1, 2, 3, 4  # links columns
F_VISITS, F_REWARD, F_AVAILABLE = 0, 1, 2  # stats columns


@njit(cache=True, inline="always")
def _edge(state, action, observer, rules):
    C = rules[R_COMBOS]
    if state[S_TO_ACT] != observer and C <= action < C + NUM_TYPES:
        return C + NUM_TYPES + 2  # HIDDEN_DISCARD: an id no action has
    return action


@njit(cache=True)
def _apply_edge(state, edge, face_up, singles, table, rules, scratch):
    C = rules[R_COMBOS]
    if edge != C + NUM_TYPES + 2:
        K.step(state, edge, table, rules)
        return
    actor = state[S_TO_ACT]
    while True:  # the seat's whole discard, tile by tile, by the expert's rule
        n = K.legal_actions(state, table, rules, scratch)
        pick = -1
        value = 0.0
        held = state[S_HAND + actor]
        unseen = PK.unseen_tiles(state, actor, face_up, rules)
        for i in range(n):
            a = scratch[i]
            if C <= a < C + NUM_TYPES:
                v = PK.keep_value(a - C, held, unseen, singles, table, rules)
                if pick < 0 or v < value:
                    pick, value = a, v
        K.step(state, pick, table, rules)
        if not (state[S_PHASE] == PHASE_FOLLOW and state[S_TO_ACT] == actor and state[S_OWED] > 0):
            return


@njit(cache=True)
def ismcts(state, seat, settings, tables, rng, tree, out):
    """Single-observer information-set MCTS [CPW12] from ``seat``'s view of ``state``.

    Each iteration deals a world consistent with what the seat knows, descends the tree by
    UCB1 over the edges available in that world (a child's exploration term counts the
    iterations in which it was available, not its parent's visits), adds one node, finishes
    the world (``finish_world``) and backs the chips, divided by ``settings.scale``, up the
    path, each node scored for the seat that moved into it. ``tree`` (``Tree``, a row per
    iteration and the root) holds the tree. Writes the root's edges, visits and mean chips into
    ``out`` (``IsmctsOut``); returns how many edges the root has.
    """
    table, rules, singles, face_up = tables.table, tables.rules, tables.singles, tables.face_up
    links, stats = tree.links, tree.stats
    exploration, scale = settings.exploration, settings.scale
    world = np.empty(S_LEN, dtype=np.int64)
    scratch = np.empty(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    path = np.empty(MAX_DEPTH * 2 + 2, dtype=np.int64)
    bits = np.empty(32, dtype=np.int64)
    links[0, N_PARENT] = -1
    links[0, N_CHILD] = -1
    links[0, N_SIBLING] = -1
    links[0, N_EDGE] = -1
    links[0, N_ACTOR] = -1
    stats[0, :] = 0.0
    nodes = 1
    for _ in range(settings.iterations):
        deal_world_with(state, seat, face_up, table, rules, rng, bits, world)
        node = 0
        length = 0
        path[length] = 0
        length += 1
        while world[S_PHASE] != PHASE_OVER:
            n = K.legal_actions(world, table, rules, scratch)
            # One pass over the legal edges: count availability, find one not yet in the tree.
            best = -1
            best_score = -1e300
            fresh = -1
            fresh_count = 0
            for i in range(n):
                edge = _edge(world, scratch[i], seat, rules)
                if i > 0 and edge == _edge(world, scratch[i - 1], seat, rules):
                    continue  # the legal list keeps all discards together
                child = links[node, N_CHILD]
                while child >= 0 and links[child, N_EDGE] != edge:
                    child = links[child, N_SIBLING]
                if child < 0:
                    fresh_count += 1
                    if K.rand_below(rng, fresh_count) == 0:  # uniform among the untried edges
                        fresh = edge
                    continue
                stats[child, F_AVAILABLE] += 1.0
                visits = stats[child, F_VISITS]
                score = stats[child, F_REWARD] / visits + exploration * np.sqrt(
                    np.log(stats[child, F_AVAILABLE]) / visits
                )
                if score > best_score:
                    best_score = score
                    best = child
            actor = world[S_TO_ACT]
            if fresh >= 0 and nodes < links.shape[0]:
                new = nodes
                nodes += 1
                links[new, N_PARENT] = node
                links[new, N_CHILD] = -1
                links[new, N_SIBLING] = links[node, N_CHILD]
                links[new, N_EDGE] = fresh
                links[new, N_ACTOR] = actor
                links[node, N_CHILD] = new
                stats[new, :] = 0.0
                stats[new, F_AVAILABLE] = 1.0
                _apply_edge(world, fresh, face_up, singles, table, rules, scratch)
                path[length] = new
                length += 1
                break
            if best < 0:  # the tree is full: finish from here
                break
            _apply_edge(world, links[best, N_EDGE], face_up, singles, table, rules, scratch)
            node = best
            path[length] = node
            length += 1
        finish_world(world, settings.epsilon, table, rules, rng, scratch)
        for k in range(1, length):
            v = path[k]
            stats[v, F_VISITS] += 1.0
            stats[v, F_REWARD] += chips(world, links[v, N_ACTOR]) / scale
        stats[0, F_VISITS] += 1.0
    count = 0
    child = links[0, N_CHILD]
    while child >= 0:
        out.actions[count] = links[child, N_EDGE]
        out.visits[count] = stats[child, F_VISITS]
        out.values[count] = stats[child, F_REWARD] * scale / max(stats[child, F_VISITS], 1.0)
        count += 1
        child = links[child, N_SIBLING]
    return count
