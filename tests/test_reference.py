"""Tests of the slow reference engine (tiengow_env/reference.py) against RULES.md.

* every line of the conformance records (tests/data/conformance.jsonl), replayed through ``ref_replay``;
* perft of the RULES.md section 8 deal (depths 5 and 6 are marked slow: run with -m slow);
* RULES.md section 6's four worked checks, as real hands;
* the decision API (decisions / apply), One Red Dot choice, and random full games.
"""

from __future__ import annotations

import random

import pytest
from conftest import conformance_lines

from tiengow_env.reference import (
    DECLARE,
    DECLINE,
    RefGame,
    classify,
    ref_perft,
    ref_replay,
    tile_names,
)
from tiengow_env.rules import PRESETS, RuleSet
from tiengow_env.tiles import parse_type

KEYS = ("columns", "last_trick_winner", "trick_bonus", "settlement", "net", "multipliers")

slow = pytest.mark.slow  # about 30 s together in plain Python; pyproject deselects them by default


def _conformance_lines() -> list:
    return [pytest.param(line, id=f"line{n}-{line.get('tag')}") for n, line in enumerate(conformance_lines(), 1)]


# ------------------------------------------------------------------------ conformance
@pytest.mark.parametrize("line", _conformance_lines())
def test_conformance_record(line: dict) -> None:
    if line.get("error"):
        with pytest.raises(ValueError) as err:
            ref_replay(line["record"])
        assert err.value.action_index == line["error_index"], str(err.value)
        assert line["reason"] in str(err.value)
        return
    got = ref_replay(line["record"])
    expected = line["expected"]
    for key in KEYS:
        assert got[key] == expected[key], key
    assert [(t["leader"], t["winner"], t["size"], t["winning"]) for t in got["tricks"]] == [
        (t["leader"], t["winner"], t["size"], t["winning"]) for t in expected["tricks"]
    ]


# ------------------------------------------------------------------------ perft
PERFT_DEAL = {
    "rules": "standard",
    "banker": 0,
    "actions": [],
    "hands": [
        ["1-1", "3-1", "3-3", "6-4", "6-4", "6-3", "4-3", "3-2"],
        ["6-6", "4-4", "5-5", "3-3", "6-1", "5-1", "5-2", "2-1"],
        ["6-6", "3-1", "2-2", "2-2", "6-1", "5-4", "5-3", "4-1"],
        ["1-1", "4-4", "5-5", "6-5", "6-5", "5-1", "6-2", "4-2"],
    ],
}


@pytest.mark.parametrize(
    "depth, count",
    [
        (1, 9),
        (2, 124),
        (3, 1879),
        (4, 34883),
        pytest.param(5, 233749, marks=slow),
        pytest.param(6, 2014714, marks=slow),
    ],
)
def test_perft_rules_deal(depth: int, count: int) -> None:
    assert ref_perft(PERFT_DEAL, depth) == count


def test_perft_depth_zero_and_prefix() -> None:
    assert ref_perft(PERFT_DEAL, 0) == 1
    # After the banker leads the 6-4 pair, seat 1 answers with any 2 of its 8 distinct tiles.
    prefix = dict(PERFT_DEAL, actions=[{"seat": 0, "play": ["6-4", "6-4"]}])
    assert ref_perft(prefix, 1) == 28


def test_root_decisions_are_the_nine_leads() -> None:
    hands = [[parse_type(n) for n in hand] for hand in PERFT_DEAL["hands"]]
    game = RefGame(hands, 0, RuleSet.from_spec("standard"))
    leads = {tuple(tile_names(tiles)) for kind, tiles in game.decisions() if kind == "lead"}
    assert leads == {
        ("1-1",),
        ("3-1",),
        ("3-3",),
        ("6-4",),
        ("6-3",),
        ("4-3",),
        ("3-2",),
        ("6-4", "6-4"),
        ("3-1", "3-2"),
    }


