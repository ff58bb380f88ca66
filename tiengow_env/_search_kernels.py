"""Compiled search kernels: PIMC with rollouts or an exact endgame, belief weights over the
sampled worlds, and single-observer information-set MCTS. Every function is
``@njit(cache=True)``; ``tiengow_env.search`` checks inputs and allocates for them.

A *world* is a full state consistent with what the searching seat knows, drawn by
``_kernels.determinize`` (the tiles hidden from the seat dealt again at random). Searches read
the true state only through that sampler, so they never use hidden information.

References:
  [CPW12] Cowling, Powley, Whitehouse. Information Set Monte Carlo Tree Search. IEEE TCIAIG 2012.
  [LI86]  Luckhardt, Irani. An Algorithmic Solution of N-Person Games. AAAI 1986 (max-n).
  [KKS13] Karnin, Koren, Somekh. Almost Optimal Exploration in Multi-Armed Bandits. ICML 2013
          (sequential halving).
  [SRB19] Solinas, Rebstock, Buro. Improving Search with Supervised Learning in Trick-Based
          Card Games. AAAI 2019 (worlds weighted by the likelihood of the observed play).
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
    T_BEAT_END,
    T_BEAT_START,
    T_MASK,
    hidden_discard,
    is_discard,
    legal_len,
)
from .tiles import TILE_TYPE, TYPE_MASK

_TILE_TYPE = TILE_TYPE.astype(np.int64)
_TYPE_MASK = TYPE_MASK.astype(np.int64)
MAX_DEPTH = 48  # decisions left in a hand, at most: one per tile (32) plus the declare choices
TT_WORDS = 4  # a transposition-table key: four int64 words (endgame_key)
F_COUNT, F_INDEX, F_SLOT = 4, 5, 6  # solver frame columns after the key: legal count, next action, table slot
FRAME = 7
V_BEST = 4  # solver values column after the seats' chips: the actor's best so far
EPSILON_UNIT = 1 << 20  # a rollout's random-action probability, in steps of 1 / EPSILON_UNIT


class Solver(NamedTuple):
    """The endgame solver's stack and transposition table (search.Workspace allocates it)."""

    states: np.ndarray     # int64 (MAX_DEPTH + 1, S_LEN): the state at each depth
    moves: np.ndarray      # int64 (MAX_DEPTH + 1, A): the legal actions at each depth
    frames: np.ndarray     # int64 (MAX_DEPTH + 1, FRAME): the key, then F_COUNT, F_INDEX, F_SLOT
    values: np.ndarray     # float64 (MAX_DEPTH + 1, MAX_SEATS + 1): the seats' chips, then V_BEST
    tt_keys: np.ndarray    # int64 (2**bits, TT_WORDS): transposition-table keys
    tt_values: np.ndarray  # float64 (2**bits, MAX_SEATS): their values
    tt_stamp: np.ndarray   # int64 (2**bits,): the world each entry belongs to
    stamp: np.ndarray      # int64 (1,): the stamp of the current world (a counter)


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
    K.determinize(state, seat, face_up, rules, rng, out)
    if state[S_BANKER] != seat and state[S_BANKER_FIRST] >= 0:
        first = banker_first_lead(state)
        out[S_BANKER_FIRST] = K.unbeatable_in_own_eyes(out, first, table, rules) if first >= 0 else 0


MAX_DRAWS = 64  # worlds drawn, at most, before one that contradicts the discards is kept anyway


@njit(cache=True)
def beatable_discards(world, events, table, rules):
    """How many of the other seats' discards ``world`` says were made by a seat that could
    have beaten. Row e of ``events`` is (seat, the best combination when it discarded, the
    tiles it has put face up since): in the world that seat then held at least its hand now
    and those tiles, so the test only ever counts a discard that surely had a beat instead."""
    count = 0
    for e in range(events.shape[0]):
        held = K.canonical(world[S_HAND + events[e, 0]] | events[e, 2])
        best = events[e, 1]
        for j in range(table[best, T_BEAT_START], table[best, T_BEAT_END]):
            if held & table[j, T_MASK] == table[j, T_MASK]:
                count += 1
                break
    return count


@njit(cache=True)
def draw_world(state, seat, events, keep, face_up, table, rules, rng, out):
    """A world for ``seat`` (``deal_world``) given the others' discards: a world in which v of
    them had a beat instead is kept with probability ``keep`` ** v, else drawn again (at most
    ``MAX_DRAWS`` times). That is rejection sampling from the worlds weighted by the likelihood
    of the discards when a seat that can beat discards with probability ``keep`` [SRB19, with
    the play reduced to beat or discard]. ``keep`` = 1 draws exactly as ``deal_world``."""
    for _ in range(MAX_DRAWS):
        deal_world(state, seat, face_up, table, rules, rng, out)
        if keep >= 1.0:
            return
        v = beatable_discards(out, events, table, rules)
        if v == 0 or K.rand_below(rng, EPSILON_UNIT) < np.int64(keep ** v * EPSILON_UNIT):
            return


