"""Recording a live table, and restarting it from the store, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import paths
import pytest
import sqlalchemy as sa

from controller.events import ScenarioError, parse_event
from controller.replay import replay_dicts
from controller.store.api import record_scenario
from controller.store.db import StoreError
from controller.store.recorder import Recorder
from controller.store.repository import Store
from controller.store.verify import verify_store

EXAMPLES = paths.EXAMPLES
Shift = Callable[..., list[dict[str, Any]]]
pytestmark = pytest.mark.usefixtures("store_spool_dir")


def example(name: str) -> list[dict[str, Any]]:
    path = next(EXAMPLES.glob(f"{name}*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", ["01", "02", "03", "04", "05"])
def test_recording_an_example_gives_its_replay_and_stores_its_settlements(
    store_url: str, name: str
) -> None:
    events = example(name)
    doc = record_scenario(store_url, events)
    assert doc == replay_dicts(events)
    table_id = events[0]["table_id"]
    with Store.open(store_url) as store:
        records = store.records(table_id)
        assert [r.seq for r in records] == list(range(len(events)))
        assert [r.event() for r in records[1:]] == [parse_event(e).to_dict() for e in events[1:]]
        stored = store.derived(table_id)
        want = [s for rnd in doc["rounds"] for s in rnd["settlements"]]
        got = [{k: row[k] for k in want[0]} for row in stored.settlements] if want else []
        assert got == want
        assert [f["rule"] for f in stored.flags] == [
            f["rule"] for rnd in doc["rounds"] for f in rnd["flags"]
        ]
        assert verify_store(store).ok


def test_recording_the_same_scenario_again_adds_nothing(store_url: str) -> None:
    events = example("04")
    first = record_scenario(store_url, events[:12])
    assert first == replay_dicts(events[:12])
    assert record_scenario(store_url, events) == replay_dicts(events)
    assert record_scenario(store_url, events) == replay_dicts(events)
    with Store.open(store_url) as store:
        assert store.head("T1") is not None
        assert store.head("T1")[0] == len(events) - 1  # type: ignore[index]


def test_a_different_scenario_for_a_stored_table_is_refused(store_url: str) -> None:
    record_scenario(store_url, example("01"))
    with pytest.raises(StoreError, match="event 1"):
        record_scenario(store_url, example("04"))


def test_a_malformed_event_is_refused_and_nothing_is_stored(store_url: str) -> None:
    events = example("01")
    with Store.open(store_url) as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        rec.record(events[1])
        with pytest.raises(ScenarioError, match="card"):
            rec.record({"type": "card", "card": "1S"})
        assert store.head("T1") == (1, rec.head_hash)
        rec.record(events[2])
        assert store.head("T1") == (2, rec.head_hash)
        rec.close()


def test_corrections_name_the_event_they_correct(store_url: str) -> None:
    events = example("01")
    with Store.open(store_url) as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        for e in events[1:3]:
            rec.record(e)
        fixed = rec.record({**events[2], "amount": 15, "correction_of": 2, "actor": "sup1"})
        with pytest.raises(StoreError, match="correction_of"):
            rec.record({**events[2], "correction_of": 9})
        rec.close()
        stored = store.records("T1")
        assert [r.corrects for r in stored] == [None, None, None, 2]
        assert stored[fixed.seq].event()["actor"] == "sup1"
        assert verify_store(store).ok


def snapshot(rec: Recorder) -> dict[str, Any]:
    """What the table shows: the rounds so far, what is due next, and the chain's head."""
    table = rec.table
    return {
        "result": table.result(),
        "due": table.due().to_dict(),
        "seq": rec.seq,
        "head": rec.head_hash,
    }


@pytest.mark.parametrize("stop", [7, 9, 11, 24])
def test_a_restart_rebuilds_the_table_a_half_dealt_round_included(
    store_url: str, store_shift_events: Shift, stop: int
) -> None:
    events = store_shift_events(3)
    with Store.open(store_url) as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        for e in events[1:stop]:
            rec.record(e)
        before = snapshot(rec)
        rec.close()
    assert before["result"]["rounds"][-1]["status"] in ("incomplete", "settled")
    with Store.open(store_url) as store:
        again = Recorder.open(store, table_id="T1", retry_every=None)
        assert snapshot(again) == before
        for e in events[stop:]:
            again.record(e)
        assert again.table.result() == replay_dicts(events)
        again.close()
        assert verify_store(store).ok


def test_a_half_dealt_round_is_incomplete_until_it_is_finished(
    store_url: str, store_shift_events: Shift
) -> None:
    events = store_shift_events(1)
    with Store.open(store_url) as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        for e in events[1:8]:
            rec.record(e)
        rec.close()
        again = Recorder.open(store, table_id="T1", retry_every=None)
        assert again.table.result()["rounds"][-1]["status"] == "incomplete"
        assert again.table.result()["rounds"][-1]["hands"][0]["cards"] == ["AS"]
        again.close()


