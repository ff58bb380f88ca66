"""Tien Gow as an OpenSpiel game: ``import tiengow_env.openspiel`` registers ``python_tiengow``.

    import pyspiel
    import tiengow_env.openspiel  # noqa: F401  (registers the game)
    game = pyspiel.load_game("python_tiengow", {"rules": "micro", "banker": 0})

Parameters: ``rules``, a preset name or a JSON object of switches (``standard`` by default), and
``banker``, a fixed seat, or -1 (the default) for the dice of RULES.md section 3.

One hand, imperfect information, 3 or 4 players, zero-sum in chips, explicit chance:

* **Banker.** With ``banker=-1`` the first chance node is the dice: one outcome per seat, with
  the probability that d1 + d2 counted from seat 0 lands on it (4 players: 8, 9, 10, 9 in 36).
* **Deal.** When the rules have at most ``DEAL_TABLE_LIMIT`` distinct deals (``micro``: 1,440),
  one chance node holds every distinct deal (``tree.distinct_deals``, as ``tiengow tree``
  walks them) with its probability (``tree.deal_weights``): tree algorithms then see the same
  small tree as ``tiengow nashconv``. Otherwise the tiles are dealt one by one, seat 0's hand
  first, each outcome a tile type with probability (copies left) / (tiles left); the last
  seat's hand is what is left, with no chance node.
* **Actions** are the project's action ids (``Game.legal_actions``): a face-down answer of n
  tiles is n decisions of one tile each. ``action_to_string`` speaks the game
  (``play 6-6+3-3``, ``discard 4-1 face down``); ``returns()`` are the net chips so far (trick
  bonuses as they are paid, the settlement at the end).
* **Observations** come from the core's encoders (``observation.py``): the information-state
  tensor is ``Game.information_state`` and the observation tensor ``Game.observe``, each as the
  layout's named views. The information-state string is the seat, the banker, the seat's dealt
  hand and every decision in order (other seats' face-down tiles as ``down``): perfect recall,
  and the same information sets as ``tiengow tree``. The tensor leaves out the order in which
  the seat put the tiles of one face-down answer down (that order changes nothing in the game).
* ``resample_from_infostate(player, sampler)`` draws the tiles hidden from ``player`` with the
  core's sampler (``search.sample_worlds``) and replays the decisions in that world: the seat's
  own tiles, every public play and every face-down count stay, the hidden tiles are new, and
  the draw depends only on what the seat knows and on ``sampler()``.

Each state steps one ``Game`` (the public API: ``step``, ``legal_actions``, ``clone``).
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter

import numpy as np

try:
    import pyspiel
except ImportError:  # the core cannot reach agents.infra.install_hint: the same hint, spelt out
    raise ImportError('tiengow_env.openspiel needs OpenSpiel: pip install "tiengow[openspiel]"') from None

from .checks import DuplicateKeyError, is_integer, load_json, short_repr
from .game import Game, longest_hand
from .observation import ObservationLayout
from .rules import PRESETS, RuleSet
from .search import Workspace, sample_worlds
from .state import StateView
from .tiles import NAMES, NUM_TYPES, mask_types, parse_type
from .tree import count_deals, deal_weights

GAME_NAME = "python_tiengow"
DICE = -1  # the ``banker`` parameter that leaves the banker to the dice
DEAL_TABLE_LIMIT = 20_000  # distinct deals, at most, for one chance node holding them all
RESAMPLE_DRAWS = 100  # worlds drawn, at most, before resample_from_infostate gives up

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Tien Gow (tiengow)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"rules": "standard", "banker": DICE},
)


def parse_rules(text: object) -> RuleSet:
    """The rules of a ``rules`` parameter: a preset name or a JSON object of switches."""
    if not isinstance(text, str):
        raise ValueError(f"rules must be a preset name or a JSON object of switches, got {short_repr(text)}")
    if text.lstrip().startswith("{"):
        try:
            spec = load_json(text)
        except (ValueError, DuplicateKeyError) as err:
            raise ValueError(
                f"rules {short_repr(text)} is not a JSON object ({err}); expected e.g. "
                '{"preset": "standard", "players": 3}'
            ) from None
        if not isinstance(spec, dict):
            raise ValueError(f"rules {short_repr(text)} is not a JSON object of switches")
        return RuleSet.from_spec(spec)
    if text not in PRESETS:
        raise ValueError(
            f"unknown rules {short_repr(text)}; expected a preset ({', '.join(PRESETS)}) or a JSON "
            'object of switches such as {"preset": "standard", "players": 3}'
        )
    return PRESETS[text]


def dice_outcomes(players: int) -> list[tuple[int, float]]:
    """(seat, probability) of the first banker: two dice d1 + d2 give seat (d1 + d2 - 1) mod players."""
    counts = Counter((d1 + d2 - 1) % players for d1, d2 in itertools.product(range(1, 7), repeat=2))
    return [(seat, counts[seat] / 36) for seat in range(players)]


class Setup:
    """What every state of one ``python_tiengow`` game shares: the rules, the action names, the
    chance nodes' outcomes, and the sampler's workspace."""

    def __init__(self, rules_text: str, banker: int):
        self.rules_text = rules_text
        self.rules = rules = parse_rules(rules_text)
        if not is_integer(banker) or not DICE <= banker < rules.players:
            raise ValueError(
                f"banker must be a seat 0..{rules.players - 1}, or {DICE} for the dice; got {short_repr(banker)}"
            )
        self.banker_param = int(banker)
        self.banker = None if banker == DICE else int(banker)
        self.banker_outcomes = dice_outcomes(rules.players)
        self.combos = Game(seed=0, rules=rules).combos
        C = self.combos.num_combos
        self.face_up = rules.discards_face_up
        self.names = [
            self.combos.action_name(a) + (" face down" if C <= a < C + NUM_TYPES and not self.face_up else "")
            for a in range(self.combos.num_actions)
        ]
        # the information-state string's short form of each action
        self.tokens = [name.removeprefix("play ").removesuffix(" face down") for name in self.names]
        self.deck = Counter(rules.deck_types)
        self.deals: list[tuple[tuple[int, ...], ...]] | None = None
        if count_deals(rules) <= DEAL_TABLE_LIMIT:
            weighted = deal_weights(rules)
            total = sum(w for _, w in weighted)
            self.deals = [deal for deal, _ in weighted]
            self.deal_outcomes = [(i, w / total) for i, (_, w) in enumerate(weighted)]
            self.deal_index = {deal: i for i, deal in enumerate(self.deals)}
        self.workspace = Workspace(rules)
        self.layout = ObservationLayout(rules.players, rules.hand_size)

    @property
    def max_chance_outcomes(self) -> int:
        return max(self.rules.players, NUM_TYPES if self.deals is None else len(self.deals))


@functools.lru_cache(maxsize=16)
def setup_for(rules_text: str, banker: int) -> Setup:
    """One ``Setup`` per (rules, banker) in a process: states that are pickled (OpenSpiel's
    serialisation) find theirs again by these two parameters."""
    return Setup(rules_text, banker)


class TienGowGame(pyspiel.Game):
    """``python_tiengow`` (module doc)."""

    def __init__(self, params: dict | None = None):
        params = dict(params or {})
        unknown = sorted(set(params) - {"rules", "banker"})
        if unknown:
            raise ValueError(f"python_tiengow: unknown parameter {unknown[0]!r}; parameters are rules and banker")
        setup = setup_for(params.get("rules", "standard"), params.get("banker", DICE))
        rules = setup.rules
        bound = float(rules.payment_bound())
        info = pyspiel.GameInfo(
            num_distinct_actions=setup.combos.num_actions,
            max_chance_outcomes=setup.max_chance_outcomes,
            num_players=rules.players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=longest_hand(rules),
        )
        super().__init__(GAME_TYPE, info, params)
        self.setup = setup

    def new_initial_state(self) -> TienGowState:
        return TienGowState(self)

    def state_of(self, game: Game) -> TienGowState:
        """The state of this game that has ``game``'s banker, deal and decisions (every tile: for an
        agent, follow it with ``resample_from_infostate``). ValueError if ``game`` has other rules
        or banker, or was not played from its deal by ``step``/``play``."""
        setup = self.setup
        if game.rules.switches() != setup.rules.switches():
            raise ValueError(f"this {GAME_NAME} game has rules {setup.rules.name!r}, not {game.rules.name!r}")
        if setup.banker is not None and setup.banker != game.banker:
            raise ValueError(f"this {GAME_NAME} game has banker seat {setup.banker}, not seat {game.banker}")
        dealt = [tuple(sorted(parse_type(name) for name in game.dealt(s))) for s in range(game.players)]
        state = _dealt_state(self, game.banker, dealt)
        for action in game.history:
            state.apply_action(action)
        replayed = state._hand.game  # copies of a tile may sit on other bits: compare what the tiles say
        if (replayed.to_act, replayed.columns, replayed.net().tolist()) != (
            game.to_act,
            game.columns,
            game.net().tolist(),
        ) or any(replayed.hand(s) != game.hand(s) for s in range(game.players)):
            raise ValueError("the game's decisions do not lead to its state (it was set from outside)")
        return state

    def max_chance_nodes_in_history(self) -> int:
        dealt = 1 if self.setup.deals is not None else (self.setup.rules.players - 1) * self.setup.rules.hand_size
        return dealt + (self.setup.banker is None)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict | None = None
    ) -> TienGowObserver:
        """The information state (``perfect_recall``) or the observation of one seat (module doc)."""
        return TienGowObserver(self.setup, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class _Hand:
    """Everything a state holds: the banker, the deal so far, the ``Game`` once dealt, and the
    seat of each of its decisions. OpenSpiel copies a Python state by ``copy.deepcopy`` of its
    attributes and serialises it with ``pickle``: a copy clones the ``Game``, and a pickle is
    the hand's parameters and its chance outcomes and actions, replayed when it is read."""

    def __init__(self, setup: Setup):
        self.setup = setup
        self.banker = setup.banker
        self.dealing: list[list[int]] = [[] for _ in range(setup.rules.players)]
        self.left = [setup.deck[t] for t in range(NUM_TYPES)]  # copies of each type not dealt yet
        self.chance: list[int] = []
        self.game: Game | None = None
        self.seats: list[int] = []

    def __deepcopy__(self, memo: dict) -> _Hand:
        other = object.__new__(_Hand)
        other.setup, other.banker = self.setup, self.banker
        other.dealing = [list(hand) for hand in self.dealing]
        other.left = list(self.left)
        other.chance = list(self.chance)
        other.game = None if self.game is None else self.game.clone()
        other.seats = list(self.seats)
        return other

    def __reduce__(self) -> tuple:
        actions = tuple(self.game.history) if self.game is not None else ()
        return _replayed, (self.setup.rules_text, self.setup.banker_param, tuple(self.chance), actions)

    # ------------------------------------------------------------------ chance
    def chance_outcomes(self) -> list[tuple[int, float]]:
        setup = self.setup
        if self.banker is None:
            return setup.banker_outcomes
        if setup.deals is not None:
            return setup.deal_outcomes
        total = sum(self.left)
        return [(t, copies / total) for t, copies in enumerate(self.left) if copies]

    def apply_chance(self, outcome: int) -> None:
        setup = self.setup
        if self.banker is None or setup.deals is not None:
            possible = 0 <= outcome < (setup.rules.players if self.banker is None else len(setup.deals))
        else:
            possible = 0 <= outcome < NUM_TYPES and self.left[outcome] > 0
        if not possible:
            raise ValueError(f"chance outcome {outcome} is not possible here")
        self.chance.append(outcome)
        if self.banker is None:
            self.banker = outcome
            return
        if setup.deals is not None:
            self._start(setup.deals[outcome])
            return
        self.left[outcome] -= 1
        size = setup.rules.hand_size
        seat = next(s for s, hand in enumerate(self.dealing) if len(hand) < size)
        self.dealing[seat].append(outcome)
        if seat == setup.rules.players - 2 and len(self.dealing[seat]) == size:
            self.dealing[-1] = [t for t, copies in enumerate(self.left) for _ in range(copies)]
            self._start(self.dealing)

    def _start(self, deal: list | tuple) -> None:
        self.game = Game(
            0, hands=[[NAMES[t] for t in hand] for hand in deal], banker=self.banker, rules=self.setup.rules
        )

    # ------------------------------------------------------------------ decisions
    def apply(self, action: int) -> None:
        seat = self.game.to_act
        self.game.step(action)  # ValueError, and nothing changed, if it is not legal
        self.seats.append(seat)

    def information_string(self, seat: int) -> str:
        """The seat, the banker, its dealt hand and every decision so far, hidden discards as ``down``."""
        game = self.game
        if game is None:
            return f"seat {seat} before the deal" + ("" if self.banker is None else f", banker {self.banker}")
        setup, C = self.setup, self.setup.combos.num_combos
        parts = [f"seat {seat} banker {game.banker} dealt {' '.join(game.dealt(seat))}"]
        for s, a in zip(self.seats, game.history):
            hidden = C <= a < C + NUM_TYPES and s != seat and not setup.face_up
            parts.append(f"{s}:down" if hidden else f"{s}:{setup.tokens[a]}")
        return " | ".join(parts)


