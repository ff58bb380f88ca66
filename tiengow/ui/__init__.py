"""Tien Gow for people: ``tiengow play`` (a match against bots) and ``tiengow show`` (a record, drawn).

``add_parsers(subparsers)`` adds both commands to the ``tiengow`` parser; ``cmd_play`` and
``cmd_show`` run them and return the exit status. Bad input raises ``ValueError`` with a
message for people. Importing this package is cheap: rich, the core and the agents are
imported when a command runs.

    ui/render.py    tiles, combinations, hands, moves and the settlement as text
    ui/tracker.py   HandLog: a Game that remembers each trick's moves, and its hand record
    ui/play.py      the match loop and the reading of typed moves
    ui/show.py      a hand record drawn trick by trick
"""

from __future__ import annotations

import argparse
import sys

RULES_HELP = "preset name, YAML/TOML file, or JSON object of switches (default: standard)"


def add_parsers(subparsers) -> None:
    """Add ``play`` and ``show`` to the ``tiengow`` sub-command parsers."""
    from tiengow.options import int_option

    p = subparsers.add_parser(
        "play",
        help="play one seat against three bots, a match of several hands",
        description="Play Tien Gow against bots. Type ? during play for help. "
        "Input may come from a pipe; end of input ends the match (exit 0).",
    )
    p.add_argument(
        "--vs",
        default="expert",
        help="the bots' agent spec: random, greedy, expert, pimc[:samples], ppo:PATH, ... (default: expert)",
    )
    p.add_argument("--seat", type=int_option(0), default=0, help="your seat, 0 to 3 (default: 0)")
    p.add_argument("--rules", help=RULES_HELP)
    p.add_argument("--hands", type=int_option(1), default=8, help="hands in the match (default: 8)")
    p.add_argument("--seed", type=int_option(0), help="seed of the deals and the bots (default: random, and printed)")
    p.add_argument(
        "--save",
        metavar="DIR",
        help="directory for the hand records, new or empty, made at the first "
        "finished hand (default: runs/play/DATE-TIME)",
    )
    p = subparsers.add_parser(
        "show", help="draw a hand record trick by trick, with each seat's tiles and the settlement"
    )
    p.add_argument("path", metavar="RECORD", help="a .json record, or .jsonl with one record per line")
    p.add_argument("--index", type=int_option(1), help="which record of a .jsonl file, counting from 1 (default: 1)")
    p.add_argument("--step", action="store_true", help="wait for Enter after each trick")


def cmd_play(args: argparse.Namespace) -> int:
    """Run ``tiengow play``."""
    from .play import cmd_play as run

    return run(args)


def cmd_show(args: argparse.Namespace) -> int:
    """Run ``tiengow show``."""
    from .show import cmd_show as run

    return run(args)


def main(argv: list[str] | None = None) -> int:
    """``python -m tiengow.ui play|show ...``, the same as ``tiengow play|show``."""
    parser = argparse.ArgumentParser(prog="tiengow", description="Tien Gow (天九): play and show.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_parsers(sub)
    args = parser.parse_args(argv)
    try:
        return {"play": cmd_play, "show": cmd_show}[args.command](args)
    except ValueError as err:  # written for people
        print(f"tiengow: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tiengow: interrupted", file=sys.stderr)
        return 130


__all__ = ["add_parsers", "cmd_play", "cmd_show", "main"]
