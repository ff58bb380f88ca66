"""Throughput of the compiled core: random whole-hand playouts, replay, compile and import time.

    python -m tiengow.benchmarks.core [--hands N] [--repeats R] [--json]

Every figure is measured after a warm-up, as the median of R runs. Playouts run entirely
inside compiled code (``_kernels.random_hands``): deal, dice, uniformly random legal actions
until the hand ends, settlement. "All cores" runs one such process per core at once.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tiengow.agents.infra import worker_pool

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT.parent / "shared" / "conformance" / "records.jsonl"


def _playouts(rules: str, hands: int, seed: int) -> float:
    """Seconds for ``hands`` random playouts (after compiling, and after one untimed run of the
    same size: on this machine an idle core takes a fraction of a second to reach full speed)."""
    from tiengow_env import _kernels as K
    from tiengow_env.combos import table_for
    from tiengow_env.rules import RuleSet

    table = table_for(RuleSet.from_spec(rules))
    net = np.zeros((hands, table.rules.players), dtype=np.int64)
    K.random_hands(hands, seed + 1, table.table, table.rules_array, net)
    start = time.perf_counter()
    K.random_hands(hands, seed, table.table, table.rules_array, net)
    return time.perf_counter() - start


def core_hands_per_s(rules: str = "standard", hands: int = 200_000, repeats: int = 5) -> float:
    """Random playouts per second on one core (median of ``repeats``)."""
    return statistics.median(hands / _playouts(rules, hands, seed) for seed in range(repeats))


def _worker(args: tuple[str, int, int]) -> float:
    return _playouts(*args)


def core_hands_per_s_all_cores(rules: str = "standard", hands: int = 200_000, repeats: int = 3) -> float:
    """Random playouts per second with one process per core, all at once (median)."""
    cores = os.cpu_count() or 1
    with worker_pool(cores, "the benchmark") as pool:
        list(pool.map(_worker, [(rules, 1000, s) for s in range(cores)]))  # compile/load in each worker
        # Each worker times its own timed run (its untimed warm-up run is left out); they run
        # together, so the slowest one bounds the rate of the whole machine.
        rates = [
            cores * hands / max(pool.map(_worker, [(rules, hands, 100 * r + s) for s in range(cores)]))
            for r in range(repeats)
        ]
    return statistics.median(rates)


def replay_records_per_s(path: Path = RECORDS, repeats: int = 5) -> float | None:
    """Records replayed per second through ``tiengow_env.replay`` (legal and illegal alike)."""
    if not path.exists():
        return None
    from tiengow_env.game import RecordError, replay

    records = [json.loads(line)["record"] for line in path.read_text().splitlines() if line.strip()]

    def once() -> float:
        start = time.perf_counter()
        for record in records:
            try:
                replay(record)
            except RecordError:
                pass
        return time.perf_counter() - start

    once()
    return statistics.median(len(records) / once() for _ in range(repeats))


_FIRST_HAND = (
    "import time; t = time.perf_counter(); import tiengow_env; from tiengow_env.game import Game; "
    "g = Game(seed=1)\nwhile not g.is_over: g.step(g.legal_actions()[0])\n"
    "print(time.perf_counter() - t)"
)
_IMPORT = "import time; t = time.perf_counter(); import tiengow_env; print(time.perf_counter() - t)"


def _python(code: str, env: dict) -> float:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def compile_and_import_s() -> dict[str, float]:
    """Cold: first hand with an empty numba cache. Warm: ``import tiengow_env`` and the first
    hand once the cache is filled (median of 3 fresh processes each)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold = _python(_FIRST_HAND, env)
        warm_hand = statistics.median(_python(_FIRST_HAND, env) for _ in range(3))
        warm_import = statistics.median(_python(_IMPORT, env) for _ in range(3))
    return {"compile_s_cold": cold, "first_hand_s_warm": warm_hand, "import_s_warm": warm_import}


def machine() -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "numba": __import__("numba").__version__,
        "numpy": np.__version__,
    }


def run(hands: int = 200_000, repeats: int = 5) -> dict:
    figures = {
        "core_hands_per_s": core_hands_per_s("standard", hands, repeats),
        "core_hands_per_s_all_cores": core_hands_per_s_all_cores("standard", hands, max(3, repeats // 2)),
        "replay_records_per_s": replay_records_per_s(),
    }
    for preset in ("micro", "three_player", "seed001"):
        figures[f"core_hands_per_s_{preset}"] = core_hands_per_s(preset, hands // 4, 3)
    figures.update(compile_and_import_s())
    figures["machine"] = machine()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = run(args.hands, args.repeats)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            if key != "machine":
                print(f"{key:34s} {value:>14,.3f}" if value is not None else f"{key:34s} (no records file)")
        print("machine: " + json.dumps(figures["machine"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
