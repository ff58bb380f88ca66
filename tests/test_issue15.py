"""The nine findings of issue 15 (RULES.md sections 8 and 9 as amended), one block each.

Each block reproduces what the adversarial probe found and pins down the behaviour RULES.md
now asks for. The deal is the one of RULES.md section 8 (banker 0):
    seat 0: 1-1 3-1 3-3 6-4 6-4 6-3 4-3 3-2      seat 1: 6-6 4-4 5-5 3-3 6-1 5-1 5-2 2-1
    seat 2: 6-6 3-1 2-2 2-2 6-1 5-4 5-3 4-1      seat 3: 1-1 4-4 5-5 6-5 6-5 5-1 6-2 4-2
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scripted import DEAL, MICRO, MICRO_ACTIONS

from tiengow import cli
from tiengow_env.combos import table_for
from tiengow_env.game import Game, RecordError, load_records, perft, replay
from tiengow_env.rules import NAMED_DECKS, RuleSet
from tiengow_env.tiles import parse_type
from tiengow_env.vector import VectorEnv

INT64_MAX = 2**63 - 1
GOOD = {"rules": "micro", "banker": 0, "hands": MICRO, "actions": MICRO_ACTIONS}


def rec(actions=(), rules="standard", **extra):
    return {"rules": rules, "banker": 0, "hands": DEAL, "actions": list(actions), **extra}


def snapshot(game: Game):
    """Everything a refusal must leave as it was: state array, forced list, observation, mask."""
    obs, mask = (None, None) if game.is_over else game.observe()
    return game.state.copy(), list(game.forced), obs, mask


def assert_unchanged(game: Game, snap) -> None:
    state, forced, obs, mask = snap
    assert np.array_equal(game.state, state)
    assert game.forced == forced
    if obs is not None:
        now_obs, now_mask = game.observe()
        assert np.array_equal(now_obs, obs) and np.array_equal(now_mask, mask)


def random_play(game: Game, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    taken = []
    while not game.is_over:
        legal = game.legal_actions()
        taken.append(int(legal[rng.integers(len(legal))]))
        game.step(taken[-1])
    return taken


# ------------------------------------------------------------------------------------------
# 1. Payments never wrap: streak 1 .. 2^63 - 1, and the exact bound of RULES.md section 8.
# ------------------------------------------------------------------------------------------
def rules_bound(players: int, par: int, stakes, streak: int, banker_streak: bool) -> int:
    """RULES.md section 8's left-hand side, written out independently of rules.py."""
    f = 1 + streak if banker_streak else 2
    return (players - 1) * f * (par * max(stakes) + 4 * (par + 1))


@pytest.mark.parametrize("streak", [2**63, 2**64, 2**64 + 5, 10**30])
def test_streak_beyond_int64_is_a_value_error(streak):
    for rules in ("standard", "hongkong"):
        with pytest.raises(ValueError, match=r"streak must be an integer from 1 to 2\^63 - 1"):
            Game(seed=1, rules=rules, streak=streak)
    with pytest.raises(RecordError, match="streak") as err:
        replay(rec(streak=streak))
    assert err.value.action_index is None


def test_largest_streak_is_accepted_without_banker_streak():
    # Only banker_streak reads the streak: under standard the factor stays 2, whatever it is.
    game = Game(hands=DEAL, banker=0, streak=INT64_MAX)
    random_play(game, 1)
    assert sum(game.result()["net"]) == 0


def test_streak_bound_under_banker_streak_is_exact():
    # hongkong, standard deck: players 4, par 4, stakes [2, 4]: 3 * (1 + s) * (16 + 20) <= 2^63 - 1.
    largest = INT64_MAX // (3 * 36) - 1
    assert rules_bound(4, 4, (2, 4), largest, True) <= INT64_MAX < rules_bound(4, 4, (2, 4), largest + 1, True)
    Game(seed=1, rules="hongkong", streak=largest)
    with pytest.raises(ValueError, match=r"2\^63 - 1") as err:
        Game(seed=1, rules="hongkong", streak=largest + 1)
    assert "streak" in str(err.value) and "trick_bonus_stakes" in str(err.value)
    with pytest.raises(RecordError, match=r"2\^63 - 1"):
        replay(rec(rules="hongkong", streak=largest + 1))


