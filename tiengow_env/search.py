"""Search from the acting seat's view: PIMC, ISMCTS and an exact endgame solver.

Every search here sees the game only through ``_search_kernels.deal_world``: it deals the tiles
hidden from the acting seat again at random, keeping every public fact (hand sizes, face-up
plays, how many tiles each seat put face down, the seat's own face-down tiles). So two games
that differ only in tiles hidden from the seat give the same values for the same seed.

* ``pimc_values(game, samples)``: play every legal action out in ``samples`` sampled worlds
  (the same worlds for every action) and average the seat's chips [perfect-information
  Monte Carlo]. Each world is finished by greedy rollouts, each decision uniformly random
  with probability ``epsilon`` instead. With ``halving=True`` the same number of rollouts is
  spent by sequential halving: the actions still in the race get the new worlds, so the close
  calls get the most. With ``paired=True`` every action of a world is finished with the same
  random numbers (common random numbers), so the rollouts' own noise largely cancels in the
  comparison. ``pimc_details`` also takes a prior's ``bonus`` per action and given ``worlds``.
* ``pimc_extended_details(game, samples)``: extended PIMC at depth one, which ``champion`` runs:
  in each world the other seats move up to the seat's next decision, and that decision is made
  once for each information set the worlds reach, by the worlds that share it, not once per
  world, so the search no longer credits itself with knowing the hidden tiles one move ahead.
* ``sample_worlds(game, samples)``: worlds as the searches deal them, and
  ``location_log_weights(worlds, ...)``: how likely each world's placing of the hidden tiles is
  under a learned model of where each tile lies, and ``located_worlds(game, samples, logits)``:
  worlds drawn exactly from that model (``champion`` draws its worlds so).
* ``ismcts_values(game, iterations)``: single-observer information-set MCTS.
* ``endgame_values(game)``: the exact max-n value of a full (perfect-information) state, a
  library capability no bot uses by default (an exact endgame in the searches' rollouts lost:
  ``benchmarks/results/experiments/endgame.json``).

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
from .layout import MAX_SEATS, S_DOWN, S_HAND, S_LEN
from .rules import RuleSet
from .tiles import NUM_TYPES, TILE_TYPE

_TILE_TYPE = TILE_TYPE.astype(np.int64)
TABLE_BITS = 15  # transposition-table entries: 2**15 (1 MB of keys), reused across worlds
MAX_EXTENDED_WORLDS = 10**5  # extended PIMC holds each world, its next decision and the values there: 2.2 KB a world


class Workspace:
    """Tables the search kernels reuse for one rule set: the rule set's ``tables``, the endgame
    solver's stack and transposition table, and the ISMCTS tree."""

    def __init__(self, rules: RuleSet, table_bits: int = TABLE_BITS):
        from .combos import table_for

        self.rules = rules
        self.combos = table_for(rules)
        singles = np.empty(NUM_TYPES, dtype=np.int64)
        PK.single_of_type(self.combos.table, singles)
        self.tables = SK.Tables(self.combos.table, self.combos.rules_array, singles, bool(rules.discards_face_up))
        depth = SK.MAX_DEPTH + 1
        size = 1 << table_bits
        self.solver = SK.Solver(
            states=np.zeros((depth, S_LEN), dtype=np.int64),
            moves=np.zeros((depth, self.combos.num_actions), dtype=np.int64),
            frames=np.zeros((depth, SK.FRAME), dtype=np.int64),
            values=np.zeros((depth, MAX_SEATS + 1), dtype=np.float64),
            tt_keys=np.zeros((size, SK.TT_WORDS), dtype=np.int64),
            tt_values=np.zeros((size, MAX_SEATS), dtype=np.float64),
            tt_stamp=np.zeros(size, dtype=np.int64),
            counter=np.zeros(1, dtype=np.int64),
        )
        self._tree = SK.Tree(np.zeros((0, 5), dtype=np.int64), np.zeros((0, 3), dtype=np.float64))
        self.rollouts = 0  # playouts to the end of the hand the PIMC searches of this workspace have played

    def tree(self, iterations: int) -> SK.Tree:
        """ISMCTS node arrays for ``iterations`` iterations (one node each, plus the root)."""
        if len(self._tree.links) < iterations + 1:
            self._tree = SK.Tree(
                np.zeros((iterations + 1, 5), dtype=np.int64), np.zeros((iterations + 1, 3), dtype=np.float64)
            )
        return self._tree


def _workspace(game: Game, workspace: Workspace | None) -> Workspace:
    if workspace is None:
        return Workspace(game.rules)
    if workspace.rules != game.rules:
        raise ValueError("the workspace was made for other rules than the game's")
    return workspace


def _check(game: Game, epsilon: float, **counts: int) -> None:
    """Refuse bad search settings."""
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to search")
    for name, value in counts.items():
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not 0.0 <= epsilon <= 1.0:  # also refuses nan
        raise ValueError(f"epsilon must be a probability from 0 to 1, got {epsilon!r}")


