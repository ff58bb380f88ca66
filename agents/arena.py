"""Duplicate evaluation (``tiengow eval``) and round-robin leagues (``tiengow league``).

Duplicate format: every seeded deal is played once per seat, with the candidate in that seat
and copies of the opponent in the others, so that the luck of the deal cancels. A deal's
score is the candidate's mean chips over its seatings; the 95% confidence interval is taken
over deals (normal approximation, ``mean ± 1.96 sd / sqrt(N)``).

Results depend only on the seed and the agents, whatever the number of workers. Each deal is
seeded from ``(seed, deal)``; each agent is reset for a hand with a seed keyed by ``(seed, deal,
seating, seat)``, and before each decision its random numbers are keyed afresh by ``(seed, deal,
seating, seat, decision)`` (the decision's index in the hand): paired seeds, so that two bots that
share code (``champion`` and ``champion:locate=0``) draw the same numbers wherever their
computations coincide, however many numbers either drew before. Plugins keep their own generators.

With a sequential test (``agents/sprt.py``) the deals are played in chunks, and the test reads
the finished chunks in deal order and stops at the first deal whose evidence crosses a bound:
the verdict and the deals used do not depend on the number of workers either. Chunks not yet
started are then cancelled (on Ray, running ones too; a local worker finishes the chunk it holds).

A league ranks by a Bradley–Terry rating fitted to the duplicate deals of every match: in the
match "A against copies of B" a deal counts as a win for A when A's score on it is above zero,
a loss when below, half of each when exactly zero. The model says A wins a deal against B with
probability ``1 / (1 + 10 ** ((R_B - R_A) / 400))`` (Elo's scale, ratings centred on 0); the
ratings are the maximum-likelihood fit, with one virtual drawn deal per pair so that a match won
on every deal still has a finite rating, and 95% intervals from the inverse Fisher information.
Unlike the mean chips over all opponents, this rating is not inflated by crushing a weak agent:
what counts is how often an agent outscores each other one, head to head.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

import numpy as np

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

from .base import Agent, make_agent
from .infra import connect_ray, install_hint, json_text, worker_pool
from .sprt import Hypotheses, Sprt, SprtResult

CHUNK = 25  # deals per task sent to a worker


def deal_seed(seed: int, deal: int) -> int:
    return int(np.random.SeedSequence([seed, deal]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def play_hand(game: Game, agents: list[Agent], seed: int, clock: np.ndarray | None = None) -> Game:
    """Play ``game`` to its end with one agent per seat; returns the game. With ``clock``
    (float (seats, 2)), row s gains seat s's decisions and the CPU seconds its agent spent
    on them (this thread's CPU time, so other processes on the machine do not count)."""
    for seat, agent in enumerate(agents):
        agent.reset(int(np.random.SeedSequence([seed, seat]).generate_state(1)[0]))
    decision = 0
    while not game.is_over:
        seat = game.to_act
        agent = agents[seat]
        agent.rng = np.random.default_rng([seed, seat, decision])  # paired seeds (module doc)
        decision += 1
        observation, mask = game.observe()
        start = time.thread_time()
        action = agent.act(observation, mask, game=game if agent.uses_game else None)
        if clock is not None:
            clock[seat, 0] += 1
            clock[seat, 1] += time.thread_time() - start
        game.step(action)
    return game


_WARMED: set[str] = set()  # the candidates (by name) that have played a hand in this process


def play_deals(
    candidate: Agent, opponents: list[Agent], rules: RuleSet, seed: int, first: int, last: int
) -> np.ndarray:
    """Deals ``first .. last - 1``, each played once per seat by ``candidate`` against
    ``opponents`` (one per seat). Rows per (deal, seating): candidate chips, columns, last-trick
    win, chips per seat, then the candidate's decisions and the CPU seconds it spent on them.
    A candidate's first hand in a process is played once untimed before, so that the clock
    does not count numba compiling (or loading) its kernels: seconds, with a cold cache."""
    players = rules.players
    if candidate.name not in _WARMED:
        play_hand(Game(seed=deal_seed(seed, first), rules=rules), [candidate, *opponents[1:]], seed)
        _WARMED.add(candidate.name)
    rows = np.zeros((last - first, players, 5 + players), dtype=np.float64)
    for d in range(first, last):
        for seat in range(players):
            agents = [candidate if s == seat else opponents[s] for s in range(players)]
            clock = np.zeros((players, 2))
            game = play_hand(Game(seed=deal_seed(seed, d), rules=rules), agents, deal_seed(seed, d) + seat, clock)
            result = game.result()
            rows[d - first, seat, 0] = result["net"][seat]
            rows[d - first, seat, 1] = result["columns"][seat]
            rows[d - first, seat, 2] = result["last_trick_winner"] == seat
            rows[d - first, seat, 3 : 3 + players] = result["net"]
            rows[d - first, seat, 3 + players :] = clock[seat]
    return rows


def mean_and_half_width(per_deal: np.ndarray) -> tuple[float, float]:
    """Mean of the per-deal scores and the half-width of its normal 95% interval."""
    deals = len(per_deal)
    half = 1.96 * float(per_deal.std(ddof=1)) / math.sqrt(deals) if deals > 1 else float("inf")
    return float(per_deal.mean()), half


def _play_deals(args: tuple[tuple[str, ...], str, dict, int, int, int]) -> np.ndarray:
    """``play_deals`` as a task, for each candidate on the same deals: (candidates, deals,
    seatings, fields). Agents are given by spec, so that a worker process can build them."""
    candidate_specs, opponent_spec, rules_spec, seed, first, last = args
    rules = RuleSet.from_spec(rules_spec)
    opponents = [make_agent(opponent_spec, rules) for _ in range(rules.players)]
    return np.stack(
        [play_deals(make_agent(spec, rules), opponents, rules, seed, first, last) for spec in candidate_specs]
    )


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
    deals_won: int = 0
    """deals on which the candidate's score (its mean over the seatings) is above zero"""
    deals_lost: int = 0
    """deals on which it is below zero"""
    ms_per_decision: float = field(default=0.0, compare=False)
    """the candidate's mean CPU time per decision, one-legal-action decisions included (a
    measurement, so results that agree in every figure of play compare equal)"""
    sprt: dict | None = None
    """the sequential test of the candidate's score (``agents.sprt.SprtResult`` as a dict), or None"""

    def to_json(self) -> str:
        return json_text(asdict(self))


def evaluate(
    candidate: str,
    opponent: str,
    deals: int,
    seed: int = 0,
    rules: object = "standard",
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
    sprt: Hypotheses | None = None,
    watch: Callable[[SprtResult], None] | None = None,
) -> EvalResult:
    """Duplicate evaluation of ``candidate`` against ``opponent`` (module doc).

    ``workers > 1`` runs chunks of deals in local processes; ``ray_address`` runs them as Ray
    tasks instead ("local" starts a Ray instance here, anything else is a cluster address).
    Either way each chunk is a pure function of its deals, so the result is the same.

    With ``sprt``, ``deals`` is the most deals played: the sequential test of the candidate's
    per-deal score stops the match at its verdict, and ``watch`` sees the test after each chunk.
    """
    ruleset = _checked(deals, rules, candidate, opponent)
    test = None if sprt is None else Sprt(sprt, deals)
    rows = _play((candidate,), opponent, deals, seed, ruleset, workers, progress, ray_address, test, watch)
    return _summary(candidate, opponent, rows[0], ruleset, seed, test)


@dataclass
class Comparison:
    """Two candidates against the same opponent on the same deals: each one's ``EvalResult``,
    and the difference of their scores deal by deal with its 95% CI."""

    candidate: EvalResult
    baseline: EvalResult
    difference: float
    ci95: list[float]
    correlation: float
    """of the two candidates' per-deal scores: the higher, the narrower the paired interval"""
    sprt: dict | None = None
    """the sequential test of the difference deal by deal, or None"""

    def to_json(self) -> str:
        return json_text(asdict(self))


def compare(
    candidate: str,
    baseline: str,
    opponent: str,
    deals: int,
    seed: int = 0,
    rules: object = "standard",
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
    sprt: Hypotheses | None = None,
    watch: Callable[[SprtResult], None] | None = None,
) -> Comparison:
    """``candidate`` and ``baseline`` each evaluated against ``opponent`` on the same deals
    (the same seeds, so the opponents' own randomness is the same too), and the candidate's
    score minus the baseline's, deal by deal. The two runs share the luck of the deal, so the
    paired interval is narrower than the two separate intervals suggest: the way to tell
    whether a change to a bot helped. With ``sprt``, the sequential test is of that difference."""
    ruleset = _checked(deals, rules, candidate, opponent, baseline)
    test = None if sprt is None else Sprt(sprt, deals)
    mine, theirs = _play(
        (candidate, baseline), opponent, deals, seed, ruleset, workers, progress, ray_address, test, watch
    )
    a, b = mine[:, :, 0].mean(axis=1), theirs[:, :, 0].mean(axis=1)
    mean, half = mean_and_half_width(a - b)
    return Comparison(
        candidate=_summary(candidate, opponent, mine, ruleset, seed),
        baseline=_summary(baseline, opponent, theirs, ruleset, seed),
        difference=mean,
        ci95=[mean - half, mean + half],
        correlation=float(np.corrcoef(a, b)[0, 1]) if a.std() * b.std() > 0 else float("nan"),
        sprt=None if test is None else test.result().to_dict(),
    )


def _checked(deals: int, rules: object, *specs: str) -> RuleSet:
    """The rules, once the deal count and every spec are known to be good: before any work."""
    ruleset = RuleSet.from_spec(rules)
    if type(deals) is not int or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    for spec in specs:
        make_agent(spec, ruleset)  # refuse a bad spec before starting any worker
    return ruleset


def _play(
    candidates: tuple[str, ...],
    opponent: str,
    deals: int,
    seed: int,
    ruleset: RuleSet,
    workers: int,
    progress: Callable[[int], None] | None,
    ray_address: str | None,
    test: Sprt | None = None,
    watch: Callable[[SprtResult], None] | None = None,
) -> np.ndarray:
    """``play_deals`` rows (candidates, deals, seatings, fields) of every deal, in deal order.
    With ``test``, each finished chunk's per-deal scores (the first candidate's, or the first's
    minus the second's) are fed to it in deal order, and the deals stop at its verdict."""
    spec = ruleset.switches()
    tasks = [(candidates, opponent, spec, seed, lo, min(lo + CHUNK, deals)) for lo in range(0, deals, CHUNK)]
    parts = []
    chunks = _chunks(tasks, workers, ray_address, progress)
    try:
        for rows in chunks:
            parts.append(rows)
            if test is not None:
                per_deal = rows[:, :, :, 0].mean(axis=2)
                stopped = test.feed(per_deal[0] - per_deal[1] if len(candidates) > 1 else per_deal[0])
                if watch:
                    watch(test.result())
                if stopped:
                    break
    finally:
        chunks.close()  # cancels the chunks not needed any more
    rows = np.concatenate(parts, axis=1)
    return rows if test is None else rows[:, : test.deals]


def _chunks(
    tasks: list[tuple], workers: int, ray_address: str | None, progress: Callable[[int], None] | None
) -> Iterator[np.ndarray]:
    """Each task's rows, in task order, as soon as it and every task before it are done
    (``progress`` hears of each task's deals as it finishes). Closing the generator early cancels
    the tasks not yet started (on Ray, the running ones too)."""
    if ray_address is not None:
        yield from _run_on_ray(tasks, ray_address, progress)
        return
    local = _local_chunks(tasks, workers)
    try:
        for rows in local:
            if progress:
                progress(rows.shape[1])
            yield rows
    finally:
        local.close()  # its pool's futures are cancelled now, not when it is collected


def _local_chunks(tasks: list[tuple], workers: int) -> Iterator[np.ndarray]:
    """``_chunks`` in this process, or in ``workers`` local processes."""
    if workers > 1 and len(tasks) > 1:
        with worker_pool(min(workers, len(tasks)), "the evaluation") as pool:  # no idle process
            futures = [pool.submit(_play_deals, task) for task in tasks]
            for future in futures:  # the pool cancels the rest when this generator is closed or fails
                yield future.result()
    else:
        for task in tasks:
            yield _play_deals(task)


def _summary(
    candidate: str, opponent: str, rows: np.ndarray, ruleset: RuleSet, seed: int, test: Sprt | None = None
) -> EvalResult:
    per_deal = rows[:, :, 0].mean(axis=1)
    mean, half = mean_and_half_width(per_deal)
    return EvalResult(
        candidate=candidate,
        opponent=opponent,
        deals=len(rows),
        hands=len(rows) * ruleset.players,
        chips_per_hand=mean,
        ci95=[mean - half, mean + half],
        columns_per_hand=float(rows[:, :, 1].mean()),
        last_trick_rate=float(rows[:, :, 2].mean()),
        chips_by_seat=[float(v) for v in rows[:, :, 3 : 3 + ruleset.players].mean(axis=(0, 1))],
        rules=ruleset.name,
        seed=seed,
        deals_won=int((per_deal > 0).sum()),
        deals_lost=int((per_deal < 0).sum()),
        ms_per_decision=1000 * float(rows[:, :, -1].sum() / max(rows[:, :, -2].sum(), 1)),
        sprt=None if test is None else test.result().to_dict(),
    )


def _run_on_ray(tasks: list[tuple], address: str, progress: Callable[[int], None] | None) -> Iterator[np.ndarray]:
    """Chunks as Ray tasks, yielded in deal order as they become contiguous. A task that fails
    (its worker died, or it raised) is run again by Ray, up to 3 times; since results are kept
    by chunk index, no deal is lost or counted twice. Closing the generator cancels the rest."""
    ray = connect_ray(address)
    remote = ray.remote(max_retries=3, retry_exceptions=True)(_play_deals)
    pending = {remote.remote(task): i for i, task in enumerate(tasks)}
    finished: dict[int, np.ndarray] = {}
    following = 0
    try:
        while following < len(tasks):
            done, _ = ray.wait(list(pending), num_returns=1)
            finished[pending.pop(done[0])] = rows = ray.get(done[0])
            if progress:
                progress(rows.shape[1])
            while following in finished:
                yield finished.pop(following)
                following += 1
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def league(
    agents: list[str],
    deals: int,
    seed: int = 0,
    rules: object = "standard",
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> dict:
    """Every ordered pair through ``evaluate``: the cross table (row candidate, column opponent,
    chips per hand and its 95% CI) and a ranking by Bradley–Terry rating (module doc)."""
    twice = sorted({a for a in agents if agents.count(a) > 1})
    if twice:
        raise ValueError(f"a league lists each agent once; {twice[0]!r} is given {agents.count(twice[0])} times")
    if len(agents) < 2:
        raise ValueError(f"a league needs at least two different agents, got {agents}")
    table: dict[str, dict[str, float]] = {a: {} for a in agents}
    ci95: dict[str, dict[str, list[float]]] = {a: {} for a in agents}
    results = []
    for a, b in itertools.permutations(agents, 2):
        result = evaluate(a, b, deals, seed, rules, workers, progress, ray_address)
        table[a][b] = result.chips_per_hand
        ci95[a][b] = result.ci95
        results.append(asdict(result))
    ratings, half = bradley_terry(agents, results)
    mean_chips = {a: float(np.mean(list(table[a].values()))) for a in agents}
    ranking = sorted(agents, key=lambda a: -ratings[a])
    return {
        "agents": agents,
        "deals": deals,
        "seed": seed,
        "cross_table": table,
        "cross_ci95": ci95,
        "rating": RATING_METHOD,
        "ranking": [
            {
                "agent": a,
                "rating": ratings[a],
                "rating_ci95": [ratings[a] - half[a], ratings[a] + half[a]],
                "mean_chips_per_hand": mean_chips[a],
            }
            for a in ranking
        ],
        "matches": results,
    }


RATING_METHOD = (
    "Bradley-Terry rating on the Elo scale (400 points: 10 to 1 odds of winning a deal), fitted to the "
    "deals each agent won and lost head to head; 95% CI from the Fisher information"
)
ELO = 400 / math.log(10)  # rating points per unit of log-odds


def bradley_terry(agents: list[str], matches: list[dict]) -> tuple[dict[str, float], dict[str, float]]:
    """Ratings (Elo scale, mean 0) and the half-widths of their 95% intervals, fitted by maximum
    likelihood to the deals won and lost in ``matches`` (``EvalResult`` dicts), with one virtual
    drawn deal per pair of agents."""
    n = len(agents)
    index = {a: i for i, a in enumerate(agents)}
    wins = np.zeros((n, n))  # wins[i, j]: deals i won against j, ties counted half
    for m in matches:
        i, j = index[m["candidate"]], index[m["opponent"]]
        tied = m["deals"] - m["deals_won"] - m["deals_lost"]
        wins[i, j] += m["deals_won"] + tied / 2
        wins[j, i] += m["deals_lost"] + tied / 2
    played = wins + wins.T
    wins[played > 0] += 0.5  # the virtual drawn deal of each pair that met
    games = wins + wins.T
    strength = np.ones(n)
    for _ in range(10_000):  # Hunter's MM iteration: converges for any connected set of matches
        denominator = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        updated = wins.sum(axis=1) / denominator
        updated /= np.exp(np.log(updated).mean())
        if np.max(np.abs(np.log(updated) - np.log(strength))) < 1e-12:
            strength = updated
            break
        strength = updated
    r = np.log(strength)
    p = 1 / (1 + np.exp(r[None, :] - r[:, None]))  # p[i, j]: chance that i wins a deal against j
    weight = games * p * (1 - p)
    information = np.diag(weight.sum(axis=1)) - weight
    covariance = np.linalg.pinv(information)  # the ratings are only defined up to a constant: centred
    half = 1.96 * np.sqrt(np.clip(np.diag(covariance), 0, None))
    return ({a: float(ELO * r[i]) for a, i in index.items()}, {a: float(ELO * half[i]) for a, i in index.items()})


def heat_map(league_result: dict, path: str) -> None:
    """Write the cross table as a PNG heat map (needs matplotlib): each cell the candidate's
    chips per hand and its 95% half-width, each row labelled with its rating and interval."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import Normalize
    except ImportError:
        raise ValueError(f"the heat map needs matplotlib: {install_hint('train')}") from None

    ranking = league_result["ranking"]
    agents = [row["agent"] for row in ranking]  # best first
    grid = np.array([[league_result["cross_table"][a].get(b, np.nan) for b in agents] for a in agents])
    cis = league_result.get("cross_ci95", {})
    bound = float(np.nanmax(np.abs(grid))) or 1.0
    norm = Normalize(-bound, bound)
    cmap = plt.get_cmap("RdBu").with_extremes(bad="#d9d9d9")  # grey diagonal: an agent does not play itself
    fig, ax = plt.subplots(figsize=(1.5 * len(agents) + 3, 0.9 * len(agents) + 2))
    image = ax.imshow(grid, cmap=cmap, norm=norm)
    ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right")
    ax.set_yticks(
        range(len(agents)),
        [
            f"{row['agent']}  {row['rating']:+.0f} ± {(row['rating_ci95'][1] - row['rating_ci95'][0]) / 2:.0f}"
            for row in ranking
        ],
    )
    ax.set_xlabel("opponent (copies in every other seat)")
    ax.set_ylabel("candidate, with its rating ± 95% CI (best first)")
    for i, j in itertools.product(range(len(agents)), repeat=2):
        if i == j:
            continue
        text = f"{grid[i, j]:+.2f}"
        ci = cis.get(agents[i], {}).get(agents[j])
        if ci is not None:
            text += f"\n±{(ci[1] - ci[0]) / 2:.2f}"
        ax.text(j, i, text, ha="center", va="center", fontsize=9, color=text_colour(cmap(norm(grid[i, j]))))
    fig.colorbar(image, ax=ax, label="candidate chips per hand (duplicate), ± 95% CI")
    ax.set_title(
        f"tiengow league: {league_result['deals']} deals per match; rows ranked by Bradley–Terry rating", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def text_colour(rgba: tuple[float, ...]) -> str:
    """Black on a light cell, white on a dark one (relative luminance of the cell's colour)."""
    red, green, blue = rgba[:3]
    return "white" if 0.2126 * red + 0.7152 * green + 0.0722 * blue < 0.5 else "black"
