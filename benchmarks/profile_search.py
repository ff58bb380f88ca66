"""Where a decision of ``search`` and of ``champion`` goes: ``python -m tiengow.benchmarks.profile_search``.

On 40 decisions of expert play with several legal actions (``search_bench.decision_positions``),
one core, CPU time, the best of ``--passes`` passes over the positions:

1. Each bot's milliseconds per decision, and its rollouts per decision as its own searches count
   them (``Workspace.rollouts``): the search's cost per rollout.
2. The parts of ``champion``'s decision, each timed where the bot calls it: the prior's network
   (``PolicyPrior.bonus``), the locator's network (``Locator.logits``), the particles drawn from
   its belief (``located_worlds``; records before issue 49's exact draw timed uniform particles,
   ``sample_worlds``, and their weights, ``location_log_weights``), and the search's call
   (``pimc_extended_details``; records before issue 49's extended PIMC timed ``pimc_details``).
3. The kernels inside the PIMC kernel, timed in compiled loops over worlds drawn at the same
   positions: drawing a world (``deal_world_with``, as ``pimc_values`` draws them); one rollout
   as ``search`` plays it (``rollout``: the action, then ``finish_world`` with a uniformly random
   action at each decision with probability 0.5, else greedy); the same all greedy and all
   random; and the core's random playout of the same worlds (``random_playout``) beside them.
   What the PIMC kernel spends beyond draws and rollouts is its own bookkeeping (halving rounds,
   ranking, sums).
4. What ``champion`` draws its worlds from, drawn exactly from the locator's belief and, as the
   champion before issue 49's exact draw, 512 uniform worlds weighed by it
   (``champion:particles=512:exact=0``): the median and least effective sample size of the
   particles' weights over the positions (1 / sum of the squared normalised weights: all the
   particles when drawn exactly), and the distinct worlds among 1,200 drawn from them by weight,
   with replacement, as the search kernel draws (the champion's 1,200 worlds an action).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable, Iterator

import numpy as np
from numba import njit

from tiengow.agents.infra import atomic_write
from tiengow_env import _kernels as K
from tiengow_env import _search_kernels as SK
from tiengow_env import search as S
from tiengow_env.layout import legal_len
from tiengow_env.state import STATE_LEN

from .core import machine
from .search_bench import decision_positions

SEARCH_EPSILON = 0.5  # agents/search.py make_search: epsilon=0.5, halving
WORLDS_PER_POSITION = 64


@njit(cache=True)
def _draws(state, seat, face_up, table, rules, rng, count, out):
    bits = np.empty(32, dtype=np.int64)
    for _ in range(count):
        SK.deal_world_with(state, seat, face_up, table, rules, rng, bits, out)


@njit(cache=True)
def _rollouts(worlds, actions, epsilon, table, rules, rng, scratch, child):
    """Each world with each action, finished as the search finishes it; returns the rollouts."""
    for w in range(worlds.shape[0]):
        for a in range(actions.shape[0]):
            SK.rollout(worlds[w], actions[a], 0, epsilon, table, rules, rng, scratch, child)
    return worlds.shape[0] * actions.shape[0]


@njit(cache=True)
def _playouts(worlds, actions, table, rules, rng, scratch, child):
    """The same, each finished by the core's uniformly random playout."""
    for w in range(worlds.shape[0]):
        for a in range(actions.shape[0]):
            child[:] = worlds[w]
            K.step(child, actions[a], table, rules)
            K.random_playout(child, table, rules, rng, scratch)
    return worlds.shape[0] * actions.shape[0]


def _best(run: Callable[[], object], passes: int) -> float:
    """The least CPU seconds of ``passes`` calls of ``run`` (after one untimed call)."""
    run()
    best = float("inf")
    for _ in range(passes):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def bot_costs(spec: str, games: list, passes: int) -> dict[str, float]:
    """Milliseconds and rollouts per decision of bot ``spec``, and microseconds per rollout."""
    from tiengow.agents.base import make_agent

    bot = make_agent(spec)
    bot.search(games[0], 0)  # compile and load
    before = bot.workspace.rollouts
    for seed, game in enumerate(games):
        bot.search(game, seed)
    rollouts = (bot.workspace.rollouts - before) / len(games)
    seconds = _best(lambda: [bot.search(game, seed) for seed, game in enumerate(games)], passes) / len(games)
    return {
        "ms_per_decision": 1e3 * seconds,
        "rollouts_per_decision": rollouts,
        "us_per_rollout": 1e6 * seconds / rollouts,
    }


@contextlib.contextmanager
def _timed(owner: object, name: str, spent: dict[str, float], label: str) -> Iterator[None]:
    """Add the CPU time of every call of ``owner.name`` to ``spent[label]`` while open."""
    original = getattr(owner, name)

    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - start

    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, original)


