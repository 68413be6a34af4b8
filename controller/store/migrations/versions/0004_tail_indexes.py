"""Indexes for reading a table's derived rows by event: rounds by the event that closed them,
settlements by the event that settled them.

``ship`` checks only the events it has not shipped yet, and reads the derived rows of those
events (``Store.derived(first=..., last=...)``); without these, each such read walked all of
the table's rounds and settlements, growing with the table's whole life.

Revision ID: 0004_tail_indexes
Revises: 0003_signed
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision: str = "0004_tail_indexes"
down_revision: str | None = "0003_signed"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_rounds_closed_seq", "rounds", ["table_id", "closed_seq"])
    op.create_index("ix_settlements_seq", "settlements", ["table_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_settlements_seq", "settlements")
    op.drop_index("ix_rounds_closed_seq", "rounds")
