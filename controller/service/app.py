"""`floorctl run`: one process for one table.

Start-up order: the config (refuse to start if wrong), the audit store (restore the table by
replaying its events), the screen's service, the devices, the web server; then READY=1 to
systemd and watchdog pings for as long as the event loop answers. SIGTERM stops the server,
then the devices, then flushes and closes the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import resource
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import structlog
import uvicorn

from controller.service.config import ServiceConfig
from controller.service.core import TableService
from controller.service.errors import StartError
from controller.service.gate import allowed_names, timed_http
from controller.service.pin import PinGuard
from controller.service.sdnotify import Notifier, WatchdogPinger
from controller.service.startup import (
    StartRefused,
    check_store_is_this_tables,
    load_table_key,
    lock_store,
)
from controller.service.web import Heartbeat, create_app
from controller.store.checkpoint import DEFAULT_EVERY, KEEP_ROUNDS
from controller.store.clockwatch import FORWARD_BOUND, ClockWatch
from controller.store.lock import RecorderLock
from controller.store.recorder import Recorder, utc_now
from controller.store.repository import Store
from controller.store.spool import DEFAULT_RESERVE
from drivers.shoe.transport import Transport

log = structlog.get_logger("floorctl.run")


__all__ = ["StartError", "StartRefused", "Table", "open_table", "serve"]


# The screen's connections: idle keep-alive and WebSocket pings (seconds), the largest message
# a screen may send on its WebSocket (it sends none).
KEEP_ALIVE_SECONDS = 5
WS_PING_SECONDS = 10.0
WS_MAX_MESSAGE = 4096


@dataclass(frozen=True)
class WebSettings:
    """How the screen's web server meets the network (``[ui]``)."""

    allowed_hosts: tuple[str, ...] = ()  # names beyond 127.0.0.1, localhost, ::1 and the host
    trusted_proxy: str | None = None  # the one address whose X-Forwarded-* headers count
    request_timeout: float = 10.0  # a request's line, headers and body arrive within this


@dataclass
class Table:
    """The parts of a running table, for `run` and `demo` alike."""

    store: Store
    recorder: Recorder
    service: TableService
    guard: PinGuard
    heartbeat: Heartbeat
    stoppers: list[Callable[[], None]] = field(default_factory=list)
    web: WebSettings = field(default_factory=WebSettings)
    locks: list[RecorderLock] = field(default_factory=list)  # held on the store while open

    def close(self) -> None:
        for stop in reversed(self.stoppers):
            try:
                stop()
            except Exception:
                log.exception("stopping a part failed")
        self.stoppers.clear()
        self.service.close()
        self.store.close()
        for lock in reversed(self.locks):
            lock.release()
        self.locks.clear()


def stills_dir(store_url: str, spool: Path | None) -> Path | None:
    """Where the overhead camera's stills of a changed stack are kept, beside the record:
    ``<database>.stills`` beside a SQLite database, else ``stills`` beside the spool (None:
    neither, and the stills are not kept)."""
    from controller.store.db import sqlite_path

    db = sqlite_path(store_url)
    if db is not None:
        return db.with_name(db.name + ".stills")
    return spool.parent / "stills" if spool is not None else None


