"""Checkpoints: a table's state at a sequence number, bound into its hash chain, so a restart
replays only the events after the newest one instead of the table's whole life.

**What a checkpoint holds.** The fold's snapshot (:meth:`~controller.store.fold.Fold.snapshot`:
the sequence number reached and the engine's own snapshot, every round in progress included),
as canonical JSON, and its SHA-256, in a row of the ``checkpoints`` table keyed by (table, the
last event the state includes).

**How the chain covers it.** The checkpoint of the state after event *k* is written in the
same transaction as event *k + 1*, and event *k + 1* as stored names its digest:
``"checkpoint": "<sha256>"`` (a field the rules do not read, like ``note`` or ``time``). The
event's hash covers its stored form, and every later hash covers that one, so a checkpoint
cannot be altered (nor one swapped in, nor one deleted: the tables are insert-only and a
missing row is named by its event) without rewriting the chain from that event on, which is
exactly as hard as altering an event. Sequence numbers are untouched: a checkpoint is not an
event, and every reader of the log (replay, export, ship, the floor's indexer) sees the same
events numbered as before; a replay ignores the field.

A kill at any instant leaves both the event and its checkpoint or neither (one transaction),
so a store verifies exactly as the kill left it.

**When.** After a shoe point (``shoe_end``, ``shuffle``, ``reshuffle_discards``: the engine's
state is smallest there) once at least :data:`MIN_GAP` events have passed since the last
checkpoint, and in any case once ``every`` events have (a setting, :data:`DEFAULT_EVERY`).

**Restoring** (:func:`restore_latest`): the newest checkpoint whose digest matches its state,
whose naming event hashes as stored and chains to the event before it, and whose state the
engine takes back; a checkpoint that fails any of that is skipped with a warning (``verify``
reports it as tampering) and the next older one tried, down to a replay from the table line.
The events after it are then replayed with their chain checked up to the head.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
import structlog

from controller.store.canonical import ChainRecord, canonical_json
from controller.store.chain import Problem
from controller.store.fold import Fold
from controller.store.repository import Derived, Store
from controller.store.schema import CHECKPOINTS, EVENTS

log = structlog.get_logger("floorctl.store")

# The field of a stored event naming the checkpoint of the state before it.
KEY = "checkpoint"
_MARK = '"checkpoint":"'  # how it appears in an event's canonical JSON
DEFAULT_EVERY = 2000  # events between checkpoints at most
MIN_GAP = 250  # events since the last checkpoint before a shoe point takes one (a shoe
# is some 400 to 600 events at a real table)
SHOE_POINTS = frozenset({"shoe_end", "shuffle", "reshuffle_discards"})
# Settled rounds a live table keeps (the screen shows the last two rounds' flags and the
# last round; a flag noticed after a round joins it): all that a restart restores.
KEEP_ROUNDS = 8


def digest_of(state: str) -> str:
    return hashlib.sha256(state.encode("utf-8")).hexdigest()


def named(body: str) -> str | None:
    """The checkpoint digest a stored event's body names, if any."""
    if _MARK not in body:
        return None
    value = json.loads(body).get(KEY)
    return value if isinstance(value, str) else None


