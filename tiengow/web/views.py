"""JSON views of games for the page: tiles, tricks, moves, explanations and the settlement.

The words come from the terminal UI (``tiengow.ui.render``), so the browser and ``tiengow play``
name combinations, moves and multipliers alike. Every function returns plain JSON data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tiengow.ui import render as R
from tiengow.ui.tracker import Move, Trick
from tiengow_env import layout as L
from tiengow_env.game import Game
from tiengow_env.tiles import CHINESE, NAMES, NUM_TYPES, PIPS, SUIT, mask_types

EXPLAIN_BARS = 16  # the page draws the best few legal moves' bars; the rest are counted


def tile_table() -> list[dict]:
    """Every tile type: name, suit, Chinese name, pips, and which halves are red (RULES.md section 1)."""
    return [
        {
            "name": NAMES[t],
            "suit": "civil" if SUIT[t] == 0 else "military",
            "title": CHINESE[t],
            "pips": int(PIPS[t]),
            "red": list(R.red_halves(t)),
        }
        for t in range(NUM_TYPES)
    ]


def move_view(move: Move, game: Game, seat_name: Callable[[int], str], reveal: bool) -> dict:
    """One move of a trick: seat, kind, its tiles (None when face down and hidden), and its words."""
    shown = reveal or move.kind in ("lead", "beat")
    who = seat_name(move.seat)
    return {
        "seat": move.seat,
        "kind": move.kind,
        "tiles": [NAMES[t] for t in sorted(move.types)] if shown else None,
        "count": len(move.types),
        "text": R.move_text(move.kind, move.types, who, game.combos, you=who == "you", reveal=shown).plain,
    }


def trick_view(
    trick: Trick,
    game: Game,
    seat_name: Callable[[int], str],
    reveal: Callable[[int], bool],
    best_seat: int | None = None,
) -> dict:
    """A trick, complete or in progress: its moves in order, the best so far or the winner."""
    view = {
        "number": trick.number,
        "leader": trick.leader,
        "size": trick.size,
        "moves": [move_view(m, game, seat_name, reveal(m.seat)) for m in trick.moves],
        "best_seat": best_seat,
        "winner": trick.winner,
        "winning": None,
        "bonus": trick.bonus,
        "bonus_text": None,
    }
    if trick.winner is not None:
        view["best_seat"] = trick.winner
        view["winning"] = R.combo_text(trick.winning).plain
        if trick.bonus:
            view["bonus_text"] = R.bonus_text(trick.winning, trick.bonus, game, seat_name).plain
    return view


def trick_line(trick: Trick, seat_name: Callable[[int], str]) -> str:
    """``Trick 3: seat 2 wins 2 columns with 6-6+6-3 (Heaven & Nine mixed pair)``."""
    who = seat_name(trick.winner)
    return (
        f"Trick {trick.number}: {who} {'win' if who == 'you' else 'wins'} {trick.size} "
        f"column{'s' * (trick.size > 1)} with {R.combo_text(trick.winning).plain}"
    )


def groups_view(types: Sequence[int], game: Game) -> list[dict]:
    """A hand split into the combinations it can form (as the terminal shows it), singles last."""
    return [
        {"tiles": [NAMES[t] for t in group], "title": R.combo_title(c) if c is not None else None}
        for group, c in R.group_hand(types, game.combos)
    ]


def action_label(game: Game, action: int) -> str:
    """An action id in words: ``lead 6-6+6-3 (Heaven & Nine mixed pair)``, ``discard 5-1``, ``declare``."""
    C = game.combos.num_combos
    if action < C:
        verb = "lead " if game.phase == "lead" else "beat with "
        return verb + R.combo_text(game.combos.combos[action]).plain
    if L.is_discard(action, C):
        return f"discard {NAMES[action - C]} face down"
    return "declare One Red Dot" if action == L.declare_action(C) else "decline One Red Dot"


def explanation_view(explained: dict | None, chosen: int, game: Game) -> dict | None:
    """An agent's ``explain`` output as bars over the legal moves, best first, the chosen one marked;
    None when the agent gave none. Malformed output is ignored rather than shown wrong."""
    if not isinstance(explained, dict):
        return None
    actions, values = explained.get("actions"), explained.get("values")
    if not isinstance(actions, list) or not isinstance(values, list) or len(actions) != len(values) or not actions:
        return None
    bars = sorted(
        (
            {"action": int(a), "label": action_label(game, int(a)), "value": float(v), "chosen": int(a) == chosen}
            for a, v in zip(actions, values)
        ),
        key=lambda b: -b["value"],
    )
    shown = bars[:EXPLAIN_BARS]
    if not any(b["chosen"] for b in shown):
        shown[-1:] = [b for b in bars if b["chosen"]][:1] or shown[-1:]
    return {"kind": explained.get("kind", "values"), "bars": shown, "more": len(bars) - len(shown)}


def settlement_view(game: Game, seat_name: Callable[[int], str], chips_before: Sequence[int]) -> dict:
    """The settlement of a finished hand, line by line with each multiplier named (as
    ``tiengow play`` prints it), and the result of the core that the lines add up to."""
    result = game.result()
    head, notes, rows, _ = R.settlement_lines(game, seat_name)
    return {
        "head": head.plain,
        "multipliers": notes,
        "header": list(rows[0]),
        "rows": [list(r) for r in rows[1:]],
        "columns": result["columns"],
        "trick_bonus": result["trick_bonus"],
        "settlement": result["settlement"],
        "net": result["net"],
        "last_trick_winner": result["last_trick_winner"],
        "chips_after": [c + n for c, n in zip(chips_before, result["net"])],
    }


def seat_counts(game: Game, seat: int) -> dict:
    """Public counts of a seat: tiles in hand, columns won, tiles face down."""
    view = game.view
    return {
        "tiles_left": len(mask_types(view.hands[seat])),
        "columns": int(view.columns[seat]),
        "face_down": len(mask_types(view.down[seat])),
    }
