"""Command-line plumbing of the ``tiengow`` commands (and ``python -m tiengow.benchmarks...``).

* ``run_for_people(prog, work)``: a command's body with every error one line for people;
* ``int_option(low)``: an argparse type for integer options with a lower bound;
* ``list_option(item)``: an argparse type for comma-separated lists, each item once;
* ``rules_option(text)``: the RuleSet of a ``--rules`` value (preset, file, or JSON object).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from tiengow.agents.infra import install_hint

# Packages that only some commands need, and the pyproject extra that installs each.
OPTIONAL_EXTRAS = {
    "torch": "train",
    "tensorboard": "train",
    "matplotlib": "train",
    "ray": "ray",
    "pyspiel": "peers",
    "rlcard": "peers",
    "starlette": "web",
    "uvicorn": "web",
}


class Terminated(KeyboardInterrupt):
    """SIGTERM outside a trainer (which stops with a checkpoint, ``training/interrupt.py``): the
    command ends as at Ctrl-C, its worker processes killed (``agents/infra.worker_pool``)."""


def _terminate(number: int, frame: object) -> None:
    raise Terminated


def run_for_people(prog: str, work: Callable[[], int | None]) -> int:
    """The exit status of ``work()``, every error a line on stderr beginning ``PROG: `` and never
    a traceback: ValueError (written for people) as ``error:`` (2; with ``TIENGOW_DEBUG=1``, after
    the traceback of the error it wraps, such as a plugin's own), a missing optional
    dependency with the pip command that brings it (2), a trainer stopped by a signal with its
    checkpoint and resume command (128 + the signal), Ctrl-C elsewhere as ``interrupted`` (130) and
    SIGTERM as ``terminated`` (143), each with the command's worker processes killed, the
    reader of our output gone as quiet (141), the system refusing a file as ``error:`` (1),
    anything else as ``internal error`` (70; the traceback with ``TIENGOW_DEBUG=1``). A standard
    stream that was closed (``<&-``, Python's None) reads as empty and writes to nowhere."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115  (for the whole run)
    from tiengow.training.interrupt import Interrupted

    main = threading.current_thread() is threading.main_thread()  # signals reach the main thread only
    previous = signal.signal(signal.SIGTERM, _terminate) if main else None
    try:
        return work() or 0
    except Interrupted as stop:  # a trainer stopped by SIGINT or SIGTERM, its checkpoint written
        print(f"{prog}: {stop}", file=sys.stderr)
        return stop.status
    except ValueError as err:  # our ValueErrors are written for people
        if os.environ.get("TIENGOW_DEBUG") and err.__cause__ is not None:  # such as a plugin's own error
            traceback.print_exception(err.__cause__, file=sys.stderr)
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:  # an optional dependency: say which extra brings it
        extra = OPTIONAL_EXTRAS.get((err.name or "").partition(".")[0])
        if extra is None:
            raise
        print(
            f"{prog}: error: this command needs {err.name}, which is not installed; {install_hint(extra)}",
            file=sys.stderr,
        )
        return 2
    except Terminated:
        print(f"{prog}: terminated", file=sys.stderr)
        return 143
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
        print(
            f"{prog}: internal error: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''} "
            "(a bug in tiengow; TIENGOW_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 70  # EX_SOFTWARE
    finally:
        if main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


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
            raise argparse.ArgumentTypeError(
                f"takes items separated by single commas, such as {example}; got {text[:80]!r}"
            )
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
        raise ValueError(
            f"{option} takes a preset name, a rules file or a JSON object of switches such as "
            f'{{"players": 3}}; got a JSON list, {text[:40]}'
        )
    if not text.lstrip().startswith("{"):
        return RuleSet.from_spec(text)
    try:
        spec = load_json(text)
    except ValueError as err:
        raise ValueError(f"{option} is not a valid JSON object: {parse_error_text(err)}") from None
    return RuleSet.from_spec(spec)
