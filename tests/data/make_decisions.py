"""Re-record ``tests/data/decisions.json``: the actions every shipped bot chooses on seeded hands.

``tests/test_decisions.py`` replays these hands and requires the very same actions, so that a
refactoring of the bots (configs, spec parsing, the search's parts, the kernels' signatures)
is checked to change no decision. Re-record only when a change is *meant* to change decisions
(a new seed mixer, a retrained shipped model, a new rule), and say so in that commit's message:

    python tests/data/make_decisions.py            # rewrites tests/data/decisions.json

Each hand is dealt by ``Game(seed=SEED, rules=RULES)`` and all its seats are played by the bot
under test, one instance per seat, built by ``make_agent(SPEC, RULES, seed=seat)`` and reset
with ``SEED * 4 + seat`` before the hand. Every decision of the hand is recorded, by the action
id. The micro CFR policy is exact for the ``micro`` rules only, so it plays those.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tiengow.agents import make_agent
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

MICRO_POLICY = "agents/policies/cfr_micro.npz"  # relative to the repository root
# (spec, rules, number of hands): at least 40 hands under standard and 10 under hongkong per bot
CASES = [
    (spec, rules, hands)
    for spec in ("random", "greedy", "expert", "pimc", "ismcts", "search", "champion", "ppo", "cfr")
    for rules, hands in (("standard", 40), ("hongkong", 10))
] + [(f"cfr:{MICRO_POLICY}", "micro", 40)]
FIRST_SEED = 1000  # hands use seeds FIRST_SEED, FIRST_SEED + 1, ...
OUT = Path(__file__).resolve().parent / "decisions.json"
ROOT = Path(__file__).resolve().parents[2]


def play(spec: str, rules: str, seed: int) -> list[int]:
    """Every action of the hand dealt by ``seed``, all seats played by ``spec`` (module doc)."""
    ruleset = RuleSet.from_spec(rules)
    resolved = spec.replace(MICRO_POLICY, str(ROOT / MICRO_POLICY))
    game = Game(seed=seed, rules=ruleset)
    agents = [make_agent(resolved, ruleset, seed=seat) for seat in range(ruleset.players)]
    for seat, agent in enumerate(agents):
        agent.reset(seed * 4 + seat)
    actions = []
    while not game.is_over:
        agent = agents[game.to_act]
        observation, mask = game.observe()
        action = agent.act(observation, mask, game=game if agent.uses_game else None)
        actions.append(int(action))
        game.step(action)
    return actions


def main() -> None:
    """Record every case of ``CASES`` into ``OUT``."""
    cases = []
    for spec, rules, hands in CASES:
        start = time.perf_counter()
        seeds = list(range(FIRST_SEED, FIRST_SEED + hands))
        cases.append(
            {"spec": spec, "rules": rules, "hands": [{"seed": s, "actions": play(spec, rules, s)} for s in seeds]}
        )
        decisions = sum(len(h["actions"]) for h in cases[-1]["hands"])
        print(
            f"{spec:>40} {rules:>9}: {hands} hands, {decisions} decisions, {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
    OUT.write_text(
        json.dumps(
            {"about": "tests/data/make_decisions.py records this; tests/test_decisions.py replays it", "cases": cases},
            separators=(",", ":"),
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
