"""Infrastructure shared by the layers above the core: one definition each.

* ``atomic_write(path, write)``: a file appears whole or not at all (a temporary file beside
  it, then ``os.replace``), for checkpoints, policies, results and records;
* ``run_dir(command)``: the default output folder of a command, ``runs/<command>/<timestamp>``
  under the current folder (``runs/`` is ignored by git); commands print where they wrote;
* ``connect_ray(address)``: the ``ray`` module, connected, failing fast with a message;
* ``install_hint(extra)``: the pip command that adds an optional extra to *this* install;
* ``run_for_people(prog, work)``: a command's body with every error one line for people (the
  ``tiengow`` CLI and the ``python -m tiengow.benchmarks...`` ones);
* ``check_output_path(path, option)``: refuse an output path that cannot be written, before
  the work that produces it starts;
* ``int_option(low)``: an argparse type for integer options with a lower bound;
* ``list_option(item)``: an argparse type for comma-separated lists, each item once;
* ``rules_option(text)``: the RuleSet of a ``--rules`` value (preset, file, or JSON object);
* ``ScalarLog(log_dir)``: the trainers' TensorBoard scalars (and the JSON files beside them).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import math
import multiprocessing as mp
import os
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from typing import IO, Any

RUNS = "runs"


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
def worker_pool(workers: int, what: str, initializer: Callable | None = None,
                initargs: tuple = ()) -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """``workers`` spawned processes. A worker that dies (killed, out of memory) ends the work
    at once with an OSError naming ``what`` (such as "the evaluation"), where a
    ``multiprocessing.Pool`` would replace the worker and wait forever for its lost task."""
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"),
                                                    initializer=initializer, initargs=initargs) as pool:
            yield pool
    except concurrent.futures.process.BrokenProcessPool:
        raise OSError(f"a worker process of {what} died (killed, or out of memory): no result; "
                      f"run it again") from None


_COUNTER = None  # in a worker of ``map_counted``: the units of work all its workers have done (shared)


def _count_into(counter) -> None:
    global _COUNTER
    _COUNTER = counter


def count_done(units: int = 1) -> None:
    """In a worker of ``map_counted``: add ``units`` to the work done (such as one hand played)."""
    with _COUNTER.get_lock():
        _COUNTER.value += units


def map_counted(function: Callable, tasks: list, workers: int, what: str,
                progress: Callable[[int], None] | None = None) -> list:
    """``[function(task) for task in tasks]`` in ``workers`` spawned processes (``worker_pool``),
    in task order; ``function`` calls ``count_done`` as it goes, and ``progress`` gets the total
    done by all workers every 5 seconds and at the end."""
    counter = mp.get_context("spawn").Value("q", 0)
    with worker_pool(workers, what, initializer=_count_into, initargs=(counter,)) as pool:
        futures = [pool.submit(function, task) for task in tasks]
        while concurrent.futures.wait(futures, timeout=5.0).not_done:
            if progress:
                progress(counter.value)
        results = [future.result() for future in futures]
    if progress:
        progress(counter.value)
    return results


def run_dir(command: str, root: str = RUNS) -> str:
    """A new folder ``runs/<command>/<YYYYmmdd-HHMMSS>`` (a suffix ``-2``, ``-3``, ... when that
    second is taken), created, and returned as a path relative to the current folder."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = os.path.join(root, command.replace(" ", "-"), stamp)
    path, n = base, 1
    while True:
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            n += 1
            path = f"{base}-{n}"


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
            ray.init(address=None if address == "local" else address, include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        except ConnectionError as err:
            raise ValueError(f"could not connect to the Ray cluster at {address!r} ({str(err).splitlines()[0]}); "
                             "start one with `ray start --head`, or use --ray alone for a local instance") from None
    return ray


def _check_reachable(address: str) -> None:
    """Fail fast on an address that is not HOST:PORT (nor "local", "auto" or ray://...), or a
    HOST:PORT that nothing answers at (Ray itself retries for minutes)."""
    if address in ("local", "auto") or address.startswith("ray://"):
        return  # Ray checks those itself
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 1 <= int(port[:6]) <= 65535:
        raise ValueError(f"--ray takes the HOST:PORT of a Ray cluster, as `ray start --head` prints it (such as "
                         f"10.0.0.5:6379), or nothing for a local instance; got {address[:80]!r}")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as err:
        raise ValueError(f"no Ray cluster answers at {address} ({err.strerror or err}); start one with "
                         "`ray start --head` there, or use --ray alone for a local instance") from None




class ScalarLog:
    """TensorBoard scalars of a training run: torch's SummaryWriter, else the tensorboard package's
    event writer, else nothing (with a one-line notice). Never raises on a missing package.
    ``purge_step`` (a resumed run) hides the events an earlier run logged from that step on."""

    def __init__(self, log_dir: str | None, notice: Callable[[str], None] | None = None,
                 purge_step: int | None = None):
        self.log_dir = log_dir
        self._add: Callable[[str, float, int], None] | None = None
        self._text: Callable[[str, str], None] = lambda tag, text: None
        self._close: Callable[[], None] = lambda: None
        if log_dir is None:
            return
        notice = notice or (lambda text: print(text, file=sys.stderr))
        try:
            from torch.utils.tensorboard import SummaryWriter
            writer = SummaryWriter(log_dir, purge_step=purge_step)
            self._add, self._text, self._close = writer.add_scalar, writer.add_text, writer.close
            return
        except OSError as err:
            notice(f"tiengow: TensorBoard logging skipped: cannot write to {log_dir} ({err.strerror or err})")
            return
        except Exception:  # torch missing, or present without tensorboard
            pass
        try:
            from tensorboard.compat.proto.event_pb2 import Event
            from tensorboard.compat.proto.summary_pb2 import Summary
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
        except ImportError:
            notice(f"tiengow: TensorBoard logging skipped (neither torch nor tensorboard is installed); "
                   f"the curve is still in the run summary, not in {log_dir}")
            return
        try:
            os.makedirs(log_dir, exist_ok=True)
            events = EventFileWriter(log_dir)

            def add(tag: str, value: float, step: int) -> None:
                summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(value))])
                events.add_event(Event(wall_time=time.time(), step=int(step), summary=summary))

            self._add, self._close = add, events.close
        except OSError as err:
            notice(f"tiengow: TensorBoard logging skipped: cannot write to {log_dir} ({err.strerror or err})")

    def add(self, tag: str, value: float, step: int) -> None:
        """One scalar at ``step`` (env steps, iterations: the run's own x axis)."""
        if self._add is not None:
            self._add(tag, value, step)

    def text(self, tag: str, text: str) -> None:
        """A text entry (the run's config), where the writer supports it."""
        self._text(tag, text)

    def write_json(self, name: str, data: Any) -> None:
        """``data`` as ``log_dir/name`` (atomically), beside the event files; nothing without a log_dir."""
        if self.log_dir is None:
            return
        text = json_text(data, indent=1)
        atomic_write(os.path.join(self.log_dir, name), lambda f: f.write(text.encode()))

    def close(self) -> None:
        self._close()


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


