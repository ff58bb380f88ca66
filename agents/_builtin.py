"""Registers the built-in agents with ``agents.base.REGISTRY`` (``register`` is documented there).

Each registration names its spec, its kind (heuristic, search, learned) and one line for
``tiengow agents``. The modules of search and learned agents are imported only when one is built.
"""
from __future__ import annotations

from .base import register
from .baselines import ExpertAgent, GreedyAgent, RandomAgent


def _no_argument(kind: str, argument: str | None) -> None:
    if argument is not None:
        raise ValueError(f"agent {kind!r} takes no argument, got {kind}:{argument}")


@register("random", kind="heuristic", description="a uniformly random legal action")
def _random(argument, rules, seed):
    _no_argument("random", argument)
    return RandomAgent(rules, seed)


@register("greedy", kind="heuristic",
          description="leads its largest, strongest play; beats as cheaply as it can")
def _greedy(argument, rules, seed):
    _no_argument("greedy", argument)
    return GreedyAgent(rules, seed)


@register("expert", kind="heuristic",
          description="counts the unseen tiles: cashes sure winners, beats only when certain")
def _expert(argument, rules, seed):
    _no_argument("expert", argument)
    return ExpertAgent(rules, seed)


@register("cfr", kind="learned", usage="cfr[:PATH]",
          description="a CFR policy: the shipped full-game MCCFR one, or PATH (full game, or exact micro)")
def _cfr(argument, rules, seed):
    from .cfr import make_cfr_agent
    return make_cfr_agent(argument, rules, seed)


@register("ppo", kind="learned", usage="ppo[:PATH][,sample]",
          description="a PPO network: the shipped model or the checkpoint PATH (argmax, or ,sample)")
def _ppo(argument, rules, seed):
    from .ppo import make_ppo_agent
    return make_ppo_agent(argument, rules, seed)


@register("pimc", kind="search", usage="pimc[:SAMPLES[,POLICY]]",
          description="determinized search: SAMPLES deals (32), actions played out by POLICY (greedy)")
def _pimc(argument, rules, seed):
    from .pimc import DEFAULT_SAMPLES, PimcAgent
    if argument is None:
        return PimcAgent(rules, seed)
    samples, _, policy = argument.partition(",")
    if not samples.isdigit() or int(samples) < 1:
        raise ValueError(f"pimc takes a number of samples, as in pimc:{DEFAULT_SAMPLES} or "
                         f"pimc:{DEFAULT_SAMPLES},random; got pimc:{argument}")
    return PimcAgent(rules, seed, samples=int(samples), policy=policy or "greedy")
