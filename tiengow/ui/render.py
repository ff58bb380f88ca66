"""Words and coloured text for people: tiles, combinations, hands, moves and the settlement.

Everything here returns ``rich.text.Text`` or plain strings and prints nothing. Colour is a
style on the text; ``rich`` drops it where the terminal has none (a pipe, ``NO_COLOR``).
Red pips (RULES.md section 1): a half showing 1 or 4 is red, and Heaven shows its 6 red pips
(half of its twelve) as one red half.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Span, Text

from tiengow_env.combos import Combination, CombinationTable
from tiengow_env.game import Game
from tiengow_env.tiles import BIG_SIX, CHINESE, HEAVEN, LITTLE_THREE, NAMES, PIPS, RED_PIPS, mask_types

RED = "bold red"
CLASS_TITLES = {
    "civil_single": "civil single",
    "military_single": "military single",
    "civil_pair": "civil pair",
    "military_pair": "military pair",
    "mixed_pair": "mixed pair",
    "supreme_pair": "Supreme pair",
    "triplet_2c1m": "triplet 2C1M",
    "triplet_1c2m": "triplet 1C2M",
    "quartet": "quartet",
    "civilian_triplet": "civilian triplet",
}


# ----------------------------------------------------------------------------- tiles
def red_halves(t: int) -> tuple[bool, bool]:
    """Which halves of tile type ``t`` (high half first) are drawn red."""
    if t == HEAVEN:
        return True, False
    high, low = NAMES[t].split("-")
    return high in "14", low in "14"


def tiles_text(types: Sequence[int], sep: str = " ") -> Text:
    """Tiles in canonical order, separated by ``sep``, with their red halves in red.

    Built as one string with spans on the red halves: drawing a file of records makes
    hundreds of thousands of these, and one ``Text`` per call keeps that fast."""
    plain, spans = [], []
    at = 0
    for k, t in enumerate(sorted(types)):
        if k:
            plain.append(sep)
            at += len(sep)
        red_high, red_low = red_halves(t)
        if red_high:
            spans.append(Span(at, at + 1, RED))
        if red_low:
            spans.append(Span(at + 2, at + 3, RED))
        plain.append(NAMES[t])
        at += 3
    return Text("".join(plain), spans=spans)


def tile_text(t: int) -> Text:
    """``4-1`` with its red halves in red."""
    return tiles_text((t,))


def names(types: Sequence[int], sep: str = " ") -> str:
    return sep.join(NAMES[t] for t in sorted(types))


# ----------------------------------------------------------------------------- combinations
def combo_title(c: Combination) -> str:
    """A person's name for a combination: ``Heaven``, ``Earth & Eight mixed pair``, ``Supreme pair``."""
    head = c.types[0]
    if c.cls in ("civil_single", "military_single"):
        return CHINESE[head]
    if c.cls == "civil_pair":
        return f"{CHINESE[head]} pair"
    if c.cls == "military_pair":
        return f"military pair of {PIPS[head]}s"
    if c.cls == "mixed_pair":
        return f"{CHINESE[head]} & {CHINESE[c.types[1]]} mixed pair"
    if c.cls in ("triplet_2c1m", "triplet_1c2m"):
        return f"{CHINESE[head]} {CLASS_TITLES[c.cls]}"
    if c.cls == "quartet":
        return f"{CHINESE[head]} & {CHINESE[c.types[-1]]} quartet"
    if c.cls == "civilian_triplet":
        return "Pendulum triplet" if head == HEAVEN else "Fish triplet"
    if c.cls == "supreme_pair":
        return "Supreme pair"
    suit, _, size = c.cls.partition("_")  # same_suit_any: civil_3, military_2, ...
    if size == "1":
        return CHINESE[head]
    return f"{size} {suit} tiles, {CHINESE[head]} high"


def combo_text(c: Combination, title: bool = True) -> Text:
    """``6-6+6-3 (Heaven & Nine mixed pair)``."""
    text = tiles_text(c.types, "+")
    if title:
        text.append(f" ({combo_title(c)})", "dim")
    return text


# Among groups of one size, prefer the classes that are hardest to beat when led.
_CLASS_ORDER = {
    "quartet": 9,
    "triplet_1c2m": 8,
    "triplet_2c1m": 7,
    "civilian_triplet": 6,
    "supreme_pair": 5,
    "civil_pair": 4,
    "mixed_pair": 3,
    "military_pair": 2,
}


def group_hand(types: Sequence[int], combos: CombinationTable) -> list[tuple[tuple[int, ...], Combination | None]]:
    """Split a hand into the combinations it can form, largest and strongest first, then singles.

    Greedy: take the largest combination the remaining tiles can make (the strongest class
    and strength among those), until only singles are left. Groups come in canonical order
    of their highest tile, so the hand still reads strongest first.
    """
    left = sorted(types)
    multi = sorted(
        (c for c in combos.combos if len(c.types) > 1),
        key=lambda c: (-len(c.types), -_CLASS_ORDER.get(c.cls, 0), -c.strength, c.types),
    )
    groups: list[tuple[tuple[int, ...], Combination | None]] = []
    found = True
    while found:
        found = False
        for c in multi:
            if all(c.types.count(t) <= left.count(t) for t in set(c.types)):
                groups.append((c.types, c))
                for t in c.types:
                    left.remove(t)
                found = True
                break
    groups += [((t,), None) for t in left]
    return sorted(groups, key=lambda g: g[0])


