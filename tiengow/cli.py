"""The ``tiengow`` command line. Every failure is a one-line message, never a traceback."""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


class UsageError(Exception):
    """A bad argument or input file: printed as ``tiengow: error: ...`` with exit status 2."""


def command(name: str):
    def register(fn):
        COMMANDS[name] = fn
        return fn
    return register


def _rules_arg(text: str | None):
    """A --rules value: preset name, YAML/TOML path, or a JSON object of switches."""
    from tiengow_env.rules import RuleSet
    if text is None:
        return RuleSet.from_spec("standard")
    spec = json.loads(text) if text.lstrip().startswith("{") else text
    try:
        return RuleSet.from_spec(spec)
    except ValueError as err:
        raise UsageError(str(err)) from None


@command("replay")
def cmd_replay(args: argparse.Namespace) -> int:
    from tiengow_env.game import RecordError, replay
    records = _read_records(args.path)
    ok = True
    for record in records:
        try:
            if isinstance(record, RecordError):
                raise record
            line = replay(record)
        except RecordError as err:
            ok = False
            line = {"error": str(err), "action_index": err.action_index}
        print(json.dumps(line))
    sys.stdout.flush()
    return 0 if ok else 2


def _read_records(path: str) -> list:
    from tiengow_env.game import load_records
    try:
        return load_records(path)
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None


@command("perft")
def cmd_perft(args: argparse.Namespace) -> int:
    from tiengow_env.game import RecordError, perft
    records = _read_records(args.path)
    status = 0
    for record in records:
        try:
            if isinstance(record, RecordError):
                raise record
            print(perft(record, args.depth))
        except RecordError as err:
            print(json.dumps({"error": str(err), "action_index": err.action_index}))
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
    rules = _rules_arg(args.rules or args.preset)
    table = table_for(rules)
    if args.json:
        print(json.dumps({"switches": rules.switches(), "hand_size": rules.hand_size, "par": rules.par,
                          "combinations": [{"id": j, "class": c.cls, "tiles": c.names, "strength": c.strength}
                                           for j, c in enumerate(table.combos)]}))
        return 0
    from rich.console import Console
    from rich.table import Table
    console = Console()
    console.print(f"[bold]Rules: {rules.name}[/bold]  ({rules.players} players, {len(rules.deck_types)} tiles, "
                  f"hands of {rules.hand_size}, par {rules.par})")
    switches = Table("switch", "value", title="switches (* differs from standard)")
    diff = rules.diff()
    for key, value in rules.switches().items():
        switches.add_row(("* " if key in diff else "  ") + key, json.dumps(value))
    console.print(switches)
    combos = Table("id", "class", "tiles", "strength",
                   title=f"{table.num_combos} combinations, weakest first per class")
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
    K.random_hands(10, args.seed, table.table, table.rules_array, net[:10])  # compile before timing
    start = time.perf_counter()
    steps = K.random_hands(args.hands, args.seed, table.table, table.rules_array, net)
    took = time.perf_counter() - start
    print(f"\n{args.hands:,} random hands in the compiled core: {args.hands / took:,.0f} hands/s, "
          f"{steps / args.hands:.1f} decisions per hand")
    print("mean net chips per seat: " + ", ".join(f"{v:+.3f}" for v in net.mean(axis=0)))
    if args.deals:
        from tiengow.agents.arena import evaluate
        print(f"\nDuplicate evaluation, {args.deals} deals each (every deal played once per seat):")
        for candidate, opponent in (("greedy", "random"), ("expert", "greedy"), ("pimc", "expert")):
            result = evaluate(candidate, opponent, args.deals, args.seed, rules)
            lo, hi = result.ci95
            print(f"  {candidate:7s} vs {opponent:7s} {result.chips_per_hand:+7.2f} chips per hand, "
                  f"95% CI [{lo:+.2f}, {hi:+.2f}]")
    return 0


