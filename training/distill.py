"""Expert iteration, one step: distil a search bot's choices into a PPO network
(``tiengow train distill --config distill``).

1. **Label.** ``workers`` processes play ``hands`` hands of the ``teacher`` (a search bot, such
   as ``champion``) against itself. At every decision with more than one legal action the
   teacher searches, plays its choice, and the decision is kept: the observation of the seat to
   act, its legal-action mask and the chosen action. Worker w plays the game seeds ``seed + w *
   SEED_STRIDE`` on, and draws the search seeds from its own generator seeded alike, so the data
   depend on ``seed``, ``hands`` and ``workers`` only.
2. **Fit.** The ``student`` network (a PPO checkpoint; the shipped ``ppo`` by default) is trained
   by Adam on the cross-entropy of its policy to the teacher's choices, plus ``kl`` times the KL
   divergence from the student's own policy before training (which keeps it from forgetting
   what it knew where the labels say little). The value head is left as it was. A share
   ``validation`` of the decisions is held out, and the agreement with the teacher on them is
   reported before and after.
3. **Write** a PPO checkpoint (``tiengow.agents.ppo``'s format, the student's config) that the
   ``ppo:PATH`` agent plays and ``champion:prior=PATH`` searches with, with the run's settings
   and figures under ``distill``.

SIGINT or SIGTERM stops a run after the chunk of hands under way (``chunks.py``): the hands labelled
so far go to ``OUT.partial``, and ``--resume OUT.partial`` plays the rest and fits, giving what an
uninterrupted run gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from tiengow.agents.base import make_agent
from tiengow.agents.ppo import DEFAULT_POLICY
from tiengow.agents.search import SearchAgent
from tiengow_env.game import Game

from .chunks import Partial, ResumableConfig, WorkerData, count_done, play_chunks, play_then_fit
from .config import check_ranges
from .interrupt import StopRequest
from .ppo import network_from_checkpoint
from .ppo_checkpoints import load_checkpoint, save_checkpoint
from .runs import check_outputs

SEED_STRIDE = 100_000  # game seeds of one worker: seed + w * SEED_STRIDE + (0 .. its hands - 1)
# hands: the decisions are held in memory, about 25 a hand at 1.2 KB each (200,000 hands: 6 GB)
INTEGERS = (
    ("hands", 1, 200_000),
    ("workers", 1, 64),
    ("seed", 0, 2**62),
    ("epochs", 1, 10**4),
    ("batch", 1, 2**20),
    ("fit_seed", 0, 2**62),
)
NUMBERS = (("lr", 0, math.inf, False), ("kl", 0, math.inf, False), ("validation", 0, 0.5, False))
POSITIVE = {"lr"}


@dataclass
class DistillConfig(ResumableConfig):
    """One distillation run (``configs/distill.yaml``); ``--set name=value`` overrides any field."""

    COMMAND = "train distill"
    STAGE = "label"
    OUTPUT = "distilled.pt"
    FIXED = ("teacher", "student", "hands", "workers", "seed")  # the labelled decisions depend on these only

    teacher: str = "champion:1500"
    """the search bot whose choices are learned (it plays every seat of the labelled hands)"""
    student: str | None = None
    """the PPO checkpoint trained further; None: the shipped ppo model"""
    hands: int = 11_500
    """hands played and labelled, split evenly over the workers"""
    workers: int = 2
    """labelling processes (one core each)"""
    seed: int = 500_000
    """game seed of worker 0's first hand (module doc)"""
    epochs: int = 6
    """passes over the training decisions"""
    batch: int = 512
    """decisions per Adam step"""
    lr: float = 3e-4
    """Adam learning rate"""
    kl: float = 1.0
    """weight of the KL divergence from the student's policy before training"""
    validation: float = 0.1
    """share of the decisions held out to measure the agreement with the teacher"""
    fit_seed: int = 0
    """seed of the held-out split and of the order of the batches"""
    out: str | None = None
    """checkpoint path; None: distilled.pt in a new folder runs/train-distill/<timestamp>"""

    def validate(self) -> None:
        """Raise ValueError on the first bad setting; the teacher and student are loaded once."""
        check_ranges(self, INTEGERS, NUMBERS, POSITIVE)
        if self.hands > self.workers * SEED_STRIDE:
            raise ValueError(
                f"hands: at most {SEED_STRIDE:,} a worker, got {self.hands:,} for {self.workers} "
                f"worker{'s' * (self.workers > 1)}"
            )
        if self.hands < self.workers:
            raise ValueError(f"hands: at least one per worker, got {self.hands} for {self.workers} workers")
        if self.student is not None and (not isinstance(self.student, str) or not self.student):
            raise ValueError(
                f"student is the path of a PPO checkpoint (or null for the shipped ppo), got {self.student!r}"
            )
        rules = read_student(self.student_path)["config"]["rules"]
        if not isinstance(self.teacher, str) or not isinstance(make_agent(self.teacher, rules), SearchAgent):
            raise ValueError(
                f"teacher must be a search bot's spec (champion, search, pimc:N, ismcts, ...), got {self.teacher!r}"
            )
        check_outputs(self.out, "out", "train distill")

    @property
    def student_path(self) -> str:
        return str(DEFAULT_POLICY) if self.student is None else self.student


