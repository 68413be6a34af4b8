"""Least privilege on the floor's PostgreSQL (`floorctl floor init`, `add-table`): a table's
role writes only its own rows of the inbox, the ingest role only adds to the log, the floor's
service role only reads it — none can disable a guard, nor delete, update or truncate what
the floor has witnessed."""

from __future__ import annotations

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
from controller.store.heads import load_heads
from controller.store.keys import generate_pair
from controller.store.repository import Store

Shift = Callable[..., list[dict[str, Any]]]

floor_db = pytest.fixture(_floor_db)


@pytest.fixture
def shipped(
    floor_db: FloorDb,
    store_sqlite_url: str,
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> tuple[FloorDb, Path]:
    """A floor with table T1's shift shipped and taken in; T1's public key."""
    assert floor_db.init() == 0
    assert floor_db.add_table("T1") == 0
    private, public, _key = generate_pair(tmp_path / "keys")
    assert register_key(floor_db.owner_url, "T1", public) == 0
    record_scenario(store_sqlite_url, store_shift_events(4), signing_key=private)
    assert main(["ship", "--db", store_sqlite_url, "--to", floor_db.table_url("T1")]) == 0
    assert floor_db.ingest_now() == 0, capsys.readouterr().err
    capsys.readouterr()
    return floor_db, public


REFUSED = [
    "ALTER TABLE {s}.events DISABLE TRIGGER USER",
    "ALTER TABLE {s}.heads DISABLE TRIGGER heads_no_change",
    "DROP TRIGGER events_no_change ON {s}.events",
    "DELETE FROM {s}.events WHERE seq = 76",
    "DELETE FROM {s}.heads",
    "UPDATE {s}.events SET body = '{{}}' WHERE seq = 3",
    "UPDATE {s}.settlements SET net = '1000'",
    "TRUNCATE {s}.events",
    "TRUNCATE {s}.heads CASCADE",
    "DROP TABLE {s}.events",
    "ALTER TABLE {s}.events ADD COLUMN note text",
    "CREATE OR REPLACE FUNCTION {s}.floorctl_insert_only() RETURNS trigger LANGUAGE plpgsql "
    "AS $$ BEGIN RETURN NEW; END $$",
    "INSERT INTO {s}.table_keys VALUES ('T9', 'x', 'x', 'x', 'x')",
    "DELETE FROM {s}.table_keys",
    "CREATE TABLE floorctl_inbox.events2 (x int)",
    "INSERT INTO public.events SELECT * FROM public.events LIMIT 0",
]


@pytest.mark.parametrize("who", ["table", "ingest", "floor"])
def test_no_role_but_the_owner_can_undo_the_floors_record(
    shipped: tuple[FloorDb, Path], capsys: pytest.CaptureFixture[str], who: str
) -> None:
    floor_db, public = shipped
    role = {"table": floor_db.tables["T1"], "ingest": floor_db.ingest, "floor": floor_db.floor}
    done = []
    for schema in ("public", "floorctl_inbox"):
        for statement in REFUSED:
            if who == "ingest" and statement.startswith("INSERT INTO public.events"):
                continue  # adding to the log is what the ingest role is for (below)
            sql = statement.format(s=schema)
            with floor_db.connect(role[who]) as conn:
                try:
                    conn.execute(sql)
                except psycopg.errors.InsufficientPrivilege:
                    continue
                done.append(sql)
    assert done == []
    status = main(["verify", "--db", floor_db.floor_url, "--key", str(public)])
    assert status == 0, capsys.readouterr().out


def test_the_ingest_role_adds_to_the_log_and_the_floor_role_reads_it(
    shipped: tuple[FloorDb, Path],
) -> None:
    floor_db, _public = shipped
    with floor_db.connect(floor_db.ingest) as conn:
        conn.execute("INSERT INTO public.events SELECT * FROM public.events LIMIT 0")
        assert conn.execute("SELECT count(*) FROM public.events").fetchone()[0] > 50  # type: ignore[index]
    with floor_db.connect(floor_db.floor) as conn:
        got = conn.execute("SELECT count(*) FROM events WHERE table_id = 'T1'").fetchone()
        assert got is not None and got[0] > 50


def test_tables_record_and_ship_as_their_own_role_and_the_floor_refuses_strangers(
    floor_db: FloorDb,
    store_sqlite_url: str,
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert floor_db.init() == 0
    out = capsys.readouterr().out
    assert "only" in out and "SELECT the log" in out
    assert floor_db.init() == 0  # run twice: nothing breaks
    assert "exists" in capsys.readouterr().out
    for table in ("T7", "T8"):
        assert floor_db.add_table(table) == 0
    # One role per table: a second role for T7, or T7's role for another table, is refused.
    status = main(
        ["floor", "add-table", "--db", floor_db.admin, "--table", "T7", "--role", "other_t7"]
    )
    assert status == 2 and "one role per table" in capsys.readouterr().err
    status = main(
        [
            "floor",
            "add-table",
            "--db",
            floor_db.admin,
            "--table",
            "T9",
            "--role",
            floor_db.tables["T7"],
        ]
    )
    assert status == 2 and "one role per table" in capsys.readouterr().err
    private, public, _key = generate_pair(tmp_path / "keys")
    other_private, _other_public, _ = generate_pair(tmp_path / "other")
    # A table writing straight to the floor database, as its own role, signing as it goes.
    events = store_shift_events(2, "T7")
    assert register_key(floor_db.owner_url, "T7", public) == 0
    record_scenario(floor_db.table_url("T7"), events, signing_key=private)
    with Store.open(floor_db.table_url("T7"), create=False) as store:
        assert load_heads(store, "T7")[-1].size == len(events)
    with Store.open(floor_db.floor_url, create=False) as store:
        assert store.head("T7") is None  # in the inbox, not yet the floor's record
    assert floor_db.ingest_now() == 0
    capsys.readouterr()
    with Store.open(floor_db.floor_url, create=False) as store:
        assert load_heads(store, "T7")[-1].size == len(events)
    assert main(["verify", "--db", floor_db.floor_url, "--key", str(public)]) == 0
    capsys.readouterr()

    # A table with no registered key: the floor's own guard refuses its events.
    record_scenario(store_sqlite_url, store_shift_events(1, "T8"), signing_key=other_private)
    status = main(["ship", "--db", store_sqlite_url, "--to", floor_db.table_url("T8")])
    err = capsys.readouterr().err
    assert status == 1 and "table T8 has no registered key on the floor" in err
    # A head naming another key than the registered one is refused by the database itself.
    with Store.open(floor_db.table_url("T7"), create=False) as store:
        head = load_heads(store, "T7")[-1].to_row()
    head.update(seq=head["seq"] + 1, key_id="ab" * 32)
    with (
        floor_db.connect(floor_db.tables["T7"]) as conn,
        pytest.raises(psycopg.errors.RaiseException),
    ):
        conn.execute(
            "INSERT INTO heads (table_id, seq, size, root, chain_head, signed_at, prev, key_id, "
            "signature, frontier) VALUES (%(table_id)s, %(seq)s, %(size)s, %(root)s, "
            "%(chain_head)s, %(signed_at)s, %(prev)s, %(key_id)s, %(signature)s, %(frontier)s)",
            head,
        )


def test_the_floors_service_runs_as_the_floor_role_after_init(
    shipped: tuple[FloorDb, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.floor.indexer import Indexer
    from controller.floor.schema import drop_read_model, open_floor

    floor_db, public = shipped
    with open_floor(floor_db.floor_url) as floor:  # every event after the table line
        assert Indexer(floor).run_once(["T1"])["T1"] > 50
        drop_read_model(floor.engine)  # it owns the read model: it may rebuild it
        assert Indexer(floor).run_once(["T1"])["T1"] > 50
        # Accounts, the lookup log and evidence, all as the floor role.
        from controller.floor import users
        from controller.floor.audit import Who, lookups
        from controller.floor.evidence import write_evidence

        who = Who("test-admin", "cli", "cli")
        users.add_user(floor, who, "sally", "surveillance", "watching the floor 1")
        users.disable_user(floor, who, "sally")
        assert [r["what"] for r in lookups(floor)][:2] == ["user disable", "user add"]
        write_evidence(floor, who, "T1", tmp_path / "EV", number=2)
    assert main(["verify", str(tmp_path / "EV" / "export"), "--key", str(public)]) == 0
    for statement in (  # the lookup log is the owner's: the floor role only adds to it
        "DELETE FROM floor_lookups",
        "UPDATE floor_lookups SET outcome = 'ok'",
        "ALTER TABLE floor_lookups DISABLE TRIGGER USER",
    ):
        refused = pytest.raises(psycopg.errors.InsufficientPrivilege)
        with floor_db.connect(floor_db.floor) as conn, refused:
            conn.execute(statement)
    proof = tmp_path / "round.json"
    args = ["prove", "--db", floor_db.floor_url, "--table", "T1", "--round", "2"]
    assert main([*args, "--out", str(proof)]) == 0
    assert main(["verify-proof", str(proof), "--key", str(public)]) == 0
    capsys.readouterr()


def test_the_floors_pages_know_whether_they_could_change_the_record(
    shipped: tuple[FloorDb, Path],
) -> None:
    from controller.floor.schema import open_floor
    from controller.floor.web import may_change_the_record

    floor_db, _public = shipped
    with open_floor(floor_db.floor_url) as floor:
        assert not may_change_the_record(floor)
    with open_floor(floor_db.admin) as floor:
        assert may_change_the_record(floor)
    with Store.open(floor_db.owner_url, create=False) as store:  # owns the record's tables
        assert may_change_the_record(store)  # type: ignore[arg-type]  (uses .engine only)
    with Store.open(floor_db.ingest_url, create=False) as store:  # it adds to the record
        assert may_change_the_record(store)  # type: ignore[arg-type]


def test_init_takes_the_old_shared_writers_rights_away(
    floor_db: FloorDb, store_sqlite_url: str, store_shift_events: Shift, tmp_path: Path
) -> None:
    """A floor prepared before the inbox: every table shipped as one writer role, which could
    add to any table's record. Running init again leaves it nothing."""
    legacy = f"legacy_writer_{floor_db.tag}"
    floor_db.tables["legacy"] = legacy  # (dropped with the others)
    assert floor_db.init() == 0
    with floor_db.connect_admin() as conn:
        conn.execute(f'CREATE ROLE "{legacy}" LOGIN')
        conn.execute(f'GRANT SELECT, INSERT ON events, heads, rounds TO "{legacy}"')
    with floor_db.connect(legacy) as conn:
        conn.execute("INSERT INTO events SELECT * FROM events LIMIT 0")  # it could, before
    assert floor_db.init() == 0
    with floor_db.connect(legacy) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("INSERT INTO events SELECT * FROM events LIMIT 0")
