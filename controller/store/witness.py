"""The floor as witness of each table's signed log.

``ship`` copies a table's signed heads to the floor with its events. The floor database keeps
a registry of each table's public key (``table_keys``: registered once, by a named supervisor,
with ``floorctl floor register-key``; insert-only, and the writer role may only read it). Once
a table's key is registered, ``ship`` refuses a source whose heads are not signed by it, and
copies only events under a signed head; a floor prepared with ``floorctl floor init`` also
refuses, in the database, a head naming another key and events of a table with no key.

What the floor holds is *witnessed*: :func:`check_witness` fails when the table's log lacks
any of it or differs from it (``floorctl verify --db TABLE --key table.pub --witness FLOOR``).
An attacker with root on the table PC holds its key and can rewrite and re-sign the table's
own log, but not the floor's copy: what they can remove unseen is what was not yet shipped.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from controller.store.chain import Problem
from controller.store.db import StoreError
from controller.store.heads import (
    Head,
    check_heads,
    frontier_of,
    iter_hashes,
    last_head,
    load_heads,
)
from controller.store.keys import PublicKey, public_key_from_pem
from controller.store.merkle import Frontier
from controller.store.repository import Store
from controller.store.roles import inbox_of
from controller.store.schema import HEADS, TABLE_KEYS


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def registered_key(store: Store, table_id: str) -> PublicKey | None:
    """The public key the floor's registry holds for a table, or None."""
    with store.connection() as conn:
        row = conn.execute(
            sa.select(TABLE_KEYS.c.public_key, TABLE_KEYS.c.key_id).where(
                TABLE_KEYS.c.table_id == table_id
            )
        ).first()
    if row is None:
        return None
    key = public_key_from_pem(str(row[0]), f"{store.name}: table_keys[{table_id}]")
    if key.key_id != row[1]:
        raise StoreError(f"{store.name}: the registered key of table {table_id} is corrupt")
    return key


def register_key(store: Store, table_id: str, key: PublicKey, by: str) -> None:
    """Register a table's public key on the floor, once; raises StoreError if it already is."""
    if not by.strip():
        raise StoreError("a table's key is registered by a named supervisor (--by NAME)")
    row = {
        "table_id": table_id,
        "key_id": key.key_id,
        "public_key": key.pem(),
        "registered_by": by,
        "registered_at": _now(),
    }
    try:
        with store.engine.begin() as conn:
            conn.execute(sa.insert(TABLE_KEYS), [row])
            # A floor prepared with `floor init` keeps a copy in the tables' inbox, where the
            # tables' own roles read it (ship checks a log with it before sending).
            inbox = inbox_of(conn) if store.dialect == "postgresql" else None
            if inbox is not None:
                conn.execute(sa.insert(TABLE_KEYS.to_metadata(sa.MetaData(), schema=inbox)), [row])
    except IntegrityError:
        held = registered_key(store, table_id)
        same = held is not None and held.key_id == key.key_id
        raise StoreError(
            f"{store.name}: table {table_id} already has a registered key"
            + (" (this one)" if same else f" ({held.key_id[:16]}…)" if held else "")
            + ": a table's key is registered once"
        ) from None


def ship_limit(
    src: Store, dst: Store, table_id: str, *, floor_seq: int | None = None
) -> tuple[int, str] | None:
    """With a key registered on the floor: check the source's heads with it (ShipRefused-worthy
    problems raise StoreError) and return the last signed (seq, hash) to ship up to. None when
    the floor has no key for the table (its events are shipped unchecked).

    When the floor holds the table up to event ``floor_seq`` (the source's event there has
    the floor's hash: ``ship`` checks it) and a signed head with a frontier that gives its
    root, only the heads after that one are checked (:func:`witnessed_start`): each signed
    by the key and its tree the floor's last head's extended by the events it adds (the
    floor's own up to ``floor_seq``, the source's after). Otherwise the whole log is.
    """
    key = registered_key(dst, table_id)
    if key is None:
        return None
    start = None if floor_seq is None else witnessed_start(src, dst, table_id, key, floor_seq)
    if start is None:
        heads = load_heads(src, table_id)
        hashes = iter_hashes(src, table_id)
    else:
        base = start[0]
        heads = load_heads(src, table_id, after=base.seq)
        # Events the floor holds are taken from the floor: the new heads must cover its copy.
        assert floor_seq is not None  # witnessed_start needs it
        hashes = itertools.chain(
            iter_hashes(dst, table_id, after=base.size - 1, upto=floor_seq),
            iter_hashes(src, table_id, after=floor_seq),
        )
    problem = check_heads(table_id, heads, hashes, key, tail_ok=True, start=start)
    if problem is not None:
        raise SignatureRefused(
            f"the floor's registered key for table {table_id} does not check its log: {problem}",
            problem,
        )
    last = heads[-1] if heads else start[0] if start is not None else None
    assert last is not None  # check_heads refuses a log with no head at all
    return last.size - 1, last.chain_head


