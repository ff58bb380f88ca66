"""Search from the acting seat's view: PIMC, an exact endgame, belief weights and ISMCTS.

Every search here sees the game only through ``_search_kernels.deal_world``: it deals the tiles
hidden from the acting seat again at random, keeping every public fact (hand sizes, face-up
plays, how many tiles each seat put face down, the seat's own face-down tiles). So two games
that differ only in tiles hidden from the seat give the same values for the same seed.

* ``pimc_values(game, samples)``: play every legal action out in ``samples`` sampled worlds
  (the same worlds for every action) and average the seat's chips [perfect-information
  Monte Carlo]. Each world is finished by a rollout policy (``random``, ``greedy`` or
  ``expert``, the compiled policies of ``_policy_kernels``); with ``endgame=n`` the rollout
  stops when at most n tiles are left in the hands, and the rest is solved exactly
  (``endgame_values``); with ``epsilon`` each rollout decision is uniformly random with that
  probability instead (``own_epsilon``: a different probability for the searching seat's own
  rollout decisions). With ``beta > 0`` the worlds are weighted by how likely the other
  seats' discards are under a softened expert (``_search_kernels.discard_log_likelihood``).
  With ``infer < 1`` the worlds follow the others' discards: a seat that could have beaten
  but discarded is taken to do so with probability ``infer``, and worlds that say it could
  are drawn less often (``discard_events``; ``_search_kernels.draw_world``). Under
  ``must_beat_if_able`` a discard proves there was no beat, whatever ``infer`` says.
  With ``halving=True`` the same number of rollouts is spent by sequential halving: the
  actions still in the race get the new worlds, so the close calls get the most.
  With ``paired=True`` every action of a world is finished with the same random numbers
  (common random numbers), so the rollouts' own noise largely cancels in the comparison.
* ``endgame_values(game)``: the exact max-n value of a full (perfect-information) state.
* ``lookahead_values(game, worlds, policy, value)``: a one-turn lookahead in sampled worlds:
  every action, then the other seats by a given ``policy`` until the seat acts again, where a
  given ``value`` of its observation stands for the rest of the hand (a learned policy and
  value: ``champion`` mixes this with its PIMC values).
* ``history_log_likelihoods(game, worlds, log_policy)``: how well each sampled world explains
  the other seats' decisions so far under a given model of their play (policy-based
  inference); ``pimc_details(..., worlds=(states, weights))`` then draws its worlds by weight.
* ``location_log_weights(worlds, seat, players, logits)``: how likely each sampled world's
  placing of the hidden tiles is under a learned model of where each tile lies (inference from
  the whole history at once, ``champion:locate=A``).
* ``ismcts_values(game, iterations)``: single-observer information-set MCTS.

The kernels are in ``_search_kernels.py``; a ``Workspace`` holds their tables for one rule
set, so that a bot searching many times allocates them once.
"""
from __future__ import annotations

import numpy as np

from . import _kernels as K
from . import _policy_kernels as PK
from . import _search_kernels as SK
from .checks import is_integer
from .game import Game
from .layout import (
    MAX_SEATS,
    PHASE_OVER,
    R_COMBOS,
    S_BANKER,
    S_BONUS,
    S_DEALT,
    S_DOWN,
    S_HAND,
    S_LEN,
    S_OWED,
    S_PHASE,
    S_SETTLE,
    S_STREAK,
    S_TABLE,
    S_TO_ACT,
    S_UP,
    T_BEAT_END,
    T_BEAT_START,
    T_MASK,
)
from .observation import ObservationLayout
from .rules import RuleSet
from .tiles import NUM_TYPES, TILE_TYPE, TYPE_MASK

POLICIES = {name: code for code, name in enumerate(PK.POLICY_NAMES)}
_TILE_TYPE = TILE_TYPE.astype(np.int64)
TABLE_BITS = 15  # transposition-table entries: 2**15 (1 MB of keys), reused across worlds


