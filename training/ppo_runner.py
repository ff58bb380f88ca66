"""Running PPO (``training/ppo.py``) for real: what a long run needs around the algorithm.

``train(config)`` runs the same steps as ``ppo.train``, in the same order, and adds:

* **Two cores.** Collection and learning overlap: while the learner updates on rollout k, a
  second thread collects rollout k + 1 with a copy of the weights before that update (a policy
  lag of one update; the PPO ratio uses the stored behaviour log-probabilities, so it stays
  correct). Torch releases the GIL inside its kernels, so each thread gets a core; each runs
  torch single-threaded (``threads`` = 1 each: on a busy 2-core machine, intra-op threads
  mostly wait on each other). The pipeline drains at every checkpoint, so a resumed run follows
  the same schedule; with ``overlap`` false the run is ``ppo.train`` exactly.
* **Ray.** ``--ray`` collects with K Ray actors instead (``RayRollouts``), each a
  ``RolloutWorker`` over a share of the envs; a dead one is restarted. The loop is the same.
* **Checkpoints** (atomically written) hold the config, the model, the optimiser, the RNG
  states, the rollout workers' env arrays and credit bookkeeping, the pool and the learning
  curve: ``--resume`` continues exactly. ``load_checkpoint`` refuses a corrupt file or a config
  it does not fit.
* **Evaluation.** The duplicate evaluation (``eval_interval``) runs in a spawned process at a
  lower priority (``ppo_eval.BackgroundEval``), so training goes on while it plays; every run
  ends evaluated. Exploitability (``exploit_interval``) is measured there too, by the function
  the caller passes (``exploit.snapshot_exploitability``: the exploiter is itself a PPO run).
* **Interruption.** SIGINT or SIGTERM (``interrupt.stop_on_signal``) ends the run after the
  update under way, with a checkpoint, and raises ``interrupt.Interrupted`` naming the resume
  command; a second signal stops at once.
* **Logging.** TensorBoard scalars (``charts/``, ``losses/``, ``eval/``, ``exploit/``) and
  ``curve.json`` in ``log_dir``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from tiengow.agents.infra import connect_ray
from tiengow_env.vector import VectorEnv

from .interrupt import Interrupted, stop_on_signal
from .ppo import Buffer, PpoConfig, add_snapshot, learn, make_collector, make_network, network_from_checkpoint, setup
from .ppo_checkpoints import arrays_state, load_arrays, load_checkpoint, numpy_tree, save_checkpoint, torch_tree
from .ppo_eval import BackgroundEval
from .ppo_pool import pool_members
from .runs import ScalarLog, check_output_path


def env_array_names(env: VectorEnv) -> list[str]:
    """Every array of a VectorEnv's state (it has no state_dict of its own)."""
    return sorted(
        name
        for name, value in vars(env).items()
        if isinstance(value, np.ndarray) and value.ndim > 0 and name not in ("_offsets",)
    )


# ============================================================================ rollout workers
@dataclass(frozen=True)
class RayCollection:
    """Rollouts collected by Ray actors (``--ray [ADDRESS] --rollout-workers K``)."""

    address: str = "local"
    """"local" (a Ray instance started here) or the HOST:PORT of a cluster, as ``ray start --head`` prints it"""
    workers: int = 2
    """rollout workers (actors), each with its own share of num_envs"""


BUFFER_ARRAYS = tuple(f.name for f in dataclasses.fields(Buffer) if f.name != "count")


def filled(buffer: Buffer) -> Buffer:
    """The decisions of ``buffer`` taken so far, as views (what a Ray worker sends back)."""
    return Buffer(*(getattr(buffer, name)[: buffer.count] for name in BUFFER_ARRAYS), count=buffer.count)


