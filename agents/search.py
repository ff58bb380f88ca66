"""Search bots as compositions: a world sampler, an evaluator and an optional prior.

``SearchAgent(sampler, evaluator, prior)`` scores every legal action at each decision:

* the **sampler** says which worlds (deals of the tiles hidden from the seat) the search may
  draw: ``UniformWorlds`` (fresh uniform deals, drawn by the evaluator's kernel) or
  ``LocatorWorlds`` (``particles`` worlds drawn from the belief of the tile locator, a network
  that reads the seat's information state and says where each hidden tile lies;
  ``agents/locator.py``);
* the **evaluator** values each action in those worlds: ``Rollouts`` (PIMC: every action
  played out in the same worlds by greedy rollouts with a random action at each decision with
  probability epsilon, optionally paired and by sequential halving; ``tiengow_env.search``),
  ``ExtendedRollouts`` (extended PIMC at depth one: the same rollouts, but the seat's next
  decision is chosen once per information set, not once per world, so the search does not
  count on knowing the hidden tiles at its next turn) or ``Ismcts`` (information-set MCTS,
  uniform worlds only);
* the **prior** adds ``weight`` times a policy network's log-probability of each action to the
  ranking, ``Q(a) + weight * log pi(a)``: the network settles the search's near-ties, the
  prior term of PUCT-style searches at the root (``PolicyPrior``; ``agents/ppo.py``).

The shipped bots are configurations of these parts (``make_*`` below, each from its frozen
config; ``agents/spec.py`` parses the specs):

    pimc      UniformWorlds + Rollouts(samples, epsilon, halving, paired)
    ismcts    Ismcts(iterations, c, epsilon)
    search    UniformWorlds + Rollouts(1000 x budget, epsilon 0.5, halving)
    champion  LocatorWorlds (or uniform with locate=0) + ExtendedRollouts(samples, 0.5)
              (or with depth=0 Rollouts(samples, 0.5, halving, paired)) + PolicyPrior(ppo, 0.25)

With one legal action no bot searches. Every bot reads only what the acting seat may know.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np
from threadpoolctl import ThreadpoolController

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.search import (
    MAX_EXTENDED_WORLDS,
    Workspace,
    ismcts_values,
    located_worlds,
    location_log_weights,
    pimc_details,
    pimc_extended_details,
    sample_worlds,
)

from .base import Agent, Bot
from .locator import Locator, make_locator
from .ppo import PpoAgent, make_ppo_agent
from .spec import MAX_NUMBER, ranged

MAX_ITERATIONS = 10**7  # ismcts keeps a node per iteration, 64 bytes each: 640 MB at most
MAX_WORLDS = 10**6  # the locator's worlds are held in memory, 720 bytes each
_THREADS = ThreadpoolController()  # the networks' products on one core: a bot's budget is per core

Worlds = tuple[np.ndarray, np.ndarray]  # (states, weights), as tiengow_env.search.pimc_details takes them


# ============================================================================ parts
class WorldSampler(Protocol):
    """Which worlds a search draws: (states, weights), or None for fresh uniform ones."""

    def worlds(self, game: Game, seed: int, workspace: Workspace) -> Worlds | None: ...


class UniformWorlds:
    """Fresh uniform deals of the hidden tiles, drawn inside the evaluator's kernel."""

    budget: ClassVar[dict[str, int]] = {}

    def worlds(self, game: Game, seed: int, workspace: Workspace) -> Worlds | None:
        return None


@dataclass
class LocatorWorlds:
    """``particles`` worlds from the tile locator's belief, a world's likelihood the product of
    its hidden tiles' places under the locator, raised to the power ``power``
    (``tiengow_env.search.location_log_weights``): inference learned from hands of ``search``
    against itself, where the true tiles are known. ``exact``: each world drawn from that belief
    on its own (``tiengow_env.search.located_worlds``); else uniform worlds, each weighted by its
    likelihood (few of which count: a median effective sample of 18 in 512 on the profiler's
    positions). Uniform (None) when the locator has nothing to read (a game whose state was set
    from outside)."""

    locator: Locator
    power: float
    particles: int
    exact: bool = True

    @property
    def budget(self) -> dict[str, int]:
        return {"particles": self.particles}

    def worlds(self, game: Game, seed: int, workspace: Workspace) -> Worlds | None:
        try:
            with _THREADS.limit(limits=1, user_api="blas"):
                logits = self.locator.logits(game)
        except ValueError:  # no history to read: the state was set from outside
            return None
        if self.exact:
            states = located_worlds(game, self.particles, logits, self.power, seed=seed, workspace=workspace)
            return states, np.ones(len(states))
        states = sample_worlds(game, self.particles, seed=seed, workspace=workspace)
        log_weights = self.power * location_log_weights(states, game.to_act, game.players, logits)
        top = log_weights.max()
        if not np.isfinite(top) or np.all(log_weights == top):
            return None
        return states, np.exp(log_weights - top)