# ----------------------------------------------------------------------------- exact endgame
@njit(cache=True, inline="always")
def tiles_in_hands(state, rules):
    total = 0
    for s in range(rules[R_PLAYERS]):
        total += K.popcount(state[S_HAND + s])
    return total


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
def solve_endgame(states, moves, frames, values, tt_keys, tt_values, tt_stamp, stamp, table, rules):
    """Max-n value of ``states[0]`` [LI86]: ``values[0, s]`` is seat s's final chips when
    every seat, from here on, plays to maximise its own (settlement, trick bonuses and every
    multiplier included; a seat indifferent between actions takes the first in legal order).
    Returns the number of nodes searched.

    Depth-first with an explicit stack (numba's cache cannot hold recursive functions):
    ``states`` (MAX_DEPTH + 1, S_LEN), ``moves`` (MAX_DEPTH + 1, num_actions), ``frames``
    (MAX_DEPTH + 1, FRAME) and ``values`` (MAX_DEPTH + 1, MAX_SEATS + 1). The transposition
    table (``tt_keys`` (N, 4), ``tt_values`` (N, 4), ``tt_stamp`` (N,), N a power of two)
    holds entries of the current ``stamp`` only, so it is reused across worlds uncleared.
    """
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


# ----------------------------------------------------------------------------- belief weights
@njit(cache=True)
def discard_log_likelihood(world, seat, beta, singles, table, rules):
    """Log-likelihood of the other seats' face-down tiles in ``world`` under a softened expert.

    The expert discards the tile worth least to keep (``_policy_kernels.keep_value``). Softened
    with inverse temperature ``beta``, a seat that discarded tile d, while it still holds the
    tiles h, chose d with probability exp(-beta v(d)) / (exp(-beta v(d)) + sum_h exp(-beta
    v(h))), values taken in the hand it held then (the tiles it holds now and all it put down).
    The sum over its face-down tiles ranks worlds where the others threw weak tiles and kept
    strong ones above worlds where they threw strong ones [SRB19 weights worlds by the
    likelihood of the observed play; this model sees only what went down].
    """
    total = 0.0
    for s in range(rules[R_PLAYERS]):
        if s == seat or world[S_DOWN + s] == 0:
            continue
        down = world[S_DOWN + s]
        before = world[S_HAND + s] | down
        unseen = PK.unseen_tiles(world, s, False, rules)
        kept = -np.inf  # log sum_h exp(-beta v(h)), in log space: exp(-beta v) underflows for a large beta
        remaining = K.canonical(world[S_HAND + s])
        while remaining:
            b = K.lowest_bit(remaining)
            remaining &= remaining - 1
            kept = np.logaddexp(kept, -beta * PK.keep_value(_TILE_TYPE[b], before, unseen, singles, table, rules))
        remaining = K.canonical(down)
        while remaining:
            b = K.lowest_bit(remaining)
            remaining &= remaining - 1
            thrown = -beta * PK.keep_value(_TILE_TYPE[b], before, unseen, singles, table, rules)
            total += thrown - np.logaddexp(thrown, kept)
    return total


