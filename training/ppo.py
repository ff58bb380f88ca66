"""PPO self-play for Tien Gow (``tiengow train ppo --config configs/ppo.yaml``), in one file.

Reading order: config, network, checkpoints, opponent pool, rollout (with the four-seat credit
assignment), update, the training loop.

* **Policy.** One MLP with shared parameters for all four seats (each seat sees its own
  observation, seats relative to itself), a masked categorical policy head (illegal logits are
  set to the lowest float, so they get probability exactly 0 and no gradient) and a value head.
* **Environment.** ``tiengow_env.vector.VectorEnv``: N hands stepped in compiled code. Every
  env step is one decision of one seat; the learner's decisions are batched through torch.
* **Four-seat credit assignment** (``_ppo_kernels``). Each seat's trajectory is its own chain of
  decisions. The chips paid to seat s by a step (a trick bonus, the settlement), whoever acted,
  are added to s's *last decision before them*; chips paid before s's first decision of an episode
  (a hand decided at the deal) go to that first decision. When an episode ends, every seat's chain
  ends there (done). GAE (gamma, lambda) then runs along each chain: V(next) is the value of the
  same seat's next decision in the same env. A chain cut by the end of the rollout bootstraps
  from its last decision, which is then left out of the update (it has no complete target).
* **Opponent pool.** At each episode start an env becomes, with probability ``opponent_mix``, a
  pool game: the learner takes one random seat and the three others are one pool member, drawn by
  ``pool_weights``: ``greedy`` (the compiled greedy policy, ``_kernels.greedy_action``),
  ``expert`` (the Python heuristic, slow: keep its weight small) or ``past`` (one of the last
  ``pool_size`` snapshots of the learner, taken every ``pool_interval`` updates, run batched
  through torch). Otherwise all four seats are the current learner (self-play).
* **Two cores.** Collection and learning overlap: while the learner updates on rollout k, a
  second thread collects rollout k + 1 with a copy of the weights before that update (a policy
  lag of one update; the PPO ratio uses the stored behaviour log-probabilities, so it stays
  correct). Torch releases the GIL inside its kernels, so each thread gets a core; each runs
  torch single-threaded (``threads`` = 1 each: on a busy 2-core machine, intra-op threads
  mostly wait on each other). The pipeline drains at every checkpoint, so a resumed run follows
  the same schedule. The duplicate evaluation (``eval_interval``) runs in a spawned process at
  a lower priority, so training goes on while it plays.
* **Rollout workers.** A ``RolloutWorker`` owns envs ``first_env ..`` of the run, their seating
  and random streams, and a copy of the policy. Local training runs one over all the envs in
  the collector thread (``LocalRollouts``); ``--ray`` runs K of them as Ray actors
  (``RayRollouts``), each over a share of the envs, and concatenates their buffers. The loop
  above is the same for both. Workers take and give numpy arrays only (``numpy_tree``).
* **Checkpoints** (``torch.save``, atomically: a temporary file, then ``os.replace``) hold
  ``format``, ``version``, the config, the model, the optimiser, the numpy and torch RNG states,
  the env arrays, the credit bookkeeping, the pool and the learning curve: ``--resume`` continues
  exactly. ``load_checkpoint`` refuses a corrupt file or a config it does not fit.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import math
import multiprocessing as mp
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from tiengow_env import layout as L
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet
from tiengow_env.vector import VectorEnv

from . import _ppo_kernels as PK
from .config import build, read_settings

FORMAT = "tiengow-ppo-checkpoint"
VERSION = 1
POOL_KINDS = ("greedy", "expert", "past")
SELF, GREEDY, EXPERT, PAST = 0, 1, 2, 3  # an env's opponent kind; PAST + j is snapshot j
# Settings a checkpoint's network, optimiser and env arrays depend on: resuming with others is refused.
STRUCTURAL = ("rules", "hands", "hidden", "layers", "num_envs")


# ============================================================================ config
@dataclass
class PpoConfig:
    """One PPO run (``configs/ppo.yaml``); ``--set name=value`` overrides any field."""

    rules: Any = "standard"
    """preset name, rules file, or a dict of switches"""
    hands: int = 1
    """hands per episode (1: each hand is an episode)"""
    seed: int = 1
    """seed of the deals, the network initialisation, the sampling and the pool draws"""
    total_steps: int = 50_000_000
    """environment steps (decisions of all seats, opponents included) to train for"""
    max_seconds: float | None = None
    """stop earlier, with a checkpoint, after this many seconds of training (None: no limit)"""
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
    """relative weights of the pool members: greedy (compiled), expert (Python, slow), past snapshots"""
    pool_size: int = 5
    """past snapshots kept in the pool (the most recent ones)"""
    pool_interval: int = 20
    """updates between snapshots added to the pool"""
    eval_interval: int = 25
    """updates between duplicate evaluations (0: none); they run in a background process"""
    eval_deals: int = 200
    """duplicate deals per opponent at each evaluation"""
    eval_opponents: list = field(default_factory=lambda: ["greedy", "expert"])
    """agents the evaluation plays against (three copies each)"""
    eval_seed: int = 2024
    """seed of the evaluation deals (the same deals every time)"""
    checkpoint_interval: int = 10
    """updates between checkpoints (and one at the end)"""
    out: str = "runs/ppo/ppo.pt"
    """checkpoint path (written atomically)"""
    log_dir: str | None = "runs/ppo"
    """TensorBoard directory (None: no logging); the learning curve goes to curve.json there"""
    threads: int = 1
    """torch intra-op threads of each of the two threads (collector, learner)"""
    overlap: bool = True
    """collect the next rollout while the learner updates (policy lag 1); False: strictly alternate"""

    @classmethod
    def from_file(cls, path: str | None, overrides: list[str] | None = None) -> PpoConfig:
        """Read a YAML config (None: the defaults), then apply ``name=value`` overrides (values in
        YAML syntax). ValueError naming the file or override and the problem."""
        data = read_settings(path) if path is not None else {}
        data.update(parse_overrides(overrides or []))
        try:
            return cls.from_dict(data)
        except ValueError as err:
            raise ValueError(f"config {path or '(defaults)'}: {err}") from None

    @classmethod
    def from_dict(cls, data: dict) -> PpoConfig:
        return build(cls, data)

    def validate(self) -> None:
        """Raise ValueError on the first setting out of range."""
        RuleSet.from_spec(self.rules)
        positive = ("hands", "total_steps", "num_envs", "rollout_steps", "hidden", "layers", "update_epochs",
                    "minibatch_size", "pool_interval", "checkpoint_interval", "threads")
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        for name in ("lr", "clip_coef", "reward_scale"):
            if not isinstance(getattr(self, name), (int, float)) or getattr(self, name) <= 0:
                raise ValueError(f"{name} must be a number > 0, got {getattr(self, name)!r}")
        for name in ("gamma", "gae_lambda", "opponent_mix"):
            if not isinstance(getattr(self, name), (int, float)) or not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be a number in [0, 1], got {getattr(self, name)!r}")
        if not isinstance(self.pool_weights, dict) or set(self.pool_weights) - set(POOL_KINDS) \
                or any(not isinstance(w, (int, float)) or w < 0 for w in self.pool_weights.values()):
            raise ValueError(f"pool_weights maps {', '.join(POOL_KINDS)} to weights >= 0, got {self.pool_weights!r}")
        if self.opponent_mix > 0 and not sum(self.pool_weights.get(k, 0) for k in ("greedy", "expert")) > 0:
            raise ValueError("pool_weights needs greedy or expert > 0 when opponent_mix > 0 (the pool has no "
                             "past snapshot before the first pool_interval updates)")
        if not isinstance(self.eval_interval, int) or self.eval_interval < 0:
            raise ValueError(f"eval_interval must be an integer >= 0, got {self.eval_interval!r}")
        if self.pool_size < 0:
            raise ValueError(f"pool_size must be >= 0, got {self.pool_size!r}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def parse_overrides(items: list[str]) -> dict:
    """``["lr=1e-4", "pool_weights={greedy: 1}"]`` -> ``{"lr": 0.0001, ...}`` (values read as YAML)."""
    import yaml
    out = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set takes name=value, as in --set lr=1e-4; got {item!r}")
        try:
            value = yaml.safe_load(text)
        except Exception as err:  # yaml's own error types
            raise ValueError(f"--set {item!r}: the value is not valid YAML ({err})") from None
        if isinstance(value, str):  # YAML reads 1e-4 as a string; numbers people type should be numbers
            try:
                value = float(value)
            except ValueError:
                pass
        out[name.strip()] = value
    return out


# ============================================================================ network
def input_scale(rules: RuleSet) -> np.ndarray:
    """Per-feature factor applied to the observation: chips and streak are unbounded counts, the
    rest is already of order 1."""
    layout = ObservationLayout(rules.players, rules.hand_size)
    scale = np.ones(layout.size, dtype=np.float32)
    for name, view in layout.views(np.arange(layout.size)).items():
        if name in ("chips", "streak"):
            scale[view.ravel()] = 0.1
        elif name in ("columns", "tiles_left", "acted", "owed"):
            scale[view.ravel()] = 1.0 / max(rules.hand_size / 2, 1)
    return scale


class PolicyNet(nn.Module):
    """MLP trunk shared by a masked policy head and a value head."""

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


def sample_actions(log_probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from the masked distribution (masked actions have probability 0)."""
    return torch.multinomial(log_probs.exp(), 1, generator=generator).squeeze(1)


