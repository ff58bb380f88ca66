"""The opponent pool of a PPO run (``training/ppo.py``): who sits at each env's table, and the moves
of the seats that are not the learner's.

At each episode start an env becomes, with probability ``opponent_mix``, a pool game: the learner
takes one random seat and the three others are one pool member, drawn by ``pool_weights``;
otherwise all four seats are the current learner (self-play). An env's *kind* says which:
``SELF``, then ``1 + m`` for pool member m (``pool_members``: ``greedy``, ``expert``, then the
other agent specs), then one kind per past snapshot of the learner. docs/training.md ("The
opponent pool") says what each member costs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from tiengow.agents.base import Agent, make_agent
from tiengow_env import layout as L
from tiengow_env.game import Game
from tiengow_env.vector import VectorEnv

from . import _ppo_kernels as PK

SELF = 0  # an env's kind: 0 self-play, 1 + m pool member m (pool_members), then the past snapshots


def pool_members(config: Any) -> list[str]:
    """The frozen agents of the pool, in kind order: ``greedy`` and ``expert`` always (so that kinds
    keep their numbers whatever the weights), then the other agent specs of ``pool_weights``."""
    return ["greedy", "expert"] + [spec for spec in config.pool_weights if spec not in ("greedy", "expert", "past")]


def kind_name(config: Any, kind: int) -> str:
    """``self``, a pool member's spec, or ``past``."""
    members = pool_members(config)
    return "self" if kind == SELF else members[kind - 1] if kind <= len(members) else "past"


@dataclass
class Seating:
    """Who plays in each env: ``kind`` (SELF, 1 + pool member, then past snapshots) and the learner's
    seat; beside them, per env and seat, the credit bookkeeping of ``_ppo_kernels``."""

    kind: np.ndarray
    learner_seat: np.ndarray
    pending: np.ndarray
    carry: np.ndarray

    @classmethod
    def empty(cls, num_envs: int, players: int) -> Seating:
        """All self-play, learner at seat 0, no decision pending."""
        return cls(
            np.zeros(num_envs, np.int64),
            np.zeros(num_envs, np.int64),
            np.full((num_envs, players), PK.NO_DECISION, np.int64),
            np.zeros((num_envs, players), np.float64),
        )


def draw_seating(
    config: Any, rng: np.random.Generator, seating: Seating, envs: np.ndarray, snapshots: int, players: int
) -> None:
    """Draw the opponents of a new episode in each of ``envs``: self-play, or (``opponent_mix``)
    one pool member at every seat but the learner's."""
    if len(envs) == 0:
        return
    weights = [config.pool_weights.get(spec, 0.0) for spec in pool_members(config)]
    weights += [config.pool_weights.get("past", 0.0) / snapshots] * snapshots if snapshots else []
    probabilities = np.asarray(weights, dtype=np.float64)
    pool_game = rng.random(len(envs)) < config.opponent_mix
    member = (
        rng.choice(len(weights), size=len(envs), p=probabilities / probabilities.sum())
        if probabilities.sum() > 0
        else np.zeros(len(envs), dtype=np.int64)
    )
    seating.kind[envs] = np.where(pool_game, 1 + member, SELF)
    seating.learner_seat[envs] = rng.integers(0, players, size=len(envs))


def sample_actions(log_probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from the masked distribution (masked actions have probability 0)."""
    return torch.multinomial(log_probs.exp(), 1, generator=generator).squeeze(1)


class Opponents:
    """The pool members and past snapshots of one collector's envs: their moves, and a new seating
    for each episode that ends. ``rng`` draws the seating and the agents' seeds; ``generator`` (the
    collector's sampling stream) samples the snapshots' moves."""

    def __init__(
        self, config: Any, env: VectorEnv, seating: Seating, rng: np.random.Generator, generator: torch.Generator
    ):
        self.config, self.env, self.seating, self.rng, self.generator = config, env, seating, rng, generator
        self.scratch = np.zeros(L.legal_len(env.combos.num_combos), dtype=np.int64)
        self.members = pool_members(config)
        self.agents: dict[int, Agent] = {}  # kind -> the frozen agent (greedy is compiled)
        for m, spec in enumerate(self.members):
            if spec != "greedy" and config.pool_weights.get(spec, 0.0) > 0:  # expert is deterministic: seed 0
                seed = 0 if spec == "expert" else int(rng.integers(2**31))
                self.agents[1 + m] = make_agent(spec, env.rules, seed=seed)
        self.game: Game | None = None  # a template for searching agents
        self.snapshots: list[nn.Module] = []
        self.pool: list[dict] = []  # the weights of the snapshots

    def load_snapshots(self, pool: list[dict], network: Callable[[], nn.Module]) -> None:
        """Play the past snapshots ``pool`` (state dicts as numpy), when they changed."""
        if pool is self.pool:
            return
        self.snapshots = [network().eval() for _ in pool]
        for snapshot, state in zip(self.snapshots, pool):
            snapshot.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
        self.pool = pool

    def act(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """``actions[i]`` for each env i of ``rows``, where a pool member or snapshot is to act."""
        kind = self.seating.kind[rows]
        greedy = rows[kind == 1]
        if len(greedy):
            combos = self.env.combos
            PK.greedy_actions(self.env.states, greedy, combos.table, combos.rules_array, self.scratch, actions)
        for member, agent in self.agents.items():
            mine = rows[kind == member]
            if not len(mine):
                continue
            if agent.uses_game:
                for i in mine:
                    actions[i] = agent.act(self.env.observation[i], self.env.action_mask[i], game=self._game(i))
            else:
                actions[mine] = agent.act_batch(self.env.observation[mine], self.env.action_mask[mine])
        past_kind = 1 + len(self.members)
        for j, snapshot in enumerate(self.snapshots):
            past = rows[kind == past_kind + j]
            if len(past):
                with torch.no_grad():
                    log_probs, _ = snapshot(
                        torch.from_numpy(self.env.observation[past]),
                        torch.from_numpy(self.env.action_mask.view(bool)[past]),
                    )
                    actions[past] = sample_actions(log_probs, self.generator).numpy()

    def _game(self, i: int) -> Game:
        """Env i's hand as a ``Game`` (a copy), for an agent that searches from it."""
        if self.game is None:
            self.game = Game(seed=0, rules=self.env.rules)
        game = self.game.clone()
        game.state[:] = self.env.states[i]
        return game

    def episodes_ended(self, ended: np.ndarray, stats: dict) -> None:
        """The learner's chips of each pool game among ``ended`` go to ``stats`` under the member's
        name; every env of ``ended`` gets a new seating."""
        for i in ended:
            kind = int(self.seating.kind[i])
            if kind != SELF:
                chips = float(self.env.episode_net[i, self.seating.learner_seat[i]])
                stats.setdefault(kind_name(self.config, kind), []).append(chips)
        draw_seating(self.config, self.rng, self.seating, ended, len(self.snapshots), self.env.players)

    def agent_states(self) -> dict:
        """The frozen agents' random streams (a stochastic one, such as ``random``, must resume exactly)."""
        return {str(kind): agent.rng.bit_generator.state for kind, agent in self.agents.items()}

    def load_agent_states(self, states: dict) -> None:
        for kind, state in states.items():
            self.agents[int(kind)].rng.bit_generator.state = state


__all__ = ["SELF", "Seating", "Opponents", "draw_seating", "kind_name", "pool_members", "sample_actions"]
