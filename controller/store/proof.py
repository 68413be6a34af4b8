"""A proof for one round: its events, each with an inclusion proof under a signed head.

``floorctl prove --db URL --table T --round N --out FILE`` writes (JSON)::

    {"format": "floorctl-round-proof/1", "table": T, "round": N,
     "head": {the signed head: table_id, seq, size, root, chain_head, signed_at, prev, key_id,
              signature},
     "events": [{"seq", "type", "body", "recorded_at", "corrects", "prev_hash", "hash",
                 "proof": [hex, ...]}, ...]}

A round's events run from the one after the previous round ended (the shuffle, the bets) to
the one that settled or voided it. ``floorctl verify-proof FILE --key table.pub`` needs nothing
else: each event's stored columns must hash to its record hash, each must chain to the one
before it, each record hash's leaf must lead by its proof to the head's root, and the head must
be signed by the key. A card changed anywhere in the round fails it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from controller.store.canonical import record_hash
from controller.store.db import StoreError
from controller.store.heads import Head, iter_hashes, load_heads
from controller.store.keys import PublicKey
from controller.store.merkle import ProofError, inclusion_proof, leaf_hash, root_from_inclusion
from controller.store.repository import Store
from controller.store.schema import ROUNDS

FORMAT = "floorctl-round-proof/1"


def round_span(store: Store, table_id: str, number: int) -> tuple[int, int]:
    """The first and last event of an ended round."""
    with store.connection() as conn:
        rows = {
            int(r[0]): int(r[1])
            for r in conn.execute(
                sa.select(ROUNDS.c.round, ROUNDS.c.closed_seq).where(
                    ROUNDS.c.table_id == table_id, ROUNDS.c.round <= number
                )
            )
        }
    if number not in rows:
        raise StoreError(f"{store.name}: table {table_id} has no ended round {number}")
    last = rows[number]
    before = [seq for n, seq in rows.items() if n < number and seq < last]
    return (max(before) + 1 if before else 1), last


def prove_round(store: Store, table_id: str, number: int) -> dict[str, Any]:
    """The proof document of round ``number`` against the table's newest signed head, read
    in one snapshot of the store."""
    with store.snapshot() as snap:
        return _prove(snap, table_id, number)


def _prove(store: Store, table_id: str, number: int) -> dict[str, Any]:
    first, last = round_span(store, table_id, number)
    heads = load_heads(store, table_id)
    if not heads or heads[-1].size <= last:
        raise StoreError(
            f"{store.name}: table {table_id} round {number} ends at event {last}, which no "
            "signed head covers yet"
        )
    head = heads[-1]
    leaves = [leaf_hash(h) for _s, h in iter_hashes(store, table_id, upto=head.size - 1)]
    if len(leaves) != head.size:
        raise StoreError(f"{store.name}: table {table_id}: the log is shorter than its last head")
    events = []
    cache: dict[tuple[int, int], bytes] = {}
    for record in store.records(table_id, after=first - 1, upto=last):
        doc = record.to_row()
        del doc["table_id"]
        doc["proof"] = [p.hex() for p in inclusion_proof(record.seq, leaves, head.size, cache)]
        events.append(doc)
    return {
        "format": FORMAT,
        "table": table_id,
        "round": number,
        "head": head.public(),
        "events": events,
    }


@dataclass
class ProofCheck:
    ok: bool
    message: str
    seq: int | None = None


def check_proof(doc: dict[str, Any], key: PublicKey) -> ProofCheck:
    """Check a round proof with the table's public key alone."""
    try:
        if doc.get("format") != FORMAT:
            return ProofCheck(False, f"format {doc.get('format')!r} is not {FORMAT}")
        table_id = str(doc["table"])
        head = Head.from_row(doc["head"])
        if head.table_id != table_id:
            return ProofCheck(False, f"the head is of table {head.table_id}, not {table_id}")
        if not head.signed_by(key):
            return ProofCheck(
                False, f"the head (head {head.seq}) is not signed by key {key.key_id[:16]}…"
            )
        root = bytes.fromhex(head.root)
        events = doc["events"]
        if not events:
            return ProofCheck(False, "the proof holds no events")
        prev: dict[str, Any] | None = None
        for ev in events:
            seq = int(ev["seq"])
            corrects = None if ev["corrects"] is None else int(ev["corrects"])
            digest = record_hash(
                table_id, seq, str(ev["prev_hash"]), str(ev["recorded_at"]), corrects, ev["body"]
            )
            if digest != ev["hash"]:
                return ProofCheck(False, f"event {seq}: its content does not match its hash", seq)
            body = json.loads(ev["body"])
            if not isinstance(body, dict) or body.get("type") != ev["type"]:
                return ProofCheck(False, f"event {seq}: its type is not its body's", seq)
            if prev is not None and (
                seq != int(prev["seq"]) + 1 or ev["prev_hash"] != prev["hash"]
            ):
                before = prev["seq"]
                return ProofCheck(False, f"event {seq}: it does not follow event {before}", seq)
            try:
                got = root_from_inclusion(
                    seq, head.size, leaf_hash(digest), [bytes.fromhex(p) for p in ev["proof"]]
                )
            except ProofError as exc:
                return ProofCheck(False, f"event {seq}: {exc}", seq)
            if got != root:
                return ProofCheck(
                    False,
                    f"event {seq}: not in the log under head {head.seq} (its inclusion proof "
                    "does not lead to the signed root)",
                    seq,
                )
            prev = ev
    except (KeyError, TypeError, ValueError) as exc:
        return ProofCheck(False, f"the proof is malformed: {exc!r}")
    first, last = int(events[0]["seq"]), int(events[-1]["seq"])
    return ProofCheck(
        True,
        f"table {table_id} round {doc['round']}: events {first} to {last} are in the log signed "
        f"by key {key.key_id[:16]}… (head {head.seq}: {head.size} events, signed "
        f"{head.signed_at})",
    )
