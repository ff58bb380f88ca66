"""The records folder (``--records DIR``): listing it, reading only inside it, and the replay
and league views of what it holds.

A page names a file by its path relative to the folder. ``RecordsFolder.resolve`` refuses
anything that could reach outside (``folders.plain_name``), and files whose real path (symbolic
links followed) is not under the folder's real path. URL decoding happens before, so an encoded
slash is just a slash and meets the same checks.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from tiengow.ui.tracker import HandLog
from tiengow_env.checks import load_json
from tiengow_env.game import RecordError, load_records, parse_record
from tiengow_env.tiles import NAMES

from . import views as V
from .folders import plain_name
from .match import Refused

MAX_FILE_BYTES = 8 * 2**20
MAX_LISTED = 500
MAX_DEPTH = 2  # files in the folder and in its subfolders (one per match), no deeper
MAX_NAME_LENGTH = 255  # characters of a file's path inside the folder
MAX_LEAGUE_AGENTS = 64
SUFFIXES = (".json", ".jsonl")


def seat_name(seat: int) -> str:
    return f"seat {seat}"


class RecordsFolder:
    """The one folder whose files the server reads and writes records into."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()

    def resolve(self, name: object) -> Path:
        """The file ``name`` (relative to the folder) names; ``Refused`` for anything outside it."""
        if not isinstance(name, str) or not name:
            raise Refused("give the file as path=NAME, a path inside the records folder")
        if not plain_name(name):
            raise Refused(
                f"{name!r} is not a file of the records folder: name it by its path inside the folder, "
                "as the list shows it",
                403,
            )
        if len(name) > MAX_NAME_LENGTH or len(name.split("/")) > MAX_DEPTH:
            raise Refused(
                f"{name[:40]!r}... is not a file of the records folder: its path has at most "
                f"{MAX_DEPTH} parts and {MAX_NAME_LENGTH} characters",
                404,
            )
        try:
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root):
                raise Refused(f"{name!r} leads outside the records folder", 403)
            if not path.is_file():
                raise Refused(f"{name!r}: no such file in the records folder", 404)
            if path.suffix not in SUFFIXES:
                raise Refused(f"{name!r} is not a .json or .jsonl file", 403)
            if path.stat().st_size > MAX_FILE_BYTES:
                raise Refused(f"{name!r} is larger than {MAX_FILE_BYTES >> 20} MB", 413)
        except OSError as err:  # a name the file system refuses (too long, a loop of links, ...)
            raise Refused(f"{name!r}: no such file in the records folder ({err.strerror or err})", 404) from None
        return path

    def listing(self) -> list[dict]:
        """The .json and .jsonl files under the folder, newest first: path, kind (hands or
        league), how many records, size. Files that are neither are left out."""
        found = []
        for top, folders, files in os.walk(self.root):
            depth = len(Path(top).relative_to(self.root).parts)
            folders[:] = [] if depth + 1 >= MAX_DEPTH else sorted(f for f in folders if not f.startswith("."))
            for file in files:
                if file.startswith(".") or not file.endswith(SUFFIXES):
                    continue
                name = str((Path(top) / file).relative_to(self.root).as_posix())
                try:
                    name.encode("utf-8")
                    path = self.resolve(name)
                    entry = describe(path)
                except (Refused, UnicodeEncodeError, OSError):
                    continue  # a link out of the folder, too large, a name that is not text, gone: not offered
                if entry is not None:
                    found.append({"path": name, **entry})
        found.sort(key=lambda e: (-e["mtime"], e["path"]))
        return found[:MAX_LISTED]

    def replay(self, name: object, index: object) -> dict:
        """The frames of record ``index`` (from 1) of a file, for stepping through it."""
        path = self.resolve(name)
        records = load_records(str(path))
        if not records:
            raise Refused(f"{name} holds no records", 422)
        if type(index) is not int or not 1 <= index <= len(records):
            raise Refused(f"index must be 1 to {len(records)} for {name}, got {index!r}")
        record = records[index - 1]
        if isinstance(record, RecordError):
            raise Refused(f"record {index} of {name}: {record}", 422)
        return {"path": name, "index": index, "count": len(records), **replay_frames(record)}

    def league(self, name: object) -> dict:
        path = self.resolve(name)
        try:
            data = load_json(path.read_text(encoding="utf-8-sig"))  # a byte order mark is skipped, as load_records does
        except RecursionError:
            raise Refused(f"{name} is nested too deeply to be a league", 422) from None
        except (ValueError, UnicodeDecodeError) as err:
            raise Refused(f"{name} is not JSON: {err}", 422) from None
        return {"path": name, **league_view(data)}


