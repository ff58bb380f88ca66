"""PPO self-play for Tien Gow (``tiengow train ppo --config ppo``), the algorithm in one file.

Config, network, the rollout (``Collector.collect``, with the four-seat credit assignment of
``_ppo_kernels``), GAE and the clipped update (``ppo_update``), and a plain single-process loop
(``train``); docs/training.md ("PPO, the algorithm") explains each. Beside it: ``ppo_pool.py``
seats the opponents, ``ppo_settings.py`` checks the config, and ``ppo_runner.py`` runs it for
real (overlapped collection, Ray workers, checkpoints, resume, background evaluation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from tiengow.agents.ppo import input_scale
from tiengow_env.combos import table_for
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet
from tiengow_env.vector import VectorEnv

from . import _ppo_kernels as PK
from .ppo_pool import SELF, Opponents, Seating, draw_seating, sample_actions
from .ppo_settings import RunSettings, check_settings


# ============================================================================ config
@dataclass
class PpoConfig(RunSettings):
    """One PPO run (``configs/ppo.yaml``); ``--set name=value`` overrides any field. The settings of
    the run around the algorithm (time limit, evaluation, checkpoints, outputs) are those of
    ``ppo_settings.RunSettings``."""

    rules: Any = "standard"
    """preset name, rules file, or a dict of switches"""
    hands: int = 1
    """hands per episode (1: each hand is an episode)"""
    seed: int = 1
    """seed of the deals, the network initialisation, the sampling and the pool draws"""
    total_steps: int = 50_000_000
    """environment steps (decisions of all seats, opponents included) to train for"""
    num_envs: int = 1024
    """environments stepped together"""
    rollout_steps: int = 64
    """env steps per env between updates (batch = num_envs x rollout_steps env steps)"""
    hidden: int = 256
    """width of each hidden layer of the MLP"""
    layers: int = 2
    """hidden layers of the MLP (shared by the policy and value heads)"""
    lr: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over total_steps"""
    gamma: float = 1.0
    """discount per decision of a seat (1: chips are chips, hands are short)"""
    gae_lambda: float = 0.95
    """GAE lambda along each seat's chain of decisions"""
    update_epochs: int = 2
    """passes over each batch"""
    minibatch_size: int = 16384
    """learner decisions per gradient step"""
    clip_coef: float = 0.2
    """PPO ratio clipping epsilon"""
    ent_coef: float = 0.01
    """entropy bonus weight"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clipping"""
    target_kl: float | None = None
    """stop an update's epochs early once the approximate KL exceeds this (None: never)"""
    reward_scale: float = 0.1
    """chips are multiplied by this for the value and advantage targets"""
    opponent_mix: float = 0.5
    """probability that an episode is a pool game (learner in one seat, a pool member in the others)"""
    pool_weights: dict = field(default_factory=lambda: {"greedy": 0.3, "expert": 0.0, "past": 0.7})
    """relative weights of the pool members: past (the learner's snapshots), greedy, expert, any agent spec"""
    pool_size: int = 5
    """past snapshots kept in the pool (the most recent ones)"""
    pool_interval: int = 20
    """updates between snapshots added to the pool"""
    threads: int = 1
    """torch intra-op threads of each of the two threads (collector, learner)"""

    @property
    def batch_steps(self) -> int:
        """Env steps of one rollout: ``num_envs * rollout_steps``."""
        return self.num_envs * self.rollout_steps

    @property
    def updates(self) -> int:
        """The updates of the run: ``total_steps`` in whole updates of ``batch_steps``, at least one."""
        return max(1, self.total_steps // self.batch_steps)

    def validate(self) -> None:
        """Raise ValueError on the first setting out of range (``ppo_settings.check_settings``)."""
        check_settings(self)


# ============================================================================ network
class PolicyNet(nn.Module):
    """MLP trunk shared by a masked policy head and a value head. Its state dict is the ``model``
    of the checkpoint format (``tiengow.agents.ppo``), which the agent plays in numpy."""

    def __init__(self, observation_size: int, num_actions: int, hidden: int, layers: int, scale: np.ndarray):
        super().__init__()
        self.register_buffer("input_scale", torch.as_tensor(scale, dtype=torch.float32))
        trunk, width = [], observation_size
        for _ in range(layers):
            trunk += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        self.trunk = nn.Sequential(*trunk)
        self.policy = nn.Linear(hidden, num_actions)
        self.value = nn.Linear(hidden, 1)
        for layer in trunk[::2]:
            nn.init.orthogonal_(layer.weight, math.sqrt(2))
            nn.init.zeros_(layer.bias)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)

    def forward(self, observation: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked log-probabilities (B, A), values (B,)); ``mask`` is bool (B, A)."""
        hidden = self.trunk(observation * self.input_scale)
        logits = self.policy(hidden).masked_fill(~mask, torch.finfo(torch.float32).min)
        return torch.log_softmax(logits, dim=-1), self.value(hidden).squeeze(-1)


def make_network(config: PpoConfig) -> PolicyNet:
    """A freshly initialised network for the config's rules, ``hidden`` and ``layers``."""
    rules = RuleSet.from_spec(config.rules)
    layout = ObservationLayout(rules.players, rules.hand_size)
    return PolicyNet(layout.size, table_for(rules).num_actions, config.hidden, config.layers, input_scale(rules))