def read_student(path: str) -> dict:
    """The student checkpoint, checked whole before any hand is labelled (it can take an hour): a
    PPO checkpoint with rules and a value head whose network loads (``network_from_checkpoint``).
    ValueError naming the file."""
    data = load_checkpoint(path)
    if "rules" not in data["config"]:
        raise ValueError(
            f"student {path}: its config names no rules; expected a checkpoint written by tiengow train ppo"
        )
    if "value.weight" not in data["model"]:
        raise ValueError(
            f"student {path} has no value head; distill keeps the student's value head, so it needs "
            f"a checkpoint written by tiengow train ppo (or tiengow train distill)"
        )
    network_from_checkpoint(data, f"student {path}")
    return data


# ============================================================================ label
def _label(task: tuple, first: int, hands: int, carry: dict | None) -> tuple[dict[str, np.ndarray], dict]:
    """Hands ``first .. first + hands - 1`` of one worker ((teacher, rules, first game seed)),
    the search seeds drawn from its generator as ``carry`` left it: (arrays, the generator's state)."""
    teacher, rules, seed = task
    bot = make_agent(teacher, rules, seed)
    rng = np.random.default_rng(seed)
    if carry is not None:
        rng.bit_generator.state = carry
    observations, masks, chosen = [], [], []
    for h in range(first, first + hands):
        game = Game(seed=seed + h, rules=rules)
        while not game.is_over:
            observation, mask = game.observe()
            legal = np.flatnonzero(mask)
            if len(legal) == 1:
                game.step(int(legal[0]))
                continue
            actions, scores, _ = bot.search(game, int(rng.integers(2**63)))
            action = int(actions[np.argmax(scores)])
            observations.append(observation.astype(np.float32))
            masks.append(mask.copy())
            chosen.append(action)
            game.step(action)
        count_done()
    return decision_arrays(observations, masks, chosen), rng.bit_generator.state


def decision_arrays(observations: list, masks: list, chosen: list, **more: list) -> dict[str, np.ndarray]:
    """A worker's labelled decisions as the arrays ``decisions`` joins: observations, masks, choices,
    and any ``more`` columns of one value a decision (``fit`` reads ``held`` and ``again``)."""
    return {
        "observations": np.array(observations, dtype=np.float32).reshape(len(chosen), -1),
        "masks": np.array(masks, dtype=bool).reshape(len(chosen), -1),
        "chosen": np.array(chosen, dtype=np.int64),
        **{key: np.array(values) for key, values in more.items()},
    }


