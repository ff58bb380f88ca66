"""Bad input of every kind: a ValueError / RecordError that says what was wrong, and no change.

The deal is the one of RULES.md section 8 (banker 0):
    seat 0: 1-1 3-1 3-3 6-4 6-4 6-3 4-3 3-2      seat 1: 6-6 4-4 5-5 3-3 6-1 5-1 5-2 2-1
    seat 2: 6-6 3-1 2-2 2-2 6-1 5-4 5-3 4-1      seat 3: 1-1 4-4 5-5 6-5 6-5 5-1 6-2 4-2
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from scripted import DEAL, MICRO, MICRO_ACTIONS, D, P

from tiengow import cli
from tiengow_env.game import Game, RecordError, perft, replay


def rec(actions, hands=DEAL, banker=0, **extra):
    return {"rules": "standard", "banker": banker, "hands": hands, "actions": actions, **extra}


# ------------------------------------------------------------------------------------------
# Bad actions: (id, legal prefix, bad action, words the message must contain, rules)
# ------------------------------------------------------------------------------------------
BAD_ACTIONS = [
    # unknown tile names, in either kind of action
    ("unknown_tile_7-1", [], P(0, "7-1"), ["unknown tile name '7-1'", "6-6", "2-1"]),
    ("unknown_tile_66", [], P(0, "66"), ["'66'", "a-b"]),
    ("unknown_tile_6-0", [], P(0, "6-0"), ["'6-0'"]),
    ("unknown_tile_word", [], P(0, "heaven"), ["'heaven'"]),
    ("unknown_tile_padded", [], P(0, " 1-1"), ["' 1-1'"]),
    ("unknown_tile_three_halves", [], P(0, "1-1-1"), ["'1-1-1'"]),
    ("unknown_tile_in_discard", [P(0, "6-3")], D(1, "9-9"), ["'9-9'"]),
    ("tile_not_a_string", [], {"seat": 0, "play": [66]}, ["must be a string", "66"]),
    # tiles the seat does not hold
    ("not_held", [], P(0, "6-6"), ["seat 0 does not hold 1 x 6-6"]),
    ("not_held_twice", [], P(0, "1-1", "1-1"), ["does not hold 2 x 1-1"]),
    ("not_held_discard", [P(0, "6-3")], D(1, "1-1"), ["seat 1 does not hold 1 x 1-1"]),
    ("discard_one_held_one_not", [P(0, "6-4", "6-4")], D(1, "6-6", "6-5"), ["does not hold 1 x 6-5"]),
    # wrong seat
    ("wrong_seat_lead", [], P(1, "6-6"), ["wrong seat", "seat 0 is to act", "not seat 1"]),
    ("wrong_seat_follow", [P(0, "6-3")], D(2, "2-2"), ["seat 1 is to act", "not seat 2"]),
    ("leader_acts_twice", [P(0, "6-3")], P(0, "3-2"), ["seat 1 is to act"]),
    # wrong number of tiles
    ("discard_too_many", [P(0, "6-3")], D(1, "5-1", "5-2"), ["exactly 1 tile(s), got 2"]),
    ("discard_too_few", [P(0, "6-4", "6-4")], D(1, "5-1"), ["exactly 2 tile(s), got 1"]),
    ("beat_with_wrong_size", [P(0, "3-3")], P(1, "4-4", "5-2"), ["exactly 1 tile(s), got 2"]),
    # not a combination
    ("lead_goose_with_seven", [], P(0, "3-1", "4-3"), ["3-1+4-3 is not a combination"]),
    ("lead_two_militaries", [], P(0, "6-3", "4-3"), ["not a combination"]),
    ("lead_two_civils", [], P(0, "3-3", "6-4"), ["not a combination"]),
    ("lead_two_families", [], P(0, "1-1", "6-3", "3-2"), ["not a combination"]),
    ("lead_five_tiles", [], P(0, "1-1", "3-1", "3-3", "6-4", "6-4"), ["not a combination"]),
    ("follow_not_a_combination", [P(0, "6-4", "6-4")], P(1, "6-6", "6-1"), ["not a combination"]),
    # plays that do not beat
    ("equal_nine", [P(0, "6-3"), D(1, "5-1")], P(2, "5-4"), ["5-4 does not beat 6-3"]),
    ("equal_civil", [P(0, "3-3")], P(1, "3-3"), ["3-3 does not beat 3-3"]),
    ("lower_civil", [P(0, "1-1")], P(1, "6-1"), ["6-1 does not beat 1-1"]),
    ("civil_on_military", [P(0, "3-2")], P(1, "5-5"), ["cannot beat a military_single"]),
    # the leader must play
    ("leader_discards", [], D(0, "3-2"), ["leader must play a combination, not discard"]),
    ("trick_leader_discards", [P(0, "1-1"), D(1, "5-1"), D(2, "4-1"), D(3, "4-2")], D(0, "3-2"), ["leader must play"]),
    # malformed actions
    ("action_is_string", [], "6-6", ["action must be a JSON object"]),
    ("action_is_list", [], [0, "play", ["1-1"]], ["action must be a JSON object"]),
    ("action_is_null", [], None, ["action must be a JSON object"]),
    ("no_seat", [], {"play": ["1-1"]}, ["no 'seat'"]),
    ("seat_string", [], {"seat": "0", "play": ["1-1"]}, ["seat must be an int 0..3", "'0'"]),
    ("seat_float", [], {"seat": 0.0, "play": ["1-1"]}, ["seat must be an int 0..3", "0.0"]),
    ("seat_bool", [], {"seat": False, "play": ["1-1"]}, ["seat must be an int 0..3"]),
    ("seat_too_big", [], {"seat": 4, "play": ["1-1"]}, ["seat must be an int 0..3", "4"]),
    ("seat_negative", [], {"seat": -1, "play": ["1-1"]}, ["seat must be an int 0..3"]),
    ("play_and_discard", [], {"seat": 0, "play": ["1-1"], "discard": ["3-2"]}, ["exactly one of"]),
    ("neither_play_nor_discard", [], {"seat": 0}, ["exactly one of"]),
    ("unknown_action_key", [], {"seat": 0, "play": ["1-1"], "note": "x"}, ["unknown keys: note"]),
    ("play_not_a_list", [], {"seat": 0, "play": "1-1"}, ["'play' must be a list of tile names"]),
    ("play_empty", [], {"seat": 0, "play": []}, ["'play' must be a list of tile names"]),
    ("discard_not_a_list", [P(0, "6-3")], {"seat": 1, "discard": {"5-1": 1}}, ["'discard' must be a list"]),
    ("declare_not_bool", [], {"seat": 0, "declare": "yes"}, ["'declare' must be true or false"]),
    ("declare_without_red_dot", [], {"seat": 0, "declare": True}, ["cannot declare One Red Dot now"]),
]


def _game_after(prefix, hands=DEAL, rules="standard"):
    game = Game(hands=hands, banker=0, rules=rules)
    for action in prefix:
        game.play(action)
    return game


@pytest.mark.parametrize("prefix,action,words", [c[1:] for c in BAD_ACTIONS], ids=[c[0] for c in BAD_ACTIONS])
def test_bad_action_is_refused_and_changes_nothing(prefix, action, words):
    game = _game_after(prefix)
    state, forced, to_act = game.state.copy(), list(game.forced), game.to_act
    hands = [game.hand(s) for s in range(4)]
    with pytest.raises(ValueError) as err:
        game.play(action)
    for word in words:
        assert word in str(err.value), f"{word!r} missing from {str(err.value)!r}"
    assert np.array_equal(game.state, state)
    assert game.forced == forced and game.to_act == to_act
    assert [game.hand(s) for s in range(4)] == hands
    # The game goes on: the seat to act can still make a legal move.
    legal = game.legal_actions()
    assert legal
    game.step(legal[0])


@pytest.mark.parametrize("prefix,action,words", [c[1:] for c in BAD_ACTIONS], ids=[c[0] for c in BAD_ACTIONS])
def test_bad_action_in_a_record_gives_its_index(prefix, action, words):
    record = rec(prefix + [action, P(0, "1-1")])
    before = copy.deepcopy(record)
    with pytest.raises(RecordError) as err:
        replay(record)
    assert err.value.action_index == len(prefix)
    assert words[0] in str(err.value)
    assert record == before  # replay never edits its input


def test_must_beat_refusal_is_not_half_applied():
    """Under must_beat_if_able, seat 1 (holding 6-6 over the led 1-1) may not discard."""
    game = _game_after([P(0, "1-1")], rules={"must_beat_if_able": True})
    state = game.state.copy()
    with pytest.raises(ValueError, match="must_beat_if_able"):
        game.play(D(1, "5-1"))
    assert np.array_equal(game.state, state)
    game.play(P(1, "6-6"))
    assert game.to_act == 2


def test_declare_errors_under_choice():
    # RULES.md section 6 example hand: A's only red pip is on 3-1; banker C.
    hands = [
        ["5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5", "3-1"],
        ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "6-5"],
        ["6-4", "6-4", "6-1", "6-1", "5-1", "5-1", "6-3", "5-4"],
        ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
    ]
    game = Game(hands=hands, banker=2, rules={"one_red_dot": "choice"})
    state = game.state.copy()
    cases = [
        (P(2, "6-4", "6-4"), "wrong seat"),  # the banker may not lead yet
        (P(0, "5-5", "5-5"), "must first declare or decline"),
        ({"seat": 1, "declare": True}, "wrong seat"),
        ({"seat": 0, "declare": 1}, "'declare' must be true or false"),
    ]
    for action, words in cases:
        with pytest.raises(ValueError, match=words):
            game.play(action)
        assert np.array_equal(game.state, state)
    game.play({"seat": 0, "declare": False})
    with pytest.raises(ValueError, match="cannot declare"):
        game.play({"seat": 2, "declare": True})


def test_a_declaration_made_by_itself_is_named_when_a_record_spells_it_out():
    # Under one_red_dot: auto (the default) seat 0's one red pip (3-1) ends the hand at the deal.
    hands = [
        ["5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5", "3-1"],
        ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "6-5"],
        ["6-4", "6-4", "6-1", "6-1", "5-1", "5-1", "6-3", "5-4"],
        ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
    ]
    words = r"the hand is over: seat 0 declared One Red Dot at the deal, by itself \(one_red_dot: auto\); a record"
    with pytest.raises(RecordError, match=words + " leaves that declaration out") as err:
        replay({"banker": 2, "hands": hands, "actions": [{"seat": 0, "declare": True}]})
    assert err.value.action_index == 0
    assert replay({"banker": 2, "hands": hands, "actions": []})["net"][0] == 60


def test_actions_after_the_end():
    game = Game(hands=MICRO, banker=0, rules="micro")
    for action in MICRO_ACTIONS:
        game.play(action)
    assert game.is_over
    result = game.result()
    # A forced early-death discard may still be spelled out once ...
    game.play(D(1, "6-6"))
    state = game.state.copy()
    # ... but nothing else.
    for action in (D(1, "6-6"), P(2, "5-4"), D(3, "2-1"), P(0, "6-3")):
        with pytest.raises(ValueError, match="over|early death"):
            game.play(action)
        assert np.array_equal(game.state, state)
    with pytest.raises(ValueError, match="over"):
        game.step(0)
    assert game.result() == result
    with pytest.raises(RecordError) as err:
        replay({"rules": "micro", "banker": 0, "hands": MICRO, "actions": MICRO_ACTIONS + [P(1, "6-6")]})
    assert err.value.action_index == 5


def test_truncated_record():
    with pytest.raises(RecordError) as err:
        replay(rec([P(0, "6-3"), D(1, "5-1")]))
    assert err.value.action_index == 2
    assert "ends before the hand is over" in str(err.value)


def test_result_before_the_end():
    with pytest.raises(ValueError, match="not over"):
        Game(hands=DEAL, banker=0).result()


# ------------------------------------------------------------------------------------------
# Bad records: refused as a whole (action_index None).
# ------------------------------------------------------------------------------------------
def _hands_with(seat: int, index: int, tile: str) -> list:
    hands = copy.deepcopy(DEAL)
    hands[seat][index] = tile
    return hands


BAD_RECORDS = [
    ("not_a_dict", ["banker", 0], ["must be a JSON object"]),
    ("unknown_key", {**rec([]), "player": 0}, ["unknown key 'player'", "banker", "hands", "streak"]),
    ("unknown_key_seat", {**rec([]), "dealer": 0}, ["unknown key 'dealer'"]),
    ("missing_banker", {"hands": DEAL, "actions": []}, ["missing 'banker'"]),
    ("missing_hands", {"banker": 0, "actions": []}, ["missing 'hands'"]),
    ("actions_not_a_list", rec({"seat": 0}), ["'actions' must be a list"]),
    ("bad_preset", {**rec([]), "rules": "no_such_preset"}, ["unknown preset 'no_such_preset'", "standard"]),
    ("bad_switch", {**rec([]), "rules": {"turbo": True}}, ["unknown rule switch 'turbo'"]),
    ("rules_not_a_spec", {**rec([]), "rules": 7}, ["rules must be"]),
    # hand sizes
    ("short_hand", rec([], hands=[DEAL[0][:7]] + DEAL[1:]), ["hand 0 must be a list of 8 tiles"]),
    ("long_hand", rec([], hands=DEAL[:3] + [DEAL[3] + ["6-6"]]), ["hand 3 must be a list of 8 tiles"]),
    ("three_hands", rec([], hands=DEAL[:3]), ["hands must be a list of 4 hands"]),
    ("hands_not_a_list", rec([], hands="6-6 1-1"), ["hands must be a list of 4 hands"]),
    ("hands_null", rec([], hands=None), ["hands must be a list of 4 hands", "got None"]),  # not a random deal
    (
        "hand_not_a_list",
        rec([], hands=DEAL[:3] + ["1-1 4-4 5-5 6-5 6-5 5-1 6-2 4-2"]),
        ["hand 3 must be a list of 8 tiles"],
    ),
    ("three_player_hands_for_four", {**rec([]), "rules": "three_player"}, ["hands must be a list of 3 hands"]),
    # hands that do not use the deck's tiles
    ("third_heaven", rec([], hands=_hands_with(0, 0, "6-6")), ["too many 6-6", "the deck has 2"]),
    ("second_nine", rec([], hands=_hands_with(2, 5, "6-3")), ["too many 6-3", "the deck has 1"]),
    ("unknown_tile_in_hand", rec([], hands=_hands_with(1, 0, "7-7")), ["unknown tile name '7-7'"]),
    ("tile_not_a_string_in_hand", rec([], hands=_hands_with(1, 0, 66)), ["must be a string"]),
    (
        "not_in_reduced_deck",
        {
            "rules": {"deck": "24_reduced_populace"},
            "banker": 0,
            "hands": [
                ["5-1", "6-6", "6-3", "5-4", "4-2", "2-1"],
                ["1-1", "1-1", "4-4", "4-4", "3-1", "3-1"],
                ["5-5", "5-5", "3-3", "3-3", "6-1", "6-1"],
                ["2-2", "2-2", "6-5", "6-5", "6-4", "6-4"],
            ],
            "actions": [],
        },
        ["too many 5-1", "the deck has 0"],
    ),
    # banker
    ("banker_4", rec([], banker=4), ["banker must be a seat 0..3"]),
    ("banker_negative", rec([], banker=-1), ["banker must be a seat 0..3"]),
    ("banker_string", rec([], banker="0"), ["banker must be a seat 0..3"]),
    ("banker_bool", rec([], banker=True), ["banker must be a seat 0..3"]),
    ("banker_float", rec([], banker=1.0), ["banker must be a seat 0..3"]),
    ("banker_null", rec([], banker=None), ["banker must be a seat 0..3"]),
    (
        "banker_3_of_three",
        {"rules": "three_player", "banker": 3, "hands": [[], [], []], "actions": []},
        ["banker must be a seat 0..2"],
    ),
    # streak
    ("streak_zero", rec([], streak=0), ["streak must be an integer from 1 to 2^63 - 1"]),
    ("streak_string", rec([], streak="2"), ["streak must be an integer from 1 to 2^63 - 1"]),
    ("streak_bool", rec([], streak=True), ["streak must be an integer from 1 to 2^63 - 1"]),
]


@pytest.mark.parametrize("record,words", [c[1:] for c in BAD_RECORDS], ids=[c[0] for c in BAD_RECORDS])
def test_bad_record_is_refused(record, words):
    before = copy.deepcopy(record)
    with pytest.raises(RecordError) as err:
        replay(record)
    assert err.value.action_index is None
    for word in words:
        assert word in str(err.value), f"{word!r} missing from {str(err.value)!r}"
    assert record == before
    with pytest.raises(RecordError):
        perft(record, 1)


@pytest.mark.parametrize(
    "kwargs,words",
    [
        (dict(hands=DEAL[:3], banker=0), "hands must be a list of 4"),
        (dict(hands=[DEAL[0][:7]] + DEAL[1:], banker=0), "hand 0 must be a list of 8"),
        (dict(hands=_hands_with(0, 0, "6-6"), banker=0), "too many 6-6"),
        (dict(hands=DEAL, banker=4), "banker must be a seat 0..3"),
        (dict(hands=DEAL, banker=True), "banker must be a seat"),
        (dict(hands=DEAL, banker=0, streak=0), r"streak must be an integer from 1 to 2\^63 - 1"),
        (dict(hands=DEAL, banker=0, rules="nope"), "unknown preset 'nope'"),
        (dict(seed=1, rules={"deck": "30_no_supreme"}), "cannot be dealt evenly"),
    ],
)
def test_game_constructor_refuses(kwargs, words):
    with pytest.raises(ValueError, match=words):
        Game(**kwargs)


@pytest.mark.parametrize("depth", [-1, 1.5, "3", None, True])
def test_perft_refuses_bad_depth(depth):
    with pytest.raises(ValueError, match="depth must be an integer >= 0"):
        perft(rec([]), depth)


def test_perft_refuses_an_illegal_prefix():
    with pytest.raises(RecordError) as err:
        perft(rec([P(0, "6-3"), P(1, "6-6")]), 2)
    assert err.value.action_index == 1


# ------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------
TIENGOW = [shutil.which("tiengow")] if shutil.which("tiengow") else [sys.executable, "-m", "tiengow.cli"]
GOOD = {"rules": "micro", "banker": 0, "hands": MICRO, "actions": MICRO_ACTIONS}
ILLEGAL = rec([P(0, "6-3"), D(1, "5-1"), P(2, "5-4")])  # equal nines: refused at action 2


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(TIENGOW + list(args), capture_output=True, text=True, check=False, timeout=120)


def test_cli_replay_good_malformed_and_illegal(tmp_path):
    path = tmp_path / "hands.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + '{"banker": 0, "hands": [\n' + json.dumps(ILLEGAL) + "\n")
    run = run_cli("replay", str(path))
    assert run.returncode == 2
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(lines) == 3
    assert lines[0] == replay(GOOD)
    assert lines[0]["columns"] == [2, 0, 0, 0]
    assert set(lines[1]) == {"error", "action_index"} and lines[1]["action_index"] is None
    assert "line 2" in lines[1]["error"]
    assert lines[2] == {"error": lines[2]["error"], "action_index": 2}
    assert "5-4 does not beat 6-3" in lines[2]["error"]


def test_cli_replay_all_good_exits_0(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(GOOD))
    assert cli.main(["replay", str(path)]) == 0


def test_cli_perft_rules_md_deal(tmp_path):
    path = tmp_path / "deal.json"
    path.write_text(json.dumps({"banker": 0, "hands": DEAL}))
    run = run_cli("perft", str(path), "--depth", "3")
    assert run.returncode == 0
    assert run.stdout.strip() == "1879"
    assert run.stderr == ""


def test_cli_missing_file(tmp_path):
    run = run_cli("replay", str(tmp_path / "nowhere.jsonl"))
    assert run.returncode == 2
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("tiengow: error:")
    assert "nowhere.jsonl" in run.stderr


def _main_one_line_error(capsys, argv) -> str:
    """Run the CLI in-process; it must fail with status 2 and one line on stderr."""
    status = cli.main(argv)
    out = capsys.readouterr()
    assert status == 2
    assert out.err.count("\n") == 1 and out.err.startswith("tiengow: error:")
    return out.err


def test_cli_perft_missing_file(tmp_path, capsys):
    assert "nowhere.json" in _main_one_line_error(capsys, ["perft", str(tmp_path / "nowhere.json"), "--depth", "1"])


@pytest.mark.parametrize(
    "command, status, err",
    [(["replay"], 0, ""), (["perft", "--depth", "1"], 0, ""), (["show"], 2, "empty.jsonl holds no records")],
)
def test_cli_an_empty_records_file(command, status, err, tmp_path, capsys):
    """replay and perft are filters, one output line per input line (issue 15): no line in, none
    out, and success; show shows one record, and says there is none."""
    (tmp_path / "empty.jsonl").write_text("")
    assert cli.main([*command, str(tmp_path / "empty.jsonl")]) == status
    captured = capsys.readouterr()
    assert captured.out == "" and err in captured.err and (err or captured.err == "")


@pytest.mark.parametrize(
    "content, says",
    [
        ("", "it holds nothing (it is empty)"),
        ("# only a comment\n", "it holds nothing (it is empty)"),
        ("- 1\n", "it holds a list value, [1]"),
    ],
)
def test_cli_a_rules_file_without_a_mapping_says_what_it_holds(content, says, tmp_path, capsys):
    (tmp_path / "r.yaml").write_text(content)
    error = _main_one_line_error(capsys, ["eval", "greedy", "--vs", "random", "--rules", str(tmp_path / "r.yaml")])
    assert "must hold a mapping of switches, such as `players: 3`" in error and says in error


def test_cli_a_json_list_of_rules_is_not_called_a_preset(capsys):
    error = _main_one_line_error(capsys, ["eval", "greedy", "--vs", "random", "--rules", "[]"])
    assert "--rules takes a preset name, a rules file or a JSON object of switches" in error


def test_cli_directory_instead_of_file(tmp_path, capsys):
    _main_one_line_error(capsys, ["replay", str(tmp_path)])


@pytest.mark.parametrize(
    "argv, says",
    [
        (["train", "cfr", "--config", "/dev/zero"], "config /dev/zero is larger than 1 MB: too large to be one"),
        (["train", "ppo", "--config", "/dev/zero"], "config /dev/zero is larger than 1 MB: too large to be one"),
        (["eval", "cfr:/dev/zero", "--vs", "random", "--deals", "1"], "policy file /dev/zero is not a regular file"),
        (["nashconv", "/dev/zero"], "policy file /dev/zero is not a regular file"),
        (["eval", "ppo:/dev/zero", "--vs", "random", "--deals", "1"], "/dev/zero is not a readable PPO checkpoint"),
        (["perft", "/dev/zero", "--depth", "1"], "/dev/zero is larger than 256 MB"),
    ],
)
def test_cli_an_endless_device_given_as_a_file_is_refused(capsys, argv, says):
    assert says in _main_one_line_error(capsys, argv)


def test_cli_file_not_utf8(tmp_path, capsys):
    # Issue 15: a line that is not UTF-8 is an error line of its own, not the whole file's.
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\xff\xfe\x00 not json\n")
    assert cli.main(["replay", str(path)]) == 2
    out = capsys.readouterr()
    assert out.err == ""
    assert json.loads(out.out) == {
        "error": "line 1 is not valid UTF-8 (byte b'\\xff' at offset 0)",
        "action_index": None,
    }


def test_cli_perft_negative_depth(tmp_path, capsys):
    path = tmp_path / "deal.json"
    path.write_text(json.dumps({"banker": 0, "hands": DEAL}))
    assert "depth" in _main_one_line_error(capsys, ["perft", str(path), "--depth", "-1"])


def test_huge_trick_bonus_stakes_are_refused_cleanly(tmp_path):
    # Refused as a record (index None), or accepted and then unfinished (index 0): either is
    # a RecordError. An OverflowError is neither.
    with pytest.raises(RecordError):
        replay(rec([], rules={"trick_bonus_stakes": [10**30, 4]}))
