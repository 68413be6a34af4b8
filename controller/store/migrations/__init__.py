"""The audit store's Alembic migrations (``versions/``), and what they share."""

from __future__ import annotations

from collections.abc import Iterable


def guard_insert_only(names: Iterable[str], *, create_function: bool = False) -> None:
    """Make each named table insert-only in the database itself: SQLite triggers refusing
    UPDATE and DELETE; on PostgreSQL, triggers calling ``floorctl_insert_only()`` before
    UPDATE, DELETE and TRUNCATE (the initial migration creates that function:
    ``create_function``). The trigger names are what ``verify --key`` checks."""
    from alembic import op

    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in names:
            for verb in ("UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {name}_no_{verb.lower()} BEFORE {verb} ON {name} "
                    f"BEGIN SELECT RAISE(ABORT, '{name} is append-only: {verb} refused'); END"
                )
    elif dialect == "postgresql":
        if create_function:
            op.execute(
                "CREATE FUNCTION floorctl_insert_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
                "BEGIN RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP; "
                "END $$"
            )
        for name in names:
            op.execute(
                f"CREATE TRIGGER {name}_no_change BEFORE UPDATE OR DELETE ON {name} "
                "FOR EACH ROW EXECUTE FUNCTION floorctl_insert_only()"
            )
            op.execute(
                f"CREATE TRIGGER {name}_no_truncate BEFORE TRUNCATE ON {name} "
                "FOR EACH STATEMENT EXECUTE FUNCTION floorctl_insert_only()"
            )
    else:
        raise RuntimeError(f"audit store: unsupported database {dialect!r}")