def describe(path: Path) -> dict | None:
    """Kind, count, size and time of a file of the folder; None for a file that is neither a
    record file nor a league."""
    stat = path.stat()
    entry = {"size": stat.st_size, "mtime": stat.st_mtime}
    if path.suffix == ".jsonl":
        data = path.read_bytes()  # counted as load_records numbers them: one record per line, blank ones too
        return {"kind": "hands", "count": data.count(b"\n") + (not data.endswith(b"\n") and bool(data)), **entry}
    try:
        data = load_json(path.read_text(encoding="utf-8-sig"))  # a byte order mark is skipped, as load_records does
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(data, dict) and "cross_table" in data:
        agents = data.get("agents")
        return {"kind": "league", "count": len(agents) if isinstance(agents, list) else 0, **entry}
    if isinstance(data, dict) and "hands" in data:
        return {"kind": "hands", "count": 1, **entry}
    return None


# ----------------------------------------------------------------------------- replay
def replay_frames(record: object) -> dict:
    """A record as frames: the deal, then each trick (the hands before it, its moves, who won,
    columns so far), then the settlement. A refused action ends the frames, with its reason."""
    try:
        game, actions = parse_record(record)
    except RecordError as err:
        raise Refused(str(err), 422) from None
    log = HandLog(game)
    players = game.players
    dealt = [game.dealt(s) for s in range(players)]
    frames = [
        {
            "title": "The deal",
            "hands": dealt,
            "trick": None,
            "columns": [0] * players,
            "text": [V.move_view(m, game, seat_name, True)["text"] for m in log.declarations],
        }
    ]
    error = None
    columns = [0] * players
    for i, action in enumerate(actions):
        try:
            events = log.play(action)
        except ValueError as err:
            error = f"action {i} is refused: {err}"
            break
        for kind, detail in events:
            if kind == "move" and detail.kind in ("declare", "decline"):
                frames[-1]["text"].append(V.move_view(detail, game, seat_name, True)["text"])
            if kind == "trick":
                columns[detail.winner] += detail.size
                view = V.trick_view(detail, game, seat_name, lambda s: True)
                frames.append(
                    {
                        "title": f"Trick {detail.number}",
                        "hands": [mask_list(h) for h in detail.hands_before],
                        "trick": view,
                        "columns": list(columns),
                        "text": [m["text"] for m in view["moves"]]
                        + [V.trick_line(detail, seat_name)]
                        + ([view["bonus_text"]] if view["bonus_text"] else []),
                    }
                )
    current = log.current
    if current is not None:
        view = V.trick_view(current, game, seat_name, lambda s: True)
        frames.append(
            {
                "title": f"Trick {current.number} (unfinished)",
                "trick": view,
                "columns": list(columns),
                "hands": [mask_list(h) for h in current.hands_before],
                "text": [m["text"] for m in view["moves"]],
            }
        )
    settlement = None
    if game.is_over:
        settlement = V.settlement_view(game, seat_name, [0] * players)
        frames.append(
            {
                "title": "Settlement",
                "hands": [game.hand(s) for s in range(players)],
                "trick": None,
                "columns": settlement["columns"],
                "text": [],
                "settlement": settlement,
            }
        )
    elif error is None:
        error = f"the record ends before the hand is over, with seat {game.to_act} to act"
    return {
        "rules": game.rules.name,
        "banker": game.banker,
        "streak": int(record.get("streak", 1)),
        "players": players,
        "frames": frames,
        "error": error,
        "result": game.result() if game.is_over else None,
    }


def mask_list(types: list[int]) -> list[str]:
    """Tile names of a list of tile types, in canonical order."""
    return [NAMES[t] for t in sorted(types)]


