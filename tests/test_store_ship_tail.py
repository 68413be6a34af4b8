"""`floorctl ship` checks only what it has not shipped yet: from the newest checkpoint the
floor's copy names, the source's chain, checkpoints and derived rows to its head, and the signed
heads after the floor's last witnessed one. Tampering there is refused as the whole check
refuses it; what it reads is the tail and at most one checkpoint interval; with no usable
checkpoint (or an empty floor) it checks the whole table. Sources on SQLite and PostgreSQL,
the floor on PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
import test_store_signed
from intruder import unguard
from test_store_checkpoint import game

from controller.store import checkpoint, witness
from controller.store.canonical import GENESIS
from controller.store.heads import Head, check_signed, frontier_of, last_head, load_heads, make_head
from controller.store.keys import SigningKey
from controller.store.merkle import Frontier, leaf_hash
from controller.store.recorder import Recorder
from controller.store.repository import Store
from controller.store.schema import HEADS
from controller.store.ship import ShipRefused, ship
from controller.store.signed import verify_signed
from controller.store.verify import verify_table
from controller.store.witness import register_key

pytestmark = pytest.mark.usefixtures("store_spool_dir")
floor_url = test_store_signed.floor_url  # the fixture: a PostgreSQL schema of its own, the floor

EVERY = 40  # events between checkpoints here
SHIPPED = 600  # events in the history shipped first
TAIL_AFTER = 150  # events recorded after it (more than EVERY: the tail holds checkpoints)
OVERHEAD = 8  # records read besides the tail and the checkpoint interval (the table line,
# the floor's last event, the checkpoint's two events, ...)
Events = list[tuple[dict[str, Any], str]]


@pytest.fixture(scope="module")
def events() -> Events:
    log = game(7, 12)
    assert len(log) > SHIPPED + TAIL_AFTER
    return log[: SHIPPED + TAIL_AFTER]


@pytest.fixture
def key() -> SigningKey:
    return SigningKey.generate()


def record(url: str, log: Events, key: SigningKey | None, every: int = EVERY) -> None:
    """Record ``log`` (the table line first when the store is empty) through the recorder."""
    with Store.open(url) as store:
        empty = store.head("T1") is None
        rec = Recorder.open(
            store,
            log[0][0] if empty else None,
            table_id=None if empty else "T1",
            spool=None,
            retry_every=None,
            checkpoint_every=every,
            signing_key=key,
            head_every=3600,
        )
        try:
            for event, at in log[1:] if empty else log:
                rec.record(event, recorded_at=at)
        finally:
            rec.close()  # signs the rest


@dataclass
class Reads:
    """The source's stored events a ship reads: as records, as chain rows, as hashes."""

    src: Store
    records: int = 0
    rows: int = 0
    hashes: int = 0
    log: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.records + self.rows + self.hashes


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Callable[[Store], Reads]:
    """``reads(src)``: counters of what is read from ``src`` from now on."""

    def install(src: Store) -> Reads:
        counts = Reads(src)
        # Counted on the class: a ship reads its source through a snapshot of it (another
        # Store object on the same database).
        iter_records, chain_rows = Store.iter_records, Store.chain_rows
        iter_hashes = witness.iter_hashes

        def counted_records(self: Store, *args: Any, **kwargs: Any) -> Iterator[Any]:
            for r in iter_records(self, *args, **kwargs):
                if self.url == src.url:
                    counts.records += 1
                yield r

        def counted_rows(self: Store, *args: Any, **kwargs: Any) -> Iterator[Any]:
            for rows in chain_rows(self, *args, **kwargs):
                if self.url == src.url:
                    counts.rows += len(rows)
                yield rows

        def counted_hashes(store: Store, *args: Any, **kwargs: Any) -> Iterator[Any]:
            for item in iter_hashes(store, *args, **kwargs):
                if store.url == src.url:
                    counts.hashes += 1
                yield item

        monkeypatch.setattr(Store, "iter_records", counted_records)
        monkeypatch.setattr(Store, "chain_rows", counted_rows)
        monkeypatch.setattr(witness, "iter_hashes", counted_hashes)
        return counts

    return install


def shipped_history(url: str, floor: str, log: Events, key: SigningKey | None) -> int:
    """Record the first SHIPPED events, register the key (if any) and ship them; the rest of
    ``log`` recorded after. Returns the floor's last event."""
    record(url, log[:SHIPPED], key)
    with Store.open(floor) as dst:
        if key is not None:
            register_key(dst, "T1", key.public, "sup-anna")
        with Store.open(url) as src:
            ship(src, dst)
        head = dst.head("T1")
    assert head is not None and head[0] == SHIPPED - 1
    record(url, log[SHIPPED:], key)
    return head[0]