# ------------------------------------------------------------------------ RULES.md section 6
# The four worked checks, each as a real hand (seat 0 = A, 1 = B, 2 = C, 3 = D).
WORKED_CHECKS = [
    pytest.param(
        "A is banker and wins the last trick; B has 0 columns, C 3, D 2: B pays A 10, C pays 2, D pays 4",
        {
            "banker": 0,
            "hands": [
                ["6-6", "3-1", "2-2", "6-5", "6-4", "5-4", "5-3", "4-2"],
                ["6-6", "1-1", "5-5", "5-1", "6-2", "4-3", "3-2", "2-1"],
                ["3-3", "3-3", "2-2", "6-1", "6-1", "5-1", "6-3", "5-2"],
                ["1-1", "4-4", "4-4", "3-1", "5-5", "6-5", "6-4", "4-1"],
            ],
            "actions": [
                {"seat": 0, "play": ["6-4"]},
                {"seat": 1, "discard": ["3-2"]},
                {"seat": 2, "discard": ["5-1"]},
                {"seat": 3, "play": ["1-1"]},
                {"seat": 3, "play": ["6-4"]},
                {"seat": 0, "discard": ["2-2"]},
                {"seat": 1, "discard": ["1-1"]},
                {"seat": 2, "discard": ["6-3"]},
                {"seat": 3, "play": ["4-4"]},
                {"seat": 0, "play": ["6-6"]},
                {"seat": 1, "discard": ["5-1"]},
                {"seat": 2, "discard": ["2-2"]},
                {"seat": 0, "play": ["5-4"]},
                {"seat": 1, "discard": ["2-1"]},
                {"seat": 2, "discard": ["6-1"]},
                {"seat": 3, "discard": ["3-1"]},
                {"seat": 0, "play": ["4-2"]},
                {"seat": 1, "discard": ["5-5"]},
                {"seat": 2, "play": ["5-2"]},
                {"seat": 3, "discard": ["4-4"]},
                {"seat": 2, "play": ["3-3", "3-3"]},
                {"seat": 3, "discard": ["5-5", "4-1"]},
                {"seat": 0, "discard": ["6-5", "5-3"]},
                {"seat": 1, "discard": ["6-6", "4-3"]},
                {"seat": 2, "play": ["6-1"]},
                {"seat": 3, "discard": ["6-5"]},
                {"seat": 0, "play": ["3-1"]},  # seat 1's last discard is early death: left out
            ],
        },
        {"columns": [3, 0, 3, 2], "last_trick_winner": 0, "settlement": [16, -10, -2, -4], "trick_bonus": [0, 0, 0, 0]},
        id="settlement-A-banker",
    ),
    pytest.param(
        "C wins a trick with the Supreme pair while A is banker: B and D pay C 2, A pays C 4",
        {
            "banker": 0,
            "hands": [
                ["1-1", "5-5", "3-3", "3-3", "6-4", "6-1", "5-1", "5-4"],
                ["4-4", "2-2", "6-5", "6-1", "6-2", "5-3", "4-3", "4-1"],
                ["6-6", "3-1", "3-1", "6-4", "6-3", "4-2", "3-2", "2-1"],
                ["6-6", "1-1", "4-4", "5-5", "2-2", "6-5", "5-1", "5-2"],
            ],
            "actions": [
                {"seat": 0, "play": ["6-1"]},
                {"seat": 1, "discard": ["4-1"]},
                {"seat": 2, "discard": ["6-3"]},
                {"seat": 3, "discard": ["4-4"]},
                {"seat": 0, "play": ["5-1"]},
                {"seat": 1, "discard": ["6-1"]},
                {"seat": 2, "play": ["6-4"]},
                {"seat": 3, "discard": ["5-5"]},
                {"seat": 2, "play": ["6-6"]},
                {"seat": 3, "discard": ["5-2"]},
                {"seat": 0, "discard": ["6-4"]},
                {"seat": 1, "discard": ["5-3"]},
                {"seat": 2, "play": ["4-2", "2-1"]},
                {"seat": 3, "discard": ["2-2", "5-1"]},
                {"seat": 0, "discard": ["1-1", "3-3"]},
                {"seat": 1, "discard": ["2-2", "6-2"]},
                {"seat": 2, "play": ["3-2"]},
                {"seat": 3, "discard": ["6-5"]},
                {"seat": 0, "play": ["5-4"]},
                {"seat": 1, "discard": ["4-4"]},
                {"seat": 0, "play": ["3-3"]},
                {"seat": 1, "discard": ["4-3"]},
                {"seat": 2, "discard": ["3-1"]},
                {"seat": 3, "play": ["6-6"]},
                {"seat": 3, "play": ["1-1"]},
                {"seat": 0, "discard": ["5-5"]},
                {"seat": 2, "discard": ["3-1"]},
            ],
        },
        {"trick_bonus": [-4, -2, 8, -2]},
        id="supreme-pair-bonus",
    ),
    pytest.param(
        "Banker B wins a trick with an Earth & Eight quartet: every other player pays B 8",
        {
            "banker": 1,
            "hands": [
                ["6-6", "4-4", "3-3", "6-1", "6-1", "5-1", "5-2", "4-1"],
                ["6-6", "1-1", "1-1", "3-1", "5-5", "6-2", "5-3", "2-1"],
                ["3-3", "6-5", "6-5", "6-4", "6-3", "5-4", "4-3", "3-2"],
                ["4-4", "3-1", "5-5", "2-2", "2-2", "6-4", "5-1", "4-2"],
            ],
            "actions": [
                {"seat": 1, "play": ["1-1", "1-1", "6-2", "5-3"]},
                {"seat": 2, "discard": ["3-3", "6-5", "5-4", "4-3"]},
                {"seat": 3, "discard": ["2-2", "2-2", "6-4", "4-2"]},
                {"seat": 0, "discard": ["6-6", "4-4", "6-1", "5-1"]},
                {"seat": 1, "play": ["5-5"]},
                {"seat": 2, "discard": ["3-2"]},
                {"seat": 3, "play": ["4-4"]},
                {"seat": 0, "discard": ["5-2"]},
                {"seat": 3, "play": ["5-5"]},
                {"seat": 0, "discard": ["6-1"]},
                {"seat": 1, "discard": ["6-6"]},
                {"seat": 2, "discard": ["6-5"]},
                {"seat": 3, "play": ["3-1"]},
                {"seat": 0, "discard": ["3-3"]},
                {"seat": 1, "discard": ["2-1"]},
                {"seat": 2, "discard": ["6-3"]},
                {"seat": 3, "play": ["5-1"]},
                {"seat": 1, "play": ["3-1"]},
            ],
        },
        {"trick_bonus": [-8, 24, -8, -8]},
        id="quartet-bonus-banker",
    ),
    pytest.param(
        "A declares One Red Dot (B is banker): every other player pays A 20",
        {
            "banker": 1,
            "hands": [
                ["3-3", "2-2", "2-2", "6-5", "5-1", "6-2", "5-2", "3-2"],
                ["1-1", "3-3", "6-5", "6-4", "6-1", "6-1", "6-3", "4-3"],
                ["4-4", "3-1", "5-5", "5-5", "5-4", "4-2", "4-1", "2-1"],
                ["6-6", "6-6", "1-1", "4-4", "3-1", "6-4", "5-1", "5-3"],
            ],
            "actions": [],
        },
        {
            "tricks": [],
            "columns": [8, 0, 0, 0],
            "last_trick_winner": 0,
            "settlement": [60, -20, -20, -20],
            "net": [60, -20, -20, -20],
            "multipliers": {"last_trick": 1, "shutout": 2},
        },
        id="one-red-dot",
    ),
    pytest.param(
        "A, the banker, declares One Red Dot: every other player pays A 20",
        {
            "banker": 0,
            "hands": [
                ["3-3", "2-2", "2-2", "6-5", "5-1", "6-2", "5-2", "3-2"],
                ["1-1", "3-3", "6-5", "6-4", "6-1", "6-1", "6-3", "4-3"],
                ["4-4", "3-1", "5-5", "5-5", "5-4", "4-2", "4-1", "2-1"],
                ["6-6", "6-6", "1-1", "4-4", "3-1", "6-4", "5-1", "5-3"],
            ],
            "actions": [],
        },
        {"settlement": [60, -20, -20, -20], "net": [60, -20, -20, -20]},
        id="one-red-dot-banker",
    ),
]


