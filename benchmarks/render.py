"""Tables of the README and the docs, rendered from the JSON records that commands wrote.

A page holds a table between two marker comments; the renderer rewrites what is between them
and nothing else:

    <!-- table:ladder -->
    ...
    <!-- /table -->

A marker may carry options, ``<!-- table:ladder candidate=champion rows=5 -->``. The tables:

* ``ladder``: match records ``benchmarks/results/matches/*.json`` (``tiengow eval`` or
  ``tiengow ladder`` with a record), strongest candidate first (``match_records``), at most
  ``rows`` (10), each with its command;
* ``bots``: every agent spec (``tiengow agents``) with its kind, and the result and ms per
  decision of the record that places it on the ladder (``rung_record``) where one exists;
* ``speed``: three speed figures against peers from the newest ``benchmarks/results/*.json``
  written by ``tiengow bench --peers``; ``bench``: every figure of that record;
* ``experiments``: the records of ideas tried, ``benchmarks/results/experiments/*.json``;
* ``agents-reference``: every agent and its options, from ``tiengow agents --json``;
* ``tiles``: every tile type drawn, with its rank, copies and red pips, from the core's tables;
* ``made``: how the champion's files are made, read from the shipped checkpoints;
* ``profile``: search profiles (``benchmarks/profile_search.py``) side by side, option
  ``records=STEM,...`` naming their files.

``python -m tiengow.benchmarks.render [FILE...]`` rewrites the tables (every page that has one
by default); ``--check`` changes nothing and exits 1 naming every table that disagrees with its
records. The docs build calls :func:`render_text` on every page as well.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

MARKER = re.compile(r"(<!-- table:(?P<name>[a-z_-]+)(?P<options>[^>]*?) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S)
EMPTY = "*No records yet.*\n"


def read_json(path: Path) -> object:
    """A JSON file, with its path in the error when it is not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err.msg} at line {err.lineno})") from None


def cell(value: object) -> str:
    """A value as one Markdown table cell (pipes escaped, no line breaks)."""
    if value is None:
        return ""
    if isinstance(value, float):
        text = f"{value:+.2f}"
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A Markdown table; ``align`` is one character per column, ``l`` or ``r``."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def ci_text(ci: object) -> str:
    """``[lo, hi]`` as ``[+0.17, +0.89]``; anything else as it is."""
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
        return f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"
    return cell(ci)


# ----------------------------------------------------------------------------- records
def match_records(results: Path) -> list[dict]:
    """Every match record of ``results/matches``, strongest candidate first: by the candidate's
    place on the reference ladder (``tiengow.ladder.LADDER``; a bot not on it comes after), then
    the stronger opponent first, then the match of more deals (the narrower CI: not the luckier one)."""
    records = []
    for path in sorted((results / "matches").glob("*.json")):
        record = read_json(path)
        if not isinstance(record, dict) or record.get("kind") != "match":
            raise ValueError(f'{path}: not a match record (expected an object with "kind": "match")')
        records.append(record)
    return sorted(records, key=lambda r: (-_rank(r.get("candidate")), -_rank(r.get("opponent")), -_deals(r)))


def _rank(spec: object) -> int:
    """The place of ``spec`` on the reference ladder, weakest 0; -1 off it."""
    from tiengow.ladder import LADDER

    return LADDER.index(spec) if spec in LADDER else -1


def _deals(record: dict) -> int:
    deals = record.get("deals")
    return deals if isinstance(deals, int) else 0


def rung_record(records: list[dict], spec: str) -> dict | None:
    """The record that places ``spec``: its match against the bot right below it on the ladder,
    else its first match against another bot (a bot against itself places nothing)."""
    from tiengow.ladder import LADDER

    own = [r for r in records if r.get("candidate") == spec and r.get("opponent") != spec]
    below = LADDER[LADDER.index(spec) - 1] if spec in LADDER[1:] else None
    return next((r for r in own if r.get("opponent") == below), own[0] if own else None)


