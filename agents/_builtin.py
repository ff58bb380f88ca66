"""Registers the built-in agents with ``agents.base.REGISTRY``."""
from __future__ import annotations

from .base import register
from .baselines import ExpertAgent, GreedyAgent, RandomAgent


def _no_argument(kind: str, argument: str | None) -> None:
    if argument is not None:
        raise ValueError(f"agent {kind!r} takes no argument, got {kind}:{argument}")


@register("random")
def _random(argument, rules, seed):
    _no_argument("random", argument)
    return RandomAgent(rules, seed)


@register("greedy")
def _greedy(argument, rules, seed):
    _no_argument("greedy", argument)
    return GreedyAgent(rules, seed)


@register("expert")
def _expert(argument, rules, seed):
    _no_argument("expert", argument)
    return ExpertAgent(rules, seed)


@register("cfr")
def _cfr(argument, rules, seed):
    from .cfr import make_cfr_agent
    return make_cfr_agent(argument, rules, seed)


@register("ppo")
def _ppo(argument, rules, seed):
    from .ppo import make_ppo_agent
    return make_ppo_agent(argument, rules, seed)


@register("pimc", category="search",
          description="PIMC: each legal action played out in SAMPLES sampled worlds; options rollout, endgame, beta")
def _pimc(argument, rules, seed):
    from .pimc import make_pimc
    return make_pimc(argument, rules, seed)


@register("ismcts", category="search",
          description="single-observer information-set MCTS, ITERATIONS per decision; options rollout, endgame, c")
def _ismcts(argument, rules, seed):
    from .pimc import make_ismcts
    return make_ismcts(argument, rules, seed)


@register("search", category="search",
          description="the strongest search-only bot at <= 20 ms a decision (pimc:850); search:BUDGET scales it")
def _search(argument, rules, seed):
    from .pimc import make_search
    return make_search(argument, rules, seed)
