"""How noisy is a search bot's choice? Each bot searches every decision ``--copies`` times
(default twice), each time with another seed.

``python -m tiengow.benchmarks.stability [--bots champion,search] [--hands 25] [--seed 900000]
[--driver search] [--copies 2] [--json] [--save PATH]`` plays ``--hands`` hands of ``--driver``
against itself (game seeds ``--seed`` on). At each decision with more than one legal action,
every bot searches the position ``--copies`` times with different seeds (the bots never play;
the driver does). It prints, per bot, the share of decisions at which two of its searches chose
the same action (``self``: over every pair of copies), and for every pair of bots the share at
which their first searches agree.

With three copies or more it also bounds the **fidelity** any clone of the bot can reach
(``training/clone.py``): a clone plays one action per position, so its top-1 agreement with the
bot is at most the bot's modal share, the mean over positions of the largest probability of one
action. ``modal`` estimates it from above (the largest share of one action among the copies;
biased up with few copies), ``modal_held_out`` from below (the action most copies but one chose,
ties to the lowest id, against that one copy, averaged over which copy is left out).

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
from tiengow.agents.infra import atomic_write
from tiengow.agents.search import SearchAgent
from tiengow.options import INT64_MAX, int_option, list_option, run_for_people
from tiengow.training.runs import check_output_path
from tiengow_env.game import Game


def stability(bots: list[str], hands: int, seed: int, driver: str = "search", copies: int = 2) -> dict:
    """{"decisions": n, "self": {bot: share}, "pairs": {"a vs b": share}} over ``hands`` hands, and
    with ``copies`` >= 3, {"modal": {bot: share}, "modal_held_out": {bot: share}} (module doc)."""
    if copies < 2:
        raise ValueError(f"stability: at least 2 copies of each bot are compared; got {copies}")
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
    same, modal, held_out = np.zeros(len(bots)), np.zeros(len(bots)), np.zeros(len(bots))
    agree = np.zeros((len(bots), len(bots)))
    for h in range(hands):
        game = Game(seed=seed + h)
        player.reset(seed + h)
        while not game.is_over:
            observation, mask = game.observe()
            if mask.sum() > 1:
                picks = np.empty((len(agents), copies), dtype=np.int64)
                for i, agent in enumerate(agents):
                    for k in range(copies):
                        actions, scores, _ = agent.search(game, int(rng.integers(2**63)))
                        picks[i, k] = actions[np.argmax(scores)]
                decisions += 1
                for i in range(len(agents)):
                    counts = np.bincount(picks[i], minlength=len(mask))
                    same[i] += ((counts * (counts - 1)).sum()) / (copies * (copies - 1))
                    modal[i] += counts.max() / copies
                    held_out[i] += np.mean([_mode_without(counts, a) == a for a in picks[i]])
                agree += np.equal.outer(picks[:, 0], picks[:, 0])
            game.step(player.act(observation, mask, game=game))
    if decisions == 0:
        raise ValueError("stability: these hands had no decision with a choice; play more hands")
    result = {
        "decisions": decisions,
        "hands": hands,
        "seed": seed,
        "driver": driver,
        "copies": copies,
        "self": {spec: float(same[i] / decisions) for i, spec in enumerate(bots)},
        "pairs": {
            f"{bots[i]} vs {bots[j]}": float(agree[i, j] / decisions)
            for i, j in itertools.combinations(range(len(bots)), 2)
        },
    }
    if copies >= 3:
        result["modal"] = {spec: float(modal[i] / decisions) for i, spec in enumerate(bots)}
        result["modal_held_out"] = {spec: float(held_out[i] / decisions) for i, spec in enumerate(bots)}
    return result


def _mode_without(counts: np.ndarray, left_out: int) -> int:
    """The action most copies chose, one copy of ``left_out`` taken away (ties: the lowest id)."""
    rest = counts.copy()
    rest[left_out] -= 1
    return int(np.argmax(rest))


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
    parser.add_argument(
        "--copies", type=int_option(2), default=2, help="searches of each decision by each bot (default 2)"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save", metavar="PATH", help="also write the result, with its command, to PATH (JSON)")
    args = parser.parse_args(argv)
    return run_for_people(prog, lambda: report(args))


def report(args: argparse.Namespace) -> None:
    """Measure and print (``main``'s body)."""
    if args.save:
        check_output_path(args.save, "--save")
    result = stability(args.bots, args.hands, args.seed, args.driver, args.copies)
    if args.save:
        command = (
            f"python -m tiengow.benchmarks.stability --bots {','.join(args.bots)} --hands {args.hands} "
            f"--seed {args.seed} --driver {args.driver} --copies {args.copies} --save {args.save}"
        )
        text = json.dumps({**result, "command": command}, indent=1) + "\n"
        atomic_write(args.save, lambda f: f.write(text.encode()))
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['decisions']} decisions of {args.hands} hands of {args.driver} against itself "
        f"(game seeds {args.seed} on)"
    )
    for spec, share in result["self"].items():
        print(f"  {spec}: the same action in two searches at {share:.1%}")
        if "modal" in result:
            print(
                f"    its modal share (the most any clone can agree with it) between "
                f"{result['modal_held_out'][spec]:.1%} and {result['modal'][spec]:.1%}"
            )
    for pair, share in result["pairs"].items():
        print(f"  {pair}: the same action at {share:.1%}")


if __name__ == "__main__":
    sys.exit(main())
