"""The ``tiengow`` command line. Every failure is a one-line message, never a traceback."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tiengow.options import MAX_WORKERS, int_option

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}
MAX_DEMO_HANDS = 10_000_000  # their chips are held in memory: 320 MB at the most


class UsageError(ValueError):
    """A bad argument or input file: printed as ``tiengow: error: ...`` with exit status 2."""


def command(name: str):
    def register(fn):
        COMMANDS[name] = fn
        return fn

    return register


def _rules_arg(text: str | None):
    """A --rules value: preset name, YAML/TOML path, or a JSON object of switches."""
    from tiengow.options import rules_option

    try:
        return rules_option(text)
    except ValueError as err:
        raise UsageError(str(err)) from None


@command("replay")
def cmd_replay(args: argparse.Namespace) -> int:
    """One JSON line per record (per input line of a .jsonl file): its result, or
    ``{"error": ..., "action_index": ...}``; exit status 0 when every record replayed, else 2."""
    if args.check:
        return _check_records(args.path)
    from tiengow_env.game import replay

    ok = True
    for record in _read_records(args.path):
        try:
            line = replay(_record_or_raise(record))
        except ValueError as err:
            ok = False
            line = _error_line(err)
        print(json.dumps(line))
    sys.stdout.flush()
    return 0 if ok else 2


def _record_or_raise(record: object) -> object:
    """A record read by load_records; a line that could not be read raises its RecordError."""
    from tiengow_env.game import RecordError

    if isinstance(record, RecordError):
        raise record
    return record


def _error_line(err: ValueError) -> dict:
    return {"error": str(err), "action_index": getattr(err, "action_index", None)}


def _read_records(path: str) -> list:
    from tiengow_env.game import load_records

    try:
        return load_records(path)
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None


# The result fields a conformance line's "expected" pins, besides the tricks.
CHECKED = ("columns", "last_trick_winner", "trick_bonus", "settlement", "net", "multipliers")


def _check_records(path: str) -> int:
    """``tiengow replay --check FILE``: replay each ``{"record", "expected"}`` line (or
    ``{"record", "error": true}``, a record that must be refused) and say whether the engine
    agrees; one line per line of the file, then a summary. Exit 0 only if every line agrees."""
    agree = 0
    lines = _read_records(path)
    for n, line in enumerate(lines, 1):
        where = f"line {n}" + (f" ({line['tag']})" if isinstance(line, dict) and line.get("tag") else "")
        verdict = _check_line(line)
        agree += verdict is None
        print(f"{where}: {verdict or 'agrees'}")
    print(
        f"{path}: {agree} of {len(lines)} lines agree"
        + ("" if agree == len(lines) else f", {len(lines) - agree} do not")
    )
    sys.stdout.flush()
    return 0 if lines and agree == len(lines) else 1


def _check_line(line: object) -> str | None:
    """None if the engine agrees with a conformance line, else what differs, in one line."""
    from tiengow_env.game import RecordError, replay

    if isinstance(line, RecordError):
        return str(line)
    if not isinstance(line, dict) or "record" not in line or not ("expected" in line or line.get("error")):
        return 'not a check line: expected {"record": ..., "expected": {...}} or {"record": ..., "error": true}'
    try:
        got = replay(line["record"])
    except RecordError as err:
        if line.get("error"):
            return None
        return f"refused ({err}), but expected a result"
    if line.get("error"):
        return "accepted, but must be refused" + (f": {line['reason']}" if line.get("reason") else "")
    expected = line["expected"]
    if not isinstance(expected, dict) or not expected:
        return "not a check line: 'expected' must be an object of the result fields to check, such as {\"net\": [...]}"
    unknown = sorted(set(expected) - set(CHECKED) - {"tricks"})
    if unknown:
        return f"not a check line: unknown expected field {unknown[0]!r}; fields are {', '.join(CHECKED)}, tricks"
    if "tricks" in expected and not (
        isinstance(expected["tricks"], list) and all(isinstance(t, dict) for t in expected["tricks"])
    ):
        return "not a check line: expected tricks must be a list of objects (leader, winner, size, winning)"
    differ = [
        f"{key}: got {json.dumps(got.get(key))}, expected {json.dumps(expected[key])}"
        for key in CHECKED
        if key in expected and got.get(key) != expected[key]
    ]
    fields = ("leader", "winner", "size", "winning")
    if "tricks" in expected and (
        [[t.get(f) for f in fields] for t in got.get("tricks", [])]
        != [[t.get(f) for f in fields] for t in expected["tricks"]]
    ):
        differ.append("tricks differ")
    return "; ".join(differ) or None


@command("perft")
def cmd_perft(args: argparse.Namespace) -> int:
    """One line per record: its perft count, or an error line as in replay; exit 0 or 2."""
    from tiengow_env.game import perft
    from tiengow_env.layout import MAX_SEATS
    from tiengow_env.tiles import NUM_TILES

    longest = NUM_TILES + MAX_SEATS  # no hand of any rules takes more decisions (game.longest_hand)
    if not 0 <= args.depth <= longest:
        raise UsageError(f"--depth must be 0 to {longest} (the longest possible hand of any rules), got {args.depth}")
    status = 0
    for record in _read_records(args.path):
        try:
            print(perft(_record_or_raise(record), args.depth))
        except ValueError as err:
            print(json.dumps(_error_line(err)))
            status = 2
    return status


@command("rules")
def cmd_rules(args: argparse.Namespace) -> int:
    from tiengow_env.combos import table_for
    from tiengow_env.rules import PRESETS

    if args.preset is None and args.rules is None:
        for name, preset in PRESETS.items():
            changes = ", ".join(f"{k}={json.dumps(v)}" for k, v in preset.diff().items()) or "(the default game)"
            print(f"{name:13s} {changes}")
        return 0
    if args.preset is not None and args.rules is not None:
        raise UsageError(f"give the rules once: a preset name ({args.preset!r}) or --rules ({args.rules!r}), not both")
    rules = _rules_arg(args.rules or args.preset)
    table = table_for(rules)
    if args.json:
        print(
            json.dumps(
                {
                    "switches": rules.switches(),
                    "hand_size": rules.hand_size,
                    "par": rules.par,
                    "combinations": [
                        {"id": j, "class": c.cls, "tiles": c.names, "strength": c.strength}
                        for j, c in enumerate(table.combos)
                    ],
                }
            )
        )
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        f"[bold]Rules: {rules.name}[/bold]  ({rules.players} players, {len(rules.deck_types)} tiles, "
        f"hands of {rules.hand_size}, par {rules.par})"
    )
    switches = Table("switch", "value", title="switches (* differs from standard)")
    diff = rules.diff()
    for key, value in rules.switches().items():
        switches.add_row(("* " if key in diff else "  ") + key, json.dumps(value))
    console.print(switches)
    combos = Table(
        "id", "class", "tiles", "strength", title=f"{table.num_combos} combinations, weakest first per class"
    )
    for j, c in enumerate(table.combos):
        combos.add_row(str(j), c.cls, " ".join(c.names), str(c.strength))
    console.print(combos)
    return 0


@command("demo")
def cmd_demo(args: argparse.Namespace) -> int:
    """One hand move by move, random hands in the compiled core, and a short evaluation ladder."""
    import numpy as np

    from tiengow_env import _kernels as K
    from tiengow_env.combos import table_for
    from tiengow_env.game import Game

    rules = _rules_arg(args.rules)
    game = Game(seed=args.seed, rules=rules)
    print(f"Hand {args.seed} ({rules.name}), banker seat {game.banker}")
    for s in range(rules.players):
        print(f"  seat {s}: {' '.join(game.dealt(s))}")
    rng = np.random.default_rng(args.seed)
    while not game.is_over:
        seat, legal = game.to_act, game.legal_actions()
        action = int(rng.choice(legal))
        print(f"  seat {seat}: {game.action_name(action)}")
        game.step(action)
    result = game.result()
    print(f"  columns {result['columns']}, last trick seat {result['last_trick_winner']}, net chips {result['net']}")
    table = table_for(rules)
    net = np.zeros((args.hands, rules.players), dtype=np.int64)
    warm = net[:10]
    K.random_hands(len(warm), args.seed, table.table, table.rules_array, warm)  # compile before timing
    start = time.perf_counter()
    steps = K.random_hands(args.hands, args.seed, table.table, table.rules_array, net)
    took = time.perf_counter() - start
    print(
        f"\n{args.hands:,} random hands in the compiled core: {args.hands / took:,.0f} hands/s, "
        f"{steps / args.hands:.1f} decisions per hand"
    )
    print("mean net chips per seat: " + ", ".join(f"{v:+.3f}" for v in net.mean(axis=0)))
    if args.deals:
        from tiengow.agents.arena import evaluate

        print(f"\nDuplicate evaluation, {args.deals} deals each (every deal played once per seat):")
        for candidate, opponent in (("greedy", "random"), ("expert", "greedy"), ("pimc", "expert")):
            result = evaluate(candidate, opponent, args.deals, args.seed, rules)
            lo, hi = result.ci95
            print(
                f"  {candidate:7s} vs {opponent:7s} {result.chips_per_hand:+7.2f} chips per hand, "
                f"95% CI [{lo:+.2f}, {hi:+.2f}]"
            )
    return 0


@command("tree")
def cmd_tree(args: argparse.Namespace) -> int:
    """Exact size of a small game: deals, decision nodes, information sets per seat. Refused
    before the walk when its first deal times the number of deals passes --max-nodes."""
    from tiengow_env.tree import TreeTooLarge, count_deals, tree_stats

    rules, budget = _rules_arg(args.rules), args.max_nodes
    deals = count_deals(rules)
    advice = "use a small preset such as micro or a custom deck of 8 tiles, or raise --max-nodes"
    if deals > budget:
        raise UsageError(
            f"{rules.name} has {deals:,} distinct deals: its tree is too large to walk (more than "
            f"--max-nodes {budget:,} decision nodes); {advice}"
        )
    cap = budget // deals  # the first deal's share of the budget
    try:
        first = tree_stats(rules, banker=args.banker, max_deals=1, max_nodes=cap)["decision_nodes"]
    except TreeTooLarge:
        first = None
    if first is None or first * deals > budget:
        size = f"more than {cap:,}" if first is None else f"{first:,}"
        raise UsageError(
            f"{rules.name} has {deals:,} distinct deals and {size} decision nodes in the first: its "
            f"tree is too large to walk (more than --max-nodes {budget:,} decision nodes); {advice}"
        )
    progress, advance = _progress_bar(deals, "walking the deals")
    try:
        with progress:
            stats = tree_stats(rules, banker=args.banker, max_nodes=budget, on_deal=lambda: advance(1))
    except TreeTooLarge:
        raise UsageError(
            f"{rules.name}: the walk passed --max-nodes {budget:,} decision nodes before its last deal "
            f"(its first deal had {first:,}); raise --max-nodes to walk it all"
        ) from None
    if args.json:
        print(json.dumps(stats))
    else:
        print(f"rules {rules.name}, banker seat {stats['banker']}")
        print(f"  distinct deals       {stats['deals']:,}")
        print(f"  decision nodes       {stats['decision_nodes']:,}")
        print(f"  terminal nodes       {stats['terminal_nodes']:,}")
        print(
            f"  information sets     {stats['infosets']:,} "
            f"(per seat: {', '.join(f'{n:,}' for n in stats['infosets_per_seat'])})"
        )
    return 0


def _progress_bar(total: int, label: str):
    """A rich progress bar on stderr (so that --json output stays clean), none when stderr is
    not a terminal; returns the bar and an advance(n)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    progress = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    task = progress.add_task(label, total=total)
    return progress, lambda n: progress.advance(task, n)


