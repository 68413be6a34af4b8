"""`floorctl verify` catches every way of changing a stored log, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from intruder import unguard

from controller.cli import main
from controller.store.api import record_scenario
from controller.store.canonical import ChainRecord
from controller.store.repository import Store

Shift = Callable[..., list[dict[str, Any]]]


def run_verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(["verify", *args])
    return status, capsys.readouterr().out


@pytest.fixture
def recorded(store_url: str, store_shift_events: Shift) -> str:
    record_scenario(store_url, store_shift_events(4))
    return store_url


def renumber(conn: sa.Connection, where: str, delta: int) -> None:
    """Shift sequence numbers without colliding on the key (via negative numbers)."""
    conn.exec_driver_sql(f"UPDATE events SET seq = -(seq + ({delta})) WHERE {where}")
    conn.exec_driver_sql("UPDATE events SET seq = -seq WHERE seq < 0")


def body_of(store: Store, seq: int) -> ChainRecord:
    return store.records("T1", after=seq - 1, upto=seq)[0]


TAMPERS: dict[str, tuple[Callable[[Store, sa.Connection], None], int, str]] = {}


def tamper(name: str, seq: int, kind: str) -> Callable[..., Any]:
    def register(fn: Callable[[Store, sa.Connection], None]) -> Callable[..., Any]:
        TAMPERS[name] = (fn, seq, kind)
        return fn

    return register


@tamper("edit a wager", 3, "edited")
def _edit(store: Store, conn: sa.Connection) -> None:
    conn.execute(
        sa.text("UPDATE events SET body = :b WHERE seq = 3"),
        {"b": '{"amount":"200","box":2,"player":"ben","type":"bet"}'},
    )


@tamper("edit a card and recompute its hash", 8, "edited")
def _edit_rehash(store: Store, conn: sa.Connection) -> None:
    old = body_of(store, 8)
    forged = ChainRecord.make(
        "T1", 8, {"type": "card", "card": "KS"}, old.prev_hash, old.recorded_at
    )
    conn.execute(
        sa.text("UPDATE events SET body = :b, hash = :h WHERE seq = 8"),
        {"b": forged.body, "h": forged.hash},
    )


@tamper("delete an event", 10, "deleted")
def _delete(store: Store, conn: sa.Connection) -> None:
    conn.exec_driver_sql("DELETE FROM events WHERE seq = 10")


@tamper("delete an event and renumber the rest", 10, "deleted")
def _delete_renumber(store: Store, conn: sa.Connection) -> None:
    conn.exec_driver_sql("DELETE FROM events WHERE seq = 10")
    renumber(conn, "seq > 10", -1)


@tamper("delete the last events", 70, "deleted")
def _delete_tail(store: Store, conn: sa.Connection) -> None:
    conn.exec_driver_sql("DELETE FROM events WHERE seq >= 70")


@tamper("insert an event and renumber the rest", 6, "inserted")
def _insert(store: Store, conn: sa.Connection) -> None:
    renumber(conn, "seq >= 6", 1)
    prev = body_of(store, 5)
    stranger = ChainRecord.make(
        "T1", 6, {"type": "card", "card": "AH"}, prev.hash, prev.recorded_at
    )
    conn.execute(
        sa.insert(sa.table("events", *[sa.column(c) for c in stranger.to_row()])),
        [stranger.to_row()],
    )


@tamper("swap two events", 7, "reordered")
def _swap(store: Store, conn: sa.Connection) -> None:
    conn.exec_driver_sql("UPDATE events SET seq = -1 WHERE seq = 7")
    conn.exec_driver_sql("UPDATE events SET seq = 7 WHERE seq = 8")
    conn.exec_driver_sql("UPDATE events SET seq = 8 WHERE seq = -1")


@tamper("change a settlement", 12, "settlement")
def _settlement(store: Store, conn: sa.Connection) -> None:
    conn.exec_driver_sql(
        "UPDATE settlements SET returned = '35', net = '25' WHERE round = 1 AND idx = 0"
    )


@tamper("delete a settlement", 12, "settlement")
def _settlement_gone(store: Store, conn: sa.Connection) -> None:
    conn.exec_driver_sql("DELETE FROM settlements WHERE round = 1 AND idx = 1")


@tamper("delete a flag", 61, "flag")
def _flag_gone(store: Store, conn: sa.Connection) -> None:
    conn.exec_driver_sql("DELETE FROM flags WHERE seq = 61")


def test_an_untouched_store_verifies(recorded: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_verify(capsys, "--db", recorded)
    assert status == 0
    assert "OK" in out and "77 events verified" in out


@pytest.mark.parametrize("name", list(TAMPERS))
def test_verify_names_the_first_changed_event(
    recorded: str, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    fn, seq, kind = TAMPERS[name]
    with Store.open(recorded) as store, store.engine.begin() as conn:
        unguard(store, conn)
        fn(store, conn)
    status, out = run_verify(capsys, "--db", recorded, "--json")
    doc = json.loads(out)
    assert status == 1
    assert doc["problem"]["table"] == "T1"
    assert (doc["problem"]["event"], doc["problem"]["kind"]) == (seq, kind), doc["problem"]


def test_the_scenario_the_tamper_tests_use_is_the_expected_one(
    store_shift_events: Shift,
) -> None:
    # The tampers above aim at these events; fail loudly if the examples change.
    events = store_shift_events(4)
    assert events[3] == {"type": "bet", "box": 2, "player": "ben", "amount": 20}
    assert events[7] == {"type": "card", "card": "7D"} and events[8]["type"] == "card"
    assert events[12] == {"type": "card", "card": "QD"}  # settles round 1
    assert events[61] == {"type": "card", "card": "5C", "in_error": "exposed"}  # flag 16.4
    assert len(events) == 77 and events[-1] == {"type": "card", "card": "KD"}


def export_of(url: str, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["export", "--db", url, "--out", str(out)]) == 0
    capsys.readouterr()
    return out


def reseal(out: Path) -> None:
    """Recompute the manifest's sums, as someone hiding an edit would."""
    import hashlib

    manifest = json.loads((out / "manifest.json").read_text())
    for rel in manifest["files"]:
        manifest["files"][rel] = hashlib.sha256((out / rel).read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))


