"""``champion``: the ``search`` bot's PIMC at a larger budget, guided by the shipped PPO network.

PIMC (``search``'s configuration: rollouts greedy with a random action at each decision with
probability epsilon, sequential halving; and paired rollouts: every action of a world is finished
with the same random numbers, so that the comparison of two actions is not drowned in the
rollouts' own noise) ranks the legal actions by their mean chips Q(a) over
sampled worlds; the learned policy adds ``weight`` times its log-probability log pi(a), taken
from the acting seat's observation, to every ranking:

    Q(a) + weight * log pi(a)

so the network settles the search's near-ties and overrules it where the search's value gap is
small against the network's confidence: the prior term of PUCT-style searches, at the root.

With ``value=V`` > 0 the network's value head joins in. ``tiengow_env.search.lookahead_values``
plays each action in ``worlds`` sampled worlds, lets the other seats answer by sampling the
policy until the acting seat is to move again, and there takes its chips so far plus the value
head's chips to come: L(a). The ranking becomes

    (1 - V) Q(a) + V L(a) + weight * log pi(a)

(the AlphaGo mix of rollouts and a learned value, at a one-turn horizon).

With ``locate=A`` > 0 (1 by default) the worlds come from what the others did, read by the tile
locator (``agents/locator.py``): a network that reads the seat's information state, the whole
history of the hand, and says where each hidden tile lies. ``particles`` worlds are drawn
uniformly, each is weighted by its likelihood under the locator
(``tiengow_env.search.location_log_weights``) raised to the power A, and the search draws its
worlds from those by weight: inference learned from hands of ``search`` against itself, where the
true tiles are known [SRB19]. With ``belief=A`` > 0 the weights also take the likelihood of the
other seats' decisions so far under the policy (``tiengow_env.search.history_log_likelihoods``)
raised to the power A: policy-based inference. A game whose history does not lead to its state
(set from outside) gives uniform worlds.
Spec::

    champion[:SAMPLES][:weight=W][:rollout=R][:epsilon=E][:greedy_end=G][:low_discard=D][:infer=I][:value=V]
            [:worlds=N][:endgame=T][:locate=A][:locator=PATH][:belief=A][:particles=P][:prior=PATH]
        SAMPLES worlds per action (2200), W chips per nat of the prior (0.25), R the rollout
        policy (greedy; or expert, random), E the rollouts' epsilon (0.5), G the tiles in hand
        at or below which a seat's rollout decisions are never random (0: random to the end),
        D 1 for random rollout discards that throw the tile worth least (0: any tile), I the
        discard inference of ``pimc`` (1: none),
        V the lookahead's share from 0 to below 1 (0: none), N its worlds (64; at most 10^6), T
        the tiles left when rollouts give way to the exact endgame (0: never; at most 16), locate's A
        the locator's power (1; 0: none), locator's PATH a locator checkpoint written by ``tiengow
        train locator`` (the shipped ``locator.pt``), belief's A the policy likelihood's power (0:
        none), P the weighted worlds (512; at most 10^6), prior's PATH a PPO checkpoint written by
        ``tiengow train ppo`` (the shipped ``ppo`` model)

``champion:N:weight=0:locate=0`` is plain ``pimc:N:epsilon=0.5:halving=1:paired=1``: the ablation
without the networks.
"""
from __future__ import annotations

import math

import numpy as np
from threadpoolctl import ThreadpoolController

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.search import history_log_likelihoods, location_log_weights, lookahead_values, sample_worlds

from .locator import Locator, make_locator
from .pimc import PimcAgent, SearchAgent, parse_options
from .ppo import PpoAgent, make_ppo_agent

DEFAULT_SAMPLES = 2200
DEFAULT_WEIGHT = 0.25
DEFAULT_EPSILON = 0.5
DEFAULT_VALUE = 0.0
DEFAULT_WORLDS = 64
DEFAULT_BELIEF = 0.0
DEFAULT_LOCATE = 1.0
DEFAULT_PARTICLES = 512
MAX_WORLDS = 10**6  # worlds and particles are held in memory, 720 bytes each
RANGES = {
    "value": (0, math.nextafter(1.0, 0.0), "the lookahead's share of the ranking, from 0 up to (not including) 1"),
    "worlds": (1, MAX_WORLDS, f"a whole number of lookahead worlds from 1 to {MAX_WORLDS:,}"),
    "particles": (1, MAX_WORLDS, f"a whole number of belief worlds from 1 to {MAX_WORLDS:,}"),
}