def bench_record(results: Path) -> dict | None:
    """The newest ``tiengow bench`` record of ``results`` (by its ``machine.date`` or name)."""
    found = []
    for path in sorted(results.glob("*.json")):
        record = read_json(path)
        if isinstance(record, dict) and "core_hands_per_s" in record:
            found.append((str(record.get("machine", {}).get("date", "")), path.name, record))
    return max(found, key=lambda x: x[:2])[2] if found else None


def experiment_groups(results: Path) -> list[tuple[str, dict, list[dict]]]:
    """``(file name, header fields, records)`` per experiments file: a file holds one record,
    a list of them, or an object with ``records`` (and a title, source or notes for all), or
    with a list of ``runs`` or ``matches`` (the record of an idea tried, and what came of it)."""
    groups = []
    for path in sorted((results / "experiments").glob("*.json")):
        data = read_json(path)
        listed = None
        if isinstance(data, dict):
            listed = next(
                (
                    key
                    for key in ("records", "runs", "matches")
                    if isinstance(data.get(key), list)
                    and (key == "records" or all(isinstance(r, dict) for r in data[key]))
                ),
                None,
            )
        if isinstance(data, list):
            head, records = {}, data
        elif listed is not None:
            head, records = {k: v for k, v in data.items() if k != listed}, data[listed]
        elif isinstance(data, dict):
            head, records = {k: data[k] for k in ("title", "question", "what", "method") if k in data}, [data]
        else:
            raise ValueError(f'{path}: expected an experiment record, a list of them or {{"records": [...]}}')
        if not all(isinstance(r, dict) for r in records):
            raise ValueError(f"{path}: every experiment record must be a JSON object")
        groups.append((path.name, head, records))
    return groups


# ----------------------------------------------------------------------------- tables
def render_ladder(results: Path, options: dict[str, str]) -> str:
    """Match records as a ladder: candidate, opponent, result, CI, deals, ms a decision, command."""
    records = match_records(results)
    if "candidate" in options:
        records = [r for r in records if r.get("candidate") == options["candidate"]]
    records = records[: int(options.get("rows", "10"))]
    if not records:
        return EMPTY
    rows = []
    for r in records:
        ms = (r.get("ms_per_decision") or {}).get(r.get("candidate"))
        sprt = r.get("sprt") or {}
        rows.append(
            [
                f"`{cell(r.get('candidate'))}`",
                f"`{cell(r.get('opponent'))}`",
                cell(r.get("mean")),
                ci_text(r.get("ci95")),
                cell(r.get("deals")),
                "" if ms is None else f"{ms:.1f}",
                cell(sprt.get("verdict")),
                f"`{cell(r.get('command'))}`",
            ]
        )
    return table(
        ["candidate", "vs", "chips per hand", "95% CI", "deals", "ms a decision", "SPRT", "command"], rows, "llrlrrll"
    )


def render_bots(results: Path, options: dict[str, str]) -> str:
    """Every agent spec with its kind and, from its strongest match record, result and speed."""
    from tiengow.agents import agent_catalogue

    records = match_records(results)
    rows = []
    for agent in agent_catalogue():
        spec = agent.get("spec") or agent.get("name") or ""
        record = rung_record(records, spec.split("[")[0].split(":")[0])
        if record:
            strength = f"{cell(record.get('mean'))} {ci_text(record.get('ci95'))} vs `{cell(record.get('opponent'))}`"
            ms = (record.get("ms_per_decision") or {}).get(record.get("candidate"))
        else:
            strength, ms = "", None
        rows.append(
            [
                f"`{cell(spec)}`",
                cell(agent.get("kind")),
                strength,
                "" if ms is None else f"{ms:.1f}",
                cell(agent.get("description") or agent.get("usage")),
            ]
        )
    return table(["spec", "kind", "strength (chips per hand)", "ms a decision", "what it plays"], rows, "llrrl")


# Three figures against peers: (ours, theirs, what is compared).
SPEED_ROWS = (
    ("core_hands_per_s", "openspiel_oh_hell_cpp_games_per_s", "whole hands a second vs OpenSpiel Oh Hell (C++)"),
    ("core_hands_per_s", "openspiel_hearts_cpp_games_per_s", "whole hands a second vs OpenSpiel Hearts (C++)"),
    ("aec_steps_per_s", "pettingzoo_leduc_aec_steps_per_s", "AEC env steps a second vs PettingZoo Leduc Hold'em"),
)


