"""What a step says it did (``_kernels.step``'s report, layout.REP_*), and ``Game.tricks`` built
from it: against scripted hands worked out by hand, against the state change of every step of
random hands, and against the reference engine's tricks."""

from __future__ import annotations

import numpy as np
import pytest
from test_scenarios import BY_ID

from tiengow_env import _kernels as K
from tiengow_env import layout as L
from tiengow_env.game import Game, Play, Trick
from tiengow_env.reference import RefGame
from tiengow_env.tiles import NAMES, mask_types, parse_type

STATUS = {"goes_on": L.STEP_GOES_ON, "trick_over": L.STEP_TRICK_OVER, "hand_over": L.STEP_HAND_OVER}
KIND = {
    "lead": L.KIND_LEAD,
    "beat": L.KIND_BEAT,
    "discard": L.KIND_DISCARD,
    "declare": L.KIND_DECLARE,
    "decline": L.KIND_DECLINE,
}


def names(mask: int) -> list[str]:
    return [NAMES[t] for t in mask_types(mask)]


def reports_of(hands, banker, actions, rules="standard") -> list[np.ndarray]:
    """The report of the last kernel step of each record action (a discard of n tiles is n steps)."""
    game = Game(hands=hands, banker=banker, rules=rules)
    out = []
    for action in actions:
        game.play(action)
        at = L.W_LOG + L.W_ROW * (game._logged - 1)  # the last row of the game's log (layout.W_*)
        out.append(game._work[at : at + L.REPORT_LEN].copy())
    return out


W1 = BY_ID["worked_check_1_settlement"]
W2 = BY_ID["worked_check_2_supreme_bonus_non_banker"]
# Worked check 1 with B's early-death discard of T7 left out of the record: it happens by itself.
W1_OMITTED = W1["actions"][:25] + W1["actions"][26:]
RED_DOT = [
    ["3-3", "3-3", "2-2", "2-2", "5-5", "5-5", "6-5", "3-1"],  # one red pip: 3-1's single red 1
    ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "6-4", "6-4"],
    ["6-5", "6-1", "6-1", "5-1", "5-1", "3-1", "6-3", "5-4"],
    ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
]

# (case, hands, banker, rules, actions, index of the record action, expected report fields).
# Seats: A = 0, B = 1, C = 2, D = 3. The chips are worked out in test_scenarios.py.
REPORTS = [
    (
        "lead",
        W1["hands"],
        0,
        "standard",
        W1["actions"],
        0,
        dict(status="goes_on", seat=0, kind="lead", tiles=["6-6"], trick=0, winner=-1),
    ),
    (
        "discard",
        W1["hands"],
        0,
        "standard",
        W1["actions"],
        1,
        dict(status="goes_on", seat=1, kind="discard", tiles=["6-6"], trick=0, winner=-1),
    ),
    (
        "beat",
        W1["hands"],
        0,
        "standard",
        W1["actions"],
        6,
        dict(status="goes_on", seat=2, kind="beat", tiles=["6-4"], trick=1, winner=-1),
    ),
    (
        "the fourth answer ends T1",
        W1["hands"],
        0,
        "standard",
        W1["actions"],
        3,
        dict(status="trick_over", seat=3, kind="discard", tiles=["2-1"], trick=0, winner=0, winning=["6-6"]),
    ),
    # T3 is a pair trick: A's two-tile discard is two steps; the report is of the second tile.
    (
        "second tile of a discard",
        W1["hands"],
        0,
        "standard",
        W1["actions"],
        10,
        dict(status="goes_on", seat=0, kind="discard", tiles=["4-4"], trick=2, winner=-1),
    ),
    # T7: A leads 1-1 with one tile each; B has no column and discards 5-2 by early death.
    (
        "early death after a lead",
        W1["hands"],
        0,
        "standard",
        W1_OMITTED,
        24,
        dict(status="goes_on", seat=0, kind="lead", tiles=["1-1"], trick=6, winner=-1, forced={1: ["5-2"]}),
    ),
    (
        "the last trick settles the hand",
        W1["hands"],
        0,
        "standard",
        W1_OMITTED,
        26,
        dict(
            status="hand_over",
            seat=3,
            kind="discard",
            tiles=["6-4"],
            trick=6,
            winner=0,
            winning=["1-1"],
            settle=[16, -10, -2, -4],
        ),
    ),
    # T2 of worked check 2: C's Supreme pair wins; B and D pay C 2, banker A pays 4.
    (
        "a trick bonus",
        W2["hands"],
        0,
        "standard",
        W2["actions"],
        7,
        dict(
            status="trick_over",
            seat=1,
            kind="discard",
            tiles=["2-2"],
            trick=1,
            winner=2,
            winning=["4-2", "2-1"],
            bonus=[-4, -2, 8, -2],
        ),
    ),
    (
        "a declaration ends the hand",
        RED_DOT,
        0,
        {"one_red_dot": "choice"},
        [{"seat": 0, "declare": True}],
        0,
        dict(status="hand_over", seat=0, kind="declare", tiles=[], trick=0, winner=-1, settle=[60, -20, -20, -20]),
    ),
    (
        "a decline starts play",
        RED_DOT,
        0,
        {"one_red_dot": "choice"},
        [{"seat": 0, "declare": False}],
        0,
        dict(status="goes_on", seat=0, kind="decline", tiles=[], trick=0, winner=-1),
    ),
]


