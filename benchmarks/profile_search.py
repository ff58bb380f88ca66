"""Where a decision of ``search`` and of ``champion`` goes: ``python -m tiengow.benchmarks.profile_search``.

On 40 decisions of expert play with several legal actions (``search_bench.decision_positions``),
one core, wall-clock time:

1. Each bot's milliseconds per decision, and its rollouts per decision as its own searches count
   them (``Workspace.rollouts``): the search's cost per rollout.
2. The parts of ``champion``'s decision outside the PIMC kernel, each timed where the bot calls
   it: the prior's network (``_log_policy``), the particles (``sample_worlds``), the locator's
   network (``Locator.logits``), its weights (``location_log_weights``), and the PIMC call.
3. The parts inside the PIMC kernel, by timing the kernels it calls, in compiled loops over
   the same positions: drawing a world (``draw_world``, the determinization); one rollout as
   ``search`` plays it (the action, then ``finish_world``: greedy with a uniformly random action
   at each decision with probability 0.5); the same rollout all greedy and all random; and the
   core's random playout of the same worlds (``random_playout``) for comparison. What the kernel
   spends beyond worlds x draw + rollouts x rollout is its own bookkeeping (halving rounds,
   copies, sums).
4. What the speed-up plan of PROFILE.md would give, measured on the same worlds: the rollout
   loop of ``finish_world`` (endgame 0, as ``search`` plays it) compiled without reference
   counting (``_nrt=False``), and then with the greedy choice made from the legal actions the
   loop has listed anyway (one ``legal_actions`` a decision instead of two). These two
   prototypes draw the same random numbers in the same order as ``finish_world``; they are
   here to measure the plan, and go when the search kernels adopt it.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator

import numpy as np
from numba import njit

from tiengow.agents.infra import atomic_write
from tiengow_env import _kernels as K
from tiengow_env import _policy_kernels as PK
from tiengow_env import _search_kernels as SK
from tiengow_env import search as S
from tiengow_env.layout import PHASE_LEAD, PHASE_OVER, S_LEN, S_PHASE, S_TO_ACT, legal_len

from .core import machine
from .search_bench import decision_positions

SEARCH_EPSILON = 0.5  # agents/pimc.py SEARCH: epsilon=0.5:halving=1, greedy rollouts


@njit(cache=True)
def _draws(state, seat, events, keep, face_up, table, rules, rng, count, out):
    for _ in range(count):
        SK.draw_world(state, seat, events, keep, face_up, table, rules, rng, out)


@njit(cache=True)
def _rollouts(worlds, actions, policy, epsilons, face_up, singles, table, rules, rng, scratch, solver, child):
    """Each world with each action, finished as the search finishes it; returns the rollouts."""
    done = 0
    for w in range(worlds.shape[0]):
        for a in range(actions.shape[0]):
            child[:] = worlds[w]
            K.step(child, actions[a], table, rules)
            SK.finish_world(child, policy, epsilons, False, 0, 0, face_up, singles, table, rules, rng, scratch, solver,
                            0)
            done += 1
    return done


@njit(cache=True)
def _playouts(worlds, actions, table, rules, rng, scratch, child):
    """The same, each finished by the core's uniformly random playout."""
    done = 0
    for w in range(worlds.shape[0]):
        for a in range(actions.shape[0]):
            child[:] = worlds[w]
            K.step(child, actions[a], table, rules)
            K.random_playout(child, table, rules, rng, scratch)
            done += 1
    return done


@njit(cache=True, _nrt=False)
def _finish_without_refcounts(state, policy, epsilons, face_up, singles, table, rules, rng, scratch):
    """Prototype: ``finish_world``'s loop for endgame 0 and no greedy_end, compiled without
    reference counting (``_kernels``' step 7)."""
    while state[S_PHASE] != PHASE_OVER:
        threshold = np.int64(epsilons[state[S_TO_ACT]] * SK.EPSILON_UNIT)
        if threshold > 0 and K.rand_below(rng, SK.EPSILON_UNIT) < threshold:
            n = K.legal_actions(state, table, rules, scratch)
            action = scratch[K.rand_below(rng, n)]
        else:
            action = PK.policy_action(state, policy, face_up, singles, table, rules, rng, scratch)
        K.step(state, action, table, rules)


@njit(cache=True, _nrt=False)
def _finish_greedy_listed(state, epsilons, table, rules, rng, scratch):
    """Prototype: the same for the greedy policy, its choice made from the one list of legal
    actions of each decision."""
    while state[S_PHASE] != PHASE_OVER:
        threshold = np.int64(epsilons[state[S_TO_ACT]] * SK.EPSILON_UNIT)
        n = K.legal_actions(state, table, rules, scratch)
        if threshold > 0 and K.rand_below(rng, SK.EPSILON_UNIT) < threshold:
            action = scratch[K.rand_below(rng, n)]
        else:
            action = K.greedy_choice(scratch, n, state[S_PHASE] == PHASE_LEAD, table, rules)
        K.step(state, action, table, rules)


@njit(cache=True)
def _prototype_rollouts(worlds, actions, listed, policy, epsilons, face_up, singles, table, rules, rng, scratch,
                        child):
    done = 0
    for w in range(worlds.shape[0]):
        for a in range(actions.shape[0]):
            child[:] = worlds[w]
            K.step(child, actions[a], table, rules)
            if listed:
                _finish_greedy_listed(child, epsilons, table, rules, rng, scratch)
            else:
                _finish_without_refcounts(child, policy, epsilons, face_up, singles, table, rules, rng, scratch)
            done += 1
    return done


