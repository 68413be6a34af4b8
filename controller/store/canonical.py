"""The canonical encoding of the audit log and its hash chain.

Each stored event is a *record*::

    {"corrects": <seq or null>, "event": <event dict>, "prev": <previous record's hash>,
     "recorded_at": <ISO 8601 UTC>, "seq": <per-table sequence number>, "table": <table id>}

encoded as JSON with keys sorted at every level, no whitespace (``","`` and ``":"``
separators), non-ASCII characters kept as UTF-8, and no NaN or infinity. A record's hash is
the SHA-256 of those UTF-8 bytes, in lower-case hex. A table's first record is its ``table``
line, sequence 0, chained to :data:`GENESIS`; event *n* of the scenario (line *n* + 1) is
sequence *n*, the number the engine gives its flags. Amounts are decimal strings. The event
dict is stored as its own canonical JSON text (the ``body`` column), so a record can be
re-encoded from the stored columns alone.
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any, NamedTuple

GENESIS = "0" * 64


def _decimal_as_text(value: Any) -> str:
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} is not a finite amount")
        return str(value)
    raise TypeError(f"{type(value).__name__} {value!r} has no JSON form")


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON; Decimals as text; refuses NaN and infinities."""
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_decimal_as_text,
    )


def json_string(text: str) -> str:
    """``text`` as a JSON string, exactly as :func:`canonical_json` writes it."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'  # nothing to escape (the common case, made fast)
    return json.dumps(text, ensure_ascii=False)


def record_text(
    table_id: str, seq: int, prev: str, recorded_at: str, corrects: int | None, body: str
) -> str:
    """The canonical record, built from the stored columns (``body`` is canonical JSON).

    Equal to ``canonical_json`` of the record dict, built without re-encoding the body.
    """
    return (
        '{"corrects":'
        + ("null" if corrects is None else str(int(corrects)))
        + ',"event":'
        + body
        + ',"prev":'
        + json_string(prev)
        + ',"recorded_at":'
        + json_string(recorded_at)
        + ',"seq":'
        + str(int(seq))
        + ',"table":'
        + json_string(table_id)
        + "}"
    )


def record_hash(
    table_id: str, seq: int, prev: str, recorded_at: str, corrects: int | None, body: str
) -> str:
    text = record_text(table_id, seq, prev, recorded_at, corrects, body)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ChainRecord(NamedTuple):
    """One event of a table's log, with its place in the chain."""

    table_id: str
    seq: int
    type: str
    body: str
    recorded_at: str
    corrects: int | None
    prev_hash: str
    hash: str

    @classmethod
    def make(
        cls,
        table_id: str,
        seq: int,
        event: dict[str, Any],
        prev_hash: str,
        recorded_at: str,
        corrects: int | None = None,
    ) -> ChainRecord:
        body = canonical_json(event)
        kind = event.get("type")
        if not isinstance(kind, str):
            raise ValueError(f"table {table_id} seq {seq}: event has no string 'type'")
        digest = record_hash(table_id, seq, prev_hash, recorded_at, corrects, body)
        return cls(table_id, seq, kind, body, recorded_at, corrects, prev_hash, digest)

    def recompute(self) -> str:
        """The hash this record's stored columns give."""
        return record_hash(
            self.table_id, self.seq, self.prev_hash, self.recorded_at, self.corrects, self.body
        )

    def event(self) -> dict[str, Any]:
        value = json.loads(self.body)
        if not isinstance(value, dict):
            raise ValueError(f"table {self.table_id} seq {self.seq}: body is not a JSON object")
        return value

    def to_row(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "seq": self.seq,
            "type": self.type,
            "body": self.body,
            "recorded_at": self.recorded_at,
            "corrects": self.corrects,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }

    @classmethod
    def from_row(cls, row: Any) -> ChainRecord:
        """From a mapping or a row object with the ``events`` columns."""
        get = row.__getitem__ if isinstance(row, dict) else row._mapping.__getitem__
        return cls(
            str(get("table_id")),
            int(get("seq")),
            str(get("type")),
            str(get("body")),
            str(get("recorded_at")),
            None if get("corrects") is None else int(get("corrects")),
            str(get("prev_hash")),
            str(get("hash")),
        )