@command("tree")
def cmd_tree(args: argparse.Namespace) -> int:
    """Exact size of a small game: deals, decision nodes, information sets per seat."""
    from tiengow_env.tree import tree_stats
    rules = _rules_arg(args.rules)
    if rules.hand_size > 4:
        raise UsageError(f"{rules.name} has hands of {rules.hand_size} tiles: its tree is too large to walk; "
                         "use a small preset such as micro or a custom deck of about 8 tiles")
    stats = tree_stats(rules, banker=args.banker)
    if args.json:
        print(json.dumps(stats))
    else:
        print(f"rules {rules.name}, banker seat {stats['banker']}")
        print(f"  distinct deals       {stats['deals']:,}")
        print(f"  decision nodes       {stats['decision_nodes']:,}")
        print(f"  terminal nodes       {stats['terminal_nodes']:,}")
        print(f"  information sets     {stats['infosets']:,} "
              f"(per seat: {', '.join(f'{n:,}' for n in stats['infosets_per_seat'])})")
    return 0


def _progress_bar(total: int, label: str):
    """A rich progress bar on stderr (so that --json output stays clean); yields an advance()."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                        console=Console(stderr=True), transient=True)
    task = progress.add_task(label, total=total)
    return progress, lambda n: progress.advance(task, n)


def _agent_spec(text: str) -> str:
    from tiengow.agents import make_agent
    try:
        make_agent(text)
    except ValueError as err:
        raise UsageError(str(err)) from None
    return text


@command("eval")
def cmd_eval(args: argparse.Namespace) -> int:
    """Duplicate evaluation of one agent against copies of another."""
    from tiengow.agents.arena import evaluate
    rules = _rules_arg(args.rules)
    _agent_spec(args.candidate), _agent_spec(args.vs)
    progress, advance = _progress_bar(args.deals, f"{args.candidate} vs {args.vs}")
    with progress:
        result = evaluate(args.candidate, args.vs, args.deals, args.seed, rules, args.workers, advance, args.ray)
    lo, hi = result.ci95
    verdict = "better" if lo > 0 else "worse" if hi < 0 else "not distinguishable"
    if not args.json:
        print(f"{result.candidate} vs {result.opponent} ({rules.name}): {result.deals:,} deals, {result.hands:,} hands")
        print(f"  chips per hand   {result.chips_per_hand:+.3f}   95% CI [{lo:+.3f}, {hi:+.3f}]  ({verdict})")
        print(f"  columns per hand {result.columns_per_hand:.2f}   last trick won {100 * result.last_trick_rate:.1f}%")
    else:
        print(result.to_json())
    return 0


@command("league")
def cmd_league(args: argparse.Namespace) -> int:
    """Round robin of duplicate evaluations: cross table, ranking, JSON and a PNG heat map."""
    from tiengow.agents.arena import heat_map, league
    rules = _rules_arg(args.rules)
    for spec in args.agents:
        _agent_spec(spec)
    pairs = len(args.agents) * (len(args.agents) - 1)
    progress, advance = _progress_bar(pairs * args.deals, "league")
    with progress:
        result = league(args.agents, args.deals, args.seed, rules, args.workers, advance, args.ray)
    from rich.console import Console
    from rich.table import Table
    cross = Table("candidate \\ opponent", *args.agents, title=f"chips per hand, {args.deals} duplicate deals each")
    for a in args.agents:
        cross.add_row(a, *("—" if a == b else f"{result['cross_table'][a][b]:+.3f}" for b in args.agents))
    Console().print(cross)
    for rank, row in enumerate(result["ranking"], 1):
        print(f"{rank}. {row['agent']:12s} {row['mean_chips_per_hand']:+.3f}")
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=1)
    heat_map(result, args.out + ".png")
    print(f"wrote {args.out}.json and {args.out}.png")
    return 0


@command("bench")
def cmd_bench(args: argparse.Namespace) -> int:
    """Throughput of the core, the APIs and the environments (and the peers with --peers)."""
    from tiengow.benchmarks import bench
    figures = bench.measure(args.quick, args.peers, args.only, log=lambda m: print(m, file=sys.stderr))
    if args.only is None:
        bench.save(figures)
    print(json.dumps(figures) if args.json else bench.table(figures))
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


def build_parser() -> argparse.ArgumentParser:
    from tiengow_env import __version__
    parser = argparse.ArgumentParser(prog="tiengow", description="Tien Gow (天九) for AI research.")
    parser.add_argument("--version", action="version", version=f"tiengow {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    rules_help = "preset name, YAML/TOML file, or JSON object of switches (default: standard)"
    ray_help = "run chunks of deals as Ray tasks: on a local Ray instance, or on the cluster at ADDRESS"

    p = sub.add_parser("replay", help="replay hand records (.json or .jsonl) to JSON Lines results")
    p.add_argument("path")
    p = sub.add_parser("perft", help="count decision sequences from a record's position")
    p.add_argument("path")
    p.add_argument("--depth", type=int, required=True)
    p = sub.add_parser("rules", help="print a preset's switches and combination table")
    p.add_argument("preset", nargs="?")
    p.add_argument("--rules", help=rules_help)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("demo", help="show a hand, simulate random hands, run a short evaluation ladder")
    p.add_argument("--rules", help=rules_help)
    p.add_argument("--hands", type=int, default=200_000)
    p.add_argument("--deals", type=int, default=50, help="deals per duplicate evaluation (0: none)")
    p.add_argument("--seed", type=int, default=1)
    p = sub.add_parser("tree", help="exact game-tree size of a small variant (e.g. --rules micro)")
    p.add_argument("--rules", default="micro", help=rules_help)
    p.add_argument("--banker", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("eval", help="duplicate evaluation: CANDIDATE against copies of an opponent")
    p.add_argument("candidate", help="agent spec: random, greedy, expert, pimc[:samples], ...")
    p.add_argument("--vs", required=True, help="opponent agent spec")
    p.add_argument("--deals", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", help=rules_help)
    p.add_argument("--workers", type=int, default=1, help="processes (use all cores with the core count)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help=ray_help)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("league", help="every ordered pair of agents through eval: cross table and ranking")
    p.add_argument("agents", nargs="+")
    p.add_argument("--deals", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", help=rules_help)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help=ray_help)
    p.add_argument("--out", default="league", help="output path without extension (.json and .png)")
    p = sub.add_parser("bench", help="measure hands/s and steps/s (optionally beside peer platforms)")
    p.add_argument("--quick", action="store_true", help="shorter runs")
    p.add_argument("--json", action="store_true")
    p.add_argument("--peers", action="store_true", help="also OpenSpiel, PettingZoo and RLCard ([peers] extra)")
    p.add_argument("--only", metavar="NAME", help="only the figures whose name contains NAME")
    from .ui import add_parsers
    add_parsers(sub)
    train = sub.add_parser("train", help="train an agent: cfr (CFR+, CFR, MCCFR) or ppo")
    algorithms = train.add_subparsers(dest="algorithm", metavar="ALGORITHM")
    algorithms.required = True
    from tiengow.training import cfr_cli, ppo_cli
    cfr_cli.add_parsers(sub, train_subparsers=algorithms)
    ppo_cli.add_train_ppo_parser(algorithms)
    from tiengow.training import exploit_cli
    exploit_cli.add_exploit_parser(sub)
    return parser


# Packages that only some commands need, and the pyproject extra that installs each.
OPTIONAL_EXTRAS = {"torch": "train", "tensorboard": "train", "matplotlib": "train", "ray": "ray",
                   "pyspiel": "peers", "rlcard": "peers"}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return handler(args)
    except (UsageError, ValueError) as err:  # our ValueErrors are written for people
        print(f"tiengow: error: {err}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:  # an optional dependency: say which extra brings it
        extra = OPTIONAL_EXTRAS.get((err.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"tiengow: error: this command needs {err.name}, which is not installed; "
              f'pip install -e ".[{extra}]"', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tiengow: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
