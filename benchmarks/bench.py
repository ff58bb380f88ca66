"""``tiengow bench``: every throughput figure of the platform, and the peers', in one run.

Each figure is measured after a warm-up, as the median of several timed runs, on one core
unless its name says otherwise. Steps are decisions (the environments' actions) taken with
uniformly random legal actions. ``--json`` prints one JSON object; every run also writes its
figures as ``PATH.json`` and the table as ``PATH.md``: ``runs/bench/DATE-TIME/bench`` by
default, and the committed ``benchmarks/results/latest`` (the table the README shows) only
when asked, with ``--save benchmarks/results/latest``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np

from tiengow.agents.infra import atomic_write

from . import core, game_api, peers, search_bench
from .peers import _rate


def aec_steps_per_s(seconds: float, repeats: int, raw: bool = False) -> float:
    """AEC loop with random legal actions: ``env()`` (PettingZoo's protections, built in) or ``raw_env``."""
    from tiengow_env import tiengow_v0

    env = tiengow_v0.raw_env() if raw else tiengow_v0.env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def some_steps() -> int:
        for _ in range(1000):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
            else:
                legal = np.flatnonzero(env.observe(agent)["action_mask"])
                env.step(int(legal[rng.integers(len(legal))]))
            if not env.agents:
                env.reset()
        return 1000

    return _rate(some_steps, seconds, repeats)


def gym_steps_per_s(seconds: float, repeats: int) -> float:
    """Steps of the learning seat (random opponents move inside each step)."""
    import gymnasium as gym

    import tiengow_env  # noqa: F401  (registers TienGow-v0)

    env = gym.make("TienGow-v0")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    state = {"info": info}

    def some_steps() -> int:
        for _ in range(1000):
            legal = np.flatnonzero(state["info"]["action_mask"])
            action = int(legal[rng.integers(len(legal))])
            _, _, terminated, truncated, state["info"] = env.step(action)
            if terminated or truncated:
                _, state["info"] = env.reset()
        return 1000

    return _rate(some_steps, seconds, repeats)


def vector_steps_per_s(num_envs: int, seconds: float, repeats: int) -> float:
    """Env steps per second (num_envs per call), random legal actions drawn in compiled code."""
    from tiengow_env import VectorEnv

    env = VectorEnv(num_envs, seed=0)
    actions = np.zeros(num_envs, dtype=np.int64)

    def one_call() -> int:
        env.random_actions(actions)
        env.step(actions)
        return num_envs

    return _rate(one_call, seconds, repeats)


def memory_bytes() -> dict[str, float]:
    from tiengow_env import VectorEnv

    env = VectorEnv(1024, seed=0)
    per_env = sum(v.nbytes for v in vars(env).values() if isinstance(v, np.ndarray) and v.shape[:1] == (1024,))
    return {"bytes_per_game_state": env.states[0].nbytes, "bytes_per_vector_slot": per_env / 1024}


def jobs(quick: bool = False, with_peers: bool = False) -> list[tuple[str, Callable[[], object]]]:
    """The measurements, by name, in the order they run; with the peers, the Game API's take
    turns with OpenSpiel's Python API (game_api.py)."""
    seconds, repeats = (0.5, 3) if quick else (2.0, 5)
    hands = 50_000 if quick else 200_000
    return [
        ("core_hands_per_s", lambda: core.core_hands_per_s("standard", hands, repeats)),
        ("core_hands_per_s_all_cores", lambda: core.core_hands_per_s_all_cores("standard", hands, 3)),
        (
            "game_api",
            lambda: dict(zip(("figures", "peers", "peers_skipped"), game_api.measure(seconds, repeats, with_peers))),
        ),
        ("aec_steps_per_s", lambda: aec_steps_per_s(seconds, repeats)),
        ("aec_raw_steps_per_s", lambda: aec_steps_per_s(seconds, repeats, raw=True)),
        ("gym_steps_per_s", lambda: gym_steps_per_s(seconds, repeats)),
        *[
            (f"vector_steps_per_s_{n}", lambda n=n: vector_steps_per_s(n, seconds, repeats))
            for n in (1, 64, 1024, 4096)
        ],
        ("replay_records_per_s", lambda: core.replay_records_per_s(repeats=repeats)),
        ("compile_and_import", core.compile_and_import_s),
        ("memory", memory_bytes),
        ("search", lambda: search_bench.search_figures(seconds, repeats)),
    ]


def check_only(only: str | None) -> None:
    """ValueError listing the measurements when ``--only NAME`` matches none of them."""
    names = [name for name, _ in jobs()]
    if only is not None and not any(only in name for name in names):
        raise ValueError(f"--only {only!r} matches no measurement; names are: {', '.join(names)}")


def measure(
    quick: bool = False, with_peers: bool = False, only: str | None = None, log: Callable[[str], None] = print
) -> dict:
    """Run the measurements (those whose name contains ``only``), then the peers if asked."""
    check_only(only)
    seconds, repeats = (0.5, 3) if quick else (2.0, 5)
    figures: dict = {}
    theirs: dict[str, float] = {}
    skipped: dict[str, str] = {}
    for name, job in jobs(quick, with_peers):
        if only and only not in name:
            continue
        log(f"measuring {name} ...")
        value = job()
        if name == "game_api":
            figures.update(value["figures"])
            theirs.update(value["peers"])
            skipped.update(value["peers_skipped"])
        else:
            figures.update(value if isinstance(value, dict) else {name: value})
    if with_peers:
        log("measuring peers ...")
        more, more_skipped = peers.measure(seconds, repeats)
        figures["peers"], figures["peers_skipped"] = {**more, **theirs}, {**more_skipped, **skipped}
        figures["ratios"] = ratios(figures)
    figures["machine"] = core.machine()
    figures["command"] = (
        "tiengow bench"
        + (" --quick" if quick else "")
        + (" --peers" if with_peers else "")
        + (f" --only {only}" if only else "")
    )
    return figures


RATIOS = {  # name: (our figure, their figure, target)
    "core_vs_openspiel_oh_hell_cpp": ("core_hands_per_s", "openspiel_oh_hell_cpp_games_per_s", 10),
    "core_vs_openspiel_hearts_cpp": ("core_hands_per_s", "openspiel_hearts_cpp_games_per_s", None),
    "aec_vs_pettingzoo_leduc_aec": ("aec_steps_per_s", "pettingzoo_leduc_aec_steps_per_s", 4),
    "aec_raw_vs_pettingzoo_leduc_raw": ("aec_raw_steps_per_s", "pettingzoo_leduc_raw_steps_per_s", 4),
    "game_api_vs_openspiel_oh_hell_python_loop": ("game_api_steps_per_s", "openspiel_oh_hell_python_steps_per_s", 2),
    "game_api_vs_openspiel_oh_hell_python_decisions": (
        "game_api_decision_steps_per_s",
        "openspiel_oh_hell_python_decision_steps_per_s",
        None,
    ),
    "game_api_clone_vs_openspiel_oh_hell_python_clone": (
        "game_api_clone_per_s",
        "openspiel_oh_hell_python_clone_per_s",
        None,
    ),
    "core_vs_rlcard_doudizhu": ("core_hands_per_s", "rlcard_doudizhu_games_per_s", None),
    "vector_4096_vs_aec": ("vector_steps_per_s_4096", "aec_steps_per_s", 30),
    "python_tiengow_vs_python_block_dominoes": (
        "openspiel_python_tiengow_steps_per_s",
        "openspiel_python_block_dominoes_steps_per_s",
        None,
    ),
}


def ratios(figures: dict) -> dict[str, float]:
    mine = dict(figures, **figures.get("peers", {}))
    return {
        name: mine[ours] / mine[theirs]
        for name, (ours, theirs, _) in RATIOS.items()
        if mine.get(ours) and mine.get(theirs)
    }


def table(figures: dict) -> str:
    """Markdown table of every figure, then the ratios with their targets."""
    lines = ["| figure | value |", "|---|---:|"]
    for key, value in figures.items():
        if isinstance(value, (int, float)):
            lines.append(f"| {key} | {value:,.3f} |" if value < 100 else f"| {key} | {value:,.0f} |")
    for key, value in figures.get("peers", {}).items():
        lines.append(f"| peer: {key} | {value:,.0f} |")
    for key, reason in figures.get("peers_skipped", {}).items():
        lines.append(f"| peer: {key} | skipped: {reason} |")
    if figures.get("ratios"):
        lines += ["", "| ratio (ours / theirs) | value | target |", "|---|---:|---:|"]
        for key, value in figures["ratios"].items():
            target = RATIOS[key][2]
            lines.append(f"| {key} | {value:,.1f}x | {f'>= {target}x' if target else ''} |")
    return "\n".join(lines)


def save(figures: dict, path: str) -> None:
    """Write ``path.json`` (every figure and the machine) and ``path.md`` (the table, headed by the
    command and the machine), each atomically."""
    machine = figures["machine"]
    heading = f"`{figures['command']}` on {machine['processor']}, {machine['cores']} cores, Python {machine['python']}"
    atomic_write(path + ".json", lambda f: f.write((json.dumps(figures, indent=1) + "\n").encode()))
    atomic_write(path + ".md", lambda f: f.write(f"{heading}\n\n{table(figures)}\n".encode()))
