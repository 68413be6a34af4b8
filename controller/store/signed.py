"""``verify --key`` (and ``--witness``) on a store, and the signed parts of an export.

On a store: after the chain and the derived rows verify (:mod:`controller.store.verify`), each
table's heads must be signed by the key and be those of its log (:func:`heads.check_signed`),
the insert-only triggers must all be in force (:func:`heads.check_guards`), and with a witness
the table's log must hold everything the floor witnessed (:func:`witness.check_witness`).

In an export, each table's directory carries ``heads.json``: the signed heads over the exported
events and, when the export ends inside a head, that head with a consistency proof from the
exported events to it; ``manifest.sig`` is the exporter's Ed25519 signature over
``manifest.json`` (``floorctl export --signing-key table.key``).

The table's signature is on its heads, so that is what ``verify DIR --key`` rests on: the
exported events must lie under heads the key signed (every derived row is then checked against
a replay of them, as without a key). A package made where the table's private key is not — the
floor's evidence packages — carries no ``manifest.sig``; then the files a replay does not check
(each round's timeline) are made again from the events and must be the same. A ``manifest.sig``
that is present must be the key's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from controller.store.canonical import ChainRecord
from controller.store.chain import Problem
from controller.store.db import StoreError
from controller.store.heads import (
    HEAD_EVERY,
    Head,
    check_guards,
    check_heads,
    iter_hashes,
    last_head,
    load_heads,
)
from controller.store.keys import PublicKey, SigningKey
from controller.store.merkle import (
    Frontier,
    ProofError,
    check_consistency,
    consistency_proof,
    leaf_hash,
)
from controller.store.repository import Store

HEADS_FILE = "heads.json"
MANIFEST_SIG = "manifest.sig"

# What a table still playing leaves under no head: the recorder signs at every round's end and
# once an event has waited HEAD_EVERY (60) seconds, so its unsigned tail is at most that old;
# TAIL_GRACE covers the signing timer's period and the reading. 200 events is more than a
# table deals in a minute.
TAIL_EVENTS = 200
TAIL_GRACE = 15.0


@dataclass(frozen=True)
class TailBound:
    """``verify --unsigned-tail-ok``: the most events, and the oldest (seconds before now),
    that may lie after a table's last signed head."""

    seconds: float = HEAD_EVERY
    events: int = TAIL_EVENTS
    now: Callable[[], datetime] = lambda: datetime.now(UTC)


def check_tail(store: Store, table_id: str, bound: TailBound) -> Problem | None:
    """The problem with a table's unsigned tail (events after its last head), if it is longer
    or older than ``bound`` allows; None when it fits, or there is none."""
    from controller.store.schema import EVENTS

    head = last_head(store, table_id)
    first = 0 if head is None else head.size
    with store.connection() as conn:  # the snapshot verify reads in
        count = conn.execute(
            sa.select(sa.func.count())
            .select_from(EVENTS)
            .where(EVENTS.c.table_id == table_id, EVENTS.c.seq >= first)
        ).scalar_one()
        oldest = conn.execute(
            sa.select(EVENTS.c.recorded_at).where(
                EVENTS.c.table_id == table_id, EVENTS.c.seq == first
            )
        ).scalar()
    if not count:
        return None
    top = first + count - 1
    under = (
        "no head"
        if head is None
        else f"no signed head (the last, head {head.seq}, ends at event {first - 1})"
    )
    if count > bound.events:
        return Problem(
            table_id,
            first,
            "unsigned",
            f"events {first} to {top} ({count} events) are under {under}: more than the "
            f"{bound.events} a table still playing leaves unsigned",
        )
    age = _age(str(oldest), bound.now())
    if age is not None and age > bound.seconds + TAIL_GRACE:
        return Problem(
            table_id,
            first,
            "unsigned",
            f"events {first} to {top} are under {under}, the first recorded {age:.0f} s ago: "
            f"a table still playing signs its events within {bound.seconds:g} s",
        )
    return None


def _age(recorded_at: str, now: datetime) -> float | None:
    try:
        return (now - datetime.fromisoformat(recorded_at)).total_seconds()
    except (TypeError, ValueError):
        return None


def verify_signed(
    store: Store,
    table_ids: Iterable[str],
    key: PublicKey,
    *,
    witness: Store | None = None,
    tail_ok: bool = False,
    tail: TailBound | None = None,
) -> Problem | None:
    """The first problem of the store's signed log (its chain already verified), or None.

    ``tail_ok``: events after the last head are accepted, as many and as old as ``tail``
    allows (default :class:`TailBound`: 60 s and 200 events)."""
    ids = list(table_ids)
    for table_id in ids:
        problem = check_heads(
            table_id,
            load_heads(store, table_id),
            iter_hashes(store, table_id),
            key,
            tail_ok=tail_ok,
        )
        if problem is None and tail_ok:
            problem = check_tail(store, table_id, tail or TailBound())
        if problem is not None:
            return problem
    guards = check_guards(store)
    if guards is not None:
        return Problem(ids[0] if ids else "*", 0, "guards", f"{store.name}: {guards}")
    if witness is not None:
        from controller.store.witness import check_witness

        for table_id in ids:
            problem = check_witness(store, witness, table_id, key)
            if problem is not None:
                return problem
    return None


def heads_summary(store: Store, table_id: str) -> str:
    heads = load_heads(store, table_id)
    if not heads:
        return "no signed head"
    last = heads[-1]
    return (
        f"{len(heads)} signed heads, the last (head {last.seq}) over events 0 to "
        f"{last.size - 1}, signed {last.signed_at}"
    )


