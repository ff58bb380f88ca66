"""``tiengow serve``: check the arguments, bind the address, and run the app under uvicorn.

The socket is bound here, before anything else happens, so that a port in use or a host that
does not resolve is one line for the person rather than a server's traceback; only then is
the records folder made (``runs/serve/<timestamp>`` by default) and the address printed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tiengow.training.runs import run_dir


def check_records(text: str | None) -> Path | None:
    """A --records value that can hold records (None: the default folder, made later)."""
    if text is None:
        return None
    if not text.strip():
        raise ValueError("--records is empty; give a folder for the hand records (new or existing)")
    path = Path(text)
    try:
        if path.exists() and not path.is_dir():
            raise ValueError(f"--records {text}: not a folder; give a folder for the hand records (new or existing)")
        if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
            raise ValueError(f"--records {text}: the folder is not writable")
    except OSError as err:  # a name the file system refuses: too long, a loop of links
        raise ValueError(f"--records {text[:80]}: {err.strerror or err}; give a folder for the hand records") from None
    return path


def check_bots_dir(text: str | None) -> Path | None:
    """A --bots-dir value: an existing, readable folder (None: the page reads no bot files)."""
    if text is None:
        return None
    if not text.strip():
        raise ValueError("--bots-dir is empty; give the folder whose bot files the page may play, or leave it out")
    path = Path(text)
    try:
        if not path.is_dir():
            raise ValueError(f"--bots-dir {text}: not a folder; give an existing folder of bot files")
        if not os.access(path, os.R_OK | os.X_OK):
            raise ValueError(f"--bots-dir {text}: the folder is not readable")
    except OSError as err:  # a name the file system refuses: too long, a loop of links
        raise ValueError(f"--bots-dir {text[:80]}: {err.strerror or err}; give a folder of bot files") from None
    return path.resolve()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ValueError with the reason when it cannot be had."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0 to 65535, got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as err:
        raise ValueError(f"--host {host}: not an address of this machine ({err.strerror})") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise ValueError(
                f"port {port} on {host} is in use: stop what uses it, or choose another with --port"
            ) from None
        raise ValueError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    sock.set_inheritable(True)
    return sock


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    records: str | None = None,
    bots_dir: str | None = None,
    say: Callable[[str], None] = print,
) -> int:
    """Run the server until interrupted; ValueError (one line) for bad arguments."""
    import uvicorn

    from .app import create_app, is_loopback  # starlette only when serving; the app imports nothing of this

    folder = check_records(records)
    bots = check_bots_dir(bots_dir)
    sock = bind(host, port)
    try:
        if folder is None:
            folder = Path(run_dir("serve"))
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        sock.close()
        raise ValueError(f"--records {folder}: cannot create the folder ({err.strerror})") from None
    address, bound = sock.getsockname()[:2]  # what was bound decides, not how --host spelt it
    loopback = is_loopback(address)
    shown = f"[{address}]" if ":" in address else address
    say(f"tiengow serve: http://{shown}:{bound}/  (hand records go to {folder}; Ctrl+C stops)")
    if bots is not None:
        say(f"tiengow serve: the page may play the bot files in {bots}")
    if not loopback:
        say(f"tiengow serve: listening on {host}, not only on this machine: anyone who can reach it can play")
    app = create_app(folder, loopback_only=loopback, bots_dir=bots)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    server.run(sockets=[sock])
    return 0


@contextlib.contextmanager
def running(records: Path, host: str = "127.0.0.1", port: int = 0, timeout: float = 30.0) -> Iterator[str]:
    """The app served in a background thread for the ``with`` block (tests, notebooks): yields
    its base URL, ``http://127.0.0.1:PORT``; port 0 picks a free port."""
    import uvicorn

    from .app import create_app, is_loopback  # starlette only when serving; the app imports nothing of this

    sock = bind(host, port)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(Path(records), loopback_only=is_loopback(sock.getsockname()[0])),
            log_level="warning",
            access_log=False,
            lifespan="off",
            # No logging config of uvicorn's own: it would bind its handlers to the sys.stderr of
            # the moment (a test's captured stream, closed after the test); unconfigured, a
            # warning goes to whatever sys.stderr is when it is logged.
            log_config=None,
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="tiengow-serve")
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError(f"the server on {host}:{sock.getsockname()[1]} did not start within {timeout:.0f} s")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()