@pytest.mark.parametrize(
    "hands,banker,rules,actions,index,expect", [r[1:] for r in REPORTS], ids=[r[0] for r in REPORTS]
)
def test_step_report_of_scripted_hands(hands, banker, rules, actions, index, expect):
    report = reports_of(hands, banker, actions[: index + 1], rules)[index]
    assert report[L.REP_STATUS] == STATUS[expect["status"]]
    assert report[L.REP_SEAT] == expect["seat"]
    assert report[L.REP_KIND] == KIND[expect["kind"]]
    assert names(report[L.REP_TILES]) == expect["tiles"]
    assert report[L.REP_TRICK] == expect["trick"]
    assert report[L.REP_WINNER] == expect["winner"]
    if "winning" in expect:
        combos = Game(rules=rules).combos
        assert combos.combos[report[L.REP_WINNING]].names == expect["winning"]
    forced = {s: names(report[L.REP_FORCED + s]) for s in range(L.MAX_SEATS) if report[L.REP_FORCED + s]}
    assert forced == expect.get("forced", {})
    assert report[L.REP_BONUS : L.REP_BONUS + 4].tolist() == expect.get("bonus", [0, 0, 0, 0])
    assert report[L.REP_SETTLE : L.REP_SETTLE + 4].tolist() == expect.get("settle", [0, 0, 0, 0])


def _plays(*plays: tuple) -> tuple[Play, ...]:
    return tuple(Play(seat, kind, tuple(sorted(parse_type(n) for n in tiles))) for seat, kind, *tiles in plays)


# Game.tricks of worked check 1 read from the script: T7's early death is a "forced" play
# whether the record spells it out or not.
W1_TRICKS = [
    (0, 1, _plays((0, "lead", "6-6"), (1, "discard", "6-6"), (2, "discard", "4-3"), (3, "discard", "2-1")), 0),
    (0, 1, _plays((0, "lead", "5-1"), (1, "discard", "3-1"), (2, "beat", "6-4"), (3, "discard", "4-2")), 2),
    (
        2,
        2,
        _plays(
            (2, "lead", "5-5", "5-5"),
            (3, "discard", "4-1", "3-2"),
            (0, "discard", "4-4", "4-4"),
            (1, "discard", "6-3", "5-4"),
        ),
        2,
    ),
    (2, 1, _plays((2, "lead", "5-1"), (3, "beat", "6-1"), (0, "discard", "3-3"), (1, "discard", "3-1")), 3),
    (3, 1, _plays((3, "lead", "6-5"), (0, "discard", "3-3"), (1, "discard", "6-2"), (2, "discard", "2-2")), 3),
    (3, 1, _plays((3, "lead", "6-1"), (0, "beat", "1-1"), (1, "discard", "5-3"), (2, "discard", "2-2")), 0),
    (0, 1, _plays((0, "lead", "1-1"), (1, "forced", "5-2"), (2, "discard", "6-5"), (3, "discard", "6-4")), 0),
]


