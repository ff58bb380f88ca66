"""A control variate for duplicate matches, in the AIVAT family: the experiment behind
``benchmarks/results/experiments/control_variate.json``.

AIVAT (Burch et al., *AIVAT: A New Variance Reduction Technique for Agent Evaluation in
Imperfect Information Games*, AAAI 2018) subtracts from a player's result, at every chance node
and every decision of a player whose policy is known, the value after the event minus its
expectation. In a duplicate match of Tien Gow the only chance node is the deal, and the
shipped opponents (greedy, expert, ppo, and the search bots' choices given their seeds) are
deterministic, so their correction terms are zero: what is left is the deal's, the value of
each seat's dealt hand (the shipped PPO network's value head) minus its mean over deals,
averaged over the seatings as the duplicate score is. This measures how much of the per-deal
variance that control variate removes (coefficient fitted on one half of the deals and applied
to the other, both ways, so that the fit does not flatter it):

    python -m tiengow.benchmarks.control_variate --out benchmarks/results/experiments/control_variate.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys

import numpy as np

from tiengow.agents import make_agent
from tiengow.agents.arena import _play, deal_seed
from tiengow.agents.infra import atomic_write
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

MATCHES = (("ppo", "expert", 400), ("pimc:64", "expert", 200), ("expert", "ppo", 400))


def deal_values(value_net, seed: int, deals: range, rules: RuleSet) -> np.ndarray:
    """Per deal, the mean over the seats of the value of each seat's first observation."""
    out = np.empty(len(deals))
    for i, d in enumerate(deals):
        game = Game(seed=deal_seed(seed, d), rules=rules)
        out[i] = value_net.values(np.stack([game.observe(s)[0] for s in range(rules.players)])).mean()
    return out


def variance_ratio(scores: np.ndarray, control: np.ndarray) -> tuple[float, float]:
    """var(scores) / var(scores - beta control), beta fitted on the other half of the deals;
    and the in-sample correlation."""
    halves = np.array_split(np.arange(len(scores)), 2)
    adjusted = np.empty_like(scores)
    for fit, apply in (halves, halves[::-1]):
        beta = np.cov(scores[fit], control[fit])[0, 1] / control[fit].var(ddof=1)
        adjusted[apply] = scores[apply] - beta * control[apply]
    return float(scores.var(ddof=1) / adjusted.var(ddof=1)), float(np.corrcoef(scores, control)[0, 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=45200)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rules = RuleSet.from_spec("standard")
    value_net = make_agent("ppo", rules)
    mean_value = deal_values(value_net, args.seed + 1, range(4000), rules).mean()  # E over deals, apart
    rows = []
    for candidate, opponent, deals in MATCHES:
        played = _play((candidate,), opponent, deals, args.seed, rules, 1, None, None)[0]
        scores = played[:, :, 0].mean(axis=1)
        control = deal_values(value_net, args.seed, range(deals), rules) - mean_value
        ratio, correlation = variance_ratio(scores, control)
        rows.append(
            {
                "candidate": candidate,
                "opponent": opponent,
                "deals": deals,
                "variance_ratio": ratio,
                "correlation": correlation,
                "per_deal_sd": float(scores.std(ddof=1)),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    record = {
        "kind": "experiment",
        "name": "control_variate",
        "command": "python -m tiengow.benchmarks.control_variate " + shlex.join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "method": "AIVAT's deal term: mean over seats of the shipped ppo value head at each seat's first "
        "observation, minus its mean over 4,000 other deals; coefficient cross-fitted on halves",
        "threshold": 1.5,
        "kept": all(row["variance_ratio"] >= 1.5 for row in rows),
        "matches": rows,
    }
    atomic_write(args.out, lambda f: f.write((json.dumps(record, indent=1) + "\n").encode()))


if __name__ == "__main__":
    main()
