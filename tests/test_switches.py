"""Every rule switch of RULES.md section 9: a hand whose result or legality differs from standard.

Each case is a complete hand record replayed twice: under the switch (``rules``) and under
``standard``; each side either gives a result worked out by hand or is refused at a given
action. Seats: A = 0, B = 1, C = 2, D = 3. Standard chips = points x 2 x multipliers.
"""

from __future__ import annotations

import numpy as np
import pytest
from scripted import DECLARE, D, P, T

from tiengow_env.combos import table_for
from tiengow_env.game import Game, RecordError, replay
from tiengow_env.rules import PRESETS, RuleSet


def result(tricks, columns, w, bonus, settlement, last=1, shutout=1) -> dict:
    """A full replay result; net is derived, so each case states bonus and settlement."""
    return {
        "tricks": tricks,
        "columns": columns,
        "last_trick_winner": w,
        "trick_bonus": bonus,
        "settlement": settlement,
        "multipliers": {"last_trick": last, "shutout": shutout},
        "net": [b + s for b, s in zip(bonus, settlement, strict=True)],
    }


def refused(index: int, reason: str) -> tuple:
    return ("refused", index, reason)


# ------------------------------------------------------------------------------------------
# Deals shared by several switches (each checked under standard by the first case using it).
# ------------------------------------------------------------------------------------------
# Worked check 1 of RULES.md section 6: A banker and W; columns A 3, B 0, C 3, D 2.
WORKED_1 = dict(
    banker=0,
    hands=[
        ["6-6", "5-1", "4-4", "4-4", "3-3", "3-3", "1-1", "1-1"],
        ["6-6", "3-1", "6-3", "5-4", "3-1", "6-2", "5-3", "5-2"],
        ["4-3", "6-4", "5-5", "5-5", "5-1", "2-2", "2-2", "6-5"],
        ["2-1", "4-2", "4-1", "3-2", "6-1", "6-5", "6-1", "6-4"],
    ],
    actions=[
        P(0, "6-6"),
        D(1, "6-6"),
        D(2, "4-3"),
        D(3, "2-1"),
        P(0, "5-1"),
        D(1, "3-1"),
        P(2, "6-4"),
        D(3, "4-2"),
        P(2, "5-5", "5-5"),
        D(3, "4-1", "3-2"),
        D(0, "4-4", "4-4"),
        D(1, "6-3", "5-4"),
        P(2, "5-1"),
        P(3, "6-1"),
        D(0, "3-3"),
        D(1, "3-1"),
        P(3, "6-5"),
        D(0, "3-3"),
        D(1, "6-2"),
        D(2, "2-2"),
        P(3, "6-1"),
        P(0, "1-1"),
        D(1, "5-3"),
        D(2, "2-2"),
        P(0, "1-1"),
        D(1, "5-2"),
        D(2, "6-5"),
        D(3, "6-4"),
    ],
)
WORKED_1_TRICKS = [
    T(0, 0, "6-6"),
    T(0, 2, "6-4"),
    T(2, 2, "5-5", "5-5"),
    T(2, 3, "6-1"),
    T(3, 3, "6-5"),
    T(3, 0, "1-1"),
    T(0, 0, "1-1"),
]

# Worked check 2: C wins T2 with the Supreme pair, A is banker; W = A; columns A 5, C 3.
WORKED_2 = dict(
    banker=0,
    hands=[
        ["3-3", "6-1", "6-1", "1-1", "4-4", "4-4", "5-5", "5-5"],
        ["6-6", "1-1", "3-1", "3-1", "3-3", "2-2", "2-2", "5-1"],
        ["6-6", "4-2", "2-1", "5-1", "6-5", "6-5", "6-4", "6-4"],
        ["6-3", "5-4", "6-2", "5-3", "5-2", "4-3", "4-1", "3-2"],
    ],
    actions=[
        P(0, "3-3"),
        D(1, "3-3"),
        P(2, "6-6"),
        D(3, "3-2"),
        P(2, "4-2", "2-1"),
        D(3, "4-1", "4-3"),
        D(0, "6-1", "6-1"),
        D(1, "2-2", "2-2"),
        P(2, "5-1"),
        D(3, "5-2"),
        P(0, "1-1"),
        D(1, "5-1"),
        P(0, "4-4", "4-4"),
        D(1, "3-1", "3-1"),
        D(2, "6-5", "6-5"),
        D(3, "6-2", "5-3"),
        P(0, "5-5", "5-5"),
        D(1, "6-6", "1-1"),
        D(2, "6-4", "6-4"),
        D(3, "6-3", "5-4"),
    ],
)
WORKED_2_TRICKS = [T(0, 2, "6-6"), T(2, 2, "4-2", "2-1"), T(2, 0, "1-1"), T(0, 0, "4-4", "4-4"), T(0, 0, "5-5", "5-5")]

# Worked check 3: banker B wins T1 with the Earth quartet; D wins the last trick;
# columns B 6, D 2, A and C 0.
WORKED_3 = dict(
    banker=1,
    hands=[
        ["6-6", "6-6", "4-4", "4-4", "3-1", "5-5", "5-5", "6-3"],
        ["1-1", "1-1", "6-2", "5-3", "3-1", "4-1", "5-1", "5-1"],
        ["3-3", "3-3", "2-2", "2-2", "6-5", "6-5", "5-4", "5-2"],
        ["6-1", "6-1", "4-3", "4-2", "3-2", "2-1", "6-4", "6-4"],
    ],
    actions=[
        P(1, "1-1", "1-1", "6-2", "5-3"),
        D(2, "3-3", "3-3", "2-2", "2-2"),
        D(3, "6-1", "6-1", "4-3", "4-2"),
        D(0, "6-6", "6-6", "4-4", "4-4"),
        P(1, "3-1", "4-1"),
        D(2, "6-5", "6-5"),
        D(3, "3-2", "2-1"),
        D(0, "3-1", "6-3"),
        P(1, "5-1", "5-1"),
        D(2, "5-4", "5-2"),
        P(3, "6-4", "6-4"),
        D(0, "5-5", "5-5"),
    ],
)
WORKED_3_TRICKS = [T(1, 1, "1-1", "1-1", "6-2", "5-3"), T(1, 1, "3-1", "4-1"), T(1, 3, "6-4", "6-4")]
# The same deal without the quartet: B leads its tiles as pairs (legal in every system).
WORKED_3_PAIRS = [
    P(1, "1-1", "1-1"),
    D(2, "3-3", "3-3"),
    D(3, "6-1", "6-1"),
    D(0, "6-6", "6-6"),
    P(1, "6-2", "5-3"),
    D(2, "2-2", "2-2"),
    D(3, "4-3", "4-2"),
    D(0, "4-4", "4-4"),
    P(1, "3-1", "4-1"),
    D(2, "6-5", "6-5"),
    D(3, "3-2", "2-1"),
    D(0, "3-1", "6-3"),
    P(1, "5-1", "5-1"),
    D(2, "5-4", "5-2"),
    P(3, "6-4", "6-4"),
    D(0, "5-5", "5-5"),
]

