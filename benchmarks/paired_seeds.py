"""How much paired seeds narrow a paired comparison: ``compare`` of two bots that share code
against one opponent, the correlation of their per-deal scores and the variance of the
difference. Run it once on a checkout before the change and once after (``--label``); the
number of deals a paired test needs scales with that variance.

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

PAIRS = (("pimc:128", "pimc:64", "expert", 300), ("champion", "champion:locate=0", "expert", 120))


def measure(seed: int, workers: int) -> list[dict]:
    """One row per pair: the correlation, the difference's variance and the mean difference."""
    rows = []
    for candidate, baseline, opponent, deals in PAIRS:
        result = compare(candidate, baseline, opponent, deals, seed, "standard", workers)
        sd = (result.ci95[1] - result.ci95[0]) / 2 / 1.96 * np.sqrt(deals)
        rows.append({"candidate": candidate, "baseline": baseline, "opponent": opponent, "deals": deals,
                     "correlation": result.correlation, "difference": result.difference, "ci95": result.ci95,
                     "variance_of_difference": float(sd**2)})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="before or after")
    parser.add_argument("--seed", type=int, default=45100)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", required=True, help="the experiment record (JSON) to add this label to")
    args = parser.parse_args()
    record = json.load(open(args.out)) if os.path.exists(args.out) else {"kind": "experiment",
                                                                          "name": "paired_seeds", "runs": {}}
    record["runs"][args.label] = {"command": "python -m tiengow.benchmarks.paired_seeds " + shlex.join(sys.argv[1:]),
                                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                                  "seed": args.seed, "pairs": measure(args.seed, args.workers)}
    with open(args.out, "w") as f:
        f.write(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
