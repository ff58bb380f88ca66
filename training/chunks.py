"""Hands played in worker processes, chunk by chunk, so that a run stops between two chunks and
resumes where it stopped: what distill's labelling and the locator's play share.

Worker w plays its share of the hands in chunks of ``CHUNK_HANDS``:
``function(task, first, count, carry) -> (arrays, carry)`` plays hands ``first .. first + count
- 1`` of the task and returns their arrays with what the worker's next chunk starts from (the
state of a random generator, or None). Hand h is played the same way whatever chunk it falls
in, so a worker's data, its chunks' arrays end to end, do not depend on where a run stopped.

A trainer built on this (its config a ``ResumableConfig``) runs as ``play_then_fit`` says: its
hands, then a fit of what they gave, then its output. A run stopped by SIGINT or SIGTERM
(``interrupt.py``) keeps what is done in a *partial* file (``save_partial``: its config, and per
worker the hands done, the carry and the arrays), written atomically beside the output;
``--resume PARTIAL`` reads it back (``load_partial``) and goes on.
The worker processes ignore both signals (a Ctrl-C at the terminal reaches every process of the
group): the trainer decides what a signal means, and a second one kills them at once.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, NoReturn, TypeVar

import numpy as np
import torch

from tiengow.agents.infra import atomic_write, worker_pool

from .config import TrainerConfig, build, parse_overrides
from .interrupt import SIGNALS, Interrupted, StopRequest, stop_on_signal
from .runs import run_dir

CHUNK_HANDS = 25  # hands a worker plays between two looks at a stop request
FORMAT = "tiengow-partial"
Config = TypeVar("Config")

_COUNTER = None  # in a worker: the hands all workers have played (shared)


@dataclass
class WorkerData:
    """What one worker has done: ``hands`` of its share, the ``carry`` its next chunk starts from,
    and the arrays of its chunks."""

    hands: int = 0
    carry: Any = None
    parts: list[dict[str, np.ndarray]] = field(default_factory=list)

    def arrays(self) -> dict[str, np.ndarray]:
        """The worker's arrays, its chunks end to end."""
        return {key: np.concatenate([part[key] for part in self.parts]) for key in self.parts[0]}


def _start_worker(counter) -> None:
    global _COUNTER
    _COUNTER = counter
    for number in SIGNALS:
        signal.signal(number, signal.SIG_IGN)


def count_done(units: int = 1) -> None:
    """In a worker of ``play_chunks``: add ``units`` to the hands played (the progress count)."""
    with _COUNTER.get_lock():
        _COUNTER.value += units


