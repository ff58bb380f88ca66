"""PPO rollouts: the opponent pool, the collector and the rollout workers (thread and Ray).

* **Seating** (``draw_seating``). At each episode start an env becomes, with probability
  ``opponent_mix``, a pool game: the learner takes one random seat and the three others are one
  pool member, drawn by ``pool_weights``; otherwise all four seats are the learner (self-play).
  A pool member is ``past`` (the learner's snapshots, batched through torch) or any agent spec,
  frozen: ``greedy`` plays the compiled greedy policy (``_kernels.greedy_action``), an agent with
  its own ``act_batch`` (``ppo:PATH``) plays a batch at once, a searching agent (``pimc:8``) gets
  a ``Game`` of its env (it reads only what its seat may know), any other plays row by row.
* **Collector.** Steps a ``VectorEnv`` for ``rollout_steps``; the learner's decisions are
  batched through torch and stored in a ``Buffer`` with their credit (``_ppo_kernels``: each
  seat's chips go to its own last decision).
* **Rollout workers.** A ``RolloutWorker`` owns envs ``first_env ..`` of the run, their seating
  and random streams, and a copy of the policy. ``LocalRollouts`` runs one over all the envs in
  a thread of this process; ``RayRollouts`` runs K of them as Ray actors, each over a share of
  the envs, restarts a dead one, and concatenates their buffers. Workers take and give numpy
  arrays only (``numpy_tree``).

The network comes from the trainer (``network(config)``, ``training/ppo.py``): this module
knows only that it maps (observation, bool mask) to (masked log-probabilities, values).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn as nn

from tiengow.agents.base import Agent, make_agent
from tiengow_env import layout as L
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.vector import VectorEnv

from . import _ppo_kernels as PK
from .ppo_checkpoints import arrays_state, load_arrays, torch_tree

if TYPE_CHECKING:
    from .ppo import PpoConfig

SELF = 0  # an env's kind: 0 self-play, 1 + m pool member m (pool_members), then the past snapshots
Network = Callable[[Any], nn.Module]  # PpoConfig -> a fresh policy network


def sample_actions(log_probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from the masked distribution (masked actions have probability 0)."""
    return torch.multinomial(log_probs.exp(), 1, generator=generator).squeeze(1)


def env_array_names(env: VectorEnv) -> list[str]:
    """Every array of a VectorEnv's state (it has no state_dict of its own)."""
    return sorted(name for name, value in vars(env).items() if isinstance(value, np.ndarray) and value.ndim > 0
                  and name not in ("_offsets",))


# ============================================================================ opponent pool
def pool_members(config: PpoConfig) -> list[str]:
    """The frozen agents of the pool, in kind order: ``greedy`` and ``expert`` always (so that kinds
    keep their numbers whatever the weights), then the other agent specs of ``pool_weights``."""
    return ["greedy", "expert"] + [spec for spec in config.pool_weights if spec not in ("greedy", "expert", "past")]


def kind_name(config: PpoConfig, kind: int) -> str:
    """``self``, a pool member's spec, or ``past``."""
    members = pool_members(config)
    return "self" if kind == SELF else members[kind - 1] if kind <= len(members) else "past"


@dataclass
class Seating:
    """Who plays in each env: ``kind`` (SELF, 1 + pool member, then past snapshots) and the learner's seat."""

    kind: np.ndarray
    learner_seat: np.ndarray
    pending: np.ndarray  # credit bookkeeping, _ppo_kernels
    carry: np.ndarray


def draw_seating(config: PpoConfig, rng: np.random.Generator, seating: Seating, envs: np.ndarray,
                 snapshots: int, players: int) -> None:
    """Draw the opponents of a new episode in each of ``envs``: self-play, or (``opponent_mix``)
    one pool member at every seat but the learner's."""
    if len(envs) == 0:
        return
    weights = [config.pool_weights.get(spec, 0.0) for spec in pool_members(config)]
    weights += [config.pool_weights.get("past", 0.0) / snapshots] * snapshots if snapshots else []
    probabilities = np.asarray(weights, dtype=np.float64)
    pool_game = rng.random(len(envs)) < config.opponent_mix
    member = rng.choice(len(weights), size=len(envs), p=probabilities / probabilities.sum()) \
        if probabilities.sum() > 0 else np.zeros(len(envs), dtype=np.int64)
    seating.kind[envs] = np.where(pool_game, 1 + member, SELF)
    seating.learner_seat[envs] = rng.integers(0, players, size=len(envs))