# Last trick won by the banker's Supreme pair: columns A 7, B 1.
SUPREME_LAST = dict(
    banker=0,
    hands=[
        ["5-1", "6-1", "1-1", "1-1", "4-4", "4-4", "4-2", "2-1"],
        ["6-1", "5-1", "6-6", "6-6", "3-1", "3-1", "5-5", "5-5"],
        ["3-3", "3-3", "2-2", "2-2", "6-5", "6-5", "6-4", "6-4"],
        ["6-3", "5-4", "6-2", "5-3", "5-2", "4-3", "4-1", "3-2"],
    ],
    actions=[
        P(0, "5-1"),
        P(1, "6-1"),
        D(2, "3-3"),
        D(3, "6-3"),
        P(1, "5-1"),
        D(2, "3-3"),
        D(3, "5-4"),
        P(0, "6-1"),
        P(0, "1-1", "1-1"),
        D(1, "6-6", "6-6"),
        D(2, "2-2", "2-2"),
        D(3, "6-2", "5-3"),
        P(0, "4-4", "4-4"),
        D(1, "3-1", "3-1"),
        D(2, "6-5", "6-5"),
        D(3, "5-2", "4-3"),
        P(0, "4-2", "2-1"),
        D(1, "5-5", "5-5"),
        D(2, "6-4", "6-4"),
        D(3, "4-1", "3-2"),
    ],
)
SUPREME_LAST_TRICKS = [
    T(0, 1, "6-1"),
    T(1, 0, "6-1"),
    T(0, 0, "1-1", "1-1"),
    T(0, 0, "4-4", "4-4"),
    T(0, 0, "4-2", "2-1"),
]

# Banker A takes all 8 columns; the first lead (1-1 pair) is beatable by B's 6-6 pair.
SHUTOUT = dict(
    banker=0,
    hands=[
        ["1-1", "1-1", "4-4", "4-4", "3-1", "3-1", "5-5", "5-5"],
        ["6-6", "6-6", "3-3", "3-3", "2-2", "2-2", "6-5", "6-5"],
        ["6-4", "6-4", "6-1", "6-1", "5-1", "5-1", "6-3", "5-4"],
        ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
    ],
    actions=[
        P(0, "1-1", "1-1"),
        D(1, "6-6", "6-6"),
        D(2, "6-4", "6-4"),
        D(3, "6-2", "5-3"),
        P(0, "4-4", "4-4"),
        D(1, "3-3", "3-3"),
        D(2, "6-1", "6-1"),
        D(3, "5-2", "4-3"),
        P(0, "3-1", "3-1"),
        D(1, "2-2", "2-2"),
        D(2, "5-1", "5-1"),
        D(3, "4-2", "4-1"),
        P(0, "5-5", "5-5"),
        D(1, "6-5", "6-5"),
        D(2, "6-3", "5-4"),
        D(3, "3-2", "2-1"),
    ],
)
SHUTOUT_TRICKS = [T(0, 0, "1-1", "1-1"), T(0, 0, "4-4", "4-4"), T(0, 0, "3-1", "3-1"), T(0, 0, "5-5", "5-5")]

# Big Six captures Little Three: B leads 2-1 last, D wins with 4-2; columns A 5, B 1, C 0, D 2.
BIG_SIX = dict(
    banker=0,
    hands=[
        ["1-1", "1-1", "4-4", "4-4", "6-6", "5-1", "3-3", "6-3"],
        ["6-6", "3-1", "3-1", "5-5", "5-5", "3-3", "6-1", "2-1"],
        ["2-2", "2-2", "6-5", "6-5", "6-4", "6-4", "5-4", "6-2"],
        ["5-3", "5-2", "4-3", "4-1", "3-2", "6-1", "5-1", "4-2"],
    ],
    actions=[
        P(0, "1-1", "1-1"),
        D(1, "3-1", "3-1"),
        D(2, "2-2", "2-2"),
        D(3, "5-3", "5-2"),
        P(0, "4-4", "4-4"),
        D(1, "5-5", "5-5"),
        D(2, "6-5", "6-5"),
        D(3, "4-3", "4-1"),
        P(0, "6-6"),
        D(1, "6-6"),
        D(2, "6-4"),
        D(3, "3-2"),
        P(0, "5-1"),
        D(1, "3-3"),
        D(2, "6-4"),
        P(3, "6-1"),
        P(3, "5-1"),
        D(0, "3-3"),
        P(1, "6-1"),
        D(2, "5-4"),
        P(1, "2-1"),
        P(3, "4-2"),
        D(0, "6-3"),
    ],
)
BIG_SIX_TRICKS = [
    T(0, 0, "1-1", "1-1"),
    T(0, 0, "4-4", "4-4"),
    T(0, 0, "6-6"),
    T(0, 3, "6-1"),
    T(3, 1, "6-1"),
    T(1, 3, "4-2"),
]

# Early death: in T6 C (no column) must discard its 6-6; A wins with 6-1. Columns A 6, B 2.
EARLY_DEATH = dict(
    banker=0,
    hands=[
        ["1-1", "1-1", "4-4", "4-4", "5-1", "3-1", "6-5", "6-1"],
        ["6-6", "3-1", "5-5", "5-5", "6-4", "6-1", "3-3", "5-1"],
        ["3-3", "2-2", "2-2", "6-5", "6-4", "6-3", "5-4", "6-6"],
        ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
    ],
    actions=[
        P(0, "1-1", "1-1"),
        D(1, "5-5", "5-5"),
        D(2, "2-2", "2-2"),
        D(3, "6-2", "5-3"),
        P(0, "4-4", "4-4"),
        D(1, "6-6", "3-1"),
        D(2, "6-5", "6-4"),
        D(3, "5-2", "4-3"),
        P(0, "5-1"),
        P(1, "6-4"),
        D(2, "3-3"),
        D(3, "4-2"),
        P(1, "6-1"),
        D(2, "6-3"),
        D(3, "4-1"),
        P(0, "3-1"),
        P(0, "6-5"),
        P(1, "3-3"),
        D(2, "5-4"),
        D(3, "3-2"),
        P(1, "5-1"),
        P(0, "6-1"),
    ],
)
EARLY_DEATH_TRICKS = [T(0, 0, "1-1", "1-1"), T(0, 0, "4-4", "4-4"), T(0, 1, "6-4"), T(1, 0, "3-1"), T(0, 1, "3-3")]
# Without early death, C plays its 6-6 in T6 and D discards explicitly.
EARLY_DEATH_OFF_ACTIONS = EARLY_DEATH["actions"][:21] + [P(2, "6-6"), D(3, "2-1"), D(0, "6-1")]

# One Red Dot: A's only red pip is on 3-1. Banker C.
RED_DOT = dict(
    banker=2,
    hands=[
        ["5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5", "3-1"],
        ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "6-5"],
        ["6-4", "6-4", "6-1", "6-1", "5-1", "5-1", "6-3", "5-4"],
        ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
    ],
)
RED_DOT_RESULT = result([], [8, 0, 0, 0], 0, [0, 0, 0, 0], [60, -20, -20, -20], shutout=2)