def hand_text(types: Sequence[int], combos: CombinationTable, titles: bool = True, width: int | None = None) -> Text:
    """A hand grouped by its combinations: ``[6-6 6-6 6-3 5-4] Heaven & Nine quartet  3-3  2-1``.
    The combinations' names are left out when they would make the line wider than ``width``."""
    parts = []
    for group, c in group_hand(types, combos):
        if c is None:
            parts.append(tile_text(group[0]))
        else:
            part = Text("[")
            part.append_text(tiles_text(group))
            part.append("]")
            if titles:
                part.append(" " + combo_title(c), "dim")
            parts.append(part)
    text = Text("  ").join(parts) if parts else Text("(no tiles)", "dim")
    if titles and width is not None and len(text) > width:
        return hand_text(types, combos, titles=False)
    return text


def red_pip_count(types: Sequence[int]) -> int:
    return int(sum(RED_PIPS[t] for t in types))


# ----------------------------------------------------------------------------- moves
# A move of one seat in one trick (see tracker.Move); its verb for "you" and for a seat.
_VERBS = {
    "lead": ("lead", "leads"),
    "beat": ("beat with", "beats with"),
    "discard": ("discard", "discards"),
    "forced": ("must discard", "must discard"),
    "declare": ("declare", "declares"),
    "decline": ("decline", "declines"),
}


def move_text(
    kind: str,
    types: Sequence[int],
    who: str,
    combos: CombinationTable,
    *,
    you: bool = False,
    reveal: bool = True,
    title: bool = True,
) -> Text:
    """``seat 2 beats with 6-6+6-3 (Heaven & Nine mixed pair)``; hidden discards give only a count.
    With ``who`` empty, the move alone: ``beats with 6-6+6-3``."""
    text = Text(f"{who} " if who else "")
    text.append(f"{_VERBS[kind][0 if you else 1]} ")
    if kind in ("lead", "beat"):
        text.append_text(combo_text(combos.combos[combos.find(types)], title))
    elif kind in ("discard", "forced"):
        if reveal:
            text.append_text(tiles_text(types))
            text.append(" face down")
        else:
            text.append(f"{len(types)} tile{'s' * (len(types) > 1)} face down")
        if kind == "forced" and title:
            text.append(" (early death)")
    else:
        text.append("One Red Dot")
    return text


# ----------------------------------------------------------------------------- layout
def grid(rows: Sequence[Sequence[Text | str]], right: Sequence[int] = (), indent: int = 0, gap: int = 2) -> Text:
    """Rows of cells as aligned columns in one ``Text`` (the first row is the header, dim).

    A plain grid rather than ``rich.table.Table``: it never wraps a cell, reads the same in a
    pipe, and costs little, which matters when a whole file of records is drawn."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in row] for row in rows]
    widths = [max(len(row[k]) for row in cells if k < len(row)) for k in range(max(map(len, cells)))]
    out = Text()
    for r, row in enumerate(cells):
        line = Text(" " * indent)
        for k, cell in enumerate(row):
            pad = " " * (widths[k] - len(cell))
            last = k == len(row) - 1
            if k in right:
                line.append(pad)
                line.append_text(cell)
            else:
                line.append_text(cell)
                if not last:
                    line.append(pad)
            if not last:
                line.append(" " * gap)
        if r == 0:
            line.stylize("dim")
        if r:
            out.append("\n")
        out.append_text(line)
    return out


# ----------------------------------------------------------------------------- settlement
def _points(columns: int, rules, par: int) -> tuple[int, str]:
    """(points p pays W, negative when W pays p) and how they arise, RULES.md section 6."""
    if columns == 0:
        points = par + 1 if rules.zero_column_points == "par+1" else par
        return points, f"pays {points}" + (" (par + 1)" if points > par else " (par)")
    if columns < par:
        return par - columns, f"pays {par - columns} ({par} - {columns})"
    if columns == par:
        return 0, "par: 0"
    if not rules.pay_over_par:
        return 0, "over par: 0 (pay_over_par off)"
    return par - columns, f"W pays {columns - par} ({columns} - {par})"


def banker_factor(game: Game) -> tuple[int, str]:
    """Factor of payments that involve this hand's banker, and its name."""
    streak = game.view.streak
    if game.rules.banker_streak:
        return 1 + streak, f"banker streak x{1 + streak}"
    return 2, "banker double x2"


def settlement_view(game: Game, seat_name: Callable[[int], str]) -> tuple[list, list[int]]:
    """The settlement of a finished hand as renderables: who W is, every multiplier named and
    why, and a table with one row per seat settling with W. Also the settlement chips per seat
    that the rows add up to (the tests check that they equal the core's)."""
    head, notes, rows, settlement = settlement_lines(game, seat_name)
    table = grid(rows, right=(1, 4), indent=2)
    return [head, Text("Multipliers:\n" + "\n".join("  " + note for note in notes)), table], settlement