# ============================================================================ rollout
@dataclass
class Buffer:
    """The learner's decisions of one rollout, in time order."""

    observation: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    log_prob: np.ndarray
    value: np.ndarray
    reward: np.ndarray
    next_decision: np.ndarray
    done: np.ndarray
    count: int = 0

    @classmethod
    def empty(cls, capacity: int, observation_size: int, num_actions: int) -> Buffer:
        return cls(np.zeros((capacity, observation_size), np.float32), np.zeros((capacity, num_actions), bool),
                   np.zeros(capacity, np.int64), np.zeros(capacity, np.float32), np.zeros(capacity, np.float32),
                   np.zeros(capacity, np.float64), np.full(capacity, -1, np.int64), np.zeros(capacity, bool))

    def filled(self) -> Buffer:
        """The decisions taken so far, as views (what a Ray worker sends back)."""
        return Buffer(*(getattr(self, name)[:self.count] for name in BUFFER_ARRAYS), count=self.count)

    @classmethod
    def concatenate(cls, parts: list[Buffer]) -> Buffer:
        """The rollouts of several workers as one buffer; ``next_decision`` indices are shifted by
        the start of their part (chains never cross workers: each has envs of its own)."""
        arrays = {name: np.concatenate([getattr(part, name)[:part.count] for part in parts])
                  for name in BUFFER_ARRAYS}
        start = 0
        for part in parts:
            chain = arrays["next_decision"][start:start + part.count]
            chain[chain >= 0] += start
            start += part.count
        return cls(**arrays, count=start)


BUFFER_ARRAYS = ("observation", "mask", "action", "log_prob", "value", "reward", "next_decision", "done")


