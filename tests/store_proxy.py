"""A TCP proxy in front of the test PostgreSQL that a test can break on purpose.

``stop()`` cuts every connection and stops listening (a connection is then *refused*);
``start()`` listens again on the same port. ``arm("cut_at_commit")`` drops the next connection
that sends ``COMMIT`` without passing it on (a transaction cut in the middle: the server rolls
it back); ``arm("lose_commit_answer")`` passes the next ``COMMIT`` on and drops the server's
answer (the commit happened, the client cannot know). psycopg sends ``COMMIT`` as a simple
query, so the proxy finds it in the client's bytes.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import urlsplit, urlunsplit

import paths


class PgProxy:
    def __init__(self, target: tuple[str, int] | None = None) -> None:
        self.target = target or paths.pg_address()
        self._lock = threading.Lock()
        self._conns: list[tuple[socket.socket, socket.socket]] = []
        self._armed: str | None = None
        self.fired: list[str] = []
        self.port = 0
        self._listener: socket.socket | None = None
        self.start()

    def url(self, base: str) -> str:
        """``base`` (a PostgreSQL URL) pointed at the proxy."""
        parts = urlsplit(base)
        netloc = parts.netloc.rsplit("@", 1)
        user = netloc[0] + "@" if len(netloc) == 2 else ""
        return urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{self.port}"))

    def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Refuse new connections and cut the open ones."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        self.cut()

    def cut(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for pair in conns:
            _close(pair)

    def arm(self, what: str) -> None:
        assert what in ("cut_at_commit", "lose_commit_answer")
        with self._lock:
            self._armed = what

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            pair = (client, server)
            with self._lock:
                self._conns.append(pair)
            state = {"commit_sent": False}
            threading.Thread(target=self._up, args=(pair, state), daemon=True).start()
            threading.Thread(target=self._down, args=(pair, state), daemon=True).start()

    def _up(self, pair: tuple[socket.socket, socket.socket], state: dict[str, bool]) -> None:
        client, server = pair
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                break
            if not data:
                break
            if b"COMMIT\x00" in data:
                with self._lock:
                    armed = self._armed
                    if armed is not None:
                        self._armed = None
                        self.fired.append(armed)
                if armed == "cut_at_commit":
                    break
                if armed == "lose_commit_answer":
                    state["commit_sent"] = True
            try:
                server.sendall(data)
            except OSError:
                break
        _close(pair)

    def _down(self, pair: tuple[socket.socket, socket.socket], state: dict[str, bool]) -> None:
        client, server = pair
        while True:
            try:
                data = server.recv(65536)
            except OSError:
                break
            if not data or state["commit_sent"]:
                break  # the answer to the COMMIT is lost with the connection
            try:
                client.sendall(data)
            except OSError:
                break
        _close(pair)


def _close(pair: tuple[socket.socket, socket.socket]) -> None:
    for sock in pair:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