@pytest.mark.parametrize("actions", [W1["actions"], W1_OMITTED], ids=["forced spelled out", "forced omitted"])
def test_game_tricks_of_a_scripted_hand(actions):
    game = Game(hands=W1["hands"], banker=0)
    for i, action in enumerate(actions):
        game.play(action)
        if i == 6:  # T2 in play: A led 5-1, C beat it with 6-4
            assert game.tricks[-1] == Trick(0, 1, W1_TRICKS[1][2][:3])
            assert game.current_best == (2, game.combos.find([parse_type("6-4")]))
            assert game.columns == [1, 0, 0, 0]
    assert [(t.leader, t.size, t.plays, t.winner) for t in game.tricks] == W1_TRICKS
    assert all(t.bonus == (0, 0, 0, 0) for t in game.tricks)
    assert game.columns == [3, 0, 3, 2] and game.current_best is None


def test_game_tricks_hold_a_trick_bonus_and_survive_clone():
    game = Game(hands=W2["hands"], banker=0)
    for action in W2["actions"][:6]:
        game.play(action)
    copy = game.clone()
    game.play(W2["actions"][6])
    game.play(W2["actions"][7])
    assert game.tricks[1].bonus == (-4, -2, 8, -2) and game.tricks[1].winner == 2
    assert copy.tricks[1].winner is None and len(copy.tricks[1].plays) == 2  # the clone did not move
    copy.play(W2["actions"][6])
    copy.play(W2["actions"][7])
    assert copy.tricks == game.tricks


def _state_change(before: np.ndarray, after: np.ndarray, players: int) -> dict:
    """What a step did, read off the state before and after it: the oracle for the report."""
    up = [int(after[L.S_UP + s] & ~before[L.S_UP + s]) for s in range(players)]
    down = [int(after[L.S_DOWN + s] & ~before[L.S_DOWN + s]) for s in range(players)]
    ended = after[L.S_TRICK] > before[L.S_TRICK]
    log = L.S_LOG + L.LOG_STRIDE * int(before[L.S_TRICK])
    return {
        "up": up,
        "down": down,
        "winner": int(after[log + L.LOG_WINNER]) if ended else -1,
        "winning": int(after[log + L.LOG_WINNING]) if ended else -1,
        "bonus": (after[L.S_BONUS : L.S_BONUS + players] - before[L.S_BONUS : L.S_BONUS + players]).tolist(),
        "settle": (after[L.S_SETTLE : L.S_SETTLE + players] - before[L.S_SETTLE : L.S_SETTLE + players]).tolist(),
        "over": after[L.S_PHASE] == L.PHASE_OVER,
    }


PRESETS = [
    "standard",
    "three_player",
    "micro",
    "culin1895",
    "seed001",
    {"one_red_dot": "choice"},
    {"must_beat_if_able": True},
]


