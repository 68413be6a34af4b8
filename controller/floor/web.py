"""``floorctl floor serve``: the floor's web pages for surveillance and the pit.

Every page is behind a login (:mod:`controller.floor.users`); every lookup goes through
:mod:`controller.floor.queries`, which logs it with who made it. The floor page refreshes
itself by short polling (``/api/floor`` every 2 s; those refreshes are not logged, the page
view is). An indexer thread keeps the read model up to date (every ``poll`` seconds).

Sessions: a random token in an HttpOnly, SameSite=Strict cookie, held in memory (a restart
logs everyone out), ended by Log out, after 30 minutes without a request, or at the next
request once the account is disabled. Five wrong passwords for an account lock it for a
minute, doubling with each further lockout; twenty from one address lock that address the same
way, whatever names it tries. A name that cannot be an account's is refused as such (400) and
never counted, and the counts kept are bounded, so no stream of names grows them.

In front of the app (:class:`~controller.service.gate.Gate`, as on the dealer's screen): a
``Host`` that is not one of the server's names is refused (421), a POST from another origin
(403), a body over :data:`BODY_LIMIT` bytes (413); and a request whose line, headers and body do
not all arrive within :data:`REQUEST_TIMEOUT` seconds has its connection closed. The server
believes no proxy header: the client is the connection's own address.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import secrets
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import structlog
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.background import BackgroundTask

from controller.floor import queries, users
from controller.floor.audit import Who, log_lookup, lookups
from controller.floor.indexer import Indexer
from controller.floor.pit import money
from controller.floor.protect import flags_since
from controller.floor.schema import Floor
from controller.floor.settings import InputError, NotFound, Window
from controller.service.gate import Gate, allowed_names, timed_http

log = structlog.get_logger("floorctl.floor")

COOKIE = "floor_session"
SESSION_SECONDS = 30 * 60
MAX_FAILURES = 5  # wrong passwords for one account before it is locked
MAX_CLIENT_FAILURES = 20  # wrong passwords from one address before it is locked
LOCKOUT_SECONDS = 60.0
MAX_COUNTS = 1024  # accounts and addresses with a count kept; beyond, they share one
FORGET_AFTER = 3600.0  # seconds after its last failure that a count may be dropped
OVERFLOW = "*"
MAX_NAME = 64  # characters of a login name read at all (an account's is at most 32)
MAX_PASSWORD = 1024
BODY_LIMIT = 64 * 1024  # the largest form the pages post is a login
REQUEST_TIMEOUT = 10.0  # seconds for a request's line, headers and body to arrive
KEEP_ALIVE_SECONDS = 5
STATIC = Path(__file__).with_name("static")

templates = Environment(
    loader=PackageLoader("controller.floor", "templates"),
    autoescape=select_autoescape(["html"]),
)
templates.filters["dash"] = lambda v: "–" if v is None else v
templates.filters["dollars"] = lambda v: money(None if v is None else str(v))
templates.filters["pct"] = lambda v: "–" if v is None else f"{v * 100:+.2f}%"


@dataclass
class Session:
    user: users.User
    seen: float


@dataclass
class _Count:
    failures: int = 0
    lockouts: int = 0
    locked_until: float = 0.0
    last: float = 0.0  # the last failure


@dataclass
class Guard:
    """Sessions and the lockout after wrong passwords, per account and per client address (in
    memory, bounded: past :data:`MAX_COUNTS` names or addresses, the rest share one count)."""

    sessions: dict[str, Session] = field(default_factory=dict)
    counts: dict[str, _Count] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def session(self, token: str | None) -> users.User | None:
        if not token:
            return None
        now = time.monotonic()
        with self.lock:
            s = self.sessions.get(token)
            if s is None or now - s.seen > SESSION_SECONDS:
                self.sessions.pop(token, None)
                return None
            s.seen = now
            return s.user

    def start(self, user: users.User, client: str | None = None) -> str:
        token = secrets.token_urlsafe(32)
        with self.lock:
            self.sessions[token] = Session(user, time.monotonic())
            count = self.counts.get(f"account {user.name}")
            if count is not None:
                count.failures = 0
            count = self.counts.get(f"client {client}")
            if count is not None:
                count.failures = 0
        return token

    def end(self, token: str | None) -> None:
        with self.lock:
            self.sessions.pop(token or "", None)

    def end_user(self, name: str) -> int:
        """End every session of an account; how many there were."""
        with self.lock:
            gone = [t for t, s in self.sessions.items() if s.user.name == name]
            for token in gone:
                del self.sessions[token]
        return len(gone)

    def _count(self, key: str) -> _Count:
        found = self.counts.get(key)
        if found is not None:
            return found
        if len(self.counts) >= MAX_COUNTS:
            now = time.monotonic()
            for old in [
                k
                for k, c in self.counts.items()
                if c.locked_until <= now
                and c.last + FORGET_AFTER < now
                and c.lockouts == 0
                and not k.endswith(OVERFLOW)
            ]:
                del self.counts[old]
        if len(self.counts) >= MAX_COUNTS:
            return self.counts.setdefault(_overflow(key), _Count())
        return self.counts.setdefault(key, _Count())

    def locked(self, name: str, client: str | None = None) -> float:
        """Seconds until the account (and the address) may try again; 0 if they may now."""
        now = time.monotonic()
        with self.lock:
            keys = [f"account {name}"] + ([f"client {client}"] if client else [])
            full = len(self.counts) >= MAX_COUNTS
            found = [
                self.counts.get(k) or (self.counts.get(_overflow(k)) if full else None)
                for k in keys
            ]
            until = max((c.locked_until for c in found if c is not None), default=0.0)
        return max(0.0, until - now)

    def failed(self, name: str, client: str | None = None) -> None:
        with self.lock:
            now = time.monotonic()
            pairs = [(f"account {name}", MAX_FAILURES)]
            if client:
                pairs.append((f"client {client}", MAX_CLIENT_FAILURES))
            for key, limit in pairs:
                count = self._count(key)
                count.failures += 1
                count.last = now
                if count.failures >= limit:
                    k = min(count.lockouts, 12)
                    count.lockouts += 1
                    count.locked_until = now + min(LOCKOUT_SECONDS * 2**k, 3600.0)
                    count.failures = 0


def _overflow(key: str) -> str:
    """The count shared by the accounts (or the addresses) past the bound."""
    return f"{key.split(' ', 1)[0]} {OVERFLOW}"


def _page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(templates.get_template(name).render(**context), status_code=status)


def create_app(floor: Floor, guard: Guard | None = None) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    guard = guard or Guard()
    app.state.guard = guard
    settings = floor.settings

    def who_of(request: Request, user: users.User) -> Who:
        client = request.client.host if request.client else None
        return Who(user.name, user.role, "web", client)

    def base(user: users.User, **more: Any) -> dict[str, Any]:
        return {
            "user": user,
            "tz": settings.tz_name,
            "shifts": [n for n, _ in settings.shifts],
            **more,
        }

    def guarded(what: str) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
        """The page needs a login with permission for ``what``; refused questions are pages
        with the message, never a traceback."""

        def wrap(handler: Callable[..., Response]) -> Callable[..., Response]:
            def run(request: Request) -> Response:
                token = request.cookies.get(COOKIE)
                user = guard.session(token)
                if user is not None and users.current(floor, user) is None:
                    guard.end_user(user.name)  # disabled (or its role changed) since
                    log.info("a session ended: the account is disabled", who=user.name)
                    user = None
                if user is None:
                    if request.url.path.startswith("/api/"):
                        return JSONResponse({"error": "log in first"}, status_code=401)
                    target = request.url.path + (
                        f"?{request.url.query}" if request.url.query else ""
                    )
                    return RedirectResponse("/login?" + urlencode({"next": target}), 303)
                if not user.may(what):
                    log_lookup(
                        floor,
                        who_of(request, user),
                        what,
                        dict(request.query_params),
                        f"refused: the {user.role} role may not see this",
                    )
                    return _page(
                        "error.html",
                        403,
                        **base(user, message=(f"The {user.role} role may not see this page.")),
                    )
                try:
                    return handler(request, user)
                except NotFound as exc:
                    return _error(request, user, str(exc), 404)
                except InputError as exc:
                    return _error(request, user, str(exc), 400)

            run.__name__ = handler.__name__
            return run

        return wrap

    def _error(request: Request, user: users.User, message: str, status: int) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=status)
        return _page("error.html", status, **base(user, message=message))

    def window_of(request: Request) -> Window:
        return window_in(request.query_params)

    def window_in(q: Any) -> Window:
        start, end, date = q.get("from") or None, q.get("to") or None, q.get("date") or None
        shift = q.get("shift") or None
        if start or end:
            if not (start and end):
                raise InputError("give both “from” and “to”")
            return settings.range(start, end)
        # No day given: today's gaming day (the floor page's links, the flags page opened).
        day = settings.parse_date(date) if date else settings.today()
        return settings.shift(day, shift) if shift else settings.gaming_day(day)

    # ----- logging in -------------------------------------------------------------------------

    @app.get("/login")
    def login_page(request: Request) -> Response:
        return _page("login.html", next=request.query_params.get("next", "/"), error=None)

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        name = (form.get("name") or [""])[0].strip()
        password = (form.get("password") or [""])[0]
        target = (form.get("next") or ["/"])[0]
        if not target.startswith("/") or target.startswith("//") or len(target) > 2000:
            target = "/"
        client = request.client.host if request.client else None
        if len(name) > MAX_NAME or len(password) > MAX_PASSWORD:
            # No account has such a name: refused as it is, and counted nowhere.
            shown = f"{name[:32]}… ({len(name)} characters)" if len(name) > MAX_NAME else name
            who = Who(shown or "(no name)", "-", "web", client)
            await asyncio.to_thread(
                log_lookup, floor, who, "login", {}, "refused: name or password too long"
            )
            return _page("login.html", 400, next=target, error="Wrong name or password.")
        who = Who(name or "(no name)", "-", "web", client)
        wait = guard.locked(name, client)
        if wait > 0:
            await asyncio.to_thread(log_lookup, floor, who, "login", {}, "refused: locked out")
            return _page(
                "login.html",
                429,
                next=target,
                error=f"Too many wrong passwords: try again in {int(wait) + 1} s.",
            )
        user = await asyncio.to_thread(users.authenticate, floor, name, password)
        if user is None:
            guard.failed(name, client)
            await asyncio.to_thread(
                log_lookup, floor, who, "login", {}, "refused: wrong name or password"
            )
            return _page("login.html", 401, next=target, error="Wrong name or password.")
        token = guard.start(user, client)
        await asyncio.to_thread(
            log_lookup, floor, Who(user.name, user.role, "web", client), "login", {}, "ok"
        )
        response = RedirectResponse(target, 303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    @app.post("/logout")
    def logout(request: Request) -> Response:
        token = request.cookies.get(COOKIE)
        user = guard.session(token)
        guard.end(token)
        if user is not None:
            log_lookup(floor, who_of(request, user), "logout", {}, "ok")
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, path="/")
        return response

    # ----- the pages --------------------------------------------------------------------------

    @app.get("/")
    @guarded("floor")
    def floor_page(request: Request, user: users.User) -> Response:
        doc = queries.floor_view(floor, who_of(request, user))
        return _page("floor.html", **base(user, doc=doc))

    @app.get("/api/floor")
    @guarded("floor")
    def floor_api(request: Request, user: users.User) -> Response:
        return JSONResponse(queries.floor_view(floor, who_of(request, user), log=False))

    @app.get("/round")
    @guarded("round")
    def round_page(request: Request, user: users.User) -> Response:
        q = request.query_params
        table = q.get("table") or ""
        at = q.get("at") or None
        number = _int(q.get("round"))
        if not table or (at is None and number is None):
            return _page("find.html", **base(user, tables=_tables(floor), q=dict(q)))
        doc = queries.find_round(
            floor, who_of(request, user), table, at=at, number=number, steps=True
        )
        data = json.dumps(doc, default=str).replace("</", "<\\/")  # safe inside <script>
        return _page("round.html", **base(user, doc=doc, data=data))

    @app.get("/api/round")
    @guarded("round")
    def round_api(request: Request, user: users.User) -> Response:
        q = request.query_params
        doc = queries.find_round(
            floor,
            who_of(request, user),
            q.get("table") or "",
            at=q.get("at") or None,
            number=_int(q.get("round")),
            steps=q.get("steps") == "1",
        )
        return JSONResponse(json.loads(json.dumps(doc, default=str)))

    @app.get("/rounds")
    @guarded("rounds")
    def rounds_page(request: Request, user: users.User) -> Response:
        q = request.query_params
        if not q.get("table"):
            return _page("find.html", **base(user, tables=_tables(floor), q=dict(q)))
        doc = queries.rounds_in(floor, who_of(request, user), q["table"], window_of(request))
        return _page("rounds.html", **base(user, doc=doc, q=dict(q)))

    @app.get("/flags")
    @guarded("flags")
    def flags_page(request: Request, user: users.User) -> Response:
        q = dict(request.query_params)
        if not q.get("from") and not q.get("to") and not q.get("date"):
            q["date"] = settings.today().isoformat()  # opened from the menu: today's flags
        window = _day(q) if q.get("shift") else window_in(q)
        doc = queries.flags(
            floor,
            who_of(request, user),
            window,
            rule=q.get("rule") or None,
            table_id=q.get("table") or None,
            dealer=q.get("dealer") or None,
            shift=q.get("shift") or None,
        )
        return _page("flags.html", **base(user, doc=doc, q=dict(q), tables=_tables(floor)))

    def _day(q: dict[str, str]) -> Window:
        if not q.get("date"):
            raise InputError("a shift needs its gaming day (date)")
        return settings.gaming_day(settings.parse_date(q["date"]))

    @app.get("/report")
    @guarded("report")
    def report_page(request: Request, user: users.User) -> Response:
        q = request.query_params
        if not q.get("table"):
            return _page("report_form.html", **base(user, tables=_tables(floor), q=dict(q)))
        doc = queries.report(floor, who_of(request, user), q["table"], window_of(request))
        return _page("report.html", **base(user, doc=doc, q=dict(q), query=request.url.query))

    @app.get("/report.pdf")
    @guarded("report")
    def report_pdf(request: Request, user: users.User) -> Response:
        from controller.floor.pdf import report_pdf as write_pdf

        q = request.query_params
        doc = queries.report(floor, who_of(request, user), q.get("table") or "", window_of(request))
        return _sent("floor-report-", _pdf(write_pdf, doc, f"report-{doc['table']}.pdf"))

    @app.get("/pit")
    @guarded("report")
    def pit_page(request: Request, user: users.User) -> Response:
        from controller.floor.pit import pit_report

        q = request.query_params
        if not q.get("date") and not q.get("from"):
            return _page("pit_form.html", **base(user, q=dict(q)))
        doc = pit_report(floor, who_of(request, user), window_of(request))
        return _page("pit.html", **base(user, doc=doc, query=request.url.query))

    @app.get("/pit.pdf")
    @guarded("report")
    def pit_pdf(request: Request, user: users.User) -> Response:
        from controller.floor.pdf import pit_pdf as write_pdf
        from controller.floor.pit import pit_report

        doc = pit_report(floor, who_of(request, user), window_of(request))
        return _sent("floor-pit-", _pdf(write_pdf, doc, "pit-report.pdf"))

    @app.get("/evidence")
    @guarded("evidence")
    def evidence(request: Request, user: users.User) -> Response:
        from controller.floor.evidence import write_evidence

        q = request.query_params
        table = q.get("table") or ""
        number = _int(q.get("round"))
        window = None if number is not None or q.get("at") else window_of(request)
        who = who_of(request, user)

        def write(out: Path) -> None:
            write_evidence(
                floor, who, table, out, number=number, at=q.get("at") or None, window=window
            )

        return _sent("floor-evidence-", _zipped(write, f"evidence-{table}"))

    # ----- game protection ---------------------------------------------------------------------

    def protect_window(request: Request) -> Window:
        q = request.query_params
        if not (q.get("date") or q.get("from")):
            return settings.gaming_day(settings.shift_of(datetime.now(UTC))[0])
        return window_of(request)

    def protect_query(request: Request) -> str:
        q = request.query_params
        return urlencode({k: q[k] for k in ("date", "from", "to") if q.get(k)})

    @app.get("/protect")
    @guarded("protect")
    def protect_page(request: Request, user: users.User) -> Response:
        from controller.floor.protect import protect_view

        q = request.query_params
        doc = None
        if q.get("date") or q.get("from"):
            doc = protect_view(
                floor, who_of(request, user), window_of(request), q.get("table") or None
            )
        return _page(
            "protect.html",
            **base(user, doc=doc, q=dict(q), tables=_tables(floor), query=protect_query(request)),
        )

    @app.get("/api/protect")
    @guarded("protect")
    def protect_api(request: Request, user: users.User) -> Response:
        from controller.floor.protect import protect_view

        doc = protect_view(
            floor,
            who_of(request, user),
            protect_window(request),
            request.query_params.get("table") or None,
        )
        return JSONResponse(json.loads(json.dumps(doc, default=str)))

    @app.get("/protect/player")
    @guarded("protect")
    def protect_player(request: Request, user: users.User) -> Response:
        from controller.floor.charts import lines, scatter
        from controller.floor.protect import player_view

        q = request.query_params
        doc = player_view(
            floor,
            who_of(request, user),
            q.get("table") or "",
            q.get("player") or "",
            protect_window(request),
        )
        charts = [
            {
                "bets": scatter(
                    [(p["true_count"], float(p["bet"])) for p in s["points"]["bets"]],
                    "true count",
                    "bet",
                ),
                "curve": lines(
                    [
                        [c["result"] for c in s["points"]["curve"]],
                        [c["expected"] for c in s["points"]["curve"]],
                    ],
                    "round of the session",
                    "result",
                ),
            }
            for s in doc["sessions"]
        ]
        return _page(
            "protect_player.html",
            **base(user, doc=doc, charts=charts, query=protect_query(request)),
        )

    @app.get("/protect/dealer")
    @guarded("protect")
    def protect_dealer(request: Request, user: users.User) -> Response:
        from controller.floor.protect import protect_view

        dealer = request.query_params.get("dealer") or ""
        window = protect_window(request)
        doc = protect_view(floor, who_of(request, user), window)
        found = [d for d in doc["dealers"] if d["dealer"] == dealer]
        if not found:
            raise NotFound(f"dealer {dealer!r} dealt no round in {window.label}")
        return _page("protect_dealer.html", **base(user, d=found[0], window=window))

    @app.get("/protect/evidence")
    @guarded("protect")
    def protect_evidence(request: Request, user: users.User) -> Response:
        from controller.floor.protect_evidence import write_session_evidence

        q = request.query_params
        table = q.get("table") or ""
        player = q.get("player") or ""
        index = _int(q.get("session") or "1") or 1
        who, window = who_of(request, user), protect_window(request)

        def write(out: Path) -> None:
            write_session_evidence(floor, who, table, player, window, index, out)

        return _sent("floor-protect-", _zipped(write, f"evidence-{table}-{player}"))

    watcher = AlertWatcher(floor)

    @app.get("/api/protect/feed")
    @guarded("flags")
    def protect_feed(request: Request, user: users.User) -> Response:
        """Server-sent events: each flag as the tables raise it (and again when acknowledged)
        and, for those who may see game protection, each player or dealer reaching watch or
        alert. The server reads the read model every second; the page never polls."""
        token = request.cookies.get(COOKIE)
        alerts = user.may("protect")
        if alerts:
            watcher.start()

        async def events() -> Any:
            now = datetime.now(UTC)
            since = now - timedelta(hours=1)
            acked = now
            version = -1
            yield "retry: 3000\n\n"
            while True:
                if await request.is_disconnected() or guard.session(token) is None:
                    return
                rows = await asyncio.to_thread(flags_since, floor, since, acked)
                for row in rows:
                    at = datetime.fromisoformat(row["at_utc"])
                    since = max(since, at)
                    if row["acknowledged_at_utc"]:
                        acked = max(acked, datetime.fromisoformat(row["acknowledged_at_utc"]))
                    yield f"event: flag\ndata: {json.dumps(row, default=str)}\n\n"
                if alerts and watcher.version != version:
                    version = watcher.version
                    for item in watcher.items:
                        yield f"event: alert\ndata: {json.dumps(item, default=str)}\n\n"
                yield ": keep-alive\n\n"
                await asyncio.sleep(1.0)

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    app.state.alert_watcher = watcher

    @app.get("/lookups")
    @guarded("lookups")
    def lookups_page(request: Request, user: users.User) -> Response:
        who = request.query_params.get("who") or None
        rows = lookups(floor, who=who, limit=500)
        log_lookup(floor, who_of(request, user), "lookups", {"who": who}, "ok")
        return _page("lookups.html", **base(user, rows=rows, who=who))

    return app


def _sent(prefix: str, make: Callable[[Path], Path]) -> FileResponse:
    """A file made in a temporary folder of its own, sent as a download; the folder is removed
    once it is sent, or at once if making it fails."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        path = make(tmp)
    except BaseException:
        shutil.rmtree(tmp, True)
        raise
    kind = "application/zip" if path.suffix == ".zip" else "application/pdf"
    gone = BackgroundTask(shutil.rmtree, tmp, True)
    return FileResponse(path, media_type=kind, filename=path.name, background=gone)


