"""Compiled play policies: the one definition of the ``expert`` rules, and playouts by policy.

Every function here is ``@njit(cache=True)`` and allocates nothing, so a policy can sit inside
a search's rollouts. A policy decides from the acting seat's information only: its own tiles,
the tiles it has not seen, the legal actions and the public state of the trick. Two adapters
build that view: ``*_action(state, ...)`` from a game state (rollouts, searches) and
``*_from_observation(observation, mask, ...)`` from the observation vector (the Python agents
of ``agents/baselines.py`` and anyone holding only an environment's output). Both give the
same decision, as the tests check.

``greedy`` is ``_kernels.greedy_choice`` (the core's rollout policy); ``expert`` is
``expert_choice`` below (its rules are in ``agents/baselines.py``'s ``ExpertAgent``
docstring). Ties are broken towards the lowest action id, whatever order the legal actions
come in, so both adapters agree.

Masks here are *canonical* (tiles.py: the lowest copies of each type), so a mask is a
multiset of tile types: ``held`` is the seat's hand, ``unseen`` the tiles it has not seen (in
other hands, or face down at other seats unless discards are face up).
"""

import numpy as np
from numba import njit

from . import _kernels as K
from .layout import (
    PHASE_LEAD,
    PHASE_OVER,
    R_COMBOS,
    R_DECK,
    R_PAR,
    R_PLAYERS,
    S_ACTED,
    S_COLS,
    S_DOWN,
    S_HAND,
    S_PHASE,
    S_TO_ACT,
    S_UP,
    STAKE_SUPREME,
    T_BEAT_END,
    T_BEAT_START,
    T_MASK,
    T_SIZE,
    T_STAKE,
    T_STRENGTH,
    declare_action,
)
from .observation import O_ACTED, O_COLUMNS, O_DOWN, O_HAND, O_PHASE, O_UP
from .tiles import NUM_TYPES, TILE_TYPE, TILE_WORTH, TYPE_BITS, TYPE_MASK

POLICY_RANDOM, POLICY_GREEDY, POLICY_EXPERT = 0, 1, 2
POLICY_NAMES = ("random", "greedy", "expert")  # index = POLICY_* code

_TILE_TYPE = TILE_TYPE.astype(np.int64)
_TYPE_MASK = TYPE_MASK.astype(np.int64)
_COPY_BIT = TYPE_BITS.astype(np.int64)  # [t, k]: bit of copy k of type t, -1 where there is none


# ----------------------------------------------------------------------------- what a seat knows
@njit(cache=True, inline="always")
def beatable(combo, unseen, table):
    """Can a combination that beats ``combo`` be made from the canonical mask ``unseen``?"""
    for j in range(table[combo, T_BEAT_START], table[combo, T_BEAT_END]):
        if unseen & table[j, T_MASK] == table[j, T_MASK]:
            return True
    return False


@njit(cache=True, inline="always")
def unseen_tiles(state, seat, face_up, rules):
    """Canonical mask of the tiles ``seat`` has not seen: other hands, and the other seats'
    face-down tiles unless ``face_up`` (the discards_face_up switch) shows them."""
    seen = state[S_HAND + seat] | state[S_DOWN + seat]
    for p in range(rules[R_PLAYERS]):
        seen |= state[S_UP + p]
        if face_up:
            seen |= state[S_DOWN + p]
    return K.canonical(rules[R_DECK] & ~seen)


@njit(cache=True)
def single_of_type(table, out):
    """out[t]: the combination id of the single tile of type t, -1 if the rule set has none."""
    out[:] = -1
    for j in range(table.shape[0]):
        if table[j, T_SIZE] == 1:
            out[_TILE_TYPE[K.lowest_bit(table[j, T_MASK])]] = j


# ----------------------------------------------------------------------------- the expert
@njit(cache=True)
def keep_value(t, hand, unseen, singles, table, rules):
    """What keeping a tile of type t is worth (the expert's discard rule): its worth in its
    suit (tiles.TILE_WORTH), + 0.5 x the size of the largest combination of the hand that
    uses it, + 1 if it is a single that no combination of the unseen tiles beats.

    ``hand`` and ``unseen`` may be physical or canonical masks; ``singles`` is
    ``single_of_type``'s array.
    """
    held = K.canonical(hand)
    value = TILE_WORTH[t]
    largest = 0
    for j in range(rules[R_COMBOS]):
        m = table[j, T_MASK]
        if table[j, T_SIZE] > largest and table[j, T_SIZE] > 1 and m & _TYPE_MASK[t] != 0 and held & m == m:
            largest = table[j, T_SIZE]
    value += 0.5 * largest
    single = singles[t]
    if single >= 0 and not beatable(single, K.canonical(unseen), table):
        value += 1.0
    return value


