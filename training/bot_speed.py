"""How fast and how repeatable a bot is: what picks the route of ``tiengow exploit`` (``exploit.py``).

BOT plays a few decisions of self-play (a decision: a position with more than one legal action).
``ms_per_decision`` is its time a decision after ``WARM_UP`` decisions (numba compiles on a first
call): above ``SLOW_MS`` the exploiter goes through a clone of BOT (``clone.py``), and it says
how long labelling BOT's choices takes. ``repeat`` is how often a second copy of BOT (another
seed) makes the same choice at the same positions, and ``chance`` how often two uniformly random
choices would agree there (the mean of 1 / legal actions). A clone plays one action per
position, so a bot whose repeats are not clearly above chance cannot be cloned (such as
``random``): ``(repeat - chance) / (1 - chance)``, Cohen's kappa of the two copies, must be at
least ``MIN_KAPPA``. This module loads no torch, so that the command line can state the threshold.
"""

from __future__ import annotations

import time

import numpy as np

from tiengow.agents.base import make_agent
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

SLOW_MS = 2.0  # ms a decision above which tiengow exploit goes through a clone (search ~6, champion ~13-23, pimc ~0.5)
MIN_KAPPA = 0.2  # least agreement above chance of a clonable bot (search ~0.7, pimc:8 ~0.33, random ~-0.1)
TIMING_SECONDS = 1.5  # of BOT's time, measured after WARM_UP decisions (numba compiles on a first call)
TIMING_DECISIONS = 40
WARM_UP = 2


def measure_bot(bot: str, rules: RuleSet, seed: int) -> dict:
    """BOT's speed and repeatability (module doc) on self-play positions of ``rules``:
    {"ms_per_decision", "repeat", "chance", "kappa", "decisions"}."""
    agent, other = make_agent(bot, rules, seed), make_agent(bot, rules, seed + 1)
    seconds, timed, same, seen, chance = 0.0, 0, 0, 0, 0.0
    hand = 0
    while timed < TIMING_DECISIONS and seconds < TIMING_SECONDS:
        game = Game(seed=seed + hand, rules=rules)
        agent.reset(seed + hand)
        other.reset(seed + hand + 1)
        while not game.is_over and timed < TIMING_DECISIONS and seconds < TIMING_SECONDS:
            observation, mask = game.observe()
            if mask.sum() == 1:
                game.step(int(np.flatnonzero(mask)[0]))
                continue
            start = time.perf_counter()
            action = agent.act(observation, mask, game=game.clone() if agent.uses_game else None)
            if seen >= WARM_UP:
                seconds += time.perf_counter() - start
                timed += 1
            seen += 1
            chance += 1 / mask.sum()
            same += action == other.act(observation, mask, game=game.clone() if other.uses_game else None)
            game.step(action)
        hand += 1
    repeat, chance = same / seen, float(chance / seen)
    return {
        "ms_per_decision": 1000 * seconds / max(timed, 1),
        "repeat": repeat,
        "chance": chance,
        "kappa": (repeat - chance) / (1 - chance),
        "decisions": seen,
    }


def check_clonable(bot: str, speed: dict) -> None:
    """ValueError, one line, when BOT's choices repeat too rarely for a clone to play like it."""
    if speed["kappa"] < MIN_KAPPA:
        raise ValueError(
            f"{bot} cannot be cloned: asked twice (two seeds) at {speed['decisions']} positions it made the "
            f"same choice {speed['repeat']:.0%} of the time, where chance agrees {speed['chance']:.0%} (kappa "
            f"{speed['kappa']:.2f}, at least {MIN_KAPPA:g} needed: a clone plays one action per position); "
            "exploit it directly (--direct)"
        )


__all__ = ["SLOW_MS", "MIN_KAPPA", "measure_bot", "check_clonable"]