def _agent_spec(text: str, rules) -> str:
    """``text`` if it builds an agent under ``rules`` (a policy may fit only some rules), else UsageError."""
    from tiengow.agents import make_agent

    try:
        make_agent(text, rules)
    except ValueError as err:
        raise UsageError(str(err)) from None
    return text


@command("eval")
def cmd_eval(args: argparse.Namespace) -> int:
    """Duplicate evaluation of one agent against copies of another (with --baseline, of two
    agents on the same deals, and the difference between them); with --sprt, a sequential test
    that stops the match at its verdict."""
    from tiengow.agents.arena import compare, evaluate

    rules = _rules_arg(args.rules)
    _agent_spec(args.candidate, rules), _agent_spec(args.vs, rules)
    if args.baseline is not None:
        _agent_spec(args.baseline, rules)
    hypotheses = _hypotheses(args)
    _check_record_dir(args.record)
    deals = args.deals if hypotheses is None else args.max_deals
    label = f"{args.candidate} vs {args.vs}"
    progress, advance, watch = _test_progress(deals, label, hypotheses)
    with progress:
        if args.baseline is None:
            result = evaluate(
                args.candidate, args.vs, deals, args.seed, rules, args.workers, advance, args.ray, hypotheses, watch
            )
        else:
            result = compare(
                args.candidate,
                args.baseline,
                args.vs,
                deals,
                args.seed,
                rules,
                args.workers,
                advance,
                args.ray,
                hypotheses,
                watch,
            )
    if args.record is not None:
        from dataclasses import asdict

        from tiengow.records import match_record, write_record

        if args.baseline is None:
            record = match_record(args.command_line, asdict(result), rules.name, args.seed)
        else:
            record = match_record(
                args.command_line,
                asdict(result.candidate),
                rules.name,
                args.seed,
                asdict(result.baseline),
                {"mean": result.difference, "ci95": result.ci95, "sprt": result.sprt},
            )
        path = write_record(args.record, record)
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(result.to_json())
        return 0
    for run in (result,) if args.baseline is None else (result.candidate, result.baseline):
        lo, hi = run.ci95
        print(
            f"{run.candidate} vs {run.opponent} ({rules.name}): {run.deals:,} deal{'s' * (run.deals != 1)}, "
            f"{run.hands:,} hands"
        )
        print(f"  chips per hand   {run.chips_per_hand:+.3f}   95% CI [{lo:+.3f}, {hi:+.3f}]  ({_verdict(lo, hi)})")
        print(f"  columns per hand {run.columns_per_hand:.2f}   last trick won {100 * run.last_trick_rate:.1f}%")
        print(f"  {run.candidate}: {run.ms_per_decision:.2f} ms of CPU per decision")
    if args.baseline is not None:
        lo, hi = result.ci95
        print(
            f"{args.candidate} minus {args.baseline}, deal by deal: {result.difference:+.3f} chips per hand   "
            f"95% CI [{lo:+.3f}, {hi:+.3f}]  ({_verdict(lo, hi)}; the runs correlate at {result.correlation:.2f})"
        )
    if result.sprt is not None:
        print(_sprt_summary(result.sprt, "the difference" if args.baseline else "the score"))
    return 0