def concatenate(parts: list[Buffer]) -> Buffer:
    """The rollouts of several workers as one buffer; ``next_decision`` indices are shifted by
    the start of their part (chains never cross workers: each has envs of its own)."""
    arrays = {name: np.concatenate([getattr(part, name)[: part.count] for part in parts]) for name in BUFFER_ARRAYS}
    start = 0
    for part in parts:
        chain = arrays["next_decision"][start : start + part.count]
        chain[chain >= 0] += start
        start += part.count
    return Buffer(**arrays, count=start)


class RolloutWorker:
    """Envs ``first_env .. first_env + num_envs - 1`` of the run's ``num_envs``, with their seating,
    random streams and a copy of the policy. Local training runs one in a thread of its own; on
    Ray, each rollout worker is one of these as an actor.

    Env ``first_env + i`` deals exactly as env ``first_env + i`` of a single VectorEnv over all the
    envs would. ``incarnation`` counts restarts of a dead worker: a restarted one deals and draws
    afresh rather than repeat its first life.
    """

    def __init__(self, config: PpoConfig, first_env: int, num_envs: int, incarnation: int = 0):
        self.config = config
        torch.set_num_threads(config.threads)
        self.collector = make_collector(config, first_env, num_envs, incarnation)
        self.env, self.seating, self.opponents = self.collector.env, self.collector.seating, self.collector.opponents
        self.net = make_network(config).eval()
        self.pool_version = 0

    def collect(self, weights: dict, pool_version: int, pool: list[dict]) -> tuple[Buffer, dict]:
        """One rollout with these weights (``numpy_tree`` of a state dict); ``pool`` (past snapshots,
        likewise) is reloaded when its version changed."""
        torch.set_num_threads(self.config.threads)
        self.net.load_state_dict(torch_tree(weights))
        if pool_version != self.pool_version:
            self.opponents.load_snapshots(pool, lambda: make_network(self.config))
            self.pool_version = pool_version
        stats: dict = {}
        return self.collector.collect(self.net, stats), stats

    def remote_collect(self, weights: dict, pool_version: int, pool: list[dict]) -> tuple[Buffer, dict]:
        """``collect``, returning only the filled part of the buffer (it is copied to the driver)."""
        buffer, stats = self.collect(weights, pool_version, pool)
        return filled(buffer), stats

    def state(self) -> dict:
        """Everything a resumed run needs to continue these envs exactly."""
        return {
            "env": arrays_state(self.env, env_array_names(self.env)),
            "seating": arrays_state(self.seating, ["kind", "learner_seat", "pending", "carry"]),
            "numpy": self.opponents.rng.bit_generator.state,
            "opponents": self.opponents.agent_states(),
            "sampling": self.collector.generator.get_state().numpy(),
        }

    def load_state(self, state: dict) -> None:
        load_arrays(self.env, state["env"])
        load_arrays(self.seating, state["seating"])
        self.opponents.rng.bit_generator.state = state["numpy"]
        self.opponents.load_agent_states(state.get("opponents", {}))
        self.collector.generator.set_state(torch.tensor(state["sampling"]))


class LocalRollouts:
    """One RolloutWorker over all the envs, collecting in a second thread of this process. Torch
    releases the GIL inside its kernels, so the collector and the learner each get a core."""

    def __init__(self, config: PpoConfig):
        self.workers = [RolloutWorker(config, 0, config.num_envs)]
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
        self.ray = connect_ray(address)
        if not isinstance(workers, int) or not 1 <= workers <= config.num_envs:
            raise ValueError(f"--rollout-workers must be between 1 and num_envs ({config.num_envs}), got {workers!r}")
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        if workers > cpus:
            raise ValueError(
                f"{workers} rollout workers need {workers} CPUs (one each), and the Ray cluster has "
                f"{cpus}; use --rollout-workers {max(cpus, 1)} or add machines (README: Scaling out)"
            )
        self.config, self.notice = config, notice
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
        return concatenate(buffers), stats

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
                    raise ValueError(
                        f"rollout worker {k} died {deaths} times in a row; last: {str(err).splitlines()[0]}"
                    ) from None
                pending = None
                self.incarnations[k] += 1
                first_env, num_envs = self.parts[k]
                self.notice(
                    f"rollout worker {k} died; restarting it (envs {first_env}..{first_env + num_envs - 1} "
                    "start new episodes)"
                )
                self.workers[k] = self._spawn(k)

    def close(self) -> None:
        for worker in self.workers:
            self.ray.kill(worker)