def render_speed(results: Path, options: dict[str, str]) -> str:
    """Three speed rows against peers from the newest ``tiengow bench --peers`` record."""
    record = bench_record(results)
    peers = (record or {}).get("peers") or {}
    rows = []
    for ours, theirs, what in SPEED_ROWS:
        if record and ours in record and theirs in peers:
            rows.append([what, f"{record[ours]:,.0f}", f"{peers[theirs]:,.0f}", f"{record[ours] / peers[theirs]:.1f}x"])
    if not rows:
        return EMPTY
    machine = record.get("machine") or {}
    note = f"\nMeasured by `tiengow bench --peers` on {cell(machine.get('processor') or 'this machine')}"
    if machine.get("cores"):
        note += f", {cell(machine['cores'])} cores"
    if machine.get("python"):
        note += f", Python {cell(machine['python'])}"
    return table(["figure", "tiengow", "peer", "ratio"], rows, "lrrr") + note + "\n"


def render_bench(results: Path, options: dict[str, str]) -> str:
    """Every figure of the newest ``tiengow bench`` record, peers and ratios included."""
    record = bench_record(results)
    if not record:
        return EMPTY
    rows = []
    for key, value in record.items():
        if isinstance(value, (int, float)):
            rows.append([key, f"{value:,.3f}" if isinstance(value, float) and value < 100 else f"{value:,.0f}"])
    for key, value in (record.get("peers") or {}).items():
        rows.append([f"peer: {key}", f"{value:,.0f}"])
    for key, value in (record.get("ratios") or {}).items():
        rows.append([f"ratio: {key}", f"{value:,.1f}x"])
    return table(["figure", "value"], rows, "lr")


# The rows of a search profile (benchmarks/profile_search.py): (label, path into the record, format).
_EXACT = ("worlds", "champion")  # profile_search's world_draws: the champion's draw of its worlds
_WEIGHED = ("worlds", "champion:particles=512:exact=0")  # and the champion's before issue 49's exact draw
PROFILE_ROWS = (
    ("`search`, ms a decision", ("search", "ms_per_decision"), "{:.1f}"),
    ("`champion`, ms a decision", ("champion", "ms_per_decision"), "{:.1f}"),
    ("rollouts a decision, `search`", ("search", "rollouts_per_decision"), "{:,.0f}"),
    ("rollouts a decision, `champion`", ("champion", "rollouts_per_decision"), "{:,.0f}"),
    ("µs a rollout as `search` plays it (epsilon 0.5)", ("kernels", "rollout_us_search"), "{:.2f}"),
    ("µs a rollout, all greedy", ("kernels", "rollout_us_greedy"), "{:.2f}"),
    ("µs a rollout, all random", ("kernels", "rollout_us_random"), "{:.2f}"),
    ("µs the core's random playout of the same worlds", ("kernels", "random_playout_us"), "{:.2f}"),
    ("µs a world drawn", ("kernels", "draw_world_us"), "{:.3f}"),
    ("`champion`'s effective particles (median)", (*_EXACT, "effective_particles_median"), "{:,.0f}"),
    ("`champion`'s distinct worlds in 1,200 draws (median)", (*_EXACT, "distinct_of_1200_draws_median"), "{:,.0f}"),
    ("effective particles, 512 weighed (median)", (*_WEIGHED, "effective_particles_median"), "{:,.0f}"),
    ("distinct worlds in 1,200 draws, 512 weighed (median)", (*_WEIGHED, "distinct_of_1200_draws_median"), "{:,.0f}"),
)


