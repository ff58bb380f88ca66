"""``tiengow play`` driven through scripted standard input: whole matches, bad input at many
points, EOF, the saved records replayed to the same chips, and the reading of typed moves."""

import argparse
import io
import json
import re
import subprocess
import sys

import pytest
from rich.console import Console

from tiengow import cli
from tiengow.ui import add_parsers, cmd_play
from tiengow.ui import render as R
from tiengow.ui.play import Match, MatchOptions, Stop, interpret, menu
from tiengow.ui.tracker import HandLog
from tiengow_env.game import Game, replay
from tiengow_env.rules import RuleSet

# Through the real command once the lead has wired it into cli.py; until then the same
# parsers and handlers through ``python -m tiengow.ui``.
MODULE = "tiengow.cli" if "play" in cli.COMMANDS else "tiengow.ui"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tiengow")
    add_parsers(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def play(argv: list[str], lines: list[str], monkeypatch, capsys) -> tuple[int, str]:
    """Run ``tiengow play ARGV`` in this process with ``lines`` on standard input."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = cmd_play(parse(["play", *argv]))
    return code, capsys.readouterr().out


def chips_line(out: str, label: str) -> list[int]:
    """The chips of a ``... chips ...: you +14 · seat 1 -4 ...`` line, in seat order."""
    line = [row for row in out.splitlines() if row.startswith(label)][-1]
    return [int(v) for v in re.findall(r"(?:you|seat \d) ([+-]\d+)", line)]


def replayed_chips(save) -> list[int]:
    nets = [replay(json.loads(line))["net"] for line in (save / "match.jsonl").read_text().splitlines()]
    return [sum(seat) for seat in zip(*nets, strict=True)]


def test_whole_match_through_a_pipe(tmp_path):
    """A whole match through the command line and a real pipe; `tiengow replay` of the saved
    records gives the chips the match printed."""
    save = tmp_path / "match"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            MODULE,
            "play",
            "--vs",
            "random",
            "--hands",
            "3",
            "--seed",
            "5",
            "--seat",
            "1",
            "--save",
            str(save),
        ],
        input="1\n" * 200,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "\x1b[" not in run.stdout  # a pipe gets no colour codes
    assert "Match over" in run.stdout
    final = chips_line(run.stdout, "Final chips")
    assert sum(final) == 0 and len(final) == 4
    assert sorted(p.name for p in save.iterdir()) == ["hand-001.json", "hand-002.json", "hand-003.json", "match.jsonl"]
    out = subprocess.run(
        [sys.executable, "-m", "tiengow.cli", "replay", str(save / "match.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    nets = [json.loads(line)["net"] for line in out.splitlines()]
    assert [sum(seat) for seat in zip(*nets, strict=True)] == final


def test_match_passes_the_bank_and_saves_exact_records(tmp_path, monkeypatch, capsys):
    save = tmp_path / "m"
    code, out = play(
        ["--vs", "greedy", "--hands", "4", "--seed", "21", "--save", str(save)], ["1"] * 300, monkeypatch, capsys
    )
    assert code == 0 and "Match over" in out
    records = [json.loads(line) for line in (save / "match.jsonl").read_text().splitlines()]
    assert len(records) == 4
    streak = 1
    for k, record in enumerate(records):
        assert set(record) <= {"rules", "banker", "hands", "actions", "streak"} and record["rules"] == "standard"
        assert record == json.loads((save / f"hand-{k + 1:03d}.json").read_text())
        assert record.get("streak", 1) == streak
        result = replay(record)
        if k + 1 < len(records):
            assert records[k + 1]["banker"] == result["last_trick_winner"]
            streak = streak + 1 if result["last_trick_winner"] == record["banker"] else 1
    assert replayed_chips(save) == chips_line(out, "Final chips")
    assert "Settlement with W = " in out and "banker double x2" in out and "Net this hand" in out


BAD_INPUTS = [  # (typed line, words the explanation must contain)
    ("", "Type a move number"),
    ("hello", "I do not understand"),
    ("7-7", "is not a tile"),
    ("999", "There is no move 999"),
    ("0", "There is no move 0"),
    ("d", "Which tiles?"),
    ("6-6 6-6 6-6", "hold"),
    ("declare", "no One Red Dot"),
    ("6-6+1-1", ""),  # not held, not a combination, or not a beat: explained either way
    ("?", "How to move"),
    ("m", "Moves:"),
]


def test_bad_input_at_every_turn_is_explained_and_asked_again(tmp_path, monkeypatch, capsys):
    """Before every decision the person first types something wrong; each is explained, the
    prompt comes back, and the match still ends with records that replay."""
    lines = []
    for k in range(400):
        lines += [BAD_INPUTS[k % len(BAD_INPUTS)][0], "n", "1"]  # "n" answers a possible discard question
    save = tmp_path / "bad"
    code, out = play(["--vs", "random", "--hands", "2", "--seed", "3", "--save", str(save)], lines, monkeypatch, capsys)
    assert code == 0 and "Match over" in out
    for _, words in BAD_INPUTS:
        assert words in out
    turns = out.count("Moves:")
    assert out.count("Your move> ") > 2 * turns  # every turn was asked again at least once
    assert replayed_chips(save) == chips_line(out, "Final chips")


def test_end_of_input_stops_the_match_cleanly(tmp_path, monkeypatch, capsys):
    save = tmp_path / "eof"
    code, out = play(
        ["--vs", "random", "--hands", "5", "--seed", "8", "--save", str(save)], ["1"] * 12, monkeypatch, capsys
    )
    assert code == 0
    assert out.rstrip().splitlines()[-1].startswith("End of input.")
    assert not (save / "match.jsonl").exists() or all(
        replay(json.loads(line)) for line in (save / "match.jsonl").read_text().splitlines()
    )


def test_quit_after_a_finished_hand_keeps_it(tmp_path, monkeypatch, capsys):
    save = tmp_path / "quit"
    lines = ["1"] * 40 + ["q"]  # more than one hand needs, so that q comes in the second hand
    code, out = play(["--vs", "random", "--hands", "9", "--seed", "4", "--save", str(save)], lines, monkeypatch, capsys)
    assert code == 0 and "You left the match." in out
    hands = (save / "match.jsonl").read_text().splitlines()
    assert len(hands) >= 1
    assert replayed_chips(save) == chips_line(out, "You left the match.")


@pytest.mark.parametrize(
    "rules,seat",
    [
        ("three_player", 2),
        ("seed001", 1),
        ("micro", 3),
        ("culin1895", 0),
        ('{"one_red_dot": "choice", "discards_face_up": true, "must_beat_if_able": true}', 2),
        ('{"preset": "hongkong", "combos": "pairs_only"}', 1),
    ],
)
def test_variants_play_and_replay(rules, seat, tmp_path, monkeypatch, capsys):
    save = tmp_path / "v"
    code, out = play(
        ["--vs", "greedy", "--hands", "2", "--seed", "2", "--seat", str(seat), "--rules", rules, "--save", str(save)],
        ["1"] * 200,
        monkeypatch,
        capsys,
    )
    assert code == 0 and "Match over" in out
    assert replayed_chips(save) == chips_line(out, "Final chips")
    record = json.loads((save / "hand-001.json").read_text())
    spec = json.loads(rules) if rules.startswith("{") else rules
    assert RuleSet.from_spec(record["rules"]) == RuleSet.from_spec(spec)
    assert record["rules"] == rules if isinstance(spec, str) else record["rules"]["preset"] == "standard"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--seat", "4"], "--seat must be 0..3"),
        (["--rules", "three_player", "--seat", "3"], "--seat must be 0..2"),
        (["--vs", "nobody"], "unknown agent 'nobody'"),
        (["--rules", "nonsense"], "unknown preset 'nonsense'"),
        (["--rules", "{not json"], "not a valid JSON object"),
    ],
)
def test_bad_arguments_are_refused_in_words(argv, message, tmp_path):
    with pytest.raises(ValueError, match=re.escape(message)):
        cmd_play(parse(["play", "--save", str(tmp_path / "x"), *argv]))


def test_a_directory_with_records_is_not_overwritten(tmp_path, monkeypatch, capsys):
    play(["--vs", "random", "--hands", "1", "--seed", "1", "--save", str(tmp_path)], ["1"] * 30, monkeypatch, capsys)
    with pytest.raises(ValueError, match="already holds files"):
        cmd_play(parse(["play", "--vs", "random", "--save", str(tmp_path)]))


def test_save_takes_a_new_or_empty_directory_as_its_help_says(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="give a new or empty folder"):
        cmd_play(parse(["play", "--vs", "random", "--save", str(tmp_path)]))
    with pytest.raises(ValueError, match="is a file; give a folder"):
        cmd_play(parse(["play", "--vs", "random", "--save", str(tmp_path / "notes.txt")]))


# ----------------------------------------------------------------------------- reading moves
# Seat 3 banks and leads 6-6; seat 0 (the person) answers. Seat 0: no 6-6 left to beat with.
HANDS = [
    ["1-1", "4-4", "3-1", "5-1", "5-1", "6-3", "5-2", "4-1"],
    ["6-6", "1-1", "4-4", "3-1", "5-5", "3-3", "2-2", "6-5"],
    ["5-5", "3-3", "2-2", "6-5", "6-4", "6-4", "6-1", "6-1"],
    ["6-6", "5-4", "6-2", "5-3", "4-3", "4-2", "3-2", "2-1"],
]


def following_game() -> tuple[Game, HandLog]:
    game = Game(hands=HANDS, banker=3)
    log = HandLog(game)
    log.play({"seat": 3, "play": ["6-6"]})
    return game, log


@pytest.mark.parametrize(
    "typed,what,detail",
    [
        ("1-1", "ask", "does not beat"),  # a civil single that cannot beat Heaven
        ("6-3", "ask", "6-3 (military single) cannot beat a civil single"),  # classes in words, not civil_single
        ("1-1 6-3", "error", "This trick needs exactly 1 tile, got 2"),  # the count, not "the list shows every lead"
        ("d 5-1", "apply", {"seat": 0, "discard": ["5-1"]}),
        ("discard 1-5", "apply", {"seat": 0, "discard": ["5-1"]}),
        ("5-1 5-1", "error", "exactly 1 tile"),
        ("d 5-1 5-1", "error", "exactly 1 tile"),
        ("6-6", "error", "do not hold 6-6"),
        ("5-1 5-1 5-1", "error", "only 2 x 5-1"),
        ("6-9", "error", "'6-9' is not a tile"),
        ("x-y", "error", "I do not understand 'x-y'"),
        ("12", "error", "There is no move 12"),
        ("q", "quit", None),
        ("?", "help", None),
    ],
)
def test_interpret(typed, what, detail):
    game, _ = following_game()
    options, _ = menu(game)
    got, got_detail = interpret(typed, options, game)
    assert got == what
    if isinstance(detail, str):
        text = got_detail[1] if what == "ask" else got_detail
        assert detail in text
    elif detail is not None:
        assert got_detail == detail


def test_menu_offers_whole_discards_and_numbers_apply_them():
    game, _ = following_game()
    options, unlisted = menu(game)
    assert unlisted == 0
    assert [o.action for o in options] == [
        {"seat": 0, "discard": [t]} for t in ("4-1", "5-2", "6-3", "5-1", "3-1", "4-4", "1-1")
    ]
    game = Game(hands=HANDS, banker=3)
    game.play({"seat": 3, "play": ["4-2", "2-1"]})
    options, unlisted = menu(game)  # 28 distinct pairs of 8 tiles, minus duplicates; 10 listed
    assert all("discard" in o.action and len(o.action["discard"]) == 2 for o in options)
    assert len(options) == 10 and unlisted > 0


def scripted_match(tmp_path, lines: list[str], seat: int = 0, rules: object = "standard") -> tuple[Match, io.StringIO]:
    out = io.StringIO()
    feed = iter(lines)

    def read_line(prompt: str) -> str:
        try:
            line = next(feed)
        except StopIteration:
            raise EOFError from None
        out.write(prompt + line + "\n")
        return line

    options = MatchOptions(vs="greedy", seat=seat, rules=RuleSet.from_spec(rules), hands=1, seed=0, save=tmp_path)
    return Match(options, Console(file=out, width=100, markup=False, highlight=False), read_line), out


def test_tiles_that_cannot_beat_are_discarded_after_asking(tmp_path):
    game, log = following_game()
    match, out = scripted_match(tmp_path, ["1-1", "n", "1-1", "y"])
    events = match.person_turn(game, log)
    assert [e[1].kind for e in events if e[0] == "move"] == ["discard"]
    text = out.getvalue()
    assert "1-1 does not beat 6-6" in text and "Not discarded" in text and "Discard 1-1 face down instead?" in text
    assert log.record()["actions"] == [{"seat": 3, "play": ["6-6"]}, {"seat": 0, "discard": ["1-1"]}]


def test_a_person_declares_one_red_dot(tmp_path):
    # Seat 0 holds exactly one red pip (3-1); under one_red_dot choice it is asked first.
    hands = [
        ["3-1", "5-5", "3-3", "2-2", "6-5", "6-3", "6-2", "5-3"],
        ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "5-5"],
        ["3-3", "2-2", "6-5", "6-4", "6-4", "6-1", "6-1", "5-1"],
        ["5-1", "5-4", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
    ]
    rules = {"one_red_dot": "choice"}
    match, out = scripted_match(tmp_path, ["6-6", "declare"], rules=rules)
    game = Game(hands=hands, banker=2, rules=rules)
    log = match.play_hand(game)
    record = log.record()
    assert record["actions"] == [{"seat": 0, "declare": True}]
    assert replay(record)["net"] == [60, -20, -20, -20]
    text = out.getvalue()
    assert "You hold One Red Dot" in text and "declared One Red Dot" in text and "shutout x2" in text


def test_colour_only_where_the_terminal_has_it():
    hand = R.hand_text([0, 18, 11], Game(seed=1).combos)
    colour = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=80)
    colour.print(hand)
    assert "\x1b[1;31m4\x1b[0m-\x1b[1;31m1" in colour.file.getvalue()  # 4-1: both halves red
    plain = Console(file=io.StringIO(), width=80)
    plain.print(hand)
    assert "\x1b" not in plain.file.getvalue() and "4-1" in plain.file.getvalue()


def test_stop_is_not_an_error():
    assert issubclass(Stop, Exception) and not issubclass(Stop, ValueError)


def test_an_ascii_terminal_gets_stand_ins(monkeypatch):
    from tiengow.ui.play import make_console

    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii"))
    console = make_console()
    console.print(R.chips_text([1, -1], lambda s: f"seat {s}"), "★ Tien Gow (天九)")
    sys.stdout.flush()
    assert raw.getvalue().decode("ascii").strip() == "seat 0 +1 | seat 1 -1 * Tien Gow"


# ----------------------------------------------------------------------------- outputs and prompts
def test_quitting_before_a_finished_hand_leaves_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out = play(["--vs", "random", "--hands", "2", "--seed", "1"], ["q"], monkeypatch, capsys)
    assert code == 0 and "before the end of its first hand" in out
    assert list(tmp_path.iterdir()) == []
    code, out = play(["--vs", "random", "--hands", "2", "--seed", "1", "--save", "mine"], ["q"], monkeypatch, capsys)
    assert code == 0 and list(tmp_path.iterdir()) == []


def test_records_go_under_runs_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out = play(["--vs", "random", "--hands", "1", "--seed", "1"], ["1"] * 30, monkeypatch, capsys)
    (folder,) = (tmp_path / "runs" / "play").iterdir()
    assert code == 0 and sorted(p.name for p in folder.iterdir()) == ["hand-001.json", "match.jsonl"]
    assert f"Saved runs/play/{folder.name}/hand-001.json" in out
    assert [p.name for p in tmp_path.iterdir()] == ["runs"]


def test_the_chips_column_is_the_match_total(tmp_path):
    game, log = following_game()
    match, out = scripted_match(tmp_path, [])
    match.chips = [5, -1, -2, -2]
    match.screen(game, log, *menu(game))
    header, you = out.getvalue().splitlines()[1:3]
    assert "match chips" in header and re.search(r"\+5\b", you)


def test_more_lists_every_move(tmp_path):
    game = Game(hands=HANDS, banker=3)
    game.play({"seat": 3, "play": ["4-2", "2-1"]})
    log = HandLog(game)
    short, unlisted = menu(game)
    every, none_left = menu(game, full=True)
    assert unlisted > 0 and none_left == 0 and len(every) == len(short) + unlisted
    assert [o.action for o in every[: len(short)]] == [o.action for o in short]
    last = every[-1].action
    match, out = scripted_match(tmp_path, ["more", str(len(every))])
    match.person_turn(game, log)
    text = out.getvalue()
    assert "type more to list them all" in text and f" {len(every):3d}  discard" in text
    assert log.record()["actions"][-1] == last


def test_a_prompt_shows_its_brackets_on_a_terminal(monkeypatch):
    """Rich reads "[y/N]" as a style tag unless markup is off: on a terminal it must show."""
    from tiengow.ui.play import make_reader

    console = Console(file=io.StringIO(), force_terminal=True, width=80, highlight=False, markup=False)
    monkeypatch.setattr(sys, "stdin", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    monkeypatch.setattr("builtins.input", lambda *a: "y")
    assert make_reader(console)("Discard 1-1 face down instead? [y/N] ") == "y"
    assert re.sub(r"\x1b\[[0-9;]*m", "", console.file.getvalue()) == "Discard 1-1 face down instead? [y/N] "


def test_ppo_under_another_preset_says_what_it_was_trained_on(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    code, out = play(
        ["--vs", "ppo", "--rules", "hongkong", "--hands", "1", "--seed", "1", "--save", str(tmp_path / "m")],
        ["q"],
        monkeypatch,
        capsys,
    )
    notes = [line for line in out.splitlines() if line.startswith("Note:")]
    assert code == 0 and len(notes) == 1
    assert "trained on standard rules" in notes[0] and "banker_double" in notes[0]
    code, out = play(
        ["--vs", "ppo", "--hands", "1", "--seed", "1", "--save", str(tmp_path / "n")], ["q"], monkeypatch, capsys
    )
    assert "Note:" not in out
