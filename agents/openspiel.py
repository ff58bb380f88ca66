"""Our bots in OpenSpiel, and OpenSpiel's in ours (the game itself: ``tiengow_env.openspiel``).

* ``bot(spec, game, player)``: a ``pyspiel.Bot`` playing any agent spec (``expert``,
  ``pimc:64``, ``cfr:PATH``, a plugin ...) on a ``python_tiengow`` game, so that
  ``evaluate_bots``, PSRO and alpha-Rank take our agents.
* ``policy_from_cfr(path, game)``: an OpenSpiel ``TabularPolicy`` of a tabular CFR policy file
  (``tiengow train cfr --config configs/cfr_micro.yaml``) on its exact tree: the game must be
  ``python_tiengow`` with the file's rules and banker.
* ``SpielAgent``: an OpenSpiel bot or policy as one of our agents. Plugin factories for
  ``tiengow eval`` and ``tiengow league`` (``MODULE:FACTORY``, ``agents/base.py``)::

      tiengow eval tiengow.agents.openspiel:ismcts --vs random --deals 20
      tiengow eval tiengow.agents.openspiel:uniform_random --vs expert --deals 200
      tiengow eval tiengow.agents.openspiel:cfr_micro --vs random --rules micro --deals 200

  ``ismcts`` is OpenSpiel's Python IS-MCTS bot (``ISMCTS_SIMULATIONS`` simulations, random
  rollouts) sampling worlds through ``resample_from_infostate``; ``cfr_micro`` plays the
  shipped micro CFR+ policy through ``policy_from_cfr``. Your own OpenSpiel bot or policy is
  one small module away: ``def make(rules, seed): return SpielAgent.from_bot(make_bot, rules,
  seed)`` (``make_bot(game, player, seed)``) or ``SpielAgent.from_policy(policy, rules, seed)``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import numpy as np

from tiengow_env.game import Game
from tiengow_env.rules import PRESETS, RuleSet

from .base import Agent, make_agent
from .infra import install_hint

try:
    import pyspiel
    from open_spiel.python import policy as os_policy

    from tiengow_env.openspiel import GAME_NAME, TienGowGame, TienGowState
except ImportError:
    raise ImportError(f"tiengow.agents.openspiel needs OpenSpiel: {install_hint('openspiel')}") from None

ISMCTS_SIMULATIONS = 100  # the ismcts plugin's simulations per decision


def load_game(rules: RuleSet | str = "standard", banker: int = -1) -> TienGowGame:
    """``python_tiengow`` under ``rules`` (any spec ``RuleSet.from_spec`` takes), banker by the dice
    unless given."""
    rules = RuleSet.from_spec(rules)
    named = PRESETS.get(rules.name) == rules  # a preset keeps the game's name short (and its string parseable)
    text = rules.name if named else json.dumps(rules.switches(), sort_keys=True)
    return pyspiel.load_game(GAME_NAME, {"rules": text, "banker": banker})


def _check_game(game: object) -> TienGowGame:
    if not isinstance(game, TienGowGame):
        raise ValueError(
            f"expected a {GAME_NAME} game (pyspiel.load_game({GAME_NAME!r}, ...) after import "
            f"tiengow_env.openspiel), got {str(game)[:60]!r}"
        )
    return game


# ============================================================================ ours in OpenSpiel
class AgentBot(pyspiel.Bot):
    """One of our agents as a ``pyspiel.Bot`` for one seat of a ``python_tiengow`` game."""

    def __init__(self, agent: Agent, player: int, seed: int = 0):
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self.player = player
        self._seeds = np.random.SeedSequence([seed, player])
        self.restart()

    def restart(self) -> None:
        """A new hand: the agent is reset with the next seed of its own sequence."""
        self.agent.reset(int(self._seeds.spawn(1)[0].generate_state(1)[0]))

    def restart_at(self, state: TienGowState) -> None:
        self.restart()

    def inform_action(self, state: TienGowState, player_id: int, action: int) -> None:
        """Our agents read the game at each decision: nothing to track between them."""

    def step(self, state: TienGowState) -> int:
        game = state.tiengow_game
        if game is None or game.to_act != self.player:
            raise ValueError(
                f"{self.agent.name} plays seat {self.player}, but this state is at "
                f"{'the deal' if game is None else f'seat {game.to_act}'}"
            )
        observation, mask = game.observe()
        return int(self.agent.act(observation, mask, game=game.clone() if self.agent.uses_game else None))


def bot(spec: str, game: TienGowGame, player: int, seed: int = 0) -> AgentBot:
    """A ``pyspiel.Bot`` playing the agent ``spec`` for seat ``player`` of a ``python_tiengow`` game."""
    game = _check_game(game)
    players = game.num_players()
    if not isinstance(player, int) or not 0 <= player < players:
        raise ValueError(f"player must be a seat 0..{players - 1}, got {player!r}")
    return AgentBot(make_agent(spec, game.setup.rules, seed), player, seed)


# ============================================================================ tabular policies
def information_states(game: TienGowGame) -> dict[str, TienGowState]:
    """One state per information set of the whole game tree, keyed by its history string (what
    ``TabularPolicy(game, states=...)`` takes): the walk keeps one state per information set,
    not the whole tree. Only for small trees (``micro``)."""
    game = _check_game(game)
    if game.setup.deals is None:
        raise ValueError(f"rules {game.setup.rules.name!r} deal tile by tile: the tree is far too large to walk")
    found: dict[str, TienGowState] = {}
    seen: set[str] = set()

    def walk(state: TienGowState) -> None:
        if state.is_terminal():
            return
        if state.is_chance_node():
            for outcome, _ in state.chance_outcomes():
                walk(state.child(outcome))
            return
        key = state.information_state_string()
        if key not in seen:
            seen.add(key)
            found[state.history_str()] = state
        for action in state.legal_actions():
            walk(state.child(action))

    walk(game.new_initial_state())
    return found


def _exact_play(loaded: dict, game: TienGowGame) -> object:
    """The ``TabularPlay`` of a loaded tabular policy file, once ``game`` is its exact tree's game."""
    from .cfr import TabularPlay, tabular_policy_for
    from .exact_tree import build_tree

    path = loaded["path"]
    if loaded["kind"] != "tabular":
        raise ValueError(
            f"{path} is an abstract (full-game) policy; policy_from_cfr needs a tabular policy of an "
            "exact small tree (tiengow train cfr --config configs/cfr_micro.yaml)"
        )
    rules = RuleSet.from_spec(loaded["meta"]["rules"])
    setup = game.setup
    if rules.switches() != setup.rules.switches() or setup.banker != loaded["banker"]:
        shown = "the dice" if setup.banker is None else f"seat {setup.banker}"
        raise ValueError(
            f"{path} was solved for rules {loaded['meta'].get('rules_name', rules.name)!r} with banker "
            f"seat {loaded['banker']}, not rules {setup.rules.name!r} with banker {shown}; load the game "
            f"as pyspiel.load_game({GAME_NAME!r}, {{'rules': ..., 'banker': {loaded['banker']}}})"
        )
    tree = build_tree(rules, loaded["banker"], views=True)
    return TabularPlay(tree, tabular_policy_for(tree, loaded), path), tree