@pytest.mark.parametrize("check, record, expected", WORKED_CHECKS)
def test_worked_checks(check: str, record: dict, expected: dict) -> None:
    got = ref_replay(dict(record, rules="standard"))
    for key, value in expected.items():
        assert got[key] == value, f"{check}: {key}"


# ------------------------------------------------------------------------ combinations
def _combo(*names: str, rules: str | dict = "standard"):
    return classify([parse_type(n) for n in names], RuleSet.from_spec(rules))


@pytest.mark.parametrize(
    "names, rules, cls",
    [
        (("6-6",), "standard", "civil_single"),
        (("6-3", "5-4"), "standard", "military_pair"),
        (("6-3", "5-4"), {"deck": "24_weakened_military"}, "supreme_pair"),
        (("4-2", "2-1"), "standard", "supreme_pair"),
        (("6-6", "6-3"), {"deck": "24_weakened_military"}, "mixed_pair"),
        (("6-6", "6-6", "6-3", "5-4"), {"deck": "24_weakened_military"}, "quartet"),
        (("4-2", "4-1"), "standard", None),
        (("3-1", "5-2"), "standard", None),
        (("1-1", "6-2", "5-2"), "standard", None),
        (("1-1", "1-1", "6-2"), "standard", "triplet_2c1m"),
        (("1-1", "6-2", "5-3"), "standard", "triplet_1c2m"),
        (("1-1", "6-2", "5-3"), {"combos": "pairs_only"}, None),
        (("1-1", "6-2"), {"combos": "pairs_only"}, "mixed_pair"),
        (("6-6", "5-5", "4-4"), "standard", None),
        (("6-6", "5-5", "4-4"), {"civilian_triplets": True}, "civilian_triplet"),
        (("4-2", "4-1"), "seed001", "military_2"),
        (("6-6", "6-3"), "seed001", None),
        (("4-2", "2-1"), "seed001", "supreme_pair"),
    ],
)
def test_classify(names: tuple, rules, cls) -> None:
    combo = _combo(*names, rules=rules)
    assert (combo.cls if combo else None) == cls