class Workspace:
    """Tables the search kernels reuse for one rule set: the singles of each tile type, the
    endgame solver's stack and transposition table, and the ISMCTS tree."""

    def __init__(self, rules: RuleSet, table_bits: int = TABLE_BITS):
        from .combos import table_for
        self.rules = rules
        self.combos = table_for(rules)
        self.singles = np.empty(NUM_TYPES, dtype=np.int64)
        PK.single_of_type(self.combos.table, self.singles)
        depth = SK.MAX_DEPTH + 1
        size = 1 << table_bits
        # (states, moves, frames, values, tt_keys, tt_values, tt_stamp, stamp counter): the
        # solver's stack, its transposition table, and the stamp that marks the current world.
        self.solver = (np.zeros((depth, S_LEN), dtype=np.int64),
                       np.zeros((depth, self.combos.num_actions), dtype=np.int64),
                       np.zeros((depth, SK.FRAME), dtype=np.int64),
                       np.zeros((depth, MAX_SEATS + 1), dtype=np.float64),
                       np.zeros((size, SK.TT_WORDS), dtype=np.int64),
                       np.zeros((size, MAX_SEATS), dtype=np.float64),
                       np.zeros(size, dtype=np.int64),
                       np.zeros(1, dtype=np.int64))
        self.links = np.zeros((0, 5), dtype=np.int64)
        self.stats = np.zeros((0, 3), dtype=np.float64)
        self.rollouts = 0  # rollouts the PIMC searches of this workspace have played, one per world and action

    def tree(self, iterations: int) -> tuple[np.ndarray, np.ndarray]:
        """ISMCTS node arrays for ``iterations`` iterations (one node each, plus the root)."""
        if len(self.links) < iterations + 1:
            self.links = np.zeros((iterations + 1, 5), dtype=np.int64)
            self.stats = np.zeros((iterations + 1, 3), dtype=np.float64)
        return self.links, self.stats


def _workspace(game: Game, workspace: Workspace | None) -> Workspace:
    if workspace is None:
        return Workspace(game.rules)
    if workspace.rules != game.rules:
        raise ValueError("the workspace was made for other rules than the game's")
    return workspace


def _check(game: Game, policy: str, endgame: int, epsilon: float, own_epsilon: float | None,
           **counts: int) -> np.ndarray:
    """Refuse bad search settings; the rollouts' random-action probability of each seat."""
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to search")
    if policy not in POLICIES:
        raise ValueError(f"unknown rollout policy {policy!r}; policies are: {', '.join(POLICIES)}")
    for name, value in counts.items():
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if type(endgame) is not int or endgame < 0:
        raise ValueError(f"endgame must be a number of tiles >= 0, got {endgame!r}")
    for name, value in (("epsilon", epsilon), ("own_epsilon", epsilon if own_epsilon is None else own_epsilon)):
        if not 0.0 <= value <= 1.0:  # also refuses nan
            raise ValueError(f"{name} must be a probability from 0 to 1, got {value!r}")
    epsilons = np.full(MAX_SEATS, float(epsilon))
    if own_epsilon is not None:
        epsilons[game.to_act] = float(own_epsilon)
    return epsilons


def discard_events(game: Game, every: bool = False) -> np.ndarray:
    """What the acting seat knows of the other seats' discards: int64 (E, 3), one row per
    discard decision (not early death) of another seat, in play order, as (seat, the
    combination id it did not beat, the physical tiles it has put face up since). The seat's
    hand then held at least those tiles and its hand now. Unless ``every``, a discard that
    those tiles alone could have beaten is left out: every world agrees on it. Read from
    ``game.tricks``, seat, kind and face-up tiles only: the discarded tiles stay hidden. A
    ``Game`` whose state was set from outside (as the vector env's and the trainers' copies
    are) has no tricks before that point, so there is nothing to infer from them."""
    observer, table = game.to_act, game.combos.table
    rows = []
    shown = [[] for _ in range(game.players)]  # tile types each seat has put face up so far
    for trick in game.tricks:
        best = -1
        for play in trick.plays:  # a seat plays once a trick: what it showed came before its discard
            if play.kind in ("lead", "beat"):
                best = game.combos.find(play.types)
                shown[play.seat].extend(play.types)
            elif play.kind == "discard" and play.seat != observer and best >= 0:
                rows.append((play.seat, best, len(shown[play.seat])))
    events = []
    for seat, best, before in rows:
        since = int(game.state[S_UP + seat])
        for t in shown[seat][:before]:  # take away one copy of each type shown by then
            copies = since & int(TYPE_MASK[t])
            since &= ~(copies & -copies)
        beats = table[table[best, T_BEAT_START]:table[best, T_BEAT_END], T_MASK]
        if every or not np.any(int(K.canonical(np.int64(since))) & beats == beats):
            events.append((seat, best, since))
    return np.array(events, dtype=np.int64).reshape(-1, 3)