def test_a_restart_never_recreates_a_deleted_derived_row(store_url: str) -> None:
    # An event and its derived rows commit together, so a stored event without its
    # settlement is tampering, not a crash: a restart leaves the hole for verify to report.
    events = example("03")
    record_scenario(store_url, events)
    with Store.open(store_url) as store:
        settled = store.derived("T1").settlements
        assert settled
        with store.engine.begin() as conn:
            for disable, _ in _triggers(store, "settlements"):
                conn.exec_driver_sql(disable)
            conn.exec_driver_sql("DELETE FROM settlements")
            for _, enable in _triggers(store, "settlements"):
                conn.exec_driver_sql(enable)
        before = verify_store(store)
        assert before.problem is not None and before.problem.kind == "settlement"
        assert "which the store lacks" in before.problem.message
        again = Recorder.open(store, table_id="T1", retry_every=None)
        assert again.table.result() == replay_dicts(events)
        again.close()
        assert store.derived("T1").settlements == []
        assert verify_store(store).problem == before.problem


def _triggers(store: Store, *tables: str) -> list[tuple[str, str]]:
    """(disable, enable) statements for the insert-only triggers of some tables."""
    out = []
    for name in tables:
        if store.dialect == "sqlite":
            for verb in ("update", "delete"):
                out.append(
                    (
                        f"DROP TRIGGER {name}_no_{verb}",
                        f"CREATE TRIGGER {name}_no_{verb} BEFORE {verb.upper()} ON {name} "
                        f"BEGIN SELECT RAISE(ABORT, '{name} is append-only'); END",
                    )
                )
        else:
            out.append(
                (
                    f"ALTER TABLE {name} DISABLE TRIGGER USER",
                    f"ALTER TABLE {name} ENABLE TRIGGER USER",
                )
            )
    return out


def test_a_restart_refuses_a_log_that_does_not_verify(store_url: str) -> None:
    record_scenario(store_url, example("02"))
    with Store.open(store_url) as store:
        with store.engine.begin() as conn:
            for disable, _ in _triggers(store, "events"):
                conn.exec_driver_sql(disable)
            conn.execute(
                sa.text("UPDATE events SET body = :b WHERE seq = 4"),
                {"b": '{"amount":"500","box":3,"player":"cat","type":"bet"}'},
            )
        with pytest.raises(StoreError, match="event 4: edited"):
            Recorder.open(store, table_id="T1", retry_every=None)


def test_opening_a_table_the_store_does_not_hold_needs_its_table_line(store_url: str) -> None:
    with Store.open(store_url) as store, pytest.raises(StoreError, match="T5 has no events"):
        Recorder.open(store, table_id="T5", retry_every=None)


def test_a_table_line_that_differs_from_the_stored_one_is_refused(store_url: str) -> None:
    events = example("01")
    record_scenario(store_url, events)
    with Store.open(store_url) as store, pytest.raises(StoreError, match="table line"):
        Recorder.open(store, {**events[0], "max_bet": 500}, retry_every=None)


def test_every_table_in_a_store_is_restarted(store_url: str, store_shift_events: Shift) -> None:
    from controller.store.recorder import open_tables

    one, two = store_shift_events(2, "T1"), store_shift_events(3, "T2")
    record_scenario(store_url, one[:20])
    record_scenario(store_url, two[:31])
    with Store.open(store_url) as store:
        tables = open_tables(store, retry_every=None)
        assert sorted(tables) == ["T1", "T2"]
        assert tables["T1"].table.result() == replay_dicts(one[:20])
        assert tables["T2"].table.result() == replay_dicts(two[:31])
        assert (tables["T1"].seq, tables["T2"].seq) == (19, 30)
        for rec in tables.values():
            rec.close()


def test_floorctl_replay_with_db_records_the_scenario(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.cli import main

    path = next(EXAMPLES.glob("04*.jsonl"))
    assert main(["replay", str(path), "--db", store_url, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == replay_dicts(example("04"))
    assert main(["verify", "--db", store_url]) == 0
    assert "28 events verified" in capsys.readouterr().out


def test_a_second_recorder_on_the_same_table_is_refused_not_interleaved(store_url: str) -> None:
    events = example("01")
    with Store.open(store_url) as store:
        first = Recorder.open(store, events[0], retry_every=None)
        second = Recorder.open(store, table_id="T1", retry_every=None)
        first.record(events[1])
        with pytest.raises(StoreError, match="another recorder"):
            second.record(events[2])
        assert second.seq == 0  # the refused event was neither kept nor applied
        first.record(events[2])
        first.close()
        second.close()
        assert [r.event() for r in store.records("T1")[1:]] == [
            parse_event(e).to_dict() for e in events[1:3]
        ]
        assert verify_store(store).ok