def play_chunks(
    function: Callable,
    tasks: list,
    hands: int,
    what: str,
    stop: StopRequest,
    done: list[WorkerData] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[WorkerData]:
    """Play ``hands`` hands, split evenly over the workers (one per task): worker w plays its share of
    ``tasks[w]``, one chunk of every unfinished worker at a time (module doc), from ``done`` (a
    resumed run) on, until all are played or ``stop`` is set. ``progress`` gets the hands played by
    all workers every 5 seconds and after each chunk."""
    workers = len(tasks)
    shares = [hands // workers + (w < hands % workers) for w in range(workers)]
    done = done or [WorkerData() for _ in shares]
    if all(worker.hands == share for worker, share in zip(done, shares)):  # a run stopped in its fit
        return done
    counter = mp.get_context("spawn").Value("q", sum(worker.hands for worker in done))
    with worker_pool(len(tasks), what, initializer=_start_worker, initargs=(counter,)) as pool:
        while not stop and any(worker.hands < share for worker, share in zip(done, shares)):
            counts = {
                w: min(CHUNK_HANDS, shares[w] - worker.hands)
                for w, worker in enumerate(done)
                if worker.hands < shares[w]
            }
            futures = {
                w: pool.submit(function, tasks[w], done[w].hands, count, done[w].carry) for w, count in counts.items()
            }
            while concurrent.futures.wait(futures.values(), timeout=5.0).not_done:
                if progress:
                    progress(counter.value)
            for w, future in futures.items():
                arrays, done[w].carry = future.result()
                done[w].parts.append(arrays)
                done[w].hands += counts[w]
            if progress:
                progress(counter.value)
    return done


def save_partial(path: str, kind: str, config: dict, done: list[WorkerData]) -> None:
    """Write a stopped run's config and work done to ``path`` atomically (module doc)."""
    workers = [
        {
            "hands": worker.hands,
            "carry": worker.carry,
            "arrays": {key: torch.from_numpy(value) for key, value in worker.arrays().items()}
            if worker.parts
            else None,
        }
        for worker in done
    ]
    atomic_write(path, lambda f: torch.save({"format": FORMAT, "kind": kind, "config": config, "workers": workers}, f))


def load_partial(path: str, kind: str) -> tuple[dict, list[WorkerData]]:
    """(config, work done) of a partial file of ``kind`` (``train distill``, ``train locator``);
    ValueError naming the file when it is missing, corrupt or another trainer's."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ValueError(f"--resume {path}: no such file") from None
    except Exception as err:  # torch raises many kinds for a file that is not a checkpoint
        raise ValueError(
            f"--resume {path}: not a partial run written by tiengow {kind} ({str(err).splitlines()[0][:200]})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"--resume {path}: not a partial run (the file an interrupted tiengow {kind} writes)")
    if data["kind"] != kind:
        raise ValueError(f"--resume {path}: a partial run of tiengow {data['kind']}, not of tiengow {kind}")
    done = [
        WorkerData(
            worker["hands"],
            worker["carry"],
            [{key: value.numpy() for key, value in worker["arrays"].items()}] if worker["arrays"] else [],
        )
        for worker in data["workers"]
    ]
    return data["config"], done


@dataclass
class Partial:
    """A stopped run read back for ``--resume``: the file it came from and the work done."""

    path: str
    done: list[WorkerData]


def read_resume(
    cls: type[Config], path: str, kind: str, overrides: list[str], fixed: tuple[str, ...]
) -> tuple[Config, Partial]:
    """(config, work done) of ``--resume PATH``: the stored settings, the output beside PATH, with
    the ``--set`` overrides on top (none of ``fixed``, which the data made so far depend on);
    ValueError naming the problem."""
    saved, done = load_partial(path, kind)
    changed = parse_overrides(overrides)
    for name in fixed:
        if name in changed and changed[name] != saved.get(name):
            raise ValueError(
                f"--resume {path}: {name} cannot change on resume (the hands played so far were "
                f"played with {name}={saved.get(name)!r}); settings that may change: "
                f"{', '.join(sorted(set(saved) - set(fixed)))}"
            )
    if path.endswith(".partial"):  # the output goes beside the partial file, wherever it is now (moved, or another cwd)
        saved["out"] = path[: -len(".partial")]
    try:
        return build(cls, {**saved, **changed}), Partial(path, done)
    except ValueError as err:
        raise ValueError(f"--resume {path}: {err}") from None


def stop_with_partial(
    signal_number: int, kind: str, out: str, config: dict, done: list[WorkerData], hands: int
) -> NoReturn:
    """Save the work done beside ``out`` (``OUT.partial``) and raise ``Interrupted`` with the command
    that resumes it; the run's output will be ``out``."""
    partial = out + ".partial"
    save_partial(partial, kind, {**config, "out": out}, done)
    played = sum(worker.hands for worker in done)
    where = (
        f"after {played:,} of {hands:,} hands"
        if played < hands
        else "in the fit, all hands played (the fit starts again on resume)"
    )
    raise Interrupted(signal_number, where, partial, f"tiengow {kind} --resume {partial}")


class ResumableConfig(TrainerConfig):
    """The config of a trainer that plays ``hands`` in workers, then fits (distill, locator). A
    subclass names its ``COMMAND`` (``train distill``), its ``STAGE`` of play (the progress and
    summary name it), its default ``OUTPUT`` file name, and the settings the hands depend on
    (``FIXED``), which a resume may not change."""

    COMMAND: ClassVar[str]
    STAGE: ClassVar[str]
    OUTPUT: ClassVar[str]
    FIXED: ClassVar[tuple[str, ...]]

    @classmethod
    def for_resume(cls: type[Config], path: str, overrides: list[str]) -> tuple[Config, Partial]:
        """The config and the work done of a stopped run (``--resume PATH``), with ``--set``
        overrides of the fit's settings on top."""
        return read_resume(cls, path, cls.COMMAND, overrides, cls.FIXED)


def play_then_fit(
    config: Any,
    play: Callable,
    fit: Callable,
    write: Callable[[str, dict, dict], None],
    progress: Callable[[str, int, float], None] | None = None,
    resume: Partial | None = None,
) -> dict:
    """A run of a ``ResumableConfig`` trainer, and its summary: ``play(stop, done, progress)`` plays
    the hands from ``resume``'s on, ``fit(done, stop, progress)`` fits ((model, figures), or None
    when stopped), and ``write(out, model, summary)`` writes the output, ``config.out`` or
    ``OUTPUT`` in a new ``runs/<command>/<timestamp>`` folder. ``progress(stage, count, figure)``
    hears of both stages. On SIGINT or SIGTERM, ``interrupt.Interrupted`` after the chunk of hands
    under way, or in the fit, with the work done in ``OUT.partial`` (``stop_with_partial``); a
    resumed run's partial file goes once the output is written."""
    start = time.perf_counter()
    with stop_on_signal() as stop:
        done = play(
            stop,
            resume.done if resume else None,
            (lambda hands: progress(config.STAGE, hands, 0.0)) if progress else None,
        )
        played = time.perf_counter() - start
        fitted = (
            None
            if stop
            else fit(done, stop, (lambda count, figure: progress("fit", count, figure)) if progress else None)
        )
    # the folder is made once there is something to put in it
    out = config.out if config.out is not None else os.path.join(run_dir(config.COMMAND), config.OUTPUT)
    if fitted is None:
        stop_with_partial(stop.signal, config.COMMAND, out, config.to_dict(), done, config.hands)
    model, figures = fitted
    summary = {
        **figures,
        "hands": config.hands,
        f"{config.STAGE}_seconds": played,
        "fit_seconds": time.perf_counter() - start - played,
        "out": out,
    }
    write(out, model, summary)
    if resume:
        os.remove(resume.path)  # all it held is in the output now
    return summary