def _replayed(rules_text: str, banker: int, chance: tuple[int, ...], actions: tuple[int, ...]) -> _Hand:
    """A pickled ``_Hand`` read back: the same chance outcomes and actions, replayed."""
    hand = _Hand(setup_for(rules_text, banker))
    for outcome in chance:
        hand.apply_chance(outcome)
    for action in actions:
        hand.apply(action)
    return hand


class TienGowState(pyspiel.State):
    """A state of ``python_tiengow``: chance (the banker's dice, the deal), then one hand."""

    def __init__(self, game: TienGowGame):
        super().__init__(game)
        self._hand = _Hand(game.setup)

    @property
    def tiengow_game(self) -> Game | None:
        """The ``Game`` under this state (None before the deal is complete). It is this state's
        own: read it (or ``clone()`` it), never step it."""
        return self._hand.game

    def current_player(self) -> int:
        game = self._hand.game
        if game is None:
            return pyspiel.PlayerId.CHANCE
        return pyspiel.PlayerId.TERMINAL if game.is_over else game.to_act

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self._hand.game.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._hand.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        if self._hand.game is None:
            self._hand.apply_chance(int(action))
        else:
            self._hand.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        hand, setup = self._hand, self._hand.setup
        if player == pyspiel.PlayerId.CHANCE:
            if hand.banker is None:
                return f"banker: seat {action} (dice)"
            if setup.deals is not None and 0 <= action < len(setup.deals):
                return "deal " + " | ".join(" ".join(NAMES[t] for t in h) for h in setup.deals[action])
            seat = next((s for s, h in enumerate(hand.dealing) if len(h) < setup.rules.hand_size), 0)
            return f"seat {seat} is dealt {NAMES[action] if 0 <= action < NUM_TYPES else action}"
        if not is_integer(action) or not 0 <= action < len(setup.names):
            raise ValueError(f"an action is an integer id 0..{len(setup.names) - 1}, got {short_repr(action)}")
        return setup.names[action]

    def is_terminal(self) -> bool:
        game = self._hand.game
        return game is not None and game.is_over

    def returns(self) -> list[float]:
        game = self._hand.game
        if game is None:
            return [0.0] * self._hand.setup.rules.players
        return [float(chips) for chips in game.net()]

    def resample_from_infostate(self, player_id: int, probability_sampler) -> TienGowState:
        """A state that ``player_id`` cannot tell from this one, its hidden tiles drawn again (module
        doc); ``probability_sampler()`` (a float in [0, 1)) seeds the draw."""
        hand = self._hand
        if hand.game is None or hand.game.is_over:
            raise ValueError("resample_from_infostate needs a hand in play (not at the deal, not over)")
        if not is_integer(player_id) or not 0 <= player_id < hand.setup.rules.players:
            raise ValueError(f"player must be a seat 0..{hand.setup.rules.players - 1}, got {short_repr(player_id)}")
        seed = int(float(probability_sampler()) * 2**53)
        for draw in range(RESAMPLE_DRAWS):
            world = sample_worlds(hand.game, 1, seed=seed + draw, workspace=hand.setup.workspace, seat=int(player_id))
            state = self._replay(world[0], int(player_id), seed + draw)
            if state is not None:
                return state
        raise ValueError(f"no world consistent with seat {player_id}'s information in {RESAMPLE_DRAWS} draws")

    def _replay(self, world: np.ndarray, player: int, seed: int) -> TienGowState | None:
        """This state's decisions replayed in ``world`` (the others' face-down tiles assigned to
        their discards at random); None if the world cannot give them (it is then drawn again)."""
        hand, setup = self._hand, self._hand.setup
        rules, C = setup.rules, setup.combos.num_combos
        view = StateView(world, rules.players)
        dealt = [tuple(sorted(mask_types(int(view.dealt[s])))) for s in range(rules.players)]
        rng = np.random.default_rng(seed)
        down = [list(rng.permutation(sorted(mask_types(int(view.down[s]))))) for s in range(rules.players)]
        state = _dealt_state(self.get_game(), hand.banker, dealt)
        for seat, action in zip(hand.seats, hand.game.history):
            if state.current_player() != seat:  # e.g. the world deals One Red Dot: not this hand
                return None
            if C <= action < C + NUM_TYPES and seat != player and not setup.face_up:
                action = C + int(down[seat].pop())
            try:
                state.apply_action(action)
            except ValueError:  # under must_beat_if_able the world may say that this seat could beat
                return None
        # The world must also leave the same seat to act: one decided at the deal, or one that
        # offers another seat a declaration first, is not this hand, even with no decision yet.
        return state if state.current_player() == self.current_player() else None

    def __str__(self) -> str:
        hand = self._hand
        game = hand.game
        if game is None:
            dealt = " | ".join(" ".join(NAMES[t] for t in h) for h in hand.dealing)
            return f"banker {'?' if hand.banker is None else hand.banker}; dealing {dealt}"
        hands = " | ".join(f"{s}: {' '.join(game.hand(s))}" for s in range(game.players))
        plays = " ".join(f"{s}:{hand.setup.tokens[a]}" for s, a in zip(hand.seats, game.history))
        over = f"; over, net {game.net().tolist()}" if game.is_over else ""
        return f"banker {game.banker}; hands {hands}; plays {plays}{over}"


