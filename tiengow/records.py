"""Match records: one JSON file per match that ``tiengow eval``, ``league`` and ``ladder`` write
with ``--record DIR`` (the project keeps its own in ``benchmarks/results/matches/``), and the
Markdown table rendered from them.

A record::

    {"kind": "match", "command": "tiengow eval ...", "version": "0.x", "commit": "git describe" or null,
     "date": ISO 8601, "rules": "standard", "candidate": spec, "opponent": spec, "baseline": spec or null,
     "seed": int, "deals": int, "mean": chips per hand (with a baseline: the difference deal by deal),
     "ci95": [lo, hi], "sprt": null or {"d0", "d1", "alpha", "beta", "verdict", "deals", "llr", "bounds",
     "fixed_deals"}, "ms_per_decision": {spec: ms}, "machine": {"cpu", "cores", "python", "platform"}}

The file name says which match it is (``record_name``), so that a ladder can tell a rung it has
already played, and a new run of the same match replaces the old record.
"""

from __future__ import annotations

import datetime
import functools
import os
import platform
import re
import subprocess

from tiengow.agents.infra import atomic_write, json_text


def record_name(candidate: str, opponent: str, seed: int, rules: str, baseline: str | None = None) -> str:
    """The file name of a match's record: its specs, seed and rules, made safe for any file system."""
    parts = [candidate, "vs", opponent] + (["minus", baseline] if baseline else []) + [f"seed{seed}", rules]
    return "_".join(re.sub(r"[^A-Za-z0-9.+-]+", "-", part) for part in parts) + ".json"


def match_record(
    command: str, result: dict, rules: str, seed: int, baseline: dict | None = None, difference: dict | None = None
) -> dict:
    """The record of one match: ``result`` an ``EvalResult`` as a dict; with a baseline, its
    ``EvalResult`` dict and ``difference`` (``{"mean", "ci95", "sprt"}`` of the paired difference)."""
    from tiengow_env import __version__

    measured = (
        difference
        if difference is not None
        else {"mean": result["chips_per_hand"], "ci95": result["ci95"], "sprt": result.get("sprt")}
    )
    ms = {result["candidate"]: result["ms_per_decision"]}
    if baseline is not None:
        ms[baseline["candidate"]] = baseline["ms_per_decision"]
    return {
        "kind": "match",
        "command": command,
        "version": __version__,
        "commit": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "rules": rules,
        "candidate": result["candidate"],
        "opponent": result["opponent"],
        "baseline": None if baseline is None else baseline["candidate"],
        "seed": seed,
        "deals": result["deals"],
        "mean": measured["mean"],
        "ci95": list(measured["ci95"]),
        "sprt": measured["sprt"],
        "ms_per_decision": ms,
        "machine": machine(),
    }


def write_record(folder: str, record: dict) -> str:
    """Write ``record`` into ``folder`` under its ``record_name`` (whole or not at all); its path."""
    path = os.path.join(
        folder,
        record_name(record["candidate"], record["opponent"], record["seed"], record["rules"], record["baseline"]),
    )
    atomic_write(path, lambda f: f.write((json_text(record, indent=1) + "\n").encode()))
    return path


@functools.lru_cache(maxsize=1)
def commit() -> str | None:
    """``git describe --always --dirty`` of the checkout this package runs from, or None (an
    installed wheel, or no git)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        done = subprocess.run(
            ["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def machine() -> dict:
    """The CPU model, its core count, the Python version and the platform."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def render_table(entries: list[tuple[str, dict]], link_from: str) -> str:
    """A Markdown table of match records, one row per (path, record) in the order given: the
    match, the result with its CI, the sequential test, deals, time per decision, and a link to
    the record relative to the folder ``link_from`` (where the table is written)."""
    lines = [
        "| candidate vs opponent | chips per hand | 95% CI | sequential test | deals | ms per decision | record |",
        "|---|---|---|---|---|---|---|",
    ]
    for path, record in entries:
        match = f"{record['candidate']} vs {record['opponent']}"
        if record["baseline"]:
            match = f"{record['candidate']} minus {record['baseline']}, vs {record['opponent']}"
        test = record["sprt"]
        verdict = (
            "—"
            if test is None
            else (f"{_verdict_text(test)} ({test['d0']:g}, {test['d1']:g}; α {test['alpha']:g}, β {test['beta']:g})")
        )
        lo, hi = record["ci95"]
        ms = ", ".join(f"{spec} {value:.1f}" for spec, value in record["ms_per_decision"].items())
        link = os.path.relpath(path, link_from).replace(os.sep, "/")
        lines.append(
            f"| {match} | {record['mean']:+.2f} | [{_signed(lo)}, {_signed(hi)}] | {verdict} | "
            f"{record['deals']:,} | {ms} | [{os.path.basename(path)}]({link}) |"
        )
    return "\n".join(lines) + "\n"


def _verdict_text(test: dict) -> str:
    return {"H1": f"H1: ≥ {test['d1']:+g}", "H0": f"H0: ≤ {test['d0']:+g}", "undecided": "undecided"}[test["verdict"]]


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"