def settlement_lines(
    game: Game, seat_name: Callable[[int], str]
) -> tuple[Text, list[str], list[tuple[str, ...]], list[int]]:
    """The parts of ``settlement_view`` as data: the head line, the multiplier notes, the rows
    (a header, then seat, columns, points, multipliers, chips), and the settlement per seat."""
    view, rules, players = game.view, game.rules, game.players
    par, banker, size = rules.par, game.banker, rules.hand_size
    w = view.winner
    last_mult, shut_mult = view.multipliers
    columns = view.columns.tolist()
    factor, factor_name = banker_factor(game)
    head = Text(f"Settlement with W = {seat_name(w)}, ")
    named: list[str] = []  # the multipliers that apply to every payment
    notes: list[str] = []
    captor = -1
    if view.declarer is not None:
        head.append(f"who declared One Red Dot and counts as winning all {size} columns")
    else:
        last = game.tricks[-1]
        leader, trick_size, winning = last.leader, last.size, game.combos.combos[last.winning]
        head.append("winner of the last trick with ")
        head.append_text(combo_text(winning))
        if last_mult > 1:
            how = "a single 2-1" if winning.types == (LITTLE_THREE,) else f"the {CLASS_TITLES[winning.cls]}"
            named.append("last trick x2")
            notes.append(f"last trick x2: won with {how}")
        elif rules.last_trick_bonus:
            notes.append("last trick x1: only the Supreme pair, a quartet or a single 2-1 doubles it")
        else:
            notes.append("no last-trick bonus (last_trick_bonus off)")
        if (
            rules.big_six_captures
            and trick_size == 1
            and w != leader
            and winning.types == (BIG_SIX,)
            and mask_types(view.on_table[leader]) == [LITTLE_THREE]
        ):
            captor = leader
    if shut_mult > 1:
        named.append("shutout x2")
        notes.append(f"shutout x2: {seat_name(w)} won all {size} columns")
    elif not rules.shutout_bonus:
        notes.append("no shutout bonus (shutout_bonus off)")
    elif size in columns:
        notes.append(
            f"shutout x1: the banker won all {size} columns, but the banker's first lead was "
            "unbeatable in the banker's own eyes"
        )
    else:
        notes.append(f"shutout x1: no one won all {size} columns")
    if rules.banker_double == "settling_banker":
        notes.insert(0, "banker double x2 on every payment with W")
    else:
        streak = f" (1 + streak {view.streak})" if rules.banker_streak else ""
        notes.insert(0, f"{factor_name}{streak} on payments with the banker ({seat_name(banker)}), x1 on the others")
    if captor >= 0:
        notes.append(f"Big Six captures Little Three: {seat_name(captor)} led 2-1 and pays every chip owed to W")
    settlement = [0] * players
    rows = [("seat", "columns", "points", "multipliers", "chips")]
    for p in range(players):
        if p == w:
            continue
        points, how = _points(columns[p], rules, par)
        if rules.banker_double == "settling_banker":
            f, parts = 2, ["banker double x2"]
        elif banker in (p, w):
            f, parts = factor, [factor_name]
        else:
            f, parts = 1, ["x1 (no banker in it)"]
        chips = points * f * last_mult * shut_mult
        payer = captor if chips > 0 and captor >= 0 else p
        settlement[payer] -= chips
        settlement[w] += chips
        if chips > 0:
            paid = f"-{chips} to {seat_name(w)}" + (f", paid by {seat_name(payer)}" if payer != p else "")
        elif chips < 0:
            paid = f"+{-chips} from {seat_name(w)}"
        else:
            paid = "0"
        rows.append((seat_name(p), str(columns[p]), how, ", ".join(parts + named) if points else "", paid))
    rows.append((f"{seat_name(w)} (W)", str(columns[w]), "", "", f"{settlement[w]:+d}"))
    return head, notes, rows, settlement


def bonus_text(winning: Combination, bonus: Sequence[int], game: Game, seat_name: Callable[[int], str]) -> Text:
    """A trick bonus (RULES.md section 5): the stake and who paid whom."""
    stake = game.rules.trick_bonus_stakes[0 if winning.cls == "supreme_pair" else 1]
    text = Text(
        f"Trick bonus for the {CLASS_TITLES[winning.cls]} ({stake} from each player, "
        f"{banker_factor(game)[1]} with the banker): "
    )
    return text + chips_text(bonus, seat_name)


def chips_text(chips: Sequence[int], seat_name: Callable[[int], str]) -> Text:
    """``you +20 · seat 1 -10 · ...`` with gains green and losses red."""
    text = Text()
    for s, c in enumerate(chips):
        if s:
            text.append(" · ")
        text.append(f"{seat_name(s)} ")
        text.append(f"{c:+d}", "green" if c > 0 else "red" if c < 0 else "")
    return text
