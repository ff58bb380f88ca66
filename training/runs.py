"""Where a training run writes: its folder, the checks on its output paths, its TensorBoard scalars.

* ``run_dir(command)``: the default output folder of a command, ``runs/<command>/<timestamp>``
  under the current folder (``runs/`` is ignored by git); commands print where they wrote;
* ``check_output_path(path, option)`` and ``check_outputs(out, option, command)``: refuse an
  output path that cannot be written, before the work that produces it starts;
* ``ScalarLog(log_dir)``: the trainers' TensorBoard scalars (and the JSON files beside them).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from tiengow.agents.infra import atomic_write, json_text

RUNS = "runs"


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
        raise ValueError(
            f"{option} {path}: the folder already holds files (an earlier run's?); give a new or "
            f"empty folder, so that two runs' outputs do not mix"
        )
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


class ScalarLog:
    """TensorBoard scalars of a training run: torch's SummaryWriter, else the tensorboard package's
    event writer, else nothing (with a one-line notice). Never raises on a missing package.
    ``purge_step`` (a resumed run) hides the events an earlier run logged from that step on."""

    def __init__(self, log_dir: str | None, notice: Callable[[str], None] | None = None, purge_step: int | None = None):
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
            notice(
                f"tiengow: TensorBoard logging skipped (neither torch nor tensorboard is installed); "
                f"the curve is still in the run summary, not in {log_dir}"
            )
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