def _hypotheses(args: argparse.Namespace):
    """The sequential test's hypotheses of ``--sprt D0,D1 --alpha --beta``, or None without --sprt;
    UsageError for options that only make sense with it, or --deals given with it."""
    from tiengow.agents.sprt import parse_hypotheses

    if args.sprt is None:
        for option, value in (("--alpha", args.alpha), ("--beta", args.beta), ("--max-deals", args.max_deals)):
            if value is not None:
                raise UsageError(f"{option} is an option of the sequential test: give --sprt D0,D1 too")
        return None
    if getattr(args, "deals_given", False):
        raise UsageError(
            "with --sprt the test decides how many deals to play; give the most it may play as "
            "--max-deals N, not --deals"
        )
    args.max_deals = args.max_deals or DEFAULT_MAX_DEALS
    try:
        return parse_hypotheses(
            args.sprt, 0.05 if args.alpha is None else args.alpha, 0.05 if args.beta is None else args.beta
        )
    except ValueError as err:
        raise UsageError(str(err)) from None


DEFAULT_MAX_DEALS = 10_000  # with --sprt: about 3 times the deals a fixed test of 0 against a third of a chip needs


def _test_progress(total: int, label: str, hypotheses):
    """A progress bar (``_progress_bar``) that, with a sequential test, also shows the LLR
    against its bounds: returns the bar, its advance(n) and the watch(test) that updates it."""
    progress, advance = _progress_bar(total, label)
    if hypotheses is None:
        return progress, advance, None
    lower, upper = hypotheses.bounds

    def watch(test) -> None:
        progress.update(
            progress.task_ids[0],
            description=f"{label}: LLR {test.llr:+.2f} in [{lower:+.2f}, {upper:+.2f}] after {test.deals:,} deals",
        )

    return progress, advance, watch