def _rng(seed: int) -> np.ndarray:
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, np.uint64(int(seed) % 2**64))
    return rng


def pimc_values(
    game: Game,
    samples: int = 32,
    seed: int = 0,
    epsilon: float = 0.0,
    halving: bool = False,
    paired: bool = False,
    workspace: Workspace | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(legal actions, mean chips of the acting seat after each) over ``samples`` worlds per
    action; with ``halving`` the same rollouts are spent by sequential halving, and each
    action's mean is over the worlds it was played in."""
    actions, values, _ = pimc_details(game, samples, seed, epsilon, halving, paired, workspace=workspace)
    return actions, values


def pimc_details(
    game: Game,
    samples: int = 32,
    seed: int = 0,
    epsilon: float = 0.0,
    halving: bool = False,
    paired: bool = False,
    bonus: np.ndarray | None = None,
    worlds: tuple[np.ndarray, np.ndarray] | None = None,
    workspace: Workspace | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """``pimc_values`` and the index of the action the search prefers: the best mean plus
    ``bonus`` (chips per legal action, in the order of ``game.legal_actions()``; none by
    default), or with ``halving`` the last one in the race, ranked the same way in every round.
    ``worlds``, (states, weights) with states as ``sample_worlds`` gives them, makes the search
    draw its worlds from those states by their weights (a belief over worlds), not afresh."""
    _check(game, epsilon, samples=samples)
    ws = _workspace(game, workspace)
    actions, bonus, out = _actions_bonus_out(game, bonus)
    settings = SK.PimcSettings(samples, float(epsilon), bool(halving), bool(paired))
    SK.pimc_values(game.state, game.to_act, actions, bonus, settings, _pool(worlds), ws.tables, _rng(seed), out)
    ws.rollouts += int(out.worlds.sum())  # the kernel counts each action's worlds: what tiengow bench reads
    return actions, out.means, int(np.argmax(out.rounds))


def pimc_extended_details(
    game: Game,
    samples: int = 32,
    seed: int = 0,
    epsilon: float = 0.0,
    bonus: np.ndarray | None = None,
    worlds: tuple[np.ndarray, np.ndarray] | None = None,
    workspace: Workspace | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """``pimc_details`` by extended PIMC at depth one (``_search_kernels.pimc_extended``): the
    seat's next decision is made once per information set, over the worlds that share it."""
    _check(game, epsilon, samples=samples)
    if samples > MAX_EXTENDED_WORLDS:
        raise ValueError(
            f"extended PIMC holds every world in memory: samples is at most {MAX_EXTENDED_WORLDS:,}, got {samples:,}"
        )
    ws = _workspace(game, workspace)
    actions, bonus, out = _actions_bonus_out(game, bonus)
    settings = SK.PimcSettings(samples, float(epsilon), False, True)
    ws.rollouts += SK.pimc_extended(
        game.state, game.to_act, actions, settings, _pool(worlds), ws.tables, _rng(seed), out
    )
    return actions, out.means, int(np.argmax(out.means + bonus))


def _actions_bonus_out(game: Game, bonus: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, SK.PimcOut]:
    """The legal actions, the checked ``bonus`` for them (zeros for none) and a ``PimcOut``."""
    actions = np.array(game.legal_actions(), dtype=np.int64)
    if bonus is None:
        bonus = np.zeros(len(actions))
    bonus = np.asarray(bonus, dtype=np.float64)
    if bonus.shape != actions.shape or not np.all(np.isfinite(bonus)):
        raise ValueError(
            f"bonus must hold a finite number for each of the {len(actions)} legal actions, got shape {bonus.shape}"
        )
    out = SK.PimcOut(
        np.zeros(len(actions)), np.zeros(len(actions), dtype=np.int64), np.zeros(len(actions), dtype=np.int64)
    )
    return actions, bonus, out


def _pool(worlds: tuple[np.ndarray, np.ndarray] | None) -> SK.Worlds:
    """The kernel's ``Worlds`` of given (states, weights): empty for none."""
    if worlds is None:
        return SK.Worlds(np.zeros((0, S_LEN), dtype=np.int64), np.zeros(0))
    states, weights = (np.asarray(part) for part in worlds)
    weights = weights.astype(np.float64)
    if states.ndim != 2 or states.shape[1] != S_LEN or weights.shape != (len(states),) or not len(states):
        raise ValueError(
            f"worlds must be (states, weights): states of shape (N, {S_LEN}) and one weight each, "
            f"N >= 1; got shapes {states.shape} and {weights.shape}"
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError("world weights must be finite, >= 0 and not all 0")
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    return SK.Worlds(np.ascontiguousarray(states, dtype=np.int64), cdf)


def location_log_weights(worlds: np.ndarray, seat: int, players: int, logits: np.ndarray) -> np.ndarray:
    """Log-likelihood, up to one constant, of each sampled world (states as ``sample_worlds``
    gives them) under a model that places each tile hidden from ``seat`` on its own: float64, one
    per row. ``logits`` (2 (P - 1), T) scores tile type t in the hand of seat ``(seat + r) % P``
    (row r - 1) and among that seat's face-down tiles (row P - 1 + r - 1), for r = 1 .. P - 1; the
    probability of a place is the softmax of its logit plus the log of its size (the uniform
    deal's chance) over the places. A world's log-likelihood is the sum of the logits of its
    hidden tiles' places: the sizes and the softmax's normalisers are the same in every world,
    since the hidden copies of each type and the size of each place are public facts. This is
    the model of the others' tiles that ``champion:locate=A`` draws its worlds by (Solinas, Rebstock,
    Buro, AAAI 2019: worlds weighted by the likelihood of the observed play)."""
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


def located_worlds(
    game: Game, samples: int, logits: np.ndarray, power: float = 1.0, seed: int = 0, workspace: Workspace | None = None
) -> np.ndarray:
    """``samples`` worlds for the acting seat drawn exactly from the belief that
    ``location_log_weights`` scores (its likelihood raised to ``power``), among the worlds
    ``sample_worlds`` deals: states (samples, S_LEN), each drawn on its own
    (``_search_kernels.deal_located_worlds``), where weighing uniform worlds leaves few that count."""
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to sample")
    if not is_integer(samples) or samples < 1:
        raise ValueError(f"samples must be a whole number >= 1, got {samples!r}")
    players, seat = game.players, game.to_act
    if np.shape(logits) != (2 * (players - 1), NUM_TYPES):
        raise ValueError(f"logits must be of shape ({2 * (players - 1)}, {NUM_TYPES}), got {np.shape(logits)}")
    if not np.isfinite(power) or power < 0 or not np.all(np.isfinite(logits)):
        raise ValueError(f"power must be a finite number >= 0 and the logits finite, got power={power!r}")
    log_weights = np.zeros((2 * players, 32))
    for r in range(1, players):
        other = (seat + r) % players
        log_weights[other] = power * np.asarray(logits[r - 1])[_TILE_TYPE]
        log_weights[players + other] = power * np.asarray(logits[players - 1 + r - 1])[_TILE_TYPE]
    ws = _workspace(game, workspace)
    worlds = np.zeros((samples, S_LEN), dtype=np.int64)
    SK.deal_located_worlds(
        game.state, seat, ws.tables.face_up, log_weights, ws.tables.table, ws.tables.rules, _rng(seed), worlds
    )
    return worlds


def ismcts_values(
    game: Game,
    iterations: int = 1000,
    exploration: float = 1.2,
    scale: float = 20.0,
    seed: int = 0,
    epsilon: float = 0.0,
    workspace: Workspace | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(root actions, visits, mean chips of the acting seat) of an ISMCTS search.

    ``exploration`` is UCB1's constant on rewards of chips / ``scale``. Actions the search
    never tried are left out (fewer iterations than legal actions).
    """
    _check(game, epsilon, iterations=iterations)
    if not np.isfinite(exploration) or exploration < 0:
        raise ValueError(f"exploration must be a finite number >= 0, got {exploration!r}")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive number of chips, got {scale!r}")
    ws = _workspace(game, workspace)
    width = game.combos.num_actions
    out = SK.IsmctsOut(np.zeros(width, dtype=np.int64), np.zeros(width), np.zeros(width))
    settings = SK.IsmctsSettings(iterations, float(exploration), float(scale), float(epsilon))
    count = SK.ismcts(game.state, game.to_act, settings, ws.tables, _rng(seed), ws.tree(iterations), out)
    order = np.argsort(out.actions[:count], kind="stable")
    return out.actions[:count][order], out.visits[:count][order], out.values[:count][order]


def endgame_values(game: Game, workspace: Workspace | None = None) -> tuple[np.ndarray, int]:
    """(each seat's final chips under max-n play from the true state, solver nodes).

    Perfect information: this reads every hand. A search may call it on sampled worlds only.
    """
    if game.is_over:
        return game.net().astype(np.float64), 0
    ws = _workspace(game, workspace)
    ws.solver.states[0] = game.state
    ws.solver.counter[0] += 1
    nodes = SK.solve_endgame(ws.solver, ws.solver.counter[0], game.combos.table, game.combos.rules_array)
    return ws.solver.values[0, : game.players].copy(), int(nodes)


def sample_worlds(
    game: Game, samples: int, seed: int = 0, workspace: Workspace | None = None, seat: int | None = None
) -> np.ndarray:
    """``samples`` worlds for the acting seat, or ``seat`` (any seat: OpenSpiel resamples for any
    player), states (samples, S_LEN), drawn as the searches draw them."""
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to sample")
    if seat is None:
        seat = game.to_act
    elif not is_integer(seat) or not 0 <= seat < game.players:
        raise ValueError(f"seat must be a seat 0..{game.players - 1}, got {seat!r}")
    ws = _workspace(game, workspace)
    worlds = np.zeros((samples, S_LEN), dtype=np.int64)
    SK.deal_worlds(game.state, int(seat), ws.tables.face_up, ws.tables.table, ws.tables.rules, _rng(seed), worlds)
    return worlds