def without_key(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """An event as the table heard it: without the store's checkpoint field (the event
    itself, not a copy, when it has none: the recorder's hot path)."""
    if KEY not in event:
        return event
    return {k: v for k, v in event.items() if k != KEY}


@dataclass(frozen=True)
class Checkpoint:
    table_id: str
    seq: int  # the last event the state includes
    digest: str
    state: str  # canonical JSON of the fold's snapshot

    @classmethod
    def of(cls, fold: Fold) -> Checkpoint:
        state = canonical_json(fold.snapshot())
        return cls(fold.table_id, fold.seq, digest_of(state), state)

    def row(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "seq": self.seq,
            "digest": self.digest,
            "state": self.state,
        }


def with_checkpoint(derived: Derived, checkpoint: Checkpoint | None) -> Derived:
    """An event's derived rows with the checkpoint committed beside it (a new object: the
    shared empty ``NO_ROWS`` is never filled)."""
    if checkpoint is None:
        return derived
    out = Derived()
    out.extend(derived)
    out.checkpoints.append(checkpoint.row())
    return out


class Checkpointer:
    """Decides when the next event carries a checkpoint, and takes it.

    The one path that writes checkpoints: the recorder's, and any bulk writer of a store
    (``benchmarks/``) calling :meth:`prepare` before chaining each event and :meth:`done`
    once it is durable.
    """

    def __init__(self, every: int = DEFAULT_EVERY, last: int = 0) -> None:
        if every < 1:
            raise ValueError(f"checkpoint_every must be at least 1: {every}")
        self.every = every
        self.last = last  # the sequence number of the newest checkpoint (0: none)
        self.shoe_point = False  # the event prepared last was a shoe point

    def due(self, fold: Fold) -> bool:
        gap = fold.seq - self.last
        return fold.seq > 0 and (gap >= self.every or (self.shoe_point and gap >= MIN_GAP))

    def prepare(self, fold: Fold, body: dict[str, Any]) -> tuple[dict[str, Any], Checkpoint | None]:
        """The body to chain for the next event (naming a checkpoint of ``fold`` if one is
        due), and that checkpoint. ``fold`` must not have applied the event yet."""
        if not self.due(fold):
            return body, None
        checkpoint = Checkpoint.of(fold)
        return {**body, KEY: checkpoint.digest}, checkpoint

    def done(self, kind: str, checkpoint: Checkpoint | None) -> None:
        """The event (of type ``kind``) prepared last is durable."""
        if checkpoint is not None:
            self.last = checkpoint.seq
        self.shoe_point = kind in SHOE_POINTS


# ----- restoring --------------------------------------------------------------------------


class CheckpointUnusable(ValueError):
    """A checkpoint that cannot be trusted or restored (why, in the message)."""


def stored(store: Store, table_id: str, *, after: int = -1) -> list[tuple[int, str]]:
    """A table's checkpoints (of the states after events beyond ``after``) as (sequence,
    digest), oldest first."""
    with store.connection() as conn:
        rows = conn.execute(
            sa.select(CHECKPOINTS.c.seq, CHECKPOINTS.c.digest)
            .where(CHECKPOINTS.c.table_id == table_id, CHECKPOINTS.c.seq > after)
            .order_by(CHECKPOINTS.c.seq)
        ).all()
    return [(int(s), str(d)) for s, d in rows]


def stored_state(store: Store, table_id: str, seq: int) -> str | None:
    with store.connection() as conn:
        row = conn.execute(
            sa.select(CHECKPOINTS.c.state).where(
                CHECKPOINTS.c.table_id == table_id, CHECKPOINTS.c.seq == seq
            )
        ).first()
    return None if row is None else str(row[0])


def _trusted(
    store: Store,
    table_id: str,
    setup: Mapping[str, Any],
    seq: int,
    digest: str,
    keep_rounds: int | None,
) -> tuple[Fold, ChainRecord]:
    state = stored_state(store, table_id, seq)
    if state is None or digest_of(state) != digest:
        raise CheckpointUnusable("its state does not match its digest")
    pair = store.records(table_id, after=seq - 1, upto=seq + 1)
    if [r.seq for r in pair] != [seq, seq + 1]:
        raise CheckpointUnusable(f"events {seq} and {seq + 1} are not both stored")
    before, naming = pair
    if before.recompute() != before.hash or naming.recompute() != naming.hash:
        raise CheckpointUnusable(f"events {seq} and {seq + 1} do not match their hashes")
    if naming.prev_hash != before.hash:
        raise CheckpointUnusable(f"event {seq + 1} does not chain to event {seq}")
    if named(naming.body) != digest:
        raise CheckpointUnusable(f"event {seq + 1} does not name it")
    try:
        fold = Fold.restore(table_id, setup, json.loads(state), keep_rounds=keep_rounds)
    except ValueError as exc:
        raise CheckpointUnusable(f"its state cannot be restored: {exc}") from exc
    if fold.seq != seq:
        raise CheckpointUnusable(f"it holds the state at event {fold.seq}")
    return fold, before


def _newest_first(
    store: Store, table_id: str, upto: int | None, page: int = 16
) -> Iterator[tuple[int, str]]:
    """A table's checkpoints (of states up to event ``upto``) as (sequence, digest), newest
    first, read a page at a time: a restore usually needs only the first."""
    while True:
        query = sa.select(CHECKPOINTS.c.seq, CHECKPOINTS.c.digest).where(
            CHECKPOINTS.c.table_id == table_id
        )
        if upto is not None:
            query = query.where(CHECKPOINTS.c.seq <= upto)
        with store.connection() as conn:
            rows = conn.execute(query.order_by(CHECKPOINTS.c.seq.desc()).limit(page)).all()
        yield from ((int(s), str(d)) for s, d in rows)
        if len(rows) < page:
            return
        upto = int(rows[-1][0]) - 1


def restore_latest(
    store: Store,
    table_id: str,
    setup: Mapping[str, Any],
    *,
    keep_rounds: int | None = KEEP_ROUNDS,
    below: int | None = None,
) -> tuple[Fold, ChainRecord] | None:
    """The table at its newest trustworthy checkpoint (named by an event before ``below``),
    and the stored event it ends with; None when there is none (replay from the table line).

    ``setup`` is the stored table line. Each checkpoint skipped is logged as a warning.
    """
    for seq, digest in _newest_first(store, table_id, None if below is None else below - 2):
        try:
            return _trusted(store, table_id, setup, seq, digest, keep_rounds)
        except CheckpointUnusable as exc:
            log.warning(
                "checkpoint skipped: an older one or a replay is used; run floorctl verify",
                table=table_id,
                checkpoint=seq,
                reason=str(exc),
                store=store.name,
            )
    return None


def latest_events(
    store: Store, table_id: str, kinds: tuple[str, ...], upto: int, limit: int = 20
) -> list[tuple[int, dict[str, Any]]]:
    """The newest stored events of these types up to event ``upto``, oldest first (a
    restart's look back past the events it re-reads, by the events' type index)."""
    found: list[tuple[int, dict[str, Any]]] = []
    with store.connection() as conn:
        for kind in kinds:
            rows = conn.execute(
                sa.select(EVENTS.c.seq, EVENTS.c.body)
                .where(EVENTS.c.table_id == table_id, EVENTS.c.type == kind)
                .where(EVENTS.c.seq <= upto)
                .order_by(EVENTS.c.seq.desc())
                .limit(limit)
            ).all()
            found.extend((int(seq), json.loads(body)) for seq, body in rows)
    return sorted(found, key=lambda item: item[0])


# ----- verifying --------------------------------------------------------------------------

_LISTS = ("rounds", "shoes", "inspections")  # bounded by keep_rounds: compared by their tails


def same_state(replayed: Mapping[str, Any], kept: Mapping[str, Any]) -> str | None:
    """None when a checkpoint's fold state is the replay's; else the first field that differs.

    A bounded engine keeps only its last rounds, shoes and inspections: those lists are
    compared over the length both kept.
    """
    if replayed.get("seq") != kept.get("seq"):
        return "seq"
    a, b = replayed.get("engine"), kept.get("engine")
    if not isinstance(a, dict) or not isinstance(b, dict):
        return "engine"
    if b.get("version") == 2 and a.get("version") == 3:
        a = as_version_2(a)
    keys: list[str] = sorted(str(k) for k in set(a) | set(b))
    for key in keys:
        if key in ("digest", "keep_rounds"):
            continue
        x, y = a.get(key), b.get(key)
        if key in _LISTS and isinstance(x, list) and isinstance(y, list):
            n = min(len(x), len(y))
            if x[len(x) - n :] != y[len(y) - n :]:
                return key
        elif x != y:
            return key
    return None


def as_version_2(engine: Mapping[str, Any]) -> dict[str, Any]:
    """An engine snapshot of format version 3 as version 2 wrote it (no desk; a flag without
    its event's type), to compare a store's older checkpoints with today's replay."""
    out = {k: v for k, v in engine.items() if k != "desk"}
    out["version"] = 2

    def flags(items: Any) -> Any:
        return [f[:5] for f in items] if isinstance(items, list) else items

    out["unassigned"] = flags(out.get("unassigned"))
    rnd = out.get("round")
    if isinstance(rnd, dict):
        out["round"] = {**rnd, "flags": flags(rnd.get("flags"))}
    rounds = out.get("rounds")
    if isinstance(rounds, list):
        out["rounds"] = [
            {**r, "flags": flags(r.get("flags"))} if isinstance(r, dict) else r for r in rounds
        ]
    return out


class Audit:
    """``verify``'s check of a table's checkpoints, fed the sound events in order.

    Each checkpoint must be named by the event after it, hold the state its digest says,
    and (``full``) equal the replay's state at its sequence number; every event naming a
    checkpoint must have it stored. With ``after``, only the checkpoints of the states after
    the events beyond it (a tail's: the events fed must then start at ``after + 2``).
    """

    def __init__(self, store: Store, table_id: str, *, after: int = -1) -> None:
        self.store = store
        self.table_id = table_id
        self.rows = dict(stored(store, table_id, after=after))
        self.seen: set[int] = set()

    def _problem(self, seq: int, message: str, kind: str = "checkpoint") -> Problem:
        return Problem(self.table_id, seq, kind, message)

    def event(self, seq: int, body: str) -> Problem | None:
        """Check the checkpoint event ``seq`` names, if it names one."""
        if _MARK not in body:
            return None
        digest = named(body)
        if digest is None:
            return None
        at = seq - 1
        self.seen.add(at)
        have = self.rows.get(at)
        if have is None:
            return self._problem(
                seq,
                f"names the checkpoint of the state after event {at} ({digest[:16]}…), "
                "which the store lacks: it was deleted",
            )
        if have != digest:
            return self._problem(
                seq,
                f"names checkpoint {digest[:16]}… of the state after event {at}, but the store "
                f"holds {have[:16]}… there: the checkpoint was replaced",
            )
        state = stored_state(self.store, self.table_id, at)
        if state is None or digest_of(state) != digest:
            return self._problem(
                seq,
                f"the checkpoint of the state after event {at} does not match its digest: "
                "its state was altered",
            )
        return None

    def wants(self, seq: int) -> bool:
        return seq in self.rows

    def compare(self, fold: Fold) -> Problem | None:
        """(``--full``) The stored checkpoint at ``fold.seq`` against the replay's state."""
        state = stored_state(self.store, self.table_id, fold.seq)
        if state is None:
            return None
        differs = same_state(fold.snapshot(), json.loads(state))
        if differs is None:
            return None
        return self._problem(
            fold.seq + 1,
            f"the checkpoint of the state after event {fold.seq} differs from a replay of "
            f"the events up to it ({differs!r})",
        )

    def finish(self, head_seq: int) -> Problem | None:
        """Checkpoints no event names (after the whole chain was fed)."""
        for at in sorted(self.rows):
            if at in self.seen:
                continue
            if at + 1 > head_seq:
                return self._problem(
                    head_seq + 1,
                    f"the store holds a checkpoint of the state after event {at}, committed "
                    f"with event {at + 1}, but its log ends at event {head_seq}: the events "
                    f"after {head_seq} were deleted",
                    "deleted",
                )
            return self._problem(
                at + 1,
                f"the store holds a checkpoint of the state after event {at} that event "
                f"{at + 1} does not name: it was inserted",
            )
        return None