def test_equal_strength_and_class_walls() -> None:
    assert _combo("6-3").strength == _combo("5-4").strength
    assert _combo("6-6", "6-3").strength == _combo("6-6", "5-4").strength
    assert _combo("6-6", "6-6", "6-3").cls != _combo("6-6", "6-3", "5-4").cls
    pendulum = _combo("6-6", "5-5", "4-4", rules={"civilian_triplets": True})
    fish = _combo("3-3", "2-2", "1-1", rules={"civilian_triplets": True})
    assert pendulum.strength > fish.strength
    same_suit = "seed001"
    assert _combo("6-6", "5-1", rules=same_suit).strength == _combo("6-6", "6-6", rules=same_suit).strength


# ------------------------------------------------------------------------ decision API
RED_DOT_HANDS = [
    ["3-3", "2-2", "2-2", "6-5", "5-1", "6-2", "5-2", "3-2"],
    ["1-1", "3-3", "6-5", "6-4", "6-1", "6-1", "6-3", "4-3"],
    ["4-4", "3-1", "5-5", "5-5", "5-4", "4-2", "4-1", "2-1"],
    ["6-6", "6-6", "1-1", "4-4", "3-1", "6-4", "5-1", "5-3"],
]


def test_one_red_dot_choice() -> None:
    hands = [[parse_type(n) for n in hand] for hand in RED_DOT_HANDS]
    rules = RuleSet.from_spec({"one_red_dot": "choice"})
    game = RefGame(hands, 1, rules)
    assert game.to_act == 0 and game.decisions() == {DECLARE, DECLINE}
    declared = game.copy()
    declared.apply(DECLARE)
    assert declared.is_over and declared.result()["net"] == [60, -20, -20, -20]
    game.apply(DECLINE)
    assert game.to_act == 1 and all(kind == "lead" for kind, _ in game.decisions())
    record = {"rules": {"one_red_dot": "choice"}, "banker": 1, "hands": RED_DOT_HANDS, "actions": []}
    assert ref_perft(record, 1) == 2
    assert ref_replay(dict(record, actions=[{"seat": 0, "declare": True}]))["settlement"] == [60, -20, -20, -20]
    off = dict(record, rules={"one_red_dot": "off"})
    assert ref_perft(off, 1) == ref_perft(record, 2) - 1


