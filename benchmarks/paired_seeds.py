"""How much paired seeds narrow a paired comparison: ``compare`` of two bots that share code
against one opponent, the correlation of their per-deal scores and the variance of the
difference. Run it on a checkout before the change (``--label before``), after it (``--label
after``), and after it with the baseline's own randomness seeded apart (``--label unpaired``:
the same deals, independent bots). The deals a paired test needs scale with that variance.

    python -m tiengow.benchmarks.paired_seeds --label after --out benchmarks/results/experiments/paired_seeds.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys

import numpy as np

from tiengow.agents.arena import compare
from tiengow.agents.infra import atomic_write

PAIRS = (("pimc:128", "pimc:64", "pimc:16", 150), ("search:0.2", "search:0.1", "pimc:16", 150))


def unpair(baseline: str) -> None:
    """Seed every hand the baseline plays apart from the candidate's (this process only)."""
    from tiengow.agents import arena

    play_hand = arena.play_hand

    def apart(game, agents, seed, clock=None):
        return play_hand(game, agents, seed + 7919 * any(agent.name == baseline for agent in agents), clock)

    arena.play_hand = apart


def measure(seed: int, workers: int, unpaired: bool = False) -> list[dict]:
    """One row per pair: the correlation, the difference's variance and the mean difference."""
    rows = []
    for candidate, baseline, opponent, deals in PAIRS:
        if unpaired:
            unpair(baseline)
        result = compare(candidate, baseline, opponent, deals, seed, "standard", workers)
        sd = (result.ci95[1] - result.ci95[0]) / 2 / 1.96 * np.sqrt(deals)
        rows.append(
            {
                "candidate": candidate,
                "baseline": baseline,
                "opponent": opponent,
                "deals": deals,
                "correlation": result.correlation,
                "difference": result.difference,
                "ci95": result.ci95,
                "variance_of_difference": float(sd**2),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def deals_saved(runs: dict) -> dict:
    """Per pair, the variance of the difference of each other run over the run ``after``: the
    factor of deals a paired test of the same power saves."""
    if "after" not in runs:
        return {}
    saved = {}
    for i, pair in enumerate(runs["after"]["pairs"]):
        name = f"{pair['candidate']} minus {pair['baseline']} vs {pair['opponent']}"
        saved[name] = {
            f"{label}_over_after": run["pairs"][i]["variance_of_difference"] / pair["variance_of_difference"]
            for label, run in runs.items()
            if label != "after"
        }
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, choices=("before", "after", "unpaired"))
    parser.add_argument("--seed", type=int, default=45100)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", required=True, help="the experiment record (JSON) to add this label to")
    args = parser.parse_args()
    record = (
        json.load(open(args.out))
        if os.path.exists(args.out)
        else {"kind": "experiment", "name": "paired_seeds", "runs": {}}
    )
    record["runs"][args.label] = {
        "command": "python -m tiengow.benchmarks.paired_seeds " + shlex.join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seed": args.seed,
        "pairs": measure(args.seed, args.workers, args.label == "unpaired"),
    }
    record["deals_saved"] = deals_saved(record["runs"])
    atomic_write(args.out, lambda f: f.write((json.dumps(record, indent=1) + "\n").encode()))


if __name__ == "__main__":
    main()