def _sprt_summary(test: dict, what: str) -> str:
    """The verdict of a sequential test in one line, with the deals a fixed-size test would need."""
    verdict = {
        "H1": f"H1 accepted: {what} is at least {test['d1']:+g} chips per hand",
        "H0": f"H0 accepted: {what} is at most {test['d0']:+g} chips per hand",
        "undecided": f"undecided after the most deals allowed (--max-deals {test['deals']:,})",
    }[test["verdict"]]
    fixed = (
        ""
        if test["fixed_deals"] is None
        else (f"; a fixed-size test of the same power would need {test['fixed_deals']:,}")
    )
    return (
        f"SPRT ({test['d0']:g}, {test['d1']:g}; alpha {test['alpha']:g}, beta {test['beta']:g}): {verdict}, "
        f"after {test['deals']:,} deals (LLR {test['llr']:+.2f}, bounds [{test['bounds'][0]:+.2f}, "
        f"{test['bounds'][1]:+.2f}]{fixed})"
    )


def _check_record_dir(folder: str | None) -> None:
    """Before any work: UsageError unless ``--record DIR`` is a folder that takes new files."""
    if folder is None:
        return
    from tiengow.training.runs import check_output_path

    try:
        check_output_path(folder, "--record", folder_only=True)
    except ValueError as err:
        raise UsageError(str(err)) from None


def _verdict(lo: float, hi: float) -> str:
    return "better" if lo > 0 else "worse" if hi < 0 else "not distinguishable"


