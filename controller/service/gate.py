"""What may reach the dealer's screen's web app, and how long a request may take to arrive.

:class:`Gate` (ASGI middleware, outermost) answers before the app does:

- a ``Host`` that is not one of the screen's names (127.0.0.1, localhost, ::1, the address it
  listens on and the names in ``[ui] allowed_hosts``): 421, for HTTP and the WebSocket alike,
  so a page on a rebound DNS name (``evil.example`` resolving to 127.0.0.1) reads nothing;
- a browser's ``Origin`` on a WebSocket or a POST that is not the screen's own origin, scheme
  included (``http://`` + the Host; ``https://`` too behind a configured TLS proxy): 403;
- a body over :data:`BODY_LIMIT` bytes: 413, before the app reads any of it.

:func:`timed_http` is uvicorn's HTTP/1.1 protocol with a deadline on each request: its line,
headers and body must all arrive within ``request_timeout`` seconds of its first byte (or of the
connection opening), or the connection is closed. A slow or half-open request holds a file
descriptor for that long, no longer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import h11
import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

log = structlog.get_logger("floorctl.gate")

BODY_LIMIT = 16 * 1024  # the largest tap is a few hundred bytes
LOCAL_NAMES = ("127.0.0.1", "localhost", "::1")
_DEFAULT_PORT = {"http": "80", "https": "443"}


def host_name(host: str) -> str:
    """``Host`` without its port, lower case: ``[::1]:8080`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.rstrip(".")


def allowed_names(listen: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names the screen answers to."""
    names = {*LOCAL_NAMES, *(n.lower().rstrip(".") for n in extra)}
    if listen not in ("0.0.0.0", "::"):
        names.add(listen.lower())
    return frozenset(names)


def same_origin(origin: str, host: str, schemes: Iterable[str]) -> bool:
    """Whether ``origin`` is the screen's own: ``scheme://host[:port]`` with an allowed scheme,
    the default port written or not."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if parts.scheme not in schemes or parts.path or parts.query or not parts.netloc:
        return False
    default = _DEFAULT_PORT.get(parts.scheme, "")

    def bare(netloc: str) -> str:
        netloc = netloc.lower()
        return netloc[: -len(default) - 1] if default and netloc.endswith(f":{default}") else netloc

    return bare(parts.netloc) == bare(host)


class Gate:
    """Host allow-list, Origin check and body limit in front of the app (see the module)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        names: frozenset[str],
        https: bool = False,
        body_limit: int = BODY_LIMIT,
        on_too_large: Callable[[Scope, int | None], None] | None = None,
    ) -> None:
        self.app = app
        self.names = names
        self.schemes = ("http", "https") if https else ("http",)
        self.body_limit = body_limit
        self.on_too_large = on_too_large  # (scope, declared length); run in a thread

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = [v for k, v in scope["headers"] if k == b"host"]
        origin = next((v for k, v in scope["headers"] if k == b"origin"), None)
        if len(hosts) != 1:
            await _refuse(kind, receive, send, 400, "one Host header is needed")
            return
        host = hosts[0].decode("latin-1")
        if host_name(host) not in self.names:
            log.warning("request for another host name refused", host=host[:100])
            await _refuse(kind, receive, send, 421, f"this screen does not answer to {host!r}")
            return
        checks_origin = kind == "websocket" or scope.get("method") not in ("GET", "HEAD")
        if (
            checks_origin
            and origin is not None
            and not same_origin(origin.decode("latin-1"), host, self.schemes)
        ):
            shown = origin.decode("latin-1")[:100]
            log.warning("request from another origin refused", origin=shown, host=host[:100])
            why = f"a page from {shown!r} may not use this screen"
            await _refuse(kind, receive, send, 403, why)
            return
        if kind == "http" and scope.get("method") not in ("GET", "HEAD"):
            body = await self._body(scope, receive, send)
            if body is None:
                return
            await self.app(scope, _replay(body, receive), send)
            return
        await self.app(scope, receive, send)

    async def _body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole request body, or None once refused (too large) or the client left."""
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and (not declared.isdigit() or int(declared) > self.body_limit):
            await self._too_large(scope, int(declared) if declared.isdigit() else None)
            await _refuse("http", receive, send, 413, f"body over {self.body_limit} bytes")
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.body_limit:
                await self._too_large(scope, None)
                await _refuse("http", receive, send, 413, f"body over {self.body_limit} bytes")
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(self, scope: Scope, declared: int | None) -> None:
        client = scope.get("client")
        log.warning(
            "request body over the limit refused",
            path=str(scope.get("path", ""))[:100],
            client=client[0] if client else None,
            length=declared,
        )
        if self.on_too_large is not None:
            try:
                await asyncio.to_thread(self.on_too_large, scope, declared)
            except Exception as exc:  # the refusal stands whatever the hook does
                log.error("could not note a refused request", error=str(exc))


def _replay(body: bytes, receive: Receive) -> Receive:
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _refuse(kind: str, receive: Receive, send: Send, status: int, why: str) -> None:
    body = json.dumps({"error": why}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if kind == "http":
        headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


def timed_http(request_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request does not arrive in time."""

    class TimedH11(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._track()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._track()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._disarm()  # the WebSocket protocol has its own pings and timeouts
            super().handle_websocket_upgrade(event)

        def _track(self) -> None:
            state = self.conn.their_state
            if state is h11.IDLE and self.conn.trailing_data[0]:
                self._arm()  # part of the next request's head is here: it must finish in time
            elif state is h11.SEND_BODY:
                self._arm()
            elif state is not h11.IDLE:
                self._disarm()  # the request is in (or the connection is ending)

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(request_timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                log.debug("a request did not arrive in time: connection closed", client=self.client)
                self.transport.close()

    return TimedH11
