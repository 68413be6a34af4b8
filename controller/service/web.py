"""The dealer's touchscreen, served over HTTP and a WebSocket.

    GET  /                       the page
    GET  /api/state              the table as the screen shows it (also pushed on /ws)
    WS   /ws                     a fresh snapshot after every event
    POST /api/event              a dealer's tap: {"event": {...}, "seq": <snapshot seq shown>}
    POST /api/dealer/signin      {"dealer": id, "pin": "1234"}: the dealer on duty from now on
    POST /api/supervisor/login   {"supervisor": id, "pin": "1234"} -> a short session token
    POST /api/supervisor/event   a supervisor action, with header X-Supervisor-Token
    POST /api/supervisor/logout

A dealer's tap is accepted only if it is one of the decisions (or announcements) open at that
moment (the engine's typed decisions), the screen was showing the latest state, and it carries
only what a dealer may set (:mod:`controller.service.taps`); anything else is refused with the
reason, so a late, doubled or forged tap never reaches the audit log. With dealer sign-in
configured, every tap is recorded naming the dealer on duty (``actor``) and waits while a flag
has not been seen. A tap is answered 200 only once it is durable; while the audit store is down
(STORE DOWN) every tap is refused with 503 and why. Supervisor actions (void, reshuffle the
discards, correct a misread, a card or a wager entered by hand, manual mode, a flag resolved)
need a session opened with a supervisor PIN and are recorded naming the supervisor.

Every body is read by :class:`~controller.service.gate.Gate` first (host, origin, size); a body
that is not JSON is answered 400, one that does not fit its schema 422, never 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import structlog
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from controller.engine.decisions import Kind
from controller.service.core import TableService
from controller.service.flags import needs
from controller.service.gate import Gate, allowed_names
from controller.service.pin import PinGuard
from controller.service.taps import DealerBody, Login, SupervisorBody, TapError, parse_tap

log = structlog.get_logger("floorctl.web")

STATIC_DIR = Path(__file__).resolve().parent / "static"

# The decisions a dealer's tap takes (the others are the supervisor's).
# The decisions only a supervisor takes (behind the PIN), never from the dealer's taps.
SUPERVISOR_KINDS = frozenset({str(Kind.VOID), str(Kind.RESHUFFLE_DISCARDS)})


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def _is_json(request: Request) -> bool:
    # Cross-site pages cannot send application/json without a CORS preflight, which this
    # server never grants: a page on another origin cannot drive the table.
    return request.headers.get("content-type", "").split(";")[0].strip() == "application/json"


class Heartbeat:
    """The event loop's pulse, for the systemd watchdog: a task stamps it every second."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def healthy(self, limit: float = 10.0) -> bool:
        return time.monotonic() - self.last < limit

    async def run(self) -> None:
        while True:
            self.last = time.monotonic()
            await asyncio.sleep(1.0)