# ----- what a ship reads ------------------------------------------------------------------


def test_a_ship_reads_the_tail_and_one_checkpoint_interval_not_the_history(
    store_url: str, floor_url: str, events: Events, key: SigningKey, reads: Any
) -> None:
    record(store_url, events[:SHIPPED], key)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        register_key(dst, "T1", key.public, "sup-anna")
        first = reads(src)
        ship(src, dst)  # the first ship checks the whole table
        assert first.rows >= SHIPPED and first.hashes >= SHIPPED
    record(store_url, events[SHIPPED:], key)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        tail = reads(src)
        report = ship(src, dst)
        assert report.copied == {"T1": TAIL_AFTER} and report.signed["T1"] > 0
        # The tail is read three times (chain, hashes, the copy), one interval before it once.
        assert tail.records <= TAIL_AFTER + OVERHEAD, tail
        assert tail.rows <= TAIL_AFTER + EVERY + OVERHEAD, tail
        assert tail.hashes <= TAIL_AFTER, tail
        idle = reads(src)
        assert ship(src, dst).copied == {"T1": 0}  # nothing new: one interval at most
        assert idle.total <= EVERY + OVERHEAD, idle
        assert dst.head("T1") == src.head("T1")
        assert verify_signed(src, ["T1"], key.public, witness=dst) is None
        _table, problem = verify_table(dst, "T1")
        assert problem is None


def test_with_no_usable_checkpoint_ship_checks_the_whole_table(
    store_url: str, floor_url: str, events: Events, key: SigningKey, reads: Any
) -> None:
    # No checkpoint at all (every far beyond the log, and fewer than MIN_GAP events), then a
    # store whose only checkpoints before the floor's head are damaged.
    short = events[: checkpoint.MIN_GAP - 10]
    record(store_url, short[:100], key, every=10**6)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        register_key(dst, "T1", key.public, "sup-anna")
        ship(src, dst)
    record(store_url, short[100:], key, every=10**6)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        assert checkpoint.stored(src, "T1") == []
        counts = reads(src)
        assert ship(src, dst).copied == {"T1": len(short) - 100}
        assert counts.rows >= len(short), counts  # the chain from the table line


@pytest.mark.parametrize("keep", ["the oldest", "none"])
def test_damaged_checkpoints_under_the_floor_head_are_passed_over_and_then_refused(
    store_sqlite_url: str, floor_url: str, events: Events, key: SigningKey, reads: Any, keep: str
) -> None:
    floor_seq = shipped_history(store_sqlite_url, floor_url, events, key)
    with Store.open(store_sqlite_url) as src, Store.open(floor_url) as dst:
        under = [s for s, _d in checkpoint.stored(src, "T1") if s + 1 <= floor_seq]
        assert len(under) >= 3
        damaged = under[1:] if keep == "the oldest" else under
        with src.engine.begin() as conn:
            for verb in ("update", "delete"):
                conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS checkpoints_no_{verb}")
            for seq in damaged:
                conn.execute(
                    sa.text("UPDATE checkpoints SET state = state || ' ' WHERE seq = :s"),
                    {"s": seq},
                )
        counts = reads(src)
        # The walk from the newest checkpoint still sound, or from the table line, meets the
        # damaged ones: refused as the whole check refuses it, nothing shipped.
        _table, whole = verify_table(src, "T1")
        assert whole is not None and whole.kind == "checkpoint"
        assert whole.seq == damaged[0] + 1
        with pytest.raises(ShipRefused, match="does not verify") as refused:
            ship(src, dst)
        assert refused.value.problem == whole
        start = under[0] + 1 if keep == "the oldest" else 0
        assert counts.rows >= damaged[0] + 1 - start, counts
        assert dst.head("T1") is not None and dst.head("T1")[0] == floor_seq  # type: ignore[index]


# ----- tampering in the unshipped tail ----------------------------------------------------


guards_off = unguard  # an intruder with the owner's rights


def tail_checkpoint(store: Store, floor_seq: int) -> int:
    return next(s for s, _d in checkpoint.stored(store, "T1") if s > floor_seq)