def _matched_rows(policy: os_policy.TabularPolicy, play: object) -> list[tuple[int, int, np.ndarray]]:
    """(row of ``policy``, first slot, action of each slot) of each information set: the
    OpenSpiel row and the exact tree's set that its seat cannot tell apart (``view_hash``)."""
    from . import _cfr_play_kernels as PK

    view = np.zeros(PK.VIEW_LEN, dtype=np.int64)
    rows = []
    for row, state in enumerate(policy.states):
        core = state.tiengow_game
        info = play.index.get(int(PK.view_hash(core.state, play.face_up, core.combos.rules_array, view)))
        offset, size = (play.info_offset[info], play.info_size[info]) if info is not None else (0, 0)
        actions = play.slot_action[offset : offset + size]
        if info is None or sorted(actions.tolist()) != sorted(state.legal_actions()):
            raise RuntimeError(
                f"information set {state.information_state_string()!r} has no set of the exact tree "
                "with the same legal actions"
            )  # the two trees disagree: a bug, never a user error
        rows.append((row, int(offset), actions))
    return rows


def policy_from_cfr(path: str, game: TienGowGame) -> os_policy.TabularPolicy:
    """An OpenSpiel ``TabularPolicy`` of the tabular CFR policy file at ``path`` (``agents/cfr.py``)
    on ``game``, which must be ``python_tiengow`` with the file's rules and banker."""
    from .cfr import load_policy, tabular_policy_for

    game = _check_game(game)
    loaded = load_policy(path)
    play, tree = _exact_play(loaded, game)
    slots = tabular_policy_for(tree, loaded)
    policy = os_policy.TabularPolicy(game, states=information_states(game))
    for row, offset, actions in _matched_rows(policy, play):
        policy.action_probability_array[row] = 0.0
        policy.action_probability_array[row, actions] = slots[offset : offset + len(actions)]
    return policy


def slots_from_policy(policy: os_policy.TabularPolicy, play: object) -> np.ndarray:
    """The inverse of ``policy_from_cfr``: an OpenSpiel ``TabularPolicy`` of the exact tree's game
    as one probability per slot of ``play`` (a ``TabularPlay``), for our exact NashConv."""
    slots = np.zeros(len(play.slot_action))
    for row, offset, actions in _matched_rows(policy, play):
        slots[offset : offset + len(actions)] = policy.action_probability_array[row, actions]
    return slots


