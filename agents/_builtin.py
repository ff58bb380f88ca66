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


@register("pimc")
def _pimc(argument, rules, seed):
    from .pimc import make_pimc
    return make_pimc(argument, rules, seed)


@register("ismcts")
def _ismcts(argument, rules, seed):
    from .pimc import make_ismcts
    return make_ismcts(argument, rules, seed)


@register("search")
def _search(argument, rules, seed):
    from .pimc import make_search
    return make_search(argument, rules, seed)