def bot_costs(spec: str, games: list) -> dict[str, float]:
    """Milliseconds and rollouts per decision of bot ``spec``, and microseconds per rollout."""
    from tiengow.agents.base import make_agent
    bot = make_agent(spec)
    bot.search(games[0], 0)  # compile and load
    before, start = bot.workspace.rollouts, time.perf_counter()
    for seed, game in enumerate(games):
        bot.search(game, seed)
    elapsed = time.perf_counter() - start
    rollouts = (bot.workspace.rollouts - before) / len(games)
    return {"ms_per_decision": 1000 * elapsed / len(games), "rollouts_per_decision": rollouts,
            "us_per_rollout": 1e6 * elapsed / len(games) / rollouts}


@contextlib.contextmanager
def _timed(owner: object, name: str, spent: dict[str, float], label: str) -> Iterator[None]:
    """Time every call of ``owner.name`` into ``spent[label]`` while the context is open."""
    original = getattr(owner, name)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - start
    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, original)


def champion_parts(games: list) -> dict[str, float]:
    """Milliseconds per decision of each part of ``champion``'s decision (module docstring)."""
    from tiengow.agents import champion as champion_module
    from tiengow.agents.base import make_agent
    bot = make_agent("champion")
    bot.search(games[0], 0)
    spent: dict[str, float] = {}
    with contextlib.ExitStack() as stack:
        stack.enter_context(_timed(bot, "_log_policy", spent, "prior network (log pi of the legal actions)"))
        stack.enter_context(_timed(champion_module, "sample_worlds", spent, "particles (sample_worlds)"))
        stack.enter_context(_timed(bot.locator, "logits", spent, "locator network (Locator.logits)"))
        stack.enter_context(_timed(champion_module, "location_log_weights", spent,
                                   "locator weights (location_log_weights)"))
        stack.enter_context(_timed(bot.searcher, "search", spent, "PIMC (pimc_details)"))
        start = time.perf_counter()
        for seed, game in enumerate(games):
            bot.search(game, seed)
        total = time.perf_counter() - start
    parts = {label: 1000 * seconds / len(games) for label, seconds in spent.items()}
    parts["rest (observe, threadpool limit, Python)"] = 1000 * total / len(games) - sum(parts.values())
    parts["total"] = 1000 * total / len(games)
    return parts


def kernel_parts(games: list, worlds_per_game: int = 64) -> dict[str, float]:
    """Microseconds per call of the kernels inside ``search``'s PIMC (module docstring)."""
    workspace = S.Workspace(games[0].rules)
    table, rules = games[0].combos.table, games[0].combos.rules_array
    face_up = games[0].rules.discards_face_up
    scratch = np.zeros(legal_len(table.shape[0]), dtype=np.int64)
    child = np.zeros(S_LEN, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, np.uint64(1))
    prepared = []
    for game in games:
        events, keep = S._inference(game, 1.0)
        worlds = np.zeros((worlds_per_game, S_LEN), dtype=np.int64)
        for w in range(worlds_per_game):
            SK.draw_world(game.state, game.to_act, events, keep, face_up, table, rules, rng, worlds[w])
        prepared.append((game, events, keep, worlds, np.array(game.legal_actions(), dtype=np.int64)))
    out = np.zeros(S_LEN, dtype=np.int64)
    greedy = S.POLICIES["greedy"]

    def per_call(run, count_of) -> float:
        run(prepared[0])  # compile and load
        best = np.inf
        for _ in range(3):
            start, count = time.perf_counter(), 0
            for item in prepared:
                count += count_of(item, run(item))
            best = min(best, (time.perf_counter() - start) / count)
        return 1e6 * best

    def rollouts(epsilon: float):
        def run(item):
            game, _, _, worlds, actions = item
            epsilons = np.full(4, epsilon)
            return _rollouts(worlds, actions, greedy, epsilons, face_up, workspace.singles, table, rules, rng,
                             scratch, workspace.solver, child)
        return per_call(run, lambda item, done: done)

    draws = per_call(lambda item: _draws(item[0].state, item[0].to_act, item[1], item[2], face_up, table, rules, rng,
                                         worlds_per_game, out), lambda item, _: worlds_per_game)
    playouts = per_call(lambda item: _playouts(item[3], item[4], table, rules, rng, scratch, child),
                        lambda item, done: done)

    def prototype(listed: bool) -> float:
        epsilons = np.full(4, SEARCH_EPSILON)
        return per_call(lambda item: _prototype_rollouts(item[3], item[4], listed, greedy, epsilons, face_up,
                                                         workspace.singles, table, rules, rng, scratch, child),
                        lambda item, done: done)
    return {"draw_world_us": draws, "rollout_us_search": rollouts(SEARCH_EPSILON), "rollout_us_greedy": rollouts(0.0),
            "rollout_us_random": rollouts(1.0), "random_playout_us": playouts,
            "prototype_rollout_us_without_refcounts": prototype(False),
            "prototype_rollout_us_greedy_from_one_list": prototype(True)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=40, help="positions to time (40)")
    parser.add_argument("--save", metavar="PATH", help="also write the figures to PATH (JSON)")
    args = parser.parse_args(argv)
    if args.decisions < 1:
        parser.error(f"--decisions must be at least 1, got {args.decisions}")
    games = decision_positions(args.decisions)
    figures = {"search": bot_costs("search", games), "champion": bot_costs("champion", games),
               "champion_parts_ms": champion_parts(games), "kernels": kernel_parts(games),
               "machine": machine(), "command": "python -m tiengow.benchmarks.profile_search"
               + (f" --decisions {args.decisions}" if args.decisions != 40 else "")}
    text = json.dumps(figures, indent=1)
    if args.save:
        atomic_write(args.save, lambda f: f.write((text + "\n").encode()))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