def _pdf(write: Callable[[Any, Path], Any], doc: Any, name: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        write(doc, tmp / name)
        return tmp / name

    return make


def _zipped(write: Callable[[Path], None], name: str) -> Callable[[Path], Path]:
    """A folder of evidence written by ``write``, sent as NAME.zip."""

    def make(tmp: Path) -> Path:
        write(tmp / "evidence")
        return Path(shutil.make_archive(str(tmp / name), "zip", tmp / "evidence"))

    return make


def _int(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{text!r} is not a round number") from None
    if value < 1:
        raise InputError(f"{text!r} is not a round number")
    return value


def _tables(floor: Floor) -> list[str]:
    with floor.engine.connect() as conn:
        return [str(r[0]) for r in conn.exec_driver_sql("SELECT table_id FROM tables ORDER BY 1")]


class AlertWatcher:
    """Game protection over the current gaming day, every ``every`` seconds while a feed is
    open: the players and dealers at watch or alert, for the live feed (one analysis for all
    the feeds)."""

    def __init__(self, floor: Floor, every: float = 30.0) -> None:
        self.floor = floor
        self.every = every
        self.items: list[dict[str, Any]] = []
        self.version = 0
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="floor-protect", daemon=True)
                self._thread.start()

    def run_once(self) -> None:
        from controller.floor.protect import alerts_now

        settings = self.floor.settings
        day, _ = settings.shift_of(datetime.now(UTC))
        items = alerts_now(self.floor, settings.gaming_day(day))
        for item in items:
            item["date"] = day.isoformat()
        if items != self.items:
            self.items = items
            self.version += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception as exc:
                log.error("game protection pass failed", error=str(exc))
            self._stop.wait(self.every)


class IndexThread:
    """The indexer, run every ``poll`` seconds until stopped; a failed pass is logged and
    retried."""

    def __init__(self, floor: Floor, poll: float) -> None:
        self.indexer = Indexer(floor)
        self.poll = poll
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="floor-indexer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.indexer.run_once()
            except Exception as exc:
                log.error("floor index pass failed", error=str(exc))
            self._stop.wait(self.poll)


class FloorServer:
    """The web app and the indexer; :meth:`start` in threads (tests), :meth:`run` in front."""

    def __init__(
        self,
        floor: Floor,
        host: str,
        port: int,
        *,
        poll: float = 1.0,
        allowed_hosts: tuple[str, ...] = (),
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        self.floor = floor
        self.indexer = IndexThread(floor, poll)
        app = create_app(floor)
        self.guard: Guard = app.state.guard
        self.watcher: AlertWatcher = app.state.alert_watcher

        def too_large(scope: Any, declared: int | None) -> None:
            client = scope.get("client")
            log_lookup(
                floor,
                Who("(unread)", "-", "web", client[0] if client else None),
                str(scope.get("path", "")).strip("/")[:100] or "/",
                {"length": declared},
                f"refused: a body over {BODY_LIMIT} bytes",
            )

        gated = Gate(
            app,
            names=allowed_names(host, allowed_hosts),
            body_limit=BODY_LIMIT,
            on_too_large=too_large,
        )
        config = uvicorn.Config(
            gated,
            host=host,
            port=port,
            log_config=None,
            access_log=False,
            lifespan="off",
            http=timed_http(request_timeout),
            proxy_headers=False,  # the client is the connection's address, whatever it says
            server_header=False,
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
            h11_max_incomplete_event_size=16 * 1024,
        )
        self.server = uvicorn.Server(config)
        self.host = host
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        for srv in getattr(self.server, "servers", []) or []:
            for sock in getattr(srv, "sockets", []) or []:
                name = sock.getsockname()
                return f"http://{self.host}:{int(name[1])}/"
        return ""

    def start(self) -> str:
        self.indexer.start()
        self._thread = threading.Thread(target=self.server.run, name="floor-web", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise InputError(f"cannot listen on {self.host} (is the port in use?)")
            time.sleep(0.02)
        return self.url

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.watcher.stop()
        self.indexer.stop()

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        url = self.start()
        try:
            yield url
        finally:
            self.stop()


def may_change_the_record(floor: Floor) -> bool:
    """Whether the floor's connection could add to, change or unguard the tables' record."""
    with floor.engine.connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT r.rolsuper OR pg_has_role(c.relowner, 'USAGE') "
            "OR has_table_privilege('events', 'INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER') "
            "FROM pg_roles r, pg_class c WHERE r.rolname = current_user "
            "AND c.oid = to_regclass('events')"
        ).first()
    return bool(row is None or row[0])


def serve(
    floor: Floor, host: str, port: int, *, poll: float = 1.0, allowed_hosts: tuple[str, ...] = ()
) -> int:
    """Serve until Ctrl-C or SIGTERM; prints the address it listens on."""

    def stop(_sig: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    server = FloorServer(floor, host, port, poll=poll, allowed_hosts=allowed_hosts)
    try:
        url = server.start()
        print(f"floorctl floor: serving on {url} (time zone {floor.settings.tz_name})", flush=True)
        if not ipaddress.ip_address(host).is_loopback:
            log.warning("the floor's pages are reachable from the network", host=host)
        if may_change_the_record(floor):
            log.warning(
                "the floor's pages connect as a role that can change the record: connect as "
                "the floor role (floorctl floor init)",
                db=floor.name,
            )
        thread = server._thread
        while thread is not None and thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)
    return 0
