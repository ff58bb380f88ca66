"""The tile locator: learn where the hidden tiles lie from hands whose true deal is known
(``tiengow train locator --config locator``; the model is ``tiengow.agents.locator``'s).

1. **Play.** ``workers`` processes play ``hands`` hands of the ``teacher`` (``search``: the bots
   the champion meets) against itself, under the standard rules. Before every decision, every
   seat's information state is kept, with the true places of the tiles hidden from it: per
   other seat, in seats relative to the observer, the tile types in its hand and among its
   face-down tiles. Worker w deals its hand h by game seed ``(seed + w) * 100003 + h``, and its
   bot at seat s is seeded ``seed + w + s`` and reset to ``(seed + w) * 7919 + 4 h + s`` before
   each hand, so the data depend on ``seed``, ``hands`` and ``workers`` only.
2. **Fit.** A network of ``layers`` hidden layers of ``hidden`` ReLU units (the last layer starts
   at zero: the uniform deal) is trained by Adam on the cross-entropy of each hidden tile's true
   place. The last ``validation`` share of each worker's data (its last hands) is held out; after
   every ``check_every`` steps of an epoch the held-out loss is measured, and the network at its
   lowest is kept.
3. **Write** a locator checkpoint, with the held-out loss of the uniform deal and of the network
   (nats per hidden tile) under ``summary``.

SIGINT or SIGTERM stops a run after the chunk of hands under way (``chunks.py``): the hands played
so far go to ``OUT.partial``, and ``--resume OUT.partial`` plays the rest and fits, giving what an
uninterrupted run gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from tiengow.agents.base import make_agent
from tiengow.agents.infra import atomic_write
from tiengow.agents.locator import FORMAT, VERSION
from tiengow.agents.search import SearchAgent
from tiengow_env.env import Session
from tiengow_env.state import StateView
from tiengow_env.tiles import NUM_TYPES, TILE_TYPE

from .chunks import Partial, ResumableConfig, WorkerData, count_done, play_chunks, play_then_fit
from .config import check_ranges
from .interrupt import StopRequest
from .runs import check_outputs

RULES = "standard"
# hands: the information states are held in memory as int8 (small integers: exact), about 112 a hand
# at 2 KB each, up to three copies while the fit starts (12,000 hands peaked at 10.3 GB; 20,000: about 17)
INTEGERS = (
    ("hands", 1, 20_000),
    ("workers", 1, 64),
    ("seed", 0, 2**40),
    ("hidden", 1, 4096),
    ("layers", 1, 8),
    ("epochs", 1, 1000),
    ("batch", 1, 2**20),
    ("check_every", 1, 10**9),
    ("fit_seed", 0, 2**62),
)
NUMBERS = (("lr", 0, math.inf, False), ("weight_decay", 0, math.inf, False), ("validation", 0, 0.5, False))
POSITIVE = {"lr", "validation"}
ONE_HOT = np.eye(NUM_TYPES, dtype=np.int8)[TILE_TYPE]  # (32 bits, T): the tile type of each bit


@dataclass
class LocatorConfig(ResumableConfig):
    """One locator run (``configs/locator.yaml``); ``--set name=value`` overrides any field."""

    COMMAND = "train locator"
    STAGE = "play"
    OUTPUT = "locator.pt"
    FIXED = ("teacher", "hands", "workers", "seed")  # the information states played depend on these only

    teacher: str = "search"
    """the search bot whose hands are played (it plays every seat)"""
    hands: int = 20_000
    """hands played, split evenly over the workers"""
    workers: int = 2
    """playing processes (one core each)"""
    seed: int = 31
    """seed of worker 0 (module doc)"""
    hidden: int = 256
    """units of each hidden layer"""
    layers: int = 2
    """hidden layers"""
    epochs: int = 2
    """passes over the training data"""
    batch: int = 512
    """information states per Adam step"""
    lr: float = 3e-4
    """Adam learning rate"""
    weight_decay: float = 1e-5
    """Adam's L2 penalty"""
    validation: float = 0.1
    """share of each worker's data held out (its last hands)"""
    check_every: int = 100
    """Adam steps between measures of the held-out loss (the network at the lowest is kept)"""
    fit_seed: int = 0
    """seed of the network's initial weights and the order of the batches"""
    out: str | None = None
    """checkpoint path; None: locator.pt in a new folder runs/train-locator/<timestamp>"""

    def validate(self) -> None:
        """Raise ValueError on the first bad setting."""
        check_ranges(self, INTEGERS, NUMBERS, POSITIVE)
        if self.hands < self.workers:
            raise ValueError(f"hands: at least one per worker, got {self.hands} for {self.workers} workers")
        if not isinstance(self.teacher, str) or not isinstance(make_agent(self.teacher, RULES), SearchAgent):
            raise ValueError(
                f"teacher must be a search bot's spec (search, pimc:N, champion, ...), got {self.teacher!r}"
            )
        check_outputs(self.out, "out", "train locator")


