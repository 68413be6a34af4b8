"""The floor takes a table's events only under that table's signature (issue 25, item 1).

The attack as it was made: a table PC, with the credential it ships with, inserts a correctly
chained but unsigned event into another table's floor record beyond its last signed head. The
floor must refuse it (or keep it out of its record), never show it, and let the genuine table
go on shipping. Against a real PostgreSQL prepared by `floorctl floor init`."""

from __future__ import annotations

import base64
import configparser
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from floor_keys import register_key
from floor_roles import FloorDb
from floor_roles import floor_db as _floor_db

from controller.cli import main
from controller.store.api import record_scenario
from controller.store.canonical import ChainRecord
from controller.store.heads import Head, load_heads
from controller.store.keys import generate_pair
from controller.store.repository import Store

Shift = Callable[..., list[dict[str, Any]]]
ROOT = Path(__file__).resolve().parent.parent

floor_db = pytest.fixture(_floor_db)

INSERT = (
    "INSERT INTO {s}events (table_id, seq, type, body, recorded_at, corrects, prev_hash, hash) "
    "VALUES (%(table_id)s, %(seq)s, %(type)s, %(body)s, %(recorded_at)s, %(corrects)s, "
    "%(prev_hash)s, %(hash)s)"
)


def _forged_after(floor_db: FloorDb, table_id: str) -> ChainRecord:
    """A correctly chained, unsigned event following the floor's last event of a table."""
    with Store.open(floor_db.floor_url, create=False) as store:
        head = store.head(table_id)
        assert head is not None
        last = store.records(table_id, after=head[0] - 1)[-1]
    return ChainRecord.make(
        table_id,
        last.seq + 1,
        {"type": "note", "text": "forged"},
        last.hash,
        "2099-01-01T00:00:00.000000Z",
    )


def _floor_head(floor_db: FloorDb, table_id: str) -> tuple[int, str] | None:
    with Store.open(floor_db.floor_url, create=False) as store:
        return store.head(table_id)


