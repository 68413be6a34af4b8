"""The floor tests' shared floor (no tests here): several tables recorded as live tables record,
shipped to a PostgreSQL floor database of their own.

- T01: a Pontoon shift of the generator (controller.floor.generate), 70 rounds from 19:00 on
  1 December 2026 (NZDT), recorded through the store's recorder with each event's time: the
  table opened (decks inspected, 6.2/6.3), dealers taking turns, every shoe read out and
  reconciled (a card now and then lost, so a shoe does not reconcile), the table closed;
- T02: a Blackjack (1994 Gazette) shift, 50 rounds from 22:30 the same evening (so it runs into
  the night shift);
- EX4: the worked example 04 (irregularities), recorded by ``floorctl replay --db`` (times are
  the time of the test run).

Each table has its own SQLite store, shipped with ``floorctl ship``. The tests check the
floor's answers against ``floorctl replay`` of each table's own export (``floorctl export``),
which shares nothing with the floor but the engine.
"""

from __future__ import annotations

import contextlib
import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import paths
import psycopg
import pytest

from controller.cli import main
from controller.floor.generate import Shift
from controller.store.recorder import Recorder
from controller.store.repository import Store

PG_BASE = paths.PG_URL
EXAMPLES = paths.EXAMPLES
T01_START = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)  # 19:00 NZDT
T02_START = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)  # 22:30 NZDT


@dataclass
class FloorData:
    url: str  # the floor (PostgreSQL, a schema of its own)
    stores: dict[str, str]  # table -> its own SQLite store URL
    tmp: Path
    events: dict[str, list[tuple[dict[str, Any], str]]] = field(default_factory=dict)

    def oracle(self, table_id: str) -> dict[str, Any]:
        """``floorctl replay --json`` of the table's own export: the independent answer."""
        return json.loads((self.tmp / f"oracle-{table_id}.json").read_text())

    def chain(self, table_id: str) -> dict[int, str]:
        """seq -> recorded_at, from the export's chain.csv."""
        lines = (self.tmp / f"export-{table_id}" / table_id / "chain.csv").read_text()
        out = {}
        for line in lines.splitlines()[1:]:
            parts = line.split(",")
            out[int(parts[0])] = parts[2]
        return out

    def closed(self, table_id: str) -> dict[int, int]:
        """round -> the event that closed it, from the export's rounds.csv (the table's own
        recorder's rows)."""
        import csv

        path = self.tmp / f"export-{table_id}" / table_id / "rounds.csv"
        with open(path, newline="") as fh:
            return {int(r["round"]): int(r["closed_seq"]) for r in csv.DictReader(fh)}


def record(url: str, events: list[tuple[dict[str, Any], str]]) -> None:
    """Record events into a table's store as its recorder would, each at its own time; those
    the store holds already (a longer list given again) are not recorded twice."""
    line, first = events[0]
    with Store.open(url) as store:
        rec = Recorder.open(store, line, spool=None, retry_every=None, clock=lambda: first)
        try:
            for event, at in events[rec.seq + 1 :]:
                rec.record(event, recorded_at=at)
        finally:
            rec.close()


def pg_schema() -> Iterator[str]:
    schema = f"floorctl_floor_{uuid.uuid4().hex[:12]}"
    conninfo = PG_BASE.replace("postgresql+psycopg://", "postgresql://")
    try:
        conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL is not reachable at {PG_BASE}: {exc}", pytrace=False)
    with conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    yield f"{PG_BASE}?options={quote(f'-csearch_path={schema}')}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def quiet(argv: list[str]) -> tuple[int, str]:
    """``floorctl ARGV`` in this process: its exit status and what it printed."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(argv)
    return status, buffer.getvalue()


def build_floor(tmp: Path, url: str) -> FloorData:
    data = FloorData(url, {}, tmp)
    shifts = {
        "T01": (Shift("T01", seed=11, start=T01_START, vocabulary=True, irregular=0.04), 70),
        "T02": (Shift("T02", game="blackjack-nz-1994", seed=12, start=T02_START), 50),
    }
    for table_id, (shift, rounds) in shifts.items():
        events = list(shift.events(rounds))
        data.events[table_id] = events
        store = f"sqlite:///{tmp / f'{table_id}.db'}"
        record(store, events)
        data.stores[table_id] = store
    example = [json.loads(x) for x in (EXAMPLES / "04-pontoon-irregularities.jsonl").open()]
    example[0]["table_id"] = "EX4"
    scenario = tmp / "ex4.jsonl"
    scenario.write_text("".join(json.dumps(e) + "\n" for e in example))
    data.stores["EX4"] = f"sqlite:///{tmp / 'EX4.db'}"
    assert quiet(["replay", str(scenario), "--db", data.stores["EX4"]])[0] == 0
    for table_id, store in data.stores.items():
        assert quiet(["ship", "--db", store, "--to", url])[0] == 0
        out = tmp / f"export-{table_id}"
        assert quiet(["export", "--db", store, "--out", str(out)])[0] == 0
        status, text = quiet(["replay", str(out / table_id / "scenario.jsonl"), "--json"])
        assert status == 0
        (tmp / f"oracle-{table_id}.json").write_text(text)
    return data


@pytest.fixture(scope="module")
def floor_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FloorData]:
    """The floor, built once per test module (its tests only read it, or add their own)."""
    tmp = tmp_path_factory.mktemp("floor")
    for url in pg_schema():
        yield build_floor(tmp, url)