def open_table(
    table_line: dict[str, Any],
    store_url: str,
    supervisors: dict[str, str],
    *,
    pin_max_attempts: int = 5,
    pin_lockout_seconds: float = 60.0,
    session_seconds: float = 120.0,
    spool_dir: str | None = None,
    spool: bool = True,
    spool_reserve: int = DEFAULT_RESERVE,
    checkpoint_every: int = DEFAULT_EVERY,
    keep_rounds: int | None = KEEP_ROUNDS,
    dealers: dict[str, str] | None = None,
    signing_key: str | None = None,
    clock_forward: float = FORWARD_BOUND,
    clock: Callable[[], str] = utc_now,
    watch: ClockWatch | None = None,
) -> Table:
    """Open the store, restore (or start) the table, and build its service.

    ``dealers`` (id -> PIN hash): who may sign in to deal; none, and the screen takes taps
    with no dealer signed in.

    The table's spool goes in ``spool_dir`` (default: beside a SQLite database, or systemd's
    ``$STATE_DIRECTORY`` for PostgreSQL); ``spool=False`` runs without one (tests).
    ``signing_key``: the table's Ed25519 key file (``[store] signing_key``); the table refuses
    to start when it is missing or unreadable, naming it.
    ``keep_rounds``: the settled rounds the engine keeps in memory (None: all).
    ``clock_forward``: seconds the wall clock may run ahead of the monotonic clock between two
    events before the step is recorded (``[store] clock_forward_seconds``); ``clock`` and
    ``watch`` stand in for the wall and monotonic clocks in tests.
    """
    from controller.store.db import NotThisTable, StoreError
    from controller.store.spool import default_spool

    table_id = str(table_line.get("table_id"))
    key = load_table_key(signing_key) if signing_key is not None else None
    locks: list[RecorderLock] = []

    def release() -> None:
        for lock in reversed(locks):
            lock.release()

    try:
        # One recorder per store: a second `floorctl run` is refused here, before it opens
        # (or migrates) the store, and long before it could serve a screen.
        file_lock = lock_store(store_url, table_id)
        if file_lock is not None:
            locks.append(file_lock)
        try:
            store = Store.open(store_url)
        except Exception as exc:
            raise StartError(f"audit store {store_url}: cannot open: {exc}") from exc
        try:
            server_lock = lock_store(store_url, table_id, store)
            if server_lock is not None:
                locks.append(server_lock)
            check_store_is_this_tables(store, table_id)
            try:
                where = default_spool(store, table_id, spool_dir) if spool else None
            except StoreError as exc:  # a config's fault: [store] spool_dir
                said = str(exc) if store.name in str(exc) else f"audit store {store.name}: {exc}"
                raise StartRefused(said) from exc
            recorder = Recorder.open(
                store,
                table_line,
                spool=where,
                spool_reserve=spool_reserve,
                checkpoint_every=checkpoint_every,
                keep_rounds=keep_rounds,
                signing_key=key,
                clock=clock,
                watch=watch or ClockWatch(forward_bound=clock_forward),
            )
        except NotThisTable as exc:
            store.close()
            said = str(exc) if store.name in str(exc) else f"audit store {store.name}: {exc}"
            raise StartRefused(said) from exc
        except (StoreError, ValueError) as exc:
            store.close()
            raise StartError(f"audit store {store.name}: {exc}") from exc
        except BaseException:
            store.close()
            raise
    except BaseException:
        release()
        raise
    service = TableService(recorder, supervisors=tuple(supervisors), dealers=tuple(dealers or {}))
    service.watch.stills_dir = stills_dir(store_url, where)
    recorder.on_status = service.store_status
    service.store_status(recorder.status())
    guard = PinGuard(
        dict(supervisors),
        max_attempts=pin_max_attempts,
        lockout_seconds=pin_lockout_seconds,
        session_seconds=session_seconds,
        dealers=dict(dealers or {}),
    )
    return Table(store, recorder, service, guard, Heartbeat(), locks=locks)


def build_from_config(cfg: ServiceConfig, *, shoe_port: Transport | None = None) -> Table:
    """The table the config describes; ``shoe_port`` is the reader's port if already opened."""
    table = open_table(
        cfg.table,
        cfg.store.url,
        cfg.supervisors,
        pin_max_attempts=cfg.ui.pin_max_attempts,
        pin_lockout_seconds=cfg.ui.pin_lockout_seconds,
        session_seconds=cfg.ui.supervisor_session_seconds,
        spool_dir=cfg.store.spool_dir,
        spool_reserve=cfg.store.spool_reserve_kib * 1024,
        checkpoint_every=cfg.store.checkpoint_every,
        dealers=cfg.dealers,
        signing_key=cfg.store.signing_key,
        clock_forward=cfg.store.clock_forward_seconds,
    )
    table.web = WebSettings(
        allowed_hosts=cfg.ui.allowed_hosts,
        trusted_proxy=cfg.ui.trusted_proxy,
        request_timeout=cfg.ui.request_timeout,
    )
    if not cfg.dealers:
        log.warning("no [dealers] in the config: taps are recorded with no dealer signed in")
    try:
        _attach_devices(table, cfg, shoe_port)
    except Exception:
        table.close()
        raise
    return table


def _attach_devices(table: Table, cfg: ServiceConfig, shoe_port: Transport | None) -> None:
    service = table.service
    if cfg.shoe.url is None:
        service.set_device("shoe", "off", "no shoe reader configured: cards entered by hand")
    else:
        from controller.service.devices import ShoeFeed

        feed = ShoeFeed(
            service,
            shoe_port if shoe_port is not None else cfg.shoe.url,
            baudrate=cfg.shoe.baudrate,
            silence_timeout=cfg.shoe.heartbeat_timeout or None,
            reconnect_max=cfg.shoe.reconnect_seconds,
            noise_misreads=cfg.shoe.noise_misreads,
            noise_window=cfg.shoe.noise_window,
        )
        feed.start()
        table.stoppers.append(feed.stop)
    if cfg.camera is None:
        service.set_device("camera", "off", "no chip camera configured: wagers entered by hand")
    else:
        from controller.service.camera import start_camera

        stop = start_camera(service, cfg.camera)
        table.stoppers.append(stop)