@njit(cache=True)
def combo_cost(j, hand, unseen, singles, table, rules):
    """What playing combination j gives up: the keep value of each of its tiles, summed."""
    cost = 0.0
    m = table[j, T_MASK]
    while m:
        cost += keep_value(_TILE_TYPE[K.lowest_bit(m)], hand, unseen, singles, table, rules)
        m &= m - 1
    return cost


@njit(cache=True)
def all_sure(held, unseen, singles, table):
    """Could every tile type of ``held`` be led as a single that no unseen tiles beat?"""
    remaining = held
    while remaining:
        t = _TILE_TYPE[K.lowest_bit(remaining)]
        remaining &= ~_TYPE_MASK[t]
        single = singles[t]
        if single < 0 or beatable(single, unseen, table):
            return False
    return True


@njit(cache=True)
def expert_lead(legal, n, columns, held, unseen, singles, table, rules):
    """The expert's lead (see ``expert_choice``)."""
    tiles_left = K.popcount(held)
    whole = -1
    supreme = -1
    sure = -1  # the largest sure non-Supreme lead, the cheapest of those
    sure_cost = 0.0
    for i in range(n):
        j = legal[i]
        if table[j, T_SIZE] == tiles_left and (whole < 0 or j < whole):
            whole = j
        if beatable(j, unseen, table):
            continue
        if table[j, T_STAKE] == STAKE_SUPREME:
            if supreme < 0 or j < supreme:
                supreme = j
            continue
        cost = combo_cost(j, held, unseen, singles, table, rules)
        if (
            sure < 0
            or table[j, T_SIZE] > table[sure, T_SIZE]
            or (table[j, T_SIZE] == table[sure, T_SIZE] and (cost < sure_cost or (cost == sure_cost and j < sure)))
        ):
            sure = j
            sure_cost = cost
    if whole >= 0:
        return whole
    if supreme >= 0:
        rest = K.canonical(held ^ K.take(held, table[supreme, T_MASK]))
        if sure < 0 or not all_sure(rest, unseen, singles, table):
            return supreme  # cash the Supreme pair unless everything else can be led out first
    if sure >= 0:
        return sure
    if columns == 0 and tiles_left <= 3:  # early death looms: lead the strongest play
        best = legal[0]
        for i in range(1, n):
            j = legal[i]
            if table[j, T_SIZE] > table[best, T_SIZE] or (
                table[j, T_SIZE] == table[best, T_SIZE]
                and (
                    table[j, T_STRENGTH] > table[best, T_STRENGTH]
                    or (table[j, T_STRENGTH] == table[best, T_STRENGTH] and j < best)
                )
            ):
                best = j
        return best
    has_single = False
    for i in range(n):
        if table[legal[i], T_SIZE] == 1:
            has_single = True
    cheapest = -1  # the cheapest loose single (any play when there is no single)
    cheapest_cost = 0.0
    for i in range(n):
        j = legal[i]
        if has_single and table[j, T_SIZE] != 1:
            continue
        cost = combo_cost(j, held, unseen, singles, table, rules)
        if cheapest < 0 or cost < cheapest_cost or (cost == cheapest_cost and j < cheapest):
            cheapest = j
            cheapest_cost = cost
    return cheapest


@njit(cache=True)
def expert_choice(legal, n, lead, last, columns, held, unseen, singles, table, rules):
    """The expert's action among the ``n`` legal actions ``legal[:n]`` (any order).

    ``lead``: the seat leads; ``last``: it is the last to act in the trick; ``columns``: the
    columns it has won; ``held`` / ``unseen``: canonical masks of its hand and of the tiles it
    has not seen. Rules (agents/baselines.py has them in words): declare One Red Dot; lead a
    whole hand, else a sure lead (the Supreme pair first unless the rest can all be led out
    sure), else the strongest play when early death looms, else the cheapest single; follow
    with the cheapest sure beat, or below par the strongest beat; otherwise discard the tile
    worth least to keep.
    """
    C = rules[R_COMBOS]
    declare = declare_action(C)
    for i in range(n):
        if legal[i] == declare:
            return declare
    if lead:
        return expert_lead(legal, n, columns, held, unseen, singles, table, rules)
    safe = -1  # the weakest beat that wins for sure
    weakest = -1
    strongest = -1
    discard = -1
    discard_value = 0.0
    for i in range(n):
        a = legal[i]
        if a < C:
            if (
                weakest < 0
                or table[a, T_STRENGTH] < table[weakest, T_STRENGTH]
                or (table[a, T_STRENGTH] == table[weakest, T_STRENGTH] and a < weakest)
            ):
                weakest = a
            if (
                strongest < 0
                or table[a, T_STRENGTH] > table[strongest, T_STRENGTH]
                or (table[a, T_STRENGTH] == table[strongest, T_STRENGTH] and a < strongest)
            ):
                strongest = a
            if (last or not beatable(a, unseen, table)) and (
                safe < 0
                or table[a, T_STRENGTH] < table[safe, T_STRENGTH]
                or (table[a, T_STRENGTH] == table[safe, T_STRENGTH] and a < safe)
            ):
                safe = a
        elif a < declare:
            value = keep_value(a - C, held, unseen, singles, table, rules)
            if discard < 0 or value < discard_value or (value == discard_value and a < discard):
                discard = a
                discard_value = value
    if weakest >= 0:
        if safe >= 0:
            return safe
        if columns < rules[R_PAR]:
            return strongest
        if discard < 0:  # must_beat_if_able leaves no discard
            return weakest
    return discard


