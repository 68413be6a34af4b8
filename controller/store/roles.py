"""Least privilege on the floor's PostgreSQL: ``floorctl floor init`` and ``register-key``.

``floorctl floor init --db ADMIN_URL [--owner floorctl_owner] [--writer floorctl_writer]``,
run once by the database administrator (a superuser, or a role that may create roles):

- creates the **owner** role (LOGIN): it owns the store's tables, their insert-only triggers
  and the migrations; the floor's service (``floorctl floor serve``, ``index``) and
  ``floorctl floor register-key`` connect as it;
- creates the **writer** role (LOGIN), which may only ``SELECT`` and ``INSERT`` the store's
  tables and only ``SELECT`` the key registry: no UPDATE, DELETE, TRUNCATE, TRIGGER, or ALTER
  (a role that does not own a table cannot disable its triggers). The table service (a table
  writing straight to PostgreSQL) and ``floorctl ship`` connect as the writer;
- creates (as the owner) or takes over the store's schema (and the floor's read model), and
  adds the witness's guards in the database: a head is refused unless it names the table's
  registered key, and an event is refused for a table with no registered key.

Passwords are the administrator's to set (``ALTER ROLE floorctl_writer PASSWORD ...``); on a
loopback ``trust`` setup none is needed.

``floorctl floor register-key --db OWNER_URL --table T --key table.pub --by NAME`` registers a
table's public key, once, naming the supervisor who did it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

# (SQLAlchemy and Alembic are imported when a command runs: `floorctl floor` lists this
# module's commands without them.)

STORE_TABLES = (
    "tables",
    "events",
    "shoes",
    "rounds",
    "flags",
    "settlements",
    "checkpoints",
    "heads",
    "merkle_nodes",
)
READ_ONLY = ("table_keys", "alembic_version")
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# The witness's guards, owned by the owner role: a head must name the table's registered key,
# and a table's events are taken only once its key is registered.
WITNESS_SQL = """
CREATE OR REPLACE FUNCTION floorctl_witnessed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'heads' THEN
    IF NOT EXISTS (SELECT 1 FROM table_keys k
                   WHERE k.table_id = NEW.table_id AND k.key_id = NEW.key_id) THEN
      RAISE EXCEPTION 'head % of table % names key %, not the table''s registered key',
        NEW.seq, NEW.table_id, left(NEW.key_id, 16);
    END IF;
  ELSIF NOT EXISTS (SELECT 1 FROM table_keys k WHERE k.table_id = NEW.table_id) THEN
    RAISE EXCEPTION 'table % has no registered key on the floor (floorctl floor register-key)',
      NEW.table_id;
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS heads_witnessed ON heads;
CREATE TRIGGER heads_witnessed BEFORE INSERT ON heads
  FOR EACH ROW EXECUTE FUNCTION floorctl_witnessed();
