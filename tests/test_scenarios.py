"""Scripted hands for every rule of RULES.md sections 4 to 6, with results worked out by hand.

Each case is a complete hand record (explicit deal, banker, every action) beside the replay
result computed from RULES.md, not from the engine. The comment above each case gives the
arithmetic. Seats: A = 0, B = 1, C = 2, D = 3. "T3" is the third trick of the hand.

Standard settlement (RULES.md section 6): points are 5 for 0 columns, 4 - c for 1 to 3, 0 for
4, and -(c - 4) (W pays) for 5 or more; chips = points x 2 x multipliers.
"""

from __future__ import annotations

import pytest
from scripted import D, P, T

from tiengow_env import layout as L
from tiengow_env.combos import table_for
from tiengow_env.game import Game, RecordError, replay
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NAMES


def record(case: dict, actions: list | None = None) -> dict:
    out = {
        "rules": case.get("rules", "standard"),
        "banker": case["banker"],
        "hands": case["hands"],
        "actions": case["actions"] if actions is None else actions,
    }
    if "streak" in case:
        out["streak"] = case["streak"]
    return out


NO_MULT = {"last_trick": 1, "shutout": 1}

# ------------------------------------------------------------------------------------------
# Complete hands. "expect" holds every field of the replay output.
# ------------------------------------------------------------------------------------------
SCENARIOS = [
    # Worked check 1 (section 6): A is banker and wins the last trick; B has 0 columns, C 3, D 2.
    # B pays 5 x 2 = 10, C pays (4-3) x 2 = 2, D pays (4-2) x 2 = 4; A receives 16.
    # T7 is a single with every player holding one tile: B (no column) discards by early death.
    dict(
        id="worked_check_1_settlement",
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
        expect=dict(
            tricks=[
                T(0, 0, "6-6"),
                T(0, 2, "6-4"),
                T(2, 2, "5-5", "5-5"),
                T(2, 3, "6-1"),
                T(3, 3, "6-5"),
                T(3, 0, "1-1"),
                T(0, 0, "1-1"),
            ],
            columns=[3, 0, 3, 2],
            last_trick_winner=0,
            trick_bonus=[0, 0, 0, 0],
            settlement=[16, -10, -2, -4],
            multipliers=NO_MULT,
            net=[16, -10, -2, -4],
        ),
    ),
    # Worked check 2 (section 5): C wins T2 with the Supreme pair while A is banker:
    # B and D pay C 2 each, A pays C 4 -> bonus [-4, -2, +8, -2].
    # Settlement, W = A (last trick a civil pair): A 5 columns, B 0, C 3, D 0.
    # B pays 10, C pays 2, D pays 10 -> A +22.  Net [18, -12, 6, -12].
    dict(
        id="worked_check_2_supreme_bonus_non_banker",
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
        expect=dict(
            tricks=[
                T(0, 2, "6-6"),
                T(2, 2, "4-2", "2-1"),
                T(2, 0, "1-1"),
                T(0, 0, "4-4", "4-4"),
                T(0, 0, "5-5", "5-5"),
            ],
            columns=[5, 0, 3, 0],
            last_trick_winner=0,
            trick_bonus=[-4, -2, 8, -2],
            settlement=[22, -10, -2, -10],
            multipliers=NO_MULT,
            net=[18, -12, 6, -12],
        ),
    ),
    # Worked check 3 (section 5): banker B wins T1 with the Earth & Eight quartet
    # (1-1 1-1 6-2 5-3, stake 4, doubled for the banker): A, C, D each pay B 8 -> B +24.
    # D wins the last trick (a civil pair): B has 6 columns, so D pays B (6-4) x 2 = 4;
    # A and C (0 columns) pay D 10 each.  Net: A -18, B 28, C -18, D -8 + 20 - 4 = 8.
    dict(
        id="worked_check_3_quartet_bonus_banker",
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
        expect=dict(
            tricks=[T(1, 1, "1-1", "1-1", "6-2", "5-3"), T(1, 1, "3-1", "4-1"), T(1, 3, "6-4", "6-4")],
            columns=[0, 6, 0, 2],
            last_trick_winner=3,
            trick_bonus=[-8, 24, -8, -8],
            settlement=[-10, 4, -10, 16],
            multipliers=NO_MULT,
            net=[-18, 28, -18, 8],
        ),
    ),
    # Worked check 4: A holds exactly one red pip (3-1; every other tile has none) and declares
    # One Red Dot automatically. A is W with all 8 columns; shutout x2: each pays 5 x 2 x 2 = 20.
    dict(
        id="worked_check_4_one_red_dot",
        banker=2,
        hands=[
            ["5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5", "3-1"],
            ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "6-5"],
            ["6-4", "6-4", "6-1", "6-1", "5-1", "5-1", "6-3", "5-4"],
            ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        actions=[],
        expect=dict(
            tricks=[],
            columns=[8, 0, 0, 0],
            last_trick_winner=0,
            trick_bonus=[0, 0, 0, 0],
            settlement=[60, -20, -20, -20],
            multipliers={"last_trick": 1, "shutout": 2},
            net=[60, -20, -20, -20],
        ),
    ),
    # Equal military tiles never beat: A leads 6-3, B (holding 5-4) can only discard; A leads
    # 5-3, C (holding 6-2) can only discard. The earlier plays stand. B then takes the rest.
    # Columns A 2, B 6, W = B: A pays (4-2) x 2 = 4, C and D pay 10 each -> B +24.
    # T6: C and D (no column) are forced by early death (omitted in the record); A discards.
    dict(
        id="equal_military_earlier_play_stands",
        banker=0,
        hands=[
            ["6-3", "5-3", "5-1", "4-4", "3-1", "3-1", "5-5", "5-5"],
            ["5-4", "2-2", "6-1", "6-6", "6-6", "1-1", "1-1", "4-4"],
            ["6-2", "3-3", "3-3", "2-2", "6-5", "6-5", "6-4", "6-4"],
            ["5-2", "6-1", "5-1", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        actions=[
            P(0, "6-3"),
            D(1, "5-4"),
            D(2, "3-3"),
            D(3, "4-3"),
            P(0, "5-3"),
            D(1, "2-2"),
            D(2, "6-2"),
            D(3, "5-2"),
            P(0, "5-1"),
            P(1, "6-1"),
            D(2, "3-3"),
            D(3, "6-1"),
            P(1, "6-6", "6-6"),
            D(2, "2-2", "6-5"),
            D(3, "5-1", "4-2"),
            D(0, "4-4", "3-1"),
            P(1, "1-1", "1-1"),
            D(2, "6-5", "6-4"),
            D(3, "4-1", "3-2"),
            D(0, "3-1", "5-5"),
            P(1, "4-4"),
            D(0, "5-5"),
        ],
        expect=dict(
            tricks=[
                T(0, 0, "6-3"),
                T(0, 0, "5-3"),
                T(0, 1, "6-1"),
                T(1, 1, "6-6", "6-6"),
                T(1, 1, "1-1", "1-1"),
                T(1, 1, "4-4"),
            ],
            columns=[2, 6, 0, 0],
            last_trick_winner=1,
            trick_bonus=[0, 0, 0, 0],
            settlement=[-4, 24, -10, -10],
            multipliers=NO_MULT,
            net=[-4, 24, -10, -10],
        ),
    ),
    # 2C1M vs 1C2M: A leads the Earth 2C1M (1-1 1-1 5-3); B holds the Heaven 1C2M
    # (6-6 6-3 5-4), a different class, so B can only discard. In T2 C beats A's Goose 1C2M
    # with the Man 1C2M (same class, higher family). T3: D, a follower, can only discard the
    # Supreme pair. Columns A 3, C 5, W = C: A pays (4-3) x 2 = 2, B and D pay 10 -> C +22.
    dict(
        id="triplet_classes_2c1m_vs_1c2m",
        banker=0,
        hands=[
            ["1-1", "1-1", "5-3", "3-1", "4-1", "3-2", "6-1", "6-1"],
            ["6-6", "6-3", "5-4", "4-4", "3-1", "3-3", "3-3", "2-2"],
            ["6-6", "2-2", "6-2", "4-4", "5-2", "4-3", "5-5", "5-5"],
            ["6-5", "6-5", "6-4", "6-4", "5-1", "5-1", "4-2", "2-1"],
        ],
        actions=[
            P(0, "1-1", "1-1", "5-3"),
            D(1, "6-6", "6-3", "5-4"),
            D(2, "6-6", "2-2", "6-2"),
            D(3, "6-5", "6-5", "6-4"),
            P(0, "3-1", "4-1", "3-2"),
            D(1, "4-4", "3-1", "2-2"),
            P(2, "4-4", "5-2", "4-3"),
            D(3, "6-4", "5-1", "5-1"),
            P(2, "5-5", "5-5"),
            D(3, "4-2", "2-1"),
            D(0, "6-1", "6-1"),
            D(1, "3-3", "3-3"),
        ],
        expect=dict(
            tricks=[T(0, 0, "1-1", "1-1", "5-3"), T(0, 2, "4-4", "5-2", "4-3"), T(2, 2, "5-5", "5-5")],
            columns=[3, 0, 5, 0],
            last_trick_winner=2,
            trick_bonus=[0, 0, 0, 0],
            settlement=[-2, -10, 22, -10],
            multipliers=NO_MULT,
            net=[-2, -10, 22, -10],
        ),
    ),
    # Settlement rows 1-3 and 4: W = A with 3 columns; B has exactly 4 (pays 0), C has 1
    # (pays (4-1) x 2 = 6), D has 0 (pays 10) -> A +16. B wins T1 by beating A's 5-1 pair.
    dict(
        id="settlement_four_columns_pay_nothing",
        banker=0,
        hands=[
            ["5-1", "5-1", "3-3", "3-3", "6-5", "6-6", "4-4", "4-4"],
            ["6-1", "6-1", "2-2", "2-2", "6-4", "6-6", "1-1", "6-4"],
            ["1-1", "6-5", "3-1", "3-1", "5-5", "5-5", "6-3", "5-4"],
            ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        actions=[
            P(0, "5-1", "5-1"),
            P(1, "6-1", "6-1"),
            D(2, "3-1", "3-1"),
            D(3, "6-2", "5-3"),
            P(1, "2-2", "2-2"),
            D(2, "5-5", "5-5"),
            D(3, "5-2", "4-3"),
            D(0, "3-3", "3-3"),
            P(1, "6-4"),
            P(2, "1-1"),
            D(3, "4-2"),
            D(0, "6-5"),
            P(2, "6-5"),
            D(3, "4-1"),
            P(0, "6-6"),
            D(1, "6-4"),
            P(0, "4-4", "4-4"),
            D(1, "6-6", "1-1"),
            D(2, "6-3", "5-4"),
            D(3, "3-2", "2-1"),
        ],
        expect=dict(
            tricks=[
                T(0, 1, "6-1", "6-1"),
                T(1, 1, "2-2", "2-2"),
                T(1, 2, "1-1"),
                T(2, 0, "6-6"),
                T(0, 0, "4-4", "4-4"),
            ],
            columns=[3, 4, 1, 0],
            last_trick_winner=0,
            trick_bonus=[0, 0, 0, 0],
            settlement=[16, 0, -6, -10],
            multipliers=NO_MULT,
            net=[16, 0, -6, -10],
        ),
    ),
    # Last-trick bonus, Supreme pair, won by the banker: T5 bonus, each pays A 2 x 2 = 4.
    # Columns A 7, B 1: B pays 3 x 2 x 2 = 12, C and D pay 5 x 2 x 2 = 20 -> A +52.
    # Net: A 12 + 52 = 64, B -16, C -24, D -24.
    dict(
        id="last_trick_supreme_banker_bonus",
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
        expect=dict(
            tricks=[
                T(0, 1, "6-1"),
                T(1, 0, "6-1"),
                T(0, 0, "1-1", "1-1"),
                T(0, 0, "4-4", "4-4"),
                T(0, 0, "4-2", "2-1"),
            ],
            columns=[7, 1, 0, 0],
            last_trick_winner=0,
            trick_bonus=[12, -4, -4, -4],
            settlement=[52, -12, -20, -20],
            multipliers={"last_trick": 2, "shutout": 1},
            net=[64, -16, -24, -24],
        ),
    ),
    # Last-trick bonus, quartet, won by C (not the banker): Heaven quartet, stake 4:
    # A (banker) pays 8, B and D pay 4 -> C +16. Columns A 1, C 7, W = C, last trick x2:
    # A pays 3 x 2 x 2 = 12, B and D pay 20 -> C +52. Net: A -20, B -24, C 68, D -24.
    dict(
        id="last_trick_quartet_non_banker_bonus",
        banker=0,
        hands=[
            ["5-1", "6-1", "4-4", "4-4", "3-1", "3-1", "5-5", "5-5"],
            ["3-3", "3-3", "2-2", "2-2", "6-5", "6-5", "6-4", "6-4"],
            ["6-1", "5-1", "1-1", "1-1", "6-6", "6-6", "6-3", "5-4"],
            ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        actions=[
            P(0, "5-1"),
            D(1, "3-3"),
            P(2, "6-1"),
            D(3, "6-2"),
            P(2, "5-1"),
            D(3, "5-3"),
            P(0, "6-1"),
            D(1, "3-3"),
            P(0, "4-4", "4-4"),
            D(1, "2-2", "2-2"),
            P(2, "1-1", "1-1"),
            D(3, "5-2", "4-3"),
            P(2, "6-6", "6-6", "6-3", "5-4"),
            D(3, "4-2", "4-1", "3-2", "2-1"),
            D(0, "3-1", "3-1", "5-5", "5-5"),
            D(1, "6-5", "6-5", "6-4", "6-4"),
        ],
        expect=dict(
            tricks=[T(0, 2, "6-1"), T(2, 0, "6-1"), T(0, 2, "1-1", "1-1"), T(2, 2, "6-6", "6-6", "6-3", "5-4")],
            columns=[1, 0, 7, 0],
            last_trick_winner=2,
            trick_bonus=[-8, -4, 16, -4],
            settlement=[-12, -20, 52, -20],
            multipliers={"last_trick": 2, "shutout": 1},
            net=[-20, -24, 68, -24],
        ),
    ),
    # Last-trick bonus, single 2-1: A leads the Little Three last and nobody beats it (B holds
    # 6-3 and discards; C, D are forced). Columns A 7, B 1: B pays 3 x 2 x 2 = 12, C, D 20 each.
    dict(
        id="last_trick_single_little_three",
        banker=0,
        hands=[
            ["6-6", "5-1", "6-1", "1-1", "1-1", "4-4", "4-4", "2-1"],
            ["6-6", "6-1", "5-1", "3-1", "3-1", "5-5", "5-5", "6-3"],
            ["3-3", "3-3", "2-2", "2-2", "6-5", "6-5", "6-4", "6-4"],
            ["5-4", "6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2"],
        ],
        actions=[
            P(0, "6-6"),
            D(1, "6-6"),
            D(2, "3-3"),
            D(3, "5-4"),
            P(0, "5-1"),
            P(1, "6-1"),
            D(2, "3-3"),
            D(3, "6-2"),
            P(1, "5-1"),
            D(2, "2-2"),
            D(3, "5-3"),
            P(0, "6-1"),
            P(0, "1-1", "1-1"),
            D(1, "3-1", "3-1"),
            D(2, "2-2", "6-5"),
            D(3, "5-2", "4-3"),
            P(0, "4-4", "4-4"),
            D(1, "5-5", "5-5"),
            D(2, "6-5", "6-4"),
            D(3, "4-2", "4-1"),
            P(0, "2-1"),
            D(1, "6-3"),
        ],
        expect=dict(
            tricks=[
                T(0, 0, "6-6"),
                T(0, 1, "6-1"),
                T(1, 0, "6-1"),
                T(0, 0, "1-1", "1-1"),
                T(0, 0, "4-4", "4-4"),
                T(0, 0, "2-1"),
            ],
            columns=[7, 1, 0, 0],
            last_trick_winner=0,
            trick_bonus=[0, 0, 0, 0],
            settlement=[52, -12, -20, -20],
            multipliers={"last_trick": 2, "shutout": 1},
            net=[52, -12, -20, -20],
        ),
    ),
    # Shutout exception applies: banker A first leads the 1-1 pair while holding one 6-6; the
    # single 6-6 left outside cannot make the 6-6 pair, so the lead is unbeatable in A's eyes.
    # A takes all 8 columns but there is no shutout doubling: each pays 5 x 2 = 10.
    # (T5: B, C, D are forced by early death; the record leaves those discards out.)
    dict(
        id="shutout_exception_banker_unbeatable_in_own_eyes",
        banker=0,
        hands=[
            ["1-1", "1-1", "6-6", "4-4", "4-4", "3-1", "3-1", "5-5"],
            ["6-6", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5", "6-5"],
            ["6-4", "6-4", "6-1", "6-1", "5-1", "5-1", "6-3", "5-4"],
            ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        actions=[
            P(0, "1-1", "1-1"),
            D(1, "3-3", "3-3"),
            D(2, "6-4", "6-4"),
            D(3, "6-2", "5-3"),
            P(0, "6-6"),
            D(1, "6-6"),
            D(2, "6-1"),
            D(3, "5-2"),
            P(0, "4-4", "4-4"),
            D(1, "2-2", "2-2"),
            D(2, "6-1", "5-1"),
            D(3, "4-3", "4-2"),
            P(0, "3-1", "3-1"),
            D(1, "6-5", "6-5"),
            D(2, "5-1", "6-3"),
            D(3, "4-1", "3-2"),
            P(0, "5-5"),
        ],
        expect=dict(
            tricks=[
                T(0, 0, "1-1", "1-1"),
                T(0, 0, "6-6"),
                T(0, 0, "4-4", "4-4"),
                T(0, 0, "3-1", "3-1"),
                T(0, 0, "5-5"),
            ],
            columns=[8, 0, 0, 0],
            last_trick_winner=0,
            trick_bonus=[0, 0, 0, 0],
            settlement=[30, -10, -10, -10],
            multipliers=NO_MULT,
            net=[30, -10, -10, -10],
        ),
    ),
    # Shutout exception does not apply: banker A leads the 1-1 pair holding no 6-6, so the
    # 6-6 pair outside (B holds it, and chooses to discard it) beats it in A's eyes.
    # A takes all 8 columns: shutout x2, each pays 5 x 2 x 2 = 20.
    dict(
        id="shutout_banker_lead_beatable",
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
        expect=dict(
            tricks=[T(0, 0, "1-1", "1-1"), T(0, 0, "4-4", "4-4"), T(0, 0, "3-1", "3-1"), T(0, 0, "5-5", "5-5")],
            columns=[8, 0, 0, 0],
            last_trick_winner=0,
            trick_bonus=[0, 0, 0, 0],
            settlement=[60, -20, -20, -20],
            multipliers={"last_trick": 1, "shutout": 2},
            net=[60, -20, -20, -20],
        ),
    ),
    # Shutout by a player who is not the banker: B beats A's 5-1 with 6-6 and takes every
    # trick. The exception is for the banker only, so x2: each pays 5 x 2 x 2 = 20.
    # T5: A, C, D are forced by early death; this record spells those discards out.
    dict(
        id="shutout_non_banker",
        banker=0,
        hands=[
            ["5-1", "5-1", "5-5", "5-5", "3-3", "3-3", "2-2", "2-2"],
            ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "3-1"],
            ["6-5", "6-5", "6-4", "6-4", "6-1", "6-1", "6-3", "5-4"],
            ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        actions=[
            P(0, "5-1"),
            P(1, "6-6"),
            D(2, "6-5"),
            D(3, "6-2"),
            P(1, "1-1", "1-1"),
            D(2, "6-5", "6-4"),
            D(3, "5-3", "5-2"),
            D(0, "5-1", "5-5"),
            P(1, "4-4", "4-4"),
            D(2, "6-4", "6-1"),
            D(3, "4-3", "4-2"),
            D(0, "5-5", "3-3"),
            P(1, "3-1", "3-1"),
            D(2, "6-1", "6-3"),
            D(3, "4-1", "3-2"),
            D(0, "3-3", "2-2"),
            P(1, "6-6"),
            D(2, "5-4"),
            D(3, "2-1"),
            D(0, "2-2"),
        ],
        expect=dict(
            tricks=[
                T(0, 1, "6-6"),
                T(1, 1, "1-1", "1-1"),
                T(1, 1, "4-4", "4-4"),
                T(1, 1, "3-1", "3-1"),
                T(1, 1, "6-6"),
            ],
            columns=[0, 8, 0, 0],
            last_trick_winner=1,
            trick_bonus=[0, 0, 0, 0],
            settlement=[-20, 60, -20, -20],
            multipliers={"last_trick": 1, "shutout": 2},
            net=[-20, 60, -20, -20],
        ),
    ),
    # Big Six captures Little Three: B leads 2-1 in the last trick, D wins it with 4-2.
    # Columns A 5, B 1, C 0, D 2; W = D. Without the capture: D pays A (5-4) x 2 = 2,
    # B pays 3 x 2 = 6, C pays 5 x 2 = 10. With it, B (the leader of 2-1) pays 6 + 10 = 16
    # and C pays nothing; the 2 that D pays A is unchanged. A holds 6-3 and may discard it.
    dict(
        id="big_six_captures_little_three",
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
        expect=dict(
            tricks=[
                T(0, 0, "1-1", "1-1"),
                T(0, 0, "4-4", "4-4"),
                T(0, 0, "6-6"),
                T(0, 3, "6-1"),
                T(3, 1, "6-1"),
                T(1, 3, "4-2"),
            ],
            columns=[5, 1, 0, 2],
            last_trick_winner=3,
            trick_bonus=[0, 0, 0, 0],
            settlement=[2, -16, 0, 14],
            multipliers=NO_MULT,
            net=[2, -16, 0, 14],
        ),
    ),
    # Early death: in T6 every player holds one tile. C and D have no column, so they discard
    # (C's 6-6 would have beaten everything). B leads 5-1, A (with columns) beats with 6-1.
    # Columns A 6, B 2, W = A: B pays (4-2) x 2 = 4, C and D pay 10 -> A +24.
    dict(
        id="early_death_forced_discards_omitted",
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
        expect=dict(
            tricks=[
                T(0, 0, "1-1", "1-1"),
                T(0, 0, "4-4", "4-4"),
                T(0, 1, "6-4"),
                T(1, 0, "3-1"),
                T(0, 1, "3-3"),
                T(1, 0, "6-1"),
            ],
            columns=[6, 2, 0, 0],
            last_trick_winner=0,
            trick_bonus=[0, 0, 0, 0],
            settlement=[24, -4, -10, -10],
            multipliers=NO_MULT,
            net=[24, -4, -10, -10],
        ),
    ),
    # No early death on a last trick of 2 tiles: C has no column but may beat A's 5-1 pair
    # with the 1-1 pair and so wins the last trick. Columns A 6, C 2, W = C:
    # C pays A (6-4) x 2 = 4, B and D pay C 10 each -> C +16.
    dict(
        id="no_early_death_on_last_trick_of_two",
        banker=0,
        hands=[
            ["4-4", "4-4", "3-1", "3-1", "6-6", "6-5", "5-1", "5-1"],
            ["6-6", "5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5"],
            ["6-4", "6-4", "6-1", "6-1", "6-3", "5-4", "1-1", "1-1"],
            ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
        ],
        actions=[
            P(0, "4-4", "4-4"),
            D(1, "5-5", "5-5"),
            D(2, "6-4", "6-4"),
            D(3, "6-2", "5-3"),
            P(0, "3-1", "3-1"),
            D(1, "3-3", "3-3"),
            D(2, "6-1", "6-1"),
            D(3, "5-2", "4-3"),
            P(0, "6-6"),
            D(1, "6-6"),
            D(2, "6-3"),
            D(3, "4-2"),
            P(0, "6-5"),
            D(1, "6-5"),
            D(2, "5-4"),
            D(3, "4-1"),
            P(0, "5-1", "5-1"),
            D(1, "2-2", "2-2"),
            P(2, "1-1", "1-1"),
            D(3, "3-2", "2-1"),
        ],
        expect=dict(
            tricks=[
                T(0, 0, "4-4", "4-4"),
                T(0, 0, "3-1", "3-1"),
                T(0, 0, "6-6"),
                T(0, 0, "6-5"),
                T(0, 2, "1-1", "1-1"),
            ],
            columns=[6, 0, 2, 0],
            last_trick_winner=2,
            trick_bonus=[0, 0, 0, 0],
            settlement=[4, -10, 16, -10],
            multipliers=NO_MULT,
            net=[4, -10, 16, -10],
        ),
    ),
]
SCENARIO_IDS = [case["id"] for case in SCENARIOS]
BY_ID = {case["id"]: case for case in SCENARIOS}


@pytest.mark.parametrize("case", SCENARIOS, ids=SCENARIO_IDS)
def test_scenario_result(case):
    got = replay(record(case))
    assert got == case["expect"]
    assert sum(got["net"]) == 0
    assert sum(got["columns"]) == 8


@pytest.mark.parametrize("case", SCENARIOS, ids=SCENARIO_IDS)
def test_scenario_is_dealt_from_the_whole_deck(case):
    """Guard on the table itself: every deal above uses each tile of the 32 exactly once."""
    tiles = sorted(t for hand in case["hands"] for t in hand)
    full = sorted(NAMES[t] for t in RuleSet.from_spec("standard").deck_types)
    assert tiles == full
    assert all(len(hand) == 8 for hand in case["hands"])


# ------------------------------------------------------------------------------------------
# Early-death discards: a record may omit or include them, with the same result.
# ------------------------------------------------------------------------------------------
def _with_forced(case_id: str, forced: dict[int, list]) -> list:
    """The actions of a case with the forced discards inserted after the given indices."""
    out = []
    for i, action in enumerate(BY_ID[case_id]["actions"]):
        out.append(action)
        out.extend(forced.get(i, []))
    return out


FORCED_VARIANTS = [
    # T6 of the early-death case: B leads (index 20); C and D are forced before A answers.
    (
        "early_death_forced_discards_omitted",
        "C+D",
        _with_forced("early_death_forced_discards_omitted", {20: [D(2, "6-6"), D(3, "2-1")]}),
    ),
    (
        "early_death_forced_discards_omitted",
        "C",
        _with_forced("early_death_forced_discards_omitted", {20: [D(2, "6-6")]}),
    ),
    (
        "early_death_forced_discards_omitted",
        "D",
        _with_forced("early_death_forced_discards_omitted", {20: [D(3, "2-1")]}),
    ),
    # The shutout-exception case: A leads 5-5 last (index 16); B, C, D are all forced.
    (
        "shutout_exception_banker_unbeatable_in_own_eyes",
        "B+C+D",
        _with_forced("shutout_exception_banker_unbeatable_in_own_eyes", {16: [D(1, "5-5"), D(2, "5-4"), D(3, "2-1")]}),
    ),
    (
        "shutout_exception_banker_unbeatable_in_own_eyes",
        "B+D",
        _with_forced("shutout_exception_banker_unbeatable_in_own_eyes", {16: [D(1, "5-5"), D(3, "2-1")]}),
    ),
    # The non-banker shutout spells all three out; the record without them gives the same.
    ("shutout_non_banker", "none", BY_ID["shutout_non_banker"]["actions"][:-3]),
]


@pytest.mark.parametrize(
    "case_id,spelled_out,actions", FORCED_VARIANTS, ids=[f"{c}-{s}" for c, s, _ in FORCED_VARIANTS]
)
def test_forced_discards_may_be_included_or_omitted(case_id, spelled_out, actions):
    case = BY_ID[case_id]
    assert len(actions) != len(case["actions"])
    assert replay(record(case, actions)) == case["expect"]


@pytest.mark.parametrize(
    "bad_action,reason",
    [
        (P(2, "6-6"), "must discard 6-6 by early death"),  # C, with no column, may not play its 6-6
        (D(2, "5-5"), "seat 2"),  # nor discard a tile it does not hold
    ],
)
def test_forced_seat_cannot_act_otherwise(bad_action, reason):
    case = BY_ID["early_death_forced_discards_omitted"]
    actions = case["actions"][:21] + [bad_action] + case["actions"][21:]
    with pytest.raises(RecordError) as err:
        replay(record(case, actions))
    assert err.value.action_index == 21
    assert reason in str(err.value)


def test_early_death_skips_seats_without_columns():
    """After B's last lead, C and D have discarded on their own and A (with columns) is to act."""
    case = BY_ID["early_death_forced_discards_omitted"]
    game = Game(hands=case["hands"], banker=0)
    for action in case["actions"][:20]:
        game.play(action)
    # T6 starts with one tile each. The leader is never forced: B leads with a free choice.
    assert (game.phase, game.to_act) == ("lead", 1)
    assert [len(game.hand(s)) for s in range(4)] == [1, 1, 1, 1]
    assert game.legal_actions() == [game.combos.find([10])]  # play 5-1 (its one tile)
    game.play(case["actions"][20])
    assert game.to_act == 0
    assert game.hand(2) == [] and game.hand(3) == []
    assert game.hand(0) == ["6-1"]
    assert sorted(game.forced) == [(2, 0), (3, 20)]  # (seat, tile type): 6-6 and 2-1


# ------------------------------------------------------------------------------------------
# Illegal versions of the scenario hands: the refused action and its index.
# ------------------------------------------------------------------------------------------
def _replace(case_id: str, index: int, action: dict) -> list:
    actions = list(BY_ID[case_id]["actions"])
    actions[index] = action
    return actions


REFUSED = [
    # 5-4 equals the 6-3 led: it does not beat, so the earlier play stands.
    ("equal_military_earlier_play_stands", 1, P(1, "5-4"), "does not beat"),
    # 6-2 equals the 5-3 led.
    ("equal_military_earlier_play_stands", 6, P(2, "6-2"), "does not beat"),
    # A Heaven 1C2M cannot beat an Earth 2C1M: different classes.
    ("triplet_classes_2c1m_vs_1c2m", 1, P(1, "6-6", "6-3", "5-4"), "cannot beat"),
    # A follower's Supreme pair can only go down as a discard.
    ("triplet_classes_2c1m_vs_1c2m", 9, P(3, "4-2", "2-1"), "cannot beat"),
    # Nothing beats the Supreme pair led: B's civil pair 2-2 2-2 is another class.
    ("worked_check_2_supreme_bonus_non_banker", 7, P(1, "2-2", "2-2"), "cannot beat"),
    # The 6-6 played on a 6-6 lead ties and does not beat.
    ("worked_check_1_settlement", 1, P(1, "6-6"), "does not beat"),
    # A 4-tile answer to a 2-tile lead.
    ("last_trick_quartet_non_banker_bonus", 10, P(2, "6-6", "6-6", "6-3", "5-4"), "exactly 2 tile"),
    # B's 2-2 pair on A's 1-1 pair: same class, lower.
    ("shutout_banker_lead_beatable", 1, P(1, "2-2", "2-2"), "does not beat"),
]


@pytest.mark.parametrize("case_id,index,action,reason", REFUSED, ids=[f"{c}@{i}" for c, i, _, _ in REFUSED])
def test_scenario_refuses_illegal_play(case_id, index, action, reason):
    actions = _replace(case_id, index, action)
    with pytest.raises(RecordError) as err:
        replay(record(BY_ID[case_id], actions))
    assert err.value.action_index == index
    assert reason in str(err.value)


def test_follower_may_discard_although_able_to_beat():
    """In the beatable-shutout hand B holds the 6-6 pair on A's 1-1 pair: beating is legal,
    and the discard B chose is legal too (and A keeps the trick)."""
    case = BY_ID["shutout_banker_lead_beatable"]
    game = Game(hands=case["hands"], banker=0)
    game.play(case["actions"][0])
    table = table_for(game.rules)
    pair_66 = table.find([0, 0])
    assert pair_66 in game.legal_actions()
    probe = game.clone()
    probe.play(P(1, "6-6", "6-6"))  # the beat is accepted ...
    game.play(case["actions"][1])  # ... and so is the discard of the very same tiles
    assert replay(record(case))["tricks"][0]["winner"] == 0


# ------------------------------------------------------------------------------------------
# Beating, one trick at a time (RULES.md section 2): lead by A, then answers by B, C, D.
# A refused answer is discarded instead (the same tiles), which is always allowed.
# ------------------------------------------------------------------------------------------
FULL_DECK = sorted(NAMES[t] for t in RuleSet.from_spec("standard").deck_types)


def deal_around(*holdings: list[str]) -> list[list[str]]:
    """Four hands of 8: seat s holds holdings[s], the rest of the deck fills up in order."""
    rest = list(FULL_DECK)
    for hold in holdings:
        for tile in hold:
            rest.remove(tile)
    hands = []
    for s in range(4):
        hand = list(holdings[s]) if s < len(holdings) else []
        while len(hand) < 8:
            hand.append(rest.pop(0))
        hands.append(hand)
    return hands


BEATS = [
    # (id, lead by A, [(answer of B, C, D in turn, accepted?)])
    ("equal_nines", ["6-3"], [(["5-4"], False)]),
    ("equal_nines_reversed", ["5-4"], [(["6-3"], False)]),
    ("equal_eights", ["6-2"], [(["5-3"], False)]),
    ("equal_sevens", ["4-3"], [(["5-2"], False)]),
    ("equal_fives", ["3-2"], [(["4-1"], False)]),
    ("equal_after_a_beat", ["5-2"], [(["6-2"], True), (["5-3"], False), (["6-3"], True)]),
    ("civil_single_ties", ["6-6"], [(["6-6"], False)]),
    ("civil_single_rank", ["5-1"], [(["6-1"], True), (["6-1"], False), (["1-1"], True)]),
    ("military_vs_civil_single", ["5-1"], [(["6-3"], False)]),
    ("civil_vs_military_single", ["2-1"], [(["6-6"], False), (["4-2"], True)]),
    ("civil_pair_vs_mixed_pair", ["5-1", "5-1"], [(["6-6", "6-3"], False), (["6-1", "6-1"], True)]),
    ("military_pair_vs_civil_pair", ["4-1", "3-2"], [(["6-6", "6-6"], False), (["6-3", "5-4"], True)]),
    ("mixed_pair_vs_military_pair", ["3-1", "4-1"], [(["6-3", "5-4"], False), (["1-1", "5-3"], True)]),
    ("mixed_pair_same_family_ties", ["6-6", "6-3"], [(["6-6", "5-4"], False)]),
    ("mixed_pair_family_order", ["4-4", "4-3"], [(["3-1", "3-2"], False), (["1-1", "6-2"], True)]),
    (
        "supreme_led_unbeatable",
        ["4-2", "2-1"],
        [(["6-6", "6-6"], False), (["6-3", "5-4"], False), (["1-1", "6-2"], False)],
    ),
    ("supreme_by_follower_discard_only", ["4-1", "3-2"], [(["4-2", "2-1"], False)]),
    ("2c1m_does_not_beat_1c2m", ["1-1", "6-2", "5-3"], [(["6-6", "6-6", "6-3"], False)]),
    ("1c2m_does_not_beat_2c1m", ["4-4", "4-4", "5-2"], [(["6-6", "6-3", "5-4"], False), (["1-1", "1-1", "6-2"], True)]),
    ("1c2m_family_order", ["3-1", "4-1", "3-2"], [(["4-4", "5-2", "4-3"], True)]),
    ("quartet_family_order", ["1-1", "1-1", "6-2", "5-3"], [(["6-6", "6-6", "6-3", "5-4"], True)]),
    ("quartet_vs_weaker_quartet", ["4-4", "4-4", "5-2", "4-3"], [(["3-1", "3-1", "4-1", "3-2"], False)]),
]


@pytest.mark.parametrize("lead,answers", [(lead, answers) for _, lead, answers in BEATS], ids=[b[0] for b in BEATS])
def test_beating(lead, answers):
    hands = deal_around(lead, *[tiles for tiles, _ in answers])
    game = Game(hands=hands, banker=0, rules={"one_red_dot": "off"})
    game.play(P(0, *lead))
    best = (0, sorted(lead))
    for k, (tiles, accepted) in enumerate(answers):
        seat = k + 1
        combo = game.combos.find([NAMES.index(t) for t in tiles])
        assert (combo in game.legal_actions()) is accepted
        if accepted:
            game.play(P(seat, *tiles))
            best = (seat, tiles)
        else:
            with pytest.raises(ValueError):
                game.clone().play(P(seat, *tiles))
            game.play(D(seat, *tiles))
    # Finish the trick with discards and check who won it.
    while game.phase == "follow":
        seat = game.to_act
        game.play(D(seat, *game.hand(seat)[-len(lead) :]))
    assert int(game.state[L.S_COLS + best[0]]) == len(lead)  # the owner of the best took the columns
    assert game.to_act == best[0]


# ------------------------------------------------------------------------------------------
# One Red Dot detection (RULES.md sections 1 and 6): exactly one red pip in the dealt hand.
# A holds seven tiles without red pips plus the tile under test; B, C, D get the rest.
# ------------------------------------------------------------------------------------------
NO_RED = ["5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5"]


@pytest.mark.parametrize(
    "last,declares",
    [
        ("3-1", True),  # a 1 half: one red pip
        ("6-1", True),
        ("5-1", True),
        ("2-1", True),
        ("6-5", False),  # no red pip at all
        ("6-3", False),
        ("1-1", False),  # two red pips
        ("4-2", False),  # a 4 half: four red pips
        ("6-6", False),  # Heaven: six red pips
    ],
)
def test_one_red_dot_detection(last, declares):
    hands = deal_around(NO_RED + [last])
    game = Game(hands=hands, banker=3)
    assert game.is_over == declares
    if declares:
        res = game.result()
        # A is W with every column; each other player pays 5 x 2 x 2 (shutout) = 20.
        assert res["columns"] == [8, 0, 0, 0] and res["last_trick_winner"] == 0
        assert res["settlement"] == [60, -20, -20, -20] and res["tricks"] == []
    else:
        assert (game.phase, game.to_act) == ("lead", 3)
