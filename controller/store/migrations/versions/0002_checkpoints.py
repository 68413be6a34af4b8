"""Checkpoints: a table's state at a sequence number, bound into its hash chain.

Each row holds the state (the fold's snapshot, canonical JSON) after event ``seq`` and its
SHA-256; it is written in the transaction of event ``seq + 1``, whose stored event names that
digest (``"checkpoint"``), so the chain covers it. Insert-only, like every table of the store.
Also an index on the events' type, for the few lookups a restart makes by type (the last
``manual_mode`` of each device) without reading the whole log.

Revision ID: 0002_checkpoints
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controller.store.migrations import guard_insert_only

revision: str = "0002_checkpoints"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "checkpoints",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
    )
    op.create_index("ix_events_type", "events", ["table_id", "type", "seq"])
    guard_insert_only(("checkpoints",))


def downgrade() -> None:
    raise RuntimeError("the audit store is append-only: its schema is never downgraded")