# ============================================================================ play
def hidden_places(state: np.ndarray, observer: int, players: int) -> np.ndarray:
    """(2 (P - 1), T) int8: the tile types in the hand (rows r - 1) and among the face-down tiles
    (rows P - 1 + r - 1) of seat (observer + r) % P, r = 1 .. P - 1: the target of the fit."""
    places = np.zeros((2 * (players - 1), NUM_TYPES), dtype=np.int8)
    view = StateView(state, players)
    for r in range(1, players):
        seat = (observer + r) % players
        for row, tiles in ((r - 1, view.hands[seat]), (players - 1 + r - 1, view.down[seat])):
            bits = (int(tiles) >> np.arange(32)) & 1
            places[row] = bits @ ONE_HOT
    return places


def _play(task: tuple, first: int, hands: int, carry: None) -> tuple[dict[str, np.ndarray], None]:
    """Hands ``first .. first + hands - 1`` of one worker ((teacher, seed)): (information states and
    hidden places, None: a hand depends on its number only)."""
    teacher, seed = task
    session = Session(RULES)
    players = session.players
    bots = [make_agent(teacher, RULES, seed + s) for s in range(players)]
    observation = np.zeros(session.observation_size, dtype=np.float32)
    mask = np.zeros(session.num_actions, dtype=np.int8)
    states, places = [], []
    for h in range(first, first + hands):
        session.reset(seed * 100003 + h)
        for s, bot in enumerate(bots):
            bot.reset(seed * 7919 + h * players + s)
        while not session.episode_over:
            for observer in range(players):
                states.append(session.information_state(observer))
                places.append(hidden_places(session.state, observer, players))
            seat = session.to_act
            session.observe(seat, observation, mask)
            session.step(int(bots[seat].act(observation, mask.astype(bool), game=session.game)))
        count_done()
    return {"states": exact_int8(np.array(states)), "places": np.array(places, dtype=np.int8)}, None


def exact_int8(states: np.ndarray) -> np.ndarray:
    """``states`` (information states: small integer counts) as int8, a quarter of float32's
    memory; a value int8 cannot hold exactly is an error, not a silent change of the data."""
    packed = states.astype(np.int8)
    if not np.array_equal(packed, states):
        raise ValueError("an information state holds a value int8 cannot (not an integer in -128..127)")
    return packed