def render_profile(results: Path, options: dict[str, str]) -> str:
    """Search profiles side by side, one column a record: option ``records`` names them
    (comma-separated file stems under ``results``, oldest first); then ``champion``'s parts (those
    of any record)."""
    stems = [s for s in options.get("records", "").split(",") if s]
    if not stems:
        raise ValueError("table:profile needs records=STEM,STEM,... (files under the results folder)")
    records = [read_json(results / f"{stem}.json") for stem in stems]

    def value(record: dict, path: tuple[str, ...]) -> object:
        for key in path:
            record = record.get(key) if isinstance(record, dict) else None
        return record

    rows = [
        [label] + [fmt.format(v) if (v := value(r, path)) is not None else "" for r in records]
        for label, path, fmt in PROFILE_ROWS
    ]
    parts = list(dict.fromkeys(key for r in records for key in r.get("champion_parts_ms", {}) if key != "total"))
    parts.append("total")  # every record's parts, in the order they first appear: a part a record lacks is blank
    rows += [
        [f"`champion`: {key}, ms"]
        + [f"{v:.2f}" if (v := value(r, ("champion_parts_ms", key))) is not None else "" for r in records]
        for key in parts
    ]
    header = ["", *(f"`{stem}`" for stem in stems)]
    commands = "".join(f"\n* `{stem}`: `{cell(r.get('command'))}`" for stem, r in zip(stems, records))
    return table(header, rows, "l" + "r" * len(records)) + "\nThe records' commands:\n" + commands + "\n"


def render_made(results: Path, options: dict[str, str]) -> str:
    """How the champion's two files are made from scratch, from the files themselves: the
    command, the work done and its wall time and rate, as each run recorded them (``ppo.pt``'s
    steps and elapsed time, ``locator.pt``'s summary). Reads the checkpoints with torch."""
    import torch

    policies = results.parent.parent / "agents" / "policies"
    ppo = torch.load(policies / "ppo.pt", map_location="cpu", weights_only=False)
    locator = torch.load(policies / "locator.pt", map_location="cpu", weights_only=False)
    summary = locator["summary"]
    steps, seconds = ppo["global_step"], ppo["elapsed"]
    rows = [
        [
            "the prior, `ppo.pt`",
            "`tiengow train ppo --config ppo`",
            f"{steps / 1e6:.1f}M environment steps, {ppo['update']:,} updates",
            f"{seconds / 60:.1f} min",
            f"{steps / seconds:,.0f} environment steps a second",
        ],
        [
            "the locator's data, `locator.pt`",
            "`tiengow train locator --config locator`",
            f"{summary['hands']:,} hands of `{locator['config']['teacher']}`, "
            f"{summary['states'] + summary['held_out']:,} information states",
            f"{summary['play_seconds'] / 60:.1f} min",
            f"{summary['hands'] / summary['play_seconds']:.2f} hands a second",
        ],
        [
            "its fit (the same command)",
            "",
            f"{summary['steps']:,} Adam steps of {locator['config']['batch']}",
            f"{summary['fit_seconds'] / 60:.1f} min",
            f"{summary['steps'] / summary['fit_seconds']:.1f} steps a second",
        ],
    ]
    return table(["step", "command", "work", "wall time", "rate"], rows, "lllrr")


# The fields every experiment record may have, in the order they are shown.
FIELDS = (
    "spec",
    "name",
    "candidate",
    "opponent",
    "baseline",
    "seed",
    "seeds",
    "deals",
    "result",
    "mean",
    "chips_per_hand",
    "minus_baseline_per_hand",
    "ci95",
    "verdict",
    "ms_per_decision",
    "correlation",
    "variance_ratio",
    "command",
    "commit",
)
# What a file says of all its records, in this order, above their table.
HEAD_FIELDS = ("what", "question", "method", "verdict", "notes", "source", "command", "commit", "runnable_at")


def render_experiments(results: Path, options: dict[str, str]) -> str:
    """Each experiments file as a section: its title and notes, then a table of its records
    (the source table's own columns when the records carry them), each with its source. Option
    ``file=PREFIX``: only the files whose names start with PREFIX."""
    groups = [g for g in experiment_groups(results) if g[0].startswith(options.get("file", ""))]
    if not groups:
        return EMPTY
    parts = []
    for name, head, records in groups:
        parts.append(f"### {cell(head.get('title') or name)}\n")
        for key in HEAD_FIELDS:
            if head.get(key):
                parts.append(f"*{key}:* {cell(head[key])}\n")
        columns: list[str] = []
        for record in records:
            for key in record.get("columns", {}) or [k for k in FIELDS if k in record]:
                if key not in columns:
                    columns.append(key)
        if not any(record.get("columns") for record in records):
            columns.sort(key=FIELDS.index)
        extra = [k for k in ("note", "notes", "source") if any(k in r for r in records)]
        rows = []
        for record in records:
            own = record.get("columns") or {}
            values = [cell(own[c]) if c in own else _field(record, c) for c in columns]
            rows.append(values + [cell(record.get(k)) for k in extra])
        parts.append(table([cell(c) for c in columns + extra], rows) if columns + extra else EMPTY)
    return "\n".join(parts)


