"""Duplicate evaluation (``tiengow eval``) and round-robin leagues (``tiengow league``).

Duplicate format: every seeded deal is played once per seat, with the candidate in that seat
and copies of the opponent in the others, so that the luck of the deal cancels. A deal's
score is the candidate's mean chips over its seatings; the 95% confidence interval is taken
over deals (normal approximation, ``mean ± 1.96 sd / sqrt(N)``).

Results depend only on the seed and the agents: each deal and each agent's randomness are
seeded from ``(seed, deal, seating, seat)``, whatever the number of workers.
"""
from __future__ import annotations

import itertools
import json
import math
import multiprocessing as mp
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

from .base import Agent, make_agent
from .infra import connect_ray

CHUNK = 25  # deals per task sent to a worker


def deal_seed(seed: int, deal: int) -> int:
    return int(np.random.SeedSequence([seed, deal]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def play_hand(game: Game, agents: list[Agent], seed: int) -> Game:
    """Play ``game`` to its end with one agent per seat; returns the game."""
    for seat, agent in enumerate(agents):
        agent.reset(int(np.random.SeedSequence([seed, seat]).generate_state(1)[0]))
    while not game.is_over:
        agent = agents[game.to_act]
        observation, mask = game.observe()
        action = agent.act(observation, mask, game=game if agent.uses_game else None)
        game.step(action)
    return game


def play_deals(candidate: Agent, opponents: list[Agent], rules: RuleSet, seed: int, first: int,
               last: int) -> np.ndarray:
    """Deals ``first .. last - 1``, each played once per seat by ``candidate`` against
    ``opponents`` (one per seat). Rows per (deal, seating): candidate chips, columns, last-trick
    win, then chips per seat."""
    players = rules.players
    rows = np.zeros((last - first, players, 3 + players), dtype=np.float64)
    for d in range(first, last):
        for seat in range(players):
            agents = [candidate if s == seat else opponents[s] for s in range(players)]
            game = play_hand(Game(seed=deal_seed(seed, d), rules=rules), agents, deal_seed(seed, d) + seat)
            result = game.result()
            rows[d - first, seat, 0] = result["net"][seat]
            rows[d - first, seat, 1] = result["columns"][seat]
            rows[d - first, seat, 2] = result["last_trick_winner"] == seat
            rows[d - first, seat, 3:] = result["net"]
    return rows


def mean_and_half_width(per_deal: np.ndarray) -> tuple[float, float]:
    """Mean of the per-deal scores and the half-width of its normal 95% interval."""
    deals = len(per_deal)
    half = 1.96 * float(per_deal.std(ddof=1)) / math.sqrt(deals) if deals > 1 else float("inf")
    return float(per_deal.mean()), half


def _play_deals(args: tuple[str, str, dict, int, int, int]) -> np.ndarray:
    """``play_deals`` as a task: agents given by spec, so that a worker process can build them."""
    candidate_spec, opponent_spec, rules_spec, seed, first, last = args
    rules = RuleSet.from_spec(rules_spec)
    opponents = [make_agent(opponent_spec, rules) for _ in range(rules.players)]
    return play_deals(make_agent(candidate_spec, rules), opponents, rules, seed, first, last)


@dataclass
class EvalResult:
    candidate: str
    opponent: str
    deals: int
    hands: int
    chips_per_hand: float
    ci95: list[float]
    columns_per_hand: float
    last_trick_rate: float
    chips_by_seat: list[float]
    rules: str
    seed: int

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def evaluate(candidate: str, opponent: str, deals: int, seed: int = 0, rules: object = "standard",
             workers: int = 1, progress: Callable[[int], None] | None = None,
             ray_address: str | None = None) -> EvalResult:
    """Duplicate evaluation of ``candidate`` against ``opponent`` (module doc).

    ``workers > 1`` runs chunks of deals in local processes; ``ray_address`` runs them as Ray
    tasks instead ("local" starts a Ray instance here, anything else is a cluster address).
    Either way each chunk is a pure function of its deals, so the result is the same.
    """
    ruleset = RuleSet.from_spec(rules)
    if type(deals) is not int or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    make_agent(candidate, ruleset)  # refuse a bad spec before starting any worker
    make_agent(opponent, ruleset)
    spec = ruleset.switches()
    tasks = [(candidate, opponent, spec, seed, lo, min(lo + CHUNK, deals)) for lo in range(0, deals, CHUNK)]
    parts = []
    if ray_address is not None:
        parts = _run_on_ray(tasks, ray_address, progress)
    elif workers > 1:
        with mp.get_context("spawn").Pool(workers) as pool:
            for rows in pool.imap(_play_deals, tasks):
                parts.append(rows)
                if progress:
                    progress(len(rows))
    else:
        for task in tasks:
            parts.append(_play_deals(task))
            if progress:
                progress(len(parts[-1]))
    rows = np.concatenate(parts)  # (deals, seatings, fields)
    mean, half = mean_and_half_width(rows[:, :, 0].mean(axis=1))
    return EvalResult(candidate=candidate, opponent=opponent, deals=deals, hands=deals * ruleset.players,
                      chips_per_hand=mean, ci95=[mean - half, mean + half],
                      columns_per_hand=float(rows[:, :, 1].mean()), last_trick_rate=float(rows[:, :, 2].mean()),
                      chips_by_seat=[float(v) for v in rows[:, :, 3:].mean(axis=(0, 1))],
                      rules=ruleset.name, seed=seed)


def _run_on_ray(tasks: list[tuple], address: str, progress: Callable[[int], None] | None) -> list[np.ndarray]:
    """Chunks as Ray tasks, collected as they finish and put back in deal order. A task that
    fails (its worker died, or it raised) is run again by Ray, up to 3 times; since results are
    kept by chunk index, no deal is lost or counted twice."""
    ray = connect_ray(address)
    remote = ray.remote(max_retries=3, retry_exceptions=True)(_play_deals)
    pending = {remote.remote(task): i for i, task in enumerate(tasks)}
    parts: list[np.ndarray | None] = [None] * len(tasks)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        rows = ray.get(done[0])
        parts[pending.pop(done[0])] = rows
        if progress:
            progress(len(rows))
    return parts


def league(agents: list[str], deals: int, seed: int = 0, rules: object = "standard", workers: int = 1,
           progress: Callable[[int], None] | None = None, ray_address: str | None = None) -> dict:
    """Every ordered pair through ``evaluate``: cross table (row candidate, column opponent) and a
    ranking by mean chips per hand over all opponents."""
    if len(agents) < 2 or len(set(agents)) != len(agents):
        raise ValueError(f"a league needs at least two different agents, got {agents}")
    table = {a: {} for a in agents}
    results = []
    for a, b in itertools.permutations(agents, 2):
        result = evaluate(a, b, deals, seed, rules, workers, progress, ray_address)
        table[a][b] = result.chips_per_hand
        results.append(asdict(result))
    score = {a: float(np.mean(list(table[a].values()))) for a in agents}
    ranking = sorted(agents, key=lambda a: -score[a])
    return {"agents": agents, "deals": deals, "seed": seed, "cross_table": table,
            "ranking": [{"agent": a, "mean_chips_per_hand": score[a]} for a in ranking], "matches": results}


def heat_map(league_result: dict, path: str) -> None:
    """Write the cross table as a PNG heat map (needs matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("the heat map needs matplotlib: pip install matplotlib (or the [dev] extra)") from None
    agents = league_result["agents"]
    grid = np.array([[league_result["cross_table"][a].get(b, np.nan) for b in agents] for a in agents])
    bound = np.nanmax(np.abs(grid)) or 1.0
    fig, ax = plt.subplots(figsize=(1.2 * len(agents) + 2, 1.0 * len(agents) + 1.5))
    image = ax.imshow(grid, cmap="RdBu", vmin=-bound, vmax=bound)
    ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right")
    ax.set_yticks(range(len(agents)), agents)
    ax.set_xlabel("opponent (three copies)")
    ax.set_ylabel("candidate")
    for i, j in itertools.product(range(len(agents)), repeat=2):
        if i != j:
            ax.text(j, i, f"{grid[i, j]:+.2f}", ha="center", va="center", fontsize=9)
    fig.colorbar(image, ax=ax, label="candidate chips per hand (duplicate)")
    ax.set_title(f"tiengow league: {league_result['deals']} deals per match")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
