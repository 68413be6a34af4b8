"""The dealer's touchscreen, served over HTTP and a WebSocket.

    GET  /                       the page
    GET  /api/state              the table as the screen shows it (also pushed on /ws)
    WS   /ws                     a fresh snapshot after every event
    POST /api/event              a dealer's tap: {"event": {...}, "seq": <snapshot seq shown>}
    POST /api/supervisor/login   {"supervisor": id, "pin": "1234"} -> a short session token
    POST /api/supervisor/event   a supervisor action, with header X-Supervisor-Token
    POST /api/supervisor/logout

A dealer's tap is accepted only if it is one of the decisions (or announcements) open at that
moment and the screen was showing the latest state; anything else is refused with the reason,
so a late or doubled tap never reaches the audit log. A tap is answered 200 only once it is
durable; while the audit store is down (STORE DOWN) every tap is refused with 503 and why.
Supervisor actions (void, reshuffle the discards, correct a misread, a card or a wager entered
by hand) need a session opened with a supervisor PIN; they are recorded naming the supervisor
as `actor`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import structlog
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from controller.service.core import TableService
from controller.service.pin import PinGuard

log = structlog.get_logger("floorctl.web")

STATIC_DIR = Path(__file__).resolve().parent / "static"

# The dealer's decisions: offered by the engine's due().decisions.
DECISIONS = frozenset(
    {
        "stand",
        "hit",
        "double",
        "split",
        "surrender",
        "insurance",
        "rescue",
        "refuse",
        "absent",
        "peek",
    }
)
# The dealer's announcements: offered by the screen's table_actions.
ANNOUNCEMENTS = frozenset({"no_more_bets", "offer_insurance", "offer_surrender", "shuffle"})
# Behind the supervisor PIN.
SUPERVISOR_EVENTS = frozenset({"void", "reshuffle_discards", "card", "bet"})


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
    service: TableService, guard: PinGuard, *, heartbeat: Heartbeat | None = None
) -> FastAPI:
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
        origin = socket.headers.get("origin")
        host = socket.headers.get("host", "")
        if origin is not None and origin.split("://", 1)[-1] != host:
            await socket.close(code=1008)
            return
        await socket.accept()
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
        body = await request.json()
        event = body.get("event") if isinstance(body, Mapping) else None
        if not isinstance(event, Mapping):
            return _error(400, 'expected {"event": {...}, "seq": n}')
        kind = event.get("type")
        if kind not in DECISIONS and kind not in ANNOUNCEMENTS:
            return _error(403, f"{kind!r} is not a dealer's input here")
        if service.halted():
            return _store_down(service)
        if body.get("seq") != service.seq:
            return _error(409, "the table moved on since this screen was drawn: look again")
        snapshot = service.snapshot()
        reason = _not_open(event, snapshot)
        if reason:
            return _error(409, reason)
        expect: int | None = service.seq
        if kind == "no_more_bets":
            await asyncio.to_thread(service.sync_camera_bets)
            expect = None
        result = await asyncio.to_thread(
            service.submit, dict(event), source="dealer", expect_seq=expect
        )
        return _result(result)

    @app.post("/api/supervisor/login")
    async def login(request: Request) -> JSONResponse:
        if not _is_json(request):
            return _error(415, "send application/json")
        body = await request.json()
        who = str(body.get("supervisor", "")) if isinstance(body, Mapping) else ""
        pin = str(body.get("pin", "")) if isinstance(body, Mapping) else ""
        client = request.client.host if request.client else "unknown"
        async with login_lock:
            result = await asyncio.to_thread(guard.login, who, pin, client)
        if result.ok:
            log.info("supervisor unlocked", supervisor=who, client=client)
            return JSONResponse(
                {"token": result.token, "supervisor": who, "expires_in": result.expires_in}
            )
        if result.retry_after > 0:
            log.error(
                "supervisor PIN locked out",
                supervisor=who,
                client=client,
                retry_after=round(result.retry_after, 1),
            )
            return JSONResponse(
                {
                    "error": f"too many wrong PINs: wait {int(result.retry_after) + 1} s",
                    "retry_after": result.retry_after,
                },
                status_code=429,
                headers={"Retry-After": str(int(result.retry_after) + 1)},
            )
        log.warning("supervisor PIN refused", supervisor=who, client=client)
        return _error(401, result.reason)

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
        body = await request.json()
        event = body.get("event") if isinstance(body, Mapping) else None
        if not isinstance(event, Mapping):
            return _error(400, 'expected {"event": {...}}')
        kind = event.get("type")
        if kind not in SUPERVISOR_EVENTS:
            return _error(403, f"{kind!r} is not a supervisor action")
        if service.halted():
            return _store_down(service)
        source = "supervisor"
        if kind in ("card", "bet"):
            source = "manual"
        if kind == "card" and "correction_of" in event:
            target = event.get("correction_of")
            if not isinstance(target, int) or target not in service.misreads:
                return _error(409, f"event #{target} is not a misread awaiting correction")
        result = await asyncio.to_thread(service.submit, dict(event), source=source, actor=who)
        return _result(result)

    return app


def _not_open(event: Mapping[str, Any], snapshot: Mapping[str, Any]) -> str:
    """Why this tap is not open now ("" when it is)."""
    kind = event.get("type")
    if kind in ANNOUNCEMENTS:
        for action in snapshot.get("table_actions") or []:
            if action.get("type") == kind and action.get("box") == event.get("box"):
                return ""
        return f"{str(kind).replace('_', ' ')} is not due now"
    for decision in (snapshot.get("due") or {}).get("decisions") or []:
        if decision.get("action") != kind or decision.get("box") != event.get("box"):
            continue
        who = event.get("player")
        if kind in ("double", "insurance", "rescue") and decision.get("player") not in (None, who):
            continue
        if kind == "split" and who is not None and decision.get("player") != who:
            continue
        return ""
    where = f" for box {event.get('box')}" if event.get("box") is not None else ""
    return f"{kind}{where} is not open now"


def _store_down(service: TableService) -> JSONResponse:
    reason = service.halt_reason()
    return _error(503, f"STORE DOWN: not recorded, play is halted ({reason})", store_down=True)


def _result(result: Any) -> JSONResponse:
    if not result.ok:
        if result.store_down:
            return _error(503, result.error, store_down=True)
        status = 409 if "moved on" in str(result.error) else 400
        return _error(status, result.error)
    return JSONResponse({"seq": result.seq, "flags": result.flags, "settled": result.settled})