# ============================================================================ the run
def warm_weights(config: PpoConfig, path: str) -> dict:
    """The weights of the checkpoint ``path`` for a new run of ``config`` to start from;
    ValueError when it is no PPO checkpoint or its network does not fit the config's."""
    weights = network_from_checkpoint(load_checkpoint(path), path).state_dict()
    try:
        with torch.random.fork_rng(devices=[]):  # a trial network: the run's random numbers stay as they were
            make_network(config).load_state_dict(weights)
    except RuntimeError as err:  # "Error(s) in loading state_dict ...:" then the mismatches, one a line
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        raise ValueError(
            f"warm start {path}: its network does not fit this run's rules, hidden and layers "
            f"({lines[min(1, len(lines) - 1)][:200]})"
        ) from None
    return weights


def check_paths(config: PpoConfig, resume: str | None) -> None:
    """Before any work: the output paths the person gave can be written, and a new run does not
    write over another run's curve."""
    given = config.with_outputs() if config.out is not None else config  # no run folder made yet
    if given.out is not None:
        check_output_path(given.out, "out")
    if given.log_dir:  # False: no logs
        check_output_path(given.log_dir, "log_dir", folder_only=True)
        if resume is None and os.path.exists(os.path.join(given.log_dir, "curve.json")):
            raise ValueError(
                f"{given.log_dir} already holds the curve.json and logs of another run; give out (--out) "
                "in a new or empty folder, or another log_dir, so that this run does not write over them"
            )


def read_resume(path: str, config: PpoConfig) -> dict:
    """The training checkpoint to resume from; ValueError for a file that cannot be resumed."""
    data = load_checkpoint(path, config)
    if "optimizer" not in data:
        raise ValueError(
            f"{path} holds a policy for play (exported, without the optimiser and env state); "
            "resume from the run's training checkpoint (the config's out)"
        )
    if "rollouts" not in data:
        raise ValueError(
            f"{path} was written before rollout workers kept their own state, and cannot be "
            f"resumed; it still plays as ppo:{path}, or export_policy() it"
        )
    return data