def _field(record: dict, key: str) -> str:
    value = record.get(key)
    if key == "ci95":
        return ci_text(value) if value is not None else ""
    if key == "command" and value:
        return f"`{cell(value)}`"
    if key in ("ms_per_decision", "correlation", "variance_ratio") and isinstance(value, (int, float)):
        return f"{value:.1f}" if key == "ms_per_decision" else f"{value:.2f}"
    return cell(value)


# Where the pips of a half showing 1 to 6 sit, in a 3 x 3 grid (column, row).
PIP_SPOTS = {
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (2, 0), (0, 2), (2, 2)),
    5: ((0, 0), (2, 0), (1, 1), (0, 2), (2, 2)),
    6: ((0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)),
}


def tile_svg(halves: tuple[int, int], red: int) -> str:
    """One tile drawn as an inline SVG: two halves of pips, ``red`` of them red (a half of 1 or 4
    is all red; any other red pips, Heaven's six, are split evenly between the halves)."""
    rule_red = sum(h for h in halves if h in (1, 4))
    shapes = [
        '<rect x="1" y="1" width="38" height="78" rx="5" fill="#fbf8ef" stroke="#333"/>',
        '<line x1="6" y1="40" x2="34" y2="40" stroke="#333"/>',
    ]
    for half, pips in enumerate(halves):
        red_here = pips if pips in (1, 4) else (red - rule_red) // 2
        for n, (col, row) in enumerate(PIP_SPOTS[pips]):
            colour = "#c62828" if n < red_here else "#222"
            shapes.append(f'<circle cx="{9 + 11 * col}" cy="{half * 40 + 9 + 11 * row}" r="3.6" fill="{colour}"/>')
    return (
        f'<svg width="40" height="80" viewBox="0 0 40 80" role="img" aria-label="{halves[0]}-{halves[1]}">'
        + "".join(shapes)
        + "</svg>"
    )


def render_tiles(results: Path, options: dict[str, str]) -> str:
    """Every tile type drawn from the core's tables (tiengow_env.tiles): name, suit, rank,
    copies and red pips, highest first."""
    from tiengow_env import tiles

    rows = []
    for t in range(tiles.NUM_TYPES):
        halves = (int(tiles.HALVES[t][0]), int(tiles.HALVES[t][1]))
        suit = "civil" if tiles.SUIT[t] == tiles.CIVIL else "military"
        rows.append(
            [
                tile_svg(halves, int(tiles.RED_PIPS[t])),
                f"`{tiles.NAMES[t]}`",
                tiles.CHINESE[t],
                suit,
                str(int(tiles.RANK[t])),
                str(int(tiles.COPIES[t])),
                str(int(tiles.RED_PIPS[t])),
            ]
        )
    return table(["tile", "name", "called", "suit", "rank in its suit", "copies", "red pips"], rows, "llllrrr")


def agents_reference(catalogue: object) -> str:
    """The agents reference from ``tiengow agents --json``: ``{"agents": [{"name", "kind",
    "usage", "description", "options": [{"key", "type", "default", "range", "doc"}]}]}``, one
    section per agent with a table of its options."""
    if not isinstance(catalogue, dict) or not isinstance(catalogue.get("agents"), list):
        raise ValueError('tiengow agents --json: expected {"agents": [...]}')
    parts = []
    for agent in catalogue["agents"]:
        parts.append(f"### `{cell(agent.get('name'))}`\n")
        parts.append(f"*{cell(agent.get('kind'))}*: {cell(agent.get('description'))}\n")
        if agent.get("usage"):
            parts.append(f"Spec: `{cell(agent['usage'])}`\n")
        options = agent.get("options") or []
        if options:
            rows = [
                [
                    f"`{cell(o.get('key'))}`",
                    cell(o.get("type")),
                    f"`{cell(o.get('default'))}`",
                    cell(o.get("range")),
                    cell(o.get("doc")),
                ]
                for o in options
            ]
            parts.append(table(["key", "type", "default", "range", "what it does"], rows))
        else:
            parts.append("No options.\n")
    return "\n".join(parts)