@command("league")
def cmd_league(args: argparse.Namespace) -> int:
    """Round robin of duplicate evaluations: cross table, ranking by rating, JSON and a PNG heat map."""
    from tiengow.agents.arena import heat_map, league
    from tiengow.agents.infra import atomic_write, install_hint, json_text
    from tiengow.training.runs import check_outputs, run_dir

    rules = _rules_arg(args.rules)
    for spec in args.agents:
        _agent_spec(spec, rules)
    try:  # known before the league is played: without it, the JSON and the table still come out
        import matplotlib  # noqa: F401

        plot = True
    except ImportError:
        plot = False
    check_outputs(args.out, "--out", "league", (".json", ".png") if plot else (".json",))  # before, not after
    _check_record_dir(args.record)
    pairs = len(args.agents) * (len(args.agents) - 1)
    progress, advance = _progress_bar(pairs * args.deals, "league")
    with progress:
        result = league(args.agents, args.deals, args.seed, rules, args.workers, advance, args.ray)
    from rich.console import Console
    from rich.table import Table

    console = Console()
    cross = Table(
        "candidate \\ opponent", *args.agents, title=f"chips per hand ± 95% CI, {args.deals} duplicate deals each"
    )
    for a in args.agents:
        cells = []
        for b in args.agents:
            lo, hi = result["cross_ci95"][a].get(b, (0.0, 0.0))
            cells.append("—" if a == b else f"{result['cross_table'][a][b]:+.2f} ± {(hi - lo) / 2:.2f}")
        cross.add_row(a, *cells)
    console.print(cross)
    ranking = Table("rank", "agent", "rating", "95% CI", "mean chips per hand", title="ranking by rating")
    for rank, row in enumerate(result["ranking"], 1):
        lo, hi = row["rating_ci95"]
        ranking.add_row(
            str(rank),
            row["agent"],
            f"{row['rating']:+.0f}",
            f"[{lo:+.0f}, {hi:+.0f}]",
            f"{row['mean_chips_per_hand']:+.3f}",
        )
    console.print(ranking)
    console.print(f"rating: {result['rating']}", soft_wrap=True, highlight=False)
    if args.record is not None:
        from tiengow.records import match_record, write_record

        for match in result["matches"]:
            write_record(args.record, match_record(args.command_line, match, rules.name, args.seed))
        print(f"wrote {len(result['matches'])} match records into {args.record}")
    out = args.out if args.out is not None else os.path.join(run_dir("league"), "league")
    atomic_write(out + ".json", lambda f: f.write((json_text(result, indent=1) + "\n").encode()))
    if plot:
        heat_map(result, out + ".png")
        print(f"wrote {out}.json and {out}.png")
    else:
        print(f"wrote {out}.json; no heat map: the PNG needs matplotlib ({install_hint('train')})")
    return 0


@command("ladder")
def cmd_ladder(args: argparse.Namespace) -> int:
    """The reference ladder of the shipped bots by sequential tests: records and a Markdown table."""
    from tiengow import ladder
    from tiengow.agents.infra import atomic_write
    from tiengow.agents.sprt import parse_hypotheses
    from tiengow.training.runs import check_output_path, run_dir

    rules = _rules_arg(args.rules)
    try:
        bots = ladder.place(args.bots or [])
        hypotheses = parse_hypotheses(args.sprt, args.alpha, args.beta)
    except ValueError as err:
        raise UsageError(str(err)) from None
    for spec in bots:
        _agent_spec(spec, rules)
    _check_record_dir(args.record)
    if args.out is not None:
        check_output_path(args.out, "--out")
    folder = args.record if args.record is not None else run_dir("ladder")
    out = args.out if args.out is not None else os.path.join(folder, "ladder.md")

    def progress(label: str):
        return _test_progress(args.max_deals, label, hypotheses)

    entries = ladder.run(
        bots, folder, hypotheses, args.max_deals, args.seed, rules, args.workers, args.ray, progress=progress
    )
    text = ladder.table(entries, out)
    atomic_write(out, lambda f: f.write(text.encode()))
    print(text, end="")
    print(f"wrote {out} and the records in {folder}", file=sys.stderr)
    return 0


@command("agents")
def cmd_agents(args: argparse.Namespace) -> int:
    """Every agent spec with its kind, usage and options; or one spec resolved, with its config."""
    from tiengow.agents import agent_catalogue, describe_agent

    if args.spec is not None:
        try:
            found = describe_agent(args.spec, _rules_arg(args.rules))
        except ValueError as err:
            raise UsageError(str(err)) from None
        if args.json:
            print(json.dumps(found))
            return 0
        print(f"{found['spec']}: {found['kind']}, {found['description']}")
        for key, value in (found["config"] or {}).items():
            print(f"  {key} = {value}")
        return 0
    rows = agent_catalogue()
    if args.json:
        print(json.dumps({"agents": rows}))
        return 0
    width = max(len(row["usage"]) for row in rows)
    for row in rows:
        print(f"{row['usage']:<{width}}  {row['kind']:<9}  {row['description']}")
        for option in row["options"]:
            allowed = option["range"]
            shown = (
                ""
                if allowed is None
                else (
                    f" ({allowed[0]:,} to {allowed[1]:,})"
                    if option["type"] in ("int", "float", "bool")
                    else f" ({', '.join(allowed)})"
                )
            )
            default = int(option["default"]) if option["type"] == "bool" else option["default"]
            print(f"{'':<{width}}    {option['key']}={default}{shown}: {option['doc']}")
    return 0


