"""``champion``: ISMCTS guided by the shipped PPO policy.

The search (``search``'s configuration: single-observer ISMCTS, greedy rollouts) gives the mean
chips Q(a) of each root action it tried; the learned policy gives its log-probability
log pi(a) from the acting seat's observation. The champion plays

    argmax_a  Q(a) + weight * log pi(a)

so the network breaks the search's near-ties and overrules it where the search's value gap is
small against the network's confidence (the prior term of PUCT-style searches, applied once
at the root). Spec::

    champion[:ITERATIONS][:weight=W][:c=C]   ISMCTS iterations (2500), chips per nat of the prior (1.0), UCB c (1.2)
"""
from __future__ import annotations

import numpy as np

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

from .pimc import IsmctsAgent, SearchAgent, parse_options
from .ppo import PpoAgent, make_ppo_agent

DEFAULT_ITERATIONS = 2500
DEFAULT_WEIGHT = 1.0
DEFAULT_C = 1.2


class ChampionAgent(SearchAgent):
    """``IsmctsAgent``'s values plus ``weight`` times the PPO policy's log-probabilities."""

    name = "champion"

    def __init__(self, rules: RuleSet, seed: int, prior: PpoAgent, iterations: int = DEFAULT_ITERATIONS,
                 weight: float = DEFAULT_WEIGHT, exploration: float = DEFAULT_C):
        super().__init__(rules, seed)
        self.prior = prior
        self.weight = weight
        self.searcher = IsmctsAgent(rules, seed, iterations=iterations, policy="greedy", exploration=exploration)
        self.searcher.workspace = self.workspace

    def search(self, game: Game, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        actions, _, chips = self.searcher.search(game, seed)
        observation, mask = game.observe()
        logits = self.prior.logits(observation[None], mask[None])[0].astype(np.float64)
        legal = np.flatnonzero(mask)
        log_pi = logits - (logits[legal].max() + np.log(np.exp(logits[legal] - logits[legal].max()).sum()))
        return actions, chips + self.weight * log_pi[actions], chips


def make_champion(argument: str | None, rules: RuleSet, seed: int) -> ChampionAgent:
    """``champion[:ITERATIONS][:weight=W][:c=C]`` (module docstring)."""
    count, options = parse_options("champion", argument, "iterations", {"weight": float, "c": float})
    return ChampionAgent(rules, seed, make_ppo_agent(None, rules, seed), iterations=count or DEFAULT_ITERATIONS,
                         weight=options.get("weight", DEFAULT_WEIGHT), exploration=options.get("c", DEFAULT_C))