@pytest.fixture
def two_tables(
    floor_db: FloorDb, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    assert floor_db.init() == 0
    keys = {}
    for table in ("T1", "T2"):
        assert floor_db.add_table(table) == 0
        private, public, _ = generate_pair(tmp_path / table)
        assert register_key(floor_db.owner_url, table, public) == 0
        keys[table] = (private, public)
    capsys.readouterr()
    return keys


def _ship(floor_db: FloorDb, db: str, table: str) -> int:
    return main(["ship", "--db", db, "--to", floor_db.table_url(table)])


def test_a_table_cannot_forge_another_tables_floor_record(
    floor_db: FloorDb,
    two_tables: dict[str, Any],
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    t2 = f"sqlite:///{tmp_path / 't2.db'}"
    record_scenario(t2, store_shift_events(2, "T2"), signing_key=two_tables["T2"][0])
    assert _ship(floor_db, t2, "T2") == 0
    assert "into the floor's inbox" in capsys.readouterr().out
    assert _floor_head(floor_db, "T2") is None  # not the floor's record until taken in
    assert floor_db.ingest_now() == 0
    before = _floor_head(floor_db, "T2")
    assert before is not None
    forged = _forged_after(floor_db, "T2").to_row()

    # T1's credential: not into T2's rows of the inbox, not into the floor's log.
    t1_role = floor_db.tables["T1"]
    for schema in ("", "floorctl_inbox.", "public."):
        with floor_db.connect(t1_role) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(INSERT.format(s=schema), forged)
    # Nor can it see T2's inbox to chain onto it.
    with floor_db.connect(t1_role) as conn:
        seen = conn.execute("SELECT count(*) FROM events WHERE table_id = 'T2'").fetchone()
        assert seen == (0,)

    assert floor_db.ingest_now() == 0
    assert _floor_head(floor_db, "T2") == before
    capsys.readouterr()

    # The genuine T2 plays on and ships: nothing stands in its way, and the floor witnesses it.
    record_scenario(t2, store_shift_events(3, "T2"), signing_key=two_tables["T2"][0])
    assert _ship(floor_db, t2, "T2") == 0, capsys.readouterr().err
    assert floor_db.ingest_now() == 0
    after = _floor_head(floor_db, "T2")
    with Store.open(t2, create=False) as table:
        assert after == table.head("T2") and after != before
    public = str(two_tables["T2"][1])
    args = ["verify", "--db", t2, "--key", public, "--witness", floor_db.floor_url]
    assert main(args) == 0, capsys.readouterr().out
    assert main(["verify", "--db", floor_db.floor_url, "--key", public]) == 0


def test_unsigned_events_in_a_tables_inbox_never_reach_the_floors_record(
    floor_db: FloorDb,
    two_tables: dict[str, Any],
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Even with the table's own credential (its PC taken over), what its key did not sign
    stays out of the floor's record: the floor's pages and verify never show it."""
    t2 = f"sqlite:///{tmp_path / 't2.db'}"
    record_scenario(t2, store_shift_events(2, "T2"), signing_key=two_tables["T2"][0])
    assert _ship(floor_db, t2, "T2") == 0
    assert floor_db.ingest_now() == 0
    before = _floor_head(floor_db, "T2")
    forged = _forged_after(floor_db, "T2").to_row()
    with floor_db.connect(floor_db.tables["T2"]) as conn:
        conn.execute(INSERT.format(s=""), forged)  # its own inbox takes it...
    capsys.readouterr()
    assert floor_db.ingest_now() == 1  # ...the floor does not
    assert _floor_head(floor_db, "T2") == before
    with floor_db.connect(floor_db.floor) as conn:
        got = conn.execute("SELECT count(*) FROM events WHERE hash = %s", (forged["hash"],))
        assert got.fetchone() == (0,)
    public = str(two_tables["T2"][1])
    assert main(["verify", "--db", floor_db.floor_url, "--key", public]) == 0

    # A head over it naming the registered key, signed by no one: the ingest refuses the
    # inbox, and the floor's page says so (and why) rather than show anything of it.
    with Store.open(floor_db.table_url("T2"), create=False) as inbox:
        last = load_heads(inbox, "T2")[-1]
    fake = Head(
        "T2",
        last.seq + 1,
        last.size + 1,
        "00" * 32,
        forged["hash"],
        "2099-01-01T00:00:00.000000Z",
        last.digest(),
        last.key_id,
        base64.b64encode(bytes(64)).decode(),
    )
    with floor_db.connect(floor_db.tables["T2"]) as conn:
        conn.execute(HEAD_INSERT, fake.to_row())
    capsys.readouterr()
    assert floor_db.ingest_now() == 1
    assert "table T2: refused" in capsys.readouterr().err
    assert _floor_head(floor_db, "T2") == before
    assert main(["floor", "view", "--db", floor_db.floor_url]) == 0
    out = capsys.readouterr().out
    assert "table T2: its inbox is refused since" in out  # with the first fault found:
    assert "'note' is not an event type" in out  # the forged event does not even replay


HEAD_INSERT = (
    "INSERT INTO heads (table_id, seq, size, root, chain_head, signed_at, prev, key_id, "
    "signature, frontier) VALUES (%(table_id)s, %(seq)s, %(size)s, %(root)s, %(chain_head)s, "
    "%(signed_at)s, %(prev)s, %(key_id)s, %(signature)s, %(frontier)s)"
)


def test_a_table_with_no_registered_key_is_refused_and_the_others_go_on(
    floor_db: FloorDb,
    two_tables: dict[str, Any],
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A head signed with another key than the registered one: the inbox's guard refuses it,
    and a table whose log is signed by another key is refused as a whole by the ingest."""
    stranger, _public, _ = generate_pair(tmp_path / "stranger")
    t1 = f"sqlite:///{tmp_path / 't1.db'}"
    t2 = f"sqlite:///{tmp_path / 't2.db'}"
    record_scenario(t1, store_shift_events(1, "T1"), signing_key=stranger)
    record_scenario(t2, store_shift_events(1, "T2"), signing_key=two_tables["T2"][0])
    assert _ship(floor_db, t1, "T1") == 1
    assert "does not check its log" in capsys.readouterr().err
    assert _ship(floor_db, t2, "T2") == 0
    assert floor_db.ingest_now() == 0
    assert _floor_head(floor_db, "T1") is None
    with Store.open(t2, create=False) as table:
        assert _floor_head(floor_db, "T2") == table.head("T2")


def test_the_ingest_unit_follows_the_tables_shipments(
    floor_db: FloorDb, two_tables: dict[str, Any], store_shift_events: Shift, tmp_path: Path
) -> None:
    """`systemd/floorctl-floor-ingest.service`'s own command, with the floor's address as its
    environment file gives it: it takes in what a table ships, keeps doing so as the table
    ships again, and stops at SIGTERM."""
    service = configparser.RawConfigParser(strict=False, interpolation=None)
    service.read(ROOT / "systemd" / "floorctl-floor-ingest.service", encoding="utf-8")
    argv = shlex.split(service["Service"]["ExecStart"])
    assert argv[0] == "/opt/floorctl/.venv/bin/floorctl"
    argv = [sys.executable, "-m", "controller.cli", *argv[1:]]
    t2 = f"sqlite:///{tmp_path / 't2.db'}"
    record_scenario(t2, store_shift_events(2, "T2"), signing_key=two_tables["T2"][0])
    assert _ship(floor_db, t2, "T2") == 0
    env = dict(os.environ, FLOORCTL_FLOOR_URL=floor_db.ingest_url)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for shipped in (2, 3):
            if shipped == 3:
                record_scenario(t2, store_shift_events(3, "T2"), signing_key=two_tables["T2"][0])
                assert _ship(floor_db, t2, "T2") == 0
            with Store.open(t2, create=False) as table:
                want = table.head("T2")
            deadline = time.monotonic() + 90  # a pass every 10 s, on a loaded machine
            while _floor_head(floor_db, "T2") != want and time.monotonic() < deadline:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.5)
            assert _floor_head(floor_db, "T2") == want
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGTERM, err
