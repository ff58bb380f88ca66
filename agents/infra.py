"""What the bots and the layers above them share: files, worker processes, Ray. One definition each.

* ``atomic_write(path, write)``: a file appears whole or not at all (a temporary file beside
  it, then ``os.replace``), for checkpoints, policies, results and records;
* ``json_text(data)``: standard JSON (no Infinity or NaN);
* ``worker_pool``: spawned worker processes that fail fast when one dies;
* ``connect_ray(address)``: the ``ray`` module, connected, failing fast with a message;
* ``install_hint(extra)``: the pip command that adds an optional extra to *this* install.

Where a training run writes is ``tiengow.training.runs``; the command-line plumbing (argparse
types, the error wrapper) is ``tiengow.options``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import math
import multiprocessing as mp
import os
import socket
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any


def atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write(f)`` on a temporary binary file beside ``path``, then move it onto ``path``:
    a reader never sees half a file, and a failed write leaves nothing behind."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the result is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def worker_pool(
    workers: int, what: str, initializer: Callable | None = None, initargs: tuple = ()
) -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """``workers`` spawned processes. A worker that dies (killed, out of memory) ends the work
    at once with an OSError naming ``what`` (such as "the evaluation"), where a
    ``multiprocessing.Pool`` would replace the worker and wait forever for its lost task. A
    generator that holds the pool and is closed early (an evaluation whose sequential test has
    decided) drops the queued tasks and lets the running ones finish: killing the workers there
    made the executor's own thread print a traceback. Any other exception in the caller (a second
    Ctrl-C) kills the workers rather than waiting for their tasks. The caller leaves cancelling
    to the pool: a future it cancelled and the pool then failed as broken made Python 3.11's
    executor thread print a traceback of its own."""
    try:
        with concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=mp.get_context("spawn"), initializer=initializer, initargs=initargs
        ) as pool:
            try:
                yield pool
            except GeneratorExit:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            except BaseException:
                for process in list(pool._processes.values()):  # no public way before Python 3.14
                    process.kill()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    except concurrent.futures.process.BrokenProcessPool:
        raise OSError(f"a worker process of {what} died (killed, or out of memory): no result; run it again") from None


def connect_ray(address: str):
    """The ``ray`` module, connected: to a Ray instance started here ("local") or to the cluster at
    ``address`` (as ``ray start --head`` prints it). Already connected: as it is."""
    try:
        import ray
    except ImportError:
        raise ValueError(f"--ray needs Ray: {install_hint('ray')}") from None
    if not ray.is_initialized():
        _check_reachable(address)
        try:
            ray.init(
                address=None if address == "local" else address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        except ConnectionError as err:
            raise ValueError(
                f"could not connect to the Ray cluster at {address!r} ({str(err).splitlines()[0]}); "
                "start one with `ray start --head`, or use --ray alone for a local instance"
            ) from None
    return ray


def _check_reachable(address: str) -> None:
    """Fail fast on an address that is not HOST:PORT (nor "local", "auto" or ray://...), or a
    HOST:PORT that nothing answers at (Ray itself retries for minutes)."""
    if address in ("local", "auto") or address.startswith("ray://"):
        return  # Ray checks those itself
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 1 <= int(port[:6]) <= 65535:
        raise ValueError(
            f"--ray takes the HOST:PORT of a Ray cluster, as `ray start --head` prints it (such as "
            f"10.0.0.5:6379), or nothing for a local instance; got {address[:80]!r}"
        )
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as err:
        raise ValueError(
            f"no Ray cluster answers at {address} ({err.strerror or err}); start one with "
            "`ray start --head` there, or use --ray alone for a local instance"
        ) from None


def json_text(data: Any, indent: int | None = None) -> str:
    """``json.dumps(data)`` as standard JSON: every float that is not finite (the interval of a
    single deal is infinite) is written as null, never as Infinity or NaN."""

    def finite(value: Any) -> Any:
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, dict):
            return {k: finite(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [finite(v) for v in value]
        return value

    return json.dumps(finite(data), indent=indent, allow_nan=False)


def install_hint(extra: str) -> str:
    """``pip install "tiengow[EXTRA]"`` for an install from a wheel or an index, and
    ``pip install -e "CHECKOUT[EXTRA]"`` for an editable install of a checkout."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding agents/
    if os.path.exists(os.path.join(package, "pyproject.toml")):
        return f'pip install -e "{package}[{extra}]"'
    return f'pip install "tiengow[{extra}]"'