class Evaluator(Protocol):
    """Values every legal action: (actions, the score the bot maximises, mean chips)."""

    budget: dict[str, int]

    def evaluate(
        self, game: Game, seed: int, workspace: Workspace, worlds: Worlds | None, bonus: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@dataclass
class Rollouts:
    """PIMC: every legal action played out in the same sampled worlds by epsilon-greedy
    rollouts (``tiengow_env.search.pimc_details``); the score is 1 for the action the search
    prefers (best mean chips plus the prior's bonus; with ``halving``, the last in the race)."""

    samples: int
    epsilon: float = 0.0
    halving: bool = False
    paired: bool = False

    @property
    def budget(self) -> dict[str, int]:
        return {"samples": self.samples}

    def evaluate(
        self, game: Game, seed: int, workspace: Workspace, worlds: Worlds | None, bonus: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        actions, chips, best = pimc_details(
            game,
            self.samples,
            seed,
            self.epsilon,
            self.halving,
            self.paired,
            bonus=bonus,
            worlds=worlds,
            workspace=workspace,
        )
        return _preferring(actions, chips, best)


def _preferring(actions: np.ndarray, chips: np.ndarray, best: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(actions, a score of 1 for the preferred one and 0 for the rest, chips): a PIMC evaluation."""
    scores = np.zeros(len(actions))
    scores[best] = 1.0
    return actions, scores, chips


@dataclass
class ExtendedRollouts:
    """Extended PIMC at depth one (``tiengow_env.search.pimc_extended_details``): every legal
    action played in the same worlds, the other seats moving by the rollouts' policy up to the
    seat's next decision, which is made once for each information set the worlds reach (by the
    worlds that share it), every world then finished by the rollouts. The score is 1 for the
    action with the best mean chips plus the prior's bonus."""

    samples: int
    epsilon: float = 0.0

    @property
    def budget(self) -> dict[str, int]:
        return {"samples": self.samples}

    def evaluate(
        self, game: Game, seed: int, workspace: Workspace, worlds: Worlds | None, bonus: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        actions, chips, best = pimc_extended_details(
            game, self.samples, seed, self.epsilon, bonus=bonus, worlds=worlds, workspace=workspace
        )
        return _preferring(actions, chips, best)


@dataclass
class Ismcts:
    """Information-set MCTS (``tiengow_env.search.ismcts_values``): the score is the root
    action's visits. It deals its own uniform worlds and takes no prior."""

    iterations: int
    exploration: float
    epsilon: float = 0.0

    @property
    def budget(self) -> dict[str, int]:
        return {"iterations": self.iterations}

    def evaluate(
        self, game: Game, seed: int, workspace: Workspace, worlds: Worlds | None, bonus: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return ismcts_values(
            game, self.iterations, self.exploration, seed=seed, epsilon=self.epsilon, workspace=workspace
        )


@dataclass
class PolicyPrior:
    """``weight`` chips per nat of a policy network's log-probability of each legal action."""

    policy: PpoAgent
    weight: float

    def bonus(self, game: Game) -> np.ndarray:
        """The prior's chips for each action of ``game.legal_actions()``, in that order."""
        observation, mask = game.observe()
        with _THREADS.limit(limits=1, user_api="blas"):
            logits = self.policy.logits(observation[None], mask[None]).astype(np.float64)
        top = logits.max(axis=1, keepdims=True)
        log_pi = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
        return self.weight * log_pi[0, np.array(game.legal_actions())]


# ============================================================================ the agent
class SearchAgent(Agent):
    """A search composed of a world sampler, an evaluator and an optional prior (module doc)."""

    uses_game = True

    def __init__(
        self, rules: RuleSet, seed: int, sampler: WorldSampler, evaluator: Evaluator, prior: PolicyPrior | None = None
    ):
        super().__init__(rules, seed)
        if isinstance(evaluator, Ismcts) and (prior is not None or not isinstance(sampler, UniformWorlds)):
            raise ValueError("ISMCTS deals its own uniform worlds and takes no prior")
        self.sampler, self.evaluator, self.prior = sampler, evaluator, prior
        self.workspace = Workspace(rules)

    @property
    def budget(self) -> dict[str, int]:
        """What a decision may cost, in the spec's own numbers ({"samples": ..., "particles":
        ...}), so that a server can cap what a request asks for."""
        return {**self.evaluator.budget, **getattr(self.sampler, "budget", {})}

    def search(self, game: Game, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(legal actions searched, the score the bot maximises, mean chips) at the seat to act."""
        bonus = None if self.prior is None else self.prior.bonus(game)
        worlds = self.sampler.worlds(game, seed, self.workspace)
        return self.evaluator.evaluate(game, seed, self.workspace, worlds, bonus)

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        if game is None:
            raise ValueError(f"the {self.name} agent searches: call act(observation, mask, game=game)")
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        actions, scores, _ = self.search(game, int(self.rng.integers(2**63)))
        return int(actions[int(np.argmax(scores))])

    def explain(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> dict | None:
        """The search's value of each legal action (mean chips of the acting seat), for a UI:
        the very search the next ``act`` runs (the same seed; the bot's own draws are kept)."""
        if game is None or game.is_over:
            return None
        actions, _, chips = self.search(game, int(copy.deepcopy(self.rng).integers(2**63)))
        return {"kind": "values", "actions": [int(a) for a in actions], "values": [float(v) for v in chips]}

    def act_batch(self, observations, masks):
        raise ValueError(f"the {self.name} agent searches one game at a time: use act(..., game=game)")


# ============================================================================ configurations
@dataclass(frozen=True)
class PimcConfig:
    """``pimc``: determinized Monte Carlo over uniform worlds."""

    POSITIONAL: ClassVar[str] = "samples"
    samples: int = ranged(32, 1, MAX_NUMBER)
    """worlds each legal action is played out in (in all, with halving)"""
    epsilon: float = ranged(0.0, 0.0, 1.0)
    """each rollout decision is uniformly random with this probability, else greedy"""
    halving: bool = False
    """spend the same rollouts by sequential halving over the actions"""
    paired: bool = False
    """finish every action of a world with the same random numbers"""


def make_pimc(config: PimcConfig, rules: RuleSet, seed: int) -> SearchAgent:
    """``pimc``: uniform worlds, epsilon-greedy rollouts."""
    return SearchAgent(
        rules, seed, UniformWorlds(), Rollouts(config.samples, config.epsilon, config.halving, config.paired)
    )


@dataclass(frozen=True)
class IsmctsConfig:
    """``ismcts``: single-observer information-set MCTS."""

    POSITIONAL: ClassVar[str] = "iterations"
    iterations: int = ranged(1000, 1, MAX_ITERATIONS)
    """iterations per decision (a tree node each)"""
    c: float = ranged(1.2, 0.0, MAX_NUMBER)
    """UCB exploration constant on rewards of chips / 20 (1.2 beat 0.4, 0.7, 2 and 3)"""
    epsilon: float = ranged(0.0, 0.0, 1.0)
    """each rollout decision is uniformly random with this probability, else greedy"""


def make_ismcts(config: IsmctsConfig, rules: RuleSet, seed: int) -> SearchAgent:
    """``ismcts``: information-set MCTS with epsilon-greedy rollouts."""
    return SearchAgent(rules, seed, UniformWorlds(), Ismcts(config.iterations, config.c, config.epsilon))


SEARCH_SAMPLES = 1000  # search's samples at budget 1


@dataclass(frozen=True)
class SearchConfig:
    """``search``: the strongest search-only configuration measured at <= 20 ms of CPU a
    decision (issue 17): rollouts with a random action at each decision with probability 0.5
    beat plain greedy ones by about a chip a hand at equal samples; sequential halving spends the
    rollouts on the close calls. More greedy samples, ISMCTS, belief weights and expert
    rollouts gained less or lost (``benchmarks/results/experiments``)."""

    POSITIONAL: ClassVar[str] = "budget"
    budget: float = ranged(1.0, 0.001, MAX_NUMBER / SEARCH_SAMPLES)
    """a factor on the samples: search:2 plays each action out in 2,000 worlds"""


def make_search(config: SearchConfig, rules: RuleSet, seed: int) -> SearchAgent:
    """``search``: pimc:1000:epsilon=0.5:halving=1 with the samples times the budget."""
    samples = max(1, round(SEARCH_SAMPLES * config.budget))
    return SearchAgent(rules, seed, UniformWorlds(), Rollouts(samples, epsilon=0.5, halving=True))


@dataclass(frozen=True)
class ChampionConfig:
    """``champion``: search's rollouts in extended PIMC at depth one, guided by the shipped PPO
    policy, in worlds drawn by the tile locator (model card ``agents/policies/champion.md``)."""

    POSITIONAL: ClassVar[str] = "samples"
    samples: int = ranged(1200, 1, MAX_NUMBER)
    """worlds each legal action is played in (with depth=0: in all, by sequential halving)"""
    weight: float = ranged(0.25, 0.0, MAX_NUMBER)
    """chips per nat of the prior's log-probability added to each action's value (0: no prior)"""
    epsilon: float = ranged(0.5, 0.0, 1.0)
    """each rollout decision is uniformly random with this probability, else greedy"""
    locate: float = ranged(1.0, 0.0, MAX_NUMBER)
    """the power of the tile locator's likelihood on the worlds (0: uniform worlds)"""
    particles: int = ranged(4096, 1, MAX_WORLDS)
    """worlds drawn from the locator's belief (with exact=0: uniform worlds it weighs), which the
    search then draws from"""
    exact: int = ranged(1, 0, 1)
    """1: the worlds drawn exactly from the locator's belief (issue 49's screen,
    benchmarks/results/experiments/located.json); 0: uniform worlds weighed by it, as the champion
    before did"""
    locator: str | None = None
    """a locator checkpoint written by tiengow train locator (default: the shipped locator.pt, of
    20,000 hands; the champions before played with locator_2400.pt beside it)"""
    prior: str | None = None
    """a PPO checkpoint written by tiengow train ppo (default: the shipped ppo.pt)"""
    depth: int = ranged(1, 0, 1)
    """1: extended PIMC, the seat's next decision made once per information set (issue 49's
    screen, benchmarks/results/experiments/extended.json); 0: plain PIMC by sequential halving"""


def make_champion(
    config: ChampionConfig, rules: RuleSet, seed: int, sampler: WorldSampler | None = None
) -> SearchAgent:
    """``champion`` (``ChampionConfig``); ``sampler`` replaces its worlds (a measuring stick
    such as ``benchmarks/oracle.py``'s true deal)."""
    try:
        policy = make_ppo_agent(config.prior, rules, seed)
    except ValueError as err:
        raise ValueError(f"champion: prior={config.prior}: {err}" if config.prior else str(err)) from None
    if config.depth and config.samples > MAX_EXTENDED_WORLDS:
        raise ValueError(
            f"champion: with depth=1 samples is at most {MAX_EXTENDED_WORLDS:,} (extended PIMC holds every "
            f"world in memory); got {config.samples:,} (depth=0 takes more)"
        )
    if config.locator is not None and config.locate == 0:
        raise ValueError("champion: locator=PATH is read only with locate > 0; got locate=0")
    if sampler is None and config.locate > 0:
        try:
            locator = make_locator(config.locator, rules)
        except ValueError as err:
            raise ValueError(f"champion: locator={config.locator}: {err}" if config.locator else str(err)) from None
        sampler = LocatorWorlds(locator, config.locate, config.particles, bool(config.exact))
    return SearchAgent(
        rules,
        seed,
        sampler or UniformWorlds(),
        ExtendedRollouts(config.samples, config.epsilon)
        if config.depth
        else Rollouts(config.samples, config.epsilon, halving=True, paired=True),
        PolicyPrior(policy, config.weight),
    )


PIMC = Bot("search", "determinized search: every action played out in the same uniform worlds", PimcConfig, make_pimc)
ISMCTS = Bot("search", "information-set MCTS with epsilon-greedy rollouts", IsmctsConfig, make_ismcts)
SEARCH = Bot(
    "search",
    "the strongest search-only bot, <= 20 ms a decision (pimc:1000:epsilon=0.5:halving=1)",
    SearchConfig,
    make_search,
)
CHAMPION = Bot(
    "learned",
    "the strongest bot shipped: extended PIMC guided by the ppo policy, in worlds drawn by the tile locator",
    ChampionConfig,
    make_champion,
)

__all__ = [
    "PIMC",
    "ISMCTS",
    "SEARCH",
    "CHAMPION",
    "SearchAgent",
    "WorldSampler",
    "UniformWorlds",
    "LocatorWorlds",
    "Evaluator",
    "Rollouts",
    "ExtendedRollouts",
    "Ismcts",
    "PolicyPrior",
    "PimcConfig",
    "IsmctsConfig",
    "SearchConfig",
    "ChampionConfig",
    "make_pimc",
    "make_ismcts",
    "make_search",
    "make_champion",
]
