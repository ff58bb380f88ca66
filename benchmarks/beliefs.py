"""Do belief-weighted worlds put more probability on the true hidden tiles than uniform ones?

``python -m tiengow.benchmarks.beliefs [--hands N] [--samples M] [--betas 1,2,4] [--seed S]``
plays N hands with four ``expert`` bots, and at every decision after some other seat has put
tiles face down it samples M worlds for the acting seat (``tiengow_env.search.sample_worlds``).
For each tile hidden from that seat, the probability the worlds give to its true place (which
seat holds it, in hand or face down) is averaged over the worlds, uniformly and with the
discard-likelihood weights at each inverse temperature beta. It prints the mean log of that
probability per hidden tile (higher is better) and its mean, for uniform and for each beta.
"""
from __future__ import annotations

import argparse

import numpy as np

from tiengow_env import search as S
from tiengow_env.game import Game
from tiengow_env.state import StateView

FLOOR = 1e-3  # a world set that never puts a tile in its place scores log(FLOOR), not -inf


def truth_probability(game: Game, worlds: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per hidden tile, the weighted share of worlds that put it where it truly is."""
    seat, players, truth = game.to_act, game.players, game.view
    views = [StateView(world, players) for world in worlds]
    out = []
    for s in range(players):
        if s == seat:
            continue
        for place in ("hands", "down"):
            tiles = int(getattr(truth, place)[s])
            placed = np.array([getattr(view, place)[s] for view in views])  # where each world puts them
            for b in range(32):
                if tiles >> b & 1:
                    out.append(float(weights[(placed >> b & 1) == 1].sum()))
    return np.array(out)


def measure(hands: int, samples: int, betas: list[float], seed: int) -> dict[str, tuple[float, float, int]]:
    """{"uniform" or "beta=B": (mean log probability, mean probability, tiles scored)}."""
    from tiengow.agents.base import make_agent
    expert = make_agent("expert")
    scores: dict[str, list[np.ndarray]] = {"uniform": [], **{f"beta={b:g}": [] for b in betas}}
    rng = np.random.default_rng(seed)
    for _ in range(hands):
        game = Game(seed=int(rng.integers(2**31)))
        workspace = S.Workspace(game.rules)
        while not game.is_over:
            observation, mask = game.observe()
            seat = game.to_act
            if any(tiles for s, tiles in enumerate(game.view.down) if s != seat):
                draw = int(rng.integers(2**31))
                worlds, uniform = S.sample_worlds(game, samples, 0.0, draw, workspace)
                scores["uniform"].append(truth_probability(game, worlds, uniform))
                for b in betas:
                    _, weights = S.sample_worlds(game, samples, b, draw, workspace)
                    scores[f"beta={b:g}"].append(truth_probability(game, worlds, weights))
            game.step(expert.act(observation, mask))
    out = {}
    for name, parts in scores.items():
        p = np.concatenate(parts)
        out[name] = (float(np.log(np.maximum(p, FLOOR)).mean()), float(p.mean()), len(p))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--samples", type=int, default=128)
    parser.add_argument("--betas", default="1,2,4")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    betas = [float(b) for b in args.betas.split(",")]
    for name, (log_p, p, n) in measure(args.hands, args.samples, betas, args.seed).items():
        print(f"{name:10s} mean log P(true place) {log_p:+.4f}   mean P {p:.4f}   ({n} hidden tiles)")


if __name__ == "__main__":
    main()
