"""A proof of one whole round: all its events, bounded by the table's signed round marks.

The recorder signs a head as each round ends, naming in its signed statement the round it
*closes* (see :mod:`controller.store.heads`). Round N's events run from the one after round
N - 1's settling (or void) event to its own; so the head that closes round N - 1 (for round 1:
the table line, event 0) and the head that closes round N bound it.

``floorctl prove --db URL --table T --round N --out FILE`` writes (JSON)::

    {"format": "floorctl-round-proof/2", "table": T, "round": N,
     "head":  {the signed head that closes round N: table_id, seq, size, root, chain_head,
               signed_at, prev, key_id, signature, closes},
     "start": {the signed head that closes round N - 1} or null for round 1,
     "consistency": [hex, ...]   (the head's tree extends the start's: RFC 9162 2.1.4),
     "events": [{"seq", "type", "body", "recorded_at", "corrects", "prev_hash", "hash",
                 "proof": [hex, ...]}, ...]}

``floorctl verify-proof FILE --key table.pub`` needs nothing else. Both heads must be signed
by the key, be of the proof's table, and close rounds N - 1 and N. The events must run without
a gap from the start head's end (event 1 for round 1) to the head's last event, each hashing
to its record hash, each chaining to the one before (the first to the start head's chain
head), each in the head's tree by its inclusion proof; the last must be the head's chain head.
So a proof with events cut from either end, one that stops before the settlement, one with
events of another round or table, reordered or repeated, is refused. A file that is not such a
document at all (wrong types, numbers out of range, missing keys, nesting beyond reason) is
:class:`MalformedProof`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import sqlalchemy as sa
import structlog
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from controller.store.canonical import record_hash
from controller.store.db import StoreError
from controller.store.heads import Head
from controller.store.keys import PublicKey
from controller.store.merkle import (
    ProofError,
    check_consistency,
    leaf_hash,
    root_from_inclusion,
)
from controller.store.repository import Store
from controller.store.schema import HEADS, ROUNDS
from controller.store.tree import StoredTree

log = structlog.get_logger("floorctl.store")

FORMAT = "floorctl-round-proof/2"
MAX_PROOF_BYTES = 64 << 20  # a round of thousands of events is a few MB
MAX_EVENTS = 100_000
MAX_SEQ = 2**62

Hex64 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Seq = Annotated[int, Field(ge=0, le=MAX_SEQ)]
Path = Annotated[list[Hex64], Field(max_length=64)]  # a tree of 2**62 leaves is 62 deep


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class HeadDoc(_Strict):
    table_id: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    seq: Seq
    size: Annotated[int, Field(ge=1, le=MAX_SEQ)]
    root: Hex64
    chain_head: Hex64
    signed_at: Annotated[str, StringConstraints(max_length=40)]
    prev: Hex64
    key_id: Hex64
    signature: Annotated[str, StringConstraints(max_length=128)]
    closes: Annotated[int, Field(ge=1, le=MAX_SEQ)] | None = None

    def head(self) -> Head:
        return Head.from_row(self.model_dump())


class EventDoc(_Strict):
    seq: Seq
    type: Annotated[str, StringConstraints(max_length=32)]
    body: Annotated[str, StringConstraints(max_length=1 << 20)]
    recorded_at: Annotated[str, StringConstraints(max_length=40)]
    corrects: Seq | None
    prev_hash: Hex64
    hash: Hex64
    proof: Path


class ProofDoc(_Strict):
    format: Literal["floorctl-round-proof/2"]
    table: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    round: Annotated[int, Field(ge=1, le=MAX_SEQ)]
    head: HeadDoc
    start: HeadDoc | None
    consistency: Path
    events: Annotated[list[EventDoc], Field(min_length=1, max_length=MAX_EVENTS)]


class MalformedProof(ValueError):
    """Not a round proof: what is wrong, in a line."""


def _malformed(exc: ValidationError) -> MalformedProof:
    err = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in err["loc"]) or "the document"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return MalformedProof(f"not a round proof: {where}: {err['msg']}{more}")


def parse_proof(data: str | bytes | dict[str, Any]) -> ProofDoc:
    """A proof document from its JSON text (or already parsed), checked for shape alone."""
    if isinstance(data, (str, bytes)) and len(data) > MAX_PROOF_BYTES:
        raise MalformedProof(f"not a round proof: over {MAX_PROOF_BYTES >> 20} MB")
    try:
        if isinstance(data, dict):
            if data.get("format") != FORMAT:
                raise MalformedProof(_format_message(data.get("format")))
            return ProofDoc.model_validate(data)
        doc = ProofDoc.model_validate_json(data)
    except ValidationError as exc:
        if isinstance(data, (str, bytes)):
            try:
                shown = json.loads(data).get("format")
            except (ValueError, AttributeError, RecursionError):
                shown = None
            if shown is not None and shown != FORMAT:
                raise MalformedProof(_format_message(shown)) from None
        raise _malformed(exc) from None
    return doc


def _format_message(shown: Any) -> str:
    text = repr(shown)[:80]
    if shown == "floorctl-round-proof/1":
        return (
            f"format {text} does not bound its round (make the proof again with this "
            f"floorctl's prove): this reads {FORMAT}"
        )
    return f"not a round proof: format {text} is not {FORMAT}"


# ----- proving --------------------------------------------------------------------------


def round_span(store: Store, table_id: str, number: int) -> tuple[int, int]:
    """The first and last event of an ended round."""
    with store.connection() as conn:
        rows = {
            int(r[0]): int(r[1])
            for r in conn.execute(
                sa.select(ROUNDS.c.round, ROUNDS.c.closed_seq).where(
                    ROUNDS.c.table_id == table_id,
                    ROUNDS.c.round.in_([number - 1, number]),
                )
            )
        }
    if number not in rows:
        raise StoreError(f"{store.name}: table {table_id} has no ended round {number}")
    last = rows[number]
    before = rows.get(number - 1)
    return (before + 1 if before is not None and before < last else 1), last


def _marking(store: Store, table_id: str, number: int) -> Head | None:
    """The signed head that closes round ``number``, if one does."""
    with store.connection() as conn:
        # (No ORDER BY: SQLite would walk the heads in the primary key's order to give it,
        # not look the round up in ix_heads_closes. A round is closed once: one row.)
        rows = conn.execute(
            sa.select(HEADS).where(HEADS.c.table_id == table_id, HEADS.c.closes == number)
        ).all()
    return min((Head.from_row(r) for r in rows), key=lambda h: h.seq, default=None)


def prove_round(store: Store, table_id: str, number: int) -> dict[str, Any]:
    """The proof document of round ``number``, bounded by the heads that close it and the
    round before it; read in one snapshot of the store."""
    with store.snapshot() as snap:
        return _prove(snap, table_id, number)


def _prove(store: Store, table_id: str, number: int) -> dict[str, Any]:
    first, last = round_span(store, table_id, number)
    end = _marking(store, table_id, number)
    if end is None or end.size != last + 1:
        raise StoreError(
            f"{store.name}: table {table_id} round {number} ends at event {last}, and no "
            "signed head marks that end (the head is signed as the round ends: one that "
            "failed, or a round that waited in the spool, leaves the round unprovable)"
        )
    start = None
    if number > 1:
        start = _marking(store, table_id, number - 1)
        if start is None or start.size != first:
            raise StoreError(
                f"{store.name}: table {table_id} round {number} begins after event "
                f"{first - 1}, and no signed head marks that end of round {number - 1}"
            )
    elif first != 1:
        raise StoreError(f"{store.name}: table {table_id}: round 1 does not begin at event 1")
    records = store.records(table_id, after=first - 1, upto=last)
    if len(records) != last - first + 1:
        raise StoreError(
            f"{store.name}: table {table_id}: events {first} to {last} are not all stored"
        )
    tree = StoredTree(store, table_id, end.size)
    paths = _paths(tree, records, end)
    if paths is None:
        # A kept subtree root that does not agree with the signed one: hashed from the
        # events instead (O(n)); verify says whether the log itself was changed.
        log.warning("merkle subtree roots do not give the signed root", table=table_id)
        tree = StoredTree(store, table_id, end.size, use_nodes=False)
        paths = _paths(tree, records, end)
        if paths is None:
            raise StoreError(
                f"{store.name}: table {table_id}: the stored events do not give the root of "
                f"signed head {end.seq}: run floorctl verify --key"
            )
    events = []
    for record, path in zip(records, paths, strict=True):
        doc = record.to_row()
        del doc["table_id"]
        doc["proof"] = [p.hex() for p in path]
        events.append(doc)
    consistency: list[str] = []
    if start is not None:
        steps = tree.consistency_proof(start.size)
        try:
            check_consistency(
                start.size, end.size, bytes.fromhex(start.root), bytes.fromhex(end.root), steps
            )
        except ProofError:
            steps = StoredTree(store, table_id, end.size, use_nodes=False).consistency_proof(
                start.size
            )
        consistency = [p.hex() for p in steps]
    doc = {
        "format": FORMAT,
        "table": table_id,
        "round": number,
        "head": end.public(),
        "start": None if start is None else start.public(),
        "consistency": consistency,
        "events": events,
    }
    return doc


def _paths(tree: StoredTree, records: list[Any], head: Head) -> list[list[bytes]] | None:
    """Each record's inclusion proof, each checked against the head's root (None if one
    does not lead to it)."""
    root = bytes.fromhex(head.root)
    out = []
    for record in records:
        try:
            path = tree.inclusion_proof(record.seq)
            if root_from_inclusion(record.seq, head.size, leaf_hash(record.hash), path) != root:
                return None
        except (ProofError, ValueError):
            return None
        out.append(path)
    return out


# ----- checking -------------------------------------------------------------------------


@dataclass
class ProofCheck:
    ok: bool
    message: str
    seq: int | None = None


def check_proof(doc: ProofDoc | dict[str, Any], key: PublicKey) -> ProofCheck:
    """Check a round proof with the table's public key alone. Raises
    :class:`MalformedProof` for a document that is not a round proof at all."""
    proof = doc if isinstance(doc, ProofDoc) else parse_proof(doc)
    table_id, number = proof.table, proof.round
    end = proof.head.head()
    fail = _check_head(end, table_id, key, "the head")
    if fail is not None:
        return fail
    if end.closes != number:
        what = "closes no round" if end.closes is None else f"closes round {end.closes}"
        return ProofCheck(False, f"the head (head {end.seq}) {what}, not round {number}")
    events = proof.events
    first, last = events[0].seq, events[-1].seq
    # Where the round begins: after the end of the round before, as its signed head says.
    if proof.start is None:
        if number != 1:
            return ProofCheck(False, f"round {number}: no signed head marks where it begins")
        begins, prev_hash = 1, None
    else:
        start = proof.start.head()
        fail = _check_head(start, table_id, key, "the start head")
        if fail is not None:
            return fail
        if start.closes != number - 1:
            what = "closes no round" if start.closes is None else f"closes round {start.closes}"
            return ProofCheck(
                False, f"the start head (head {start.seq}) {what}, not round {number - 1}"
            )
        if start.seq >= end.seq or start.size > end.size:
            return ProofCheck(
                False, f"the start head {start.seq} does not come before head {end.seq}"
            )
        try:
            check_consistency(
                start.size,
                end.size,
                bytes.fromhex(start.root),
                bytes.fromhex(end.root),
                [bytes.fromhex(p) for p in proof.consistency],
            )
        except ProofError as exc:
            return ProofCheck(False, f"the head's log does not extend the start head's: {exc}")
        begins, prev_hash = start.size, start.chain_head
    if first != begins:
        cut = "events are cut from its start" if first > begins else "it begins before the round"
        return ProofCheck(
            False, f"round {number} begins at event {begins}, the proof at {first}: {cut}", first
        )
    if last != end.size - 1:
        return ProofCheck(
            False,
            f"round {number} ends at event {end.size - 1} (its settling or void event), the "
            f"proof at event {last}: "
            + ("it stops before the round's end" if last < end.size - 1 else "it runs past it"),
            last,
        )
    root = bytes.fromhex(end.root)
    expect = begins
    for ev in events:
        seq = ev.seq
        if seq != expect:
            return ProofCheck(
                False,
                f"event {seq} stands where event {expect} should: the events do not run on",
                seq,
            )
        digest = record_hash(table_id, seq, ev.prev_hash, ev.recorded_at, ev.corrects, ev.body)
        if digest != ev.hash:
            return ProofCheck(False, f"event {seq}: its content does not match its hash", seq)
        try:
            body = json.loads(ev.body)
        except (ValueError, RecursionError):
            return ProofCheck(False, f"event {seq}: its body is not JSON", seq)
        if not isinstance(body, dict) or body.get("type") != ev.type:
            return ProofCheck(False, f"event {seq}: its type is not its body's", seq)
        if prev_hash is not None and ev.prev_hash != prev_hash:
            return ProofCheck(False, f"event {seq}: it does not follow event {seq - 1}", seq)
        try:
            got = root_from_inclusion(
                seq, end.size, leaf_hash(digest), [bytes.fromhex(p) for p in ev.proof]
            )
        except ProofError as exc:
            return ProofCheck(False, f"event {seq}: {exc}", seq)
        if got != root:
            return ProofCheck(
                False,
                f"event {seq}: not in the log under head {end.seq} (its inclusion proof "
                "does not lead to the signed root)",
                seq,
            )
        prev_hash, expect = ev.hash, seq + 1
    if prev_hash != end.chain_head:
        return ProofCheck(False, f"event {last} is not the head's last event", last)
    return ProofCheck(
        True,
        f"table {table_id} round {number}, whole: events {first} to {last}, from the end of "
        + ("the table line" if proof.start is None else f"round {number - 1}")
        + f" to its settling event, are in the log signed by key {key.key_id[:16]}… (head "
        f"{end.seq}: {end.size} events, signed {end.signed_at})",
    )


def _check_head(head: Head, table_id: str, key: PublicKey, name: str) -> ProofCheck | None:
    if head.table_id != table_id:
        return ProofCheck(False, f"{name} is of table {head.table_id}, not {table_id}")
    if not head.signed_by(key):
        return ProofCheck(
            False, f"{name} (head {head.seq}) is not signed by key {key.key_id[:16]}…"
        )
    return None
