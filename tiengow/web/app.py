"""The ASGI app of ``tiengow serve``: the page, its static files, and a small JSON API.

    GET  /                     the page (static/index.html)
    GET  /api/meta             tiles, rule presets, agent kinds, the records folder
    GET  /api/state            {"match": the session's match view, or null}
    POST /api/new              start a match: play (a person and bots) or watch (bots only);
                               the only request that names agents (``match.check_agent``)
    POST /api/move             the person's decision             POST /api/step   a bot's decision (watch)
    POST /api/next             the next hand of the match
    GET  /api/records          the record and league files of the records folder
    GET  /api/replay?path=P&index=N      a record's frames, trick by trick
    GET  /api/league?path=P    a league JSON of the folder    POST /api/league   an uploaded one

The game state lives here, one match per browser session: the session is a random id in an
HttpOnly, SameSite=Strict cookie, made by ``/api/new`` (no other request makes one, so requests
without a cookie cannot crowd out the sessions in use); the sessions are bounded (the least
recently used goes when a new one would pass the bound) and expire after an idle time. Every
refused request is a 4xx ``{"error": "..."}`` and changes nothing. POST bodies must be JSON
(``Content-Type: application/json``, which a cross-site form cannot send) and are
size-bounded. On a loopback address the ``Host`` header must name the loopback (against DNS
rebinding).
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import sys
import threading
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tiengow_env.checks import load_json
from tiengow_env.rules import PRESETS

from . import views as V
from .match import Refused, WebMatch, parse_config
from .records import RecordsFolder, league_view

STATIC = Path(__file__).resolve().parent / "static"
COOKIE = "tiengow_session"
MAX_SESSIONS = 64
IDLE_SECONDS = 2 * 3600
MAX_BODY_BYTES = 4 * 2**20  # a league upload is the largest body
MAX_INDEX_DIGITS = 9
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'",
}


def is_loopback(name: str) -> bool:
    """Whether a host name or address names this machine's loopback only: ``localhost``,
    127.0.0.0/8 or ::1 (or an IPv4 loopback mapped into IPv6)."""
    if name.lower().rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return (getattr(address, "ipv4_mapped", None) or address).is_loopback


@dataclass
class Session:
    """One browser session: its match (None before the first) and the lock its requests take."""

    match: WebMatch | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: float = field(default_factory=time.monotonic)


class Sessions:
    """The sessions by id: at most ``limit``, each dropped after ``idle`` seconds unused."""

    def __init__(self, limit: int = MAX_SESSIONS, idle: float = IDLE_SECONDS):
        self.limit, self.idle = limit, idle
        self._items: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, sid: str | None) -> Session | None:
        with self._lock:
            self._expire()
            session = self._items.get(sid) if sid else None
            if session is not None:
                session.used = time.monotonic()
                self._items.move_to_end(sid)
            return session

    def create(self) -> tuple[str, Session]:
        with self._lock:
            self._expire()
            while len(self._items) >= self.limit:
                self._items.popitem(last=False)
            sid = secrets.token_urlsafe(24)
            self._items[sid] = session = Session()
            return sid, session

    def __len__(self) -> int:
        return len(self._items)

    def _expire(self) -> None:
        now = time.monotonic()
        while self._items:
            sid, oldest = next(iter(self._items.items()))
            if now - oldest.used < self.idle:
                break
            del self._items[sid]


class Json(JSONResponse):
    """A JSON response in ASCII: text from a request or a file may hold what UTF-8 cannot
    encode (a lone surrogate, escaped in JSON as \\ud800), and the response must not fail on it."""

    def render(self, content: object) -> bytes:
        return json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")


def error(message: str, status: int, **details) -> Json:
    return Json({"error": message, **details}, status_code=status)


async def read_json(request: Request) -> object:
    """The request's JSON body; ``Refused`` if it is not JSON, not declared JSON, or too large."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    declared = request.headers.get("content-length")
    if kind != "application/json":  # a cross-site form cannot send it: a POST without it is refused
        raise Refused(
            "send the request as JSON (Content-Type: application/json), with {} or no body where "
            "the request takes none",
            415,
        )
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        raise Refused(f"the request body is larger than {MAX_BODY_BYTES >> 20} MB", 413)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise Refused(f"the request body is larger than {MAX_BODY_BYTES >> 20} MB", 413)
    try:
        return load_json(body.decode("utf-8")) if body else None
    except RecursionError:
        raise Refused("the request body is nested too deeply to be a request") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise Refused(f"the request body is not valid JSON: {err}") from None