class ChampionAgent(SearchAgent):
    """``PimcAgent`` (halving) ranking by its values plus ``weight`` times the PPO policy's
    log-probabilities."""

    name = "champion"

    def __init__(self, rules: RuleSet, seed: int, prior: PpoAgent, samples: int = DEFAULT_SAMPLES,
                 weight: float = DEFAULT_WEIGHT, epsilon: float = DEFAULT_EPSILON, value: float = DEFAULT_VALUE,
                 worlds: int = DEFAULT_WORLDS, endgame: int = 0, belief: float = DEFAULT_BELIEF,
                 particles: int = DEFAULT_PARTICLES, rollout: str = "greedy", low_discard: bool = False,
                 infer: float = 1.0, greedy_end: int = 0, locate: float = 0.0, locator: Locator | None = None):
        super().__init__(rules, seed)
        if not 0.0 <= value < 1.0:
            raise ValueError(f"champion: value is the lookahead's share of the ranking, from 0 up to (not "
                             f"including) 1; got value={value}")
        if type(worlds) is not int or worlds < 1:
            raise ValueError(f"champion: worlds is a positive number of lookahead worlds; got worlds={worlds}")
        if value > 0 and prior.value_head is None:
            raise ValueError("champion: value > 0 needs a prior with a value head; this checkpoint has none")
        if type(particles) is not int or particles < 1:
            raise ValueError(f"champion: particles is a positive number of worlds; got particles={particles}")
        if locate > 0 and locator is None:
            raise ValueError("champion: locate > 0 needs a tile locator")
        self.belief, self.particles = float(belief), particles
        self.locate, self.locator = float(locate), locator
        self.prior = prior
        self.weight, self.value, self.worlds = weight, value, worlds
        self.threads = ThreadpoolController()  # the network's products on one core: the budget is per core
        self.searcher = PimcAgent(rules, seed, samples=samples, policy=rollout, epsilon=epsilon, halving=True,
                                  paired=True, endgame=endgame, low_discard=low_discard, infer=infer,
                                  greedy_end=greedy_end)
        self.searcher.workspace = self.workspace

    @property
    def budget(self) -> dict[str, int]:
        return {**self.searcher.budget, "worlds": self.worlds if self.value > 0 else 0,
                "particles": self.particles if self.belief > 0 or self.locate > 0 else 0}

    def search(self, game: Game, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with self.threads.limit(limits=1, user_api="blas"):
            return self._search(game, seed)

    def _search(self, game: Game, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        observation, mask = game.observe()
        actions = np.array(game.legal_actions())  # the order the search's bonus takes
        log_pi = self._log_policy(observation[None], mask[None])[0, actions]
        worlds = self._worlds(game, seed)
        looked = np.zeros(len(actions))
        if self.value > 0:
            _, looked = lookahead_values(game, self.worlds, self._policy, self.prior.values, seed, self.workspace)
        share = self.value  # the ranking (1 - share) Q + share L + weight log pi, scaled to Q + bonus
        actions, scores, chips = self.searcher.search(game, seed, bonus=(share * looked + self.weight * log_pi)
                                                      / (1.0 - share), worlds=worlds)
        return actions, scores, (1.0 - share) * chips + share * looked

    def _worlds(self, game: Game, seed: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The (states, weights) the search draws its worlds from: ``particles`` uniform worlds
        weighted by the locator's likelihood to the power ``locate`` times the others' play's
        likelihood under the prior to the power ``belief``; None for fresh uniform worlds (both
        off, or nothing to read: the first decisions, or a game whose state was set from outside)."""
        if self.belief == 0 and self.locate == 0:
            return None
        states, _ = sample_worlds(game, self.particles, seed=seed, workspace=self.workspace)
        log_weights = np.zeros(len(states))
        if self.belief > 0:
            log_weights += self.belief * history_log_likelihoods(game, states, self._log_policy)
        if self.locate > 0:
            try:
                logits = self.locator.logits(game)
            except ValueError:  # no history to read: the state was set from outside
                logits = None
            if logits is not None:
                log_weights += self.locate * location_log_weights(states, game.to_act, game.players, logits)
        top = log_weights.max()
        if not np.isfinite(top) or np.all(log_weights == top):
            return None
        return states, np.exp(log_weights - top)

    def _log_policy(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The prior's log-probabilities (rows, actions), -inf where an action is not legal."""
        logits = self.prior.logits(observations, masks).astype(np.float64)
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))

    def _policy(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The other seats' play in the lookahead: actions sampled from the prior's policy."""
        logits = self.prior.logits(observations, masks)
        return np.argmax(logits - np.log(-np.log(rng.random(logits.shape).clip(1e-20, 1.0))), axis=1)


def make_champion(argument: str | None, rules: RuleSet, seed: int) -> ChampionAgent:
    """``champion[:SAMPLES][:KEY=VALUE]...`` (module docstring)."""
    count, options = parse_options("champion", argument, "samples", {"weight": float, "rollout": str,
                                                                     "epsilon": float, "low_discard": bool,
                                                                     "prior": str,
                                                                     "value": float, "worlds": int, "endgame": int,
                                                                     "belief": float, "particles": int,
                                                                     "infer": float, "greedy_end": int,
                                                                     "locate": float, "locator": str},
                                    ranges=RANGES)
    try:
        prior = make_ppo_agent(options.get("prior"), rules, seed)
    except ValueError as err:
        raise ValueError(f"champion: prior={options['prior']}: {err}" if "prior" in options else str(err)) from None
    locate = options.get("locate", DEFAULT_LOCATE)
    if "locator" in options and locate == 0:
        raise ValueError("champion: locator=PATH is read only with locate > 0; got locate=0")
    try:
        locator = make_locator(options.get("locator"), rules) if locate > 0 else None
    except ValueError as err:
        raise ValueError(f"champion: locator={options['locator']}: {err}" if "locator" in options else str(err)) \
            from None
    return ChampionAgent(rules, seed, prior, samples=count or DEFAULT_SAMPLES,
                         weight=options.get("weight", DEFAULT_WEIGHT), epsilon=options.get("epsilon", DEFAULT_EPSILON),
                         value=options.get("value", DEFAULT_VALUE), worlds=options.get("worlds", DEFAULT_WORLDS),
                         endgame=options.get("endgame", 0), belief=options.get("belief", DEFAULT_BELIEF),
                         particles=options.get("particles", DEFAULT_PARTICLES),
                         rollout=options.get("rollout", "greedy"),
                         low_discard=options.get("low_discard", False), infer=options.get("infer", 1.0),
                         greedy_end=options.get("greedy_end", 0), locate=locate, locator=locator)