def play(
    config: LocatorConfig,
    stop: StopRequest,
    done: list[WorkerData] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[WorkerData]:
    """Each worker's data, in worker order (module doc), from ``done`` on, until all hands are
    played or ``stop`` is set (``chunks.play_chunks``)."""
    tasks = [(config.teacher, config.seed + w) for w in range(config.workers)]
    return play_chunks(_play, tasks, config.hands, "the hands", stop, done, progress)


# ============================================================================ fit
class LocatorNet(nn.Module):
    """The locator's network (``tiengow.agents.locator``): information state -> logits."""

    def __init__(self, inputs: int, hidden: int, layers: int, places: int):
        super().__init__()
        sizes = [inputs] + [hidden] * layers
        parts: list[nn.Module] = []
        for k in range(layers):
            parts += [nn.Linear(sizes[k], sizes[k + 1]), nn.ReLU()]
        parts.append(nn.Linear(hidden, places * NUM_TYPES))
        self.body = nn.Sequential(*parts)
        self.places = places
        nn.init.zeros_(self.body[-1].weight)  # zero logits: the uniform deal
        nn.init.zeros_(self.body[-1].bias)

    def forward(self, states: torch.Tensor, sizes: torch.Tensor) -> torch.Tensor:
        """log-probabilities (N, places, T) of each type's places, given their sizes (N, places)."""
        logits = self.body(states).view(-1, self.places, NUM_TYPES) + torch.log(sizes)[:, :, None]
        return torch.log_softmax(logits, dim=1)


def place_loss(net: LocatorNet | None, states: torch.Tensor, places: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy, in nats per hidden tile, of the true places; ``net`` None gives that
    of the uniform deal (each tile in a place with the chance of its size)."""
    sizes = places.sum(dim=2)
    if net is None:
        log_q = torch.log_softmax(torch.log(sizes)[:, :, None].expand(-1, -1, NUM_TYPES), dim=1)
    else:
        log_q = net(states, sizes)
    log_q = torch.where(places > 0, log_q, torch.zeros_like(log_q))
    return -(places * log_q).sum() / places.sum().clamp(min=1)


def fit(
    config: LocatorConfig,
    parts: list[dict[str, np.ndarray]],
    stop: StopRequest,
    progress: Callable[[int, float], None] | None = None,
) -> tuple[dict, dict] | None:
    """(the network's state dict at its lowest held-out loss, figures); None when ``stop`` is set
    (the fit is abandoned: a resumed run fits again from the start)."""
    torch.manual_seed(config.fit_seed)
    cuts = [int(len(part["states"]) * (1 - config.validation)) for part in parts]

    def joined(key: str, held: bool) -> torch.Tensor:
        return torch.from_numpy(
            np.concatenate([part[key][cut:] if held else part[key][:cut] for part, cut in zip(parts, cuts)])
        )

    # the training data stay int8 (each batch is made float32: the same values); the held-out share is float32
    states, places = joined("states", False), joined("places", False)
    held_states, held_places = joined("states", True).float(), joined("places", True).float()
    net = LocatorNet(states.shape[1], config.hidden, config.layers, places.shape[1])
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    with torch.no_grad():
        uniform = float(place_loss(None, held_states, held_places))
    best, best_model, step = math.inf, None, 0
    for _ in range(config.epochs):
        order = torch.randperm(len(states))
        for k, start in enumerate(range(0, len(states), config.batch)):
            if stop:
                return None
            rows = order[start : start + config.batch]
            loss = place_loss(net, states[rows].float(), places[rows].float())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if (k + 1) % config.check_every == 0:  # counted within the epoch
                with torch.no_grad():
                    held = float(place_loss(net, held_states, held_places))
                if not math.isfinite(held):
                    raise ValueError(
                        f"the fit diverged after {step} steps: the held-out loss is {held}, so nothing "
                        f"was written; try a smaller lr (got lr={config.lr:g})"
                    )
                if held < best:
                    best, best_model = held, {key: value.detach().clone() for key, value in net.state_dict().items()}
                if progress:
                    progress(step, uniform - held)
    if best_model is None:
        raise ValueError(
            f"an epoch took {step // config.epochs} steps, fewer than check_every="
            f"{config.check_every}, so the held-out loss was never measured and nothing was written; "
            "lower check_every or add hands"
        )
    figures = {
        "states": len(states),
        "held_out": len(held_states),
        "steps": step,
        "uniform_nats": uniform,
        "held_out_nats": best,
        "gain_nats": uniform - best,
    }
    return best_model, figures


# ============================================================================ run
def train_locator(
    config: LocatorConfig, progress: Callable[[str, int, float], None] | None = None, resume: Partial | None = None
) -> dict:
    """Play, fit and write (module doc), the play going on from ``resume``'s; the summary of the run.
    On SIGINT or SIGTERM, ``interrupt.Interrupted`` after the chunk of hands under way
    (``chunks.play_then_fit``)."""

    def write(out: str, model: dict, summary: dict) -> None:
        settings = {"rules": RULES, "hidden": config.hidden, "layers": config.layers, **config.to_dict()}
        payload = {"format": FORMAT, "version": VERSION, "model": model, "config": settings, "summary": summary}
        atomic_write(out, lambda f: torch.save(payload, f))

    return play_then_fit(
        config,
        lambda stop, done, shown: play(config, stop, done, shown),
        lambda done, stop, shown: fit(config, [worker.arrays() for worker in done], stop, shown),
        write,
        progress,
        resume,
    )


__all__ = ["LocatorConfig", "LocatorNet", "train_locator", "play", "fit", "hidden_places", "place_loss"]