class Collector:
    """Steps the VectorEnv for ``rollout_steps``; the learner acts where the seating says so."""

    def __init__(self, config: PpoConfig, env: VectorEnv, seating: Seating, rng: np.random.Generator,
                 sampling_seed: int | None = None):
        self.config, self.env, self.seating, self.rng = config, env, seating, rng
        capacity = env.num_envs * config.rollout_steps
        self.buffers = [Buffer.empty(capacity, env.observation_size, env.num_actions) for _ in range(2)]
        self.turn = 0
        # the collector's own sampling stream
        self.generator = torch.Generator().manual_seed(config.seed if sampling_seed is None else sampling_seed)
        self.actions = np.zeros(env.num_envs, dtype=np.int64)
        self.scratch = np.zeros(L.legal_len(env.combos.num_combos), dtype=np.int64)
        self.members = pool_members(config)
        self.agents: dict[int, Agent] = {}  # kind -> the frozen agent (greedy is compiled)
        for m, spec in enumerate(self.members):
            if spec != "greedy" and config.pool_weights.get(spec, 0.0) > 0:  # expert is deterministic: seed 0
                seed = 0 if spec == "expert" else int(rng.integers(2**31))
                self.agents[1 + m] = make_agent(spec, env.rules, seed=seed)
        self.game: Game | None = None  # a template for searching agents
        self.snapshots: list[nn.Module] = []

    def collect(self, net: nn.Module, stats: dict) -> Buffer:
        """One rollout; per-kind episode chips of the learner are added to ``stats``."""
        env, seating = self.env, self.seating
        buffer = self.buffers[self.turn]
        self.turn ^= 1
        buffer.count = 0
        torch.set_num_threads(self.config.threads)
        # A chain still open from the last rollout continues into a decision no longer in the buffer.
        seating.pending[seating.pending >= 0] = PK.DROPPED
        table, rules = env.combos.table, env.combos.rules_array
        observation, mask, to_act = env.observation, env.action_mask.view(bool), env.to_act
        for _ in range(self.config.rollout_steps):
            learner = (seating.kind == SELF) | (to_act == seating.learner_seat)
            rows = np.flatnonzero(learner)
            first, m = buffer.count, len(rows)
            buffer.observation[first:first + m] = observation[rows]
            buffer.mask[first:first + m] = mask[rows]
            with torch.no_grad():
                log_probs, values = net(torch.from_numpy(buffer.observation[first:first + m]),
                                        torch.from_numpy(buffer.mask[first:first + m]))
                chosen = sample_actions(log_probs, self.generator)
                buffer.log_prob[first:first + m] = log_probs.gather(1, chosen[:, None]).squeeze(1).numpy()
            buffer.value[first:first + m] = values.numpy()
            buffer.action[first:first + m] = chosen.numpy()
            self.actions[rows] = buffer.action[first:first + m]
            PK.record_decisions(rows, to_act[rows], first, seating.pending, seating.carry, buffer.reward,
                                buffer.next_decision, buffer.done)
            buffer.count += m
            if m < env.num_envs:
                self._opponent_actions(np.flatnonzero(~learner), table, rules)
            _, _, _, rewards, terminated = env.step(self.actions)
            PK.assign_rewards(rewards, terminated, self.config.reward_scale, seating.pending, seating.carry,
                              buffer.reward, buffer.done)
            ended = np.flatnonzero(terminated)
            if len(ended):
                stats["hands"] = stats.get("hands", 0) + len(ended) * env.hands
                for i in ended:
                    kind = int(seating.kind[i])
                    if kind != SELF:
                        stats.setdefault(kind_name(self.config, kind), []).append(
                            float(env.episode_net[i, seating.learner_seat[i]]))
                draw_seating(self.config, self.rng, seating, ended, len(self.snapshots), env.players)
        return buffer

    def _opponent_actions(self, rows: np.ndarray, table: np.ndarray, rules: np.ndarray) -> None:
        kind = self.seating.kind[rows]
        greedy = rows[kind == 1]
        if len(greedy):
            PK.greedy_actions(self.env.states, greedy, table, rules, self.scratch, self.actions)
        for member, agent in self.agents.items():
            mine = rows[kind == member]
            if not len(mine):
                continue
            if agent.uses_game:
                for i in mine:
                    self.actions[i] = agent.act(self.env.observation[i], self.env.action_mask[i], game=self._game(i))
            else:
                self.actions[mine] = agent.act_batch(self.env.observation[mine], self.env.action_mask[mine])
        past_kind = 1 + len(self.members)
        for j, snapshot in enumerate(self.snapshots):
            past = rows[kind == past_kind + j]
            if len(past):
                with torch.no_grad():
                    log_probs, _ = snapshot(torch.from_numpy(self.env.observation[past]),
                                            torch.from_numpy(self.env.action_mask.view(bool)[past]))
                    self.actions[past] = sample_actions(log_probs, self.generator).numpy()


    def _game(self, i: int) -> Game:
        """Env i's hand as a ``Game`` (a copy), for an agent that searches from it."""
        if self.game is None:
            self.game = Game(seed=0, rules=self.env.rules)
        game = self.game.clone()
        game.state[:] = self.env.states[i]
        return game

    def agent_states(self) -> dict:
        """The frozen agents' random streams (a stochastic one, such as ``random``, must resume exactly)."""
        return {str(kind): agent.rng.bit_generator.state for kind, agent in self.agents.items()}

    def load_agent_states(self, states: dict) -> None:
        for kind, state in states.items():
            self.agents[int(kind)].rng.bit_generator.state = state


