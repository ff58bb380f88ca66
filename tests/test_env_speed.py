"""Environment throughput, measured by a script (not a timed test: the figures depend on the
machine and on what else runs on it).

    NUMBA_NUM_THREADS=1 taskset -c 0 python tests/test_env_speed.py

prints the steps per second of the AEC env (``raw_env`` and ``env()``) with
random legal actions chosen in Python, of the Gymnasium env against random opponents, and of
``VectorEnv`` at N = 4096 with random legal actions drawn in compiled code. Three figures
each: steps per second of CPU time used by this process over the whole run (what one core
delivers, even while other processes share the machine), then the best and the median of
many short wall-clock windows.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from tiengow_env import tiengow_v0
from tiengow_env.gym_env import TienGowEnv
from tiengow_env.vector import VectorEnv


def windows(run, steps_per_window: int, count: int) -> tuple[float, float, float]:
    """(per CPU second, best, median wall-clock window) steps per second over ``count``
    windows of ``run()``."""
    rates = []
    cpu = time.process_time()
    for _ in range(count):
        start = time.perf_counter()
        run()
        rates.append(steps_per_window / (time.perf_counter() - start))
    cpu = time.process_time() - cpu
    return steps_per_window * count / cpu, max(rates), float(np.median(rates))


def aec_runner(make, steps: int, seed: int = 0):
    env = make()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def run():
        done = 0
        while done < steps:
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            done += 1

    return run


def gym_runner(steps: int):
    env = TienGowEnv()
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    state = {"info": info}

    def run():
        for _ in range(steps):
            legal = np.flatnonzero(state["info"]["action_mask"])
            obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
            if terminated:
                obs, info = env.reset()
            state["info"] = info

    return run


def vector_runner(num_envs: int, rules: str, vector_steps: int):
    venv = VectorEnv(num_envs, rules=rules, seed=0)
    actions = np.empty(num_envs, dtype=np.int64)

    def run():
        for _ in range(vector_steps):
            venv.step(venv.random_actions(actions))

    return run


def main(scale: float = 1.0) -> dict[str, tuple[float, float, float]]:
    figures = {}
    steps = max(1, int(5000 * scale))
    for name, make in (("AEC raw_env", tiengow_v0.raw_env), ("AEC env()", tiengow_v0.env)):
        run = aec_runner(make, steps)
        run()
        figures[name] = windows(run, steps, max(1, int(20 * scale)))
    run = gym_runner(steps)
    run()
    figures["Gymnasium TienGowEnv (3 random opponents; learner steps)"] = windows(run, steps, max(1, int(10 * scale)))
    num_envs = 4096 if scale >= 1 else 64
    for rules in ("standard", "three_player", "micro", "seed001"):
        run = vector_runner(num_envs, rules, 5)
        run()
        figures[f"VectorEnv N={num_envs} {rules}"] = windows(run, 5 * num_envs, max(1, int(100 * scale)))
    print(f"{'':58s} {'per CPU s':>12s} {'best window':>12s} {'median':>12s}")
    for name, (per_cpu, best, median) in figures.items():
        print(f"{name:58s} {per_cpu:>12,.0f} {best:>12,.0f} {median:>12,.0f}")
    return figures


@pytest.mark.slow
def test_speed_script_runs():
    figures = main(scale=0.01)
    assert all(min(rates) > 0 for rates in figures.values())


if __name__ == "__main__":
    main()