# ============================================================================ theirs in ours
class SpielAgent(Agent):
    """An OpenSpiel bot or policy as one of our agents. It keeps a ``python_tiengow`` state in
    step with the hand: at each decision it rebuilds the state from what the acting seat knows
    (``resample_from_infostate`` of the game it is given), so that it never sees hidden tiles."""

    uses_game = True

    def __init__(
        self,
        rules: RuleSet,
        seed: int,
        choose: Callable[[TienGowState, np.random.Generator], int],
        game: TienGowGame,
        name: str,
    ):
        super().__init__(rules, seed)
        self.game = game
        self.choose = choose
        self.name = name

    @classmethod
    def from_bot(
        cls,
        make_bot: Callable[[TienGowGame, int, int], pyspiel.Bot],
        rules: RuleSet | str,
        seed: int = 0,
        name: str = "openspiel bot",
    ) -> SpielAgent:
        """``make_bot(game, player, seed)`` builds the OpenSpiel bot of each seat, once."""
        rules = RuleSet.from_spec(rules)
        game = load_game(rules)
        bots: dict[int, pyspiel.Bot] = {}

        def choose(state: TienGowState, rng: np.random.Generator) -> int:
            player = state.current_player()
            if player not in bots:
                bots[player] = make_bot(game, player, int(rng.integers(2**31)))
            return int(bots[player].step(state))  # a fresh resampled state each decision: no restart_at

        return cls(rules, seed, choose, game, name)

    @classmethod
    def from_policy(
        cls,
        policy: os_policy.Policy,
        rules: RuleSet | str,
        seed: int = 0,
        name: str = "openspiel policy",
        banker: int = -1,
    ) -> SpielAgent:
        """Samples ``policy.action_probabilities(state)`` at each decision."""
        rules = RuleSet.from_spec(rules)
        game = load_game(rules, banker) if getattr(policy, "game", None) is None else _check_game(policy.game)

        def choose(state: TienGowState, rng: np.random.Generator) -> int:
            probabilities = policy.action_probabilities(state)
            actions = list(probabilities)
            weights = np.array([probabilities[a] for a in actions], dtype=np.float64)
            return int(actions[rng.choice(len(actions), p=weights / weights.sum())])

        return cls(rules, seed, choose, game, name)

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        if game is None:
            raise ValueError(f"{self.name} plays an OpenSpiel state built from the game: call act(..., game=game)")
        return int(self.choose(self.state_of(game), self.rng))

    def state_of(self, game: Game) -> TienGowState:
        """A ``python_tiengow`` state that the acting seat of ``game`` cannot tell from the hand:
        the hand as played, then its hidden tiles drawn again from what the seat knows."""
        seat = game.to_act
        return self.game.state_of(game).resample_from_infostate(seat, lambda: float(self.rng.random()))


# ============================================================================ plugin factories
def ismcts(rules: RuleSet, seed: int) -> SpielAgent:
    """OpenSpiel's Python IS-MCTS bot (random rollouts), resampling through resample_from_infostate."""
    from open_spiel.python.algorithms import ismcts as os_ismcts
    from open_spiel.python.algorithms import mcts

    def make_bot(game: TienGowGame, player: int, bot_seed: int) -> pyspiel.Bot:
        rng = np.random.RandomState(bot_seed)
        return os_ismcts.ISMCTSBot(
            game,
            mcts.RandomRolloutEvaluator(1, rng),
            uct_c=2.0 * game.max_utility() / 10,
            max_simulations=ISMCTS_SIMULATIONS,
            random_state=rng,
        )

    return SpielAgent.from_bot(make_bot, rules, seed, name="openspiel ismcts")


def uniform_random(rules: RuleSet, seed: int) -> SpielAgent:
    """OpenSpiel's uniform random bot (pyspiel.make_uniform_random_bot)."""
    return SpielAgent.from_bot(
        lambda game, player, s: pyspiel.make_uniform_random_bot(player, s), rules, seed, name="openspiel uniform random"
    )


def cfr_micro(rules: RuleSet, seed: int) -> SpielAgent:
    """The shipped micro CFR+ policy as an OpenSpiel TabularPolicy (policy_from_cfr), under micro, banker 0."""
    from .cfr import DEFAULT_POLICY

    path = os.path.join(os.path.dirname(DEFAULT_POLICY), "cfr_micro.npz")
    policy = policy_from_cfr(path, load_game("micro", 0))
    return SpielAgent.from_policy(policy, rules, seed, name="openspiel cfr_micro")


__all__ = [
    "AgentBot",
    "bot",
    "load_game",
    "information_states",
    "policy_from_cfr",
    "SpielAgent",
    "ismcts",
    "uniform_random",
    "cfr_micro",
    "ISMCTS_SIMULATIONS",
    "slots_from_policy",
]
