"""Round proofs: heads that mark a round's end, and the Merkle tree's subtree roots kept.

``heads.closes``: the recorder signs a head as each round ends, and ``closes`` (part of the
signed statement when set) names the round whose settling or void event is the head's last
event. Two such heads bound a round for ``floorctl prove``. Heads signed before this column
existed mark nothing.

``merkle_nodes``: the root of every perfect, aligned subtree of 256 leaves or more of a
table's log (see :mod:`controller.store.tree`), so a proof reads O(log n) rows. Insert-only
like the rest; a cache of what the events give, checked against the signed roots.

Revision ID: 0005_round_proofs
Revises: 0004_tail_indexes
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controller.store.migrations import guard_insert_only

revision: str = "0005_round_proofs"
down_revision: str | None = "0004_tail_indexes"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("heads", sa.Column("closes", sa.Integer(), nullable=True))
    op.create_index("ix_heads_closes", "heads", ["table_id", "closes"])
    op.create_table(
        "merkle_nodes",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("level", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("idx", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    guard_insert_only(("merkle_nodes",))


def downgrade() -> None:
    raise RuntimeError("the audit store is append-only: its schema is never downgraded")