def witnessed_start(
    src: Store, dst: Store, table_id: str, key: PublicKey, floor_seq: int
) -> tuple[Head, Frontier] | None:
    """The floor's last witnessed head of a table and its tree's frontier, to check the
    source's later heads from (None: there is none usable, check the whole log). Raises
    SignatureRefused when the source does not hold that head as the floor does."""
    head = last_head(dst, table_id)
    if head is None or head.size - 1 > floor_seq or not head.signed_by(key):
        return None
    frontier = frontier_of(head)
    if frontier is None:
        return None
    ours = load_heads(src, table_id, after=head.seq - 1)
    if not ours or ours[0].seq != head.seq or ours[0].public() != head.public():
        problem = Problem(
            table_id,
            head.size - 1,
            "head",
            f"signed head {head.seq} (events 0 to {head.size - 1}), which the floor witnessed, "
            + ("is missing from" if not ours or ours[0].seq != head.seq else "is not the one in")
            + " the table's log: the copies have parted",
        )
        raise SignatureRefused(
            f"the floor's registered key for table {table_id} does not check its log: {problem}",
            problem,
        )
    return head, frontier


class SignatureRefused(StoreError):
    def __init__(self, message: str, problem: Problem) -> None:
        super().__init__(message)
        self.problem = problem


def copy_heads(src: Store, dst: Store, table_id: str, upto: int) -> int:
    """Copy the source's heads over events the floor holds (up to ``upto``); raises StoreError
    when the last head the floor holds is not the source's (the heads before it were compared
    when they were shipped). Returns how many were copied."""
    theirs = last_head(dst, table_id)
    mine = load_heads(src, table_id, after=-1 if theirs is None else theirs.seq - 1)
    if theirs is not None:
        ours = mine[0] if mine and mine[0].seq == theirs.seq else None
        if ours is None or ours.public() != theirs.public():
            raise StoreError(
                f"{dst.name} holds signed head {theirs.seq} of table {table_id}, which "
                f"{src.name} "
                + ("lacks" if ours is None else "holds otherwise")
                + ": the copies have parted"
            )
    start = theirs.seq if theirs is not None else -1
    new = [h.to_row() for h in mine if h.seq > start and h.size - 1 <= upto]
    if new:
        with dst.engine.begin() as conn:
            conn.execute(dst.insert_ignore_statement(HEADS), new)
    return len(new)


def _first_difference(table: Store, floor: Store, table_id: str) -> tuple[int, str] | None:
    """The first event the floor holds that the table lacks or holds otherwise."""
    mine = iter_hashes(table, table_id)
    for seq, digest in iter_hashes(floor, table_id):
        ours = next(mine, None)
        while ours is not None and ours[0] < seq:
            ours = next(mine, None)
        if ours is None or ours[0] != seq:
            return seq, "deleted"
        if ours[1] != digest:
            return seq, "edited"
    return None


def check_witness(table: Store, floor: Store, table_id: str, key: PublicKey) -> Problem | None:
    """Whether the table's log holds everything the floor witnessed of it, as witnessed."""
    held = registered_key(floor, table_id)
    if held is not None and held.key_id != key.key_id:
        return Problem(
            table_id,
            0,
            "witness",
            f"the floor registered key {held.key_id[:16]}… for this table, not {key.key_id[:16]}…",
        )
    witnessed = load_heads(floor, table_id)
    if not witnessed and floor.head(table_id) is None:
        return Problem(
            table_id, 0, "witness", f"the floor {floor.name} holds nothing of this table"
        )
    for head in witnessed:
        if not head.signed_by(key):
            return Problem(
                table_id,
                0,
                "witness",
                f"the floor's copy of head {head.seq} is not signed by key {key.key_id[:16]}…",
            )
    differs = _first_difference(table, floor, table_id)
    if differs is not None:
        seq, kind = differs
        under = next((h for h in witnessed if h.size > seq), None)
        signed = f", under signed head {under.seq}" if under is not None else ""
        what = (
            "is missing from the table's log"
            if kind == "deleted"
            else "differs in the table's log from the copy"
        )
        return Problem(
            table_id,
            seq,
            kind,
            f"event {seq}, which the floor witnessed{signed}, {what}"
            + (" the floor holds" if kind == "edited" else ""),
        )
    mine = {h.seq: h for h in load_heads(table, table_id)}
    for head in witnessed:
        ours: Head | None = mine.get(head.seq)
        if ours is None or ours.public() != head.public():
            return Problem(
                table_id,
                head.size - 1,
                "head",
                f"signed head {head.seq}, which the floor witnessed, is "
                + ("missing from" if ours is None else "not the one in")
                + " the table's log",
            )
    return None
