"""Search figures for ``tiengow bench``: PIMC decisions per second at 32 and 512 samples,
ISMCTS iterations per second, the ``search`` and ``champion`` bots' milliseconds per decision
(on decisions with several legal actions: a bot with one legal action does not search, so its
average over a whole hand is lower), the rollouts a second inside ``search`` (as its searches
count them: one per sampled world and action played in it), and worlds per second of the exact
endgame beside the rollout it replaces. Positions are decisions of expert play with several legal actions, every stage
of the hand; the endgame figures use those with at most ENDGAME_TILES tiles in the hands."""

from __future__ import annotations

import numpy as np

from tiengow_env import search as S
from tiengow_env.game import Game

from .peers import _rate

ENDGAME_TILES = 8


def decision_positions(count: int, seed: int = 0, max_tiles: int | None = None) -> list[Game]:
    """``count`` games at decisions with several legal actions (expert play, fixed seeds)."""
    from tiengow.agents.base import make_agent

    expert = make_agent("expert")
    rng = np.random.default_rng(seed)
    out: list[Game] = []
    while len(out) < count:
        game = Game(seed=int(rng.integers(2**31)))
        while not game.is_over and len(out) < count:
            observation, mask = game.observe()
            tiles = sum(len(game.hand(s)) for s in range(game.players))
            if mask.sum() > 1 and (max_tiles is None or tiles <= max_tiles) and rng.random() < 0.3:
                out.append(game.clone())
            game.step(expert.act(observation, mask))
    return out


def search_figures(seconds: float, repeats: int) -> dict[str, float]:
    """The search figures (one core each)."""
    games = decision_positions(40)
    ends = decision_positions(40, seed=1, max_tiles=ENDGAME_TILES)
    workspace = S.Workspace(games[0].rules)
    at = [0]

    def next_game(pool: list[Game]) -> Game:
        at[0] += 1
        return pool[at[0] % len(pool)]

    def pimc(samples: int) -> float:
        return _rate(
            lambda: (S.pimc_values(next_game(games), samples, seed=at[0], workspace=workspace), 1)[1], seconds, repeats
        )

    def ismcts(iterations: int = 500) -> float:
        return _rate(
            lambda: (S.ismcts_values(next_game(games), iterations, seed=at[0], workspace=workspace), iterations)[1],
            seconds,
            repeats,
        )

    def worlds(solve: bool) -> float:
        def run() -> int:  # a world per legal action, as pimc with one sample: solved exactly, or rolled out
            game = next_game(ends)
            if not solve:
                S.pimc_values(game, 1, seed=at[0], workspace=workspace)
                return len(game.legal_actions())
            world = game.clone()
            world.state[:] = S.sample_worlds(game, 1, seed=at[0], workspace=workspace)[0]
            for action in game.legal_actions():
                child = world.clone()
                child.step(action)
                S.endgame_values(child, workspace)
            return len(game.legal_actions())

        return _rate(run, seconds, repeats)

    def rollouts() -> float:
        from tiengow.agents.base import make_agent

        bot = make_agent("search")

        def run() -> int:
            before = bot.workspace.rollouts
            bot.search(next_game(games), at[0])
            return bot.workspace.rollouts - before

        return _rate(run, seconds, repeats)

    def milliseconds(spec: str) -> float:
        from tiengow.agents.base import make_agent

        bot = make_agent(spec)
        return 1000.0 / _rate(lambda: (bot.search(next_game(games), at[0]), 1)[1], seconds, repeats)

    return {
        "pimc_decisions_per_s_32": pimc(32),
        "pimc_decisions_per_s_512": pimc(512),
        "ismcts_iterations_per_s": ismcts(),
        "search_ms_per_decision": milliseconds("search"),
        "champion_ms_per_decision": milliseconds("champion"),
        "search_rollouts_per_s": rollouts(),
        "endgame_solver_worlds_per_s": worlds(True),
        "rollout_worlds_per_s_same_positions": worlds(False),
    }