# A custom deck of 8 tiles (hands of 2, par 1, 0 columns pays 2 points) where B and D both
# hold exactly one red pip. Banker C: in play order from the banker (C, D, A, B) D is first.
TINY_DECK = ["6-6", "4-4", "5-5", "3-1", "2-2", "6-5", "3-3", "6-1"]
TINY = dict(banker=2, hands=[["6-6", "4-4"], ["5-5", "3-1"], ["2-2", "6-5"], ["3-3", "6-1"]])


def with_rules(deal: dict, rules, actions=None, banker=None, **extra) -> dict:
    out = {
        "rules": rules,
        "banker": deal["banker"] if banker is None else banker,
        "hands": deal["hands"],
        "actions": deal.get("actions", []) if actions is None else actions,
    }
    out.update(extra)
    return out


# ------------------------------------------------------------------------------------------
# (id, record under the switch, expected under the switch, expected under standard)
# ------------------------------------------------------------------------------------------
SWITCH_CASES = [
    # first_lead heaven_holder: banker C holds no 6-6; from C the play order is C, D, A, B, so D
    # (not A) leads T1 with the Supreme pair. C stays the banker and pays the doubled stake:
    # A, B pay D 2, C pays 4. D takes every trick: shutout (D is not the banker), each of A, B,
    # C pays 5 x 2 x 2 = 20. Under standard C must lead, so D's lead is refused.
    (
        "first_lead=heaven_holder",
        {
            "rules": {"first_lead": "heaven_holder"},
            "banker": 2,
            "hands": [
                ["6-6", "3-1", "5-5", "5-5", "3-3", "3-3", "2-2", "2-2"],
                ["6-5", "6-5", "6-4", "6-4", "6-1", "6-1", "5-1", "5-1"],
                ["6-3", "5-4", "6-2", "5-3", "5-2", "4-3", "4-1", "3-2"],
                ["4-2", "2-1", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1"],
            ],
            "actions": [
                P(3, "4-2", "2-1"),
                D(0, "3-3", "3-3"),
                D(1, "6-5", "6-5"),
                D(2, "6-3", "5-4"),
                P(3, "6-6"),
                D(0, "6-6"),
                D(1, "6-4"),
                D(2, "6-2"),
                P(3, "1-1", "1-1"),
                D(0, "5-5", "5-5"),
                D(1, "6-4", "6-1"),
                D(2, "5-3", "5-2"),
                P(3, "4-4", "4-4"),
                D(0, "2-2", "2-2"),
                D(1, "6-1", "5-1"),
                D(2, "4-3", "4-1"),
                P(3, "3-1"),
            ],
        },
        result(
            [T(3, 3, "4-2", "2-1"), T(3, 3, "6-6"), T(3, 3, "1-1", "1-1"), T(3, 3, "4-4", "4-4"), T(3, 3, "3-1")],
            [0, 0, 0, 8],
            3,
            [-2, -2, -4, 8],
            [-20, -20, -20, 60],
            shutout=2,
        ),
        refused(0, "wrong seat"),
    ),
    # must_beat_if_able: B holds the 6-6 pair on A's 1-1 pair and must beat with it.
    (
        "must_beat_if_able=true",
        with_rules(SHUTOUT, {"must_beat_if_able": True}),
        refused(1, "must"),
        result(SHUTOUT_TRICKS, [8, 0, 0, 0], 0, [0] * 4, [60, -20, -20, -20], shutout=2),
    ),
    # combos pairs_only: no triplets or quartets, so B's Earth quartet lead is refused.
    (
        "combos=pairs_only/quartet_refused",
        with_rules(WORKED_3, {"combos": "pairs_only"}),
        refused(0, "not a combination"),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # combos same_suit_any: A leads 6-6+5-1 (civil, 2 tiles, top 6-6), which standard refuses.
    # C beats A's civil triple 4-4 3-3 2-2 (top 4-4) with 1-1 6-5 6-4 (top 1-1); A's military
    # triple topped by 6-3 ties C's 5-4 5-3 4-3 (both nines on top), so A discards it.
    # Columns A 2, C 6, W = C: A pays (4-2) x 2 = 4, B and D pay 10 -> C +24.
    (
        "combos=same_suit_any",
        {
            "rules": {"combos": "same_suit_any"},
            "banker": 0,
            "hands": [
                ["6-6", "5-1", "4-4", "3-3", "2-2", "6-3", "4-1", "3-2"],
                ["6-6", "1-1", "4-4", "3-1", "3-1", "5-5", "5-5", "3-3"],
                ["1-1", "6-5", "6-4", "5-4", "5-3", "4-3", "2-2", "6-1"],
                ["6-2", "5-2", "2-1", "6-5", "6-4", "6-1", "5-1", "4-2"],
            ],
            "actions": [
                P(0, "6-6", "5-1"),
                D(1, "6-6", "1-1"),
                D(2, "2-2", "6-1"),
                D(3, "6-5", "6-4"),
                P(0, "4-4", "3-3", "2-2"),
                D(1, "4-4", "3-1", "3-1"),
                P(2, "1-1", "6-5", "6-4"),
                D(3, "6-1", "5-1", "4-2"),
                P(2, "5-4", "5-3", "4-3"),
                D(3, "6-2", "5-2", "2-1"),
                D(0, "6-3", "4-1", "3-2"),
                D(1, "5-5", "5-5", "3-3"),
            ],
        },
        result(
            [T(0, 0, "6-6", "5-1"), T(0, 2, "1-1", "6-5", "6-4"), T(2, 2, "5-4", "5-3", "4-3")],
            [2, 0, 6, 0],
            2,
            [0] * 4,
            [-4, -10, 24, -10],
        ),
        refused(0, "not a combination"),
    ),
    # civilian_triplets: A leads Fish (1-1 3-3 2-2), B beats it with Pendulum (6-6 5-5 4-4),
    # C beats B's Goose 1C2M with the Man 1C2M and takes the last pair.
    # Columns B 3, C 5, W = C: A and D pay 10, B pays (4-3) x 2 = 2 -> C +22.
    (
        "civilian_triplets=true",
        {
            "rules": {"civilian_triplets": True},
            "banker": 0,
            "hands": [
                ["1-1", "3-3", "2-2", "6-6", "1-1", "5-5", "3-3", "2-2"],
                ["6-6", "5-5", "4-4", "3-1", "4-1", "3-2", "6-4", "6-4"],
                ["3-1", "6-1", "6-1", "4-4", "5-2", "4-3", "6-5", "6-5"],
                ["5-1", "5-1", "6-3", "5-4", "6-2", "5-3", "4-2", "2-1"],
            ],
            "actions": [
                P(0, "1-1", "3-3", "2-2"),
                P(1, "6-6", "5-5", "4-4"),
                D(2, "3-1", "6-1", "6-1"),
                D(3, "5-1", "5-1", "6-3"),
                P(1, "3-1", "4-1", "3-2"),
                P(2, "4-4", "5-2", "4-3"),
                D(3, "5-4", "6-2", "5-3"),
                D(0, "6-6", "1-1", "5-5"),
                P(2, "6-5", "6-5"),
                D(3, "4-2", "2-1"),
                D(0, "3-3", "2-2"),
                D(1, "6-4", "6-4"),
            ],
        },
        result(
            [T(0, 1, "6-6", "4-4", "5-5"), T(1, 2, "4-4", "5-2", "4-3"), T(2, 2, "6-5", "6-5")],
            [0, 3, 5, 0],
            2,
            [0] * 4,
            [-10, -2, 22, -10],
        ),
        refused(0, "not a combination"),
    ),
    # early_death false: C (no column) plays its 6-6 in the last trick and wins it.
    # Columns A 5, B 2, C 1, W = C: C pays A (5-4) x 2 = 2, B pays 4, D pays 10 -> C +12.
    (
        "early_death=false",
        with_rules(EARLY_DEATH, {"early_death": False}, EARLY_DEATH_OFF_ACTIONS),
        result(EARLY_DEATH_TRICKS + [T(1, 2, "6-6")], [5, 2, 1, 0], 2, [0] * 4, [2, -4, 12, -10]),
        refused(21, "must discard 6-6 by early death"),
    ),
    # ... and the record in which C and D are forced is refused without early death: C, with
    # the turn after B's lead, did not act (A's 6-1 comes out of turn).
    (
        "early_death=false/forced_record",
        with_rules(EARLY_DEATH, {"early_death": False}),
        refused(21, "wrong seat"),
        result(EARLY_DEATH_TRICKS + [T(1, 0, "6-1")], [6, 2, 0, 0], 0, [0] * 4, [24, -4, -10, -10]),
    ),
    # zero_column_points par: B's 0 columns pay par = 4 points, x2 = 8 (standard: 5 x 2 = 10).
    (
        "zero_column_points=par",
        with_rules(WORKED_1, {"zero_column_points": "par"}),
        result(WORKED_1_TRICKS, [3, 0, 3, 2], 0, [0] * 4, [14, -8, -2, -4]),
        result(WORKED_1_TRICKS, [3, 0, 3, 2], 0, [0] * 4, [16, -10, -2, -4]),
    ),
    # pay_over_par false: B's 6 columns earn nothing from W = D (standard: D pays B 4).
    (
        "pay_over_par=false",
        with_rules(WORKED_3, {"pay_over_par": False}),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 0, -10, 20]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # banker_double hand_banker: W = D is not the banker, so A and C pay D 5 x 1; D pays the
    # banker B (6-4) x 2 = 4. The quartet bonus involves the banker: still 8 from each.
    (
        "banker_double=hand_banker",
        with_rules(WORKED_3, {"banker_double": "hand_banker"}),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-5, 4, -5, 6]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # banker_streak with streak 3: factor 1 + 3 = 4 on everything that involves banker B.
    # Quartet: each pays 4 x 4 = 16. Settlement: D pays B 2 x 4 = 8; A, C pay D 5 x 1.
    # Standard ignores the streak.
    (
        "banker_streak=true/streak_3",
        with_rules(WORKED_3, {"banker_double": "hand_banker", "banker_streak": True}, streak=3),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-16, 48, -16, -16], [-5, 8, -5, 2]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # banker_streak with streak 1: factor 1 + 1 = 2, the same as hand_banker alone.
    (
        "banker_streak=true/streak_1",
        with_rules(WORKED_3, {"banker_double": "hand_banker", "banker_streak": True}),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-5, 4, -5, 6]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # banker_streak with streak 3, Supreme pair won by C while A is banker: B and D pay 2 x 1,
    # A pays 2 x 4 = 8 -> C +12. Settlement with W = A (the banker), factor 4: B pays 5 x 4,
    # C pays 1 x 4, D pays 5 x 4 -> A +44.
    (
        "banker_streak=true/streak_3_supreme",
        with_rules(WORKED_2, {"banker_double": "hand_banker", "banker_streak": True}, streak=3),
        result(WORKED_2_TRICKS, [5, 0, 3, 0], 0, [-8, -2, 12, -2], [44, -20, -4, -20]),
        result(WORKED_2_TRICKS, [5, 0, 3, 0], 0, [-4, -2, 8, -2], [22, -10, -2, -10]),
    ),
    # hongkong preset (hand_banker + banker_streak) with streak 2: factor 3.
    # Quartet: each pays 4 x 3 = 12. D pays B 2 x 3 = 6; A, C pay D 5.
    (
        "preset=hongkong/streak_2",
        with_rules(WORKED_3, "hongkong", streak=2),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-12, 36, -12, -12], [-5, 6, -5, 4]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # culin1895 preset: hand_banker, streak 1 (factor 2), pay_over_par false: D pays B nothing.
    (
        "preset=culin1895",
        with_rules(WORKED_3, "culin1895"),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-5, 0, -5, 10]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # trick_bonus_stakes [3, 5]: the Supreme pair won by C (A banker): B, D pay 3, A pays 6.
    (
        "trick_bonus_stakes=[3,5]/supreme",
        with_rules(WORKED_2, {"trick_bonus_stakes": [3, 5]}),
        result(WORKED_2_TRICKS, [5, 0, 3, 0], 0, [-6, -3, 12, -3], [22, -10, -2, -10]),
        result(WORKED_2_TRICKS, [5, 0, 3, 0], 0, [-4, -2, 8, -2], [22, -10, -2, -10]),
    ),
    # trick_bonus_stakes [3, 5]: the quartet won by banker B: each pays 5 x 2 = 10.
    (
        "trick_bonus_stakes=[3,5]/quartet",
        with_rules(WORKED_3, {"trick_bonus_stakes": [3, 5]}),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-10, 30, -10, -10], [-10, 4, -10, 16]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # trick_bonus_stakes [0, 0]: no trick bonus at all.
    (
        "trick_bonus_stakes=[0,0]",
        with_rules(WORKED_3, {"trick_bonus_stakes": [0, 0]}),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [0] * 4, [-10, 4, -10, 16]),
        result(WORKED_3_TRICKS, [0, 6, 0, 2], 3, [-8, 24, -8, -8], [-10, 4, -10, 16]),
    ),
    # last_trick_bonus false: the Supreme pair still earns its trick bonus (A +12), but the
    # settlement is not doubled: B pays 3 x 2 = 6, C and D pay 10 (standard 12, 20, 20).
    (
        "last_trick_bonus=false",
        with_rules(SUPREME_LAST, {"last_trick_bonus": False}),
        result(SUPREME_LAST_TRICKS, [7, 1, 0, 0], 0, [12, -4, -4, -4], [26, -6, -10, -10]),
        result(SUPREME_LAST_TRICKS, [7, 1, 0, 0], 0, [12, -4, -4, -4], [52, -12, -20, -20], last=2),
    ),
    # shutout_bonus false: A's 8 columns are not doubled: each pays 10 (standard 20).
    (
        "shutout_bonus=false",
        with_rules(SHUTOUT, {"shutout_bonus": False}),
        result(SHUTOUT_TRICKS, [8, 0, 0, 0], 0, [0] * 4, [30, -10, -10, -10]),
        result(SHUTOUT_TRICKS, [8, 0, 0, 0], 0, [0] * 4, [60, -20, -20, -20], shutout=2),
    ),
    # shutout_bonus false also removes the One Red Dot doubling: each pays 5 x 2 = 10.
    (
        "shutout_bonus=false/one_red_dot",
        with_rules(RED_DOT, {"shutout_bonus": False}),
        result([], [8, 0, 0, 0], 0, [0] * 4, [30, -10, -10, -10]),
        RED_DOT_RESULT,
    ),
    # big_six_captures false: everyone pays W = D for themselves: B 6, C 10; D still pays A 2.
    (
        "big_six_captures=false",
        with_rules(BIG_SIX, {"big_six_captures": False}),
        result(BIG_SIX_TRICKS, [5, 1, 0, 2], 3, [0] * 4, [2, -6, -10, 14]),
        result(BIG_SIX_TRICKS, [5, 1, 0, 2], 3, [0] * 4, [2, -16, 0, 14]),
    ),
    # one_red_dot choice, A declares: the same result as the automatic declaration.
    (
        "one_red_dot=choice/declare",
        with_rules(RED_DOT, {"one_red_dot": "choice"}, [DECLARE(0, True)]),
        RED_DOT_RESULT,
        refused(0, "hand is over"),
    ),  # standard declared already
    # one_red_dot choice, A declines: play starts and banker C must lead; a record of the
    # decline alone ends before the hand is over (index 1). Standard: the hand is over.
    (
        "one_red_dot=choice/decline",
        with_rules(RED_DOT, {"one_red_dot": "choice"}, [DECLARE(0, False)]),
        refused(1, "ends before the hand is over"),
        refused(0, "hand is over"),
    ),
    # one_red_dot off: nothing is declared; the record without actions is unfinished.
    (
        "one_red_dot=off",
        with_rules(RED_DOT, {"one_red_dot": "off"}),
        refused(0, "ends before the hand is over"),
        RED_DOT_RESULT,
    ),
    # One Red Dot in a small custom deck with two holders (B and D): the first from the
    # banker C in play order is D. Hands of 2, par 1: 0 columns pays 2 points, x2, x2 (shutout).
    (
        "one_red_dot=auto/tiny_deck",
        with_rules(TINY, {"deck": TINY_DECK}),
        result([], [0, 0, 0, 2], 3, [0] * 4, [-8, -8, -8, 24], shutout=2),
        ("refused", None, "hand 0 must be a list of 8 tiles"),
    ),
    # choice in the tiny deck: D declines, then B (the next holder) declares.
    (
        "one_red_dot=choice/tiny_deck_second_holder",
        with_rules(TINY, {"deck": TINY_DECK, "one_red_dot": "choice"}, [DECLARE(3, False), DECLARE(1, True)]),
        result([], [0, 2, 0, 0], 1, [0] * 4, [-8, 24, -8, -8], shutout=2),
        ("refused", None, "hand 0 must be a list of 8 tiles"),
    ),
    # choice: B may not answer before D, the first holder from the banker.
    (
        "one_red_dot=choice/tiny_deck_out_of_turn",
        with_rules(TINY, {"deck": TINY_DECK, "one_red_dot": "choice"}, [DECLARE(1, True)]),
        refused(0, "wrong seat"),
        ("refused", None, "hand 0 must be a list of 8 tiles"),
    ),
    # choice in the 32-tile deck with banker B: A, the only holder, is last in play order
    # (B, C, D, A). A declines, so play starts and banker B leads: the 6-6, 1-1 and 4-4 pairs,
    # then 3-1 (nothing outside beats them), then 6-5 with C, D, A forced. B takes all 8, but
    # its first lead (6-6 pair) is unbeatable in its own eyes: no doubling, each pays 10.
    (
        "one_red_dot=choice/last_holder_declines",
        with_rules(
            RED_DOT,
            {"one_red_dot": "choice"},
            [
                DECLARE(0, False),
                P(1, "6-6", "6-6"),
                D(2, "6-4", "6-4"),
                D(3, "6-2", "5-3"),
                D(0, "5-5", "5-5"),
                P(1, "1-1", "1-1"),
                D(2, "6-1", "6-1"),
                D(3, "5-2", "4-3"),
                D(0, "3-3", "3-3"),
                P(1, "4-4", "4-4"),
                D(2, "5-1", "5-1"),
                D(3, "4-2", "4-1"),
                D(0, "2-2", "2-2"),
                P(1, "3-1"),
                D(2, "6-3"),
                D(3, "3-2"),
                D(0, "6-5"),
                P(1, "6-5"),
            ],
            banker=1,
        ),
        result(
            [T(1, 1, "6-6", "6-6"), T(1, 1, "1-1", "1-1"), T(1, 1, "4-4", "4-4"), T(1, 1, "3-1"), T(1, 1, "6-5")],
            [0, 8, 0, 0],
            1,
            [0] * 4,
            [-10, 30, -10, -10],
        ),
        refused(0, "hand is over"),
    ),
    # choice: D and B both decline, so play starts: banker C leads 2-2 and D, A, B discard
    # (D could beat with 3-3). In T2 every player holds one tile and A, B, D have no column:
    # they are forced. C takes both columns: shutout x2 (C is the banker, but its first lead
    # 2-2 is beaten by the 6-6, 4-4, 5-5 or 3-3 outside its hand): each pays 2 x 2 x 2 = 8.
    (
        "one_red_dot=choice/tiny_deck_all_decline",
        with_rules(
            TINY,
            {"deck": TINY_DECK, "one_red_dot": "choice"},
            [DECLARE(3, False), DECLARE(1, False), P(2, "2-2"), D(3, "6-1"), D(0, "4-4"), D(1, "3-1"), P(2, "6-5")],
        ),
        result([T(2, 2, "2-2"), T(2, 2, "6-5")], [0, 0, 2, 0], 2, [0] * 4, [-8, -8, 24, -8], shutout=2),
        ("refused", None, "hand 0 must be a list of 8 tiles"),
    ),
]


# Switches that leave a hand's result as it is: the same record gives the same result.
SAME_RESULT_CASES = [
    # discards_face_up changes only what the other players see: the result is the same.
    (
        "discards_face_up=true",
        with_rules(WORKED_1, {"discards_face_up": True}),
        result(WORKED_1_TRICKS, [3, 0, 3, 2], 0, [0] * 4, [16, -10, -2, -4]),
        result(WORKED_1_TRICKS, [3, 0, 3, 2], 0, [0] * 4, [16, -10, -2, -4]),
    ),
    # pairs_only still has every pair class: B's tiles led as pairs give the same columns,
    # but without the quartet there is no trick bonus (the same record under standard agrees).
    (
        "combos=pairs_only/pairs_play",
        with_rules(WORKED_3, {"combos": "pairs_only"}, WORKED_3_PAIRS),
        result(
            [T(1, 1, "1-1", "1-1"), T(1, 1, "6-2", "5-3"), T(1, 1, "3-1", "4-1"), T(1, 3, "6-4", "6-4")],
            [0, 6, 0, 2],
            3,
            [0] * 4,
            [-10, 4, -10, 16],
        ),
        result(
            [T(1, 1, "1-1", "1-1"), T(1, 1, "6-2", "5-3"), T(1, 1, "3-1", "4-1"), T(1, 3, "6-4", "6-4")],
            [0, 6, 0, 2],
            3,
            [0] * 4,
            [-10, 4, -10, 16],
        ),
    ),
]


def _check(rec: dict, expected) -> None:
    if isinstance(expected, tuple):
        _, index, reason = expected
        with pytest.raises(RecordError) as err:
            replay(rec)
        assert err.value.action_index == index
        assert reason in str(err.value)
    else:
        assert replay(rec) == expected


@pytest.mark.parametrize("rec,under_switch,under_standard", [pytest.param(*c[1:], id=c[0]) for c in SWITCH_CASES])
def test_switch_changes_the_hand(rec, under_switch, under_standard):
    _check(rec, under_switch)
    _check({**rec, "rules": "standard"}, under_standard)
    assert under_switch != under_standard


@pytest.mark.parametrize(
    "rec,under_switch,under_standard", [c[1:] for c in SAME_RESULT_CASES], ids=[c[0] for c in SAME_RESULT_CASES]
)
def test_switch_keeps_the_result(rec, under_switch, under_standard):
    assert under_switch == under_standard
    _check(rec, under_switch)
    _check({**rec, "rules": "standard"}, under_standard)


def test_must_beat_is_overridden_by_early_death():
    """Under must_beat_if_able, B holds 6-4 over A's last 5-1 but has no column: it is forced
    to discard, and the hand is replayed. A's first lead, the 6-6 pair, is unbeatable in A's
    eyes, so A's 8 columns are not doubled: each pays 5 x 2 = 10. The record is the same
    under standard (every other follower could not beat)."""
    rec = {
        "rules": {"must_beat_if_able": True},
        "banker": 0,
        "hands": [
            ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "5-1"],
            ["5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5", "6-4"],
            ["3-1", "6-5", "6-4", "6-1", "6-1", "5-1", "6-3", "5-4"],
            ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        "actions": [
            P(0, "6-6", "6-6"),
            D(1, "5-5", "5-5"),
            D(2, "6-1", "6-1"),
            D(3, "6-2", "5-3"),
            P(0, "1-1", "1-1"),
            D(1, "3-3", "3-3"),
            D(2, "6-3", "5-4"),
            D(3, "5-2", "4-3"),
            P(0, "4-4", "4-4"),
            D(1, "2-2", "2-2"),
            D(2, "6-5", "6-4"),
            D(3, "4-2", "4-1"),
            P(0, "3-1"),
            D(1, "6-5"),
            D(2, "3-1"),
            D(3, "3-2"),
            P(0, "5-1"),
            D(1, "6-4"),
        ],
    }
    expected = result(
        [T(0, 0, "6-6", "6-6"), T(0, 0, "1-1", "1-1"), T(0, 0, "4-4", "4-4"), T(0, 0, "3-1"), T(0, 0, "5-1")],
        [8, 0, 0, 0],
        0,
        [0] * 4,
        [30, -10, -10, -10],
    )
    assert replay(rec) == expected
    assert replay({**rec, "rules": "standard"}) == expected
    game = Game(hands=rec["hands"], banker=0, rules=rec["rules"])
    for action in rec["actions"][:16]:
        game.play(action)
    game.play(P(0, "5-1"))
    assert game.is_over  # B, C, D discarded by themselves


def test_must_beat_offers_only_beats():
    game = Game(hands=SHUTOUT["hands"], banker=0, rules={"must_beat_if_able": True})
    game.play(SHUTOUT["actions"][0])
    C = game.combos.num_combos
    assert game.legal_actions() == [game.combos.find([0, 0])]  # only the 6-6 pair
    standard = Game(hands=SHUTOUT["hands"], banker=0)
    standard.play(SHUTOUT["actions"][0])
    assert any(a >= C for a in standard.legal_actions())  # standard also offers discards


def test_first_lead_heaven_holder_leader():
    hands = SWITCH_CASES[0][1]["hands"]
    assert Game(hands=hands, banker=2, rules={"first_lead": "heaven_holder"}).to_act == 3
    assert Game(hands=hands, banker=2, rules={"first_lead": "heaven_holder"}).banker == 2
    assert Game(hands=hands, banker=2).to_act == 2


def test_discards_face_up_is_a_rule_set():
    rules = RuleSet.from_spec({"discards_face_up": True})
    assert rules.discards_face_up is True
    assert RuleSet.from_spec("standard").discards_face_up is False
    assert RuleSet.from_spec("culin1895").discards_face_up is True
    assert rules.diff() == {"discards_face_up": True}


# ------------------------------------------------------------------------------------------
# Decks
# ------------------------------------------------------------------------------------------
DECK_CASES = [
    # 24_weakened_military: 6-3 + 5-4 is the Supreme pair (stake 2, last-trick bonus).
    # Hands of 6, par 3, 0 columns pays 4 points. A wins the last trick with it:
    # bonus: each pays A 2 x 2 = 4. Settlement x2 (last trick): B (1 column) pays 2 x 2 x 2 = 8,
    # C and D pay 4 x 2 x 2 = 16 -> A +40.
    (
        "24_weakened_military",
        {
            "rules": {"deck": "24_weakened_military"},
            "banker": 0,
            "hands": [
                ["6-6", "6-6", "1-1", "5-1", "6-3", "5-4"],
                ["6-1", "6-1", "1-1", "4-4", "4-4", "3-1"],
                ["5-1", "5-5", "5-5", "3-3", "3-3", "6-4"],
                ["3-1", "2-2", "2-2", "6-5", "6-5", "6-4"],
            ],
            "actions": [
                P(0, "6-6", "6-6"),
                D(1, "4-4", "4-4"),
                D(2, "5-5", "5-5"),
                D(3, "2-2", "2-2"),
                P(0, "5-1"),
                P(1, "6-1"),
                D(2, "3-3"),
                D(3, "6-5"),
                P(1, "6-1"),
                D(2, "3-3"),
                D(3, "6-5"),
                P(0, "1-1"),
                P(0, "6-3", "5-4"),
                D(1, "1-1", "3-1"),
                D(2, "5-1", "6-4"),
                D(3, "3-1", "6-4"),
            ],
        },
        result(
            [T(0, 0, "6-6", "6-6"), T(0, 1, "6-1"), T(1, 0, "1-1"), T(0, 0, "6-3", "5-4")],
            [5, 1, 0, 0],
            0,
            [12, -4, -4, -4],
            [40, -8, -16, -16],
            last=2,
        ),
    ),
    # 24_supreme_civilians: B leads 2-1 last, A takes it with 4-2: Big Six captures.
    # Columns A 5, B 1. B would pay 2 x 2 = 4, C and D 4 x 2 = 8 each; B pays all 20.
    (
        "24_supreme_civilians",
        {
            "rules": {"deck": "24_supreme_civilians"},
            "banker": 0,
            "hands": [
                ["6-6", "6-6", "1-1", "1-1", "5-1", "4-2"],
                ["6-1", "2-1", "4-4", "4-4", "6-5", "6-5"],
                ["3-1", "5-5", "5-5", "3-3", "3-3", "6-4"],
                ["3-1", "2-2", "2-2", "6-4", "6-1", "5-1"],
            ],
            "actions": [
                P(0, "6-6", "6-6"),
                D(1, "4-4", "4-4"),
                D(2, "5-5", "5-5"),
                D(3, "2-2", "2-2"),
                P(0, "1-1", "1-1"),
                D(1, "6-5", "6-5"),
                D(2, "3-3", "3-3"),
                D(3, "6-4", "6-1"),
                P(0, "5-1"),
                P(1, "6-1"),
                D(2, "3-1"),
                D(3, "3-1"),
                P(1, "2-1"),
                P(0, "4-2"),
            ],
        },
        result(
            [T(0, 0, "6-6", "6-6"), T(0, 0, "1-1", "1-1"), T(0, 1, "6-1"), T(1, 0, "4-2")],
            [5, 1, 0, 0],
            0,
            [0] * 4,
            [20, -20, 0, 0],
        ),
    ),
    # 24_reduced_populace (no 5-1; nines and Supreme pair): A leads the Heaven quartet
    # (each pays 4 x 2 = 8) and then the Supreme pair (each pays 2 x 2 = 4) -> bonus +36.
    # A takes all 6 columns but its first lead cannot be beaten: no shutout doubling.
    # Last trick Supreme, x2: each pays 4 x 2 x 2 = 16.
    (
        "24_reduced_populace",
        {
            "rules": {"deck": "24_reduced_populace"},
            "banker": 0,
            "hands": [
                ["6-6", "6-6", "6-3", "5-4", "4-2", "2-1"],
                ["1-1", "1-1", "4-4", "4-4", "3-1", "3-1"],
                ["5-5", "5-5", "3-3", "3-3", "6-1", "6-1"],
                ["2-2", "2-2", "6-5", "6-5", "6-4", "6-4"],
            ],
            "actions": [
                P(0, "6-6", "6-6", "6-3", "5-4"),
                D(1, "1-1", "1-1", "4-4", "4-4"),
                D(2, "5-5", "5-5", "3-3", "3-3"),
                D(3, "2-2", "2-2", "6-5", "6-5"),
                P(0, "4-2", "2-1"),
                D(1, "3-1", "3-1"),
                D(2, "6-1", "6-1"),
                D(3, "6-4", "6-4"),
            ],
        },
        result(
            [T(0, 0, "6-6", "6-6", "6-3", "5-4"), T(0, 0, "4-2", "2-1")],
            [6, 0, 0, 0],
            0,
            [36, -12, -12, -12],
            [48, -16, -16, -16],
            last=2,
        ),
    ),
    # players 3 (deck 30_no_supreme, hands of 10, par 5, 0 columns pays 6 points).
    # A's Heaven quartet: B, C pay 4 x 2 = 8. B beats A's Man quartet with the Earth quartet:
    # A (banker) pays 8, C pays 4. Columns A 4, B 6, W = B: A pays (5-4) x 2 = 2, C pays 12.
    (
        "players=3",
        {
            "rules": {"players": 3},
            "banker": 0,
            "hands": [
                ["6-6", "6-6", "6-3", "5-4", "4-4", "4-4", "5-2", "4-3", "3-1", "5-1"],
                ["1-1", "1-1", "6-2", "5-3", "6-5", "6-5", "5-5", "5-5", "3-3", "3-3"],
                ["3-1", "2-2", "2-2", "6-4", "6-4", "6-1", "6-1", "5-1", "4-1", "3-2"],
            ],
            "actions": [
                P(0, "6-6", "6-6", "6-3", "5-4"),
                D(1, "5-5", "5-5", "3-3", "3-3"),
                D(2, "2-2", "2-2", "6-4", "6-4"),
                P(0, "4-4", "4-4", "5-2", "4-3"),
                P(1, "1-1", "1-1", "6-2", "5-3"),
                D(2, "6-1", "6-1", "5-1", "3-1"),
                P(1, "6-5", "6-5"),
                D(2, "4-1", "3-2"),
                D(0, "3-1", "5-1"),
            ],
        },
        result(
            [T(0, 0, "6-6", "6-6", "6-3", "5-4"), T(0, 1, "1-1", "1-1", "6-2", "5-3"), T(1, 1, "6-5", "6-5")],
            [4, 6, 0],
            1,
            [8, 4, -12],
            [-2, 14, -12],
        ),
    ),
]


@pytest.mark.parametrize("rec,expected", [c[1:] for c in DECK_CASES], ids=[c[0] for c in DECK_CASES])
def test_deck(rec, expected):
    assert replay(rec) == expected
    # Standard deals 8 tiles to each of 4 players: these hands are refused as a record.
    with pytest.raises(RecordError) as err:
        replay({**rec, "rules": "standard"})
    assert err.value.action_index is None


def test_three_player_preset_matches_players_switch():
    assert RuleSet.from_spec({"players": 3}) == RuleSet.from_spec("three_player")
    rules = RuleSet.from_spec("three_player")
    assert (rules.hand_size, rules.par, len(rules.deck_types)) == (10, 5, 30)


@pytest.mark.parametrize(
    "deck,supreme,classes",
    [
        ("32", ("4-2", "2-1"), {("6-3", "5-4"): "military_pair"}),
        (
            "24_weakened_military",
            ("6-3", "5-4"),
            {("6-6", "6-3"): "mixed_pair", ("6-3",): "military_single", ("6-6", "6-3", "5-4"): "triplet_1c2m"},
        ),
        ("24_supreme_civilians", ("4-2", "2-1"), {("6-3", "5-4"): None}),
        ("24_reduced_populace", ("4-2", "2-1"), {("6-3", "5-4"): "military_pair", ("5-1",): None}),
        ("30_no_supreme", None, {("4-2",): None, ("6-3", "5-4"): "military_pair"}),
    ],
)
def test_deck_combination_classes(deck, supreme, classes):
    from tiengow_env.tiles import parse_type

    players = 3 if deck == "30_no_supreme" else 4
    table = table_for(RuleSet.from_spec({"deck": deck, "players": players}))
    supremes = [c.names for c in table.combos if c.cls == "supreme_pair"]
    assert supremes == ([list(supreme)] if supreme else [])
    for tiles, cls in classes.items():
        j = table.find([parse_type(t) for t in tiles])
        assert (table.combos[j].cls if j >= 0 else None) == cls


@pytest.mark.parametrize("banker", [0, 1, 2, 3])
def test_one_red_dot_choice_decline_starts_play(banker):
    """A (the only holder) declines: whoever the banker is, play starts with the banker's lead."""
    game = Game(hands=RED_DOT["hands"], banker=banker, rules={"one_red_dot": "choice"})
    assert (game.phase, game.to_act) == ("declare", 0)
    game.play(DECLARE(0, False))
    assert (game.phase, game.to_act) == ("lead", banker)


def test_one_red_dot_modes_at_the_start():
    auto = Game(hands=RED_DOT["hands"], banker=2)
    choice = Game(hands=RED_DOT["hands"], banker=2, rules={"one_red_dot": "choice"})
    off = Game(hands=RED_DOT["hands"], banker=2, rules={"one_red_dot": "off"})
    assert auto.is_over and auto.result() == RED_DOT_RESULT
    assert (choice.phase, choice.to_act) == ("declare", 0)
    assert len(choice.legal_actions()) == 2  # declare, decline
    assert (off.phase, off.to_act) == ("lead", 2)


# ------------------------------------------------------------------------------------------
# Refused rule specs: ValueError naming what is valid.
# ------------------------------------------------------------------------------------------
REFUSED_SPECS = [
    ("unknown_switch", {"no_such_switch": True}, ["no_such_switch", "first_lead", "one_red_dot", "deck"]),
    ("bad_value", {"first_lead": "dealer"}, ["first_lead", "banker", "heaven_holder"]),
    ("bad_bool", {"must_beat_if_able": "yes"}, ["must_beat_if_able", "true"]),
    ("bad_players", {"players": 5}, ["players", "4", "3"]),
    ("bool_players", {"players": True}, ["players", "4", "3"]),
    ("bad_one_red_dot", {"one_red_dot": "sometimes"}, ["auto", "choice", "off"]),
    ("bad_combos", {"combos": "anything"}, ["classic", "pairs_only", "same_suit_any"]),
    ("bad_stakes", {"trick_bonus_stakes": [2, -1]}, ["trick_bonus_stakes", "non-negative"]),
    ("bad_stakes_length", {"trick_bonus_stakes": [2]}, ["trick_bonus_stakes"]),
    ("streak_without_hand_banker", {"banker_streak": True}, ["banker_streak", "banker_double", "hand_banker"]),
    ("streak_with_settling_banker", {"banker_streak": True, "banker_double": "settling_banker"}, ["hand_banker"]),
    ("civilian_triplets_same_suit", {"civilian_triplets": True, "combos": "same_suit_any"}, ["classic"]),
    ("civilian_triplets_pairs_only", {"civilian_triplets": True, "combos": "pairs_only"}, ["classic"]),
    ("deck_uneven", {"deck": "30_no_supreme"}, ["30", "evenly", "4"]),
    (
        "deck_odd_hand",
        {"deck": ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "3-1", "5-5", "5-5", "3-3", "3-3"]},
        ["even"],
    ),
    ("deck_unknown_tile", {"deck": ["6-6", "7-7", "1-1", "1-1"]}, ["7-7", "6-6", "2-1"]),
    ("deck_unknown_name", {"deck": "28_tiles"}, ["28_tiles", "32", "24_weakened_military"]),
    ("deck_too_many_copies", {"deck": ["6-3", "6-3", "6-6", "6-6"]}, ["6-3"]),
    ("unknown_preset", {"preset": "macau"}, ["macau", "standard", "hongkong", "micro"]),
    ("unknown_preset_name", "macau", ["macau", "standard", "culin1895", "seed001"]),
]


