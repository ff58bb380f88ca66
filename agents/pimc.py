"""Search bots: ``pimc``, ``ismcts`` and ``search`` (tiengow_env.search does the searching).

Spec grammar (``agents/base.py`` has the overview)::

    pimc[:SAMPLES][:KEY=VALUE]...      determinized Monte Carlo, SAMPLES worlds per decision (32)
    ismcts[:ITERATIONS][:KEY=VALUE]... information-set MCTS, ITERATIONS per decision (1000; at most 10^7)
    search[:BUDGET]                    the strongest search-only bot at its default budget (SEARCH below)

    KEY=VALUE, any order:
      rollout=random|greedy|expert   the policy that finishes each world (greedy)
      epsilon=E                      each rollout decision is uniformly random with probability E (0)
      own_epsilon=E                  the same for the searching seat's own rollout decisions (default: epsilon)
      low_discard=0|1                a random rollout decision that is a discard throws the tile worth least (0)
      greedy_end=T                   pimc: a seat holding at most T tiles makes no random rollout decision (0)
      endgame=N                      solve exactly (max-n) once at most N tiles are left in the hands (0: never;
                                     at most 16, about 4 s a decision with 8 samples)
      beta=B                         pimc: weight worlds by the others' discards, inverse temperature B (0: uniform)
      infer=P                        worlds follow the others' discards: a seat that could beat discards with
                                     probability P (1: no inference; under must_beat_if_able always 0)
      halving=0|1                    pimc: spend the same rollouts by sequential halving over the actions (0)
      paired=0|1                     pimc: finish every action of a world with the same random numbers (0)
      c=C                            ismcts: UCB exploration constant on rewards of chips / 20 (1.2)

``pimc:64,random`` (samples, then the rollout policy after a comma) still works. With one
legal action no bot searches. Every bot reads only what the acting seat may know.
"""
from __future__ import annotations

import copy

import numpy as np

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.search import POLICIES, Workspace, ismcts_values, pimc_details

from .base import Agent

DEFAULT_SAMPLES = 32
DEFAULT_ITERATIONS = 1000
DEFAULT_C = 1.2  # tuned with greedy rollouts (seeds 100 and 200): c = 0.4, 0.7, 2 and 3 did worse
MAX_COUNT = 10**9  # the most samples, iterations or any other number a spec may give


class SearchAgent(Agent):
    """Shared by the search bots: the one-legal-action shortcut, explanations, a workspace."""

    uses_game = True

    def __init__(self, rules: RuleSet, seed: int = 0):
        super().__init__(rules, seed)
        self.workspace = Workspace(rules)

    def search(self, game: Game, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(legal actions searched, the score the bot maximises, mean chips) at the seat to act."""
        raise NotImplementedError

    @property
    def budget(self) -> dict[str, int]:
        """What a decision may cost, in the spec's own numbers ({"samples": ..., "endgame": tiles
        solved exactly, ...}), so that a server can cap what a request asks for."""
        raise NotImplementedError

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


class PimcAgent(SearchAgent):
    """PIMC: every legal action scored in the same ``samples`` sampled worlds."""

    name = "pimc"

    def __init__(self, rules: RuleSet, seed: int = 0, samples: int = DEFAULT_SAMPLES, policy: str = "greedy",
                 endgame: int = 0, beta: float = 0.0, halving: bool = False, epsilon: float = 0.0,
                 own_epsilon: float | None = None, infer: float = 1.0, paired: bool = False,
                 low_discard: bool = False, greedy_end: int = 0):
        super().__init__(rules, seed)
        self.samples, self.policy, self.endgame, self.beta, self.halving = samples, policy, endgame, beta, halving
        self.epsilon, self.own_epsilon, self.infer, self.paired = epsilon, own_epsilon, infer, paired
        self.low_discard, self.greedy_end = low_discard, greedy_end

    @property
    def budget(self) -> dict[str, int]:
        return {"samples": self.samples, "endgame": self.endgame}

    def search(self, game: Game, seed: int, bonus: np.ndarray | None = None,
               worlds: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``SearchAgent.search``; ``bonus`` (chips per legal action) is added to the means
        the search ranks actions by, and ``worlds`` (states, weights) are drawn from instead of
        fresh ones (``tiengow_env.search.pimc_details``)."""
        actions, chips, _, best = pimc_details(game, self.samples, self.policy, seed, self.endgame, self.beta,
                                               self.workspace, self.halving, self.epsilon, bonus, self.own_epsilon,
                                               self.infer, self.paired, worlds, self.low_discard,
                                               self.greedy_end)
        scores = np.zeros(len(actions))
        scores[best] = 1.0
        return actions, scores, chips