def _inference(game: Game, infer: float) -> tuple[np.ndarray, float]:
    """(``discard_events``, the probability a world that contradicts one of them is kept)."""
    if not 0.0 <= infer <= 1.0:  # also refuses nan
        raise ValueError(f"infer must be a probability from 0 to 1, got {infer!r}")
    keep = 0.0 if game.rules.must_beat_if_able else float(infer)
    if keep >= 1.0:
        return np.zeros((0, 3), dtype=np.int64), 1.0
    return discard_events(game), keep


def _rng(seed: int) -> np.ndarray:
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, np.uint64(int(seed) % 2**64))
    return rng


def pimc_values(game: Game, samples: int = 32, policy: str = "greedy", seed: int = 0, endgame: int = 0,
                beta: float = 0.0, workspace: Workspace | None = None, halving: bool = False,
                epsilon: float = 0.0, own_epsilon: float | None = None, infer: float = 1.0,
                paired: bool = False, low_discard: bool = False,
                greedy_end: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(legal actions, mean chips of the acting seat after each) over ``samples`` worlds per
    action; with ``halving`` the same rollouts are spent by sequential halving, and each
    action's mean is over the worlds it was played in; a seat holding at most ``greedy_end``
    tiles plays its rollout decisions by the policy alone, never at random."""
    actions, values, _, _ = pimc_details(game, samples, policy, seed, endgame, beta, workspace, halving, epsilon,
                                         own_epsilon=own_epsilon, infer=infer, paired=paired,
                                         low_discard=low_discard, greedy_end=greedy_end)
    return actions, values


def pimc_details(game: Game, samples: int = 32, policy: str = "greedy", seed: int = 0, endgame: int = 0,
                 beta: float = 0.0, workspace: Workspace | None = None, halving: bool = False,
                 epsilon: float = 0.0, bonus: np.ndarray | None = None,
                 own_epsilon: float | None = None, infer: float = 1.0, paired: bool = False,
                 worlds: tuple[np.ndarray, np.ndarray] | None = None,
                 low_discard: bool = False, greedy_end: int = 0) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``pimc_values``, the number of endgame-solver nodes it searched, and the index of the
    action the search prefers: the best mean plus ``bonus`` (chips per legal action, in the
    order of ``game.legal_actions()``; none by default), or with ``halving`` the last one in
    the race, ranked the same way in every round. ``worlds``, (states, weights) as
    ``sample_worlds`` gives them, makes the search draw its worlds from those states by their
    weights (a belief over worlds, such as ``history_log_likelihoods`` makes), not afresh."""
    epsilons = _check(game, policy, endgame, epsilon, own_epsilon, samples=samples)
    if not np.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
    if type(greedy_end) is not int or greedy_end < 0:
        raise ValueError(f"greedy_end must be a number of tiles >= 0, got {greedy_end!r}")
    events, keep = _inference(game, infer)
    ws = _workspace(game, workspace)
    actions = np.array(game.legal_actions(), dtype=np.int64)
    if bonus is None:
        bonus = np.zeros(len(actions))
    bonus = np.asarray(bonus, dtype=np.float64)
    if bonus.shape != actions.shape or not np.all(np.isfinite(bonus)):
        raise ValueError(f"bonus must hold a finite number for each of the {len(actions)} legal actions, "
                         f"got shape {bonus.shape}")
    pool, cdf = _pool(game, worlds)
    values = np.zeros(len(actions), dtype=np.float64)
    counts = np.zeros(len(actions), dtype=np.int64)
    rounds = np.zeros(len(actions), dtype=np.int64)
    nodes = SK.pimc_values(game.state, game.to_act, actions, bonus, bool(halving), bool(paired), samples,
                           POLICIES[policy], epsilons, bool(low_discard), greedy_end, endgame, float(beta), events,
                           keep, pool, cdf, game.rules.discards_face_up, ws.singles, game.combos.table,
                           game.combos.rules_array, _rng(seed), ws.solver, values, counts, rounds)
    ws.rollouts += int(counts.sum())  # the kernel counts each action's worlds: what tiengow bench reads
    return actions, values, int(nodes), int(np.argmax(rounds))


def _pool(game: Game, worlds: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's (pool, cdf) of given (states, weights): empty for none."""
    if worlds is None:
        return np.zeros((0, S_LEN), dtype=np.int64), np.zeros(0)
    states, weights = (np.asarray(part) for part in worlds)
    weights = weights.astype(np.float64)
    if states.ndim != 2 or states.shape[1] != S_LEN or weights.shape != (len(states),) or not len(states):
        raise ValueError(f"worlds must be (states, weights): states of shape (N, {S_LEN}) and one weight each, "
                         f"N >= 1; got shapes {states.shape} and {weights.shape}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError("world weights must be finite, >= 0 and not all 0")
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    return np.ascontiguousarray(states, dtype=np.int64), cdf


def history_log_likelihoods(game: Game, worlds: np.ndarray, log_policy) -> np.ndarray:
    """Log-likelihood, in each sampled world, of the other seats' decisions so far under a
    model of their play: float64, one per row of ``worlds`` (states as ``sample_worlds`` gives
    them), -inf for a world the decisions rule out.

    Each world's hand is replayed from its deal (each seat dealt what it holds in the world and
    what it has put down) through ``game.history``, and every decision of another seat adds
    log ``log_policy`` of the action it took, in its own view of that world.
    ``log_policy(observations, masks)`` gives log-probabilities (rows, actions) for batches
    of observation vectors and legal masks. A face-down answer is one decision, counted as
    the probability of discarding at all: which tiles went down is hidden, and in the replay
    the world's own face-down tiles go down. A decision without a choice adds 0 and is not
    put to the model. This is policy-based inference [SRB19, in _search_kernels.py]: worlds
    in which the others' play is the play the model expects come first. Only public facts and
    the acting seat's own tiles are read. A world whose replay does not arrive at the world
    (a history that does not lead from the deal to the game's state, as when the state was
    set from outside) is ruled out; if every world is, the history says nothing: all zeros.
    """
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to infer")
    worlds = np.asarray(worlds, dtype=np.int64)
    if worlds.ndim != 2 or worlds.shape[1] != S_LEN:
        raise ValueError(f"worlds must be states of shape (N, {S_LEN}), got shape {worlds.shape}")
    table, rules = game.combos.table, game.combos.rules_array
    observer, C, count = game.to_act, game.combos.num_combos, len(worlds)
    history = list(game.history)
    if not all(is_integer(a) and 0 <= a < game.combos.num_actions for a in history):
        return np.zeros(count)  # not a history of this game's action ids
    banker, streak = int(game.state[S_BANKER]), int(game.state[S_STREAK])
    states = np.zeros_like(worlds)
    for w, world in enumerate(worlds):
        dealt = world[S_HAND:S_HAND + MAX_SEATS] | world[S_DOWN:S_DOWN + MAX_SEATS] | world[S_UP:S_UP + MAX_SEATS]
        dealt[observer] = game.state[S_DEALT + observer]
        K.new_hand(states[w], dealt, banker, streak, table, rules)
    layout = ObservationLayout(game.players, game.rules.hand_size)
    face_up, scratch = game.rules.discards_face_up, np.zeros(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    seen_obs, seen_masks, seen_rows, seen_actions = [], [], [], []  # the decisions to score
    alive = np.arange(count)
    pending = worlds[:, S_DOWN:S_DOWN + MAX_SEATS].copy()  # each world's face-down tiles still to go down
    for action in history:
        alive = alive[states[alive, S_PHASE] != PHASE_OVER]
        if not len(alive):
            break
        actors = states[alive, S_TO_ACT]
        moves = np.full(len(alive), action, dtype=np.int64)
        hidden = (actors != observer) & (C <= action < C + NUM_TYPES) & (not face_up)
        down = pending[alive, actors]
        lowest = down & -down
        moves[hidden] = C + _TILE_TYPE[np.log2(np.maximum(lowest[hidden], 1)).astype(np.int64)]
        pending[alive[hidden], actors[hidden]] &= ~lowest[hidden]
        obs = np.zeros((len(alive), layout.size), dtype=np.float32)
        masks = np.zeros((len(alive), game.combos.num_actions), dtype=np.int8)
        SK.observe_rows(states, alive, -1, table, rules, layout.offsets, face_up, scratch, obs, masks)
        legal = masks[np.arange(len(alive)), moves].astype(bool) & ~(hidden & (down == 0))
        choice = np.where(hidden, masks[:, :C].any(axis=1), masks.sum(axis=1) > 1)  # else the term is 0
        scored = legal & choice & (actors != observer) & (states[alive, S_OWED] == 0)
        seen_obs.append(obs[scored])
        seen_masks.append(masks[scored].astype(bool))
        seen_rows.append(alive[scored])
        seen_actions.append(np.where(hidden[scored], -1, moves[scored]))
        alive, moves = alive[legal], moves[legal]
        SK.step_rows(states, alive, moves, table, rules)
    tiles = np.r_[S_HAND:S_HAND + MAX_SEATS, S_DOWN:S_DOWN + MAX_SEATS, S_UP:S_UP + MAX_SEATS]
    same = np.ones(S_LEN, dtype=bool)  # compared as they are; the tiles as types (a copy is a copy)
    same[tiles] = same[S_DEALT:S_DEALT + MAX_SEATS] = same[S_TABLE:S_TABLE + MAX_SEATS] = False
    arrived = np.zeros(count, dtype=bool)
    arrived[alive] = np.all(states[alive][:, same] == worlds[alive][:, same], axis=1) & np.all(
        K.canonical(states[alive][:, tiles]) == K.canonical(worlds[alive][:, tiles]), axis=1)
    if not arrived.any():
        return np.zeros(count)
    log_likelihood = np.where(arrived, 0.0, -np.inf)
    if not seen_rows:  # no decision yet
        return log_likelihood
    rows, chosen = np.concatenate(seen_rows), np.concatenate(seen_actions)
    keep = arrived[rows]
    if keep.any():
        rows, chosen = rows[keep], chosen[keep]
        log_p = np.asarray(log_policy(np.concatenate(seen_obs)[keep], np.concatenate(seen_masks)[keep]),
                           dtype=np.float64)
        if log_p.shape != (len(rows), game.combos.num_actions):
            raise ValueError("the inference policy must give a log-probability per action for each observation")
        any_discard = np.logaddexp.reduce(log_p[:, C:C + NUM_TYPES], axis=1)
        terms = np.where(chosen < 0, any_discard, log_p[np.arange(len(rows)), np.maximum(chosen, 0)])
        np.add.at(log_likelihood, rows, terms)
    return log_likelihood


def location_log_weights(worlds: np.ndarray, seat: int, players: int, logits: np.ndarray) -> np.ndarray:
    """Log-likelihood, up to one constant, of each sampled world (states as ``sample_worlds``
    gives them) under a model that places each tile hidden from ``seat`` on its own: float64, one
    per row. ``logits`` (2 (P - 1), T) scores tile type t in the hand of seat ``(seat + r) % P``
    (row r - 1) and among that seat's face-down tiles (row P - 1 + r - 1), for r = 1 .. P - 1; the
    probability of a place is the softmax of its logit plus the log of its size (the uniform
    deal's chance) over the places. A world's log-likelihood is the sum of the logits of its
    hidden tiles' places: the sizes and the softmax's normalisers are the same in every world,
    since the hidden copies of each type and the size of each place are public facts. This is
    the model of the others' tiles that ``champion:locate=A`` draws its worlds by [SRB19]."""
    worlds = np.asarray(worlds, dtype=np.int64)
    if worlds.ndim != 2 or worlds.shape[1] != S_LEN:
        raise ValueError(f"worlds must be states of shape (N, {S_LEN}), got shape {worlds.shape}")
    if np.shape(logits) != (2 * (players - 1), NUM_TYPES):
        raise ValueError(f"logits must be of shape ({2 * (players - 1)}, {NUM_TYPES}), got {np.shape(logits)}")
    log_weights = np.zeros(len(worlds))
    for r in range(1, players):
        other = (seat + r) % players
        for row, start in ((r - 1, S_HAND), (players - 1 + r - 1, S_DOWN)):
            bits = (worlds[:, start + other, None] >> np.arange(32)) & 1
            log_weights += bits @ logits[row][_TILE_TYPE]
    return log_weights


def lookahead_values(game: Game, worlds: int, policy, value, seed: int = 0, workspace: Workspace | None = None,
                     infer: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(legal actions, mean chips of the acting seat after each) by a one-turn lookahead in
    ``worlds`` sampled worlds, the same worlds for every action: the action is played, the other
    seats play ``policy`` until the seat is to act again, and there its chips so far plus
    ``value`` of its observation (the chips still to come) are what the world is worth; in a
    world where the hand is over first, its chips alone.

    ``policy(observations, masks, rng)`` gives an action per row and ``value(observations)``
    chips per row, for batches of observation vectors (float32, one row each) and legal masks
    (bool), rng a ``numpy.random.Generator``: a learned policy and value, typically.
    """
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to search")
    if type(worlds) is not int or worlds < 1:
        raise ValueError(f"worlds must be a positive integer, got {worlds!r}")
    seat, table, rules = game.to_act, game.combos.table, game.combos.rules_array
    actions = np.array(game.legal_actions(), dtype=np.int64)
    drawn, _ = sample_worlds(game, worlds, seed=seed, workspace=workspace, infer=infer)
    states = np.repeat(drawn, len(actions), axis=0)  # world w, action i: row w * len(actions) + i
    SK.step_rows(states, np.arange(len(states)), np.tile(actions, worlds), table, rules)
    layout = ObservationLayout(game.players, game.rules.hand_size)
    face_up, scratch = game.rules.discards_face_up, np.zeros(rules[R_COMBOS] + NUM_TYPES + 2, dtype=np.int64)
    rng = np.random.default_rng(seed)

    def observe(rows: np.ndarray, observer: int) -> tuple[np.ndarray, np.ndarray]:
        obs = np.zeros((len(rows), layout.size), dtype=np.float32)
        masks = np.zeros((len(rows), game.combos.num_actions), dtype=np.int8)
        SK.observe_rows(states, rows, observer, table, rules, layout.offsets, face_up, scratch, obs, masks)
        return obs, masks.astype(bool)

    while True:
        rows = np.flatnonzero((states[:, S_PHASE] != PHASE_OVER) & (states[:, S_TO_ACT] != seat))
        if not len(rows):
            break
        obs, masks = observe(rows, -1)
        moves = np.asarray(policy(obs, masks, rng), dtype=np.int64)
        if moves.shape != rows.shape or not np.all((moves >= 0) & (moves < masks.shape[1])) \
                or not np.all(masks[np.arange(len(rows)), moves]):
            raise ValueError("the lookahead policy must give one legal action per observation")
        SK.step_rows(states, rows, moves, table, rules)
    worth = (states[:, S_BONUS + seat] + states[:, S_SETTLE + seat]).astype(np.float64)
    rows = np.flatnonzero(states[:, S_PHASE] != PHASE_OVER)
    if len(rows):
        rest = np.asarray(value(observe(rows, seat)[0]), dtype=np.float64)
        if rest.shape != rows.shape or not np.all(np.isfinite(rest)):
            raise ValueError("the lookahead value must give one finite number of chips per observation")
        worth[rows] += rest
    return actions, worth.reshape(worlds, len(actions)).mean(axis=0)


def ismcts_values(game: Game, iterations: int = 1000, exploration: float = 1.2, scale: float = 20.0,
                  policy: str = "greedy", endgame: int = 0, seed: int = 0, workspace: Workspace | None = None,
                  epsilon: float = 0.0, own_epsilon: float | None = None, infer: float = 1.0,
                  low_discard: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(root actions, visits, mean chips of the acting seat) of an ISMCTS search.

    ``exploration`` is UCB1's constant on rewards of chips / ``scale``. Actions the search
    never tried are left out (fewer iterations than legal actions).
    """
    epsilons = _check(game, policy, endgame, epsilon, own_epsilon, iterations=iterations)
    if not np.isfinite(exploration) or exploration < 0:
        raise ValueError(f"exploration must be a finite number >= 0, got {exploration!r}")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive number of chips, got {scale!r}")
    events, keep = _inference(game, infer)
    ws = _workspace(game, workspace)
    links, stats = ws.tree(iterations)
    width = game.combos.num_actions
    actions = np.zeros(width, dtype=np.int64)
    visits = np.zeros(width, dtype=np.float64)
    values = np.zeros(width, dtype=np.float64)
    count = SK.ismcts(game.state, game.to_act, iterations, float(exploration), float(scale), POLICIES[policy],
                      epsilons, bool(low_discard), endgame, events, keep, game.rules.discards_face_up, ws.singles,
                      game.combos.table, game.combos.rules_array, _rng(seed), links, stats, ws.solver, actions, visits,
                      values)
    order = np.argsort(actions[:count], kind="stable")
    return actions[:count][order], visits[:count][order], values[:count][order]


def endgame_values(game: Game, workspace: Workspace | None = None) -> tuple[np.ndarray, int]:
    """(each seat's final chips under max-n play from the true state, solver nodes).

    Perfect information: this reads every hand. Searches call it on sampled worlds only.
    """
    if game.is_over:
        return game.net().astype(np.float64), 0
    ws = _workspace(game, workspace)
    states, moves, frames, values, tt_keys, tt_values, tt_stamp, counter = ws.solver
    states[0] = game.state
    counter[0] += 1
    nodes = SK.solve_endgame(states, moves, frames, values, tt_keys, tt_values, tt_stamp, counter[0],
                             game.combos.table, game.combos.rules_array)
    return values[0, :game.players].copy(), int(nodes)


def sample_worlds(game: Game, samples: int, beta: float = 0.0, seed: int = 0,
                  workspace: Workspace | None = None, infer: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(``samples`` worlds as states (samples, S_LEN), their normalised weights).

    Uniform weights with ``beta = 0``; else each world's weight is proportional to the
    likelihood of the other seats' face-down tiles under the softened expert. The worlds are
    drawn as the searches draw them (``infer``, and the hard fact of ``must_beat_if_able``).
    """
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to sample")
    events, keep = _inference(game, infer)
    ws = _workspace(game, workspace)
    rng = _rng(seed)
    worlds = np.zeros((samples, S_LEN), dtype=np.int64)
    log_weights = np.zeros(samples, dtype=np.float64)
    for i in range(samples):
        SK.draw_world(game.state, game.to_act, events, keep, game.rules.discards_face_up, game.combos.table,
                      game.combos.rules_array, rng, worlds[i])
        if beta > 0:
            log_weights[i] = SK.discard_log_likelihood(worlds[i], game.to_act, float(beta), ws.singles,
                                                       game.combos.table, game.combos.rules_array)
    weights = np.exp(log_weights - log_weights.max())
    return worlds, weights / weights.sum()