@pytest.mark.parametrize("spec,words", [c[1:] for c in REFUSED_SPECS], ids=[c[0] for c in REFUSED_SPECS])
def test_refused_rule_spec(spec, words):
    with pytest.raises(ValueError) as err:
        RuleSet.from_spec(spec)
    message = str(err.value)
    for word in words:
        assert word in message, f"{word!r} missing from {message!r}"
    # The same spec inside a hand record is refused as a record error (no action index).
    with pytest.raises(RecordError) as rec_err:
        replay({"rules": spec, "banker": 0, "hands": WORKED_1["hands"], "actions": []})
    assert rec_err.value.action_index is None


def test_combination_table_sizes():
    table = table_for(RuleSet.from_spec("standard"))
    assert table.num_combos == 61
    assert len(table.physical_masks()) == 84
    # pairs_only drops the 8 + 4 triplets and 4 quartets; civilian_triplets adds 2.
    assert table_for(RuleSet.from_spec({"combos": "pairs_only"})).num_combos == 61 - 16
    assert table_for(RuleSet.from_spec({"civilian_triplets": True})).num_combos == 63


# ------------------------------------------------------------------------------------------
# Every preset plays random hands to the end.
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["standard", "culin1895", "hongkong", "three_player", "micro", "seed001"])
def test_preset_plays_random_hands(preset):
    rules = PRESETS[preset]
    rng = np.random.default_rng(1234)
    for seed in range(25):
        game = Game(seed=seed, rules=preset)
        assert 0 <= game.banker < rules.players
        assert sorted(t for s in range(rules.players) for t in game.dealt(s)) == sorted(_deck_names(rules))
        steps = 0
        while not game.is_over:
            legal = game.legal_actions()
            assert legal, f"{preset} seed {seed}: no legal action for seat {game.to_act}"
            game.step(int(rng.choice(legal)))
            steps += 1
            assert steps < 200
        res = game.result()
        assert sum(res["columns"]) == rules.hand_size
        assert sum(res["net"]) == 0
        assert res["last_trick_winner"] in range(rules.players)