def label(
    config: DistillConfig,
    rules,
    stop: StopRequest,
    done: list[WorkerData] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[WorkerData]:
    """The teacher's decisions over ``config.hands`` hands, per worker (module doc), from ``done`` on,
    until all are labelled or ``stop`` is set (``chunks.play_chunks``)."""
    tasks = [(config.teacher, rules, config.seed + w * SEED_STRIDE) for w in range(config.workers)]
    return play_chunks(_label, tasks, config.hands, "the labelling", stop, done, progress)


def decisions(done: list[WorkerData]) -> dict[str, np.ndarray]:
    """All workers' decisions, in worker order."""
    parts = [worker.arrays() for worker in done]
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


# ============================================================================ fit
def fit(
    config: DistillConfig,
    data: dict[str, np.ndarray],
    student: dict,
    stop: StopRequest,
    progress: Callable[[int, float], None] | None = None,
) -> tuple[dict, dict] | None:
    """(the trained network's state dict, figures): the student fitted to the teacher's choices;
    None when ``stop`` is set (the fit is abandoned: a resumed run fits again from the start)."""
    torch.manual_seed(config.fit_seed)
    observations = torch.tensor(data["observations"])
    masks = torch.tensor(data["masks"])
    chosen = torch.tensor(data["chosen"])
    net, before = network_from_checkpoint(student), network_from_checkpoint(student)
    with torch.no_grad():
        reference, _ = before(observations, masks)
    order = torch.randperm(len(chosen))
    if "held" in data:  # the labeller chose the held-out decisions (whole hands): the rest, shuffled, is fitted
        held_out = torch.tensor(data["held"])
        held, train = torch.nonzero(held_out).flatten(), order[~held_out[order]]
    else:
        held, train = order[: int(len(chosen) * config.validation)], order[int(len(chosen) * config.validation) :]

    def agreement() -> float:
        if len(held) == 0:
            return float("nan")
        with torch.no_grad():
            log_pi, _ = net(observations[held], masks[held])
        return float((log_pi.argmax(1) == chosen[held]).float().mean())

    figures = {"decisions": len(chosen), "held_out": len(held), "agreement_before": agreement()}
    if "again" in data and len(held):  # a second copy of the teacher asked at the held-out decisions
        figures["teacher_repeat"] = float((torch.tensor(data["again"])[held] == chosen[held]).float().mean())
    optimizer = torch.optim.Adam(
        [p for name, p in net.named_parameters() if not name.startswith("value")], lr=config.lr
    )
    for epoch in range(config.epochs):
        shuffled = train[torch.randperm(len(train))]
        for start in range(0, len(shuffled), config.batch):
            if stop:
                return None
            rows = shuffled[start : start + config.batch]
            log_pi, _ = net(observations[rows], masks[rows])
            log_pi = log_pi.clamp(min=-1e4)  # illegal actions: probability 0 on both sides of every term
            loss = -log_pi.gather(1, chosen[rows, None]).mean()
            if config.kl > 0:
                old = reference[rows].clamp(min=-1e4)
                loss = loss + config.kl * (old.exp() * (old - log_pi)).sum(1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if not all(bool(torch.isfinite(p).all()) for p in net.parameters()):
            raise ValueError(
                f"the fit diverged in epoch {epoch + 1}: the network's weights are no longer finite "
                f"numbers, so nothing was written; try a smaller lr (got lr={config.lr:g})"
            )
        if progress:
            progress(epoch + 1, agreement())
    figures["agreement_after"] = agreement()
    return {key: value.detach().clone() for key, value in net.state_dict().items()}, figures


# ============================================================================ run
def distill(
    config: DistillConfig, progress: Callable[[str, int, float], None] | None = None, resume: Partial | None = None
) -> dict:
    """Label, fit and write (module doc), the labelling going on from ``resume``'s; the summary of
    the run. On SIGINT or SIGTERM, ``interrupt.Interrupted`` after the chunk of hands under way
    (``chunks.play_then_fit``)."""
    student = read_student(config.student_path)
    rules = student["config"]["rules"]

    def write(out: str, model: dict, summary: dict) -> None:
        distilled = {"config": config.to_dict(), "summary": summary}
        save_checkpoint(out, {"config": student["config"], "model": model, "distill": distilled})

    return play_then_fit(
        config,
        lambda stop, done, shown: label(config, rules, stop, done, shown),
        lambda done, stop, shown: fit(config, decisions(done), student, stop, shown),
        write,
        progress,
        resume,
    )


__all__ = ["DistillConfig", "distill", "label", "decisions", "decision_arrays", "fit", "SEED_STRIDE"]