def make_network(config: PpoConfig) -> PolicyNet:
    rules = RuleSet.from_spec(config.rules)
    layout = ObservationLayout(rules.players, rules.hand_size)
    from tiengow_env.combos import table_for
    return PolicyNet(layout.size, table_for(rules).num_actions, config.hidden, config.layers, input_scale(rules))


# ============================================================================ checkpoints
def save_checkpoint(path: str, payload: dict) -> None:
    """``torch.save`` to a temporary file beside ``path``, then ``os.replace``: a reader never
    sees half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".ppo-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save({"format": FORMAT, "version": VERSION, **payload}, f)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a checkpoint is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_checkpoint(path: str, config: PpoConfig | None = None) -> dict:
    """Read a checkpoint on the CPU. ValueError when the file is missing, corrupt, not a PPO
    checkpoint, or (given ``config``) trained with other structural settings."""
    if not os.path.exists(path):
        raise ValueError(f"PPO checkpoint {path} does not exist")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types for a damaged zip or pickle
        # torch's own text runs to several long sentences about weights_only: one clause is enough
        raise ValueError(f"{path} is not a readable PPO checkpoint (not a PyTorch file of tensors, or "
                         f"corrupt or truncated: {type(err).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a PPO checkpoint (expected format {FORMAT!r})")
    if data.get("version") != VERSION:
        raise ValueError(f"{path} is a version {data.get('version')} PPO checkpoint; this code reads version {VERSION}")
    missing = [k for k in ("config", "model") if k not in data]
    if missing:
        raise ValueError(f"{path} is a damaged PPO checkpoint: it has no {missing[0]!r}")
    if config is not None:
        saved = data["config"]
        wrong = [f"{name}: checkpoint {saved.get(name)!r}, config {getattr(config, name)!r}"
                 for name in STRUCTURAL if saved.get(name) != getattr(config, name)]
        if wrong:
            raise ValueError(f"{path} does not fit this config (" + "; ".join(wrong) + "); resume with the "
                             "checkpoint's settings for these fields")
    return data


def export_policy(checkpoint: str, out: str) -> None:
    """Write the playing part of a training checkpoint (config, model, progress and learning curve;
    no optimiser, env or pool state) to ``out``: what ships as ``agents/policies/ppo.pt``."""
    data = load_checkpoint(checkpoint)
    save_checkpoint(out, {key: data[key] for key in ("config", "model", "update", "global_step", "elapsed", "curve")
                          if key in data})


def network_from_checkpoint(data: dict, path: str = "checkpoint") -> PolicyNet:
    """The checkpoint's network, in eval mode; ValueError if its weights do not fit its config."""
    config = PpoConfig.from_dict(dict(data["config"]))
    net = make_network(config)
    try:
        net.load_state_dict(data["model"])
    except RuntimeError as err:
        raise ValueError(f"{path}: the model weights do not fit its config ({str(err).splitlines()[0]})") from None
    return net.eval()