def test_the_million_cap_on_stakes_is_gone_and_the_real_bound_holds():
    # standard: 3 * 2 * (4 * s + 20) <= 2^63 - 1.
    largest = (INT64_MAX // 6 - 20) // 4
    assert rules_bound(4, 4, (largest, 0), 1, False) <= INT64_MAX < rules_bound(4, 4, (largest + 1, 0), 1, False)
    for stakes in ([10**12, 4], [2, 10**15], [largest, largest], [0, 0]):
        assert RuleSet.from_spec({"trick_bonus_stakes": stakes}).trick_bonus_stakes == tuple(stakes)
    for stakes in ([largest + 1, 4], [2, largest + 1], [2**63, 2**63]):
        with pytest.raises(ValueError, match=r"2\^63 - 1"):
            RuleSet.from_spec({"trick_bonus_stakes": stakes})
    # three players: a deck of 30 gives hands of 10, par 5: 2 * 2 * (5 * s + 24).
    three = (INT64_MAX // 4 - 24) // 5
    RuleSet.from_spec({"players": 3, "trick_bonus_stakes": [three, 0]})
    with pytest.raises(ValueError, match=r"2\^63 - 1"):
        RuleSet.from_spec({"players": 3, "trick_bonus_stakes": [three + 1, 0]})


def test_payments_at_the_bound_are_exact_and_net_zero():
    """Hands played at the largest stakes and streak: every chip is the stake-1 figure times
    the stake, and each hand's net sums to exactly 0 (no wrap at 2^64)."""
    stake = 10**9
    streak = INT64_MAX // (3 * (4 * stake + 20)) - 1  # hongkong: F = 1 + streak
    big = {"preset": "hongkong", "trick_bonus_stakes": [stake, stake]}
    unit = {"preset": "hongkong", "trick_bonus_stakes": [1, 1]}
    paid = 0
    for seed in range(60):
        game = Game(seed=seed, rules=big, streak=streak)
        taken = random_play(game, seed)
        small = Game(seed=seed, rules=unit, streak=streak)
        for action in taken:
            small.step(action)
        res, ref = game.result(), small.result()
        assert sum(res["net"]) == 0 and sum(res["trick_bonus"]) == 0
        assert res["trick_bonus"] == [stake * b for b in ref["trick_bonus"]]
        assert res["settlement"] == ref["settlement"]
        assert all(abs(v) <= INT64_MAX for v in res["net"])
        paid += any(res["trick_bonus"])
    assert paid  # at least one of these hands had a Supreme or quartet trick


def test_replay_of_a_huge_streak_is_an_error_line_not_a_traceback(tmp_path, capsys):
    path = tmp_path / "streaks.jsonl"
    path.write_text("\n".join(json.dumps({**GOOD, "streak": s}) for s in (2**64, 1, 2**63, -1, 2**63 - 1)) + "\n")
    assert cli.main(["replay", str(path)]) == 2
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [("error" in line) for line in lines] == [True, False, True, True, False]


# ------------------------------------------------------------------------------------------
# 2. Game.play() after a partial Game.step() checks the tiles still owed.
# ------------------------------------------------------------------------------------------
def _after_partial_discard():
    """Seat 0 leads the 6-4 pair; seat 1 answers 5-1 + 2-1; seat 2 puts 6-1 down by step()."""
    game = Game(hands=DEAL, banker=0)
    game.play({"seat": 0, "play": ["6-4", "6-4"]})
    game.play({"seat": 1, "discard": ["5-1", "2-1"]})
    game.step(game.combos.num_combos + parse_type("6-1"))
    assert game.to_act == 2
    return game


@pytest.mark.parametrize(
    "action,words",
    [
        ({"seat": 2, "discard": ["6-1", "2-2"]}, "owes 1 more tile face down"),  # the whole answer again
        ({"seat": 2, "discard": ["2-2", "2-2"]}, "owes 1 more tile face down"),  # two more tiles
        ({"seat": 2, "play": ["2-2", "2-2"]}, "only face-down discards"),  # a beat after a discard
        ({"seat": 2, "play": ["6-6"]}, "only face-down discards"),
        ({"seat": 3, "discard": ["5-1"]}, "seat 2 is to act"),
    ],
)
def test_play_after_a_partial_step_is_refused_and_changes_nothing(action, words):
    game = _after_partial_discard()
    snap = snapshot(game)
    with pytest.raises(ValueError, match=words):
        game.play(action)
    assert_unchanged(game, snap)
    game.play({"seat": 2, "discard": ["2-2"]})  # the one tile still owed
    assert game.to_act == 3
    assert sum(bin(int(m)).count("1") for m in game.state[0:4]) == 32 - 2 * 3
    random_play(game, 0)
    assert sum(game.result()["net"]) == 0
    assert sum(game.result()["columns"]) == 8


def test_beat_is_refused_once_a_seat_has_begun_discarding():
    """The probe's case: a beat accepted where only discards are legal let a seat win with 3
    tiles on the table."""
    game = _after_partial_discard()
    C = game.combos.num_combos
    assert all(a >= C for a in game.legal_actions())
    with pytest.raises(ValueError):
        game.play({"seat": 2, "play": ["2-2", "2-2"]})
    assert bin(int(game.state[28 + 2])).count("1") == 1  # S_TABLE + 2: one tile on the table


# ------------------------------------------------------------------------------------------
# 3 and 4. JSON Lines: split on "\n" only, one result per line, bad lines on their own.
# ------------------------------------------------------------------------------------------
def _write_lines(tmp_path, chunks: list[bytes]):
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"\n".join(chunks) + b"\n")
    return path


def test_a_records_file_too_large_to_read_whole_or_an_endless_stream_is_refused(tmp_path, monkeypatch, capsys):
    import tiengow_env.game as G

    path = _write_lines(tmp_path, [json.dumps(GOOD).encode()] * 3)
    monkeypatch.setattr(G, "MAX_RECORDS_BYTES", path.stat().st_size)
    assert len(load_records(str(path))) == 3  # exactly the limit is read
    monkeypatch.setattr(G, "MAX_RECORDS_BYTES", path.stat().st_size - 1)
    with pytest.raises(ValueError, match=r"records.jsonl is larger than 0 MB, too large to read as hand records"):
        load_records(str(path))
    monkeypatch.undo()
    for command in (["replay", "/dev/zero"], ["show", "/dev/zero"]):  # never ends: read up to the limit, then refused
        assert cli.main(command) == 2
        assert capsys.readouterr().err.strip() == (
            "tiengow: error: /dev/zero is larger than 256 MB, too large to "
            "read as hand records; split it into smaller files"
        )


def test_deeply_nested_and_invalid_utf8_lines_are_errors_of_their_own(tmp_path, capsys):
    good = json.dumps(GOOD).encode()

    def nested(depth: int) -> bytes:  # GOOD with its actions nested ``depth`` lists deep
        return json.dumps({**GOOD, "actions": "X"}).encode().replace(b'"X"', b"[" * depth + b"]" * depth)

    deep = b"[" * 100_000 + b"]" * 100_000
    bad_utf8 = json.dumps(GOOD).encode().replace(b"micro", b"micr\xff")
    path = _write_lines(tmp_path, [good, deep, good, bad_utf8, nested(5000), nested(500), good])
    records = load_records(str(path))
    assert len(records) == 7
    assert [isinstance(r, RecordError) for r in records] == [False, True, False, True, True, False, False]
    assert "line 2" in str(records[1]) and "nested too deeply" in str(records[1])
    assert "line 4" in str(records[3]) and "UTF-8" in str(records[3])
    assert cli.main(["replay", str(path)]) == 2
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(out) == 7
    assert out[0] == out[2] == out[6] == replay(GOOD)
    assert [("error" in line) for line in out] == [False, True, False, True, True, True, False]
    assert out[5] == {"error": "action must be a JSON object", "action_index": 0}


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r"])
def test_lines_are_split_on_newline_only(tmp_path, capsys, separator):
    # A raw separator inside a JSON string is one (refused) record, and later results stay aligned.
    odd = json.dumps({**GOOD, "rules": f"mi{separator}cro"}, ensure_ascii=False)
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join([json.dumps(GOOD), odd, json.dumps(GOOD)]) + "\n", encoding="utf-8", newline="")
    assert len(load_records(str(path))) == 3
    assert cli.main(["replay", str(path)]) == 2
    out = [json.loads(line) for line in capsys.readouterr().out.split("\n")[:-1]]
    assert len(out) == 3
    assert out[0] == out[2] == replay(GOOD) and "error" in out[1]


