"""The repository on SQLite and PostgreSQL alike: schema, appends, append-only, reads."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError

from controller.store.canonical import GENESIS, ChainRecord
from controller.store.db import StoreError, current_revision, head_revision
from controller.store.repository import Derived, Store, table_row_for

T0 = "2026-11-30T10:00:00.000000Z"
SETUP: dict[str, Any] = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "T9",
    "boxes": 7,
    "decks": 6,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}


def chain(events: list[dict[str, Any]], table_id: str = "T9") -> list[ChainRecord]:
    prev = GENESIS
    out = []
    for seq, ev in enumerate(events):
        rec = ChainRecord.make(table_id, seq, ev, prev, T0)
        out.append(rec)
        prev = rec.hash
    return out


def sample_records() -> list[ChainRecord]:
    return chain(
        [
            SETUP,
            {"type": "shuffle", "decks": 6, "cut_card": 200},
            {"type": "bet", "box": 1, "player": "ann", "amount": "10"},
            {"type": "no_more_bets"},
            {"type": "card", "card": "AS"},
        ]
    )


def test_schema_is_created_by_the_migrations_and_reopening_keeps_the_data(store_url: str) -> None:
    with Store.open(store_url) as store:
        assert current_revision(store.engine) == head_revision()
        records = sample_records()
        store.append(records[:1], table_row_for(SETUP, T0))
        store.append(records[1:])
    with Store.open(store_url) as store:
        assert store.records("T9") == records
        assert store.head("T9") == (4, records[-1].hash)
        assert store.table_ids() == ["T9"]
        row = store.table_row("T9")
        assert row is not None and row["game"] == "pontoon-nz-2000"


@pytest.mark.parametrize(
    "statement",
    [
        'UPDATE events SET body = \'{"type":"no_more_bets"}\' WHERE seq = 2',
        "DELETE FROM events WHERE seq = 4",
        "UPDATE settlements SET net = '1000'",
        "DELETE FROM flags",
        "UPDATE tables SET game = 'blackjack'",
    ],
)
def test_the_database_refuses_to_change_or_delete_stored_rows(
    store_url: str, statement: str
) -> None:
    with Store.open(store_url) as store:
        records = sample_records()
        store.append(records[:1], table_row_for(SETUP, T0))
        store.append(
            records[1:],
            derived=Derived(
                flags=[
                    {
                        "table_id": "T9",
                        "seq": 5,
                        "idx": 0,
                        "round": 1,
                        "rule": "16.1",
                        "box": None,
                        "message": "m",
                    }
                ],
                settlements=[
                    {
                        "table_id": "T9",
                        "round": 1,
                        "idx": 0,
                        "seq": 5,
                        "player": "ann",
                        "box": 1,
                        "hand": 0,
                        "kind": "hand",
                        "staked": "10",
                        "returned": "0",
                        "net": "-10",
                    }
                ],
            ),
        )
        with pytest.raises(DBAPIError, match="append-only"), store.engine.begin() as conn:
            conn.execute(sa.text(statement))
        assert store.records("T9") == records
        assert store.derived("T9").settlements[0]["net"] == "-10"
        assert len(store.derived("T9").flags) == 1


def test_a_sequence_number_cannot_be_stored_twice(store_url: str) -> None:
    with Store.open(store_url) as store:
        records = sample_records()
        store.append(records[:1], table_row_for(SETUP, T0))
        store.append(records[1:3])
        other = ChainRecord.make("T9", 2, {"type": "no_more_bets"}, records[1].hash, T0)
        with pytest.raises(IntegrityError):
            store.append([other])
        assert store.records("T9") == records[:3]


def test_a_failed_batch_stores_none_of_its_events(store_url: str) -> None:
    with Store.open(store_url) as store:
        records = sample_records()
        store.append(records[:2], table_row_for(SETUP, T0))
        with pytest.raises(IntegrityError):
            store.append([records[2], records[3], records[1]])
        assert store.head("T9") == (1, records[1].hash)


def test_tables_keep_separate_sequences(store_url: str) -> None:
    with Store.open(store_url) as store:
        a = sample_records()
        b = chain(
            [{**SETUP, "table_id": "T3"}, {"type": "shuffle", "decks": 6, "cut_card": None}],
            table_id="T3",
        )
        store.append(a[:1], table_row_for(SETUP, T0))
        store.append(b[:1], table_row_for({**SETUP, "table_id": "T3"}, T0))
        store.append(a[1:])
        store.append(b[1:])
        assert store.table_ids() == ["T3", "T9"]
        assert [r.seq for r in store.records("T3")] == [0, 1]
        assert store.records("T9", after=2) == a[3:]


def test_an_event_and_its_derived_rows_commit_together_or_not_at_all(store_url: str) -> None:
    # A derived row that cannot be stored takes its event with it: the store never holds an
    # event without the rows that follow from it.
    with Store.open(store_url) as store:
        records = sample_records()
        shoe = {
            "table_id": "T9",
            "seq": 1,
            "kind": "shuffle",
            "decks": 6,
            "cut_card": 200,
            "deck_serials": None,
        }
        store.append(records[:1], table_row_for(SETUP, T0))
        store.append(records[1:2], derived=Derived(shoes=[shoe]))
        with pytest.raises(IntegrityError):
            store.append(records[2:3], derived=Derived(shoes=[shoe]))  # the same key again
        assert store.head("T9") == (1, records[1].hash)
        assert store.derived("T9").shoes == [shoe]
        writer = store.writer()
        try:  # the writer's held connection is still good after the refusal
            writer.commit([(records[2], Derived())])
        finally:
            writer.close()
        assert store.head("T9") == (2, records[2].hash)


def test_a_bad_url_is_refused_with_its_name(tmp_path: Any) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        Store.open(f"sqlite:///{tmp_path}/no/such/dir/x.db")
    with pytest.raises(StoreError, match="mysql"):
        Store.open("mysql://localhost/x")


def test_the_migrations_build_exactly_the_sqlmodel_schema(store_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from sqlmodel import SQLModel

    with Store.open(store_url) as store, store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, SQLModel.metadata) == []


def test_a_store_that_is_not_there_is_not_created_for_reading(store_url: str) -> None:
    with pytest.raises(StoreError, match=r"no such store|holds no audit store"):
        Store.open(store_url, create=False)