class Run:
    """One call of ``train``: the learner, its rollouts, and its bookkeeping between updates."""

    def __init__(
        self,
        config: PpoConfig,
        resume: str | None,
        notice: Callable[[str], None],
        ray: RayCollection | None,
        warm_start: str | None,
        exploitability: Callable | None,
    ):
        config.validate()
        if config.exploit_interval and exploitability is None:
            raise ValueError(
                "exploit_interval needs a measure of exploitability: train(..., exploitability="
                "tiengow.training.exploit.snapshot_exploitability), as tiengow train ppo passes"
            )
        check_paths(config, resume)
        torch.set_num_threads(config.threads)
        self.notice, self.resume = notice, resume
        self.net, self.optimizer, self.shuffle = setup(config)
        if warm_start is not None and resume is None:
            self.net.load_state_dict(warm_weights(config, warm_start))
        data = read_resume(resume, config) if resume is not None else None
        self.rollouts = LocalRollouts(config) if ray is None else RayRollouts(config, notice, ray.address, ray.workers)
        try:  # only now, with every input read and checked, are the output folders made
            self.config = config = config.with_outputs()
            for folder in {os.path.dirname(os.path.abspath(config.out)), os.path.abspath(config.log_dir or ".")}:
                try:
                    os.makedirs(folder, exist_ok=True)
                except OSError as err:
                    raise ValueError(f"cannot write the run's outputs to {folder}: {err.strerror}") from None
        except BaseException:
            self.rollouts.close()
            raise
        self.pool: list[dict] = []
        self.pool_version = 0  # changes with the pool: a worker reloads its snapshots then
        self.curve: list[dict] = []
        self.update, self.global_step, self.elapsed = 0, 0, 0.0
        if data is not None:
            self.load(data)
        self.start_update, self.start_elapsed = self.update, self.elapsed
        self.log = ScalarLog(config.log_dir or None, notice, purge_step=self.global_step if resume else None)
        if not resume:
            self.log.text("config", "```\n" + json.dumps(config.to_dict(), indent=1) + "\n```")
        self.evaluating = bool(config.eval_interval and config.eval_opponents)
        self.evaluator = (
            BackgroundEval(
                config.eval_opponents,
                config.eval_deals,
                config.eval_seed,
                config.rules,
                notice,
                config.exploit_minutes,
                exploitability,
            )
            if self.evaluating or config.exploit_interval
            else None
        )
        self.evaluated = -1  # the update of the last evaluation submitted
        self.in_flight = False  # at most one rollout is being collected
        self.last_point: dict = {}

    def load(self, data: dict) -> None:
        """Continue from a checkpoint's state."""
        self.net.load_state_dict(data["model"])
        self.optimizer.load_state_dict(data["optimizer"])
        torch.set_rng_state(data["rng"]["torch"])
        self.shuffle.set_state(data["rng"]["shuffle"])
        if len(data["rollouts"]) == len(self.rollouts.workers):
            self.rollouts.load_state(numpy_tree(data["rollouts"]))
        else:
            self.notice(
                f"{self.resume} was collected by {len(data['rollouts'])} rollout worker(s), this run has "
                f"{len(self.rollouts.workers)}: the envs start new episodes"
            )
        self.pool = numpy_tree(list(data["pool"]))
        self.pool_version = 1
        self.curve = list(data["curve"])
        self.update, self.global_step = int(data["update"]), int(data["global_step"])
        self.elapsed = float(data["elapsed"])
        self.notice(f"resumed {self.resume} at update {self.update}, {self.global_step:,} env steps")

    def checkpoint(self) -> None:
        save_checkpoint(
            self.config.out,
            {
                "config": self.config.to_dict(),
                "model": self.net.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "rng": {"torch": torch.get_rng_state(), "shuffle": self.shuffle.get_state()},
                "rollouts": torch_tree(self.rollouts.state()),
                "pool": torch_tree(self.pool),
                "curve": self.curve,
                "update": self.update,
                "global_step": self.global_step,
                "elapsed": self.elapsed,
            },
        )

    def continues(self, update: int, max_updates: int | None) -> bool:
        """Whether update ``update`` (0-based) is one this call trains."""
        return update < self.config.updates and (max_updates is None or update - self.start_update < max_updates)

    def out_of_time(self) -> bool:
        return self.config.max_seconds is not None and self.elapsed - self.start_elapsed >= self.config.max_seconds

    def start_rollout(self) -> None:
        self.rollouts.start(numpy_tree(self.net.state_dict()), self.pool_version, self.pool)
        self.in_flight = True

    def finish_rollout(self) -> tuple[Buffer, dict]:
        self.in_flight = False
        return self.rollouts.finish()

    def step(self, overlap_next: bool) -> dict:
        """One update: the rollout (collected meanwhile, or now), then the learner; its figures."""
        tick = time.perf_counter()
        if not self.in_flight:
            self.start_rollout()
        buffer, stats = self.finish_rollout()
        wait_seconds = time.perf_counter() - tick
        if overlap_next:  # collect the next rollout meanwhile
            self.start_rollout()
        losses = learn(self.config, self.net, self.optimizer, self.shuffle, buffer, self.update, self.global_step)
        self.update += 1
        self.global_step += self.config.batch_steps
        seconds = time.perf_counter() - tick
        self.elapsed += seconds
        pool = add_snapshot(self.config, self.net, self.pool, self.update)
        if pool is not self.pool:
            self.pool, self.pool_version = pool, self.pool_version + 1
        self.log_update(losses, stats, seconds, wait_seconds)
        return self.last_point

    def log_update(self, losses: dict, stats: dict, seconds: float, wait_seconds: float) -> None:
        config, step = self.config, self.global_step
        opponents = pool_members(config) + ["past"]  # the names of the pool's episode statistics
        opponent_chips = [c for k in opponents for c in stats.get(k, [])]
        self.last_point = {
            "update": self.update,
            "steps_per_second": config.batch_steps / seconds,
            "hands_per_second": stats.get("hands", 0) / seconds,
            **losses,
        }
        if opponent_chips:
            self.last_point["episode_chips"] = float(np.mean(opponent_chips))
        session_rate = (self.update - self.start_update) * config.batch_steps / (self.elapsed - self.start_elapsed)
        for tag, value in (
            ("steps_per_second", config.batch_steps / seconds),
            ("steps_per_second_session", session_rate),
            ("hands_per_second", stats.get("hands", 0) / seconds),
            ("collect_wait_fraction", wait_seconds / seconds),
            ("learning_rate", self.optimizer.param_groups[0]["lr"]),
            ("elapsed_minutes", self.elapsed / 60),
        ):
            self.log.add(f"charts/{tag}", value, step)
        if opponent_chips:
            self.log.add("charts/episode_chips", float(np.mean(opponent_chips)), step)
        for k in opponents:
            if stats.get(k):
                self.log.add(f"charts/episode_chips_vs_{k}", float(np.mean(stats[k])), step)
        for k in ("policy", "value", "entropy", "approx_kl", "clip_fraction", "explained_variance"):
            self.log.add(f"losses/{k}" if k != "policy" else "losses/policy_loss", losses[k], step)

    def due(self) -> tuple[bool, bool]:
        """(evaluate, measure exploitability) after this update."""
        return (
            self.evaluating and self.update % self.config.eval_interval == 0,
            bool(self.config.exploit_interval) and self.update % self.config.exploit_interval == 0,
        )

    def submit(self, evaluate: bool, exploit: bool) -> None:
        self.evaluator.submit(
            {"config": self.config.to_dict(), "model": self.net.state_dict()},
            self.global_step,
            self.elapsed,
            evaluate=evaluate,
            exploit=exploit,
        )
        self.evaluated = self.update

    def record_evaluations(self, wait: bool) -> None:
        """The evaluations finished so far into the curve, the log and a notice each."""
        for point in self.evaluator.results(wait) if self.evaluator is not None else []:
            self.curve.append(point)
            if "exploit" in point:  # how much one deviator takes from the policy (ppo_eval)
                self.log.add(
                    f"exploit/{'exact_gain' if point['exploit'] == 'exact' else 'gain'}", point["gain"], point["step"]
                )
                self.notice(
                    f"exploitability at {point['step']:,} steps: a best response gains "
                    f"{point['gain']:+.3f} chips/hand ({point['exploit']})"
                )
                continue
            opponent, step, low, high = point["opponent"], point["step"], *point["ci95"]
            self.log.add(f"eval/chips_vs_{opponent}", point["chips_per_hand"], step)
            self.log.add(f"eval/ci95_low_vs_{opponent}", low, step)
            self.log.add(f"eval/ci95_high_vs_{opponent}", high, step)
            self.notice(
                f"eval at {step:,} steps ({point['seconds'] / 60:.1f} min of training): "
                f"{point['chips_per_hand']:+.3f} chips/hand vs {opponent} [{low:+.3f}, {high:+.3f}]"
            )

    def after_update(self) -> None:
        """Evaluations due and done, and the checkpoint when one is due."""
        if self.evaluator is not None and any(self.due()) and not self.evaluator.busy:
            self.submit(*self.due())
        self.record_evaluations(wait=False)
        if self.update % self.config.checkpoint_interval == 0 and not self.in_flight:
            self.checkpoint()

    def finish(self) -> None:
        """The last rollout dropped, the last evaluation waited for, the last checkpoint."""
        if self.in_flight:  # stopped early with a rollout in flight: it is dropped
            self.finish_rollout()
        if self.evaluator is not None and self.evaluated != self.update and self.update > self.start_update:
            self.record_evaluations(wait=True)  # every run ends evaluated
            self.submit(self.evaluating, bool(self.config.exploit_interval))
        self.record_evaluations(wait=True)
        self.checkpoint()

    def close(self) -> None:
        self.rollouts.close()
        if self.evaluator is not None:
            self.evaluator.close()
        self.log.close()

    def summary(self, session: float) -> dict:
        return {
            "out": self.config.out,
            "log_dir": self.config.log_dir or None,
            "update": self.update,
            "global_step": self.global_step,
            "elapsed": self.elapsed,
            "session_seconds": session,
            "steps_per_second": (self.update - self.start_update) * self.config.batch_steps / max(session, 1e-9),
            "last": self.last_point,
            "curve": self.curve,
        }