def network_from_checkpoint(data: dict, path: str = "checkpoint") -> PolicyNet:
    """The checkpoint's network, in eval mode; ValueError if its config is not a valid
    ``PpoConfig``, or its weights do not fit the config or are not all finite."""
    try:
        config = PpoConfig.from_dict(dict(data["config"]))
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: its config is not a tiengow train ppo config ({err})") from None
    net = make_network(config)
    try:
        net.load_state_dict(data["model"])
    except RuntimeError as err:
        raise ValueError(f"{path}: the model weights do not fit its config ({str(err).splitlines()[0]})") from None
    if not all(bool(torch.isfinite(p).all()) for p in net.state_dict().values()):
        raise ValueError(f"{path}: the model weights are not all finite numbers (nan or inf): a damaged checkpoint")
    return net.eval()


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
        return cls(
            np.zeros((capacity, observation_size), np.float32),
            np.zeros((capacity, num_actions), bool),
            np.zeros(capacity, np.int64),
            np.zeros(capacity, np.float32),
            np.zeros(capacity, np.float32),
            np.zeros(capacity, np.float64),
            np.full(capacity, -1, np.int64),
            np.zeros(capacity, bool),
        )


class Collector:
    """Steps the VectorEnv for ``rollout_steps``; the learner acts where the seating says so, the
    opponent pool (``ppo_pool.Opponents``) everywhere else."""

    def __init__(
        self,
        config: PpoConfig,
        env: VectorEnv,
        seating: Seating,
        rng: np.random.Generator,
        sampling_seed: int | None = None,
    ):
        self.config, self.env, self.seating = config, env, seating
        capacity = env.num_envs * config.rollout_steps
        self.buffers = [Buffer.empty(capacity, env.observation_size, env.num_actions) for _ in range(2)]
        self.turn = 0
        # the collector's own sampling stream
        self.generator = torch.Generator().manual_seed(config.seed if sampling_seed is None else sampling_seed)
        self.actions = np.zeros(env.num_envs, dtype=np.int64)
        self.opponents = Opponents(config, env, seating, rng, self.generator)

    def collect(self, net: nn.Module, stats: dict) -> Buffer:
        """One rollout; per-kind episode chips of the learner are added to ``stats``."""
        env, seating = self.env, self.seating
        buffer = self.buffers[self.turn]
        self.turn ^= 1
        buffer.count = 0
        torch.set_num_threads(self.config.threads)
        pending, carry = seating.pending, seating.carry  # the credit bookkeeping (_ppo_kernels)
        # A chain still open from the last rollout continues into a decision no longer in the buffer.
        pending[pending >= 0] = PK.DROPPED
        observation, mask, to_act = env.observation, env.action_mask.view(bool), env.to_act
        for _ in range(self.config.rollout_steps):
            learner = (seating.kind == SELF) | (to_act == seating.learner_seat)
            rows = np.flatnonzero(learner)
            first, m = buffer.count, len(rows)
            buffer.observation[first : first + m] = observation[rows]
            buffer.mask[first : first + m] = mask[rows]
            with torch.no_grad():
                log_probs, values = net(
                    torch.from_numpy(buffer.observation[first : first + m]),
                    torch.from_numpy(buffer.mask[first : first + m]),
                )
                chosen = sample_actions(log_probs, self.generator)
                buffer.log_prob[first : first + m] = log_probs.gather(1, chosen[:, None]).squeeze(1).numpy()
            buffer.value[first : first + m] = values.numpy()
            buffer.action[first : first + m] = chosen.numpy()
            self.actions[rows] = buffer.action[first : first + m]
            PK.record_decisions(
                rows, to_act[rows], first, pending, carry, buffer.reward, buffer.next_decision, buffer.done
            )
            buffer.count += m
            if m < env.num_envs:
                self.opponents.act(np.flatnonzero(~learner), self.actions)
            _, _, _, rewards, terminated = env.step(self.actions)
            PK.assign_rewards(rewards, terminated, self.config.reward_scale, pending, carry, buffer.reward, buffer.done)
            ended = np.flatnonzero(terminated)
            if len(ended):
                stats["hands"] = stats.get("hands", 0) + len(ended) * env.hands
                self.opponents.episodes_ended(ended, stats)
        return buffer


