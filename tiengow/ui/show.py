"""``tiengow show``: a hand record drawn trick by trick, every seat's tiles face up, then the settlement.

It reads what ``tiengow replay`` reads (a ``.json`` record, or ``.jsonl`` with one record per
line) and also the lines of the conformance file, ``{"record": ..., "expected": ...}``, whose
record it shows. A record that the rules refuse is drawn up to the refused action, and the
refusal is the command's error (exit status 2), as in ``replay``. A record that stops before
the end of the hand (a perft position) is drawn as far as it goes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from tiengow_env.game import RecordError, load_records, parse_record
from tiengow_env.tiles import mask_types

from . import render as R
from .tracker import HandLog, Trick


def seat_name(seat: int) -> str:
    return f"seat {seat}"


def seat_cell(game, seat: int) -> str:
    """A seat in a table whose column says "seat": ``0``, or ``0 banker``."""
    return f"{seat} banker" if seat == game.banker else str(seat)


def pick_record(path: str, index: int | None) -> tuple[object, str, int]:
    """(record, title, number of records) of the ``index``-th record of a file, counting from 1."""
    try:
        records = load_records(path)
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror}") from None
    if not records:
        raise ValueError(f"{path} holds no records")
    if index is None:
        index = 1
    if not 1 <= index <= len(records):
        raise ValueError(
            f"--index {index} is out of range: {path} holds {len(records)} record"
            f"{'s' * (len(records) > 1)} (1 to {len(records)})"
        )
    record = records[index - 1]
    if isinstance(record, RecordError):
        raise ValueError(f"record {index} of {path}: {record}")
    title = f"{path}, record {index} of {len(records)}" if len(records) > 1 else str(path)
    if isinstance(record, dict) and "record" in record and "hands" not in record:  # a conformance line
        if record.get("tag"):
            title += f" ({record['tag']})"
        record = record["record"]
    return record, title, len(records)


def show(record: object, title: str, console: Console, pause: Callable[[], bool] | None = None) -> None:
    """Draw ``record``; ``pause()`` is called after the deal and after each trick, and returning
    False stops the drawing. ValueError if the record is refused (after drawing what it could)."""
    try:
        game, actions = parse_record(record)
    except RecordError as err:
        raise ValueError(f"the record is refused: {err}") from None
    log = HandLog(game)
    rules = game.rules
    changes = ", ".join(f"{k}={json.dumps(v)}" for k, v in rules.diff().items())
    streak = game.view.streak
    console.print(Rule())
    console.print(Text(title, "bold"), soft_wrap=True)
    console.print(
        f"Rules: {rules.name}"
        + (f" ({changes})" if changes and rules.name != "standard" else "")
        + f" · {rules.players} players · banker seat {game.banker}"
        + (f" (streak {streak})" if streak > 1 else "")
    )
    rows: list = [("seat", "tiles, [grouped] by combination", "red pips")]
    for s in range(game.players):
        dealt = mask_types(game.view.dealt[s])
        rows.append((seat_cell(game, s), R.hand_text(dealt, game.combos, titles=False), str(R.red_pip_count(dealt))))
    console.print(Text("Dealt hands", "bold"))
    console.print(R.grid(rows, right=(2,), indent=2), soft_wrap=True)
    if log.auto_declared:
        console.print(
            R.move_text("declare", [], seat_name(log.declarations[0].seat), game.combos)
            + Text(" (exactly one red pip; the hand ends at once)")
        )
    if pause and not pause():
        return
    shown = 0
    for i, action in enumerate(actions):
        try:
            events = log.play(action)
        except ValueError as err:
            for trick in log.tricks[shown:]:
                console.print(trick_table(game, trick), soft_wrap=True)
            raise ValueError(f"action {i} is refused: {err}") from None
        for kind, detail in events:
            if kind == "move" and detail.kind in ("declare", "decline"):
                console.print(R.move_text(detail.kind, [], seat_name(detail.seat), game.combos))
            if kind == "trick":
                console.print(trick_table(game, detail), soft_wrap=True)
                shown += 1
                if pause and not game.is_over and not pause():
                    return
    if not game.is_over:
        for trick in log.tricks[shown:]:
            console.print(trick_table(game, trick), soft_wrap=True)
        console.print(
            Text(
                f"The record ends here, with seat {game.to_act} to act: the hand is not over, "
                "so there is no settlement.",
                "bold",
            )
        )
        return
    console.print(Rule("Settlement", style="dim"))
    result = game.result()
    console.print("Columns: " + " · ".join(f"{seat_name(s)} {c}" for s, c in enumerate(result["columns"])))
    view, _ = R.settlement_view(game, seat_name)
    for part in view:
        console.print(part, soft_wrap=True)
    if any(result["trick_bonus"]):
        console.print(Text("Trick bonuses: ") + R.chips_text(result["trick_bonus"], seat_name))
    console.print(Text("Settlement: ") + R.chips_text(result["settlement"], seat_name))
    console.print(Text("Net: ", "bold") + R.chips_text(result["net"], seat_name))


def trick_table(game, trick: Trick) -> Text:
    """One trick: each seat's tiles before it, in play order from the leader, its move, and who won."""
    done = trick.winner is not None
    text = Text(
        f"Trick {trick.number}: seat {trick.leader} leads"
        + (f" {trick.size} tile{'s' * (trick.size > 1)}" if trick.size else "")
        + "\n",
        "bold",
    )
    moves = {m.seat: m for m in trick.moves}
    rows: list = [("seat", "tiles before the trick", "move")]
    for k in range(game.players):
        s = (trick.leader + k) % game.players
        move = moves.get(s)
        doing = Text("")
        if move is not None:
            doing = R.move_text(move.kind, move.types, "", game.combos)
            if done and s == trick.winner and move.kind in ("lead", "beat"):
                doing.append("  ★", "bold")
        rows.append((seat_cell(game, s), R.tiles_text(trick.hands_before[s]), doing))
    text.append_text(R.grid(rows, indent=2))
    if done:
        text.append(f"\n  seat {trick.winner} wins {trick.size} column{'s' * (trick.size > 1)} with ")
        text.append_text(R.combo_text(trick.winning))
        if trick.bonus:
            text.append("\n  ")
            text.append_text(R.bonus_text(trick.winning, trick.bonus, game, seat_name))
    else:
        text.append("\n  (the trick is not finished)", "dim")
    return text


def cmd_show(args) -> int:
    """``tiengow show RECORD [--index N] [--step]``."""
    record, title, _ = pick_record(args.path, args.index)
    from .play import make_console, make_reader

    console = make_console()
    pause = None
    if args.step:
        read_line = make_reader(console)
        ended = False

        def pause() -> bool:
            nonlocal ended
            if ended:
                return True
            try:
                return read_line("Enter: next trick, q: stop> ").strip().lower() not in ("q", "quit")
            except EOFError:
                ended = True  # the input ended: draw the rest without stopping
                return True

    show(record, title, console, pause)
    return 0