def champion_parts(games: list) -> dict[str, float]:
    """Milliseconds per decision of each part of ``champion``'s decision (module docstring)."""
    from tiengow.agents import search as bots
    from tiengow.agents.base import make_agent

    bot = make_agent("champion")
    bot.search(games[0], 0)
    spent: dict[str, float] = {}
    with contextlib.ExitStack() as stack:
        stack.enter_context(_timed(bot.prior, "bonus", spent, "prior network (log pi of the legal actions)"))
        stack.enter_context(_timed(bots, "sample_worlds", spent, "particles (sample_worlds)"))
        stack.enter_context(_timed(bots, "located_worlds", spent, "particles (located_worlds)"))
        stack.enter_context(_timed(bot.sampler.locator, "logits", spent, "locator network (Locator.logits)"))
        stack.enter_context(_timed(bots, "location_log_weights", spent, "locator weights (location_log_weights)"))
        stack.enter_context(_timed(bots, "pimc_extended_details", spent, "extended PIMC (pimc_extended_details)"))
        start = time.process_time()
        for seed, game in enumerate(games):
            bot.search(game, seed)
        total = time.process_time() - start
    parts = {label: 1e3 * seconds / len(games) for label, seconds in spent.items()}
    parts["rest (observation, thread-pool limit, Python)"] = 1e3 * total / len(games) - sum(parts.values())
    parts["total"] = 1e3 * total / len(games)
    return parts


def world_draws(games: list, draws: int = 1200) -> dict[str, dict[str, float]]:
    """The effective particles and distinct draws of each way ``champion`` draws its worlds
    (module docstring, 4)."""
    from tiengow.agents.base import make_agent

    figures = {}
    for spec in ("champion", "champion:particles=512:exact=0"):
        bot = make_agent(spec)
        rng = np.random.default_rng(0)
        effective, distinct = [], []
        for seed, game in enumerate(games):
            worlds = bot.sampler.worlds(game, seed, bot.workspace)
            if worlds is None:  # nothing for the locator to read
                continue
            weights = worlds[1] / worlds[1].sum()
            effective.append(1.0 / np.sum(weights**2))
            distinct.append(len(np.unique(rng.choice(len(weights), size=draws, p=weights))))
        figures[spec] = {
            "effective_particles_median": float(np.median(effective)),
            "effective_particles_least": float(np.min(effective)),
            "distinct_of_1200_draws_median": float(np.median(distinct)),
            "distinct_of_1200_draws_least": float(np.min(distinct)),
        }
    return figures


def kernel_parts(games: list, passes: int) -> dict[str, float]:
    """Microseconds per call of the kernels inside ``search``'s PIMC (module docstring)."""
    tables = S.Workspace(games[0].rules).tables
    table, rules, face_up = tables.table, tables.rules, tables.face_up
    scratch = np.zeros(legal_len(table.shape[0]), dtype=np.int64)
    child = np.zeros(STATE_LEN, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, np.uint64(1))
    prepared = []
    for game in games:
        worlds = np.zeros((WORLDS_PER_POSITION, STATE_LEN), dtype=np.int64)
        for w in range(WORLDS_PER_POSITION):
            SK.deal_world(game.state, game.to_act, face_up, table, rules, rng, worlds[w])
        prepared.append((game, worlds, np.array(game.legal_actions(), dtype=np.int64)))
    rollouts = sum(len(worlds) * len(actions) for _, worlds, actions in prepared)

    def per_rollout(epsilon: float) -> float:
        def run() -> None:
            for _, worlds, actions in prepared:
                _rollouts(worlds, actions, epsilon, table, rules, rng, scratch, child)

        return 1e6 * _best(run, passes) / rollouts

    def draws() -> None:
        for game, _, _ in prepared:
            _draws(game.state, game.to_act, face_up, table, rules, rng, WORLDS_PER_POSITION, child)

    def playouts() -> None:
        for _, worlds, actions in prepared:
            _playouts(worlds, actions, table, rules, rng, scratch, child)

    return {
        "draw_world_us": 1e6 * _best(draws, passes) / (len(prepared) * WORLDS_PER_POSITION),
        "rollout_us_search": per_rollout(SEARCH_EPSILON),
        "rollout_us_greedy": per_rollout(0.0),
        "rollout_us_random": per_rollout(1.0),
        "random_playout_us": 1e6 * _best(playouts, passes) / rollouts,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=40, help="positions to time (40)")
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the positions; the best counts (3)")
    parser.add_argument("--save", metavar="PATH", help="also write the figures to PATH (JSON)")
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.passes < 1:
        parser.error(f"--decisions and --passes must be at least 1, got {args.decisions} and {args.passes}")
    games = decision_positions(args.decisions)
    command = (
        "python -m tiengow.benchmarks.profile_search"
        + "".join(
            f" --{name} {value}"
            for name, value, default in (("decisions", args.decisions, 40), ("passes", args.passes, 3))
            if value != default
        )
        + (f" --save {args.save}" if args.save else "")
    )
    figures = {
        "search": bot_costs("search", games, args.passes),
        "champion": bot_costs("champion", games, args.passes),
        "champion_parts_ms": champion_parts(games),
        "kernels": kernel_parts(games, args.passes),
        "worlds": world_draws(games),
        "machine": machine(),
        "command": command,
    }
    text = json.dumps(figures, indent=1)
    if args.save:
        atomic_write(args.save, lambda f: f.write((text + "\n").encode()))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