def _deck_names(rules: RuleSet) -> list[str]:
    from tiengow_env.tiles import NAMES

    return [NAMES[t] for t in rules.deck_types]


# ------------------------------------------------------------------------------------------
# civilian_triplets: a class of their own (Pendulum above Fish) that beats no other triplet.
# ------------------------------------------------------------------------------------------
def _deal_around(lead: list[str], answer: list[str]) -> list[list[str]]:
    """A holds ``lead``, B holds ``answer``; the rest of the deck fills the hands in order."""
    rest = _deck_names(RuleSet.from_spec("standard"))
    for tile in lead + answer:
        rest.remove(tile)
    hands = [list(lead), list(answer), [], []]
    for hand in hands:
        while len(hand) < 8:
            hand.append(rest.pop(0))
    return hands


@pytest.mark.parametrize(
    "lead,answer,beats",
    [
        (["1-1", "3-3", "2-2"], ["6-6", "4-4", "5-5"], True),  # Pendulum beats Fish
        (["6-6", "4-4", "5-5"], ["1-1", "3-3", "2-2"], False),  # Fish does not beat Pendulum
        (["1-1", "1-1", "6-2"], ["6-6", "4-4", "5-5"], False),  # Pendulum does not beat a 2C1M
        (["3-1", "4-1", "3-2"], ["6-6", "4-4", "5-5"], False),  # ... nor a 1C2M
        (["1-1", "3-3", "2-2"], ["6-6", "6-6", "6-3"], False),  # a 2C1M does not beat Fish
        (["1-1", "3-3", "2-2"], ["6-6", "6-3", "5-4"], False),  # nor does a 1C2M
    ],
)
def test_civilian_triplet_class(lead, answer, beats):
    from tiengow_env.tiles import parse_type

    hands = _deal_around(lead, answer)
    game = Game(hands=hands, banker=0, rules={"civilian_triplets": True, "one_red_dot": "off"})
    game.play(P(0, *lead))
    combo = game.combos.find([parse_type(t) for t in answer])
    assert combo >= 0
    assert (combo in game.legal_actions()) is beats
    if beats:
        game.play(P(1, *answer))
        assert game.to_act == 2
    else:
        with pytest.raises(ValueError):
            game.play(P(1, *answer))
    # Under standard neither civilian triplet is a combination at all.
    standard = table_for(RuleSet.from_spec("standard"))
    assert standard.find([parse_type(t) for t in ["6-6", "4-4", "5-5"]]) == -1
