"""The floor's read model and its parts: times and windows worked out by hand, the indexer
(incremental, resumed, rebuilt: always the same rows), checkpoints that are damaged or forged,
the accounts and the insert-only lookup log."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
import test_floor_support as support
from test_floor_support import quiet, record

from controller.engine import Table
from controller.events import parse_event, parse_setup
from controller.floor import queries, users
from controller.floor.audit import Who
from controller.floor.generate import Shift
from controller.floor.indexer import Indexer
from controller.floor.schema import Floor, open_floor
from controller.floor.settings import FloorSettings, InputError

WHO = Who("tester", "surveillance", "cli")


# ----- times and windows (hand-derived: NZDT is UTC+13, NZST UTC+12) -------------------------


def test_the_gaming_day_and_its_shifts_in_auckland() -> None:
    s = FloorSettings()
    day = s.gaming_day(date(2026, 12, 1))
    assert (day.start, day.end) == (
        datetime(2026, 11, 30, 17, 0, tzinfo=UTC),
        datetime(2026, 12, 1, 17, 0, tzinfo=UTC),
    )
    night = s.shift(date(2026, 12, 1), "night")  # 22:00 on the 1st to 06:00 on the 2nd
    assert (night.start, night.end) == (
        datetime(2026, 12, 1, 9, 0, tzinfo=UTC),
        datetime(2026, 12, 1, 17, 0, tzinfo=UTC),
    )
    winter = s.gaming_day(date(2026, 7, 1))
    assert winter.start == datetime(2026, 6, 30, 18, 0, tzinfo=UTC)
    # The clocks go back an hour at 03:00 on 4 April 2027, within the gaming day of the 3rd
    # (06:00 on the 3rd to 06:00 on the 4th); forward at 02:00 on 27 September 2026.
    assert s.gaming_day(date(2027, 4, 3)).hours() == 25
    assert s.gaming_day(date(2027, 4, 4)).hours() == 24
    assert s.gaming_day(date(2026, 9, 26)).hours() == 23
    assert s.shift_of(datetime(2026, 12, 1, 16, 59, tzinfo=UTC)) == (date(2026, 12, 1), "night")
    assert s.shift_of(datetime(2026, 12, 1, 17, 0, tzinfo=UTC)) == (date(2026, 12, 2), "day")


def test_local_times_typed() -> None:
    s = FloorSettings()
    assert s.local_instant("2026-12-01 21:14") == (datetime(2026, 12, 1, 8, 14, tzinfo=UTC), True)
    assert s.local_instant("2026-12-01T21:14:05") == (
        datetime(2026, 12, 1, 8, 14, 5, tzinfo=UTC),
        False,
    )
    assert s.local_instant("2026-12-01 21:14+12:00")[0] == datetime(2026, 12, 1, 9, 14, tzinfo=UTC)
    assert s.local_instant("2027-04-04 02:30+13:00")[0] == datetime(2027, 4, 3, 13, 30, tzinfo=UTC)
    with pytest.raises(InputError, match=r"add the offset, \+13:00 or \+12:00"):
        s.local_instant("2027-04-04 02:30")
    with pytest.raises(InputError, match="never happened"):
        s.local_instant("2026-09-27 02:15")
    other = FloorSettings("Europe/London", "early=07:00,late=19:00")
    assert other.gaming_day(date(2026, 12, 1)).start == datetime(2026, 12, 1, 7, tzinfo=UTC)
    for bad in ("day", "day=25:00", "Day=06:00", "a=06:00,a=07:00", "a=06:00,b=06:00"):
        with pytest.raises(InputError):
            FloorSettings(shifts_text=bad)


# ----- the indexer -------------------------------------------------------------------------------


@pytest.fixture
def floor_url() -> Iterator[str]:
    yield from support.pg_schema()


def read_model(floor: Floor) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    with floor.engine.connect() as conn:
        for table, order in (
            ("floor_rounds", "table_id, round"),
            ("floor_flags", "table_id, seq, idx"),
            ("floor_shoes", "table_id, seq"),
            ("floor_tables", "table_id"),
        ):
            rows = conn.exec_driver_sql(f"SELECT * FROM {table} ORDER BY {order}").all()
            out[table] = [tuple(r) for r in rows]
    out["floor_tables"] = [r[:-1] for r in out["floor_tables"]]  # updated_at aside
    return out


def shifts() -> dict[str, list[tuple[dict[str, Any], str]]]:
    return {
        "A1": list(
            Shift("A1", seed=21, start=support.T01_START, vocabulary=True, irregular=0.05).events(
                30
            )
        ),
        "B2": list(Shift("B2", game="blackjack", seed=22, start=support.T02_START).events(25)),
    }


def test_incremental_resumed_and_rebuilt_indexes_are_the_same(
    floor_url: str, tmp_path: Path
) -> None:
    data = shifts()
    # Shipped in pieces, indexed after each with a new indexer (a restart) in small batches.
    for table_id, events in data.items():
        store = f"sqlite:///{tmp_path / f'{table_id}.db'}"
        cut = len(events) // 3
        for upto in (cut, 2 * cut, len(events)):
            record(store, events[:upto])
            assert quiet(["ship", "--db", store, "--to", floor_url])[0] == 0
            with open_floor(floor_url) as floor:
                Indexer(floor, batch=97).run_once()
    with open_floor(floor_url) as floor:
        pieces = read_model(floor)
        assert pieces["floor_rounds"] and pieces["floor_flags"] and pieces["floor_shoes"]
        # Rebuilt from the events in one pass.
        assert quiet(["floor", "index", "--db", floor_url, "--rebuild"])[0] == 0
        assert read_model(floor) == pieces
        # And each table's rounds are the replay's.
        for table_id in data:
            export = tmp_path / f"export-{table_id}"
            store = f"sqlite:///{tmp_path / f'{table_id}.db'}"
            assert quiet(["export", "--db", store, "--out", str(export)])[0] == 0
            _status, text = quiet(["replay", str(export / table_id / "scenario.jsonl"), "--json"])
            replay = json.loads(text)
            rows = [r for r in pieces["floor_rounds"] if r[0] == table_id]
            assert [r[1] for r in rows] == [r["round"] for r in replay["rounds"]]
            assert [r[9] for r in rows] == [r["status"] for r in replay["rounds"]]


def test_a_damaged_or_forged_checkpoint_never_passes_unseen(floor_url: str, tmp_path: Path) -> None:
    events = shifts()["A1"]
    store = f"sqlite:///{tmp_path / 'A1.db'}"
    record(store, events)
    assert quiet(["ship", "--db", store, "--to", floor_url])[0] == 0
    with open_floor(floor_url) as floor:
        Indexer(floor).run_once()
        with floor.engine.connect() as conn:
            cps = (
                conn.exec_driver_sql(
                    "SELECT seq FROM floor_checkpoints WHERE table_id = 'A1' AND kind = 'shoe' "
                    "ORDER BY seq"
                )
                .scalars()
                .all()
            )
            rnd = conn.exec_driver_sql(
                "SELECT round FROM floor_rounds WHERE table_id = 'A1' AND first_seq > %(s)s "
                "ORDER BY round LIMIT 1",
                {"s": cps[-1]},
            ).scalar()
        good = queries.find_round(floor, WHO, "A1", number=int(rnd))
        assert good["checks"]["matches_table_record"] and good["checks"]["checkpoint"] is None
        conninfo = floor_url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(conninfo) as pg:
            # Damaged: the snapshot's bytes changed; its digest no longer matches.
            pg.execute(
                "UPDATE floor_checkpoints SET snapshot = replace(snapshot, '\"seq\":', "
                "'\"seq\":9') WHERE table_id = 'A1' AND seq = %s",
                (cps[-1],),
            )
        damaged = queries.find_round(floor, WHO, "A1", number=int(rnd))
        assert "unusable" in damaged["checks"]["checkpoint"]
        assert damaged["hands"] == good["hands"]  # rebuilt from the table line instead
        assert damaged["checks"]["matches_table_record"]
        with psycopg.connect(conninfo) as pg:
            # Forged: a whole, valid checkpoint of another moment put in its place.
            pg.execute(
                "UPDATE floor_checkpoints SET snapshot = (SELECT snapshot FROM floor_checkpoints "
                "WHERE table_id = 'A1' AND seq = %s) WHERE table_id = 'A1' AND seq = %s",
                (cps[0], cps[-1]),
            )
        forged = queries.find_round(floor, WHO, "A1", number=int(rnd))
        assert not forged["checks"]["matches_table_record"] or forged["checks"]["checkpoint"]
        status, out = quiet(
            ["floor", "round", "--db", floor_url, "--table", "A1", "--round", str(rnd)]
        )
        assert status == 0
        assert "DIFFERS" in out or "checkpoint" in out


# ----- accounts and the lookup log ----------------------------------------------------------------


def test_accounts_are_argon2_hashed_and_checked(
    floor_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record(f"sqlite:///{tmp_path / 'A1.db'}", shifts()["A1"][:50])
    assert quiet(["ship", "--db", f"sqlite:///{tmp_path / 'A1.db'}", "--to", floor_url])[0] == 0

    def user(*argv: str, password: str = "") -> tuple[int, str]:
        monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
        status, out = quiet(["floor", "user", *argv, "--db", floor_url, "--password-stdin"])
        return status, out + capsys.readouterr().err

    assert user("add", "sally", "--role", "surveillance", password="a long passphrase")[0] == 0
    status, err = user("add", "sally", "--role", "pit", password="another passphrase")
    assert status == 2 and "already an account 'sally'" in err
    status, err = user("add", "pete", "--role", "pit", password="short")
    assert status == 2 and "at least 10 characters" in err
    status, err = user("add", "Pete!", "--role", "pit", password="long enough here")
    assert status == 2 and "not an account name" in err
    status, err = user("add", "pete", password="long enough here")
    assert status == 2 and "--role" in err
    with open_floor(floor_url) as floor:
        with floor.engine.connect() as conn:
            stored = conn.exec_driver_sql(
                "SELECT password_hash FROM floor_users WHERE name = 'sally'"
            ).scalar()
        assert str(stored).startswith("$argon2id$") and "a long passphrase" not in str(stored)
        assert users.authenticate(floor, "sally", "a long passphrase") == users.User(
            "sally", "surveillance"
        )
        assert users.authenticate(floor, "sally", "a long passphrasE") is None
        assert users.authenticate(floor, "nobody", "a long passphrase") is None
    assert user("disable", "sally")[0] == 0
    assert user("disable", "sally")[0] == 1
    with open_floor(floor_url) as floor:
        assert users.authenticate(floor, "sally", "a long passphrase") is None
    status, out = quiet(["floor", "user", "list", "--db", floor_url])
    assert "sally" in out and "disabled" in out


def test_the_lookup_log_names_who_asked_and_cannot_be_changed(
    floor_url: str, tmp_path: Path
) -> None:
    record(f"sqlite:///{tmp_path / 'A1.db'}", shifts()["A1"][:400])
    assert quiet(["ship", "--db", f"sqlite:///{tmp_path / 'A1.db'}", "--to", floor_url])[0] == 0
    assert quiet(["floor", "round", "--db", floor_url, "--table", "A1", "--round", "1"])[0] == 0
    assert quiet(["floor", "round", "--db", floor_url, "--table", "ZZ", "--round", "1"])[0] == 1
    _status, out = quiet(["floor", "lookups", "--db", floor_url, "--json"])
    rows = json.loads(out)
    asked = [(r["what"], r["params"].get("table"), r["outcome"][:7]) for r in rows]
    assert ("round", "A1", "ok") in asked and ("round", "ZZ", "refused") in asked
    assert all(r["who"].startswith("cli:") and r["via"] == "cli" for r in rows)
    conninfo = floor_url.replace("postgresql+psycopg://", "postgresql://")
    for statement in (
        "UPDATE floor_lookups SET who = 'someone else'",
        "DELETE FROM floor_lookups",
        "TRUNCATE floor_lookups",
    ):
        with psycopg.connect(conninfo) as pg, pytest.raises(psycopg.errors.RaiseException):
            pg.execute(statement)
    _status, out = quiet(["floor", "lookups", "--db", floor_url, "--json"])
    assert len(json.loads(out)) == len(rows) + 1  # the reading itself is logged


def test_devices_at_fault_and_open_flags_follow_the_log(floor_url: str, tmp_path: Path) -> None:
    """manual_mode puts a device at fault on the floor page until it is off again; a flag is
    open until the dealer acknowledges it."""
    events = shifts()["A1"]
    store = f"sqlite:///{tmp_path / 'A1.db'}"
    table = Table(parse_setup(events[0][0], 1))
    raised = 0
    head = events[:1]
    for event, at in events[1:]:
        head.append((event, at))
        raised += len(table.apply(parse_event(event)).flags)
        if raised >= 2:
            break
    at = head[-1][1]
    head.append(
        (
            {
                "type": "manual_mode",
                "device": "camera",
                "on": True,
                "reason": "lens covered",
                "actor": "d.tane",
            },
            at,
        )
    )
    record(store, head)
    assert quiet(["ship", "--db", store, "--to", floor_url])[0] == 0
    _status, out = quiet(["floor", "view", "--db", floor_url, "--json"])
    table = json.loads(out)["tables"][0]
    assert table["devices"] == [
        {
            "device": "camera",
            "reason": "lens covered",
            "since": table["devices"][0]["since"],
            "seq": len(head) - 1,
        }
    ]
    assert "camera (lens covered)" in quiet(["floor", "view", "--db", floor_url])[1]
    with open_floor(floor_url) as floor, floor.engine.connect() as conn:
        replay_flags = conn.exec_driver_sql(
            "SELECT seq, rule FROM floor_flags WHERE table_id = 'A1' ORDER BY seq"
        ).all()
    more = [
        ({"type": "manual_mode", "device": "camera", "on": False}, at),
        *[
            ({"type": "acknowledge", "flag_event": int(s), "rule": str(r), "actor": "d.tane"}, at)
            for s, r in replay_flags[:1]
        ],
    ]
    record(store, head + more)
    assert quiet(["ship", "--db", store, "--to", floor_url])[0] == 0
    _status, out = quiet(["floor", "view", "--db", floor_url, "--json"])
    table = json.loads(out)["tables"][0]
    assert table["devices"] == []
    assert len(replay_flags) == raised
    assert table["open_flags"] == len(replay_flags) - 1
