"""Alembic environment for the audit store.

The store runs migrations itself (``controller.store.db.migrate``), handing Alembic an open
connection in ``config.attributes["connection"]``; no alembic.ini is needed.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import controller.store.schema  # noqa: F401  (registers the tables on the metadata)

target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError(
            "controller.store migrations need an open connection in "
            "config.attributes['connection']; run them through controller.store.db.migrate()"
        )
    context.configure(connection=connection, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("controller.store migrations run online only")
run_migrations_online()