# ============================================================================ rollout workers
class RolloutWorker:
    """Envs ``first_env .. first_env + num_envs - 1`` of the run's ``num_envs``, with their seating,
    random streams and a copy of the policy. Local training runs one in a thread of its own; on
    Ray, each rollout worker is one of these as an actor.

    Env ``first_env + i`` deals exactly as env ``first_env + i`` of a single VectorEnv over all the
    envs would. ``incarnation`` counts restarts of a dead worker: a restarted one deals and draws
    afresh rather than repeat its first life.
    """

    def __init__(self, config: PpoConfig, network: Network, first_env: int, num_envs: int, incarnation: int = 0):
        self.config, self.network = config, network
        torch.set_num_threads(config.threads)
        rules = RuleSet.from_spec(config.rules)
        seeds = np.random.SeedSequence([config.seed, first_env, incarnation]).generate_state(2, np.uint64)
        deal_seed = config.seed + first_env if incarnation == 0 else int(seeds[0] >> np.uint64(2))
        self.env = VectorEnv(num_envs, rules, seed=deal_seed, hands=config.hands)
        self.seating = Seating(np.zeros(num_envs, np.int64), np.zeros(num_envs, np.int64),
                               np.full((num_envs, self.env.players), PK.NO_DECISION, np.int64),
                               np.zeros((num_envs, self.env.players), np.float64))
        rng = np.random.default_rng(seeds)
        draw_seating(config, rng, self.seating, np.arange(num_envs), 0, self.env.players)
        self.collector = Collector(config, self.env, self.seating, rng, sampling_seed=int(seeds[1] >> np.uint64(1)))
        self.net = network(config).eval()
        self.pool_version = 0

    def collect(self, weights: dict, pool_version: int, pool: list[dict]) -> tuple[Buffer, dict]:
        """One rollout with these weights (``numpy_tree`` of a state dict); ``pool`` (past snapshots,
        likewise) is reloaded when its version changed."""
        torch.set_num_threads(self.config.threads)
        self.net.load_state_dict(torch_tree(weights))
        if pool_version != self.pool_version:
            self.collector.snapshots = [self.network(self.config).eval() for _ in pool]
            for snapshot, state in zip(self.collector.snapshots, pool):
                snapshot.load_state_dict(torch_tree(state))
            self.pool_version = pool_version
        stats: dict = {}
        return self.collector.collect(self.net, stats), stats

    def remote_collect(self, weights: dict, pool_version: int, pool: list[dict]) -> tuple[Buffer, dict]:
        """``collect``, returning only the filled part of the buffer (it is copied to the driver)."""
        buffer, stats = self.collect(weights, pool_version, pool)
        return buffer.filled(), stats

    def state(self) -> dict:
        """Everything a resumed run needs to continue these envs exactly."""
        return {"env": arrays_state(self.env, env_array_names(self.env)),
                "seating": arrays_state(self.seating, ["kind", "learner_seat", "pending", "carry"]),
                "numpy": self.collector.rng.bit_generator.state, "opponents": self.collector.agent_states(),
                "sampling": self.collector.generator.get_state().numpy()}

    def load_state(self, state: dict) -> None:
        load_arrays(self.env, state["env"])
        load_arrays(self.seating, state["seating"])
        self.collector.rng.bit_generator.state = state["numpy"]
        self.collector.load_agent_states(state.get("opponents", {}))
        self.collector.generator.set_state(torch.tensor(state["sampling"]))


class LocalRollouts:
    """One RolloutWorker over all the envs, collecting in a second thread of this process. Torch
    releases the GIL inside its kernels, so the collector and the learner each get a core."""

    def __init__(self, config: PpoConfig, network: Network):
        self.workers = [RolloutWorker(config, network, 0, config.num_envs)]
        self.job: tuple[threading.Thread, dict] | None = None

    def start(self, weights: dict, pool_version: int, pool: list[dict]) -> None:
        holder: dict = {}

        def run() -> None:
            try:
                holder["result"] = self.workers[0].collect(weights, pool_version, pool)
            except BaseException as err:  # re-raised in the learner's thread
                holder["error"] = err
        thread = threading.Thread(target=run, name="ppo-collector", daemon=True)
        thread.start()
        self.job = (thread, holder)

    def finish(self) -> tuple[Buffer, dict]:
        thread, holder = self.job
        self.job = None
        thread.join()
        if "error" in holder:
            raise holder["error"]
        return holder["result"]

    def state(self) -> list[dict]:
        return [worker.state() for worker in self.workers]

    def load_state(self, states: list[dict]) -> None:
        self.workers[0].load_state(states[0])

    def close(self) -> None:
        pass