def train(
    config: PpoConfig,
    resume: str | None = None,
    progress: Callable[[int, dict], None] | None = None,
    notice: Callable[[str], None] = print,
    max_updates: int | None = None,
    ray: RayCollection | None = None,
    warm_start: str | None = None,
    exploitability: Callable | None = None,
) -> dict:
    """Train (or, with ``resume``, continue) a run; returns a summary. ``progress(env_steps, point)``
    is called after each update; ``max_updates`` stops this call early (a later resume continues).
    ``warm_start`` starts a new run from the weights of a checkpoint of the same network shape.
    ``ray`` collects with Ray actors instead of a thread of this process; everything else is the
    same. ``exploitability`` measures a snapshot for ``exploit_interval`` (module doc). On SIGINT or
    SIGTERM the run stops after the update under way, writes its checkpoint and raises
    ``Interrupted`` with the command that resumes it. Outputs: ``config.with_outputs()`` (the
    summary's ``out`` and ``log_dir`` say where they went)."""
    run = Run(config, resume, notice, ray, warm_start, exploitability)
    config = run.config
    if config.updates * config.batch_steps != config.total_steps and config.max_seconds is None:
        notice(
            f"total_steps {config.total_steps:,} is taken in whole updates of num_envs x rollout_steps = "
            f"{config.batch_steps:,} env steps: this run trains {config.updates * config.batch_steps:,}"
        )
    session_start = time.perf_counter()
    try:
        with stop_on_signal() as stop:
            while run.continues(run.update, max_updates) and not stop:
                if run.out_of_time():
                    notice(f"stopping at the time limit ({config.max_seconds:.0f} s of training in this run)")
                    break
                overlap = (
                    config.overlap
                    and run.continues(run.update + 1, max_updates)
                    and (run.update + 1) % config.checkpoint_interval != 0
                )  # a checkpoint drains the pipeline
                point = run.step(overlap and not stop)
                point["elapsed"] = run.elapsed
                if config.max_seconds is not None:
                    point["remaining_seconds"] = max(0.0, config.max_seconds - (run.elapsed - run.start_elapsed))
                run.after_update()
                if progress:
                    progress(run.global_step, point)
            if stop:
                if run.in_flight:  # the signal came while the next rollout was collected: learn from it too
                    run.step(False)
                run.checkpoint()
                where = f"after update {run.update} ({run.global_step:,} env steps)"
                raise Interrupted(stop.signal, where, config.out, f"tiengow train ppo --resume {config.out}")
            run.finish()
    finally:
        run.close()
    run.log.write_json("curve.json", run.curve)
    return run.summary(time.perf_counter() - session_start)
