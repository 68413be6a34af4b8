"""Checking a table's hash chain, and naming the first event that breaks it.

The checker walks a table's records in sequence order. A record is *sound* when its stored
columns hash to its stored hash and its ``prev_hash`` is the hash of the record before it
(:data:`~controller.store.canonical.GENESIS` for sequence 0, the table line). At the first
record that is not, it works out what was done to the log, as far as the records tell:

- ``deleted``: a sequence number is missing, or a record hashes correctly only under a
  higher sequence number (events were removed and the rest renumbered);
- ``inserted``: a record that hashes under no sequence number, whose own sequence number is
  held further on by a record that hashes correctly there (the rest was renumbered);
- ``reordered``: records that hash correctly under each other's sequence numbers;
- ``edited``: a record that no longer hashes to its stored hash, or (hash recomputed) whose
  hash is not the one the next record chained to.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from controller.store.canonical import GENESIS, ChainRecord, json_string, record_hash

# How far from its stored position a moved record is looked for.
WINDOW = 32


@dataclass(frozen=True)
class Problem:
    """The first thing found wrong in a store or an export."""

    table_id: str
    seq: int
    kind: str  # edited | deleted | inserted | reordered | settlement | flag | round | shoe | ...
    message: str

    def __str__(self) -> str:
        return f"table {self.table_id} event {self.seq}: {self.kind}: {self.message}"


def hashes_as(record: ChainRecord, seq: int) -> bool:
    """Whether the record's columns hash to its stored hash when numbered ``seq``."""
    return (
        record_hash(
            record.table_id, seq, record.prev_hash, record.recorded_at, record.corrects, record.body
        )
        == record.hash
    )


def original_seq(record: ChainRecord) -> int | None:
    """The sequence number (other than its own) under which a record hashes, if any nearby."""
    for delta in range(1, WINDOW + 1):
        for seq in (record.seq - delta, record.seq + delta):
            if seq >= 0 and hashes_as(record, seq):
                return seq
    return None


def check_chain(
    table_id: str,
    records: Iterable[ChainRecord],
    on_sound: Callable[[ChainRecord], None] | None = None,
    *,
    start: tuple[int, str, ChainRecord | None] = (0, GENESIS, None),
    until: int | None = None,
) -> tuple[int, str, Problem | None]:
    """Walk a table's records; return (count of sound records, head hash, first problem).

    ``records`` must come in stored sequence order; ``on_sound`` is called with each record
    found sound, in order, before the next is read. ``start`` is where the walk begins (the
    sequence number expected next, the hash it must chain to, and the sound record before
    it), so a walk can take over from :mod:`controller.store.verify`'s fast path; with
    ``until`` it stops, sound, once it has passed that sequence number.
    """
    expected, prev, before = start
    window: list[ChainRecord] = []
    iterator = iter(records)
    count = expected
    table_json = json_string(table_id)
    sha256 = hashlib.sha256
    for record in iterator:
        # The fast path: record_text() inlined.
        _t, seq, _type, body, recorded_at, corrects, prev_hash, digest = record
        if seq == expected and prev_hash == prev:
            if recorded_at.isprintable() and '"' not in recorded_at and "\\" not in recorded_at:
                at = '"' + recorded_at + '"'
            else:
                at = json_string(recorded_at)
            text = (
                f'{{"corrects":{"null" if corrects is None else int(corrects)},"event":{body},'
                f'"prev":"{prev}","recorded_at":{at},"seq":{seq},"table":{table_json}}}'
            )
            if sha256(text.encode("utf-8")).hexdigest() == digest:
                count += 1
                prev = digest
                expected += 1
                before = record
                if on_sound is not None:
                    on_sound(record)
                if until is not None and seq >= until:
                    break
                continue
        # Something is wrong here: gather the records that follow, to tell what.
        window = [record]
        for later in iterator:
            window.append(later)
            if len(window) > WINDOW:
                break
        return count, prev, _classify(table_id, expected, prev, before, window)
    return count, prev, None


def _classify(
    table_id: str,
    expected: int,
    prev: str,
    before: ChainRecord | None,
    window: Sequence[ChainRecord],
) -> Problem:
    record = window[0]
    if record.table_id != table_id:
        return Problem(table_id, record.seq, "inserted", f"record names table {record.table_id!r}")
    if record.seq > expected:
        missing = (
            f"event {expected} is missing"
            if record.seq == expected + 1
            else f"events {expected} to {record.seq - 1} are missing"
        )
        return Problem(table_id, expected, "deleted", f"{missing} from the log")
    if record.seq < expected:
        return Problem(table_id, record.seq, "reordered", "sequence numbers go backwards")
    if (
        before is not None
        and before.seq == record.seq - 1
        and record.prev_hash == before.prev_hash
        and hashes_as(record, record.seq - 1)
    ):
        # The event recorded as the one before chained to the same predecessor as the record
        # now before it: that record was slipped in (with a hash that fits) and the rest
        # renumbered.
        return Problem(
            table_id,
            before.seq,
            "inserted",
            f"this event is not in the chain; the event recorded as {before.seq} now sits at "
            f"{record.seq}",
        )
    origins = {r.seq: original_seq(r) for r in window}
    moved_here = origins[record.seq]
    holds_mine = [r.seq for r in window[1:] if origins[r.seq] == record.seq]
    if moved_here is None:
        if holds_mine:
            return Problem(
                table_id,
                record.seq,
                "inserted",
                f"this event is not in the chain; the event recorded as {record.seq} now sits "
                f"at {holds_mine[0]}",
            )
        if record.recompute() == record.hash:
            # Sound on its own but not chained to the record before it: that record was
            # changed and its hash recomputed.
            if record.seq == 0:
                return Problem(table_id, 0, "edited", "the table line does not start the chain")
            return Problem(
                table_id,
                record.seq - 1,
                "edited",
                f"its hash is not the one event {record.seq} chained to: it was changed and "
                "its hash recomputed",
            )
        if record.prev_hash != prev:
            return Problem(
                table_id,
                record.seq,
                "edited",
                "neither its hash nor its link to the event before it matches its content",
            )
        return Problem(table_id, record.seq, "edited", "its content does not match its hash")
    if holds_mine or moved_here < record.seq:
        where = (
            f"; the event recorded as {record.seq} now sits at {holds_mine[0]}"
            if holds_mine
            else ""
        )
        return Problem(
            table_id,
            record.seq,
            "reordered",
            f"the event stored here was recorded as event {moved_here}{where}",
        )
    return Problem(
        table_id,
        record.seq,
        "deleted",
        f"the event stored here was recorded as event {moved_here}: "
        f"{moved_here - record.seq} event(s) before it were deleted and the rest renumbered",
    )