def make_collector(
    config: PpoConfig, first_env: int = 0, num_envs: int | None = None, incarnation: int = 0
) -> Collector:
    """The collector of envs ``first_env ..`` of the run (all of them by default), with their seating
    and random streams. Env ``first_env + i`` deals exactly as env ``first_env + i`` of one
    VectorEnv over all the envs would; ``incarnation`` (a Ray worker restarted after it died)
    deals and draws afresh rather than repeat its first life."""
    num_envs = config.num_envs if num_envs is None else num_envs
    seeds = np.random.SeedSequence([config.seed, first_env, incarnation]).generate_state(2, np.uint64)
    deal_seed = config.seed + first_env if incarnation == 0 else int(seeds[0] >> np.uint64(2))
    env = VectorEnv(num_envs, RuleSet.from_spec(config.rules), seed=deal_seed, hands=config.hands)
    seating = Seating.empty(num_envs, env.players)
    rng = np.random.default_rng(seeds)
    draw_seating(config, rng, seating, np.arange(num_envs), 0, env.players)
    return Collector(config, env, seating, rng, sampling_seed=int(seeds[1] >> np.uint64(1)))


# ============================================================================ GAE and update
def ppo_update(
    config: PpoConfig, net: PolicyNet, optimizer: torch.optim.Optimizer, buffer: Buffer, generator: torch.Generator
) -> dict:
    """Per-seat GAE over the rollout, then clipped-PPO epochs (Schulman et al. 2017, eq. 7)."""
    count = buffer.count
    advantage = np.zeros(count, dtype=np.float32)
    valid = np.zeros(count, dtype=bool)
    PK.per_seat_gae(
        buffer.reward,
        buffer.value,
        buffer.next_decision,
        buffer.done,
        count,
        config.gamma,
        config.gae_lambda,
        advantage,
        valid,
    )
    index = np.flatnonzero(valid)
    observation = torch.from_numpy(buffer.observation[index])
    mask = torch.from_numpy(buffer.mask[index])
    action = torch.from_numpy(buffer.action[index])
    old_log_prob = torch.from_numpy(buffer.log_prob[index])
    advantages = torch.from_numpy(advantage[index])
    returns = advantages + torch.from_numpy(buffer.value[index])
    totals = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_fraction": 0.0}
    steps = 0
    for _ in range(config.update_epochs):
        order = torch.randperm(len(index), generator=generator)
        for start in range(0, len(index), config.minibatch_size):
            batch = order[start : start + config.minibatch_size]
            log_probs, values = net(observation[batch], mask[batch])
            new_log_prob = log_probs.gather(1, action[batch, None]).squeeze(1)
            log_ratio = new_log_prob - old_log_prob[batch]
            ratio = log_ratio.exp()
            adv = advantages[batch]  # normalised; a minibatch of one decision has no spread (its std is nan)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(batch) > 1 else adv - adv.mean()
            policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - config.clip_coef, 1 + config.clip_coef)).mean()
            value_loss = 0.5 * (values - returns[batch]).square().mean()
            probs = log_probs.exp()
            entropy = -(probs * log_probs.masked_fill(~mask[batch], 0.0)).sum(-1).mean()
            loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean().item()  # Schulman's k3 estimator
                totals["clip_fraction"] += ((ratio - 1).abs() > config.clip_coef).float().mean().item()
            totals["policy"] += policy_loss.item()
            totals["value"] += value_loss.item()
            totals["entropy"] += entropy.item()
            totals["approx_kl"] += approx_kl
            steps += 1
        if config.target_kl is not None and approx_kl > config.target_kl:
            break
    out = {k: v / max(steps, 1) for k, v in totals.items()}
    variance = returns.var().item()
    out["explained_variance"] = (
        1 - (returns - torch.from_numpy(buffer.value[index])).var().item() / variance if variance > 0 else float("nan")
    )
    out["decisions"] = len(index)
    out["dropped"] = count - len(index)
    return out