# ----------------------------------------------------------------------------- league
def league_view(data: object) -> dict:
    """A ``tiengow league`` JSON (``tiengow.agents.arena.league``) checked and laid out for the page:
    the agents, the cross table as a matrix (None on the diagonal and where missing), each cell's
    95% CI where the matches give one, the ranking with whatever columns its rows have, and the
    other top-level fields. ``Refused`` (422) for a file that is not a league."""

    def bad(reason: str) -> Refused:
        return Refused(f"not a tiengow league JSON: {reason}", 422)

    if not isinstance(data, dict):
        raise bad("expected a JSON object with 'agents' and 'cross_table'")
    agents = data.get("agents")
    if (
        not isinstance(agents, list)
        or not 2 <= len(agents) <= MAX_LEAGUE_AGENTS
        or not all(isinstance(a, str) for a in agents)
        or len(set(agents)) != len(agents)
    ):
        raise bad(f"'agents' must be a list of 2 to {MAX_LEAGUE_AGENTS} different agent names")
    table = data.get("cross_table")
    if not isinstance(table, dict):
        raise bad("'cross_table' must be an object: candidate -> opponent -> chips per hand")
    matrix = [
        [number((table.get(a) or {}).get(b)) if a != b and isinstance(table.get(a), dict) else None for b in agents]
        for a in agents
    ]
    matches = data.get("matches") or []
    if not isinstance(matches, list):
        raise bad("'matches' must be a list of the matches played")
    ci = [[None] * len(agents) for _ in agents]
    details = [[None] * len(agents) for _ in agents]
    for match in matches:
        if not isinstance(match, dict) or match.get("candidate") not in agents or match.get("opponent") not in agents:
            continue
        i, j = agents.index(match["candidate"]), agents.index(match["opponent"])
        bounds = match.get("ci95")
        if isinstance(bounds, list) and len(bounds) == 2 and all(number(b) is not None for b in bounds):
            ci[i][j] = [float(b) for b in bounds]
        details[i][j] = {k: cell(v, k) for k, v in match.items() if k not in ("candidate", "opponent")}
    cross_ci = data.get("cross_ci95")  # tiengow league's CIs by name: where the matches give none
    if isinstance(cross_ci, dict):
        for i, a in enumerate(agents):
            for j, b in enumerate(agents):
                bounds = (cross_ci.get(a) or {}).get(b) if isinstance(cross_ci.get(a), dict) else None
                if (
                    ci[i][j] is None
                    and i != j
                    and isinstance(bounds, list)
                    and len(bounds) == 2
                    and all(number(x) is not None for x in bounds)
                ):
                    ci[i][j] = [float(x) for x in bounds]
    rows = data.get("ranking")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        means = [sum(v for v in row if v is not None) / max(1, sum(v is not None for v in row)) for row in matrix]
        rows = sorted(
            ({"agent": a, "mean_chips_per_hand": m} for a, m in zip(agents, means)),
            key=lambda r: -r["mean_chips_per_hand"],
        )
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    shown = ("agents", "cross_table", "cross_ci95", "ranking", "matches")  # drawn as tables, not as info
    info = {k: cell(v, k) for k, v in data.items() if k not in shown}
    return {
        "agents": agents,
        "matrix": matrix,
        "ci": ci,
        "details": details,
        "ranking": {"columns": columns, "rows": [[cell(r.get(k), k) for k in columns] for r in rows]},
        "info": info,
    }


def number(value: object) -> float | None:
    """A finite number as a float, else None (an int beyond the floats too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value) if math.isfinite(float(value)) else None
    except OverflowError:
        return None


def cell(value: object, key: str = "") -> str:
    """Any JSON value as a short text for a table cell; chips (and their CIs) signed."""
    if value is None:
        return ""
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:+.3f}" if "chips" in key or key.startswith("ci") or "_ci" in key else f"{value:.4g}"
    if isinstance(value, (bool, int, str)):
        return str(value)[:200]
    if isinstance(value, list) and all(number(v) is not None for v in value):
        return "[" + ", ".join(cell(float(v), key) for v in value) + "]"
    return json.dumps(value)[:200]


__all__ = ["RecordsFolder", "replay_frames", "league_view"]
