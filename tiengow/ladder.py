"""``tiengow ladder``: the reference ladder of the shipped bots, re-established by sequential tests.

Each bot plays the one below it (``LADDER``, weakest first), and ``champion`` plays ``ppo`` too
(``EXTRA_RUNGS``): a duplicate match under the SPRT (``agents/sprt.py``) at the stated bounds,
by default H0: the upper bot gains at most 0 chips per hand, H1: it gains at least 0.3 (a third
of a chip, the size of the recent improvements). Every rung writes a match record
(``tiengow/records.py``) into the record folder, and the table is rendered from the records.

Resumable: a rung whose record is already in the folder is not played again, so a ladder that
was stopped goes on where it stopped, and with every record present the command only renders
the table again (the same table, byte for byte).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from collections.abc import Callable
from dataclasses import asdict

from tiengow.agents.arena import evaluate
from tiengow.agents.sprt import Hypotheses
from tiengow.records import match_record, record_name, render_table, write_record

LADDER = ("random", "greedy", "expert", "pimc", "ppo", "search", "champion")  # weakest first
EXTRA_RUNGS = (("champion", "ppo"),)  # (candidate, opponent) besides each against the one below


def place(bots: list[str]) -> list[str]:
    """``LADDER`` with each ``SPEC[@BELOW]`` of ``bots`` put right above the bot BELOW (at the top
    without it); ValueError when BELOW is not on the ladder or a spec is given twice."""
    ladder = list(LADDER)
    for entry in bots:
        spec, at, below = entry.rpartition("@") if "@" in entry else (entry, "", "")
        if spec in ladder:
            raise ValueError(f"--bots {entry}: {spec!r} is already on the ladder ({', '.join(ladder)})")
        if at and below not in ladder:
            raise ValueError(
                f"--bots {entry}: {below!r} is not on the ladder; SPEC@BELOW puts SPEC right above "
                f"BELOW, one of {', '.join(ladder)}"
            )
        ladder.insert(ladder.index(below) + 1 if at else len(ladder), spec)
    return ladder


def rungs(ladder: list[str]) -> list[tuple[str, str]]:
    """(candidate, opponent) of every match: each bot against the one below, then ``EXTRA_RUNGS``
    whose two bots are on the ladder and not already neighbours."""
    pairs = [(upper, lower) for lower, upper in zip(ladder, ladder[1:])]
    return pairs + [pair for pair in EXTRA_RUNGS if set(pair) <= set(ladder) and pair not in pairs]


def run(
    ladder: list[str],
    folder: str,
    hypotheses: Hypotheses,
    max_deals: int,
    seed: int,
    rules,
    workers: int = 1,
    ray_address: str | None = None,
    say: Callable[[str], None] = print,
    progress: Callable[[str], tuple] | None = None,
) -> list[tuple[str, dict]]:
    """Play every rung whose record is not in ``folder`` yet (``rungs``) and write its record;
    (path, record) of every rung, in ladder order. ``progress(label)`` gives a context manager
    and the advance and watch callbacks of ``evaluate`` (the CLI's progress line)."""
    entries = []
    for candidate, opponent in rungs(ladder):
        path = os.path.join(folder, record_name(candidate, opponent, seed, rules.name))
        if os.path.exists(path):
            with open(path) as f:
                entries.append((path, json.load(f)))
            test = entries[-1][1].get("sprt") or {}
            stated = (hypotheses.d0, hypotheses.d1, hypotheses.alpha, hypotheses.beta)
            other = (
                ""
                if tuple(test.get(k) for k in ("d0", "d1", "alpha", "beta")) == stated
                else (" (played at other bounds; delete it to play the rung again)")
            )
            say(f"{candidate} vs {opponent}: kept {path}{other}")
            continue
        bar, advance, watch = progress(f"{candidate} vs {opponent}") if progress else (None, None, None)
        with bar if bar is not None else contextlib.nullcontext():
            result = evaluate(
                candidate, opponent, max_deals, seed, rules, workers, advance, ray_address, hypotheses, watch
            )
        record = match_record(
            eval_command(candidate, opponent, hypotheses, max_deals, seed, rules, workers),
            asdict(result),
            rules.name,
            seed,
        )
        entries.append((write_record(folder, record), record))
        test = result.sprt
        say(
            f"{candidate} vs {opponent}: {test['verdict']} after {test['deals']:,} deals, "
            f"{result.chips_per_hand:+.2f} [{result.ci95[0]:+.2f}, {result.ci95[1]:+.2f}] chips per hand"
        )
    return entries


def eval_command(
    candidate: str, opponent: str, hypotheses: Hypotheses, max_deals: int, seed: int, rules, workers: int
) -> str:
    """The ``tiengow eval`` command that plays one rung by itself (the same deals, the same record)."""
    words = [
        "tiengow",
        "eval",
        candidate,
        "--vs",
        opponent,
        "--sprt",
        f"{hypotheses.d0:g},{hypotheses.d1:g}",
        "--alpha",
        f"{hypotheses.alpha:g}",
        "--beta",
        f"{hypotheses.beta:g}",
        "--max-deals",
        str(max_deals),
        "--seed",
        str(seed),
    ]
    if rules.name != "standard":
        words += ["--rules", rules.name]
    if workers > 1:
        words += ["--workers", str(workers)]
    return shlex.join(words)


def table(entries: list[tuple[str, dict]], out: str) -> str:
    """The ladder's Markdown table, strongest rung first, linking each row to its record from
    the folder of ``out``."""
    return render_table(entries[::-1], os.path.dirname(os.path.abspath(out)))