DROP TRIGGER IF EXISTS events_witnessed ON events;
CREATE TRIGGER events_witnessed BEFORE INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION floorctl_witnessed();
"""


def _role(conn: Any, name: str) -> bool:
    return (
        conn.exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(n)s", {"n": name}).first()
        is not None
    )


def init_floor(url: str, owner: str, writer: str) -> list[str]:
    """Create the roles and hand the store's schema to the owner; lines saying what was done."""
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext

    from controller.store.db import (
        MIGRATION_LOCK,
        MIGRATIONS,
        StoreError,
        create_engine,
        describe,
        head_revision,
        safe_url,
    )

    for name in (owner, writer):
        if not _NAME.match(name):
            raise StoreError(f"role name {name!r}: use lower-case letters, digits and _")
    if owner == writer:
        raise StoreError("the owner and the writer must be two roles")
    engine = create_engine(url)
    if engine.dialect.name != "postgresql":
        engine.dispose()
        raise StoreError(f"database {safe_url(url)}: floor init is for PostgreSQL")
    done: list[str] = []
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            for name in (owner, writer):
                if _role(conn, name):
                    done.append(f"role {name} exists")
                else:
                    conn.exec_driver_sql(f'CREATE ROLE "{name}" LOGIN')
                    done.append(f"role {name} created")
            conn.exec_driver_sql(f'ALTER ROLE "{writer}" NOSUPERUSER NOCREATEDB NOCREATEROLE')
            schema = str(conn.exec_driver_sql("SELECT current_schema()").scalar())
            conn.exec_driver_sql(f'GRANT USAGE, CREATE ON SCHEMA "{schema}" TO "{owner}"')
            conn.exec_driver_sql(f'GRANT USAGE ON SCHEMA "{schema}" TO "{writer}"')
            conn.exec_driver_sql(f'REVOKE CREATE ON SCHEMA "{schema}" FROM "{writer}"')
            # Let the administrator act as the owner (to create and take over its objects).
            conn.exec_driver_sql(f'GRANT "{owner}" TO CURRENT_USER')
            exists = conn.exec_driver_sql("SELECT to_regclass('events') IS NOT NULL").scalar()
            if exists:
                for table in (*STORE_TABLES, *READ_ONLY):
                    if conn.exec_driver_sql(
                        "SELECT to_regclass(%(t)s) IS NOT NULL", {"t": table}
                    ).scalar():
                        conn.exec_driver_sql(f'ALTER TABLE "{table}" OWNER TO "{owner}"')
                conn.exec_driver_sql(f'ALTER FUNCTION floorctl_insert_only() OWNER TO "{owner}"')
                for (name,) in conn.exec_driver_sql(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %(s)s "
                    "AND tablename LIKE 'floor%%'",
                    {"s": schema},
                ).all():
                    conn.exec_driver_sql(f'ALTER TABLE "{name}" OWNER TO "{owner}"')
                done.append(f"the store's tables in schema {schema} now belong to {owner}")
            conn.exec_driver_sql(f'SET LOCAL ROLE "{owner}"')
            current = MigrationContext.configure(conn).get_current_revision()
            if current != head_revision():
                config = Config()
                config.set_main_option("script_location", str(MIGRATIONS))
                config.attributes["connection"] = conn
                command.upgrade(config, "head")
                done.append(f"the store's schema created (as {owner}) at {head_revision()}")
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.execute(WITNESS_SQL)  # no parameters: its % signs are PL/pgSQL's
            finally:
                cursor.close()
            done.append("heads must name the table's registered key; events need a registered key")
            conn.exec_driver_sql("RESET ROLE")
            for table in (*STORE_TABLES, *READ_ONLY):
                conn.exec_driver_sql(f'REVOKE ALL ON "{table}" FROM "{writer}"')
            conn.exec_driver_sql(
                "GRANT SELECT, INSERT ON "
                + ", ".join(f'"{t}"' for t in STORE_TABLES)
                + f' TO "{writer}"'
            )
            conn.exec_driver_sql(
                "GRANT SELECT ON " + ", ".join(f'"{t}"' for t in READ_ONLY) + f' TO "{writer}"'
            )
            done.append(
                f"{writer} may SELECT and INSERT {', '.join(STORE_TABLES)}, and SELECT "
                f"{', '.join(READ_ONLY)}; nothing else"
            )
    except sa.exc.DBAPIError as exc:
        raise StoreError(f"database {safe_url(url)}: {describe(exc)}") from exc
    finally:
        engine.dispose()
    return done


# ----- the commands -------------------------------------------------------------------------


def _init(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError

    try:
        lines = init_floor(args.db, args.owner, args.writer)
    except StoreError as exc:
        print(f"floorctl floor init: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    print(
        f"connect the table service and floorctl ship as {args.writer}, the floor's service "
        f"and register-key as {args.owner}"
    )
    return 0


def _register_key(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError
    from controller.store.keys import load_public_key
    from controller.store.repository import Store
    from controller.store.witness import register_key

    try:
        key = load_public_key(Path(args.key))
        with Store.open(args.db, create=False) as store:
            register_key(store, args.table, key, args.by)
    except StoreError as exc:
        print(f"floorctl floor register-key: {exc}", file=sys.stderr)
        return 2
    print(f"table {args.table}: key {key.key_id} registered by {args.by}")
    return 0


def register_init(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``floor init`` and ``floor register-key`` to the ``floor`` command."""
    p = sub.add_parser(
        "init",
        help="create the floor database's owner and writer roles (least privilege)",
        description="Create an owner role (owns the store's tables and triggers) and a writer "
        "role that may only SELECT and INSERT them, for the table service and floorctl ship. "
        "Run once, as the database administrator.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the floor database, as its admin")
    p.add_argument("--owner", default="floorctl_owner", help="the owner role (floorctl_owner)")
    p.add_argument("--writer", default="floorctl_writer", help="the writer role (floorctl_writer)")
    p.set_defaults(func=_init)

    p = sub.add_parser(
        "register-key",
        help="register a table's public key on the floor, once",
        description="Record a table's public key (table.pub from floorctl keygen) in the "
        "floor's registry, naming the supervisor who registered it. A key is registered once "
        "and never changed; ship then refuses a log it does not check.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the floor database (as owner)")
    p.add_argument("--table", required=True, help="the table's id")
    p.add_argument("--key", required=True, metavar="FILE", help="the table's table.pub")
    p.add_argument("--by", required=True, metavar="NAME", help="the supervisor registering it")
    p.set_defaults(func=_register_key)