# Packages that only some commands need, and the pyproject extra that installs each.
OPTIONAL_EXTRAS = {"torch": "train", "tensorboard": "train", "matplotlib": "train", "ray": "ray",
                   "pyspiel": "peers", "rlcard": "peers", "starlette": "web", "uvicorn": "web"}


def run_for_people(prog: str, work: Callable[[], int | None]) -> int:
    """The exit status of ``work()``, every error a line on stderr beginning ``PROG: `` and never
    a traceback: ValueError (written for people) as ``error:`` (2; with ``TIENGOW_DEBUG=1``, after
    the traceback of the error it wraps, such as a plugin's own), a missing optional
    dependency with the pip command that brings it (2), Ctrl-C as ``interrupted`` (130), the
    reader of our output gone as quiet (141), the system refusing a file as ``error:`` (1),
    anything else as ``internal error`` (70; the traceback with ``TIENGOW_DEBUG=1``). A standard
    stream that was closed (``<&-``, Python's None) reads as empty and writes to nowhere."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115  (for the whole run)
    try:
        return work() or 0
    except ValueError as err:  # our ValueErrors are written for people
        if os.environ.get("TIENGOW_DEBUG") and err.__cause__ is not None:  # such as a plugin's own error
            traceback.print_exception(err.__cause__, file=sys.stderr)
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:  # an optional dependency: say which extra brings it
        extra = OPTIONAL_EXTRAS.get((err.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"{prog}: error: this command needs {err.name}, which is not installed; {install_hint(extra)}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (``tiengow replay F | head``): stop quietly. Standard
        # output now points at nothing, so that the interpreter's final flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a program that the signal ended
    except OSError as err:  # the disk or the system refused (full, read-only, gone) after the checks passed
        where = f" ({err.filename})" if err.filename else ""
        print(f"{prog}: error: {err.strerror or err}{where}", file=sys.stderr)
        return 1
    except Exception as err:  # a bug of ours: one line, and the traceback only on request
        if os.environ.get("TIENGOW_DEBUG"):
            raise
        print(f"{prog}: internal error: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''} "
              "(a bug in tiengow; TIENGOW_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 70  # EX_SOFTWARE


def check_output_path(path: str, option: str, folder_only: bool = False, empty: bool = False) -> None:
    """ValueError naming ``option`` unless ``path`` can be written: a file path (or, with
    ``folder_only``, a folder; with ``empty`` too, a new or empty one, so that the outputs of two
    runs never mix) whose folder exists and takes a new file, or can be created (the nearest
    existing ancestor is a folder that takes one). The test is a real one, a temporary file made
    and removed at once, since permission bits do not tell (root, /proc, read-only mounts)."""
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"{option}: give a {'folder' if folder_only else 'file'} path, got {path!r}")
    if not folder_only and (path.endswith(("/", os.sep)) or os.path.isdir(path)):
        raise ValueError(f"{option} {path}: is a folder; give a file path")
    if folder_only and os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a file; give a folder")
    if empty and os.path.isdir(path) and any(os.scandir(path)):
        raise ValueError(f"{option} {path}: the folder already holds files (an earlier run's?); give a new or "
                         f"empty folder, so that two runs' outputs do not mix")
    folder = os.path.abspath(path) if folder_only else os.path.dirname(os.path.abspath(path))
    ancestor = folder
    while not os.path.exists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise ValueError(f"{option} {path}: {ancestor} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=ancestor):
            pass
    except OSError as err:
        where = f"the folder {folder}" if ancestor == folder else f"{folder} cannot be created: {ancestor}"
        raise ValueError(f"{option} {path}: {where} does not take new files ({err.strerror or err})") from None


def check_outputs(out: str | None, option: str, command: str, suffixes: tuple[str, ...] = ()) -> None:
    """Before a command's work: ValueError unless its outputs can be written, ``out`` + each of
    ``suffixes`` (``--out OUT`` writing OUT.json and OUT.png), or, with ``out`` None, a new
    folder under ``runs/<command>/`` (``run_dir``) in the current folder."""
    if out is None:
        default = os.path.join(RUNS, command.replace(" ", "-"))
        try:
            check_output_path(default, "the default output folder", folder_only=True)
        except ValueError as err:
            raise ValueError(f"{err}; give {option} elsewhere, or run from a folder that takes new files") from None
        return
    check_output_path(out, option)
    for suffix in suffixes:
        if suffix:
            check_output_path(out + suffix, f"{option} {out} (its {suffix} file)")


INT64_MAX = 2**63 - 1  # every count and seed ends up in a 64-bit integer of numpy or the compiled core
MAX_WORKERS = 256  # processes or Ray workers one command may start


def int_option(low: int, high: int = INT64_MAX) -> Callable[[str], int]:
    """An argparse ``type=`` for an integer option from ``low`` to ``high``; argparse then names
    the option in its message (``argument --workers: must be an integer >= 1, got 0``)."""
    wanted = f"an integer >= {low}" if high == INT64_MAX else f"an integer from {low} to {high:,}"

    def parse(text: str) -> int:
        digits = text.strip().lstrip("+-")
        try:  # digits 0-9 only: int() would take 1_0 and other scripts' digits
            value = int(text) if len(text) <= 40 and digits.isascii() and digits.isdigit() else None
        except ValueError:
            value = None
        too_large = digits.isdigit() and (value is None or value > INT64_MAX)  # say the bound the type has
        bound = f"must be {wanted}" + " and at most 2^63 - 1" * (too_large and high == INT64_MAX)
        if value is None:
            got = f"a {len(digits)}-digit number" if digits.isdigit() else repr(text[:40])
            raise argparse.ArgumentTypeError(f"{bound}, got {got}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{bound}, got {value}")
        return value
    parse.__name__ = wanted
    return parse


def list_option(item: Callable[[str], Any] = str, example: str = "a,b") -> Callable[[str], list]:
    """An argparse ``type=`` for a comma-separated list (as in ``example``) of items read by
    ``item``, none empty and none twice (a measure would count it twice)."""
    def parse(text: str) -> list:
        parts = text.split(",")
        if not all(part.strip() for part in parts):
            raise argparse.ArgumentTypeError(f"takes items separated by single commas, such as {example}; "
                                             f"got {text[:80]!r}")
        values = [item(part.strip()) for part in parts]
        twice = next((part for k, part in enumerate(parts) if values.index(values[k]) != k), None)
        if twice is not None:
            raise argparse.ArgumentTypeError(f"lists each item once; {twice.strip()[:40]!r} is given twice")
        return values
    parse.__name__ = f"a comma-separated list, such as {example}"
    return parse


def rules_option(text: str | None, option: str = "--rules"):
    """The ``RuleSet`` of a ``--rules`` value: a preset name, a YAML/TOML file, or a JSON object
    of switches (``None``: standard). Malformed JSON is a ValueError naming the option and where."""
    from tiengow_env.checks import load_json
    from tiengow_env.rules import RuleSet, parse_error_text
    if text is None:
        return RuleSet.from_spec("standard")
    if text.lstrip().startswith("["):
        raise ValueError(f"{option} takes a preset name, a rules file or a JSON object of switches such as "
                         f'{{"players": 3}}; got a JSON list, {text[:40]}')
    if not text.lstrip().startswith("{"):
        return RuleSet.from_spec(text)
    try:
        spec = load_json(text)
    except ValueError as err:
        raise ValueError(f"{option} is not a valid JSON object: {parse_error_text(err)}") from None
    return RuleSet.from_spec(spec)
