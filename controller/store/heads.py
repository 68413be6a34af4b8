"""Signed heads: the table's signature over its Merkle log, appended as the log grows.

A *head* says: table T's log, up to event ``size - 1``, has Merkle root R (see
:mod:`controller.store.merkle`) and chain head C (the record hash of event ``size - 1``), at
time ``signed_at``; it is head number ``seq`` of the table, and ``prev`` is the SHA-256 of head
``seq - 1``'s statement (:data:`~controller.store.canonical.GENESIS` for head 0). The
*statement* is the canonical JSON of those fields (with ``format`` and the signing key's id)
and the signature is Ed25519 over its UTF-8 bytes. The ``frontier`` column (the tree's compact
range) is not signed: it lets a restarted table go on from its last head, and is checked
against that head's root first.

The recorder appends a head at the end of every round, whenever an unsigned event has waited
``HEAD_EVERY`` seconds, after a spool is written back, and at close (:class:`HeadLog`).
:func:`check_signed` checks a store's heads with a public key from outside it, and
:func:`check_guards` that the insert-only triggers are all still there and in force.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import sqlalchemy as sa
import structlog

from controller.store.canonical import GENESIS, canonical_json
from controller.store.chain import Problem
from controller.store.db import NotThisTable, StoreError
from controller.store.keys import PublicKey, SigningKey
from controller.store.merkle import Frontier, leaf_hash
from controller.store.repository import Store
from controller.store.schema import HEADS, MERKLE_NODES

log = structlog.get_logger("floorctl.store")

FORMAT = "floorctl-head/1"
HEAD_EVERY = 60.0  # seconds an event may wait for a head while events flow
HEAD_EVENTS = 100  # events that may wait for a head (verify --unsigned-tail-ok allows 200)


@dataclass(frozen=True)
class Head:
    table_id: str
    seq: int
    size: int
    root: str
    chain_head: str
    signed_at: str
    prev: str
    key_id: str
    signature: str
    frontier: str = "[]"
    closes: int | None = None  # the round whose settling (or void) event is event size - 1

    def statement(self) -> bytes:
        """The bytes the signature is over (``closes`` among them when the head marks a
        round's end; a head that marks none is signed as before the field existed)."""
        fields: dict[str, Any] = {
            "format": FORMAT,
            "table": self.table_id,
            "seq": self.seq,
            "size": self.size,
            "root": self.root,
            "chain_head": self.chain_head,
            "signed_at": self.signed_at,
            "prev": self.prev,
            "key": self.key_id,
        }
        if self.closes is not None:
            fields["closes"] = self.closes
        return canonical_json(fields).encode("utf-8")

    def digest(self) -> str:
        return hashlib.sha256(self.statement()).hexdigest()

    def signed_by(self, key: PublicKey) -> bool:
        return self.key_id == key.key_id and key.verify(self.signature, self.statement())

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    def public(self) -> dict[str, Any]:
        """The head as a proof or an export carries it (without the frontier)."""
        doc = asdict(self)
        del doc["frontier"]
        return doc

    @classmethod
    def from_row(cls, row: Any) -> Head:
        """From a ``heads`` row or a head as a proof carries it (a mapping)."""
        m = row if isinstance(row, dict) else row._mapping
        return cls(
            str(m["table_id"]),
            int(m["seq"]),
            int(m["size"]),
            str(m["root"]),
            str(m["chain_head"]),
            str(m["signed_at"]),
            str(m["prev"]),
            str(m["key_id"]),
            str(m["signature"]),
            str(m["frontier"]) if "frontier" in m else "[]",
            None if m.get("closes") is None else int(m["closes"]),
        )


def make_head(
    key: SigningKey,
    table_id: str,
    seq: int,
    frontier: Frontier,
    chain_head: str,
    signed_at: str,
    prev: str,
    closes: int | None = None,
) -> Head:
    unsigned = Head(
        table_id,
        seq,
        frontier.size,
        frontier.root().hex(),
        chain_head,
        signed_at,
        prev,
        key.key_id,
        "",
        json.dumps(frontier.to_hex()),
        closes,
    )
    return Head(**{**unsigned.to_row(), "signature": key.sign(unsigned.statement())})


def load_heads(store: Store, table_id: str, *, after: int = -1) -> list[Head]:
    with store.connection() as conn:
        rows = conn.execute(
            sa.select(HEADS)
            .where(HEADS.c.table_id == table_id, HEADS.c.seq > after)
            .order_by(HEADS.c.seq)
        ).all()
    return [Head.from_row(r) for r in rows]


def last_head(store: Store, table_id: str) -> Head | None:
    with store.connection() as conn:
        row = conn.execute(
            sa.select(HEADS)
            .where(HEADS.c.table_id == table_id)
            .order_by(HEADS.c.seq.desc())
            .limit(1)
        ).first()
    return None if row is None else Head.from_row(row)


def iter_hashes(
    store: Store, table_id: str, *, after: int = -1, upto: int | None = None, batch: int = 50000
) -> Iterator[tuple[int, str]]:
    """(seq, record hash) of a table's events in order, straight from the driver."""
    for rows in store.event_pages(table_id, ("seq", "hash"), after=after, upto=upto, batch=batch):
        for seq, digest in rows:
            yield int(seq), str(digest)


def frontier_of(head: Head) -> Frontier | None:
    """The head's stored frontier, if it gives the head's root."""
    try:
        frontier = Frontier.from_hex(head.size, json.loads(head.frontier))
    except (ValueError, TypeError):
        return None
    return frontier if frontier.root().hex() == head.root else None


class HeadLog:
    """The heads one recorder signs for its table (not thread-safe: the recorder's lock)."""

    def __init__(
        self,
        store: Store,
        table_id: str,
        key: SigningKey,
        *,
        clock: Callable[[], str],
        every: float = HEAD_EVERY,
    ) -> None:
        self.store = store
        self.table_id = table_id
        self.key = key
        self.clock = clock
        self.every = every
        self.last: Head | None = last_head(store, table_id)
        self.frontier = self._frontier()
        self._keep_nodes()
        self.unsigned_since: float | None = None  # monotonic time of the first unsigned event
        self.failures = 0
        self._noted: list[tuple[int, str]] = []  # (seq, hash) committed since the last head
        self._conn: sa.Connection | None = None  # held, as the recorder's writer holds its own

    def _frontier(self) -> Frontier:
        head = self.last
        if head is None:
            return Frontier()
        if head.key_id != self.key.key_id:
            raise NotThisTable(
                f"table {self.table_id}'s log is signed by key {head.key_id[:16]}…, not by "
                f"the configured signing key {self.key.key_id[:16]}… ({self.key.source}): "
                "the store or the key belongs to another table"
            )
        frontier = frontier_of(head)
        if frontier is None:  # rebuilt from the events; it must give the signed root
            frontier = Frontier()
            frontier.extend(
                leaf_hash(h) for _s, h in iter_hashes(self.store, self.table_id, upto=head.size - 1)
            )
            if frontier.size != head.size or frontier.root().hex() != head.root:
                raise StoreError(
                    f"{self.store.name}: table {self.table_id}: the stored events do not give "
                    f"the root of signed head {head.seq}"
                )
        return frontier

    def _keep_nodes(self) -> None:
        """The subtree roots of the signed log that the store does not keep yet (a store
        made before they were kept): from then on each head adds its own."""
        from controller.store.tree import ensure_nodes

        if self.frontier.size:
            added = ensure_nodes(self.store, self.table_id, self.frontier.size)
            if added:
                log.info("merkle subtree roots kept", table=self.table_id, added=added)

    @property
    def signed_size(self) -> int:
        return self.frontier.size

    def note(self, seq: int, digest: str) -> None:
        """Event ``seq`` was committed with hash ``digest`` (and is not yet under a head)."""
        if self.unsigned_since is None:
            self.unsigned_since = time.monotonic()
        self._noted.append((seq, digest))

    def _new_hashes(self, seq: int) -> list[tuple[int, str]]:
        """The hashes of events ``frontier.size`` to ``seq``: as the recorder noted them when
        they run on without a gap, else read back from the store."""
        first = self.frontier.size
        noted = [item for item in self._noted if first <= item[0] <= seq]
        if noted and noted[0][0] == first and noted[-1][0] == seq and len(noted) == seq - first + 1:
            return noted
        return list(iter_hashes(self.store, self.table_id, after=first - 1, upto=seq))

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a broken connection: nothing to keep
                conn.close()

    def due(self) -> bool:
        """Whether a head is owed: an event has waited ``every`` seconds, or
        :data:`HEAD_EVENTS` wait (a table recording faster than play, as a write-back does)."""
        since = self.unsigned_since
        if since is None:
            return False
        return len(self._noted) >= HEAD_EVENTS or time.monotonic() - since >= self.every

    def sign(self, seq: int, digest: str, closes: int | None = None) -> Head | None:
        """Append a head over the stored log up to event ``seq`` (whose hash the recorder
        holds as ``digest``); None if there is nothing new or the database refused it.
        ``closes``: the round event ``seq`` settled or voided (the head marks its end)."""
        if seq + 1 <= self.frontier.size:
            self.unsigned_since = None
            return None
        frontier = self.frontier.copy()
        made: list[tuple[int, int, bytes]] = []  # the subtree roots this head completes
        try:
            last = ""
            for s, h in self._new_hashes(seq):
                if s != frontier.size:
                    raise StoreError(f"event {frontier.size} is missing from the store")
                frontier.append(leaf_hash(h), made)
                last = h
            if frontier.size != seq + 1 or last != digest:
                raise StoreError(
                    f"the stored log up to event {seq} is not the one this recorder wrote"
                )
            head = make_head(
                self.key,
                self.table_id,
                0 if self.last is None else self.last.seq + 1,
                frontier,
                digest,
                self.clock(),
                GENESIS if self.last is None else self.last.digest(),
                closes,
            )
            if self._conn is None:
                self._conn = self.store.engine.connect()
            with self._conn.begin():
                self._conn.execute(sa.insert(HEADS), [head.to_row()])
                if made:
                    self._conn.execute(
                        self.store.insert_ignore_statement(MERKLE_NODES),
                        [
                            {"table_id": self.table_id, "level": lv, "idx": i, "hash": h.hex()}
                            for lv, i, h in made
                        ],
                    )
        except Exception as exc:
            self.failures += 1
            self.close()  # a fresh connection next time
            if self.unsigned_since is None:  # the timer tries again in `every` seconds
                self.unsigned_since = time.monotonic()
            log.error(
                "could not append a signed head",
                table=self.table_id,
                upto=seq,
                error=str(getattr(exc, "orig", None) or exc).splitlines()[0],
            )
            return None
        self.frontier, self.last, self.unsigned_since = frontier, head, None
        self._noted.clear()
        return head


# ----- checking, with a key from outside the store ------------------------------------------


def check_heads(
    table_id: str,
    heads: list[Head],
    hashes: Iterator[tuple[int, str]],
    key: PublicKey,
    *,
    tail_ok: bool = False,
    start: tuple[Head, Frontier] | None = None,
) -> Problem | None:
    """Check a table's heads against its (already verified) chain of record hashes.

    Each head must be signed by ``key``, follow the one before it, and have as root and chain
    head those of the log's first ``size`` events; every event must lie under a head (unless
    ``tail_ok``: the events after the last head, not signed yet, of a table still playing).

    ``start``: a head already trusted (as the floor's last witnessed one) and the frontier of
    its tree (checked against its root by the caller: :func:`frontier_of`). Then ``heads``
    are those after it, ``hashes`` start at event ``start[0].size``, and each head's tree is
    that frontier extended: it extends the trusted head's tree, leaf for leaf.
    """
    prev: Head | None = None
    frontier = Frontier()
    last_hash = GENESIS
    if start is not None:
        prev, frontier = start[0], start[1].copy()
        last_hash = prev.chain_head
    elif not heads:
        return Problem(
            table_id,
            0,
            "unsigned",
            f"the log has no signed head: it is not signed by key {key.key_id[:16]}…",
        )
    count = frontier.size
    source = iter(hashes)
    for head in heads:
        first = 0 if prev is None else prev.size  # the first event this head adds
        if head.seq != (0 if prev is None else prev.seq + 1):
            want = 0 if prev is None else prev.seq + 1
            return Problem(
                table_id, first, "head", f"signed head {want} is missing (the next is {head.seq})"
            )
        if not head.signed_by(key):
            whose = "" if head.key_id == key.key_id else f" (it names key {head.key_id[:16]}…)"
            return Problem(
                table_id,
                first,
                "signature",
                f"head {head.seq} (events 0 to {head.size - 1}) is not signed by key "
                f"{key.key_id[:16]}…{whose}",
            )
        if head.prev != (GENESIS if prev is None else prev.digest()):
            return Problem(
                table_id, first, "head", f"head {head.seq} does not follow head {head.seq - 1}"
            )
        if prev is not None and head.size < prev.size:
            return Problem(
                table_id,
                head.size,
                "head",
                f"head {head.seq} ({head.size} events) does not extend head {prev.seq} "
                f"({prev.size} events)",
            )
        while frontier.size < head.size:
            item = next(source, None)
            if item is None:
                return Problem(
                    table_id,
                    count,
                    "deleted",
                    f"signed head {head.seq} covers events 0 to {head.size - 1} but the log "
                    f"ends at event {count - 1}: events {count} to {head.size - 1} were deleted",
                )
            frontier.append(leaf_hash(item[1]))
            last_hash = item[1]
            count += 1
        if frontier.root().hex() != head.root or last_hash != head.chain_head:
            later = "" if prev is None else f" (head {prev.seq} still matches)"
            return Problem(
                table_id,
                first,
                "rewritten",
                f"head {head.seq} was signed over another log: events {first} to "
                f"{head.size - 1} are not those it signed{later}",
            )
        prev = head
    extra = sum(1 for _ in source)
    if extra and not tail_ok and prev is not None:
        top = count + extra - 1
        return Problem(
            table_id,
            count,
            "unsigned",
            f"events {count} to {top} are under no signed head (the last, head {prev.seq}, "
            f"ends at event {count - 1})",
        )
    return None


def check_signed(
    store: Store, table_id: str, key: PublicKey, *, tail_ok: bool = False
) -> Problem | None:
    """A stored table's heads against its stored log (whose chain verify has checked)."""
    return check_heads(
        table_id, load_heads(store, table_id), iter_hashes(store, table_id), key, tail_ok=tail_ok
    )


# The insert-only guards every store must still have (migrations 0001 and 0003_signed).
GUARDED = (
    "tables",
    "shoes",
    "rounds",
    "events",
    "flags",
    "settlements",
    "checkpoints",
    "heads",
    "table_keys",
)


def check_guards(store: Store) -> str | None:
    """Why the store's insert-only triggers are not all in force, or None."""
    with store.connection() as conn:
        if store.dialect == "sqlite":
            found = {
                (str(t), str(n)): str(sql or "")
                for n, t, sql in conn.exec_driver_sql(
                    "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"
                )
            }
            for table in GUARDED:
                for verb in ("update", "delete"):
                    sql = found.get((table, f"{table}_no_{verb}"))
                    if sql is None:
                        return f"the trigger refusing {verb.upper()} on {table} is gone"
                    if "RAISE(ABORT" not in sql.upper().replace(" ", ""):
                        return f"the trigger refusing {verb.upper()} on {table} no longer refuses"
            return None
        body = conn.exec_driver_sql(
            "SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('floorctl_insert_only()')"
        ).scalar()
        if body is None or "RAISE EXCEPTION" not in str(body).upper():
            return "the function floorctl_insert_only() is gone or no longer refuses"
        for table in GUARDED:
            rows = {
                str(name): str(enabled)
                for name, enabled in conn.exec_driver_sql(
                    "SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = to_regclass(%(t)s) "
                    "AND tgfoid = to_regprocedure('floorctl_insert_only()')",
                    {"t": table},
                )
            }
            for name in (f"{table}_no_change", f"{table}_no_truncate"):
                if name not in rows:
                    return f"the trigger {name} on {table} is gone"
                if rows[name] not in ("O", "A"):
                    return f"the trigger {name} on {table} is disabled"
    return None