class Guard:
    """ASGI middleware: the Host check on a loopback address, and security headers on every response."""

    def __init__(self, app, loopback_only: bool):
        self.app, self.loopback_only = app, loopback_only

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + [
                    (k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()
                ]
            await send(message)

        if self.loopback_only:
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host[1 : host.find("]")] if host.startswith("[") else host.rpartition(":")[0] or host
            if not is_loopback(name):
                response = error(f"this server answers only on the loopback address, not to Host {host!r}", 400)
                return await response(scope, receive, send_with_headers)
        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # noqa: BLE001  (the app has answered 500 already: one line here, no traceback)
            print(
                f"tiengow serve: internal error on {scope.get('method')} {scope.get('path')}: "
                f"{type(exc).__name__}: {exc}"
                + ("" if os.environ.get("TIENGOW_DEBUG") else " (TIENGOW_DEBUG=1 shows the traceback)"),
                file=sys.stderr,
            )
            if os.environ.get("TIENGOW_DEBUG"):
                traceback.print_exc()


def create_app(
    records: Path, loopback_only: bool = True, sessions: Sessions | None = None, bots_dir: Path | None = None
) -> Guard:
    """The app, writing and reading records only in the folder ``records``; a request's bots may
    name files only in ``bots_dir`` (None: none, the shipped networks only; ``match.check_agent``)."""
    folder = RecordsFolder(records)
    bots_dir = Path(bots_dir).resolve() if bots_dir is not None else None
    sessions = sessions if sessions is not None else Sessions()

    def session_of(request: Request, create: bool) -> tuple[str | None, Session, bool]:
        """(id, the request's session, whether it is new). Without a live cookie: a new session
        if ``create``, else a blank one that is not kept (no match: nothing to read or change)."""
        sid = request.cookies.get(COOKIE)
        session = sessions.get(sid)
        if session is not None:
            return sid, session, False
        if not create:
            return None, Session(), False
        sid, session = sessions.create()
        return sid, session, True

    def respond(sid: str | None, new: bool, data: dict) -> Json:
        response = Json(data)
        if new:
            response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", max_age=IDLE_SECONDS)
        return response

    async def match_request(request: Request, action) -> Response:
        """Run ``action(session, body)`` under the session's lock, in a worker thread."""
        body = await read_json(request) if request.method == "POST" else None
        sid, session, new = session_of(request, create=False)

        def run() -> dict:
            with session.lock:
                action(session, body)
                return {"match": session.match.view() if session.match else None}

        return respond(sid, new, await run_in_threadpool(run))

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def meta(request: Request) -> Response:
        from tiengow.agents import base

        return Json(
            {
                "tiles": V.tile_table(),
                "presets": [{"name": n, "players": r.players} for n, r in PRESETS.items()],
                "agents": sorted(base.BUILTIN),
                "records": str(folder.root),
            }
        )

    async def state(request: Request) -> Response:
        return await match_request(request, lambda session, body: None)

    async def new(request: Request) -> Response:
        body = await read_json(request)

        def start() -> tuple[str, bool, dict]:
            config = parse_config(body, bots_dir)  # a refused request makes no session
            stamp = time.strftime("%Y%m%d-%H%M%S")
            match = WebMatch(config, folder.root / f"{stamp}-{config.mode}-{secrets.token_hex(3)}")
            sid, session, new = session_of(request, create=True)
            with session.lock:
                session.match = match
                return sid, new, {"match": match.view()}

        return respond(*await run_in_threadpool(start))

    def needs_match(session: Session) -> WebMatch:
        if session.match is None:
            raise Refused(
                "there is no match in this session: start one (none was started here, or the "
                f"session ended: after {IDLE_SECONDS // 3600} hours without a request, or when more "
                f"than {MAX_SESSIONS} were open)",
                409,
            )
        return session.match

    async def move(request: Request) -> Response:
        return await match_request(request, lambda session, body: needs_match(session).move(body))

    async def step(request: Request) -> Response:
        def one(session: Session, body: object) -> None:
            if body not in (None, {}):
                raise Refused("/api/step takes no body (or {})")
            needs_match(session).step()

        return await match_request(request, one)

    async def next_hand(request: Request) -> Response:
        def advance(session: Session, body: object) -> None:
            if body not in (None, {}):
                raise Refused("/api/next takes no body (or {})")
            needs_match(session).next_hand()

        return await match_request(request, advance)

    async def records_list(request: Request) -> Response:
        files = await run_in_threadpool(folder.listing)
        return Json({"root": str(folder.root), "files": files})

    async def replay(request: Request) -> Response:
        index = request.query_params.get("index", "1")
        if not (index.isascii() and index.isdigit() and len(index) <= MAX_INDEX_DIGITS):
            raise Refused(f"index must be a whole number from 1, got {index[:40]!r}")
        data = await run_in_threadpool(folder.replay, request.query_params.get("path"), int(index))
        return Json(data)

    async def league(request: Request) -> Response:
        if request.method == "POST":
            data = await read_json(request)
            return Json({"path": None, **await run_in_threadpool(league_view, data)})
        return Json(await run_in_threadpool(folder.league, request.query_params.get("path")))

    async def refused(request: Request, exc: Refused) -> Response:
        return error(str(exc), exc.status, **exc.details)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return error(str(exc.detail), exc.status_code)

    async def crashed(request: Request, exc: Exception) -> Response:
        return error(f"internal error: {type(exc).__name__}: {exc}", 500)

    routes = [
        Route("/", page),
        Route("/api/meta", meta),
        Route("/api/state", state),
        Route("/api/new", new, methods=["POST"]),
        Route("/api/move", move, methods=["POST"]),
        Route("/api/step", step, methods=["POST"]),
        Route("/api/next", next_hand, methods=["POST"]),
        Route("/api/records", records_list),
        Route("/api/replay", replay),
        Route("/api/league", league, methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={Refused: refused, HTTPException: http_error, Exception: crashed})
    app.state.sessions = sessions
    return Guard(app, loopback_only)