def _arrays_state(owner: Any, names: list[str]) -> dict:
    return {name: np.array(getattr(owner, name), copy=True) for name in names}


def _load_arrays(owner: Any, saved: dict) -> None:
    for name, value in saved.items():
        target = getattr(owner, name)
        if target.shape != value.shape or target.dtype != value.dtype:
            raise ValueError(f"checkpoint array {name} is {value.dtype}{value.shape}, expected "
                             f"{target.dtype}{target.shape}")
        target[...] = value


def numpy_tree(tree: Any) -> Any:
    """Tensors as numpy arrays, through dicts and lists. Rollout workers take and give numpy only:
    Ray moves numpy arrays without pickling, and the learner's tensors stay its own."""
    if isinstance(tree, torch.Tensor):
        return tree.detach().numpy().copy()
    if isinstance(tree, dict):
        return {key: numpy_tree(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [numpy_tree(value) for value in tree]
    return tree


def torch_tree(tree: Any) -> Any:
    """Numpy arrays as tensors (copies), through dicts and lists: what ``torch.save`` keeps."""
    if isinstance(tree, np.ndarray):
        return torch.tensor(tree)
    if isinstance(tree, dict):
        return {key: torch_tree(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [torch_tree(value) for value in tree]
    return tree


def env_array_names(env: VectorEnv) -> list[str]:
    """Every array of a VectorEnv's state (it has no state_dict of its own)."""
    return sorted(name for name, value in vars(env).items() if isinstance(value, np.ndarray) and value.ndim > 0
                  and name not in ("_offsets",))


# ============================================================================ opponent pool
@dataclass
class Seating:
    """Who plays in each env: ``kind`` (SELF, GREEDY, EXPERT, PAST + j) and the learner's seat."""

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
    weights = [config.pool_weights.get("greedy", 0.0), config.pool_weights.get("expert", 0.0)]
    weights += [config.pool_weights.get("past", 0.0) / snapshots] * snapshots if snapshots else []
    probabilities = np.asarray(weights, dtype=np.float64)
    pool_game = rng.random(len(envs)) < config.opponent_mix
    member = rng.choice(len(weights), size=len(envs), p=probabilities / probabilities.sum()) \
        if probabilities.sum() > 0 else np.zeros(len(envs), dtype=np.int64)
    seating.kind[envs] = np.where(pool_game, GREEDY + member, SELF)
    seating.learner_seat[envs] = rng.integers(0, players, size=len(envs))


def kind_name(kind: int) -> str:
    return {SELF: "self", GREEDY: "greedy", EXPERT: "expert"}.get(kind, "past")


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
        self.expert = None
        self.snapshots: list[PolicyNet] = []

    def collect(self, net: PolicyNet, stats: dict) -> Buffer:
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
                        stats.setdefault(kind_name(kind), []).append(
                            float(env.episode_net[i, seating.learner_seat[i]]))
                draw_seating(self.config, self.rng, seating, ended, len(self.snapshots), env.players)
        return buffer

    def _opponent_actions(self, rows: np.ndarray, table: np.ndarray, rules: np.ndarray) -> None:
        kind = self.seating.kind[rows]
        greedy = rows[kind == GREEDY]
        if len(greedy):
            PK.greedy_actions(self.env.states, greedy, table, rules, self.scratch, self.actions)
        expert = rows[kind == EXPERT]
        if len(expert):
            if self.expert is None:
                from tiengow.agents.baselines import ExpertAgent
                self.expert = ExpertAgent(self.env.rules)
            for i in expert:
                self.actions[i] = self.expert.act(self.env.observation[i], self.env.action_mask[i])
        for j, snapshot in enumerate(self.snapshots):
            past = rows[kind == PAST + j]
            if len(past):
                with torch.no_grad():
                    log_probs, _ = snapshot(torch.from_numpy(self.env.observation[past]),
                                            torch.from_numpy(self.env.action_mask.view(bool)[past]))
                    self.actions[past] = sample_actions(log_probs, self.generator).numpy()


# ============================================================================ rollout workers
class RolloutWorker:
    """Envs ``first_env .. first_env + num_envs - 1`` of the run's ``num_envs``, with their seating,
    random streams and a copy of the policy. Local training runs one in a thread of its own; on
    Ray, each rollout worker is one of these as an actor.

    Env ``first_env + i`` deals exactly as env ``first_env + i`` of a single VectorEnv over all the
    envs would. ``incarnation`` counts restarts of a dead worker: a restarted one deals and draws
    afresh rather than repeat its first life.
    """

    def __init__(self, config: dict, first_env: int, num_envs: int, incarnation: int = 0):
        self.config = config = PpoConfig.from_dict(dict(config))
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
        self.net = make_network(config).eval()
        self.pool_version = 0

    def collect(self, weights: dict, pool_version: int, pool: list[dict]) -> tuple[Buffer, dict]:
        """One rollout with these weights (``numpy_tree`` of a state dict); ``pool`` (past snapshots,
        likewise) is reloaded when its version changed."""
        torch.set_num_threads(self.config.threads)
        self.net.load_state_dict(torch_tree(weights))
        if pool_version != self.pool_version:
            self.collector.snapshots = [make_network(self.config).eval() for _ in pool]
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
        return {"env": _arrays_state(self.env, env_array_names(self.env)),
                "seating": _arrays_state(self.seating, ["kind", "learner_seat", "pending", "carry"]),
                "numpy": self.collector.rng.bit_generator.state,
                "sampling": self.collector.generator.get_state().numpy()}

    def load_state(self, state: dict) -> None:
        _load_arrays(self.env, state["env"])
        _load_arrays(self.seating, state["seating"])
        self.collector.rng.bit_generator.state = state["numpy"]
        self.collector.generator.set_state(torch.tensor(state["sampling"]))


class LocalRollouts:
    """One RolloutWorker over all the envs, collecting in a second thread of this process. Torch
    releases the GIL inside its kernels, so the collector and the learner each get a core."""

    def __init__(self, config: PpoConfig):
        self.workers = [RolloutWorker(config.to_dict(), 0, config.num_envs)]
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

    def __init__(self, config: PpoConfig, notice: Callable[[str], None], address: str, workers: int):
        from tiengow.agents.infra import connect_ray
        self.ray = connect_ray(address)
        if not isinstance(workers, int) or not 1 <= workers <= config.num_envs:
            raise ValueError(f"--rollout-workers must be between 1 and num_envs ({config.num_envs}), got {workers!r}")
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        if workers > cpus:
            raise ValueError(f"{workers} rollout workers need {workers} CPUs (one each), and the Ray cluster has "
                             f"{cpus}; use --rollout-workers {max(cpus, 1)} or add machines (README: Scaling out)")
        self.config, self.notice = config.to_dict(), notice
        bounds = np.linspace(0, config.num_envs, workers + 1).astype(int)
        self.parts = [(int(a), int(b - a)) for a, b in zip(bounds[:-1], bounds[1:])]
        self.incarnations = [0] * workers
        self.actor_class = self.ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        self.workers = [self._spawn(k) for k in range(workers)]
        self.calls: list = []
        self.arguments: tuple = ()

    def _spawn(self, k: int):
        first_env, num_envs = self.parts[k]
        return self.actor_class.remote(self.config, first_env, num_envs, self.incarnations[k])

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


# ============================================================================ update
def ppo_update(config: PpoConfig, net: PolicyNet, optimizer: torch.optim.Optimizer, buffer: Buffer,
               generator: torch.Generator) -> dict:
    """Per-seat GAE over the rollout, then clipped-PPO epochs (Schulman et al. 2017, eq. 7)."""
    count = buffer.count
    advantage = np.zeros(count, dtype=np.float32)
    valid = np.zeros(count, dtype=bool)
    PK.per_seat_gae(buffer.reward, buffer.value, buffer.next_decision, buffer.done, count, config.gamma,
                    config.gae_lambda, advantage, valid)
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
            batch = order[start:start + config.minibatch_size]
            log_probs, values = net(observation[batch], mask[batch])
            new_log_prob = log_probs.gather(1, action[batch, None]).squeeze(1)
            log_ratio = new_log_prob - old_log_prob[batch]
            ratio = log_ratio.exp()
            adv = advantages[batch]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
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
    out["explained_variance"] = 1 - (returns - torch.from_numpy(buffer.value[index])).var().item() / variance \
        if variance > 0 else float("nan")
    out["decisions"] = len(index)
    out["dropped"] = count - len(index)
    return out


# ============================================================================ evaluation
def _evaluate_snapshot(path: str, opponents: list[str], deals: int, seed: int, rules: Any) -> list[dict]:
    """Runs in the evaluation process: duplicate chips per hand of ``ppo:path`` against each opponent."""
    try:
        os.nice(5)  # let training have the cores first
    except OSError:
        pass
    torch.set_num_threads(1)
    from tiengow.agents.arena import evaluate
    from tiengow.agents.ppo import register_ppo
    register_ppo()
    results = []
    for opponent in opponents:
        result = evaluate(f"ppo:{path}", opponent, deals, seed=seed, rules=rules, workers=1)
        results.append({"opponent": opponent, "chips_per_hand": result.chips_per_hand, "ci95": result.ci95})
    os.unlink(path)
    return results


def plot_curve(curve: list[dict], path: str, title: str = "PPO learning curve") -> None:
    """Write the evaluations of a run (``curve.json``, or a checkpoint's ``curve``) as a PNG: duplicate
    chips per hand against each opponent, with the 95% CI, over the minutes of training."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for opponent in sorted({point["opponent"] for point in curve}):
        points = sorted((p for p in curve if p["opponent"] == opponent), key=lambda p: p["step"])
        minutes = [p["seconds"] / 60 for p in points]
        ax.plot(minutes, [p["chips_per_hand"] for p in points], marker="o", ms=3, label=f"vs {opponent}")
        ax.fill_between(minutes, [p["ci95"][0] for p in points], [p["ci95"][1] for p in points], alpha=0.2)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("minutes of training (2-core CPU, shared)")
    ax.set_ylabel("duplicate chips per hand (95% CI)")
    steps = max((p["step"] for p in curve), default=0)
    ax.set_title(f"{title}: {steps / 1e6:.0f}M env steps")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ============================================================================ training loop
def train(config: PpoConfig, resume: str | None = None, progress: Callable[[int, dict], None] | None = None,
          notice: Callable[[str], None] = print, max_updates: int | None = None, ray_address: str | None = None,
          rollout_workers: int = 1) -> dict:
    """Train (or, with ``resume``, continue) a run; returns a summary. ``progress(env_steps, point)``
    is called after each update; ``max_updates`` stops this call early (a later resume continues).
    ``ray_address`` collects with ``rollout_workers`` Ray actors ("local" starts Ray here) instead
    of a thread of this process; everything else is the same."""
    config.validate()
    torch.set_num_threads(config.threads)
    batch_steps = config.num_envs * config.rollout_steps
    num_updates = max(1, config.total_steps // batch_steps)
    torch.manual_seed(config.seed)
    net = make_network(config)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, eps=1e-5)
    shuffle = torch.Generator().manual_seed(config.seed + 1)  # the learner's minibatch order
    data = load_checkpoint(resume, config) if resume is not None else None
    if data is not None and "optimizer" not in data:
        raise ValueError(f"{resume} holds a policy for play (exported, without the optimiser and env state); "
                         "resume from the run's training checkpoint (the config's out)")
    if data is not None and "rollouts" not in data:
        raise ValueError(f"{resume} was written before rollout workers kept their own state, and cannot be "
                         f"resumed; it still plays as ppo:{resume}, or export_policy() it")
    rollouts = LocalRollouts(config) if ray_address is None \
        else RayRollouts(config, notice, ray_address, rollout_workers)
    pool_states: list[dict] = []
    pool_version = 0  # changes with pool_states: a worker reloads its snapshots then
    curve: list[dict] = []
    update, global_step, elapsed = 0, 0, 0.0
    if data is not None:
        net.load_state_dict(data["model"])
        optimizer.load_state_dict(data["optimizer"])
        torch.set_rng_state(data["rng"]["torch"])
        shuffle.set_state(data["rng"]["shuffle"])
        if len(data["rollouts"]) == len(rollouts.workers):
            rollouts.load_state(numpy_tree(data["rollouts"]))
        else:
            notice(f"{resume} was collected by {len(data['rollouts'])} rollout worker(s), this run has "
                   f"{len(rollouts.workers)}: the envs start new episodes")
        pool_states = numpy_tree(list(data["pool"]))
        pool_version = 1
        curve = list(data["curve"])
        update, global_step, elapsed = int(data["update"]), int(data["global_step"]), float(data["elapsed"])
        notice(f"resumed {resume} at update {update}, {global_step:,} env steps")

    writer = None
    if config.log_dir:
        from torch.utils.tensorboard import SummaryWriter
        writer = SummaryWriter(config.log_dir, purge_step=global_step if resume else None)
        if not resume:
            writer.add_text("config", "```\n" + json.dumps(config.to_dict(), indent=1) + "\n```")
    evaluator = None
    futures: list[tuple[concurrent.futures.Future, int, float]] = []
    if config.eval_interval and config.eval_opponents:
        evaluator = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))

    def checkpoint() -> None:
        save_checkpoint(config.out, {
            "config": config.to_dict(), "model": net.state_dict(), "optimizer": optimizer.state_dict(),
            "rng": {"torch": torch.get_rng_state(), "shuffle": shuffle.get_state()},
            "rollouts": torch_tree(rollouts.state()),
            "pool": torch_tree(pool_states), "curve": curve, "update": update, "global_step": global_step,
            "elapsed": elapsed})

    def harvest(wait: bool) -> None:
        for item in list(futures):
            future, step, seconds = item
            if not (wait or future.done()):
                continue
            futures.remove(item)
            try:
                results = future.result()
            except concurrent.futures.CancelledError:
                continue
            except Exception as err:  # an evaluation failure must not stop training
                notice(f"evaluation at step {step:,} failed: {err}")
                continue
            for r in results:
                point = {"step": step, "seconds": seconds, **r}
                curve.append(point)
                if writer:
                    writer.add_scalar(f"eval/chips_vs_{r['opponent']}", r["chips_per_hand"], step)
                    writer.add_scalar(f"eval/ci95_low_vs_{r['opponent']}", r["ci95"][0], step)
                    writer.add_scalar(f"eval/ci95_high_vs_{r['opponent']}", r["ci95"][1], step)
                notice(f"eval at {step:,} steps ({seconds / 60:.1f} min): {r['chips_per_hand']:+.3f} chips/hand "
                       f"vs {r['opponent']} [{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]")

    start_update = update
    session_start = time.perf_counter()
    last_point: dict = {}
    in_flight = False  # at most one rollout is being collected

    def start_rollout() -> None:
        nonlocal in_flight
        rollouts.start(numpy_tree(net.state_dict()), pool_version, pool_states)
        in_flight = True

    def finish_rollout() -> tuple[Buffer, dict]:
        nonlocal in_flight
        in_flight = False
        return rollouts.finish()

    def will_continue(count: int) -> bool:
        return count < num_updates and (max_updates is None or count - start_update < max_updates)

    try:
        while will_continue(update):
            if config.max_seconds is not None and elapsed >= config.max_seconds:
                notice(f"stopping at the time limit ({config.max_seconds:.0f} s)")
                break
            tick = time.perf_counter()
            if config.anneal_lr:
                optimizer.param_groups[0]["lr"] = config.lr * (1.0 - update / num_updates)
            if not in_flight:
                start_rollout()
            buffer, stats = finish_rollout()
            wait_seconds = time.perf_counter() - tick
            # Collect the next rollout meanwhile, unless a checkpoint (a drain point) comes first.
            if config.overlap and will_continue(update + 1) and (update + 1) % config.checkpoint_interval:
                start_rollout()
            torch.set_num_threads(config.threads)
            net.train()
            losses = ppo_update(config, net, optimizer, buffer, shuffle)
            update += 1
            global_step += batch_steps
            seconds = time.perf_counter() - tick
            elapsed += seconds
            if config.pool_size and update % config.pool_interval == 0:
                state = numpy_tree(net.state_dict())
                pool_states = (pool_states + [state])[-config.pool_size:]
                pool_version += 1
            opponent_chips = [c for k in ("greedy", "expert", "past") for c in stats.get(k, [])]
            last_point = {"update": update, "steps_per_second": batch_steps / seconds,
                          "hands_per_second": stats.get("hands", 0) / seconds, **losses}
            if opponent_chips:
                last_point["episode_chips"] = float(np.mean(opponent_chips))
            if writer:
                writer.add_scalar("charts/steps_per_second", batch_steps / seconds, global_step)
                session_rate = (update - start_update) * batch_steps / (time.perf_counter() - session_start)
                writer.add_scalar("charts/steps_per_second_session", session_rate, global_step)
                writer.add_scalar("charts/hands_per_second", stats.get("hands", 0) / seconds, global_step)
                writer.add_scalar("charts/collect_wait_fraction", wait_seconds / seconds, global_step)
                writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
                writer.add_scalar("charts/elapsed_minutes", elapsed / 60, global_step)
                if opponent_chips:
                    writer.add_scalar("charts/episode_chips", float(np.mean(opponent_chips)), global_step)
                for k in ("greedy", "expert", "past"):
                    if stats.get(k):
                        writer.add_scalar(f"charts/episode_chips_vs_{k}", float(np.mean(stats[k])), global_step)
                for k in ("policy", "value", "entropy", "approx_kl", "clip_fraction", "explained_variance"):
                    writer.add_scalar(f"losses/{k}" if k != "policy" else "losses/policy_loss", losses[k],
                                      global_step)
            if evaluator is not None and update % config.eval_interval == 0 and not futures:  # no backlog
                fd, path = tempfile.mkstemp(prefix="ppo-eval-", suffix=".pt")
                os.close(fd)
                save_checkpoint(path, {"config": config.to_dict(), "model": net.state_dict()})
                futures.append((evaluator.submit(_evaluate_snapshot, path, list(config.eval_opponents),
                                                 config.eval_deals, config.eval_seed, config.rules),
                                global_step, elapsed))
            harvest(wait=False)
            if update % config.checkpoint_interval == 0 and not in_flight:
                checkpoint()
            if progress:
                progress(global_step, last_point)
        if in_flight:  # stopped by the time limit with a rollout in flight: it is dropped
            finish_rollout()
        harvest(wait=True)
        checkpoint()
    finally:
        rollouts.close()
        if evaluator is not None:
            evaluator.shutdown(wait=False, cancel_futures=True)
        if writer:
            writer.close()
    if config.log_dir:
        with open(os.path.join(config.log_dir, "curve.json"), "w", encoding="utf-8") as f:
            json.dump(curve, f, indent=1)
    session = time.perf_counter() - session_start
    return {"out": config.out, "update": update, "global_step": global_step, "elapsed": elapsed,
            "session_seconds": session, "steps_per_second": (update - start_update) * batch_steps / max(session, 1e-9),
            "last": last_point, "curve": curve}


__all__ = ["PpoConfig", "PolicyNet", "train", "save_checkpoint", "load_checkpoint", "network_from_checkpoint",
           "export_policy", "plot_curve",
           "parse_overrides", "FORMAT", "VERSION"]
