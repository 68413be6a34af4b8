"""`floorctl ship`: the table's SQLite log copied to the floor's PostgreSQL, in order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from controller.cli import main
from controller.replay import replay_dicts
from controller.store.api import record_scenario
from controller.store.recorder import Recorder
from controller.store.repository import Store
from controller.store.ship import ShipRefused, ship
from controller.store.verify import verify_store

pytestmark = pytest.mark.usefixtures("store_spool_dir")

Shift = Callable[..., list[dict[str, Any]]]


def counts(url: str) -> dict[str, int]:
    with Store.open(url) as store, store.engine.connect() as conn:
        return {
            t: int(conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one())
            for t in ("tables", "events", "shoes", "rounds", "flags", "settlements")
        }


def test_ship_copies_every_table_and_the_floor_verifies(
    store_sqlite_url: str,
    store_pg_url: str,
    store_shift_events: Shift,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record_scenario(store_sqlite_url, store_shift_events(4, "T1"))
    record_scenario(store_sqlite_url, store_shift_events(2, "T2"))
    assert main(["ship", "--db", store_sqlite_url, "--to", store_pg_url, "--batch", "10"]) == 0
    out = capsys.readouterr().out
    assert "table T1: 77 events copied" in out and "table T2: 34 events copied" in out
    assert counts(store_pg_url) == counts(store_sqlite_url)
    assert main(["verify", "--db", store_pg_url]) == 0
    with Store.open(store_pg_url) as floor:
        events = store_shift_events(4, "T1")
        assert replay_dicts(r.event() for r in floor.records("T1")) == replay_dicts(events)
    # Shipping again copies nothing and changes nothing.
    assert main(["ship", "--db", store_sqlite_url, "--to", store_pg_url]) == 0
    assert "table T1: 0 events copied" in capsys.readouterr().out
    assert counts(store_pg_url) == counts(store_sqlite_url)


def test_ship_sends_only_what_the_floor_lacks(
    store_sqlite_url: str, store_pg_url: str, store_shift_events: Shift
) -> None:
    events = store_shift_events(3)
    record_scenario(store_sqlite_url, events[:20])
    with Store.open(store_sqlite_url) as src, Store.open(store_pg_url) as dst:
        assert ship(src, dst).copied == {"T1": 20}
        rec = Recorder.open(src, table_id="T1", retry_every=None)
        for e in events[20:]:
            rec.record(e)
        rec.close()
        assert ship(src, dst).copied == {"T1": len(events) - 20}
        assert verify_store(dst).ok
        assert dst.head("T1") == src.head("T1")


def test_a_cut_shipment_resumes_where_it_stopped(
    store_sqlite_url: str, store_pg_url: str, store_shift_events: Shift
) -> None:
    record_scenario(store_sqlite_url, store_shift_events(4))
    batches: list[int] = []

    def cut(_table: str, last: int) -> None:
        batches.append(last)
        if len(batches) == 3:
            raise ConnectionError("network cable pulled")

    with Store.open(store_sqlite_url) as src, Store.open(store_pg_url) as dst:
        with pytest.raises(ConnectionError):
            ship(src, dst, batch_size=10, after_batch=cut)
        assert dst.head("T1") is not None and dst.head("T1")[0] == batches[-1]  # type: ignore[index]
        assert verify_store(dst, replay=False).ok  # the part on the floor is a sound chain
        report = ship(src, dst, batch_size=10)
        assert report.copied == {"T1": 77 - (batches[-1] + 1)}
        assert verify_store(dst).ok
    assert counts(store_pg_url) == counts(store_sqlite_url)


def test_ship_refuses_a_source_that_does_not_verify(
    store_sqlite_url: str,
    store_pg_url: str,
    store_shift_events: Shift,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record_scenario(store_sqlite_url, store_shift_events(2))
    with Store.open(store_sqlite_url) as src, src.engine.begin() as conn:
        conn.exec_driver_sql("DROP TRIGGER events_no_update")
        conn.exec_driver_sql('UPDATE events SET body = \'{"type":"no_more_bets"}\' WHERE seq = 5')
    assert main(["ship", "--db", store_sqlite_url, "--to", store_pg_url]) == 1
    assert "event 5: edited" in capsys.readouterr().err
    assert counts(store_pg_url)["events"] == 0


def test_ship_refuses_a_floor_copy_that_has_parted_from_the_source(
    store_sqlite_url: str, store_pg_url: str, store_shift_events: Shift, tmp_path: Path
) -> None:
    events = store_shift_events(2)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    record_scenario(store_sqlite_url, events)
    record_scenario(other, [*events[:10], {"type": "void"}])
    with Store.open(other) as src, Store.open(store_pg_url) as dst:
        ship(src, dst)
    with Store.open(store_sqlite_url) as src, Store.open(store_pg_url) as dst:
        with pytest.raises(ShipRefused, match="parted"):
            ship(src, dst)
        assert dst.head("T1") is not None and dst.head("T1")[0] == 10  # type: ignore[index]


def test_the_floor_refuses_changes_too(
    store_pg_url: str, store_sqlite_url: str, store_shift_events: Shift
) -> None:
    record_scenario(store_sqlite_url, store_shift_events(1))
    with Store.open(store_sqlite_url) as src, Store.open(store_pg_url) as dst:
        ship(src, dst)
        for statement in (
            "DELETE FROM events",
            "TRUNCATE events",
            "UPDATE rounds SET status = 'void'",
        ):
            with pytest.raises(sa.exc.DBAPIError, match="append-only"), dst.engine.begin() as conn:
                conn.exec_driver_sql(statement)


def test_ship_refuses_a_source_whose_settlement_was_deleted(
    store_sqlite_url: str, store_pg_url: str, store_shift_events: Shift
) -> None:
    # An event and its settlement are committed together, so a settled event without its
    # settlement rows is tampering, whatever the moment: nothing is shipped.
    events = store_shift_events(1)
    record_scenario(store_sqlite_url, events)
    with Store.open(store_sqlite_url) as src, src.engine.begin() as conn:
        conn.exec_driver_sql("DROP TRIGGER settlements_no_delete")
        conn.exec_driver_sql("DELETE FROM settlements")
    with Store.open(store_sqlite_url) as src, Store.open(store_pg_url) as dst:
        with pytest.raises(ShipRefused, match="settlement") as refused:
            ship(src, dst)
        assert refused.value.problem is not None
        assert refused.value.problem.kind == "settlement"
        assert dst.head("T1") is None