def create_app(
    service: TableService,
    guard: PinGuard,
    *,
    heartbeat: Heartbeat | None = None,
    names: frozenset[str] | None = None,
    https: bool = False,
) -> FastAPI:
    """The screen's app; ``names`` are the host names it answers to (default: this PC's),
    ``https`` allows ``https://`` origins (behind a configured TLS proxy)."""
    pulse = heartbeat or Heartbeat()
    login_lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(pulse.run())
        try:
            yield
        finally:
            task.cancel()

    app = FastAPI(
        title="floorctl dealer screen",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.add_middleware(
        Gate,
        names=names if names is not None else allowed_names("127.0.0.1"),
        https=https,
    )
    app.state.service = service
    app.state.guard = guard
    app.state.heartbeat = pulse

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/state")
    async def state() -> dict[str, Any]:
        return service.snapshot()

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "seq": service.seq}

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()  # the Gate has checked the Host and the Origin
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def poke() -> None:
            loop.call_soon_threadsafe(changed.set)

        unsubscribe = service.subscribe(poke)

        async def push() -> None:
            await socket.send_json(service.snapshot())
            while True:
                await changed.wait()
                changed.clear()
                await socket.send_json(service.snapshot())

        async def listen() -> None:
            # The screen sends nothing; this notices it going away (or the server closing).
            while True:
                message = await socket.receive()
                if message.get("type") == "websocket.disconnect":
                    return

        tasks = {asyncio.create_task(push()), asyncio.create_task(listen())}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            unsubscribe()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(
                    asyncio.CancelledError, WebSocketDisconnect, RuntimeError, OSError
                ):
                    await task

    @app.post("/api/event")
    async def dealer_event(request: Request) -> JSONResponse:
        if not _is_json(request):
            return _error(415, "send application/json")
        try:
            body = parse_tap(DealerBody, await request.body())
        except TapError as exc:
            return _error(exc.status, str(exc))
        event = body.event.event()
        kind = event["type"]
        if service.halted():
            return _store_down(service)
        if service.sign_in_required and service.dealer is None:
            return _error(403, "no dealer is signed in: sign in to deal")
        if body.seq != service.seq:
            return _error(409, "the table moved on since this screen was drawn: look again")
        waiting = service.blocking()
        if waiting is not None and kind != "acknowledge":
            return _error(
                409,
                f"first see the flag on the screen (rule {waiting.get('rule')}): "
                f"{waiting.get('message')}",
                blocked=True,
            )
        reason = _dealer_refusal(service, event)
        if reason:
            return _error(409, reason)
        expect: int | None = service.seq
        if kind == "no_more_bets":
            await asyncio.to_thread(service.close_betting)
            expect = None
        source = _source(kind, "dealer")
        if kind == "bet" and (why := service.manual_bet_note(int(event["box"]))):
            event["note"] = why  # a box the camera cannot read: the record says so
        if kind == "inspect" and service.opening_by():
            event["by"] = service.opening_by()
        result = await asyncio.to_thread(
            service.submit, event, source=source, actor=service.dealer, expect_seq=expect
        )
        return _result(result)

    async def _login(request: Request, role: str) -> tuple[str, JSONResponse | None, Any]:
        """Read a sign-in body and check its PIN; (who, refusal or None, result)."""
        if not _is_json(request):
            return "", _error(415, "send application/json"), None
        try:
            body = parse_tap(Login, await request.body())
        except TapError as exc:
            return "", _error(exc.status, str(exc)), None
        who = (body.supervisor if role == "supervisor" else body.dealer) or ""
        if not who:
            return "", _error(422, f'"{role}": missing (who signs in)'), None
        client = request.client.host if request.client else "unknown"
        check = guard.login if role == "supervisor" else guard.sign_in
        async with login_lock:
            result = await asyncio.to_thread(check, who, body.pin, client)
        if result.ok:
            return str(result.who), None, result
        if result.retry_after > 0:
            log.error(
                "PIN locked out",
                role=role,
                who=who,
                client=client,
                retry_after=round(result.retry_after, 1),
            )
            return (
                who,
                JSONResponse(
                    {
                        "error": f"too many wrong PINs: wait {int(result.retry_after) + 1} s",
                        "retry_after": result.retry_after,
                    },
                    status_code=429,
                    headers={"Retry-After": str(int(result.retry_after) + 1)},
                ),
                result,
            )
        log.warning("PIN refused", role=role, who=who, client=client)
        return who, _error(401, result.reason), result

    @app.post("/api/dealer/signin")
    async def dealer_sign_in(request: Request) -> JSONResponse:
        if not service.sign_in_required:
            return _error(404, "dealer sign-in is not configured at this table ([dealers])")
        who, refused, _ = await _login(request, "dealer")
        if refused is not None:
            return refused
        if service.halted():
            return _store_down(service)
        if service.dealer == who:
            return JSONResponse({"dealer": who, "seq": service.seq})
        event = {"type": "dealer", "dealer": who}
        result = await asyncio.to_thread(service.submit, event, source="dealer", actor=who)
        if result.ok:
            log.info("dealer signed in", dealer=who)
            return JSONResponse({"dealer": who, "seq": result.seq})
        return _result(result)

    @app.post("/api/supervisor/login")
    async def login(request: Request) -> JSONResponse:
        who, refused, result = await _login(request, "supervisor")
        if refused is not None:
            return refused
        log.info("supervisor unlocked", supervisor=who)
        return JSONResponse(
            {"token": result.token, "supervisor": who, "expires_in": result.expires_in}
        )

    @app.post("/api/supervisor/logout")
    async def logout(request: Request) -> JSONResponse:
        token = request.headers.get("x-supervisor-token", "")
        who = guard.session(token)
        guard.logout(token)
        if who:
            log.info("supervisor locked", supervisor=who)
        return JSONResponse({"ok": True})

    @app.post("/api/supervisor/event")
    async def supervisor_event(request: Request) -> JSONResponse:
        if not _is_json(request):
            return _error(415, "send application/json")
        who = guard.session(request.headers.get("x-supervisor-token"))
        if who is None:
            return _error(401, "supervisor PIN needed (or the session ended)")
        try:
            body = parse_tap(SupervisorBody, await request.body())
        except TapError as exc:
            return _error(exc.status, str(exc))
        event = body.event.event()
        if service.halted():
            return _store_down(service)
        reason = _supervisor_refusal(service, event)
        if reason:
            return _error(409, reason)
        source = _source(event["type"], "supervisor")
        if event["type"] == "open_table":
            event["by"] = service.opening_by(who)
        if event["type"] in ("tray_count", "fill", "credit"):
            # Signed by those present: (the runner,) the supervisor who unlocked, the dealer.
            signed = [*event.get("by", []), who, service.dealer or ""]
            event["by"] = [x for x in dict.fromkeys(signed) if x]
        result = await asyncio.to_thread(service.submit, event, source=source, actor=who)
        if result.ok and event["type"] == "tray_count":
            return _tray_result(service, result)
        return _result(result)

    return app


