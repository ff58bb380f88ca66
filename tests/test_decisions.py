"""Every shipped bot chooses the same actions as when ``tests/data/decisions.json`` was recorded.

The record (``tests/data/make_decisions.py`` writes it and says when to re-record) holds every
decision of 40 standard and 10 hongkong hands per bot (40 micro hands for the micro CFR policy),
all seats played by the bot. The default run replays every hand of the fast bots and the first
hands of the search bots (tens of milliseconds a decision); ``-m slow`` replays all of them.
"""

import importlib.util
import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
_spec = importlib.util.spec_from_file_location("make_decisions", DATA / "make_decisions.py")
make_decisions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_decisions)

CASES = json.loads((DATA / "decisions.json").read_text())["cases"]
SEARCH_BOTS = {"pimc", "ismcts", "search", "champion"}
FAST_HANDS = 2  # hands of each search bot's case the default run replays


def _hands(fast: bool) -> list[tuple[str, str, int, list[int]]]:
    rows = []
    for case in CASES:
        hands = case["hands"]
        if case["spec"] in SEARCH_BOTS:
            hands = hands[:FAST_HANDS] if fast else hands[FAST_HANDS:]
        elif not fast:
            hands = []
        rows += [(case["spec"], case["rules"], hand["seed"], hand["actions"]) for hand in hands]
    return rows


def test_record_covers_every_shipped_bot():
    counts = {(case["spec"], case["rules"]): len(case["hands"]) for case in CASES}
    for spec in ("random", "greedy", "expert", "pimc", "ismcts", "search", "champion", "ppo", "cfr"):
        assert counts[spec, "standard"] >= 40 and counts[spec, "hongkong"] >= 10
    assert counts[f"cfr:{make_decisions.MICRO_POLICY}", "micro"] >= 40


def _check(spec: str, rules: str, seed: int, actions: list[int]) -> None:
    played = make_decisions.play(spec, rules, seed)
    first = next((k for k, (a, b) in enumerate(zip(played, actions)) if a != b), min(len(played), len(actions)))
    assert played == actions, f"{spec} under {rules}, hand {seed}: decision {first} differs"


@pytest.mark.parametrize("spec, rules, seed, actions", _hands(fast=True))
def test_same_decisions(spec, rules, seed, actions):
    _check(spec, rules, seed, actions)


@pytest.mark.slow
@pytest.mark.parametrize("spec, rules, seed, actions", _hands(fast=False))
def test_same_decisions_search_bots_all_hands(spec, rules, seed, actions):
    _check(spec, rules, seed, actions)
