"""The floor's web server against a hostile client: other host names, oversized and slow
requests, names no account has, many addresses' worth of guesses, and an account disabled
while its session is open. Over real sockets against `FloorServer`, on a real PostgreSQL."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from controller.floor import users
from controller.floor.audit import Who, lookups
from controller.floor.schema import Floor, open_floor
from controller.floor.web import MAX_COUNTS, MAX_FAILURES, FloorServer
from controller.store.repository import Store

PASSWORD = "watching the floor 1"


@pytest.fixture
def served(store_pg_url: str) -> Iterator[tuple[Floor, FloorServer, str]]:
    Store.open(store_pg_url).close()
    floor = open_floor(store_pg_url)
    who = Who("test-admin", "cli", "cli")
    users.add_user(floor, who, "sally", "surveillance", PASSWORD)
    users.add_user(floor, who, "pete", "pit", PASSWORD)
    server = FloorServer(floor, "127.0.0.1", 0, poll=5.0, request_timeout=1.0)
    with server.running() as url:
        yield floor, server, url
    floor.close()


def _login(url: str, name: str, password: str = PASSWORD) -> httpx.Response:
    return httpx.post(url + "login", data={"name": name, "password": password})


def test_another_host_name_is_refused(served: tuple[Floor, FloorServer, str]) -> None:
    _floor, _server, url = served
    r = httpx.get(url + "login", headers={"Host": "evil.example"})
    assert r.status_code == 421
    assert httpx.get(url + "login").status_code == 200


def test_a_huge_login_name_is_refused_logged_and_not_kept(
    served: tuple[Floor, FloorServer, str],
) -> None:
    floor, server, url = served
    r = _login(url, "a" * 5_000_000)
    assert r.status_code == 413
    r = _login(url, "b" * 5_000)  # under the body limit, over any account's name
    assert r.status_code == 400
    refused = [row for row in lookups(floor) if row["what"] == "login"]
    assert any("too long" in row["outcome"] and len(row["who"]) < 80 for row in refused)
    assert any(row["outcome"].startswith("refused: a body over") for row in lookups(floor))
    assert not any(len(key) > 100 for key in server.guard.counts)


def test_a_slow_request_is_cut_off(served: tuple[Floor, FloorServer, str]) -> None:
    _floor, _server, url = served
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=10) as sock:
        sock.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        start = time.monotonic()
        closed = False
        while time.monotonic() - start < 8:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                closed = True
                break
            sock.settimeout(0.5)
            try:
                if sock.recv(1024) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
            except ConnectionResetError:  # closed with our unread header lines in its buffer
                closed = True
                break
        assert closed, "the server kept a request that never finished"
        assert time.monotonic() - start < 5


def test_a_disabled_account_loses_its_open_session_at_once(
    served: tuple[Floor, FloorServer, str],
) -> None:
    floor, _server, url = served
    with httpx.Client(base_url=url) as client:
        r = client.post("/login", data={"name": "pete", "password": PASSWORD})
        assert r.status_code == 303
        assert client.get("/api/floor").status_code == 200
        users.disable_user(floor, Who("test-admin", "cli", "cli"), "pete")
        assert client.get("/api/floor").status_code == 401
        assert client.get("/", follow_redirects=False).status_code == 303


def test_guesses_are_counted_per_account_and_per_address(
    served: tuple[Floor, FloorServer, str],
) -> None:
    _floor, server, url = served
    for _ in range(MAX_FAILURES):
        assert _login(url, "sally", "not her password").status_code == 401
    assert _login(url, "sally").status_code == 429  # the account is locked...
    assert _login(url, "pete").status_code == 303  # ...not the others
    # Many names from one address: the address is locked, whatever name it tries next.
    status = [_login(url, f"guess{i:03d}", "wrong password").status_code for i in range(25)]
    assert 429 in status
    assert _login(url, "pete").status_code == 429
    assert len(server.guard.counts) <= MAX_COUNTS + 2


def test_a_stream_of_names_neither_grows_the_counts_nor_escapes_them() -> None:
    from controller.floor.web import Guard

    guard = Guard()
    for i in range(2 * MAX_COUNTS):
        guard.failed(f"name{i}", f"10.0.{i // 250}.{i % 250}")
    assert len(guard.counts) <= MAX_COUNTS + 2
    # Names and addresses past the bound share one count, which locks like any other.
    assert guard.locked("a-new-name", "10.99.0.1") > 0


def test_the_floor_page_names_a_table_whose_inbox_is_refused(
    served: tuple[Floor, FloorServer, str],
) -> None:
    from controller.store.roles import INGEST_LOG_SQL

    floor, _server, url = served
    with floor.engine.begin() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.execute(INGEST_LOG_SQL)
        cursor.close()
        conn.exec_driver_sql(
            "INSERT INTO ingest_log (table_id, outcome) VALUES "
            "('T9', 'refused: head 4 is not signed by key abc'), ('T8', 'refused: x'), "
            "('T8', 'ok')"
        )
    with httpx.Client(base_url=url) as client:
        assert client.post("/login", data={"name": "pete", "password": PASSWORD}).status_code == 303
        page = client.get("/").text
    assert "Table T9: what it ships is refused" in page and "not signed by key abc" in page
    assert "Table T8" not in page  # taken in again since