def edit_event(store: Store, floor_seq: int) -> None:
    with store.engine.begin() as conn:
        guards_off(store, conn)
        conn.execute(
            sa.text("UPDATE events SET body = :b WHERE table_id = 'T1' AND seq = :s"),
            {"b": json.dumps({"type": "note", "text": "x"}), "s": floor_seq + 7},
        )


def delete_settlement(store: Store, floor_seq: int) -> None:
    with store.engine.begin() as conn:
        guards_off(store, conn)
        seq = conn.execute(
            sa.text("SELECT min(seq) FROM settlements WHERE seq > :s"), {"s": floor_seq}
        ).scalar_one()
        conn.execute(sa.text("DELETE FROM settlements WHERE seq = :s"), {"s": seq})


def alter_checkpoint(store: Store, floor_seq: int) -> None:
    with store.engine.begin() as conn:
        guards_off(store, conn)
        conn.execute(
            sa.text("UPDATE checkpoints SET state = state || ' ' WHERE seq = :s"),
            {"s": tail_checkpoint(store, floor_seq)},
        )


TAMPERS: dict[str, tuple[Callable[[Store, int], None], str]] = {
    "edited event": (edit_event, "edited"),
    "settlement deleted": (delete_settlement, "settlement"),
    "checkpoint altered": (alter_checkpoint, "checkpoint"),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_tampering_in_the_tail_is_refused_as_the_whole_check_refuses_it(
    store_url: str, floor_url: str, events: Events, key: SigningKey, tamper: str
) -> None:
    floor_seq = shipped_history(store_url, floor_url, events, key)
    change, kind = TAMPERS[tamper]
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        change(src, floor_seq)
        _table, whole = verify_table(src, "T1")
        assert whole is not None and whole.kind == kind
        with pytest.raises(ShipRefused, match="does not verify") as refused:
            ship(src, dst)
        got = refused.value.problem
        assert got is not None
        # The same event and kind; the same words (of two rows of one event, either is named).
        assert (got.table_id, got.seq, got.kind) == (whole.table_id, whole.seq, whole.kind)
        assert got.message.split(" for ")[0] == whole.message.split(" for ")[0]
        assert dst.head("T1") is not None and dst.head("T1")[0] == floor_seq  # type: ignore[index]


def forge_head(
    store: Store,
    signer: SigningKey,
    *,
    prev: str | None = None,
    leaves: Frontier | None = None,
) -> Head:
    """Append a head over the source's unsigned tail: signed by ``signer``, following ``prev``
    (default: the last head), its tree ``leaves`` extended (default: the last head's)."""
    last = last_head(store, "T1")
    assert last is not None
    frontier = (leaves or frontier_of(last) or Frontier()).copy()
    top = store.head("T1")
    assert top is not None and top[0] >= last.size
    for r in store.records("T1", after=frontier.size - 1):
        frontier.append(leaf_hash(r.hash))
    head = make_head(
        signer,
        "T1",
        last.seq + 1,
        frontier,
        top[1],
        datetime.now(UTC).isoformat(),
        last.digest() if prev is None else prev,
    )
    with store.engine.begin() as conn:
        conn.execute(sa.insert(HEADS), [head.to_row()])
    return head


def record_unsigned_tail(url: str, floor: str, log: Events, key: SigningKey) -> int:
    """The history signed and shipped, then the tail recorded with no key (unsigned yet)."""
    record(url, log[:SHIPPED], key)
    with Store.open(floor) as dst, Store.open(url) as src:
        register_key(dst, "T1", key.public, "sup-anna")
        ship(src, dst)
    record(url, log[SHIPPED:], None)
    return SHIPPED - 1


def test_a_tail_head_signed_by_another_key_is_refused(
    store_url: str, floor_url: str, events: Events, key: SigningKey
) -> None:
    floor_seq = record_unsigned_tail(store_url, floor_url, events, key)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        forge_head(src, SigningKey.generate())
        whole = check_signed(src, "T1", key.public)
        assert whole is not None and whole.kind == "signature"
        with pytest.raises(ShipRefused, match="is not signed by key") as refused:
            ship(src, dst)
        assert refused.value.problem == whole
        assert dst.head("T1") is not None and dst.head("T1")[0] == floor_seq  # type: ignore[index]


def rewritten_leaves(store: Store, upto: int) -> Frontier:
    """The tree of the first ``upto + 1`` events with event 3's leaf changed."""
    frontier = Frontier()
    for r in store.records("T1", upto=upto):
        frontier.append(leaf_hash(r.hash if r.seq != 3 else "00" * 32))
    return frontier


@pytest.mark.parametrize("how", ["does not follow", "another tree", "floor head replaced"])
def test_a_tail_head_that_does_not_extend_the_floors_last_head_is_refused(
    store_url: str, floor_url: str, events: Events, key: SigningKey, how: str
) -> None:
    floor_seq = record_unsigned_tail(store_url, floor_url, events, key)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        witnessed = last_head(dst, "T1")
        assert witnessed is not None and witnessed.size - 1 == floor_seq
        if how == "does not follow":
            forge_head(src, key, prev=GENESIS)
            kind, words = "head", "does not follow head"
        elif how == "another tree":
            forge_head(src, key, leaves=rewritten_leaves(src, floor_seq))
            kind, words = "rewritten", "was signed over another log"
        else:
            # Root on the table PC re-signs its last shipped head (another time), then the tail.
            with src.engine.begin() as conn:
                guards_off(src, conn)
                conn.execute(sa.text("DELETE FROM heads WHERE seq >= :s"), {"s": witnessed.seq})
            before = load_heads(src, "T1")[-1]
            frontier = frontier_of(witnessed)
            assert frontier is not None
            again = make_head(
                key,
                "T1",
                witnessed.seq,
                frontier,
                witnessed.chain_head,
                datetime.now(UTC).isoformat(),
                before.digest(),
            )
            with src.engine.begin() as conn:
                conn.execute(sa.insert(HEADS), [again.to_row()])
            forge_head(src, key)
            # The table's log alone checks (it is re-signed with its own key) ...
            assert check_signed(src, "T1", key.public, tail_ok=True) is None
            kind, words = "head", "the copies have parted"
        if how != "floor head replaced":
            whole = check_signed(src, "T1", key.public)
            assert whole is not None and whole.kind == kind
        # ... but not against the floor's last witnessed head: nothing shipped.
        with pytest.raises(ShipRefused, match=words) as refused:
            ship(src, dst)
        assert refused.value.problem is not None and refused.value.problem.kind == kind
        assert dst.head("T1") is not None and dst.head("T1")[0] == floor_seq  # type: ignore[index]
        assert len(load_heads(dst, "T1")) == witnessed.seq + 1


def test_an_honest_unsigned_tail_then_signed_ships(
    store_url: str, floor_url: str, events: Events, key: SigningKey, reads: Any
) -> None:
    record_unsigned_tail(store_url, floor_url, events, key)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        assert ship(src, dst).copied == {"T1": 0}  # nothing signed yet: nothing shipped
        forge_head(src, key)  # the table's own key signs its tail
        counts = reads(src)
        assert ship(src, dst).copied == {"T1": TAIL_AFTER}
        assert counts.hashes <= TAIL_AFTER, counts
        assert verify_signed(src, ["T1"], key.public, witness=dst) is None


def test_events_shipped_unsigned_before_the_key_was_registered_are_checked_from_the_floor(
    store_url: str, floor_url: str, events: Events, key: SigningKey, reads: Any
) -> None:
    # The floor took events beyond the last signed head while it had no key for the table;
    # once the key is registered, the next head must cover the floor's copy of them.
    record(store_url, events[:SHIPPED], key)
    with Store.open(store_url) as store:
        rec = Recorder.open(
            store,
            table_id="T1",
            spool=None,
            retry_every=None,
            checkpoint_every=EVERY,
            signing_key=key,
            head_every=3600,
        )
        try:
            for event, at in events[SHIPPED : SHIPPED + 30]:
                rec.record(event, recorded_at=at)
            with Store.open(floor_url) as dst:
                ship(store, dst)  # no key on the floor: all of it, unsigned events too
                signed = last_head(dst, "T1")
                held = dst.head("T1")
                assert signed is not None and held is not None and signed.size - 1 < held[0]
                register_key(dst, "T1", key.public, "sup-anna")
        finally:
            rec.close()  # signs the rest
    record(store_url, events[SHIPPED + 30 :], key)
    with Store.open(store_url) as src, Store.open(floor_url) as dst:
        counts = reads(src)
        report = ship(src, dst)
        assert report.copied == {"T1": TAIL_AFTER - 30} and report.unchecked == []
        assert counts.hashes <= TAIL_AFTER - 30, counts  # the floor's own hashes before
        assert verify_signed(src, ["T1"], key.public, witness=dst) is None