def _dealt_state(game: TienGowGame, banker: int, dealt: list[tuple[int, ...]]) -> TienGowState:
    """A new state of ``game`` through its chance nodes: ``banker``, then the hands ``dealt``
    (sorted tile types per seat)."""
    setup = game.setup
    state = game.new_initial_state()
    if setup.banker is None:
        state.apply_action(banker)
    if setup.deals is not None:
        state.apply_action(setup.deal_index[tuple(dealt)])
    else:
        for t in itertools.chain.from_iterable(dealt[:-1]):
            state.apply_action(t)
    return state


class TienGowObserver:
    """OpenSpiel's PyObserver of ``python_tiengow`` (module doc): ``tensor`` with its named views
    in ``dict``, written by ``set_from``, and ``string_from``."""

    def __init__(self, setup: Setup, iig_obs_type: pyspiel.IIGObservationType, params: dict | None):
        if params:
            raise ValueError(f"python_tiengow observers take no parameters, got {short_repr(params)}")
        if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError(
                "python_tiengow observes one seat with the public information (the default observation "
                "or the information state); other IIGObservationTypes are not provided"
            )
        self.setup = setup
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        layout = setup.layout
        self.tensor = np.zeros(layout.information_size if self.perfect_recall else layout.size, dtype=np.float32)
        self.dict = layout.views(self.tensor)

    def set_from(self, state: TienGowState, player: int) -> None:
        game = state._hand.game
        if game is None:
            self.tensor.fill(0.0)
        elif self.perfect_recall:
            self.tensor[:] = game.information_state(player)
        else:
            self.tensor[:] = game.observe(player)[0]

    def string_from(self, state: TienGowState, player: int) -> str:
        hand = state._hand
        if self.perfect_recall or hand.game is None:
            return hand.information_string(player)
        return observation_text(self.setup.layout.views(hand.game.observe(player)[0]), player, self.setup.rules)