async def serve(
    table: Table,
    host: str,
    port: int,
    *,
    notifier: Notifier | None = None,
    on_ready: Callable[[str], None] | None = None,
    until: asyncio.Future[Any] | None = None,
) -> int:
    """Serve the dealer's screen until SIGINT/SIGTERM (or `until` completes).

    Proxy headers are believed only from ``table.web.trusted_proxy``; the screen answers only
    to its own host names; a request must arrive within ``request_timeout``."""
    web = table.web
    _raise_open_files()
    app = create_app(
        table.service,
        table.guard,
        heartbeat=table.heartbeat,
        names=allowed_names(host, web.allowed_hosts),
        https=web.trusted_proxy is not None,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        http=timed_http(web.request_timeout),
        ws="websockets-sansio",
        ws_max_size=WS_MAX_MESSAGE,
        ws_ping_interval=WS_PING_SECONDS,
        ws_ping_timeout=WS_PING_SECONDS,
        proxy_headers=web.trusted_proxy is not None,
        forwarded_allow_ips=[web.trusted_proxy] if web.trusted_proxy else [],
        server_header=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=3,
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            with contextlib.suppress(SystemExit):
                task.result()
            raise StartError(f"cannot listen on {host}:{port} (is the port in use?)")
        await asyncio.sleep(0.02)
    bound = _bound_port(server) or port
    url = f"http://{host}:{bound}/"
    log.info("dealer screen ready", url=url)
    _publish_url(host, bound)
    if not ipaddress.ip_address(host).is_loopback:
        log.warning(
            "the dealer's screen is reachable from the network, not only this PC",
            host=host,
            port=bound,
        )
    note = notifier or Notifier()
    pinger = WatchdogPinger(note, table.heartbeat.healthy)
    note.ready(status_line(table.service, url))
    pinger.start()
    shown = [status_line(table.service, url)]

    def update_status() -> None:  # `systemctl status` shows the devices' faults too
        line = status_line(table.service, url)
        if line != shown[0]:
            shown[0] = line
            note.status(line)

    unsubscribe = table.service.subscribe(update_status)
    if on_ready is not None:
        on_ready(url)
    try:
        if until is not None:
            waiter = asyncio.ensure_future(until)
            done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if task not in done:
                server.should_exit = True
                await task
        else:
            await task
    finally:
        unsubscribe()
        note.stopping()
        pinger.stop()
    return 0


def _raise_open_files() -> None:
    """Let the process open as many files as its hard limit allows (the unit sets it high),
    so slow connections are cut off by their deadline before they can exhaust them."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:  # pragma: no cover - a platform that refuses
        log.warning("cannot raise the open files limit", error=str(exc))


def _publish_url(host: str, port: int) -> None:
    """Under systemd (``RuntimeDirectory=``), write the page's address for the kiosk unit:
    ``$RUNTIME_DIRECTORY/ui.env`` holds ``FLOORCTL_URL=http://127.0.0.1:PORT/``."""
    folder = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    if not folder:
        return
    local = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if ":" in local:
        local = f"[{local}]"
    target = Path(folder) / "ui.env"
    try:
        tmp = target.with_suffix(".env.tmp")
        tmp.write_text(f"FLOORCTL_URL=http://{local}:{port}/\n", encoding="ascii")
        tmp.chmod(0o644)
        os.replace(tmp, target)
    except OSError as exc:
        log.error("cannot write the page's address for the kiosk", path=str(target), error=str(exc))


def status_line(service: TableService, url: str) -> str:
    """One line for systemd's STATUS=: the table, its screen, and any device at fault;
    STORE DOWN first when play is halted."""
    devices = service.device_states()
    faults = [
        f"{name} fault: {info['reason']}"
        for name, info in devices.items()
        if info["state"] == "fault"
    ]
    store = devices.get("store", {})
    if store.get("state") == "down":
        faults.insert(0, f"STORE DOWN, play halted: {store.get('reason', '')}")
    return "; ".join([f"table {service.setup.table_id}: dealer screen on {url}", *faults])


class _Server(uvicorn.Server):
    """uvicorn's server, stopping on SIGTERM/SIGINT without re-raising the signal afterwards,
    so that the devices are stopped and the audit store is flushed and closed first."""

    signalled: int | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handle(sig: int, _frame: FrameType | None) -> None:
            self.signalled = sig
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True

        originals = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)


def _bound_port(server: uvicorn.Server) -> int | None:
    for srv in getattr(server, "servers", []) or []:
        for sock in getattr(srv, "sockets", []) or []:
            name = sock.getsockname()
            if isinstance(name, tuple) and len(name) >= 2:
                return int(name[1])
    return None
