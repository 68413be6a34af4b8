"""Signed heads of each table's Merkle log, and the floor's registry of table keys.

Both insert-only, like the rest of the store (issue 12).

Revision ID: 0003_signed
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controller.store.migrations import guard_insert_only

revision: str = "0003_signed"
down_revision: str | None = "0002_checkpoints"
branch_labels: str | None = None
depends_on: str | None = None

INSERT_ONLY = ("heads", "table_keys")


def upgrade() -> None:
    op.create_table(
        "heads",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("root", sa.String(64), nullable=False),
        sa.Column("chain_head", sa.String(64), nullable=False),
        sa.Column("signed_at", sa.String(40), nullable=False),
        sa.Column("prev", sa.String(64), nullable=False),
        sa.Column("key_id", sa.String(64), nullable=False),
        sa.Column("signature", sa.String(128), nullable=False),
        sa.Column("frontier", sa.Text(), nullable=False),
    )
    op.create_table(
        "table_keys",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("key_id", sa.String(64), nullable=False),
        sa.Column("public_key", sa.Text(), nullable=False),
        sa.Column("registered_by", sa.String(64), nullable=False),
        sa.Column("registered_at", sa.String(40), nullable=False),
    )
    guard_insert_only(INSERT_ONLY)


def downgrade() -> None:
    raise RuntimeError("the audit store is append-only: its schema is never downgraded")