def observation_text(views: dict[str, np.ndarray], seat: int, rules: RuleSet) -> str:
    """One line of what an observation vector says (rows of per-seat views are relative to ``seat``)."""
    players = rules.players

    def tiles(counts: np.ndarray) -> str:
        return " ".join(NAMES[t] for t in range(NUM_TYPES) for _ in range(int(counts[t]))) or "-"

    def by_seat(view: np.ndarray) -> str:
        return " ".join(str(int(view[(s - seat) % players])) for s in range(players))

    def one_hot(view: np.ndarray) -> int | None:
        rows = np.flatnonzero(view)
        return None if len(rows) == 0 else (int(rows[0]) + seat) % players

    phase = ("declare", "lead", "follow", "over")[int(np.argmax(views["phase"]))]
    parts = [f"seat {seat} hand {tiles(views['hand'])}", f"phase {phase}"]
    if phase == "follow":
        parts.append(
            f"led {tiles(views['lead'])} by seat {one_hot(views['leader'])}, best {tiles(views['best'])} "
            f"by seat {one_hot(views['best_seat'])}"
        )
    if phase != "over":
        parts.append(f"to act seat {one_hot(views['to_act'])}")
    parts.append("up " + " | ".join(tiles(views["up"][(s - seat) % players]) for s in range(players)))
    parts.append(f"own down {tiles(views['down'][0])}")
    parts += [
        f"columns {by_seat(views['columns'])}",
        f"tiles left {by_seat(views['tiles_left'])}",
        f"chips {by_seat(views['chips'])}",
        f"banker {one_hot(views['banker'])}",
    ]
    return "; ".join(parts)


pyspiel.register_game(GAME_TYPE, TienGowGame)

__all__ = [
    "GAME_NAME",
    "GAME_TYPE",
    "DICE",
    "DEAL_TABLE_LIMIT",
    "TienGowGame",
    "TienGowState",
    "TienGowObserver",
    "parse_rules",
    "dice_outcomes",
    "observation_text",
]