def test_an_export_verifies_and_its_tampering_is_caught(
    recorded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = export_of(recorded, tmp_path / "pkg", capsys)
    assert run_verify(capsys, str(out))[0] == 0

    settlements = out / "T1" / "settlements.csv"
    original = settlements.read_text()
    settlements.write_text(original.replace("ann,1,0,hand,10,25,15", "ann,1,0,hand,10,35,25"))
    status, text = run_verify(capsys, str(out))
    assert status == 1 and "event 12: settlement" in text
    assert "settlements.csv does not match its SHA-256 in the manifest" in text
    reseal(out)
    status, text = run_verify(capsys, str(out))
    assert status == 1 and "event 12: settlement" in text
    settlements.write_text(original)
    reseal(out)

    scenario = out / "T1" / "scenario.jsonl"
    chain = out / "T1" / "chain.csv"
    lines, rows = scenario.read_text().splitlines(True), chain.read_text().splitlines(True)
    scenario.write_text("".join(lines[:9] + lines[10:]))
    chain.write_text("".join(rows[:10] + rows[11:]))
    reseal(out)
    status, text = run_verify(capsys, str(out))
    assert status == 1 and "event 9: deleted" in text

    scenario.write_text("".join(lines[:-1]))
    chain.write_text("".join(rows[:-1]))
    reseal(out)
    status, text = run_verify(capsys, str(out))
    assert status == 1 and "deleted" in text


def test_verify_reports_an_unreachable_database_as_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "--db", f"sqlite:///{tmp_path}/none/x.db"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_verify_and_export_do_not_create_a_store_that_is_not_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "typo.db"
    assert main(["verify", "--db", f"sqlite:///{missing}"]) == 2
    assert "no such store" in capsys.readouterr().err
    assert main(["export", "--db", f"sqlite:///{missing}", "--out", str(tmp_path / "o")]) == 2
    assert not missing.exists()


def test_export_will_not_write_over_another_package(
    recorded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = export_of(recorded, tmp_path / "pkg", capsys)
    assert main(["export", "--db", recorded, "--out", str(out)]) == 2
    assert "not an empty directory" in capsys.readouterr().err
