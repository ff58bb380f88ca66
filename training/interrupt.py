"""Stopping a trainer cleanly on SIGINT (Ctrl-C) or SIGTERM (a scheduler preempting the job).

One mechanism for every trainer: inside ``stop_on_signal()`` the first SIGINT or SIGTERM only
raises a flag (``StopRequest.signal``). The trainer looks at it between two units of work (a PPO
update, a chunk of CFR iterations), finishes or abandons the one under way, writes its
checkpoint atomically and raises ``Interrupted``, which says where the checkpoint is and the
exact command that resumes it; the command line prints that and exits with 128 + the signal's
number (130, 143). A second signal raises KeyboardInterrupt at once: a checkpoint being written
is abandoned (``atomic_write`` removes its temporary file), so the last good one stays whole.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(Exception):
    """A trainer stopped at a signal, its checkpoint written: the message says where and how to resume."""

    def __init__(self, signal_number: int, where: str, checkpoint: str | None, resume: str | None):
        self.signal_number, self.where, self.checkpoint = signal_number, where, checkpoint
        self.status = 128 + signal_number
        name = signal.Signals(signal_number).name
        if checkpoint is None:
            text = f"stopped by {name} {where}; nothing was finished to keep (no checkpoint)"
        else:
            text = f"stopped by {name} {where}; checkpoint {checkpoint}" + (
                f"; resume with: {resume}" if resume else ""
            )
        super().__init__(text)


class StopRequest:
    """The signal received (a number), or None while the trainer may go on."""

    signal: int | None = None

    def __bool__(self) -> bool:
        return self.signal is not None


@contextlib.contextmanager
def stop_on_signal() -> Iterator[StopRequest]:
    """While inside: the first SIGINT or SIGTERM sets the returned ``StopRequest``, a second
    raises KeyboardInterrupt. Outside the main thread (where Python delivers no signal) the
    request is never set and the handlers are left alone."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handle(number: int, frame: object) -> None:
        if request.signal is not None:
            raise KeyboardInterrupt
        request.signal = number

    previous = {number: signal.signal(number, handle) for number in SIGNALS}
    try:
        yield request
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