# The example records shipped in the package (tiengow/examples/), each with what it shows.
EXAMPLES = {
    "hand.json": "one finished hand record (tiengow show, tiengow replay)",
    "match.jsonl": "a match: one hand record a line (tiengow replay)",
    "check.jsonl": "{record, expected} lines: does the engine agree? (tiengow replay --check)",
    "deal.json": "a deal and a few actions, a position to count from (tiengow perft --depth N)",
}


@command("examples")
def cmd_examples(args: argparse.Namespace) -> int:
    """List the example records shipped with the package, or copy them into the folder named."""
    from importlib.resources import files

    shipped = files("tiengow") / "examples"
    if args.folder is None:
        for name, what in EXAMPLES.items():
            print(f"{name:<12}  {what}")
        print(f"in {shipped}; copy them with: tiengow examples FOLDER")
        return 0
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} is a file; expected a folder to copy the examples into")
    clash = [name for name in EXAMPLES if (folder / name).exists()]
    if clash:  # checked before copying anything: nothing is half-applied, nothing overwritten
        raise UsageError(f"{folder / clash[0]} exists; name a folder without the examples ({', '.join(EXAMPLES)})")
    folder.mkdir(parents=True, exist_ok=True)
    for name in EXAMPLES:
        (folder / name).write_bytes((shipped / name).read_bytes())
    print(f"copied {len(EXAMPLES)} examples into {folder}: {', '.join(EXAMPLES)}")
    return 0


@command("bench")
def cmd_bench(args: argparse.Namespace) -> int:
    """Throughput of the core, the APIs and the environments (and the peers with --peers)."""
    from tiengow.benchmarks import bench
    from tiengow.training.runs import check_outputs, run_dir

    bench.check_only(args.only)
    check_outputs(args.save, "--save", "bench", (".json", ".md"))
    figures = bench.measure(args.quick, args.peers, args.only, log=lambda m: print(m, file=sys.stderr))
    out = args.save if args.save is not None else os.path.join(run_dir("bench"), "bench")
    bench.save(figures, out)
    print(json.dumps(figures) if args.json else bench.table(figures))
    print(f"wrote {out}.json and {out}.md", file=sys.stderr)
    return 0


@command("play")
def cmd_play(args: argparse.Namespace) -> int:
    """A person against bots: a match of several hands."""
    from .ui import cmd_play as run

    return run(args)


@command("show")
def cmd_show(args: argparse.Namespace) -> int:
    """A hand record drawn trick by trick."""
    from .ui import cmd_show as run

    return run(args)


@command("serve")
def cmd_serve(args: argparse.Namespace) -> int:
    """The web app: play, watch, replay and league views in the browser (tiengow/web)."""
    from .web.server import serve

    return serve(args.host, args.port, args.records, args.bots_dir)