def render_agents_reference(results: Path, options: dict[str, str]) -> str:
    """:func:`agents_reference` of what the installed ``tiengow agents --json`` prints."""
    run = subprocess.run(
        [sys.executable, "-m", "tiengow", "agents", "--json"], capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        raise ValueError(f"tiengow agents --json failed: {run.stderr.strip().splitlines()[-1:]}")
    return agents_reference(json.loads(run.stdout))


TABLES: dict[str, Callable[[Path, dict[str, str]], str]] = {
    "ladder": render_ladder,
    "bots": render_bots,
    "speed": render_speed,
    "bench": render_bench,
    "experiments": render_experiments,
    "agents-reference": render_agents_reference,
    "tiles": render_tiles,
    "profile": render_profile,
    "made": render_made,
}


# ----------------------------------------------------------------------------- pages
def render_text(text: str, results: Path, where: str = "page") -> str:
    """``text`` with every marked table rendered afresh from the records in ``results``."""

    def one(match: re.Match) -> str:
        name = match.group("name")
        if name not in TABLES:
            raise ValueError(f"{where}: unknown table '{name}' (expected one of {', '.join(TABLES)})")
        options = {}
        for word in match.group("options").split():
            key, sep, value = word.partition("=")
            if not sep:
                raise ValueError(f"{where}: table option '{word}' is not KEY=VALUE")
            options[key] = value
        return match.group(1) + TABLES[name](results, options) + match.group(5)

    return MARKER.sub(one, text)


def stale_tables(path: Path, results: Path) -> list[str]:
    """The names of the tables of ``path`` that differ from their records."""
    text = path.read_text(encoding="utf-8")
    fresh = render_text(text, results, str(path))
    pairs = zip(MARKER.finditer(text), MARKER.finditer(fresh))
    return [ours.group("name") for ours, theirs in pairs if ours.group("body") != theirs.group("body")]


def default_files(root: Path) -> list[Path]:
    """README.md, the docs' pages, the model cards and benchmarks/PROFILE.md: every one that
    has a marked table."""
    files = [
        root / "README.md",
        *sorted((root / "docs").rglob("*.md")),
        *sorted((root / "agents").rglob("*.md")),
        root / "benchmarks" / "PROFILE.md",
    ]
    return [f for f in files if f.exists() and MARKER.search(f.read_text(encoding="utf-8"))]


def main(argv: list[str] | None = None) -> int:
    """``python -m tiengow.benchmarks.render [--check] [--results DIR] [FILE...]``."""
    parser = argparse.ArgumentParser(prog="python -m tiengow.benchmarks.render", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "files", nargs="*", type=Path, help="pages to render (default: every page that has a marked table)"
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=Path("benchmarks/results"),
        help="the records folder (default benchmarks/results, from the checkout's root)",
    )
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if a table differs from its records"
    )
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        print(
            f"render: no records folder {args.results} (run from the checkout's root, or give --results DIR)",
            file=sys.stderr,
        )
        return 2
    files = args.files or default_files(Path("."))
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        print(f"render: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        stale = {f: stale_tables(f, args.results) for f in files}
        if args.check:
            bad = [f"{f}: {', '.join(names)}" for f, names in stale.items() if names]
            for line in bad:
                print(f"stale table(s) in {line} (python -m tiengow.benchmarks.render rewrites them)")
            return 1 if bad else 0
        for f, names in stale.items():
            if names:
                f.write_text(render_text(f.read_text(encoding="utf-8"), args.results, str(f)), encoding="utf-8")
                print(f"rendered {f}: {', '.join(names)}")
    except ValueError as err:
        print(f"render: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
