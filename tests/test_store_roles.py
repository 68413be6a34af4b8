"""Least privilege on the floor's PostgreSQL (`floorctl floor init`): the writer role that the
table service and `ship` use may only SELECT and INSERT, so it can neither disable a guard nor
delete, update or truncate what the floor has witnessed."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import STORE_PG_BASE, _pg_conninfo
from floor_keys import register_key

from controller.cli import main
from controller.store.api import record_scenario
from controller.store.heads import load_heads
from controller.store.keys import generate_pair
from controller.store.repository import Store

Shift = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def floor_db() -> Iterator[dict[str, str]]:
    """A database of its own, and the names of the roles floor init is to make."""
    tag = uuid.uuid4().hex[:10]
    names = {
        "db": f"signed_{tag}",
        "owner": f"signed_owner_{tag}",
        "writer": f"signed_writer_{tag}",
    }
    base = _pg_conninfo(STORE_PG_BASE)
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{names["db"]}"')
    root = STORE_PG_BASE.rsplit("/", 1)[0]
    names["admin"] = f"{root}/{names['db']}"
    host = root.split("@", 1)[1]
    names["owner_url"] = f"postgresql+psycopg://{names['owner']}@{host}/{names['db']}"
    names["writer_url"] = f"postgresql+psycopg://{names['writer']}@{host}/{names['db']}"
    yield names
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{names["db"]}" WITH (FORCE)')
        for role in (names["owner"], names["writer"]):
            conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def init(floor_db: dict[str, str], capsys: pytest.CaptureFixture[str]) -> str:
    status = main(
        [
            "floor",
            "init",
            "--db",
            floor_db["admin"],
            "--owner",
            floor_db["owner"],
            "--writer",
            floor_db["writer"],
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    return out


def as_writer(floor_db: dict[str, str]) -> psycopg.Connection[Any]:
    return psycopg.connect(_pg_conninfo(floor_db["writer_url"]), autocommit=True)


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE events DISABLE TRIGGER USER",
        "ALTER TABLE heads DISABLE TRIGGER heads_no_change",
        "DROP TRIGGER events_no_change ON events",
        "DELETE FROM events WHERE seq = 76",
        "DELETE FROM heads",
        "UPDATE events SET body = '{}' WHERE seq = 3",
        "UPDATE settlements SET net = '1000'",
        "TRUNCATE events",
        "TRUNCATE heads CASCADE",
        "DROP TABLE events",
        "ALTER TABLE events ADD COLUMN note text",
        "CREATE OR REPLACE FUNCTION floorctl_insert_only() RETURNS trigger LANGUAGE plpgsql "
        "AS $$ BEGIN RETURN NEW; END $$",
        "INSERT INTO table_keys VALUES ('T9', 'x', 'x', 'x', 'x')",
        "DELETE FROM table_keys",
        "CREATE TABLE events2 (x int)",
    ],
)
def test_the_writer_cannot_undo_the_floors_record(
    floor_db: dict[str, str],
    store_sqlite_url: str,
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    statement: str,
) -> None:
    init(floor_db, capsys)
    private, public, _key = generate_pair(tmp_path / "keys")
    assert register_key(floor_db["owner_url"], "T1", public) == 0
    record_scenario(store_sqlite_url, store_shift_events(4), signing_key=private)
    assert main(["ship", "--db", store_sqlite_url, "--to", floor_db["writer_url"]]) == 0
    capsys.readouterr()
    with as_writer(floor_db) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(statement)
    status = main(["verify", "--db", floor_db["writer_url"], "--key", str(public)])
    assert status == 0, capsys.readouterr().out


def test_the_table_service_and_ship_work_as_the_writer_and_the_floor_refuses_strangers(
    floor_db: dict[str, str],
    store_sqlite_url: str,
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = init(floor_db, capsys)
    assert "SELECT and INSERT" in out
    again = init(floor_db, capsys)  # run twice: nothing breaks
    assert "exists" in again
    private, public, _key = generate_pair(tmp_path / "keys")
    other_private, _other_public, _ = generate_pair(tmp_path / "other")
    # A table writing straight to the floor database, as the writer, signing as it goes.
    events = store_shift_events(2, "T7")
    status = register_key(floor_db["owner_url"], "T7", public)
    assert status == 0
    record_scenario(floor_db["writer_url"], events, signing_key=private)
    with Store.open(floor_db["writer_url"], create=False) as store:
        assert load_heads(store, "T7")[-1].size == len(events)
    assert main(["verify", "--db", floor_db["writer_url"], "--key", str(public)]) == 0
    capsys.readouterr()

    # A table with no registered key: the floor's own guard refuses its events.
    record_scenario(store_sqlite_url, store_shift_events(1, "T8"), signing_key=other_private)
    status = main(["ship", "--db", store_sqlite_url, "--to", floor_db["writer_url"]])
    err = capsys.readouterr().err
    assert status == 1 and "table T8 has no registered key on the floor" in err
    # A head naming another key than the registered one is refused by the database itself.
    with Store.open(floor_db["writer_url"], create=False) as store:
        head = load_heads(store, "T7")[-1].to_row()
    head.update(seq=head["seq"] + 1, key_id="ab" * 32)
    with as_writer(floor_db) as conn, pytest.raises(psycopg.errors.RaiseException):
        conn.execute(
            "INSERT INTO heads (table_id, seq, size, root, chain_head, signed_at, prev, key_id, "
            "signature, frontier) VALUES (%(table_id)s, %(seq)s, %(size)s, %(root)s, "
            "%(chain_head)s, %(signed_at)s, %(prev)s, %(key_id)s, %(signature)s, %(frontier)s)",
            head,
        )


def test_the_floors_service_runs_as_the_owner_after_init(
    floor_db: dict[str, str],
    store_sqlite_url: str,
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from controller.floor.indexer import Indexer
    from controller.floor.schema import open_floor

    init(floor_db, capsys)
    private, public, _key = generate_pair(tmp_path / "keys")
    assert register_key(floor_db["owner_url"], "T1", public) == 0
    events = store_shift_events(2)
    record_scenario(store_sqlite_url, events, signing_key=private)
    assert main(["ship", "--db", store_sqlite_url, "--to", floor_db["writer_url"]]) == 0
    with open_floor(floor_db["owner_url"]) as floor:  # every event after the table line
        assert Indexer(floor).run_once(["T1"]) == {"T1": len(events) - 1}
    capsys.readouterr()
    proof = tmp_path / "round.json"
    assert (
        main(
            [
                "prove",
                "--db",
                floor_db["writer_url"],
                "--table",
                "T1",
                "--round",
                "2",
                "--out",
                str(proof),
            ]
        )
        == 0
    )
    assert main(["verify-proof", str(proof), "--key", str(public)]) == 0