class RayRollouts:
    """K rollout workers as Ray actors, the envs split between them; the learner stays here. Each
    rollout's weights (and the pool, when it changed) go out once through the object store. A
    worker that dies is replaced by a new incarnation, which collects the lost part again."""

    MAX_DEATHS = 3  # in a row, for one part of one rollout: then the failure is not chance

    def __init__(self, config: PpoConfig, network: Network, notice: Callable[[str], None], address: str,
                 workers: int):
        from tiengow.agents.infra import connect_ray
        self.ray = connect_ray(address)
        if not isinstance(workers, int) or not 1 <= workers <= config.num_envs:
            raise ValueError(f"--rollout-workers must be between 1 and num_envs ({config.num_envs}), got {workers!r}")
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        if workers > cpus:
            raise ValueError(f"{workers} rollout workers need {workers} CPUs (one each), and the Ray cluster has "
                             f"{cpus}; use --rollout-workers {max(cpus, 1)} or add machines (README: Scaling out)")
        self.config, self.network, self.notice = config, network, notice
        bounds = np.linspace(0, config.num_envs, workers + 1).astype(int)
        self.parts = [(int(a), int(b - a)) for a, b in zip(bounds[:-1], bounds[1:])]
        self.incarnations = [0] * workers
        self.actor_class = self.ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        self.workers = [self._spawn(k) for k in range(workers)]
        self.calls: list = []
        self.arguments: tuple = ()

    def _spawn(self, k: int):
        first_env, num_envs = self.parts[k]
        return self.actor_class.remote(self.config, self.network, first_env, num_envs, self.incarnations[k])

    def start(self, weights: dict, pool_version: int, pool: list[dict]) -> None:
        self.arguments = (self.ray.put(weights), pool_version, self.ray.put(pool))
        self.calls = [worker.remote_collect.remote(*self.arguments) for worker in self.workers]

    def finish(self) -> tuple[Buffer, dict]:
        buffers, stats = [], {}
        for k, call in enumerate(self.calls):
            buffer, part_stats = self._get(k, lambda worker: worker.remote_collect.remote(*self.arguments), call)
            buffers.append(buffer)
            for key, value in part_stats.items():
                stats[key] = stats.get(key, 0 if key == "hands" else []) + value
        self.calls = []
        return Buffer.concatenate(buffers), stats

    def state(self) -> list[dict]:
        return [self._get(k, lambda worker: worker.state.remote()) for k in range(len(self.workers))]

    def load_state(self, states: list[dict]) -> None:
        for k, state in enumerate(states):
            self._get(k, lambda worker, state=state: worker.load_state.remote(state))

    def _get(self, k: int, call: Callable[[Any], Any], pending: Any = None) -> Any:
        """The result of ``call(worker k)`` (or of its ``pending`` call). When the worker has died, a
        new incarnation takes its place (its envs start new episodes) and the call is made again."""
        from ray.exceptions import RayActorError
        for deaths in range(1, self.MAX_DEATHS + 1):
            try:
                return self.ray.get(pending if pending is not None else call(self.workers[k]))
            except RayActorError as err:
                if deaths == self.MAX_DEATHS:
                    raise ValueError(f"rollout worker {k} died {deaths} times in a row; last: "
                                     f"{str(err).splitlines()[0]}") from None
                pending = None
                self.incarnations[k] += 1
                first_env, num_envs = self.parts[k]
                self.notice(f"rollout worker {k} died; restarting it (envs {first_env}..{first_env + num_envs - 1} "
                            "start new episodes)")
                self.workers[k] = self._spawn(k)

    def close(self) -> None:
        for worker in self.workers:
            self.ray.kill(worker)




__all__ = ["Seating", "draw_seating", "Buffer", "Collector", "RolloutWorker", "LocalRollouts", "RayRollouts",
           "sample_actions", "pool_members", "kind_name", "SELF"]