@pytest.mark.parametrize(
    "text,results",
    [
        ("", []),  # no line, no record: nothing to replay
        ("G", ["ok"]),  # a last line without its "\n"
        ("G\n", ["ok"]),  # a final "\n" ends the last line
        ("G\nG", ["ok", "ok"]),
        ("\n", ["empty"]),  # one empty line
        ("G\n\nG\n", ["ok", "empty", "ok"]),  # a blank line in between keeps its place
        ("G\n  \t\nG\n\n", ["ok", "empty", "ok", "empty"]),
        ("G\r\nG\r\n", ["ok", "ok"]),  # CRLF: the "\r" is JSON whitespace
    ],
)
def test_blank_lines_and_the_final_newline(tmp_path, capsys, text, results):
    path = tmp_path / "records.jsonl"
    path.write_text(text.replace("G", json.dumps(GOOD)), newline="")
    status = cli.main(["replay", str(path)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = ["empty" if "error" in line and "empty" in line["error"] else "ok" for line in out]
    assert kinds == results
    assert status == (2 if "empty" in results else 0)


@pytest.mark.parametrize(
    "name,text,results",
    [
        ("record.json", "\ufeffG", ["ok"]),  # a byte order mark, as Windows editors write: skipped
        ("records.jsonl", "\ufeffG\r\nG\r\n", ["ok", "ok"]),
        ("records.jsonl", "G\n\ufeffG\n", ["ok", "bom"]),  # only at the start of the file
        ("RECORDS.JSONL", "G\nG\n", ["ok", "ok"]),  # the suffix in capitals is JSON Lines too
    ],
)
def test_a_byte_order_mark_starting_the_file_is_skipped(tmp_path, capsys, name, text, results):
    path = tmp_path / name
    path.write_text(text.replace("G", json.dumps(GOOD)), encoding="utf-8", newline="")
    status = cli.main(["replay", str(path)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert ["bom" if "BOM" in line.get("error", "") else "ok" for line in out] == results
    assert out[0] == replay(GOOD) and status == (2 if "bom" in results else 0)


# ------------------------------------------------------------------------------------------
# 5. perft's depth is bounded by the longest possible hand.
# ------------------------------------------------------------------------------------------
def test_perft_refuses_a_depth_beyond_the_longest_hand():
    # standard: 8 tricks of 4 decisions; micro: 2 tricks of 4.
    with pytest.raises(ValueError, match="longest possible hand") as err:
        perft(rec(), 100_000_000)
    assert "32" in str(err.value)
    with pytest.raises(ValueError, match="longest possible hand"):
        perft({**GOOD, "actions": []}, 9)
    assert perft({**GOOD, "actions": []}, 8) == perft({**GOOD, "actions": []}, 7) > 0
    choice = rec(rules={"one_red_dot": "choice"})
    with pytest.raises(ValueError, match="36"):  # up to one declare decision per seat first
        perft(choice, 37)


def test_cli_perft_huge_depth_is_one_line(tmp_path, capsys):
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(rec()))
    assert cli.main(["perft", str(path), "--depth", "100000000"]) == 2
    out = capsys.readouterr()
    assert "longest possible hand" in out.err and "Traceback" not in out.err + out.out


# ------------------------------------------------------------------------------------------
# 6. Only ASCII 1 to 6 are tile digits.
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["６-６", "٦-٦", "६-६", "6-６", "۶-۳", "²-¹", "𝟔-𝟔", "6\u0301-6"])
def test_non_ascii_digits_are_not_tiles(name):
    with pytest.raises(ValueError, match="unknown tile name"):
        parse_type(name)
    hands = [list(h) for h in DEAL]
    hands[1][0] = name
    with pytest.raises(RecordError, match="unknown tile name"):
        replay(rec() | {"hands": hands})
    with pytest.raises(ValueError, match="unknown tile name"):
        RuleSet.from_spec({"deck": [name] + [t for hand in DEAL for t in hand][1:]})
    game = Game(hands=DEAL, banker=0)
    snap = snapshot(game)
    with pytest.raises(ValueError, match="unknown tile name"):
        game.play({"seat": 0, "play": [name]})
    assert_unchanged(game, snap)


# ------------------------------------------------------------------------------------------
# 7. "rules": null is refused; "deck": 32 is the 32-tile deck.
# ------------------------------------------------------------------------------------------
def test_rules_null_is_refused():
    with pytest.raises(RecordError, match="rules may not be null") as err:
        replay(rec(rules=None))
    assert err.value.action_index is None
    with pytest.raises(RecordError, match="rules may not be null"):
        perft(rec(rules=None), 1)
    with pytest.raises(ValueError, match="rules may not be null"):
        Game(seed=1, rules=None)


def test_deck_32_as_a_number_is_the_standard_deck():
    # RULES.md section 9 lists the deck values as it lists players' 4 and 3: 32 is one of them.
    rules = RuleSet.from_spec({"deck": 32})
    assert rules == RuleSet.from_spec("standard") and rules.deck == "32" and rules.name == "standard"
    assert perft(rec(rules={"deck": 32}), 2) == perft(rec(), 2) == 124
    for bad in (30, 24, 32.0, True, -32, "thirty-two"):
        with pytest.raises(ValueError, match="deck"):
            RuleSet.from_spec({"deck": bad})


# ------------------------------------------------------------------------------------------
# 8. A seed is a non-negative integer (not a bool, a float, a string or a list).
# ------------------------------------------------------------------------------------------
BAD_SEEDS = [[1], 1.5, 7.0, "7", True, False, -1, -(2**70), {"seed": 1}, b"7", np.float64(2.0), np.bool_(True)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seeds_are_value_errors(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        Game(seed=seed)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        VectorEnv(2, seed=seed)


@pytest.mark.parametrize("seed", [0, 1, np.int64(5), np.uint64(2**64 - 1), 2**64 + 3, 2**200])
def test_good_seeds(seed):
    # Seeds are taken modulo 2^64, as the core's generator is 64 bits.
    a, b = Game(seed=seed), Game(seed=int(seed) % 2**64)
    assert np.array_equal(a.state, b.state)


# ------------------------------------------------------------------------------------------
# 9. Any deck whose military tiles are exactly 6-3 and 5-4 makes the nines the Supreme pair.
# ------------------------------------------------------------------------------------------
NINES_DECK = ["6-6", "6-6", "1-1", "1-1", "6-5", "6-5", "6-3", "5-4"]


@pytest.mark.parametrize(
    "deck,supreme",
    [
        (NINES_DECK, True),
        ("24_weakened_military", True),
        (list(NAMED_DECKS["24_weakened_military"]), True),  # the same, as a custom list
        (["6-6", "6-6", "1-1", "1-1", "6-3", "5-4", "6-2", "5-3"], False),  # more military: the 9s are a pair
        (["6-6", "6-6", "1-1", "1-1", "6-5", "6-5", "6-3", "4-2"], False),
    ],
)
def test_nines_are_the_supreme_pair_exactly_when_they_are_the_only_military(deck, supreme):
    table = table_for(RuleSet.from_spec({"deck": deck, "one_red_dot": "off"}))
    j = table.find([parse_type("6-3"), parse_type("5-4")])
    if not supreme:
        assert j < 0 or table.combos[j].cls == "military_pair"
        return
    assert table.combos[j].cls == "supreme_pair"
    assert [c.cls for c in table.combos].count("supreme_pair") == 1
    assert table.find([parse_type("4-2"), parse_type("2-1")]) < 0
    # Single nines and the Heaven mixed pairs stay as they are.
    assert table.combos[table.find([parse_type("6-3")])].cls == "military_single"
    assert table.combos[table.find([parse_type("6-6"), parse_type("5-4")])].cls == "mixed_pair"


def test_custom_nines_deck_pays_the_supreme_stake_and_last_trick_bonus():
    # 8 tiles, hands of 2, par 1. Seat 0 (banker) leads the nines pair and wins both columns:
    # nothing can beat it, and as the banker's first lead it was unbeatable in its own eyes
    # (so no shutout doubling).
    rules = {"deck": NINES_DECK, "one_red_dot": "off"}
    hands = [["6-3", "5-4"], ["6-6", "6-6"], ["1-1", "1-1"], ["6-5", "6-5"]]
    record = {
        "rules": rules,
        "banker": 0,
        "hands": hands,
        "actions": [
            {"seat": 0, "play": ["6-3", "5-4"]},
            {"seat": 1, "discard": ["6-6", "6-6"]},
            {"seat": 2, "discard": ["1-1", "1-1"]},
            {"seat": 3, "discard": ["6-5", "6-5"]},
        ],
    }
    res = replay(record)
    assert res["tricks"] == [{"leader": 0, "winner": 0, "size": 2, "winning": ["6-3", "5-4"]}]
    assert res["trick_bonus"] == [12, -4, -4, -4]  # stake 2, doubled with the banker
    assert res["multipliers"] == {"last_trick": 2, "shutout": 1}
    assert res["settlement"] == [24, -8, -8, -8]  # (par + 1) x 2 x last-trick 2
    assert res["net"] == [36, -12, -12, -12]
    # A follower cannot beat with it: it beats nothing.
    follow = {
        **record,
        "banker": 1,
        "hands": [["6-3", "5-4"], ["1-1", "1-1"], ["6-6", "6-6"], ["6-5", "6-5"]],
        "actions": [
            {"seat": 1, "play": ["1-1", "1-1"]},
            {"seat": 2, "play": ["6-6", "6-6"]},
            {"seat": 3, "discard": ["6-5", "6-5"]},
            {"seat": 0, "play": ["6-3", "5-4"]},
        ],
    }
    with pytest.raises(RecordError, match="cannot beat") as err:
        replay(follow)
    assert err.value.action_index == 3


def test_env_matches_whose_chips_could_pass_int64_are_refused():
    """An episode of n hands: hand k has a streak of at most k, so n * bound(streak n) chips."""
    from tiengow_env.env import raw_env

    largest = (INT64_MAX // 6 - 20) // 4
    rules = {"trick_bonus_stakes": [largest, 0]}
    VectorEnv(2, rules=rules, hands=1)
    raw_env(rules=rules, hands=1)
    for make in (lambda: VectorEnv(2, rules=rules, hands=2), lambda: raw_env(rules=rules, hands=2)):
        with pytest.raises(ValueError, match=r"match of 2 hands .* 2\^63 - 1"):
            make()
    VectorEnv(2, rules="hongkong", hands=1000)  # ordinary stakes: long matches are fine


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True, [1]], ids=repr)
def test_env_resets_refuse_bad_seeds(seed):
    from tiengow_env.env import raw_env
    from tiengow_env.gym_env import TienGowEnv

    for env in (raw_env(), TienGowEnv()):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            env.reset(seed=seed)
    venv = VectorEnv(2)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        venv.reset(seed)


def test_gym_reset_takes_numpy_seeds():
    from tiengow_env.gym_env import TienGowEnv

    a, _ = TienGowEnv().reset(seed=np.int64(5))
    b, _ = TienGowEnv().reset(seed=5)
    assert np.array_equal(a, b)