# ============================================================================ training loop
def setup(config: PpoConfig) -> tuple[PolicyNet, torch.optim.Optimizer, torch.Generator]:
    """The run's network, optimiser and minibatch-order generator, seeded from ``config.seed``."""
    torch.manual_seed(config.seed)
    net = make_network(config)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, eps=1e-5)
    return net, optimizer, torch.Generator().manual_seed(config.seed + 1)


def learn(
    config: PpoConfig,
    net: PolicyNet,
    optimizer: torch.optim.Optimizer,
    shuffle: torch.Generator,
    buffer: Buffer,
    update: int,
    global_step: int,
) -> dict:
    """Update ``update`` (0-based) of the run on one rollout: the annealed learning rate, then
    ``ppo_update``; ValueError when the weights stop being finite."""
    if config.anneal_lr:
        optimizer.param_groups[0]["lr"] = config.lr * (1.0 - update / config.updates)
    torch.set_num_threads(config.threads)
    net.train()
    losses = ppo_update(config, net, optimizer, buffer, shuffle)
    if not all(torch.isfinite(p).all() for p in net.parameters()):
        raise ValueError(
            f"the update after {global_step:,} env steps diverged: the weights are no longer "
            "finite numbers (try a smaller lr); this update is not written, and any checkpoint "
            "already written is kept"
        )
    return losses


def add_snapshot(config: PpoConfig, net: PolicyNet, pool: list[dict], update: int) -> list[dict]:
    """The past snapshots after ``update`` updates: the learner's weights join every ``pool_interval``."""
    if config.pool_size and update % config.pool_interval == 0:
        pool = (pool + [{k: v.detach().numpy().copy() for k, v in net.state_dict().items()}])[-config.pool_size :]
    return pool


def train(config: PpoConfig, progress: Callable[[int, dict], None] | None = None) -> PolicyNet:
    """The algorithm alone, in this process: collect, update, repeat for ``config.updates``
    updates; returns the network. ``ppo_runner.train`` runs the same steps in the same order
    (collection overlapped, checkpoints, evaluation, resume) and is what ``tiengow train ppo`` uses."""
    config.validate()
    torch.set_num_threads(config.threads)
    net, optimizer, shuffle = setup(config)
    collector = make_collector(config)
    behaviour = make_network(config).eval()  # the policy that collects: a copy of the weights before the update
    pool: list[dict] = []
    for update in range(config.updates):
        behaviour.load_state_dict(net.state_dict())
        stats: dict = {}
        buffer = collector.collect(behaviour, stats)
        losses = learn(config, net, optimizer, shuffle, buffer, update, update * config.batch_steps)
        pool = add_snapshot(config, net, pool, update + 1)
        collector.opponents.load_snapshots(pool, lambda: make_network(config))
        if progress:
            progress((update + 1) * config.batch_steps, {"update": update + 1, **losses})
    return net


__all__ = [
    "PpoConfig",
    "PolicyNet",
    "Buffer",
    "Collector",
    "train",
    "learn",
    "setup",
    "add_snapshot",
    "make_network",
    "make_collector",
    "network_from_checkpoint",
    "ppo_update",
]