class Given(argparse.Action):
    """Stores the value and notes that the option was given (``deals_given``), so that a default
    can be told from the same value typed."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, self.dest + "_given", True)


class HelpFormatter(argparse.HelpFormatter):
    """Adds "(default: X)" to an option's help when it has a default and the text does not say it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        # identity, not equality: a default of 0 is shown, unlike the False of a flag
        shown = not any(action.default is nothing for nothing in (None, False, argparse.SUPPRESS))
        shown = shown and not action.required
        if shown and "default" not in text and action.option_strings:
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (the problem, and where to look) in the form
    of every other error, not the usage block; its sub-command parsers are of the same kind."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"tiengow: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):
        # Words a sub-command does not know are its error, pointing at its own --help (argparse
        # hands them up to the top parser, whose help does not list a sub-command's options).
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and self.prog != "tiengow":
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def build_parser() -> argparse.ArgumentParser:
    from tiengow_env import __version__

    parser = Parser(prog="tiengow", description="Tien Gow (天九) for AI research.")
    parser.add_argument("--version", action="version", version=f"tiengow {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    rules_help = "preset name, YAML/TOML file, or JSON object of switches (default: standard)"
    ray_help = "run chunks of deals as Ray tasks: on a local Ray instance, or on the cluster at ADDRESS"
    agent_help = (
        "agent spec: random, greedy, expert, pimc[:SAMPLES], ismcts, search[:BUDGET], champion, "
        "ppo[:PATH], cfr[:PATH], or a plugin MODULE:FACTORY (tiengow agents lists them)"
    )
    positive, natural = int_option(1), int_option(0)

    p = sub.add_parser(
        "replay",
        help="replay hand records (.json or .jsonl) to JSON Lines results, "
        "one line per input line (exit 2 if any is an error)",
    )
    p.add_argument("path", help="a .json record, or a .jsonl file of records (one per line)")
    p.add_argument(
        "--check",
        action="store_true",
        help='PATH holds {"record", "expected"} lines (a conformance file): replay each, say whether '
        "the engine agrees, exit 0 only if every line does",
    )
    p = sub.add_parser("perft", help="count decision sequences from a record's position")
    p.add_argument("path", help="a .json record, or a .jsonl file of records")
    p.add_argument("--depth", type=natural, required=True, help="decisions to look ahead (0 or more)")
    p = sub.add_parser("rules", help="print a preset's switches and combination table")
    p.add_argument("preset", nargs="?", help="preset name (default: list the presets)")
    p.add_argument("--rules", help=rules_help)
    p.add_argument("--json", action="store_true", help="print the card as JSON")
    p = sub.add_parser("demo", help="show a hand, simulate random hands, run a short evaluation ladder")
    p.add_argument("--rules", help=rules_help)
    p.add_argument(
        "--hands",
        type=int_option(1, MAX_DEMO_HANDS),
        default=200_000,
        help="random hands simulated in the compiled core",
    )
    p.add_argument("--deals", type=natural, default=50, help="deals per duplicate evaluation (0: none)")
    p.add_argument("--seed", type=natural, default=1, help="seed of the hand shown, the hands and the deals")
    p = sub.add_parser("tree", help="exact game-tree size of a small variant (e.g. --rules micro)")
    p.add_argument("--rules", default="micro", help="preset name, YAML/TOML file, or JSON object of switches")
    p.add_argument("--banker", type=natural, default=0, help="the fixed banker seat")
    p.add_argument(
        "--max-nodes",
        type=positive,
        default=2_000_000,
        metavar="N",
        help="refuse a tree of more decision nodes than this (estimated from its first deal before "
        "the walk; 7,000 to 25,000 nodes a second)",
    )
    p.add_argument("--json", action="store_true", help="print the sizes as JSON")
    p = sub.add_parser("eval", help="duplicate evaluation: CANDIDATE against copies of an opponent")
    p.add_argument("candidate", help=agent_help)
    p.add_argument("--vs", required=True, help="opponent " + agent_help)
    p.add_argument(
        "--baseline",
        metavar="SPEC",
        help="a second candidate, evaluated on the same deals: prints "
        "both and the difference deal by deal, with its (narrower) paired 95%% CI",
    )
    p.add_argument("--deals", type=positive, action=Given, default=1000, help="deals, each played once per seat")
    p.add_argument("--seed", type=natural, default=0, help="seed of the deals and of the agents")
    p.add_argument("--rules", help=rules_help)
    p.add_argument(
        "--workers", type=int_option(1, MAX_WORKERS), default=1, help="processes (use all cores with the core count)"
    )
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help=ray_help)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--sprt",
        metavar="D0,D1",
        help="a sequential test (Wald's SPRT, fishtest's normal "
        "approximation) of the score, or with --baseline of the difference, in chips per hand: "
        "H0: mean <= D0 against H1: mean >= D1; the match stops at the verdict (docs/evaluation.md)",
    )
    p.add_argument(
        "--alpha", type=float, help="with --sprt: the chance of accepting H1 when the mean is D0 (default: 0.05)"
    )
    p.add_argument(
        "--beta", type=float, help="with --sprt: the chance of accepting H0 when the mean is D1 (default: 0.05)"
    )
    p.add_argument(
        "--max-deals",
        type=positive,
        metavar="N",
        help="with --sprt: the most deals to play; "
        f"undecided if no bound is crossed by then (default: {DEFAULT_MAX_DEALS:,})",
    )
    p.add_argument(
        "--record",
        metavar="DIR",
        help="write the match's JSON record into DIR (the project's own are in benchmarks/results/matches)",
    )
    p = sub.add_parser("league", help="every ordered pair of agents through eval: cross table and rating")
    p.add_argument("agents", nargs="+", help="two or more agent specs (as for eval)")
    p.add_argument("--deals", type=positive, default=500, help="deals per ordered pair")
    p.add_argument("--seed", type=natural, default=0, help="seed of the deals and of the agents")
    p.add_argument("--rules", help=rules_help)
    p.add_argument(
        "--workers", type=int_option(1, MAX_WORKERS), default=1, help="processes (use all cores with the core count)"
    )
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help=ray_help)
    p.add_argument(
        "--out", help="output path without extension, for OUT.json and OUT.png (default: runs/league/DATE-TIME/league)"
    )
    p.add_argument("--record", metavar="DIR", help="also write one JSON record per match into DIR")
    p = sub.add_parser(
        "ladder",
        help="the reference ladder of the shipped bots by sequential tests: each bot "
        "against the one below it (and champion against ppo), as records and a Markdown table",
    )
    p.add_argument(
        "--bots",
        action="append",
        metavar="SPEC[@BELOW]",
        help="add a bot right above BELOW (at the top without it); may be given again",
    )
    p.add_argument(
        "--sprt",
        default="0,0.3",
        metavar="D0,D1",
        help="the bounds of every rung's sequential test, in chips per hand the upper bot gains",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="the chance of accepting H1 when the gain is D0")
    p.add_argument("--beta", type=float, default=0.05, help="the chance of accepting H0 when the gain is D1")
    p.add_argument(
        "--max-deals",
        type=positive,
        default=DEFAULT_MAX_DEALS,
        metavar="N",
        help="the most deals of a rung (undecided if no bound is crossed by then)",
    )
    p.add_argument("--seed", type=natural, default=45000, help="seed of the deals and of the agents")
    p.add_argument("--rules", help=rules_help)
    p.add_argument(
        "--workers", type=int_option(1, MAX_WORKERS), default=1, help="processes (use all cores with the core count)"
    )
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help=ray_help)
    p.add_argument(
        "--record",
        metavar="DIR",
        help="the folder of the rungs' records: a rung whose record is there "
        "already is not played again (default: runs/ladder/DATE-TIME)",
    )
    p.add_argument("--out", metavar="FILE.md", help="the rendered table (default: DIR/ladder.md)")
    p = sub.add_parser(
        "agents",
        help="list the agent specs (built-in, installed plugins, MODULE:FACTORY), or resolve one and show its config",
    )
    p.add_argument("spec", nargs="?", help="an agent spec to resolve, such as pimc:64:epsilon=0.5")
    p.add_argument("--rules", help="the rules to build SPEC for (default: standard)")
    p.add_argument(
        "--json",
        action="store_true",
        help='print JSON: {"agents": [{name, kind, usage, description, options: [{key, type, default, '
        "range, doc}]}]}, or SPEC resolved",
    )
    p = sub.add_parser("examples", help="list the example records shipped with the package, or copy them into FOLDER")
    p.add_argument(
        "folder",
        nargs="?",
        help="a folder to copy the examples into (made if missing; existing examples are never overwritten)",
    )
    p = sub.add_parser("bench", help="measure hands/s and steps/s (optionally beside peer platforms)")
    p.add_argument("--quick", action="store_true", help="shorter runs")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--peers", action="store_true", help="also OpenSpiel, PettingZoo and RLCard ([peers] extra)")
    p.add_argument("--only", metavar="NAME", help="only the figures whose name contains NAME (default: all)")
    p.add_argument(
        "--save",
        metavar="PATH",
        help="write PATH.json and PATH.md; the README's table is "
        "--save benchmarks/results/latest (default: runs/bench/DATE-TIME/bench)",
    )
    from .ui import add_parsers

    add_parsers(sub)
    p = sub.add_parser(
        "serve",
        help="play, watch, replay and league views in the browser ([web] extra)",
        description="A local web app: play the bots, watch bots play with their view of each "
        "choice, replay saved hands, and show a league.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)")
    p.add_argument(
        "--records",
        metavar="DIR",
        help="folder the hands are saved in and replays and leagues are read "
        "from, and no other (default: runs/serve/DATE-TIME)",
    )
    p.add_argument(
        "--bots-dir",
        metavar="DIR",
        help="folder of bot files (PPO checkpoints, CFR policies, locators) the page may play, each "
        "named by its path inside DIR: ppo:NAME.pt, cfr:NAME.npz, champion:prior=NAME.pt (default: "
        "none; the page plays the built-in agents with the shipped networks). Plugins and "
        "MODULE:FACTORY are never loaded from the page",
    )
    from .train import add_parsers as add_training_parsers

    add_training_parsers(sub)
    return parser


