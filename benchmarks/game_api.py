"""The Python ``Game`` API beside OpenSpiel's Python API, measured alike and in alternation.

Both loops play whole hands on one core, drawing every decision with ``random.Random.choice``
from ``legal_actions()`` and applying it (``Game.step``, ``State.apply_action``). A hand starts
from a fresh random deal, each library its own way: ``Game(seed=...)``, or OpenSpiel's chance
nodes sampled by their ``chance_outcomes()`` with ``random.Random.choices``. Two rates come from
the same hands:

* ``..._steps_per_s``: decisions a second, the deal's time included (what a user who plays
  hands sees);
* ``..._decision_steps_per_s``: decisions a second over the time spent in the decision loops
  alone (``legal_actions``, the draw, the step and the end test), the deal left out.

Clones a second copy one of 64 positions taken from random hands at every stage (``Game.clone``,
``State.clone``). When OpenSpiel is measured too, the two libraries take turns, ``seconds`` each,
``repeats`` times, and each figure is the median of its turns: a change of load on a shared
machine then falls on both.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from tiengow_env.game import Game

OH_HELL = ("oh_hell", {"players": 4, "num_tricks_fixed": 8})
HEARTS = ("hearts", {})
POSITIONS = 64

Turn = Callable[[], tuple[int, int, float]]  # one hand: (hands, decisions, seconds in the decision loop)


def game_api_hand(seed: int = 0) -> Turn:
    """One random hand of the ``Game`` API per call."""
    rng = random.Random(seed)
    deals = iter(range(seed * 10**9, 2**63))

    def hand() -> tuple[int, int, float]:
        game = Game(seed=next(deals))
        start, steps = time.perf_counter(), 0
        while not game.is_over:
            game.step(rng.choice(game.legal_actions()))
            steps += 1
        return 1, steps, time.perf_counter() - start

    return hand


def openspiel_hand(name: str, params: dict, seed: int = 0) -> Turn:
    """One random game of OpenSpiel's ``name`` per call, chance nodes sampled as OpenSpiel's own
    examples do (by their outcome probabilities)."""
    import pyspiel

    game = pyspiel.load_game(name, params)
    rng = random.Random(seed)

    def hand() -> tuple[int, int, float]:
        state = game.new_initial_state()
        steps, spent = 0, 0.0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
                continue
            start = time.perf_counter()  # the decisions up to the next chance node (oh_hell: all of them)
            while not state.is_terminal() and not state.is_chance_node():
                state.apply_action(rng.choice(state.legal_actions()))
                steps += 1
            spent += time.perf_counter() - start
        return 1, steps, spent

    return hand


def game_api_positions(count: int = POSITIONS, seed: int = 0) -> list[Game]:
    """``count`` games at decisions of random hands, every stage of the hand."""
    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        game = Game(seed=rng.randrange(2**31))
        while not game.is_over and len(out) < count:
            if rng.random() < 0.25:
                out.append(game.clone())
            game.step(rng.choice(game.legal_actions()))
    return out


def openspiel_positions(name: str, params: dict, count: int = POSITIONS, seed: int = 0) -> list:
    """``count`` OpenSpiel states at decisions of random games (after the deal)."""
    import pyspiel

    game = pyspiel.load_game(name, params)
    rng = random.Random(seed)
    out: list = []
    while len(out) < count:
        state = game.new_initial_state()
        while not state.is_terminal() and len(out) < count:
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
                continue
            if rng.random() < 0.25:
                out.append(state.clone())
            state.apply_action(rng.choice(state.legal_actions()))
    return out


def clones(positions: list) -> Turn:
    """Clones of the positions, all of them per call (the clone method of a Game or a State)."""

    def run() -> tuple[int, int, float]:
        start = time.perf_counter()
        for position in positions:
            position.clone()
        return 0, len(positions), time.perf_counter() - start

    return run


def take_turns(turns: dict[str, Turn], seconds: float, repeats: int) -> dict[str, dict[str, float]]:
    """Per name: median ``hands_per_s``, ``steps_per_s`` and ``decision_steps_per_s`` over
    ``repeats`` turns of ``seconds`` each, the names taking turns (after one warm-up turn each)."""
    rates: dict[str, dict[str, list[float]]] = {
        name: {"hands_per_s": [], "steps_per_s": [], "decision_steps_per_s": []} for name in turns
    }
    for repeat in range(repeats + 1):
        for name, turn in turns.items():
            hands = steps = 0
            spent = 0.0
            start = time.perf_counter()
            while (elapsed := time.perf_counter() - start) < (seconds if repeat else seconds / 4):
                h, s, t = turn()
                hands, steps, spent = hands + h, steps + s, spent + t
            if repeat:  # the first turn warms up
                rates[name]["hands_per_s"].append(hands / elapsed)
                rates[name]["steps_per_s"].append(steps / elapsed)
                rates[name]["decision_steps_per_s"].append(steps / spent)
    return {name: {key: statistics.median(values) for key, values in by.items()} for name, by in rates.items()}


def measure(
    seconds: float, repeats: int, with_peers: bool
) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """(our figures, OpenSpiel's figures, OpenSpiel's figures skipped with the reason)."""
    ours: dict[str, float] = {}
    theirs: dict[str, float] = {}
    skipped: dict[str, str] = {}
    loops: dict[str, Turn] = {"game_api": game_api_hand()}
    copies: dict[str, Turn] = {"game_api": clones(game_api_positions())}
    if with_peers:
        try:
            for game, params in (OH_HELL, HEARTS):
                loops[f"openspiel_{game}_python"] = openspiel_hand(game, params)
            copies["openspiel_oh_hell_python"] = clones(openspiel_positions(*OH_HELL))
        except ImportError:
            from tiengow.agents.infra import install_hint

            for game, _ in (OH_HELL, HEARTS):
                for kind in ("games", "steps", "decision_steps"):
                    skipped[f"openspiel_{game}_python_{kind}_per_s"] = (
                        f"open_spiel is not installed ({install_hint('peers')})"
                    )
            skipped["openspiel_oh_hell_python_clone_per_s"] = skipped["openspiel_oh_hell_python_steps_per_s"]
            loops = {"game_api": loops["game_api"]}
            copies = {"game_api": copies["game_api"]}
    for name, rates in take_turns(loops, seconds, repeats).items():
        out = ours if name == "game_api" else theirs
        out[f"{name}_{'hands' if name == 'game_api' else 'games'}_per_s"] = rates["hands_per_s"]
        out[f"{name}_steps_per_s"] = rates["steps_per_s"]
        out[f"{name}_decision_steps_per_s"] = rates["decision_steps_per_s"]
    for name, rates in take_turns(copies, seconds, repeats).items():
        (ours if name == "game_api" else theirs)[f"{name}_clone_per_s"] = rates["decision_steps_per_s"]
    return ours, theirs, skipped
