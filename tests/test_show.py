"""``tiengow show``: every line of the conformance file is drawn, the drawn settlement adds up
to the core's, and the story kept by ``HandLog`` gives back a record that replays the same."""

import io
import json
import re
import subprocess
import sys

import pytest
from conftest import conformance_lines
from rich.console import Console

from tiengow.ui import cmd_show, render
from tiengow.ui.show import show
from tiengow.ui.tracker import HandLog
from tiengow_env.game import Game, parse_record, replay

LINES = conformance_lines()
MODULE = "tiengow.ui"


def played_record(seed: int) -> dict:
    """A finished hand record: seeded deal, the first legal action at every turn."""
    game = Game(seed=seed)
    log = HandLog(game)
    while not game.is_over:
        log.step(game.legal_actions()[0])
    return log.record()


def draw(record: object) -> str:
    console = Console(file=io.StringIO(), width=100, highlight=False, markup=False)
    show(record, "test", console)
    return console.file.getvalue()


def finished(record: dict) -> Game:
    game, actions = parse_record(record)
    for action in actions:
        game.play(action)
    return game


def test_every_conformance_line_is_drawn():
    """Legal records are drawn to the settlement; refused ones up to the refusal, which is a
    ValueError (the CLI's one-line error), never another exception."""
    for n, line in enumerate(LINES, 1):
        record = line["record"]
        if line.get("error"):
            try:
                out = draw(record)
            except ValueError as err:
                assert str(err), n
            else:
                assert "the hand is not over" in out, n  # a truncated record: drawn as far as it goes
            continue
        out = draw(record)
        expected = line["expected"]
        assert "Settlement with W = seat" in out and "Net: " in out, n
        assert len([x for x in out.splitlines() if re.match(r"Trick \d+: ", x)]) == len(expected["tricks"]), n
        net = " · ".join(f"seat {s} {v:+d}" for s, v in enumerate(expected["net"]))
        assert f"Net: {net}" in out, n


def test_settlement_breakdown_adds_up_to_the_core():
    for n, line in enumerate(LINES, 1):
        if line.get("error"):
            continue
        game = finished(line["record"])
        _, settlement = render.settlement_view(game, lambda s: f"seat {s}")
        assert settlement == line["expected"]["settlement"], n


def test_hand_log_records_replay_the_same():
    """The record that HandLog writes (whole discards, forced discards left out) replays to the
    same result as the original."""
    for n, line in enumerate(LINES, 1):
        if line.get("error"):
            continue
        game, actions = parse_record(line["record"])
        log = HandLog(game)
        for action in actions:
            log.play(action)
        record = log.record()
        assert replay(record) == replay(line["record"]), n


def test_hand_log_merges_single_tile_discards():
    game = Game(seed=12)
    log = HandLog(game)
    while not game.is_over:
        log.step(game.legal_actions()[-1])  # the last legal action: discards whenever allowed
    record = log.record()
    assert replay(record) == game.result()
    for trick in log.tricks:
        assert len({m.seat for m in trick.moves}) == len(trick.moves)  # one move per seat and trick


def test_show_command_reads_jsonl_with_index(tmp_path):
    path = tmp_path / "records.jsonl"
    records = [played_record(seed) for seed in range(3)]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    run = subprocess.run(
        [sys.executable, "-m", MODULE, "show", str(path), "--index", "2"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "record 2 of 3" in run.stdout and "Net: " in run.stdout
    args = type("Args", (), {"path": str(path), "index": 9, "step": False})
    with pytest.raises(ValueError) as refused:
        cmd_show(args)
    assert str(refused.value) == f"--index 9 is out of range: {path} holds 3 records (1 to 3)"


def test_step_waits_after_each_trick(tmp_path, monkeypatch, capsys):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(played_record(4)))
    args = type("Args", (), {"path": str(path), "index": None, "step": True})
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n\nq\n"))
    assert cmd_show(args) == 0
    out = capsys.readouterr().out
    assert out.count("Enter: next trick, q: stop> ") == 3
    assert len([x for x in out.splitlines() if re.match(r"Trick \d+: ", x)]) == 2 and "Settlement" not in out
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # no input: drawn to the end
    assert cmd_show(args) == 0
    assert "Net: " in capsys.readouterr().out


def test_refused_record_is_one_error(tmp_path):
    record = {
        "banker": 0,
        "hands": [Game(seed=3).dealt(s) for s in range(4)],
        "actions": [{"seat": 1, "play": ["6-6"]}],
    }
    with pytest.raises(ValueError, match="action 0 is refused: wrong seat"):
        draw(record)
    with pytest.raises(ValueError, match="record is refused: record: unknown key 'bogus'"):
        draw({**record, "bogus": 1})
