"""Wall time of one duplicate evaluation locally and on Ray: ``python -m tiengow.benchmarks.ray_eval``.

    python -m tiengow.benchmarks.ray_eval [--deals N] [--candidate expert] [--opponent greedy]

Runs the same evaluation (same seed, so the same result) in one process, in two local
processes, and on a local Ray instance with 1 and then 2 CPUs, after a warm-up each.
"""

from __future__ import annotations

import argparse
import json
import time

from tiengow.agents.arena import evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--candidate", default="expert")
    parser.add_argument("--opponent", default="greedy")
    args = parser.parse_args()

    def seconds(**options) -> float:
        evaluate(args.candidate, args.opponent, deals=4, seed=1, **options)  # warm-up
        start = time.perf_counter()
        evaluate(args.candidate, args.opponent, deals=args.deals, seed=1, **options)
        return time.perf_counter() - start

    figures = {"deals": args.deals, "local_1_process_s": seconds(), "local_2_processes_s": seconds(workers=2)}
    import ray

    for cpus in (1, 2):
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        figures[f"ray_{cpus}_cpus_s"] = seconds(ray_address="local")
        ray.shutdown()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
