"""The ``Agent`` protocol and the registry that builds agents from spec strings.

An agent acts for whichever seat is to act. It sees that seat's observation vector and legal
action mask (``tiengow_env.observation``), and, if it searches, the ``Game`` itself through
``act(..., game=game)``; a searching agent must only use what the acting seat may know
(``tiengow_env.search`` samples the hidden tiles for it).

Specs: ``random``, ``greedy``, ``expert``; the search bots (``agents/pimc.py`` has the
grammar) ``pimc[:SAMPLES][:KEY=VALUE]...``, ``ismcts[:ITERATIONS][:KEY=VALUE]...`` and
``search[:BUDGET]``, with the keys ``rollout=random|greedy|expert``, ``endgame=TILES``,
``beta=B`` (pimc) and ``c=C`` (ismcts), e.g. ``pimc:256:rollout=expert`` or
``ismcts:2000:endgame=8`` (``pimc:64,random`` still means 64 samples, random rollouts); and
whatever other modules register (``ppo:path``, ``cfr:path``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

AgentFactory = Callable[[str | None, RuleSet, int], "Agent"]
REGISTRY: dict[str, AgentFactory] = {}


class Agent:
    """Chooses legal actions. Subclasses override ``act`` (and ``act_batch`` when they can do
    better than one row at a time)."""

    name = "agent"
    uses_game = False  # True for agents that need ``game=`` (search)

    def __init__(self, rules: RuleSet, seed: int = 0):
        self.rules = rules
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int) -> None:
        """Start a new hand; ``seed`` makes any randomness of the agent reproducible."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        raise NotImplementedError

    def explain(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> dict | None:
        """The agent's view of its next choice, for people watching it (``tiengow serve``):
        ``{"kind": "probabilities" | "values", "actions": [legal action ids], "values": [floats]}``,
        a policy's probabilities or a search's value per action; None (the default) when the
        agent has no such view. It must leave the agent as it was: ``act`` after ``explain``
        chooses what it would have chosen without it."""
        return None

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row of ``(N, D)`` observations and ``(N, A)`` masks."""
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)


DESCRIPTIONS: dict[str, tuple[str, str]] = {}  # spec prefix: (category, one-line description)


def register(kind: str, *, category: str = "", description: str = "") -> Callable[[AgentFactory], AgentFactory]:
    """Register a factory ``(argument, rules, seed) -> Agent`` under a spec prefix, with its
    category (heuristic, search, learned, plugin) and a one-line description."""
    def wrap(factory: AgentFactory) -> AgentFactory:
        REGISTRY[kind] = factory
        if category or description:
            DESCRIPTIONS[kind] = (category, description)
        return factory
    return wrap


def make_agent(spec: str, rules: RuleSet | str = "standard", seed: int = 0) -> Agent:
    """Build an agent from a spec string such as ``expert`` or ``pimc:64``."""
    from . import _builtin  # noqa: F401  (registers the built-in agents)
    rules = RuleSet.from_spec(rules)
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"an agent spec is a string such as 'expert' or 'pimc:64', got {spec!r}")
    kind, _, argument = spec.partition(":")
    if kind not in REGISTRY:
        raise ValueError(f"unknown agent {kind!r}; agents are: {', '.join(sorted(REGISTRY))}")
    agent = REGISTRY[kind](argument or None, rules, seed)
    agent.name = spec
    return agent
