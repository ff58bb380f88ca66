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


@register("pimc", kind="search", usage="pimc[:SAMPLES][:KEY=VALUE]...",
          description="determinized search, SAMPLES worlds (32); "
                      "keys rollout, epsilon, own_epsilon, endgame, beta, halving, paired, infer")
def _pimc(argument, rules, seed):
    from .pimc import make_pimc
    return make_pimc(argument, rules, seed)


@register("ismcts", kind="search", usage="ismcts[:ITERATIONS][:KEY=VALUE]...",
          description="information-set MCTS, ITERATIONS (1000); keys rollout, epsilon, own_epsilon, endgame, c, infer")
def _ismcts(argument, rules, seed):
    from .pimc import make_ismcts
    return make_ismcts(argument, rules, seed)


@register("search", kind="search", usage="search[:BUDGET]",
          description="the strongest search-only bot, <= 20 ms a decision (pimc:1000:epsilon=0.5:halving=1)")
def _search(argument, rules, seed):
    from .pimc import make_search
    return make_search(argument, rules, seed)


@register("champion", kind="learned", usage="champion[:SAMPLES][:KEY=VALUE]...",
          description="the strongest bot shipped: PIMC guided by the ppo policy, in worlds drawn by the tile "
                      "locator; keys weight, epsilon, value, worlds, endgame, locate, locator, belief, particles, "
                      "prior")
def _champion(argument, rules, seed):
    from .champion import make_champion
    return make_champion(argument, rules, seed)
