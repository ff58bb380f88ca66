"""A fast copy of a slow bot: behaviour cloning into a PPO network, for ``tiengow exploit
BOT --via-clone`` (``exploit.py``; after Haluska and Schmid 2024, "Learning to beat ByteRL").

1. **Measure** (``bot_speed.py``): BOT's milliseconds a decision choose the route, and a bot that
   seldom repeats its own choices cannot be cloned.
2. **Label** (``label``). Worker processes play hands and keep BOT's decisions: the observation of
   the seat to act, its mask and BOT's choice. Even hands are BOT against itself; odd hands seat the
   exploiter's early policy (``partner``) at one seat, rotating, and BOT at the others, so that the
   clone also covers the positions the exploiter will lead BOT into. Only BOT's decisions are
   kept. The workers and the stop between chunks of hands are ``chunks.play_chunks``, as in
   distill's labelling; labelling stops at a hands count or at a deadline (``Deadline``).
3. **Fit** (``fit_clone``): ``distill.fit`` (cross-entropy to BOT's choices) without its KL term,
   from the exploiter's warm start (or a fresh network of the exploiter's shape). Its **fidelity**
   is the top-1 agreement with BOT on the decisions of the held-out hands (every ``HELD_EVERY``-th),
   beside ``teacher_repeat``, how often a second copy of BOT agrees with BOT there: a bot that
   samples among near-equal actions (the search bots) bounds what any clone can reach. The clone
   is a PPO checkpoint, played as ``ppo:PATH`` (its most likely action), batched and fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from tiengow.agents.base import make_agent
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

from .chunks import count_done, play_chunks
from .distill import DistillConfig, decision_arrays, decisions, fit
from .interrupt import StopRequest
from .ppo import PpoConfig, make_network
from .ppo_checkpoints import load_checkpoint

MAX_LABEL_HANDS = 20_000  # about 500,000 decisions on the full game, 0.6 GB in memory
HAND_STRIDE = 1_000_000  # game seeds of label worker w: seed + w * HAND_STRIDE + hand
# distill's fit without the pull towards the student; on 3,000 hands of search the held-out agreement
# was 0.70 after 8 epochs, 0.72 after 16 and no better after 20 (a bigger network overfitted)
FIT = dict(epochs=16, batch=512, kl=0.0)
HELD_EVERY = 10  # every tenth hand labelled is held out of the fit: the fidelity is measured on its decisions
SECOND_SEED = 7_919  # the second copy of BOT asked at the held-out decisions (teacher_repeat)
FIT_LR = {True: 1e-3, False: 3e-4}  # a fresh network (small rule sets) / a warm start


class Deadline:
    """``stop`` (a signal), or else ``seconds`` passed with some hands labelled (``progress`` counts
    them): what ``play_chunks`` looks at between chunks, so labelling ends with the chunk under way."""

    def __init__(self, stop: StopRequest, seconds: float | None):
        self.stop, self.hands = stop, 0
        self.until = None if seconds is None else time.perf_counter() + seconds

    def progress(self, hands: int) -> None:
        self.hands = hands

    def __bool__(self) -> bool:
        late = self.until is not None and time.perf_counter() >= self.until and self.hands > 0
        return bool(self.stop) or late


def _label(task: tuple, first: int, hands: int, carry: None) -> tuple[dict[str, np.ndarray], None]:
    """Hands ``first .. first + hands - 1`` of one label worker ((bot, partner, rules, first game
    seed)): BOT's decisions (module doc). Hand h is seeded ``seed + h`` whatever chunk it is in.
    Every HELD_EVERY-th hand is held out of the fit, and a second copy of BOT (another seed) is
    asked at its decisions too: how often BOT repeats itself bounds the fidelity a clone can reach."""
    bot_spec, partner_spec, rules, seed = task
    bot, partner = make_agent(bot_spec, rules, seed), make_agent(partner_spec, rules, seed)
    second = make_agent(bot_spec, rules, seed + SECOND_SEED)
    observations, masks, chosen, held, again = [], [], [], [], []
    for h in range(first, first + hands):
        game = Game(seed=seed + h, rules=rules)
        bot.reset(seed + h)
        partner.reset(seed + h)
        second.reset(seed + h + SECOND_SEED)
        held_out = h % HELD_EVERY == HELD_EVERY - 1
        partner_seat = -1 if h % 2 == 0 else (h // 2) % rules.players
        while not game.is_over:
            observation, mask = game.observe()
            legal = np.flatnonzero(mask)
            actor = partner if game.to_act == partner_seat else bot
            if actor is bot and len(legal) == 1:
                game.step(int(legal[0]))
                continue
            action = int(actor.act(observation, mask, game=game.clone() if actor.uses_game else None))
            if actor is bot:
                observations.append(observation.astype(np.float32))
                masks.append(mask.astype(bool))
                chosen.append(action)
                held.append(held_out)
                again.append(
                    int(second.act(observation, mask, game=game.clone() if second.uses_game else None))
                    if held_out
                    else -1
                )
            game.step(action)
        count_done()
    return decision_arrays(observations, masks, chosen, held=held, again=again), None


def label(
    players: tuple[str, str],
    rules: RuleSet,
    seed: int,
    workers: int,
    stop: StopRequest,
    hands: int | None = None,
    seconds: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """(BOT's decisions, hands played) for ``players`` = (BOT, the exploiter's early policy) over
    ``hands`` hands, or as many (up to MAX_LABEL_HANDS) as end within ``seconds``; ``workers``
    processes. Empty arrays when ``stop`` came first."""
    total = MAX_LABEL_HANDS if hands is None else hands
    tasks = [(*players, rules, seed + w * HAND_STRIDE) for w in range(min(workers, total))]
    deadline = Deadline(stop, seconds)

    def seen(count: int) -> None:
        deadline.progress(count)
        if progress:
            progress(count)

    done = play_chunks(_label, tasks, total, "the labelling", deadline, progress=seen)
    played = sum(worker.hands for worker in done)
    return (decisions([worker for worker in done if worker.parts]) if played else {}), played


def student(config: PpoConfig, warm_start: str | None) -> dict:
    """The checkpoint the clone is fitted from: the warm start's, or a fresh network of the
    exploiter's ``config`` (its rules, hidden and layers) seeded from its seed."""
    if warm_start is not None:
        return load_checkpoint(warm_start)
    shape = PpoConfig.from_dict(dict(rules=config.rules, hidden=config.hidden, layers=config.layers, seed=config.seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = make_network(shape).state_dict()
    return {"config": shape.to_dict(), "model": model}


def fit_clone(
    data: dict[str, np.ndarray], start: dict, fresh: bool, seed: int, stop: StopRequest
) -> tuple[dict, dict] | None:
    """(the clone's checkpoint payload, figures: decisions, held_out, agreement_before,
    agreement_after = the fidelity), or None when ``stop`` came (``distill.fit``)."""
    config = DistillConfig(lr=FIT_LR[fresh], fit_seed=seed, **FIT)
    fitted = fit(config, data, start, stop)
    if fitted is None:
        return None
    model, figures = fitted
    return {"config": start["config"], "model": model}, figures


__all__ = ["label", "student", "fit_clone"]