@njit(cache=True)
def expert_action(state, face_up, singles, table, rules, scratch):
    """The expert's action for the seat to act in ``state`` (``scratch``: num_actions ints)."""
    n = K.legal_actions(state, table, rules, scratch)
    seat = state[S_TO_ACT]
    return expert_choice(
        scratch,
        n,
        state[S_PHASE] == PHASE_LEAD,
        state[S_ACTED] == rules[R_PLAYERS] - 1,
        state[S_COLS + seat],
        K.canonical(state[S_HAND + seat]),
        unseen_tiles(state, seat, face_up, rules),
        singles,
        table,
        rules,
    )


# ----------------------------------------------------------------------------- from observations
@njit(cache=True, inline="always")
def _count(value):
    return np.int64(value + 0.5)  # counts in an observation are small non-negative integers


@njit(cache=True)
def _legal_from_mask(mask, out):
    n = 0
    for a in range(mask.shape[0]):
        if mask[a]:
            out[n] = a
            n += 1
    return n


@njit(cache=True)
def expert_from_observation(observation, mask, offsets, singles, table, rules, scratch):
    """The expert's action from one observation vector (observation.py) and its legal mask."""
    players = rules[R_PLAYERS]
    deck = rules[R_DECK]
    held = np.int64(0)
    unseen = np.int64(0)
    for t in range(NUM_TYPES):
        have = _count(observation[offsets[O_HAND] + t])
        seen = have
        for r in range(players):
            seen += _count(observation[offsets[O_UP] + r * NUM_TYPES + t])
            seen += _count(observation[offsets[O_DOWN] + r * NUM_TYPES + t])  # rows > 0 only when face up
        left = K.popcount(deck & _TYPE_MASK[t]) - seen
        for k in range(2):
            if _COPY_BIT[t, k] >= 0:
                if k < have:
                    held |= np.int64(1) << _COPY_BIT[t, k]
                if k < left:
                    unseen |= np.int64(1) << _COPY_BIT[t, k]
    n = _legal_from_mask(mask, scratch)
    lead = observation[offsets[O_PHASE] + PHASE_LEAD] > 0
    last = _count(observation[offsets[O_ACTED]]) == players - 1
    return expert_choice(
        scratch, n, lead, last, _count(observation[offsets[O_COLUMNS]]), held, unseen, singles, table, rules
    )


@njit(cache=True)
def greedy_from_observation(observation, mask, offsets, table, rules, scratch):
    """The greedy policy's action from one observation vector and its legal mask."""
    n = _legal_from_mask(mask, scratch)
    lead = observation[offsets[O_PHASE] + PHASE_LEAD] > 0
    return K.greedy_choice(scratch, n, lead, table, rules)


@njit(cache=True)
def batch_from_observations(policy, observations, masks, offsets, singles, table, rules, scratch, out):
    """out[i]: the ``policy`` (POLICY_GREEDY or POLICY_EXPERT) action of row i."""
    for i in range(observations.shape[0]):
        if policy == POLICY_EXPERT:
            out[i] = expert_from_observation(observations[i], masks[i], offsets, singles, table, rules, scratch)
        else:
            out[i] = greedy_from_observation(observations[i], masks[i], offsets, table, rules, scratch)


# ----------------------------------------------------------------------------- playouts
@njit(cache=True)
def policy_action(state, policy, face_up, singles, table, rules, rng, scratch):
    """The action of ``policy`` (POLICY_*) for the seat to act; random draws from ``rng``."""
    if policy == POLICY_EXPERT:
        return expert_action(state, face_up, singles, table, rules, scratch)
    if policy == POLICY_GREEDY:
        return K.greedy_action(state, table, rules, scratch)
    return scratch[K.rand_below(rng, K.legal_actions(state, table, rules, scratch))]


@njit(cache=True)
def rollout(state, policy, face_up, singles, table, rules, rng, scratch):
    """Play the hand to its end, every seat following ``policy``."""
    while state[S_PHASE] != PHASE_OVER:
        K.step(state, policy_action(state, policy, face_up, singles, table, rules, rng, scratch), table, rules)
