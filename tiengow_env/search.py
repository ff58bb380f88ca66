"""Determinized Monte-Carlo evaluation of the acting seat's actions (for search agents).

``pimc_values(game, samples)`` deals the tiles hidden from the acting seat again at random
(keeping every public fact: hand sizes, face-up plays, how many tiles each seat put face down,
and the seat's own face-down tiles), plays every legal action out to the end of the hand in
compiled code, and returns the mean chips the seat gets after each. All actions are scored on
the same sampled worlds, so their differences are not blurred by deal luck.
"""
from __future__ import annotations

import numpy as np

from . import _kernels as K
from .game import Game

POLICIES = {"random": K.ROLLOUT_RANDOM, "greedy": K.ROLLOUT_GREEDY}


def pimc_values(game: Game, samples: int = 32, policy: str = "greedy",
                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(legal actions, mean chips of the acting seat after each) over ``samples`` worlds."""
    if game.is_over:
        raise ValueError("the hand is over: there is nothing to search")
    if policy not in POLICIES:
        raise ValueError(f"unknown rollout policy {policy!r}; policies are: {', '.join(POLICIES)}")
    if type(samples) is not int or samples < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    actions = np.array(game.legal_actions(), dtype=np.int64)
    values = np.zeros(len(actions), dtype=np.float64)
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, np.uint64(seed % 2**64))
    K.pimc_values(game.state, game.to_act, actions, samples, POLICIES[policy], game.rules.discards_face_up,
                  game.combos.table, game.combos.rules_array, rng, values)
    return actions, values
