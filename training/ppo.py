"""PPO self-play for Tien Gow (``tiengow train ppo --config ppo``), the algorithm in one file.

Reading order: config, network, rollout, GAE and update, the training loop. The infrastructure
lives beside it: ``ppo_rollouts.py`` (opponent pool, collector, thread and Ray rollout workers),
``ppo_checkpoints.py`` (the checkpoint files, in the format of ``tiengow.agents.ppo``) and
``ppo_eval.py`` (the background duplicate evaluation and the curve plot).

* **Policy.** One MLP with shared parameters for all four seats (each seat sees its own
  observation, seats relative to itself), a masked categorical policy head (illegal logits are
  set to the lowest float, so they get probability exactly 0 and no gradient) and a value head.
* **Environment.** ``tiengow_env.vector.VectorEnv``: N hands stepped in compiled code. Every
  env step is one decision of one seat; the learner's decisions are batched through torch.
* **Rollout** (``ppo_rollouts.Collector``). At each episode start an env becomes, with
  probability ``opponent_mix``, a pool game: the learner takes one random seat and the three
  others are one pool member, drawn by ``pool_weights``: ``greedy`` (the compiled greedy policy,
  ``_kernels.greedy_action``), ``expert`` (the Python heuristic, slow: keep its weight small),
  any other agent spec (frozen; ``tiengow exploit`` trains against one alone) or ``past`` (one
  of the last ``pool_size`` snapshots of the learner, taken every ``pool_interval`` updates,
  run batched through torch). Otherwise all four seats are the current learner (self-play).
* **Four-seat credit assignment** (``_ppo_kernels``). Each seat's trajectory is its own chain of
  decisions. The chips paid to seat s by a step (a trick bonus, the settlement), whoever acted,
  are added to s's *last decision before them*; chips paid before s's first decision of an episode
  (a hand decided at the deal) go to that first decision. When an episode ends, every seat's chain
  ends there (done). GAE (gamma, lambda) then runs along each chain: V(next) is the value of the
  same seat's next decision in the same env. A chain cut by the end of the rollout bootstraps
  from its last decision, which is then left out of the update (it has no complete target).
* **Two cores.** Collection and learning overlap: while the learner updates on rollout k, a
  second thread collects rollout k + 1 with a copy of the weights before that update (a policy
  lag of one update; the PPO ratio uses the stored behaviour log-probabilities, so it stays
  correct). Torch releases the GIL inside its kernels, so each thread gets a core; each runs
  torch single-threaded (``threads`` = 1 each: on a busy 2-core machine, intra-op threads
  mostly wait on each other). The pipeline drains at every checkpoint, so a resumed run follows
  the same schedule. ``--ray`` collects with K Ray actors instead (``RayRollouts``); the loop
  is the same. The duplicate evaluation (``eval_interval``) runs in a spawned process at a
  lower priority, so training goes on while it plays.
* **Checkpoints** (atomically written) hold the config, the model, the optimiser, the RNG
  states, the rollout workers' env arrays and credit bookkeeping, the pool and the learning
  curve: ``--resume`` continues exactly. ``load_checkpoint`` refuses a corrupt file or a config
  it does not fit.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from tiengow.agents.base import make_agent
from tiengow.agents.infra import ScalarLog, check_output_path, run_dir
from tiengow.agents.ppo import input_scale
from tiengow_env.combos import table_for
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet

from . import _ppo_kernels as PK
from .config import build, check_agent_specs, check_ranges, parse_overrides, read_config
from .ppo_checkpoints import STRUCTURAL, export_policy, load_checkpoint, numpy_tree, save_checkpoint, torch_tree
from .ppo_eval import BackgroundEval, plot_curve
from .ppo_rollouts import Buffer, LocalRollouts, RayRollouts, pool_members

# ============================================================================ config
# What each setting may be (``PpoConfig.validate``): whole numbers (name, low, high), and other
# numbers (name, low, high, whether null is allowed); a number in POSITIVE must be above its low.
INTEGERS = (("hands", 1, 10**6), ("seed", 0, 2**63 - 1), ("total_steps", 1, 10**15), ("num_envs", 1, 2**20),
            ("rollout_steps", 1, 2**20), ("hidden", 1, 2**16), ("layers", 1, 64), ("update_epochs", 1, 10**4),
            ("minibatch_size", 1, 2**30), ("pool_size", 0, 10**4), ("pool_interval", 1, 10**9),
            ("eval_interval", 0, 10**9), ("eval_deals", 1, 10**7), ("eval_seed", 0, 2**63 - 1),
            ("exploit_interval", 0, 10**9), ("checkpoint_interval", 1, 10**9), ("threads", 1, 256))
NUMBERS = (("max_seconds", 0, math.inf, True), ("lr", 0, math.inf, False), ("gamma", 0, 1, False),
           ("gae_lambda", 0, 1, False), ("clip_coef", 0, math.inf, False), ("ent_coef", 0, math.inf, False),
           ("vf_coef", 0, math.inf, False), ("max_grad_norm", 0, math.inf, False), ("target_kl", 0, math.inf, True),
           ("reward_scale", 0, math.inf, False), ("opponent_mix", 0, 1, False), ("exploit_minutes", 0, math.inf, False))
POSITIVE = {"max_seconds", "lr", "clip_coef", "max_grad_norm", "target_kl", "reward_scale", "exploit_minutes"}


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
    """stop earlier, with a checkpoint, after this many seconds of training in this run (a resumed run
    counts from its own start; None: no limit)"""
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
    """relative weights of the pool members: past (the learner's snapshots) and any agent specs, frozen:
    greedy (compiled, fast), expert (Python, slow), pimc:8 (search, slower), ppo:PATH, ..."""
    pool_size: int = 5
    """past snapshots kept in the pool (the most recent ones)"""
    pool_interval: int = 20
    """updates between snapshots added to the pool"""
    eval_interval: int = 25
    """updates between duplicate evaluations, and one at the end of every run (0: none); they run in
    a background process"""
    eval_deals: int = 200
    """duplicate deals per opponent at each evaluation"""
    eval_opponents: list = field(default_factory=lambda: ["greedy", "expert"])
    """agents the evaluation plays against (three copies each)"""
    eval_seed: int = 2024
    """seed of the evaluation deals (the same deals every time)"""
    exploit_interval: int = 0
    """updates between measurements of the current policy's exploitability, and one at the end (0: none):
    the exact best response's gain on small rule sets (micro), else the gain of an exploiter trained
    for exploit_minutes (tiengow exploit); in the background process, TensorBoard exploit/"""
    exploit_minutes: float = 2.0
    """training budget of each exploiter on the full game (exploit_interval)"""
    checkpoint_interval: int = 10
    """updates between checkpoints (and one at the end)"""
    out: str | None = None
    """checkpoint path (written atomically); None: ppo.pt in a new folder runs/train-ppo/<timestamp>"""
    log_dir: str | bool | None = None
    """TensorBoard folder, where curve.json (the evaluations) goes too; None: the checkpoint's folder;
    false: no logging"""
    threads: int = 1
    """torch intra-op threads of each of the two threads (collector, learner)"""
    overlap: bool = True
    """collect the next rollout while the learner updates (policy lag 1); False: strictly alternate"""

    @classmethod
    def from_file(cls, path: str | None, overrides: list[str] | None = None) -> PpoConfig:
        """Read a YAML config (None: the defaults), then apply ``name=value`` overrides (values in
        YAML syntax). ValueError naming the file or override and the problem."""
        return read_config(cls, path, overrides)

    @classmethod
    def for_resume(cls, checkpoint: str, overrides: list[str] | None = None) -> PpoConfig:
        """The config ``checkpoint`` was trained with, writing to ``checkpoint`` itself, then
        ``name=value`` overrides on top. ValueError naming the field when an override changes a
        setting the checkpoint's arrays depend on."""
        saved = dict(load_checkpoint(checkpoint)["config"])
        changes = parse_overrides(overrides or [])
        for name in STRUCTURAL:
            if name in changes and changes[name] != saved.get(name):
                raise ValueError(f"--set {name}={changes[name]!r}: {checkpoint} was trained with {name} = "
                                 f"{saved.get(name)!r}, and its network, optimiser and envs depend on it; a resumed "
                                 f"run keeps it (start a new run to change it)")
        # The run goes on where the checkpoint is now (it may have been copied or moved): its own
        # path, and beside it the log, if the log was beside the checkpoint it was written to.
        if saved.get("log_dir") == (os.path.dirname(saved.get("out") or "") or "."):
            saved["log_dir"] = os.path.dirname(checkpoint) or "."
        saved["out"] = checkpoint
        saved.update(changes)
        try:
            return cls.from_dict(saved)
        except ValueError as err:
            raise ValueError(f"config of {checkpoint}: {err}") from None

    @classmethod
    def from_dict(cls, data: dict) -> PpoConfig:
        """``PpoConfig(**data)``, refusing unknown settings, validated."""
        return build(cls, data)

    @property
    def updates(self) -> int:
        """The updates of the run: ``total_steps`` in whole updates of ``num_envs * rollout_steps``
        env steps, at least one."""
        return max(1, self.total_steps // (self.num_envs * self.rollout_steps))

    def with_outputs(self) -> PpoConfig:
        """This config with its output paths made concrete: ``out`` None becomes ``ppo.pt`` in a new
        ``runs/train-ppo/<timestamp>`` folder, ``log_dir`` None the checkpoint's folder."""
        out = self.out if self.out is not None else os.path.join(run_dir("train ppo"), "ppo.pt")
        log_dir = os.path.dirname(out) or "." if self.log_dir is None else self.log_dir
        return dataclasses.replace(self, out=out, log_dir=log_dir)

    def validate(self) -> None:
        """Raise ValueError on the first setting out of range."""
        RuleSet.from_spec(self.rules)
        check_ranges(self, INTEGERS, NUMBERS, POSITIVE)
        for name in ("anneal_lr", "overlap"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.pool_weights, dict) or not all(isinstance(k, str) for k in self.pool_weights) \
                or any(isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w < math.inf
                       for w in self.pool_weights.values()):
            raise ValueError(f"pool_weights maps past and agent specs (greedy, expert, pimc:8, ppo:PATH, ...) to "
                             f"weights >= 0, got {self.pool_weights!r}")
        for spec in self.pool_weights:
            if spec != "past":
                try:
                    make_agent(spec, self.rules)
                except ValueError as err:
                    raise ValueError(f"pool_weights: {err}") from None
        if self.opponent_mix > 0 and not sum(w for k, w in self.pool_weights.items() if k != "past") > 0:
            raise ValueError("pool_weights needs an agent (greedy, expert, ...) with a weight > 0 when opponent_mix "
                             "> 0 (the pool has no past snapshot before the first pool_interval updates)")
        check_agent_specs("eval_opponents", self.eval_opponents, self.rules)
        if self.out is not None and (not isinstance(self.out, str) or not self.out or os.path.isdir(self.out)
                                     or self.out.endswith(("/", os.sep))):
            raise ValueError(f"out is the checkpoint's file path (or null for a new run folder), got {self.out!r}")
        if self.log_dir is True or self.log_dir == "" or not isinstance(self.log_dir, (str, bool, type(None))):
            raise ValueError(f"log_dir is a folder, null (the checkpoint's folder) or false (no logging), "
                             f"got {self.log_dir!r}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


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
# ``ppo_rollouts.Collector`` steps the envs and fills a ``Buffer`` with the learner's decisions:
# observation, mask, action, behaviour log-probability, value, and the credit of each decision
# (reward, next decision of the same seat, done). ``LocalRollouts`` collects in a thread of this
# process, ``RayRollouts`` in Ray actors; both are started with the weights and the pool as numpy.


# ============================================================================ GAE and update
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
    out["explained_variance"] = 1 - (returns - torch.from_numpy(buffer.value[index])).var().item() / variance \
        if variance > 0 else float("nan")
    out["decisions"] = len(index)
    out["dropped"] = count - len(index)
    return out


def warm_weights(config: PpoConfig, path: str) -> dict:
    """The weights of the checkpoint ``path`` for a new run of ``config`` to start from;
    ValueError when it is no PPO checkpoint or its network does not fit the config's."""
    weights = network_from_checkpoint(load_checkpoint(path), path).state_dict()
    try:
        with torch.random.fork_rng(devices=[]):  # a trial network: the run's random numbers stay as they were
            make_network(config).load_state_dict(weights)
    except RuntimeError as err:  # "Error(s) in loading state_dict ...:" then the mismatches, one a line
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        raise ValueError(f"warm start {path}: its network does not fit this run's rules, hidden and layers "
                         f"({lines[min(1, len(lines) - 1)][:200]})") from None
    return weights


# ============================================================================ training loop
def train(config: PpoConfig, resume: str | None = None, progress: Callable[[int, dict], None] | None = None,
          notice: Callable[[str], None] = print, max_updates: int | None = None, ray_address: str | None = None,
          rollout_workers: int = 1, warm_start: str | None = None) -> dict:
    """Train (or, with ``resume``, continue) a run; returns a summary. ``progress(env_steps, point)``
    is called after each update; ``max_updates`` stops this call early (a later resume continues).
    ``warm_start`` starts a new run from the weights of a checkpoint of the same network shape.
    ``ray_address`` collects with ``rollout_workers`` Ray actors ("local" starts Ray here) instead
    of a thread of this process; everything else is the same. Outputs: ``config.with_outputs()``
    (the summary's ``out`` and ``log_dir`` say where they went)."""
    config.validate()
    given = config.with_outputs() if config.out is not None else config  # no run folder made yet
    if given.out is not None:  # the paths the person gave are checked before any work
        check_output_path(given.out, "out")
    if given.log_dir:  # False: no logs
        check_output_path(given.log_dir, "log_dir", folder_only=True)
        if resume is None and os.path.exists(os.path.join(given.log_dir, "curve.json")):
            raise ValueError(f"{given.log_dir} already holds the curve.json and logs of another run; give out (--out) "
                             "in a new or empty folder, or another log_dir, so that this run does not write over them")
    torch.set_num_threads(config.threads)
    batch_steps = config.num_envs * config.rollout_steps
    num_updates = config.updates
    torch.manual_seed(config.seed)
    net = make_network(config)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, eps=1e-5)
    shuffle = torch.Generator().manual_seed(config.seed + 1)  # the learner's minibatch order
    if warm_start is not None and resume is None:
        net.load_state_dict(warm_weights(config, warm_start))
    data = load_checkpoint(resume, config) if resume is not None else None
    if data is not None and "optimizer" not in data:
        raise ValueError(f"{resume} holds a policy for play (exported, without the optimiser and env state); "
                         "resume from the run's training checkpoint (the config's out)")
    if data is not None and "rollouts" not in data:
        raise ValueError(f"{resume} was written before rollout workers kept their own state, and cannot be "
                         f"resumed; it still plays as ppo:{resume}, or export_policy() it")
    rollouts = LocalRollouts(config, make_network) if ray_address is None \
        else RayRollouts(config, make_network, notice, ray_address, rollout_workers)
    try:  # only now, with every input read and checked, are the output folders made
        config = config.with_outputs()
        for folder in {os.path.dirname(os.path.abspath(config.out)), os.path.abspath(config.log_dir or ".")}:
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as err:
                raise ValueError(f"cannot write the run's outputs to {folder}: {err.strerror}") from None
    except BaseException:
        rollouts.close()
        raise
    if num_updates * batch_steps != config.total_steps:
        notice(f"total_steps {config.total_steps:,} is taken in whole updates of num_envs x rollout_steps = "
               f"{batch_steps:,} env steps: this run trains {num_updates * batch_steps:,}")
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

    log = ScalarLog(config.log_dir or None, notice, purge_step=global_step if resume else None)
    if not resume:
        log.text("config", "```\n" + json.dumps(config.to_dict(), indent=1) + "\n```")
    evaluating = bool(config.eval_interval and config.eval_opponents)
    evaluator = BackgroundEval(config.eval_opponents, config.eval_deals, config.eval_seed, config.rules, notice,
                               config.exploit_minutes) if evaluating or config.exploit_interval else None

    def due(update: int) -> tuple[bool, bool]:
        """(evaluate, measure exploitability) after this update."""
        return (evaluating and update % config.eval_interval == 0,
                bool(config.exploit_interval) and update % config.exploit_interval == 0)

    def submit(evaluate: bool, exploit: bool) -> None:
        evaluator.submit({"config": config.to_dict(), "model": net.state_dict()}, global_step, elapsed,
                         evaluate=evaluate, exploit=exploit)

    def checkpoint() -> None:
        save_checkpoint(config.out, {
            "config": config.to_dict(), "model": net.state_dict(), "optimizer": optimizer.state_dict(),
            "rng": {"torch": torch.get_rng_state(), "shuffle": shuffle.get_state()},
            "rollouts": torch_tree(rollouts.state()),
            "pool": torch_tree(pool_states), "curve": curve, "update": update, "global_step": global_step,
            "elapsed": elapsed})

    def record_evaluations(wait: bool) -> None:
        for point in evaluator.results(wait) if evaluator is not None else []:
            curve.append(point)
            if "exploit" in point:  # how much one deviator takes from the policy (ppo_eval)
                log.add(f"exploit/{'exact_gain' if point['exploit'] == 'exact' else 'gain'}", point["gain"],
                        point["step"])
                notice(f"exploitability at {point['step']:,} steps: a best response gains {point['gain']:+.3f} "
                       f"chips/hand ({point['exploit']})")
                continue
            opponent, step, low, high = point["opponent"], point["step"], *point["ci95"]
            log.add(f"eval/chips_vs_{opponent}", point["chips_per_hand"], step)
            log.add(f"eval/ci95_low_vs_{opponent}", low, step)
            log.add(f"eval/ci95_high_vs_{opponent}", high, step)
            notice(f"eval at {step:,} steps ({point['seconds'] / 60:.1f} min): {point['chips_per_hand']:+.3f} "
                   f"chips/hand vs {opponent} [{low:+.3f}, {high:+.3f}]")

    opponents = pool_members(config) + ["past"]  # the names of the pool's episode statistics
    start_update, start_elapsed = update, elapsed
    evaluated = -1  # the update of the last evaluation submitted
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
            if config.max_seconds is not None and elapsed - start_elapsed >= config.max_seconds:
                notice(f"stopping at the time limit ({config.max_seconds:.0f} s of training in this run)")
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
            if not all(torch.isfinite(p).all() for p in net.parameters()):
                raise ValueError(f"the update after {global_step:,} env steps diverged: the weights are no longer "
                                 "finite numbers (try a smaller lr); this update is not written, and any checkpoint "
                                 "already written is kept")
            update += 1
            global_step += batch_steps
            seconds = time.perf_counter() - tick
            elapsed += seconds
            if config.pool_size and update % config.pool_interval == 0:
                state = numpy_tree(net.state_dict())
                pool_states = (pool_states + [state])[-config.pool_size:]
                pool_version += 1
            opponent_chips = [c for k in opponents for c in stats.get(k, [])]
            last_point = {"update": update, "steps_per_second": batch_steps / seconds,
                          "hands_per_second": stats.get("hands", 0) / seconds, **losses}
            if opponent_chips:
                last_point["episode_chips"] = float(np.mean(opponent_chips))
            session_rate = (update - start_update) * batch_steps / (time.perf_counter() - session_start)
            for tag, value in (("steps_per_second", batch_steps / seconds), ("steps_per_second_session", session_rate),
                               ("hands_per_second", stats.get("hands", 0) / seconds),
                               ("collect_wait_fraction", wait_seconds / seconds),
                               ("learning_rate", optimizer.param_groups[0]["lr"]), ("elapsed_minutes", elapsed / 60)):
                log.add(f"charts/{tag}", value, global_step)
            if opponent_chips:
                log.add("charts/episode_chips", float(np.mean(opponent_chips)), global_step)
            for k in opponents:
                if stats.get(k):
                    log.add(f"charts/episode_chips_vs_{k}", float(np.mean(stats[k])), global_step)
            for k in ("policy", "value", "entropy", "approx_kl", "clip_fraction", "explained_variance"):
                log.add(f"losses/{k}" if k != "policy" else "losses/policy_loss", losses[k], global_step)
            if evaluator is not None and any(due(update)) and not evaluator.busy:
                submit(*due(update))
                evaluated = update
            record_evaluations(wait=False)
            if update % config.checkpoint_interval == 0 and not in_flight:
                checkpoint()
            if progress:
                progress(global_step, last_point)
        if in_flight:  # stopped by the time limit with a rollout in flight: it is dropped
            finish_rollout()
        if evaluator is not None and evaluated != update and update > start_update:  # every run ends evaluated
            record_evaluations(wait=True)
            submit(evaluating, bool(config.exploit_interval))
        record_evaluations(wait=True)
        checkpoint()
    finally:
        rollouts.close()
        if evaluator is not None:
            evaluator.close()
        log.close()
    log.write_json("curve.json", curve)
    session = time.perf_counter() - session_start
    return {"out": config.out, "log_dir": config.log_dir or None, "update": update, "global_step": global_step,
            "elapsed": elapsed, "session_seconds": session,
            "steps_per_second": (update - start_update) * batch_steps / max(session, 1e-9),
            "last": last_point, "curve": curve}


__all__ = ["PpoConfig", "PolicyNet", "train", "make_network", "network_from_checkpoint", "parse_overrides",
           "save_checkpoint", "load_checkpoint", "export_policy", "plot_curve"]
