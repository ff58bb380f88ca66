"""How noisy is a search bot's choice? Each bot searches every decision twice, with two seeds.

``python -m tiengow.benchmarks.stability [--bots champion,search] [--hands 25] [--seed 900000]
[--driver search] [--json]`` plays ``--hands`` hands of ``--driver`` against itself (game seeds
``--seed`` on). At each decision with more than one legal action, every bot searches the
position twice with different seeds (the bots never play; the driver does). It prints, per bot,
the share of decisions at which both searches chose the same action, and for every pair of bots
the share at which their first searches agree.

A bot that agrees with itself nearly always gains nothing from more samples: what it still gets
wrong comes from how it values positions, not from sampling noise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys

import numpy as np

from tiengow.agents.base import make_agent
from tiengow.agents.search import SearchAgent
from tiengow.options import INT64_MAX, int_option, list_option, run_for_people
from tiengow_env.game import Game


def stability(bots: list[str], hands: int, seed: int, driver: str = "search") -> dict:
    """{"decisions": n, "self": {bot: share}, "pairs": {"a vs b": share}} over ``hands`` hands."""
    if not bots:
        raise ValueError("stability: give at least one search bot, such as --bots champion,search")
    if len(set(bots)) < len(bots):
        raise ValueError(f"stability: each bot once (a repeat would be merged); got {bots}")
    if not 0 <= seed <= INT64_MAX - hands:
        raise ValueError(f"stability: the seed is a game seed, an integer from 0 to 2^63 - 1 - hands; got {seed}")
    agents = [make_agent(spec, "standard", seed) for spec in bots]
    for spec, agent in zip(bots, agents):
        if not isinstance(agent, SearchAgent):
            raise ValueError(
                f"stability: {spec!r} is not a search bot; give search bots such as "
                f"search, pimc:SAMPLES, ismcts or champion"
            )
    player = make_agent(driver, "standard", seed + 1)
    rng = np.random.default_rng(seed)
    decisions = 0
    same = np.zeros(len(bots))
    agree = np.zeros((len(bots), len(bots)))
    for h in range(hands):
        game = Game(seed=seed + h)
        player.reset(seed + h)
        while not game.is_over:
            observation, mask = game.observe()
            if mask.sum() > 1:
                first, second = [], []
                for agent in agents:
                    for picks in (first, second):
                        actions, scores, _ = agent.search(game, int(rng.integers(2**63)))
                        picks.append(int(actions[np.argmax(scores)]))
                decisions += 1
                same += np.array(first) == np.array(second)
                agree += np.equal.outer(first, first)
            game.step(player.act(observation, mask, game=game))
    if decisions == 0:
        raise ValueError("stability: these hands had no decision with a choice; play more hands")
    return {
        "decisions": decisions,
        "hands": hands,
        "seed": seed,
        "driver": driver,
        "self": {spec: float(same[i] / decisions) for i, spec in enumerate(bots)},
        "pairs": {
            f"{bots[i]} vs {bots[j]}": float(agree[i, j] / decisions)
            for i, j in itertools.combinations(range(len(bots)), 2)
        },
    }


def main(argv: list[str] | None = None) -> int:
    prog = "python -m tiengow.benchmarks.stability"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument(
        "--bots",
        type=list_option(example="champion,search"),
        default=["champion", "search"],
        help="comma-separated search bot specs, each once (default champion,search)",
    )
    parser.add_argument("--hands", type=int_option(1), default=25, help="hands (default 25)")
    parser.add_argument(
        "--seed", type=int_option(0), default=900000, help="game seed of the first hand (default 900000)"
    )
    parser.add_argument("--driver", default="search", help="the bot that plays the hands (default search)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    return run_for_people(prog, lambda: report(args))


def report(args: argparse.Namespace) -> None:
    """Measure and print (``main``'s body)."""
    result = stability(args.bots, args.hands, args.seed, args.driver)
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['decisions']} decisions of {args.hands} hands of {args.driver} against itself "
        f"(game seeds {args.seed} on)"
    )
    for spec, share in result["self"].items():
        print(f"  {spec}: the same action in both searches at {share:.1%}")
    for pair, share in result["pairs"].items():
        print(f"  {pair}: the same action at {share:.1%}")


if __name__ == "__main__":
    sys.exit(main())
