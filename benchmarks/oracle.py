"""What knowing the hidden tiles is worth, and how far a search bot's choices are from it.

Two diagnostics for work on inference (which worlds a search samples):

- ``tiengow eval tiengow.benchmarks.oracle:make --vs search --deals 200`` plays the champion's
  search told the true deal: every world it samples is the real one. It cheats, so it is a
  measuring stick and never a bot. Its edge over the champion's own is what perfect inference
  could be worth to the champion.
- ``python -m tiengow.benchmarks.oracle --bots champion,search --hands 150 --seeds 61001,61002
  [--workers 2] [--json]`` plays ``--hands`` hands of ``search`` against itself for each seed
  (the deals ``tiengow eval`` deals for that seed). At every decision with a choice the oracle
  values each legal action by 2,000 paired rollouts in the true world (the champion's rollouts,
  eps-greedy with epsilon 0.5), and each bot searches the position (it does not play). A bot's
  regret there is the oracle's best value minus the value of the action it chose, in chips. It
  prints each bot's mean regret and, for every pair, the difference decision by decision, with
  95% CIs.

The regret is a value under the rollouts, not the result of play: a bot that departs from the
rollouts' values on purpose (the champion's prior) pays for it here whether or not it pays in
play. It is a cheap screen for a change of the worlds alone, at fixed rollouts and ranking.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys

import numpy as np

from tiengow.agents.arena import deal_seed, mean_and_half_width
from tiengow.agents.base import make_agent
from tiengow.agents.infra import worker_pool
from tiengow.agents.search import ChampionConfig, SearchAgent, make_champion
from tiengow.options import INT64_MAX, MAX_WORKERS, int_option, list_option, run_for_people
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.search import pimc_details

ORACLE_SAMPLES = 2000  # paired rollouts per action in the true world, with the champion's epsilon


def true_world(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """The game's own state as the only world a search may draw, (states, weights)."""
    return game.state[None].copy(), np.ones(1)


class TrueWorlds:
    """A world sampler that reads the hidden tiles: the true deal is the only world."""

    def worlds(self, game: Game, seed: int, workspace: object) -> tuple[np.ndarray, np.ndarray]:
        return true_world(game)


def make(rules: RuleSet, seed: int) -> SearchAgent:
    """The ``MODULE:FACTORY`` plugin factory: ``tiengow eval tiengow.benchmarks.oracle:make``,
    the champion with its sampler replaced by the true deal."""
    agent = make_champion(ChampionConfig(), rules, seed, sampler=TrueWorlds())
    agent.name = "oracle"
    return agent


def regrets(bots: list[str], hands: int, seed: int) -> np.ndarray:
    """(decisions, bots): each bot's regret against the oracle at every decision with a choice
    of ``hands`` hands of ``search`` against itself, deals as ``tiengow eval --seed seed``."""
    players = [make_agent("search", "standard", seed + s) for s in range(4)]
    states = []
    for h in range(hands):
        game = Game(deal_seed(seed, h))
        for s, player in enumerate(players):
            player.reset(seed * 1000 + h * 4 + s)
        while not game.is_over:
            observation, mask = game.observe()
            if game.phase in ("lead", "follow") and mask.sum() > 1:
                states.append(game.clone())
            game.step(players[game.to_act].act(observation, mask, game=game))
    agents = [make_agent(spec, "standard", seed) for spec in bots]
    rows = np.zeros((len(states), len(bots)))
    for i, game in enumerate(states):
        actions, values, _ = pimc_details(
            game,
            ORACLE_SAMPLES,
            seed=seed * 7 + i,
            epsilon=ChampionConfig.epsilon,
            paired=True,
            worlds=true_world(game),
        )
        observation, mask = game.observe()
        for b, agent in enumerate(agents):
            agent.reset(seed * 13 + i)
            chosen = agent.act(observation, mask, game=game.clone())
            rows[i, b] = values.max() - values[list(actions).index(chosen)]
    return rows


def _regrets(args: tuple[list[str], int, int]) -> np.ndarray:
    return regrets(*args)


def measure(bots: list[str], hands: int, seeds: list[int], workers: int = 1) -> dict:
    """{"decisions", "regret": {bot: [mean, half width]}, "pairs": {"a minus b": [mean, half width]}}
    over ``hands`` hands for each seed, one seed per worker at a time."""
    if not bots:
        raise ValueError("oracle: give at least one bot, such as --bots champion,search")
    if hands < 1 or not seeds or min(seeds) < 0 or max(seeds) > INT64_MAX or workers < 1:
        raise ValueError(
            f"oracle: hands and workers are at least 1 and seeds are integers from 0 to 2^63 - 1; got "
            f"hands={hands}, seeds={seeds}, workers={workers}"
        )
    if len(set(bots)) < len(bots) or len(set(seeds)) < len(seeds):
        raise ValueError(
            f"oracle: each bot and each seed once (a repeat would be counted twice); got bots={bots}, seeds={seeds}"
        )
    for spec in bots:  # a bad spec fails here, before any hand is played
        make_agent(spec, "standard", 0)
    tasks = [(bots, hands, seed) for seed in seeds]
    if workers == 1:
        parts = [regrets(*task) for task in tasks]
    else:
        with worker_pool(min(workers, len(tasks)), "the oracle measure") as pool:
            parts = list(pool.map(_regrets, tasks))
    rows = np.concatenate(parts)
    if not len(rows):
        raise ValueError("oracle: these hands had no decision with a choice; play more hands")
    return {
        "decisions": len(rows),
        "hands": hands,
        "seeds": seeds,
        "regret": {spec: list(mean_and_half_width(rows[:, b])) for b, spec in enumerate(bots)},
        "pairs": {
            f"{bots[a]} minus {bots[b]}": list(mean_and_half_width(rows[:, a] - rows[:, b]))
            for a, b in itertools.combinations(range(len(bots)), 2)
        },
    }


def main(argv: list[str] | None = None) -> int:
    prog = "python -m tiengow.benchmarks.oracle"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument(
        "--bots",
        type=list_option(example="champion,search"),
        default=["champion", "search"],
        help="comma-separated agent specs, each once (default champion,search)",
    )
    parser.add_argument("--hands", type=int_option(1), default=25, help="hands per seed (default 25)")
    parser.add_argument(
        "--seeds",
        type=list_option(int_option(0), "61001,61002"),
        default=[61001],
        help="comma-separated game seeds, as tiengow eval's --seed (default 61001)",
    )
    parser.add_argument(
        "--workers", type=int_option(1, MAX_WORKERS), default=1, help="processes, one seed each at a time (default 1)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    return run_for_people(prog, lambda: report(args))


def report(args: argparse.Namespace) -> None:
    """Measure and print (``main``'s body)."""
    result = measure(args.bots, args.hands, args.seeds, args.workers)
    if args.json:
        print(json.dumps(result))
        return
    hands = f"{args.hands} hand{'s' if args.hands != 1 else ''}"
    print(
        f"{result['decisions']} decisions of {hands} per seed of search against itself (seeds "
        f"{', '.join(map(str, args.seeds))}); regret against the oracle, chips a decision, with 95% CIs"
    )
    for spec, (mean, half) in result["regret"].items():
        print(f"  {spec}: {mean:.4f} [{mean - half:.4f}, {mean + half:.4f}]")
    for pair, (mean, half) in result["pairs"].items():
        print(f"  {pair}: {mean:+.4f} [{mean - half:+.4f}, {mean + half:+.4f}]")


if __name__ == "__main__":
    sys.exit(main())