# ----- exports ------------------------------------------------------------------------------


def write_heads(store: Store, tdir: Path, table_id: str, records: list[ChainRecord]) -> None:
    """``heads.json`` for an export of ``records`` (the table's events from its table line)."""
    n = len(records)
    heads = load_heads(store, table_id)
    if not heads:
        return  # an unsigned log: nothing to write (verify --key fails it)
    inside = [h.public() for h in heads if h.size <= n]
    cover: dict[str, Any] | None = None
    beyond = next((h for h in heads if h.size > n), None)
    if beyond is not None and (not inside or inside[-1]["size"] < n):
        leaves = [leaf_hash(d) for _s, d in iter_hashes(store, table_id, upto=beyond.size - 1)]
        cover = {
            "head": beyond.public(),
            "size": n,
            "proof": [p.hex() for p in consistency_proof(n, beyond.size, leaves)],
        }
    doc = {"heads": inside, "cover": cover}
    (tdir / HEADS_FILE).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def sign_manifest(out: Path, key: SigningKey) -> None:
    data = (out / "manifest.json").read_bytes()
    (out / MANIFEST_SIG).write_text(
        json.dumps({"key_id": key.key_id, "signature": key.sign(data)}, indent=1) + "\n"
    )


def check_export_signed(directory: Path, key: PublicKey) -> Problem | None:
    """With a key: the manifest's signature, then each table's events against its heads."""
    from controller.store.export import read_records

    try:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{directory}/manifest.json: cannot read the manifest: {exc}") from exc
    tables = manifest.get("tables", {})
    first = sorted(tables)[0] if tables else "*"
    sealed = (directory / MANIFEST_SIG).exists()
    if sealed:
        try:
            sig = json.loads((directory / MANIFEST_SIG).read_text(encoding="utf-8"))
            good = key.verify(str(sig["signature"]), (directory / "manifest.json").read_bytes())
        except (OSError, ValueError, KeyError, TypeError):
            return Problem(first, 0, "signature", f"{MANIFEST_SIG} is unreadable")
        if not good:
            return Problem(
                first, 0, "signature", f"manifest.json is not signed by key {key.key_id[:16]}…"
            )
    for table_id, info in sorted(tables.items()):
        tdir = directory / info["dir"]
        records = read_records(tdir, table_id)
        try:
            doc = json.loads((tdir / HEADS_FILE).read_text(encoding="utf-8"))
            heads = [Head.from_row({**h, "frontier": "[]"}) for h in doc["heads"]]
            cover = doc.get("cover")
        except FileNotFoundError:
            return Problem(table_id, 0, "unsigned", "the export holds no signed head")
        except (OSError, ValueError, KeyError, TypeError):
            return Problem(table_id, 0, "unsigned", f"{info['dir']}/{HEADS_FILE} is unreadable")
        if not sealed:
            problem = _check_timelines(tdir, table_id, records, info)
            if problem is not None:
                return problem
        hashes = ((r.seq, r.hash) for r in records)
        problem = check_heads(table_id, heads, hashes, key, tail_ok=cover is not None)
        if problem is not None and not (cover is not None and not heads):
            return problem
        if cover is None:
            continue
        head = Head.from_row({**cover["head"], "frontier": "[]"})
        start = heads[-1].size if heads else 0
        if not head.signed_by(key):
            return Problem(
                table_id, start, "signature", f"head {head.seq} is not signed by the key"
            )
        if heads and (head.seq != heads[-1].seq + 1 or head.prev != heads[-1].digest()):
            return Problem(table_id, start, "head", f"head {head.seq} does not follow the others")
        frontier = Frontier()
        frontier.extend(leaf_hash(r.hash) for r in records)
        try:
            check_consistency(
                frontier.size,
                head.size,
                frontier.root(),
                bytes.fromhex(head.root),
                [bytes.fromhex(p) for p in cover["proof"]],
            )
        except (ProofError, ValueError) as exc:
            return Problem(
                table_id,
                start,
                "rewritten",
                f"the exported events {start} to {len(records) - 1} are not a prefix of the log "
                f"under signed head {head.seq}: {exc}",
            )
    return None


def _check_timelines(
    tdir: Path, table_id: str, records: list[ChainRecord], info: dict[str, Any]
) -> Problem | None:
    """Each round's timeline in an unsealed export must be the one its events give."""
    import tempfile

    from controller.store.export import _write_timelines

    try:
        window = info["window"]
        rounds = {int(n) for n in info["rounds"]}
        first, last = int(window["first_seq"]), int(window["last_seq"])
    except (KeyError, TypeError, ValueError):
        return Problem(table_id, 0, "edited", "the manifest does not say which rounds it holds")
    given = tdir / "timelines"
    with tempfile.TemporaryDirectory() as tmp:
        made = Path(tmp)
        _write_timelines(made, records, first, last, rounds)
        ours = {p.name: p.read_bytes() for p in made.iterdir()}
    theirs = {p.name: p.read_bytes() for p in given.iterdir()} if given.is_dir() else {}
    for name in sorted(set(ours) | set(theirs)):
        if ours.get(name) != theirs.get(name):
            what = "is missing" if name not in theirs else "is not what the events give"
            return Problem(table_id, 0, "edited", f"timelines/{name} {what}")
    return None
