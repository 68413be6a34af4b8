"""The audit store: tables, shoes, rounds, events, flags, settlements; all insert-only.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controller.store.migrations import guard_insert_only

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

# Every table of the store refuses UPDATE and DELETE: the event log is append-only and the
# derived tables are written once per event or round. Corrections are new events.
INSERT_ONLY = ("tables", "shoes", "rounds", "events", "flags", "settlements")


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("setup", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.Column("corrects", sa.Integer(), nullable=True),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_events_recorded_at", "events", ["table_id", "recorded_at"])
    op.create_table(
        "shoes",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("decks", sa.Integer(), nullable=True),
        sa.Column("cut_card", sa.Integer(), nullable=True),
        sa.Column("deck_serials", sa.Text(), nullable=True),
    )
    op.create_table(
        "rounds",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("round", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("closed_seq", sa.Integer(), nullable=False),
        sa.Column("dealer", sa.Text(), nullable=False),
        sa.Column("hands", sa.Text(), nullable=False),
    )
    op.create_table(
        "flags",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("idx", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("round", sa.Integer(), nullable=True),
        sa.Column("rule", sa.String(16), nullable=False),
        sa.Column("box", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
    )
    op.create_table(
        "settlements",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("round", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("idx", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("box", sa.Integer(), nullable=False),
        sa.Column("hand", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("staked", sa.String(32), nullable=False),
        sa.Column("returned", sa.String(32), nullable=False),
        sa.Column("net", sa.String(32), nullable=False),
    )
    guard_insert_only(INSERT_ONLY, create_function=True)


def downgrade() -> None:
    raise RuntimeError("the audit store is append-only: its schema is never downgraded")