def _random_game(rules_spec, seed: int) -> tuple[RefGame, dict]:
    """Play random legal decisions; return the game and its record (forced discards left out)."""
    rng = random.Random(seed)
    rules = RuleSet.from_spec(rules_spec)
    deck = list(rules.deck_types)
    rng.shuffle(deck)
    size = rules.hand_size
    hands = [sorted(deck[s * size : (s + 1) * size]) for s in range(rules.players)]
    banker = rng.randrange(rules.players)
    game = RefGame(hands, banker, rules)
    actions = []
    while not game.is_over:
        seat = game.to_act
        kind, tiles = decision = rng.choice(sorted(game.decisions()))
        if kind == "declare":
            actions.append({"seat": seat, "declare": tiles == (1,)})
        else:
            actions.append({"seat": seat, ("discard" if kind == "discard" else "play"): tile_names(tiles)})
        game.apply(decision)
    record = {"rules": rules_spec, "banker": banker, "hands": [tile_names(h) for h in hands], "actions": actions}
    return game, record


@pytest.mark.parametrize(
    "preset",
    sorted(PRESETS) + [{"one_red_dot": "choice"}, {"civilian_triplets": True}, {"deck": "24_weakened_military"}],
)
def test_random_games_are_consistent(preset) -> None:
    for seed in range(40):
        game, record = _random_game(preset, seed)
        result = game.result()
        assert sum(result["net"]) == 0
        assert sum(result["columns"]) == game.hand_size
        assert result == ref_replay(record)


def test_illegal_decision_is_refused_and_nothing_changes() -> None:
    hands = [[parse_type(n) for n in hand] for hand in PERFT_DEAL["hands"]]
    game = RefGame(hands, 0, RuleSet.from_spec("standard"))
    with pytest.raises(ValueError):
        game.apply(("lead", (parse_type("3-1"), parse_type("4-3"))))
    assert game.to_act == 0 and len(game.decisions()) == 9


def test_early_death_discard_may_be_included() -> None:
    line_actions = WORKED_CHECKS[0].values[1]["actions"]
    record = dict(WORKED_CHECKS[0].values[1], rules="standard")
    with_forced = dict(record, actions=line_actions + [{"seat": 1, "discard": ["6-2"]}])
    assert ref_replay(with_forced) == ref_replay(record)
    wrong = dict(record, actions=line_actions + [{"seat": 1, "play": ["6-2"]}])
    with pytest.raises(ValueError, match="must discard 6-2 by early death") as err:
        ref_replay(wrong)
    assert err.value.action_index == len(line_actions)


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"extra": 1}, "record: unknown key 'extra'"),
        ({"streak": 0}, "record: streak must be an int >= 1"),
        ({"rules": {"banker_streak": True}}, "banker_streak needs banker_double"),
        ({"banker": True}, "record: banker must be a seat 0..3"),
    ],
)
def test_record_level_refusals(change: dict, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as err:
        ref_replay({**PERFT_DEAL, **change})
    assert err.value.action_index is None


def test_hands_must_use_the_deck() -> None:
    hands = [list(h) for h in PERFT_DEAL["hands"]]
    hands[0][0] = "6-6"  # a third 6-6, and one 1-1 missing
    with pytest.raises(ValueError, match="exactly the deck's tiles"):
        ref_replay(dict(PERFT_DEAL, hands=hands))


def test_unbeatable_in_own_eyes_example() -> None:
    """RULES.md section 6: a 1-1 pair led by a banker who holds one 6-6 is unbeatable in their
    eyes (the one 6-6 outside cannot make a Heaven pair); a single 1-1 is not."""
    rules = RuleSet.from_spec("standard")
    deck = list(rules.deck_types)
    banker_hand = [parse_type(n) for n in ("6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "3-1", "5-5")]
    rest = list(deck)
    for t in banker_hand:
        rest.remove(t)
    game = RefGame([banker_hand, rest[0:8], rest[8:16], rest[16:24]], 0, rules)
    earth = parse_type("1-1")
    assert game.unbeatable_in_own_eyes(classify((earth, earth), rules))
    assert not game.unbeatable_in_own_eyes(classify((earth,), rules))