# Commands that never run the compiled core (no "compiling" notice for them).
NO_CORE = {"rules", "agents", "examples"}


def main(argv: list[str] | None = None) -> int:
    from tiengow.options import run_for_people

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or a bad option (already explained on stderr)
        return int(done.code or 0)
    args.command_line = "tiengow " + shlex.join(sys.argv[1:] if argv is None else argv)  # for records

    def work() -> int:
        if args.command not in NO_CORE:
            _say_if_compiling()
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return handler(args)

    return run_for_people("tiengow", work)


def _say_if_compiling() -> None:
    """On a terminal, say so when numba is about to compile the core (its cache is cold): the
    first command after an install or an edit of the kernels pauses for several seconds."""
    if not sys.stderr.isatty():
        return
    if core_cache_is_cold():
        print("compiling the core (first run only)…", file=sys.stderr, flush=True)


def core_cache_is_cold() -> bool:
    """True when numba would compile the core now: the cache index of one core kernel
    (``_kernels.deal``) is missing, from another numba, or stamped with other sources (numba's own
    check of it, with the project's stamp over every file the kernel is built from,
    ``tiengow_env/_numba_cache.py``). Unknown numba internals count as warm, so that nothing is
    said wrongly."""
    try:
        from tiengow_env import _kernels

        return not _kernels.deal._cache._cache_file._load_index()
    except Exception:  # noqa: BLE001  (a private numba API: if it moved, say nothing)
        return False


if __name__ == "__main__":
    sys.exit(main())