# ----------------------------------------------------------------------------- PIMC
@njit(cache=True)
def finish_world(state, policy, epsilons, low_discard, greedy_end, endgame, face_up, singles, table, rules, rng,
                 scratch, solver, stamp):
    """Play ``state`` to the end of the hand: the rollout policy, each decision of seat s
    replaced by a uniformly random legal action with probability ``epsilons[s]`` (with
    ``low_discard``, a random discard throws the tile worth least: the randomness is in whether
    to beat and what to lead, not in throwing away a strong tile), except that a seat holding
    at most ``greedy_end`` tiles plays the policy alone (strong players hardly ever throw the
    last tricks away, and random ones there decide the hand by chance), until at most
    ``endgame`` tiles are left in the hands, then the exact max-n endgame. Returns solver nodes
    used."""
    C = rules[R_COMBOS]
    while state[S_PHASE] != PHASE_OVER and tiles_in_hands(state, rules) > endgame:
        threshold = np.int64(epsilons[state[S_TO_ACT]] * EPSILON_UNIT)
        if K.popcount(state[S_HAND + state[S_TO_ACT]]) <= greedy_end:
            threshold = np.int64(0)
        if threshold > 0 and K.rand_below(rng, EPSILON_UNIT) < threshold:
            n = K.legal_actions(state, table, rules, scratch)
            action = scratch[K.rand_below(rng, n)]
            if low_discard and is_discard(action, C):
                discards = 0  # greedy's choice among the discards alone: the one of the tile worth least
                for i in range(n):
                    if is_discard(scratch[i], C):
                        scratch[discards] = scratch[i]
                        discards += 1
                action = K.greedy_choice(scratch, discards, False, table, rules)
        else:
            action = PK.policy_action(state, policy, face_up, singles, table, rules, rng, scratch)
        K.step(state, action, table, rules)
    if state[S_PHASE] == PHASE_OVER:
        return 0
    states, moves, frames, values, tt_keys, tt_values, tt_stamp, _ = solver
    states[0] = state
    nodes = solve_endgame(states, moves, frames, values, tt_keys, tt_values, tt_stamp, stamp, table, rules)
    for s in range(rules[R_PLAYERS]):
        state[S_BONUS + s] = np.int64(values[0, s]) - state[S_SETTLE + s]  # carry the solved chips in the state
    return nodes


