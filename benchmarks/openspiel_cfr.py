"""OpenSpiel's ``cfr.CFRPlusSolver`` on ``python_tiengow(rules=micro, banker=0)`` beside our CFR+.

    python -m tiengow.benchmarks.openspiel_cfr --iterations 1,2,3,4,6,8 --minutes 30 \
        --out benchmarks/results/openspiel_cfr_micro.json

Both solvers run on the same game (the exact micro tree, 1,851 information sets); after each
listed iteration the NashConv of each one's average policy is measured exactly on our tree
(``training.cfr_tabular.nash_conv``; OpenSpiel's policy is mapped to our slots by
``slots_from_policy``, the inverse of ``policy_from_cfr``). At the last OpenSpiel point its
NashConv is also measured by OpenSpiel itself (``exploitability.nash_conv``) as a check of
that mapping (the default test suite checks the two on the shipped policy, to 1e-6). The
record is rewritten after every point, so a run stopped by ``--minutes`` keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import time

from tiengow.agents.cfr import TabularPlay
from tiengow.agents.openspiel import load_game, slots_from_policy
from tiengow.training.cfr_tabular import TabularCFR, build_tree, nash_conv


def run(iterations: list[int], minutes: float, out: str, command: str) -> dict:
    """Both curves (module doc), written to ``out`` after every point."""
    from open_spiel.python.algorithms import cfr, exploitability

    tree = build_tree("micro", 0, views=True)
    play = TabularPlay(tree, tree.uniform_policy(), "micro")
    record = {
        "command": command,
        "game": "python_tiengow(rules=micro, banker=0)",
        "infosets": tree.num_infosets,
        "ours": [],
        "openspiel": [],
        "openspiel_nash_conv_check": None,
        "note": "",
    }

    def save() -> None:
        with open(out, "w") as f:
            json.dump(record, f, indent=1)

    ours = TabularCFR(tree, plus=True)
    start = time.perf_counter()
    for t in range(1, max(iterations) + 1):
        ours.iteration()
        if t in iterations:
            record["ours"].append(
                {
                    "iteration": t,
                    "seconds": round(time.perf_counter() - start, 3),
                    "nash_conv": nash_conv(tree, ours.average_policy())["nash_conv"],
                }
            )
    save()
    game = load_game("micro", 0)
    start = time.perf_counter()
    solver = cfr.CFRPlusSolver(game)
    record["openspiel_setup_seconds"] = round(time.perf_counter() - start, 1)
    deadline = start + 60 * minutes
    average = None
    for t in range(1, max(iterations) + 1):
        solver.evaluate_and_update_policy()
        if t in iterations:
            average = solver.average_policy()
            slots = slots_from_policy(average, play)
            record["openspiel"].append(
                {
                    "iteration": t,
                    "seconds": round(time.perf_counter() - start, 1),
                    "nash_conv": nash_conv(tree, slots)["nash_conv"],
                }
            )
            save()
        if time.perf_counter() > deadline:
            record["note"] = f"stopped by --minutes {minutes} after iteration {t}"
            break
    if average is not None:
        record["openspiel_nash_conv_check"] = {
            "iteration": record["openspiel"][-1]["iteration"],
            "exploitability.nash_conv": exploitability.nash_conv(game, average),
        }
    save()
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", default="1,2,3,4,6,8", help="iterations at which to measure NashConv")
    parser.add_argument("--minutes", type=float, default=30.0, help="stop OpenSpiel's solver after this long")
    parser.add_argument("--out", required=True, help="the JSON record to write")
    args = parser.parse_args(argv)
    try:
        iterations = sorted({int(k) for k in args.iterations.split(",")})
    except ValueError:
        parser.error(f"--iterations must be positive integers separated by commas, got {args.iterations!r}")
    if not iterations or iterations[0] < 1:
        parser.error("--iterations must be positive integers")
    command = (
        "python -m tiengow.benchmarks.openspiel_cfr --iterations "
        + ",".join(map(str, iterations))
        + f" --minutes {args.minutes:g} --out {args.out}"
    )
    record = run(iterations, args.minutes, args.out, command)
    for name in ("ours", "openspiel"):
        print(name, " ".join(f"{p['iteration']}:{p['nash_conv']:.4f}" for p in record[name]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