class IsmctsAgent(SearchAgent):
    """ISMCTS: plays the root action it visited most."""

    name = "ismcts"

    def __init__(self, rules: RuleSet, seed: int = 0, iterations: int = DEFAULT_ITERATIONS, policy: str = "greedy",
                 endgame: int = 0, exploration: float = DEFAULT_C, epsilon: float = 0.0,
                 own_epsilon: float | None = None, infer: float = 1.0, low_discard: bool = False):
        super().__init__(rules, seed)
        self.iterations, self.policy, self.endgame, self.exploration = iterations, policy, endgame, exploration
        self.epsilon, self.own_epsilon, self.infer, self.low_discard = epsilon, own_epsilon, infer, low_discard

    @property
    def budget(self) -> dict[str, int]:
        return {"iterations": self.iterations, "endgame": self.endgame}

    def search(self, game: Game, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        actions, visits, chips = ismcts_values(game, self.iterations, self.exploration, policy=self.policy,
                                               endgame=self.endgame, seed=seed, workspace=self.workspace,
                                               epsilon=self.epsilon, own_epsilon=self.own_epsilon, infer=self.infer,
                                               low_discard=self.low_discard)
        return actions, visits, chips


FLAGS = {  # the 0|1 options, and what each value means
    "halving": "0: every action gets every world, 1: sequential halving",
    "paired": "0: each rollout draws its own random numbers, 1: the actions of a world share them",
    "low_discard": "0: a random rollout discard throws any tile, 1: the tile worth least",
}


MAX_ITERATIONS = 10**7  # ismcts keeps a node per iteration, 64 bytes each: 640 MB at most
MAX_ENDGAME = 16  # tiles; the exact endgame's time grows about a hundredfold every 4 tiles (4 s a decision at 16)
RANGES = {  # (lowest, highest, what it is) of each numeric option not in 0..MAX_COUNT
    "epsilon": (0, 1, "a probability from 0 to 1"),
    "own_epsilon": (0, 1, "a probability from 0 to 1"),
    "infer": (0, 1, "a probability from 0 to 1"),
    "endgame": (0, MAX_ENDGAME, f"a whole number of tiles from 0 to {MAX_ENDGAME}"),
    "greedy_end": (0, 32, "a whole number of tiles from 0 to 32"),
}


def parse_options(kind: str, argument: str | None, count_name: str, allowed: dict[str, type],
                  count_max: int = MAX_COUNT, ranges: dict[str, tuple] | None = None) -> tuple[int | None, dict]:
    """``COUNT[:KEY=VALUE]...`` of a search spec: (count or None, {key: value}). Options of
    type ``bool`` are the ``FLAGS``, written 0 or 1; numbers must lie in their ``RANGES``
    (updated by ``ranges``), or from 0 to ``MAX_COUNT``."""
    count, options = None, {}
    ranges = {**RANGES, **(ranges or {})}
    example = f"{kind}:256:rollout=expert"
    for k, part in enumerate((argument or "").split(":") if argument else []):
        key, eq, value = part.partition("=")
        if not eq and k > 0 and part in allowed:
            raise ValueError(f"{kind}: {part} needs a value, as in {part}=VALUE; got {kind}:{argument[:80]}")
        if not eq:
            digits = part.lstrip("0") if part.isascii() and part.isdigit() else ""
            if k > 0 or not digits or len(digits) > len(str(count_max)) or int(digits) > count_max:
                raise ValueError(f"{kind} takes a number of {count_name} from 1 to {count_max:,} then KEY=VALUE "
                                 f"options, as in {example}; got {kind}:{argument[:80]}")
            count = int(digits)
            continue
        if key not in allowed:
            raise ValueError(f"{kind}: unknown option {key!r} in {kind}:{argument[:80]}; "
                             f"options are: {', '.join(allowed)}")
        if key == "rollout" and value not in POLICIES:
            raise ValueError(f"{kind}: rollout must be one of {', '.join(POLICIES)}, got {value[:40]!r}")
        if key in options:
            raise ValueError(f"{kind}: {key} is given twice in {kind}:{argument[:80]}")
        if not value:
            raise ValueError(f"{kind}: {key}= needs a value, as in {example}; got {kind}:{argument[:80]}")
        if allowed[key] is str:
            options[key] = value
            continue
        if allowed[key] is bool:
            if value not in ("0", "1"):
                raise ValueError(f"{kind}: {key} is 0 or 1 ({FLAGS[key]}); got {key}={value[:40]}")
            options[key] = value == "1"
            continue
        whole = allowed[key] is int
        low, high, what = ranges.get(key, (0, MAX_COUNT, f"a {'whole ' if whole else ''}number from 0 to "
                                                         f"{MAX_COUNT:,}"))
        try:
            number = float(value) if len(value) <= 40 else None
        except ValueError:
            number = None
        if number is None or not low <= number <= high or (whole and not number.is_integer()):  # refuses nan, inf
            raise ValueError(f"{kind}: {key} is {what}; got {key}={value[:40]}")
        options[key] = int(number) if whole else number
    return count, options


def make_pimc(argument: str | None, rules: RuleSet, seed: int) -> PimcAgent:
    """``pimc[:SAMPLES][:KEY=VALUE]...`` (module docstring), or the old ``pimc:SAMPLES,POLICY``."""
    if argument and "," in argument:
        samples, _, policy = argument.partition(",")
        digits = samples.lstrip("0") if samples.isascii() and samples.isdigit() else ""
        if not digits or len(digits) > len(str(MAX_COUNT)) or int(digits) > MAX_COUNT or policy not in POLICIES:
            raise ValueError(f"pimc:SAMPLES,POLICY takes a number from 1 to {MAX_COUNT:,} and one of "
                             f"{', '.join(POLICIES)}; got pimc:{argument[:80]}")
        return PimcAgent(rules, seed, samples=int(samples), policy=policy)
    count, options = parse_options("pimc", argument, "samples",
                                   {"rollout": str, "epsilon": float, "own_epsilon": float, "endgame": int,
                                    "beta": float, "halving": bool, "infer": float, "paired": bool,
                                    "low_discard": bool, "greedy_end": int})
    return PimcAgent(rules, seed, samples=count or DEFAULT_SAMPLES, policy=options.get("rollout", "greedy"),
                     endgame=options.get("endgame", 0), beta=options.get("beta", 0.0),
                     halving=options.get("halving", False), epsilon=options.get("epsilon", 0.0),
                     own_epsilon=options.get("own_epsilon"), infer=options.get("infer", 1.0),
                     paired=options.get("paired", False), low_discard=options.get("low_discard", False),
                     greedy_end=options.get("greedy_end", 0))


def make_ismcts(argument: str | None, rules: RuleSet, seed: int) -> IsmctsAgent:
    """``ismcts[:ITERATIONS][:KEY=VALUE]...`` (module docstring)."""
    count, options = parse_options("ismcts", argument, "iterations",
                                   {"rollout": str, "epsilon": float, "own_epsilon": float, "endgame": int, "c": float,
                                    "infer": float, "low_discard": bool}, count_max=MAX_ITERATIONS)
    return IsmctsAgent(rules, seed, iterations=count or DEFAULT_ITERATIONS, policy=options.get("rollout", "greedy"),
                       endgame=options.get("endgame", 0), exploration=options.get("c", DEFAULT_C),
                       epsilon=options.get("epsilon", 0.0), own_epsilon=options.get("own_epsilon"),
                       infer=options.get("infer", 1.0), low_discard=options.get("low_discard", False))


# The strongest search-only configuration measured here at <= 20 ms of CPU per decision (the
# closing note of issue 17 has the table of what was tried). Rollouts with a random action at
# each decision with probability 0.5 beat plain greedy ones by about a chip a hand at equal
# samples; sequential halving spends the rollouts on the close calls. More greedy samples
# (pimc:900), ISMCTS, belief weights and expert rollouts gained less or lost.
# ``search:BUDGET`` scales the count: search:2 plays out 2,000 worlds per action.
SEARCH = ("pimc", 1000, "epsilon=0.5:halving=1")


def make_search(argument: str | None, rules: RuleSet, seed: int) -> Agent:
    """``search[:BUDGET]``: ``SEARCH`` with its count multiplied by BUDGET (default 1)."""
    if argument is not None:
        try:
            budget = float(argument)
        except ValueError:
            budget = -1.0
        if not 0 < budget * SEARCH[1] <= MAX_COUNT:  # also refuses nan and inf
            raise ValueError(f"search takes a positive budget factor of at most {MAX_COUNT // SEARCH[1]:,}, as in "
                             f"search:2 (twice the default budget); got search:{argument[:40]}")
    else:
        budget = 1.0
    kind, count, options = SEARCH
    spec = f"{max(1, round(count * budget))}:{options}"
    return (make_pimc if kind == "pimc" else make_ismcts)(spec, rules, seed)
