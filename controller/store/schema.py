"""The audit store's schema, as SQLModel tables.

Everything in the store is insert-only: ``events`` is the hash-chained log the table heard;
``tables``, ``shoes``, ``rounds``, ``flags`` and ``settlements`` are derived from it (the
recorder writes them after applying each event, and ``verify`` recomputes them by replay).
The database refuses UPDATE and DELETE on all of them (see the initial migration).

Money is kept as the engine's exact decimal strings (``"12.50"``), never as floats: SQLite
has no decimal type, and the same schema must hold on both SQLite and PostgreSQL.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Index, Text
from sqlalchemy import Table as SATable
from sqlmodel import Field, SQLModel


class TableRow(SQLModel, table=True):
    """A gaming table, written when its ``table`` line (sequence 1) is recorded."""

    __tablename__ = "tables"

    table_id: str = Field(primary_key=True, max_length=64)
    game: str = Field(max_length=64)
    setup: str = Field(sa_type=Text)  # canonical JSON of the table line
    created_at: str = Field(max_length=40)  # ISO 8601 UTC


class ShoeRow(SQLModel, table=True):
    """A shoe loaded (``shuffle``) or the discards reshuffled in (``reshuffle_discards``)."""

    __tablename__ = "shoes"

    table_id: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)  # the event that loaded it
    kind: str = Field(max_length=32)  # "shuffle" or "reshuffle_discards"
    decks: int | None = None
    cut_card: int | None = None  # cards before the cut card; None when none was inserted
    # JSON list of the deck serials loaded, when the shoe reader knows them
    deck_serials: str | None = Field(default=None, sa_type=Text)


class RoundRow(SQLModel, table=True):
    """A round that has ended (settled or void)."""

    __tablename__ = "rounds"
    __table_args__ = (Index("ix_rounds_closed_seq", "table_id", "closed_seq"),)

    table_id: str = Field(primary_key=True, max_length=64)
    round: int = Field(primary_key=True)
    status: str = Field(max_length=16)
    closed_seq: int  # the event that settled or voided it
    dealer: str = Field(sa_type=Text)  # JSON: {"cards": [...], "total": n}
    hands: str = Field(sa_type=Text)  # JSON list of the round's hands


class EventRow(SQLModel, table=True):
    """One event as the table heard it: the append-only, hash-chained log."""

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_recorded_at", "table_id", "recorded_at"),
        Index("ix_events_type", "table_id", "type", "seq"),
    )

    table_id: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)  # 1 is the table line; no gaps
    type: str = Field(max_length=32)
    body: str = Field(sa_type=Text)  # canonical JSON of the event dict
    recorded_at: str = Field(max_length=40)  # ISO 8601 UTC, part of the hashed record
    corrects: int | None = None  # the sequence number of the event this one corrects
    prev_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64)


class FlagRow(SQLModel, table=True):
    """An irregularity the engine flagged when applying event ``seq``."""

    __tablename__ = "flags"

    table_id: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)
    idx: int = Field(primary_key=True)  # order among the flags of that event
    round: int | None = None
    rule: str = Field(max_length=16)
    box: int | None = None
    message: str = Field(sa_type=Text)


class SettlementRow(SQLModel, table=True):
    """One settlement row of a round (per player, box, hand and kind)."""

    __tablename__ = "settlements"
    __table_args__ = (Index("ix_settlements_seq", "table_id", "seq"),)

    table_id: str = Field(primary_key=True, max_length=64)
    round: int = Field(primary_key=True)
    idx: int = Field(primary_key=True)  # order within the round's settlements
    seq: int  # the event that settled the round
    player: str = Field(max_length=64)
    box: int
    hand: int
    kind: str = Field(max_length=16)
    staked: str = Field(max_length=32)
    returned: str = Field(max_length=32)
    net: str = Field(max_length=32)


class HeadRow(SQLModel, table=True):
    """A signed head of a table's Merkle log (see :mod:`controller.store.heads`)."""

    __tablename__ = "heads"
    __table_args__ = (Index("ix_heads_closes", "table_id", "closes"),)

    table_id: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)  # 0, 1, 2, ...: the heads of a table, in order
    size: int  # leaves under it: events 0 .. size - 1
    root: str = Field(max_length=64)  # the Merkle root of those leaves
    chain_head: str = Field(max_length=64)  # the record hash of event size - 1
    signed_at: str = Field(max_length=40)  # ISO 8601 UTC
    prev: str = Field(max_length=64)  # SHA-256 of the previous head's signed statement
    key_id: str = Field(max_length=64)  # SHA-256 of the signing key's raw public bytes
    signature: str = Field(max_length=128)  # Ed25519, base64, over the statement
    frontier: str = Field(sa_type=Text)  # JSON: the tree's compact range (unsigned, checked)
    # The round whose settling (or void) event is event size - 1, when this head marks it
    # (signed with the rest: see controller.store.heads)
    closes: int | None = None


class MerkleNodeRow(SQLModel, table=True):
    """The root of a perfect, aligned subtree of a table's Merkle log (see
    :mod:`controller.store.tree`): leaves ``idx * 2**level`` to ``(idx + 1) * 2**level - 1``."""

    __tablename__ = "merkle_nodes"

    table_id: str = Field(primary_key=True, max_length=64)
    level: int = Field(primary_key=True)
    idx: int = Field(primary_key=True, sa_type=BigInteger)
    hash: str = Field(max_length=64)


class TableKeyRow(SQLModel, table=True):
    """The floor's registry: each table's public key, registered once by a named supervisor."""

    __tablename__ = "table_keys"

    table_id: str = Field(primary_key=True, max_length=64)
    key_id: str = Field(max_length=64)
    public_key: str = Field(sa_type=Text)  # PEM
    registered_by: str = Field(max_length=64)
    registered_at: str = Field(max_length=40)


class CheckpointRow(SQLModel, table=True):
    """A table's state after event ``seq`` (see :mod:`controller.store.checkpoint`): written
    in the transaction of event ``seq + 1``, whose stored event names ``digest``, so the
    hash chain covers it."""

    __tablename__ = "checkpoints"

    table_id: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)  # the last event the state includes
    digest: str = Field(max_length=64)  # SHA-256 of ``state``
    state: str = Field(sa_type=Text)  # canonical JSON of the fold's snapshot


def table(name: str) -> SATable:
    """The SQLAlchemy Core table of one of the models above, by table name."""
    return SQLModel.metadata.tables[name]


TABLES: SATable = table("tables")
SHOES: SATable = table("shoes")
ROUNDS: SATable = table("rounds")
EVENTS: SATable = table("events")
FLAGS: SATable = table("flags")
SETTLEMENTS: SATable = table("settlements")
HEADS: SATable = table("heads")
TABLE_KEYS: SATable = table("table_keys")
MERKLE_NODES: SATable = table("merkle_nodes")
CHECKPOINTS: SATable = table("checkpoints")

# Every table of the store, in the order a copy must respect (all are insert-only).
ALL_TABLES: tuple[SATable, ...] = (
    TABLES,
    EVENTS,
    SHOES,
    ROUNDS,
    FLAGS,
    SETTLEMENTS,
    CHECKPOINTS,
)
