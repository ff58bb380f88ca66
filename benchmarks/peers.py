"""Peer platforms measured the same way as tiengow: uniformly random legal play, after a warm-up,
median of several timed runs, on one core. Each figure is skipped (None, with the reason) when
its package is missing: install them with the ``peers`` extra (``pip install "tiengow[peers]"``).

* OpenSpiel ``oh_hell`` (4 players, 8 tricks: the closest trick-taking analogue) and ``hearts``:
  whole games with uniform random bots in C++ (``pyspiel.evaluate_bots``, one call per game),
  and a Python loop over ``State.apply_action`` (games/s and steps/s);
* OpenSpiel Python games through the same loop: our adapter ``python_tiengow`` (standard rules,
  the deal tile by tile, every state stepping the compiled core: ``tiengow_env.openspiel``)
  beside OpenSpiel's own Python ``python_block_dominoes``;
* PettingZoo ``leduc_holdem_v4``: the AEC loop, steps/s, through ``env()`` (the standard
  wrappers) and through ``raw_env()``;
* RLCard ``doudizhu``: ``env.run`` with random agents, games/s.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from tiengow.agents.infra import install_hint

from .game_api import HEARTS, OH_HELL

PYTHON_GAMES = (("python_tiengow", {}), ("python_block_dominoes", {}))  # registered on import (below)


def _rate(run: Callable[[], int], seconds: float, repeats: int) -> float:
    """Median over ``repeats`` of (units done by repeated ``run`` calls) / seconds."""
    run()
    rates = []
    for _ in range(repeats):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            done += run()
        rates.append(done / elapsed)
    return statistics.median(rates)


def openspiel_cpp_games_per_s(name: str, params: dict, seconds: float, repeats: int) -> float:
    import pyspiel

    game = pyspiel.load_game(name, params)
    bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(game.num_players())]

    def one_game() -> int:
        pyspiel.evaluate_bots(game.new_initial_state(), bots, random.randrange(2**31))
        return 1

    return _rate(one_game, seconds, repeats)


def openspiel_python_rates(name: str, params: dict, seconds: float, repeats: int) -> tuple[float, float]:
    """(games/s, steps/s) of a Python loop of random legal actions (chance sampled)."""
    import open_spiel.python.games  # noqa: F401  (registers OpenSpiel's Python games)
    import pyspiel

    import tiengow_env.openspiel  # noqa: F401  (registers python_tiengow)

    game = pyspiel.load_game(name, params)
    rng = random.Random(0)
    steps = [0]

    def one_game() -> int:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                steps[0] += 1
        return 1

    games = _rate(one_game, seconds, repeats)
    steps[0] = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        one_game()
    return games, steps[0] / (time.perf_counter() - start)


def leduc_aec_steps_per_s(seconds: float, repeats: int, raw: bool = False) -> float:
    import numpy as np
    from pettingzoo.classic import leduc_holdem_v4

    env = leduc_holdem_v4.raw_env() if raw else leduc_holdem_v4.env()
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def some_steps() -> int:
        n = 0
        for _ in range(1000):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                action = None
            else:
                legal = np.flatnonzero(env.observe(agent)["action_mask"])  # the same draw as ours
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            n += 1
            if not env.agents:
                env.reset()
        return n

    return _rate(some_steps, seconds, repeats)


def rlcard_doudizhu_games_per_s(seconds: float, repeats: int) -> float:
    import rlcard
    from rlcard.agents import RandomAgent

    env = rlcard.make("doudizhu", config={"seed": 0})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])

    def one_game() -> int:
        env.run(is_training=False)
        return 1

    return _rate(one_game, seconds, repeats)


def measure(seconds: float = 2.0, repeats: int = 3) -> tuple[dict[str, float], dict[str, str]]:
    """Peer figures by name, and the reason for each one skipped."""
    figures: dict[str, float] = {}
    skipped: dict[str, str] = {}

    def attempt(names: tuple[str, ...], package: str, fn: Callable[[], float | tuple[float, ...]]) -> None:
        try:
            values = fn()
        except ImportError:
            for name in names:
                skipped[name] = f"{package} is not installed ({install_hint('peers')})"
            return
        values = values if isinstance(values, tuple) else (values,)
        figures.update(zip(names, values))

    for game, params in (OH_HELL, HEARTS):
        attempt(
            (f"openspiel_{game}_cpp_games_per_s",),
            "open_spiel",
            lambda g=game, p=params: openspiel_cpp_games_per_s(g, p, seconds, repeats),
        )
    for game, params in PYTHON_GAMES:
        attempt(
            (f"openspiel_{game}_games_per_s", f"openspiel_{game}_steps_per_s"),
            "open_spiel",
            lambda g=game, p=params: openspiel_python_rates(g, p, seconds, repeats),
        )
    attempt(
        ("pettingzoo_leduc_aec_steps_per_s",),
        "pettingzoo[classic] / rlcard",
        lambda: leduc_aec_steps_per_s(seconds, repeats),
    )
    attempt(
        ("pettingzoo_leduc_raw_steps_per_s",),
        "pettingzoo[classic] / rlcard",
        lambda: leduc_aec_steps_per_s(seconds, repeats, raw=True),
    )
    attempt(("rlcard_doudizhu_games_per_s",), "rlcard", lambda: rlcard_doudizhu_games_per_s(seconds, repeats))
    return figures, skipped
