"""Shared pytest fixtures.

Audit store fixtures (names start with ``store_``): ``store_url`` runs a test once on SQLite
and once on PostgreSQL; ``store_pg_url`` gives a PostgreSQL database only. Each PostgreSQL
test gets a schema of its own, dropped afterwards. PostgreSQL is expected on
``FLOORCTL_TEST_PG`` (default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``); if it
cannot be reached, those tests FAIL rather than skip.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import paths
import psycopg
import pytest
import structlog


@pytest.fixture(autouse=True)
def _structlog_isolated() -> Iterator[None]:
    """Each test starts from structlog's defaults: a command run in-process configures logging
    globally (JSON on standard error, warnings up), which must not leak into the next test."""
    yield
    structlog.reset_defaults()


STORE_PG_BASE = paths.PG_URL
_pg_conninfo = paths.pg_conninfo


@pytest.fixture
def store_pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema, dropped after the test."""
    schema = f"floorctl_test_{uuid.uuid4().hex[:12]}"
    try:
        conn = psycopg.connect(_pg_conninfo(STORE_PG_BASE), autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {STORE_PG_BASE} (set FLOORCTL_TEST_PG to "
            f"another URL): {exc}",
            pytrace=False,
        )
    with conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in STORE_PG_BASE else "?"
    yield f"{STORE_PG_BASE}{sep}options={quote(f'-csearch_path={schema}')}"
    with psycopg.connect(_pg_conninfo(STORE_PG_BASE), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def store_spool_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local spool directory for PostgreSQL tables, given as systemd gives it
    (``$STATE_DIRECTORY``); SQLite tables spool beside their database file."""
    where = tmp_path / "state"
    where.mkdir()
    monkeypatch.setenv("STATE_DIRECTORY", str(where))
    return where


@pytest.fixture
def store_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> str:
    """The same test on a SQLite file and on a PostgreSQL schema of its own."""
    name = "store_sqlite_url" if request.param == "sqlite" else "store_pg_url"
    url: str = request.getfixturevalue(name)
    return url


STORE_EXAMPLES = paths.EXAMPLES


def store_shift(blocks: int, table_id: str = "T1") -> list[dict[str, Any]]:
    """A long legal pontoon shift: the pontoon examples' events, one after another.

    Each example starts by loading a new shoe, so they follow each other legally; the result
    starts with the table line. ``blocks`` examples are used (in turn).
    """
    files = sorted(STORE_EXAMPLES.glob("0[1-4]-pontoon-*.jsonl"))
    if not files:
        raise FileNotFoundError(f"no pontoon examples in {STORE_EXAMPLES}")
    parts = [
        [json.loads(line) for line in f.read_text().splitlines() if line.strip()] for f in files
    ]
    events: list[dict[str, Any]] = [{**parts[0][0], "table_id": table_id}]
    for i in range(blocks):
        events.extend(dict(e) for e in parts[i % len(parts)][1:])
    return events


@pytest.fixture
def store_shift_events() -> Callable[..., list[dict[str, Any]]]:
    """``store_shift_events(blocks, table_id="T1")``: a long legal shift (see store_shift)."""
    return store_shift


_reporter: Any = None


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    global _reporter
    _reporter = config.pluginmanager.get_plugin("terminalreporter")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Name a failing test as it fails (the quiet progress line shows only an ``F``), so a long
    run shows what broke without waiting for the summary."""
    if report.failed and _reporter is not None:
        where = "" if report.when == "call" else f" (in {report.when})"
        _reporter.write("\n")
        _reporter.write_line(f"FAILED {report.nodeid}{where}", red=True)