def _dealer_refusal(service: TableService, event: dict[str, Any]) -> str:
    """Why this dealer's tap may not be recorded now ("" when it may): the engine's one answer
    (through the service, which adds its devices' and sign-in's), and a flag only a supervisor
    resolves."""
    kind = event["type"]
    if kind in SUPERVISOR_KINDS:
        return f"{kind.replace('_', ' ')}: a supervisor's action"
    if kind == "acknowledge":
        waiting = service.pending.get((int(event["flag_event"]), str(event["rule"])))
        if waiting is not None and needs(str(event["rule"]), waiting.get("event_type")) == (
            "supervisor"
        ):
            return f"rule {event['rule']}: a supervisor resolves this flag"
    return service.refusal({**event, "source": _source(kind, "dealer")})


def _supervisor_refusal(service: TableService, event: dict[str, Any]) -> str:
    """Why this supervisor action may not be recorded now ("" when it may)."""
    return service.refusal(
        {**event, "source": _source(event["type"], "supervisor")}, supervisor=True
    )


def _source(kind: str, who: str) -> str:
    """How an input reaches the table: a card or a bet keyed in is ``manual``."""
    return "manual" if kind in ("card", "bet") else who


def _store_down(service: TableService) -> JSONResponse:
    reason = service.halt_reason()
    return _error(503, f"STORE DOWN: not recorded, play is halted ({reason})", store_down=True)


def _tray_result(service: TableService, result: Any) -> JSONResponse:
    """A count's answer: what the tray should have held, now that the count is entered (the
    count is blind: the screen shows it only after)."""
    counts = service.table.tray.counts
    count = counts[-1] if counts else None
    return JSONResponse(
        {"seq": result.seq, "flags": result.flags, "settled": result.settled, "count": count}
    )


def _result(result: Any) -> JSONResponse:
    if not result.ok:
        if result.store_down:
            return _error(503, result.error, store_down=True)
        status = 409 if "moved on" in str(result.error) else 400
        return _error(status, result.error)
    return JSONResponse({"seq": result.seq, "flags": result.flags, "settled": result.settled})
