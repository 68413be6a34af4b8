"""What an intruder holding the database's owner rights does first: switch the guards off."""

from __future__ import annotations

import sqlalchemy as sa

from controller.store.heads import GUARDED
from controller.store.repository import Store


def unguard(store: Store, conn: sa.Connection) -> None:
    """Drop every trigger (SQLite) or disable the user triggers of every guarded table
    (PostgreSQL), as the owner of the tables may."""
    if store.dialect == "sqlite":
        for (name,) in conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).all():
            conn.exec_driver_sql(f"DROP TRIGGER {name}")
    else:
        for table in GUARDED:
            conn.exec_driver_sql(f"ALTER TABLE {table} DISABLE TRIGGER USER")


def reguard(store: Store) -> None:
    """... and last, puts them back as the migrations made them, so nothing looks amiss."""
    with store.engine.begin() as conn:
        for table in GUARDED:
            if store.dialect != "sqlite":
                conn.exec_driver_sql(f"ALTER TABLE {table} ENABLE TRIGGER USER")
                continue
            for verb in ("UPDATE", "DELETE"):
                conn.exec_driver_sql(
                    f"CREATE TRIGGER {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: {verb} refused'); END"
                )