@pytest.mark.parametrize("rules", PRESETS, ids=[str(p) for p in PRESETS])
def test_report_matches_the_state_change_of_every_step(rules):
    """Random hands: every field of every report agrees with the state before and after."""
    steps = 0
    for seed in range(40):
        game = Game(seed=seed, rules=rules)
        table, rules_array, players = game.combos.table, game.combos.rules_array, game.players
        report = np.zeros(L.REPORT_LEN, dtype=np.int64)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            before, seat, legal = game.state.copy(), game.to_act, game.legal_actions()
            action = legal[rng.integers(len(legal))]
            K.step(game.state, action, table, rules_array, report)
            change = _state_change(before, game.state, players)
            assert report[L.REP_SEAT] == seat and report[L.REP_TRICK] == before[L.S_TRICK]
            mine = change["up"][seat] | change["down"][seat]
            assert report[L.REP_TILES] == mine
            if before[L.S_PHASE] == L.PHASE_DECLARE:
                assert report[L.REP_KIND] in (L.KIND_DECLARE, L.KIND_DECLINE) and mine == 0
            elif change["up"][seat]:
                expected = L.KIND_LEAD if before[L.S_PHASE] == L.PHASE_LEAD else L.KIND_BEAT
                assert report[L.REP_KIND] == expected
            else:
                assert report[L.REP_KIND] == L.KIND_DISCARD
            for s in range(players):
                others = change["up"][s] | change["down"][s] if s != seat else 0
                assert report[L.REP_FORCED + s] == others  # only early death moves another seat
            assert report[L.REP_WINNER] == change["winner"] and report[L.REP_WINNING] == change["winning"]
            assert report[L.REP_BONUS : L.REP_BONUS + players].tolist() == change["bonus"]
            assert report[L.REP_SETTLE : L.REP_SETTLE + players].tolist() == change["settle"]
            status = (
                L.STEP_HAND_OVER if change["over"] else L.STEP_TRICK_OVER if change["winner"] >= 0 else L.STEP_GOES_ON
            )
            assert report[L.REP_STATUS] == status
            steps += 1
    assert steps > 40 * 3


@pytest.mark.parametrize("rules", ["standard", "three_player", "seed001", {"early_death": False}], ids=str)
def test_game_tricks_agree_with_the_reference_engine(rules):
    """Game.tricks, built from the reports alone, against the reference engine's own tricks;
    and every dealt tile appears in exactly one play."""
    for seed in range(60):
        game = Game(seed=seed, rules=rules)
        hands = [mask_types(game.state[L.S_DEALT + s]) for s in range(game.players)]
        ref = RefGame(hands, game.banker, game.rules, 1)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])
        if int(game.state[L.S_DECLARER]) >= 0:
            assert game.tricks == []
            continue
        ref_tricks = []
        played = [[] for _ in range(game.players)]
        for trick in game.tricks:
            assert [p.seat for p in trick.plays] == [(trick.leader + k) % game.players for k in range(game.players)]
            assert all(len(p.types) == trick.size for p in trick.plays)
            for p in trick.plays:
                played[p.seat] += p.types
            ref_tricks.append((trick.leader, trick.winner, trick.size, game.combos.combos[trick.winning].names))
        assert [sorted(p) for p in played] == [sorted(h) for h in hands]
        assert [(t["leader"], t["winner"], t["size"], t["winning"]) for t in game.result()["tricks"]] == ref_tricks
        # the reference plays the same decisions: replay the plays as multisets
        for trick in game.tricks:
            for p in trick.plays:
                if p.kind != "forced":
                    ref.apply((p.kind, p.types))
        assert [(t.leader, t.winner, t.size) for t in ref.tricks] == [r[:3] for r in ref_tricks]
        bonus = [sum(t.bonus[s] for t in game.tricks) for s in range(game.players)]
        assert bonus == game.result()["trick_bonus"] == ref.result()["trick_bonus"]


def test_step_without_a_report_changes_the_state_alike():
    """The playouts' step (no report) and Game's (with one) leave the same states."""
    for seed in range(30):
        game = Game(seed=seed)
        bare = game.state.copy()
        rng = np.random.default_rng(seed)
        while not game.is_over:
            legal = game.legal_actions()
            action = legal[rng.integers(len(legal))]
            game.step(action)
            K.step(bare, action, game.combos.table, game.combos.rules_array)
            assert (bare == game.state).all()