@njit(cache=True)
def pimc_values(state, seat, actions, bonus, halving, paired, samples, policy, epsilons, low_discard, greedy_end,
                endgame, beta, events, keep, pool, cdf, face_up, singles, table, rules, rng, solver, out, out_worlds,
                out_rounds):
    """Mean chips of ``seat`` after each of ``actions`` over sampled worlds, each finished by
    ``finish_world``: ``samples`` rollouts per action in all, every world shared by the actions
    played in it. With ``beta`` > 0 each world counts with its ``discard_log_likelihood``
    (self-normalised importance weights) [SRB19]. Given a ``pool`` of worlds (rows of states)
    they are drawn from it instead, row i with probability ``cdf[i] - cdf[i - 1]`` (``cdf``
    ascending to 1): worlds resampled by a belief computed outside the kernel.

    Without ``halving`` every action is played in the same ``samples`` worlds. With it the
    same rollouts are spent by sequential halving [KKS13]: in each of ceil(log2 K) rounds every
    action still in the race is played in the same new worlds, an equal share of the rollouts
    per round, and the better half goes on, so the last two are compared over many more worlds
    than a uniform split gives them. Actions are ranked by their mean plus their ``bonus`` (a
    prior's say, in chips; zeros for none). ``out`` receives each action's mean over the worlds
    it was played in, ``out_worlds`` how many those were, ``out_rounds`` how many rounds it
    survived: the action the search prefers survived one more than any other. Returns solver
    nodes used."""
    count = actions.shape[0]
    world = np.empty(S_LEN, dtype=np.int64)
    child = np.empty(S_LEN, dtype=np.int64)
    scratch = np.empty(legal_len(rules[R_COMBOS]), dtype=np.int64)
    alive = np.arange(count)
    sums = np.zeros(count, dtype=np.float64)
    totals = np.zeros(count, dtype=np.float64)
    order = np.zeros(count, dtype=np.float64)
    out_worlds[:] = 0
    out_rounds[:] = 0
    rounds = 1
    while halving and (1 << rounds) < count:
        rounds += 1
    budget = samples * count
    nodes = 0
    stamp = solver.stamp[0]
    first = np.nan  # log-weights are taken relative to the largest so far, to keep exp in range
    live = count
    for r in range(rounds):
        worlds = max(1, budget // (rounds * live))
        for _ in range(worlds):
            if pool.shape[0]:
                u = K.rand_below(rng, EPSILON_UNIT) / EPSILON_UNIT
                world[:] = pool[min(np.searchsorted(cdf, u, side="right"), pool.shape[0] - 1)]
            else:
                draw_world(state, seat, events, keep, face_up, table, rules, rng, world)
            log_weight = discard_log_likelihood(world, seat, beta, singles, table, rules) if beta > 0 else 0.0
            if np.isnan(first):
                first = log_weight
            elif log_weight > first:  # a likelier world than any before: rescale what is summed so far
                scale = np.exp(first - log_weight)
                sums *= scale
                totals *= scale
                first = log_weight
            weight = np.exp(log_weight - first)
            stamp += 1
            start = rng[0]
            for j in range(live):
                i = alive[j]
                if paired:
                    rng[0] = start
                child[:] = world
                K.step(child, actions[i], table, rules)
                nodes += finish_world(child, policy, epsilons, low_discard, greedy_end, endgame, face_up, singles,
                                      table, rules, rng, scratch, solver, stamp)
                sums[i] += weight * chips(child, seat)
                totals[i] += weight
                out_worlds[i] += 1
        for j in range(live):
            out_rounds[alive[j]] = r + 1
            order[j] = -(sums[alive[j]] / totals[alive[j]] + bonus[alive[j]])
        ranked = alive[:live][np.argsort(order[:live], kind="mergesort")]  # ties keep their order
        live = (live + 1) // 2
        alive[:live] = ranked[:live]
    out_rounds[alive[0]] = rounds + 1
    solver.stamp[0] = stamp
    for i in range(count):
        out[i] = sums[i] / totals[i]
    return nodes


# ----------------------------------------------------------------------------- lookahead
@njit(cache=True)
def step_rows(states, rows, actions, table, rules):
    """Apply ``actions[k]`` to the state ``states[rows[k]]``, for every k, in place."""
    for k in range(rows.shape[0]):
        K.step(states[rows[k]], actions[k], table, rules)


@njit(cache=True)
def observe_rows(states, rows, seat, table, rules, offsets, face_up, scratch, obs, masks):
    """``obs[k]``, ``masks[k]``: the observation and legal mask of ``states[rows[k]]`` for
    ``seat``, or for its seat to act when ``seat`` < 0."""
    for k in range(rows.shape[0]):
        state = states[rows[k]]
        K.observe(state, state[S_TO_ACT] if seat < 0 else seat, table, rules, offsets, face_up, scratch, obs[k],
                  masks[k])


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
    if state[S_TO_ACT] != observer and is_discard(action, C):
        return hidden_discard(C)
    return action


@njit(cache=True)
def _apply_edge(state, edge, face_up, singles, table, rules, scratch):
    C = rules[R_COMBOS]
    if edge != hidden_discard(C):
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
            if is_discard(a, C):
                v = PK.keep_value(a - C, held, unseen, singles, table, rules)
                if pick < 0 or v < value:
                    pick, value = a, v
        K.step(state, pick, table, rules)
        if not (state[S_PHASE] == PHASE_FOLLOW and state[S_TO_ACT] == actor and state[S_OWED] > 0):
            return


@njit(cache=True)
def ismcts(state, seat, iterations, exploration, scale, policy, epsilons, low_discard, endgame, events, keep, face_up,
           singles, table, rules, rng, links, stats, solver, out_actions, out_visits, out_values):
    """Single-observer information-set MCTS [CPW12] from ``seat``'s view of ``state``.

    Each iteration deals a world consistent with what the seat knows, descends the tree by
    UCB1 over the edges available in that world (a child's exploration term counts the
    iterations in which it was available, not its parent's visits), adds one node, finishes
    the world (``finish_world``) and backs the chips, divided by ``scale``, up the path, each
    node scored for the seat that moved into it. ``links`` (int64 (iterations + 1, 5)) and
    ``stats`` (float64 (iterations + 1, 3)) hold the tree. Writes the root's edges, visits and
    mean chips into ``out_*``; returns how many edges the root has.
    """
    world = np.empty(S_LEN, dtype=np.int64)
    scratch = np.empty(legal_len(rules[R_COMBOS]), dtype=np.int64)
    path = np.empty(MAX_DEPTH * 2 + 2, dtype=np.int64)
    links[0, N_PARENT] = -1
    links[0, N_CHILD] = -1
    links[0, N_SIBLING] = -1
    links[0, N_EDGE] = -1
    links[0, N_ACTOR] = -1
    stats[0, :] = 0.0
    nodes = 1
    stamp = solver.stamp[0]
    for _ in range(iterations):
        draw_world(state, seat, events, keep, face_up, table, rules, rng, world)
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
                    np.log(stats[child, F_AVAILABLE]) / visits)
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
        stamp += 1
        finish_world(world, policy, epsilons, low_discard, 0, endgame, face_up, singles, table, rules, rng,
                     scratch, solver, stamp)
        for k in range(1, length):
            v = path[k]
            stats[v, F_VISITS] += 1.0
            stats[v, F_REWARD] += chips(world, links[v, N_ACTOR]) / scale
        stats[0, F_VISITS] += 1.0
    solver.stamp[0] = stamp
    count = 0
    child = links[0, N_CHILD]
    while child >= 0:
        out_actions[count] = links[child, N_EDGE]
        out_visits[count] = stats[child, F_VISITS]
        out_values[count] = stats[child, F_REWARD] * scale / max(stats[child, F_VISITS], 1.0)
        count += 1
        child = links[child, N_SIBLING]
    return count
