"""A table service serving its dealer's screen on a real uvicorn server, in a thread.

For tests that must go through what a browser or an attacker on the table PC goes through:
uvicorn's HTTP parser and proxy-header handling, the gate, the timeouts, the WebSocket.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from controller.service.app import Table, WebSettings, open_table, serve
from controller.service.pin import hash_pin

TABLE_LINE: dict[str, Any] = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "T07",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}
SUPERVISOR_PIN = "2468"
DEALER_PIN = "1357"


def pin_books(dealers: bool) -> tuple[dict[str, str], dict[str, str]]:
    supervisors = {"jsmith": hash_pin(SUPERVISOR_PIN, iterations=1000)}
    books = {"ann": hash_pin(DEALER_PIN, iterations=1000)} if dealers else {}
    return supervisors, books


class Served:
    """``open_table`` + ``serve`` on 127.0.0.1 and a free port; ``close()`` stops both."""

    def __init__(
        self,
        tmp: Path,
        *,
        web: WebSettings | None = None,
        dealers: bool = True,
        table_line: dict[str, Any] | None = None,
        **table_options: Any,
    ) -> None:
        supervisors, books = pin_books(dealers)
        self.table: Table = open_table(
            table_line or TABLE_LINE,
            f"sqlite:///{tmp / 'audit.db'}",
            supervisors,
            dealers=books,
            **table_options,
        )
        if web is not None:
            self.table.web = web
        self.service = self.table.service
        self.url = ""
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done: asyncio.Future[None] | None = None
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        if not ready.wait(15):
            raise AssertionError("the dealer's screen did not start")
        self.base = self.url.rstrip("/")
        self.port = int(self.base.rsplit(":", 1)[1])

    def _serve(self, ready: threading.Event) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._done = self._loop.create_future()

            def on_ready(url: str) -> None:
                self.url = url
                ready.set()

            await serve(self.table, "127.0.0.1", 0, on_ready=on_ready, until=self._done)

        asyncio.run(main())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._loop is not None and self._done is not None:
            done = self._done
            self._loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))
        self._thread.join(timeout=10)
        self.table.close()
