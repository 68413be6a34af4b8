"""Least privilege on the floor's PostgreSQL: ``floorctl floor init``, ``add-table`` and
``register-key``.

The floor keeps each table's log as that table signed it, and nothing else. Who may do what:

- the **owner** (``floorctl_owner``) owns the store's tables, their insert-only triggers, the
  floor's accounts and lookup log, and the migrations: only ``floor init`` and
  ``register-key`` connect as it;
- each **table** has a login role of its own (``floorctl floor add-table``), whose default
  ``search_path`` is the floor's *inbox* (a schema beside the store's, holding the same
  tables). It may SELECT and INSERT there, and row-level security limits both to its own
  table's rows: it cannot read or write another table's inbox, nor the floor's log at all.
  ``floorctl ship`` and a table recording straight to the floor connect as it, unchanged;
- the **ingest** role (``floorctl_ingest``, ``floorctl floor ingest``) reads every inbox and
  adds to the floor's log only the events of a table under a head signed by the key registered
  for that table, with their derived rows checked against a replay (it is ``ship``, run from
  the inbox to the log). It may SELECT and INSERT the log; nothing else;
- the **floor** role (``floorctl_floor``: ``floor serve``, ``index`` and the other ``floor``
  commands) may only SELECT the log; it owns the read model (which it rebuilds at will), adds
  accounts and lookups, and can neither change the log nor switch off a trigger.

Passwords are the administrator's to set (``ALTER ROLE ... PASSWORD ...``); on a loopback
``trust`` setup none is needed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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
# The floor's read model, owned by the floor role (it truncates and rebuilds it; the indexer
# creates each month's partitions of the two partitioned ones).
FLOOR_OWNED = (
    "floor_meta",
    "floor_tables",
    "floor_rounds",
    "floor_flags",
    "floor_shoes",
    "floor_tray",
    "floor_checkpoints",
)
# The floor's own records that the floor role adds to but the owner keeps.
FLOOR_KEPT = {"floor_users": "SELECT, INSERT, UPDATE", "floor_lookups": "SELECT, INSERT"}
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# What the ingest did with each table's inbox, each time that changed: insert-only, written by
# the ingest role, read by the floor's pages (a refused inbox is shown, with why).
INGEST_LOG_SQL = """
CREATE TABLE IF NOT EXISTS ingest_log (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    table_id text NOT NULL,
    outcome text NOT NULL,          -- 'ok' or 'refused: why'
    upto bigint                     -- the record's last event of the table then
);
CREATE INDEX IF NOT EXISTS ingest_log_by_table ON ingest_log (table_id, id);
DROP TRIGGER IF EXISTS ingest_log_no_change ON ingest_log;
CREATE TRIGGER ingest_log_no_change BEFORE UPDATE OR DELETE ON ingest_log
  FOR EACH ROW EXECUTE FUNCTION floorctl_insert_only();
DROP TRIGGER IF EXISTS ingest_log_no_truncate ON ingest_log;
CREATE TRIGGER ingest_log_no_truncate BEFORE TRUNCATE ON ingest_log
  FOR EACH STATEMENT EXECUTE FUNCTION floorctl_insert_only();
"""

# The witness's guards: a head must name the table's registered key, and a table's events are
# taken only once its key is registered. Created in the log's schema and in the inbox's (each
# schema's own copy, which reads that schema's key registry).
WITNESS_SQL = """
CREATE OR REPLACE FUNCTION {schema}.floorctl_witnessed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'heads' THEN
    IF NOT EXISTS (SELECT 1 FROM {schema}.table_keys k
                   WHERE k.table_id = NEW.table_id AND k.key_id = NEW.key_id) THEN
      RAISE EXCEPTION 'head % of table % names key %, not the table''s registered key',
        NEW.seq, NEW.table_id, left(NEW.key_id, 16);
    END IF;
  ELSIF NOT EXISTS (SELECT 1 FROM {schema}.table_keys k WHERE k.table_id = NEW.table_id) THEN
    RAISE EXCEPTION 'table % has no registered key on the floor (floorctl floor register-key)',
      NEW.table_id;
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS heads_witnessed ON {schema}.heads;
CREATE TRIGGER heads_witnessed BEFORE INSERT ON {schema}.heads
  FOR EACH ROW EXECUTE FUNCTION {schema}.floorctl_witnessed();
DROP TRIGGER IF EXISTS events_witnessed ON {schema}.events;
CREATE TRIGGER events_witnessed BEFORE INSERT ON {schema}.events
  FOR EACH ROW EXECUTE FUNCTION {schema}.floorctl_witnessed();
"""


def inbox_name(schema: str) -> str:
    """The inbox schema beside the store's schema ``schema``."""
    return "floorctl_inbox" if schema == "public" else f"{schema}_inbox"[:63]


def inbox_of(conn: Any) -> str | None:
    """The inbox schema of the store the connection's search_path names, if the floor has one
    (``floor init`` made it)."""
    schema = str(conn.exec_driver_sql("SELECT current_schema()").scalar())
    inbox = inbox_name(schema)
    found = conn.exec_driver_sql(
        "SELECT to_regclass(%(t)s) IS NOT NULL", {"t": f'"{inbox}".table_roles'}
    ).scalar()
    return inbox if found else None


def in_inbox(conn: Any) -> bool:
    """Whether the connection's search_path is a floor's inbox (a table's role)."""
    return bool(
        conn.exec_driver_sql(
            "SELECT to_regclass(quote_ident(current_schema()) || '.table_roles') IS NOT NULL"
        ).scalar()
    )


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _role(conn: Any, name: str) -> bool:
    return (
        conn.exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(n)s", {"n": name}).first()
        is not None
    )


def _exec_ddl(conn: Any, ddl: str) -> None:
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(ddl)  # no parameters: the DDL's own % signs stay as written
    finally:
        cursor.close()


def _migrate(conn: Any) -> bool:
    """Bring the schema the search_path names to the newest migration; whether it did."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext

    from controller.store.db import MIGRATIONS, head_revision

    if MigrationContext.configure(conn).get_current_revision() == head_revision():
        return False
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    command.upgrade(config, "head")
    return True


def _policies(inbox: str, ingest: str) -> str:
    """Row-level security on each of the inbox's tables: a table's role sees and adds only its
    own table's rows; the ingest role reads them all."""
    mine = (
        f"table_id IN (SELECT r.table_id FROM {_q(inbox)}.table_roles r "
        "WHERE r.role = current_user)"
    )
    parts = []
    for table in STORE_TABLES:
        name = f"{_q(inbox)}.{_q(table)}"
        parts.append(
            f"ALTER TABLE {name} ENABLE ROW LEVEL SECURITY;\n"
            f"DROP POLICY IF EXISTS own_table ON {name};\n"
            f"CREATE POLICY own_table ON {name} FOR ALL TO PUBLIC USING ({mine}) "
            f"WITH CHECK ({mine});\n"
            f"DROP POLICY IF EXISTS ingest_reads ON {name};\n"
            f"CREATE POLICY ingest_reads ON {name} FOR SELECT TO {_q(ingest)} USING (true);\n"
        )
    return "".join(parts)


def _writers_of_the_log(conn: Any, schema: str, keep: set[str]) -> list[str]:
    """Roles other than ``keep`` holding any right on the store's tables in ``schema``."""
    rows = conn.exec_driver_sql(
        "SELECT DISTINCT a.grantee::regrole::text FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a "
        "WHERE n.nspname = %(s)s AND c.relname = ANY(%(t)s) AND a.grantee <> 0 "
        "AND a.grantee <> c.relowner",
        {"s": schema, "t": list(STORE_TABLES + READ_ONLY)},
    ).all()
    return sorted(str(r[0]).strip('"') for r in rows if str(r[0]).strip('"') not in keep)


@contextmanager
def _floor_transaction(url: str, command: str) -> Iterator[Any]:
    """One transaction on the floor's PostgreSQL database for ``floorctl floor COMMAND``; its
    database errors become :class:`~controller.store.db.StoreError` naming the database."""
    import sqlalchemy as sa

    from controller.store.db import StoreError, create_engine, describe, safe_url

    engine = create_engine(url)
    try:
        if engine.dialect.name != "postgresql":
            raise StoreError(f"database {safe_url(url)}: floor {command} is for PostgreSQL")
        with engine.begin() as conn:
            yield conn
    except sa.exc.DBAPIError as exc:
        raise StoreError(f"database {safe_url(url)}: {describe(exc)}") from exc
    finally:
        engine.dispose()


def init_floor(url: str, owner: str, ingest: str, floor: str) -> list[str]:
    """Create the roles, the inbox and the guards; lines saying what was done."""
    from controller.floor.schema import ensure_floor_tables
    from controller.store.db import MIGRATION_LOCK, StoreError, head_revision

    names = (owner, ingest, floor)
    for name in names:
        if not _NAME.match(name):
            raise StoreError(f"role name {name!r}: use lower-case letters, digits and _")
    if len(set(names)) != 3:
        raise StoreError("the owner, ingest and floor roles must be three roles")
    done: list[str] = []
    with _floor_transaction(url, "init") as conn:
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        for name in names:
            if _role(conn, name):
                done.append(f"role {name} exists")
            else:
                conn.exec_driver_sql(f"CREATE ROLE {_q(name)} LOGIN")
                done.append(f"role {name} created")
        for name in (ingest, floor):
            conn.exec_driver_sql(f"ALTER ROLE {_q(name)} NOSUPERUSER NOCREATEDB NOCREATEROLE")
        schema = str(conn.exec_driver_sql("SELECT current_schema()").scalar())
        inbox = inbox_name(schema)
        path = str(conn.exec_driver_sql("SHOW search_path").scalar())
        # Only the floor's own roles may make objects in the store's schema (PostgreSQL
        # before 15 lets everyone).
        conn.exec_driver_sql(f"REVOKE CREATE ON SCHEMA {_q(schema)} FROM PUBLIC")
        conn.exec_driver_sql(f"GRANT USAGE, CREATE ON SCHEMA {_q(schema)} TO {_q(owner)}")
        conn.exec_driver_sql(f"GRANT USAGE ON SCHEMA {_q(schema)} TO {_q(ingest)}, {_q(floor)}")
        # The floor role creates each month's partitions of its read model.
        conn.exec_driver_sql(f"GRANT CREATE ON SCHEMA {_q(schema)} TO {_q(floor)}")
        conn.exec_driver_sql(f"REVOKE CREATE ON SCHEMA {_q(schema)} FROM {_q(ingest)}")
        # Let the administrator act as the owner and the floor role (to hand them objects).
        conn.exec_driver_sql(f"GRANT {_q(owner)}, {_q(floor)} TO CURRENT_USER")
        if conn.exec_driver_sql("SELECT to_regclass('events') IS NOT NULL").scalar():
            for table in (*STORE_TABLES, *READ_ONLY):
                if conn.exec_driver_sql(
                    "SELECT to_regclass(%(t)s) IS NOT NULL", {"t": table}
                ).scalar():
                    conn.exec_driver_sql(f"ALTER TABLE {_q(table)} OWNER TO {_q(owner)}")
            conn.exec_driver_sql(f"ALTER FUNCTION floorctl_insert_only() OWNER TO {_q(owner)}")
            for (name,) in conn.exec_driver_sql(
                "SELECT tablename FROM pg_tables WHERE schemaname = %(s)s "
                "AND tablename LIKE 'floor%%'",
                {"s": schema},
            ).all():
                conn.exec_driver_sql(f"ALTER TABLE {_q(name)} OWNER TO {_q(owner)}")
            if conn.exec_driver_sql(
                "SELECT to_regprocedure('floor_lookups_insert_only()') IS NOT NULL"
            ).scalar():
                conn.exec_driver_sql(
                    f"ALTER FUNCTION floor_lookups_insert_only() OWNER TO {_q(owner)}"
                )
            done.append(f"the store's tables in schema {schema} now belong to {owner}")
        conn.exec_driver_sql(f"CREATE SCHEMA IF NOT EXISTS {_q(inbox)} AUTHORIZATION {_q(owner)}")
        conn.exec_driver_sql(f"ALTER SCHEMA {_q(inbox)} OWNER TO {_q(owner)}")

        conn.exec_driver_sql(f"SET LOCAL ROLE {_q(owner)}")
        if _migrate(conn):
            done.append(f"the store's schema created (as {owner}) at {head_revision()}")
        _exec_ddl(conn, WITNESS_SQL.replace("{schema}", _q(schema)))
        done.append("heads must name the table's registered key; events need a registered key")
        _exec_ddl(conn, INGEST_LOG_SQL)
        ensure_floor_tables(conn)
        # The inbox: the store's tables again, in a schema of their own.
        conn.exec_driver_sql(f"SET LOCAL search_path TO {_q(inbox)}")
        if _migrate(conn):
            done.append(f"the inbox {inbox} created (as {owner}) at {head_revision()}")
        conn.exec_driver_sql(f"SET LOCAL search_path TO {path}")
        conn.exec_driver_sql(
            f"CREATE TABLE IF NOT EXISTS {_q(inbox)}.table_roles (role text PRIMARY KEY, "
            "table_id text NOT NULL UNIQUE, added_at timestamptz NOT NULL DEFAULT now())"
        )
        _exec_ddl(conn, WITNESS_SQL.replace("{schema}", _q(inbox)))
        conn.exec_driver_sql(
            f"INSERT INTO {_q(inbox)}.table_keys SELECT * FROM {_q(schema)}.table_keys "
            "ON CONFLICT DO NOTHING"
        )
        _exec_ddl(conn, _policies(inbox, ingest))
        done.append(
            f"each table writes only its own rows of the inbox {inbox} "
            "(floorctl floor add-table gives it a role)"
        )
        conn.exec_driver_sql("RESET ROLE")

        # The floor role owns its read model; the owner keeps accounts and the lookup log.
        for (name,) in conn.exec_driver_sql(
            "SELECT tablename FROM pg_tables WHERE schemaname = %(s)s AND tablename LIKE 'floor%%'",
            {"s": schema},
        ).all():
            if name in FLOOR_KEPT:
                conn.exec_driver_sql(f"ALTER TABLE {_q(name)} OWNER TO {_q(owner)}")
                conn.exec_driver_sql(f"REVOKE ALL ON {_q(name)} FROM {_q(floor)}")
                conn.exec_driver_sql(f"GRANT {FLOOR_KEPT[name]} ON {_q(name)} TO {_q(floor)}")
            else:
                conn.exec_driver_sql(f"ALTER TABLE {_q(name)} OWNER TO {_q(floor)}")
        conn.exec_driver_sql(f"GRANT USAGE, SELECT ON SEQUENCE floor_lookups_id_seq TO {_q(floor)}")
        done.append(f"{floor} owns the read model and may add accounts and lookups")

        # The log: the ingest role adds to it, the floor role reads it, no one else.
        for stranger in _writers_of_the_log(conn, schema, {owner}):
            conn.exec_driver_sql(
                "REVOKE ALL ON "
                + ", ".join(_q(t) for t in (*STORE_TABLES, *READ_ONLY))
                + f" FROM {_q(stranger)}"
            )
            if stranger not in names:
                done.append(f"{stranger} may no longer touch the floor's log")
        log = ", ".join(_q(t) for t in STORE_TABLES)
        fixed = ", ".join(_q(t) for t in READ_ONLY)
        conn.exec_driver_sql(f"GRANT SELECT, INSERT ON {log} TO {_q(ingest)}")
        conn.exec_driver_sql(f"GRANT SELECT ON {log}, {fixed} TO {_q(floor)}")
        conn.exec_driver_sql(f"GRANT SELECT ON {fixed} TO {_q(ingest)}")
        conn.exec_driver_sql(f"REVOKE ALL ON ingest_log FROM {_q(ingest)}, {_q(floor)}")
        conn.exec_driver_sql(f"GRANT SELECT, INSERT ON ingest_log TO {_q(ingest)}")
        conn.exec_driver_sql(f"GRANT USAGE ON SEQUENCE ingest_log_id_seq TO {_q(ingest)}")
        conn.exec_driver_sql(f"GRANT SELECT ON ingest_log TO {_q(floor)}")
        conn.exec_driver_sql(f"GRANT USAGE ON SCHEMA {_q(inbox)} TO {_q(ingest)}")
        inbox_tables = ", ".join(f"{_q(inbox)}.{_q(t)}" for t in (*STORE_TABLES, *READ_ONLY))
        conn.exec_driver_sql(f"GRANT SELECT ON {inbox_tables} TO {_q(ingest)}")
        done.append(
            f"{ingest} may SELECT the inbox and SELECT and INSERT the log; {floor} may only "
            "SELECT the log"
        )
    return done


def add_table(url: str, table_id: str, role: str) -> list[str]:
    """Give a table a login role of its own that writes only its rows of the inbox."""
    from controller.store.db import StoreError, safe_url

    if not _NAME.match(role):
        raise StoreError(f"role name {role!r}: use lower-case letters, digits and _")
    if not table_id or len(table_id) > 64 or not table_id.isprintable():
        raise StoreError(f"table id {table_id!r}: 1 to 64 printable characters")
    done: list[str] = []
    with _floor_transaction(url, "add-table") as conn:
        inbox = inbox_of(conn)
        if inbox is None:
            raise StoreError(
                f"database {safe_url(url)} has no inbox: run floorctl floor init first"
            )
        database = str(conn.exec_driver_sql("SELECT current_database()").scalar())
        owner = str(
            conn.exec_driver_sql(
                "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = %(n)s",
                {"n": inbox},
            ).scalar()
        ).strip('"')
        held = conn.exec_driver_sql(
            f"SELECT role, table_id FROM {_q(inbox)}.table_roles "
            "WHERE role = %(r)s OR table_id = %(t)s",
            {"r": role, "t": table_id},
        ).all()
        for other_role, other_table in held:
            if other_role == role and other_table != table_id:
                raise StoreError(f"role {role} is table {other_table}'s: one role per table")
            if other_table == table_id and other_role != role:
                raise StoreError(
                    f"table {table_id} already writes as {other_role}: one role per table"
                )
        if _role(conn, role):
            row = conn.exec_driver_sql(
                "SELECT rolsuper OR rolcreaterole OR rolbypassrls FROM pg_roles "
                "WHERE rolname = %(n)s",
                {"n": role},
            ).scalar()
            if row or role == owner:
                raise StoreError(f"role {role} is privileged: a table's role must be its own")
            done.append(f"role {role} exists")
        else:
            conn.exec_driver_sql(f"CREATE ROLE {_q(role)} LOGIN")
            done.append(f"role {role} created")
        conn.exec_driver_sql(
            f"ALTER ROLE {_q(role)} NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS"
        )
        conn.exec_driver_sql(f"SET LOCAL ROLE {_q(owner)}")
        conn.exec_driver_sql(
            f"INSERT INTO {_q(inbox)}.table_roles (role, table_id) VALUES (%(r)s, %(t)s) "
            "ON CONFLICT DO NOTHING",
            {"r": role, "t": table_id},
        )
        conn.exec_driver_sql(f"GRANT USAGE ON SCHEMA {_q(inbox)} TO {_q(role)}")
        tables = ", ".join(f"{_q(inbox)}.{_q(t)}" for t in STORE_TABLES)
        fixed = ", ".join(f"{_q(inbox)}.{_q(t)}" for t in (*READ_ONLY, "table_roles"))
        conn.exec_driver_sql(f"GRANT SELECT, INSERT ON {tables} TO {_q(role)}")
        conn.exec_driver_sql(f"GRANT SELECT ON {fixed} TO {_q(role)}")
        conn.exec_driver_sql("RESET ROLE")
        conn.exec_driver_sql(
            f"ALTER ROLE {_q(role)} IN DATABASE {_q(database)} SET search_path TO {_q(inbox)}"
        )
        done.append(
            f"{role} may SELECT and INSERT table {table_id}'s rows of the inbox {inbox}, "
            "and nothing else"
        )
    return done


# ----- the commands -------------------------------------------------------------------------


def default_role(table_id: str) -> str:
    """The login role ``add-table`` makes for a table unless told another."""
    slug = re.sub(r"[^a-z0-9_]", "_", table_id.lower())
    return f"floorctl_table_{slug}"[:63]


def _init(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError

    try:
        lines = init_floor(args.db, args.owner, args.ingest, args.floor_role)
    except StoreError as exc:
        print(f"floorctl floor init: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    print(
        f"give each table a role of its own (floorctl floor add-table); run floorctl floor "
        f"ingest as {args.ingest}, the floor's pages and commands as {args.floor_role}, and "
        f"register-key as {args.owner}"
    )
    return 0


def _add_table(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError

    role = args.role or default_role(args.table)
    try:
        lines = add_table(args.db, args.table, role)
    except StoreError as exc:
        print(f"floorctl floor add-table: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    print(f"table {args.table}: ship (FLOORCTL_FLOOR_URL) and record as {role}")
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
    """Add ``floor init``, ``add-table`` and ``register-key`` to the ``floor`` command."""
    p = sub.add_parser(
        "init",
        help="prepare the floor database: its roles, the tables' inbox, the guards",
        description="Create the owner role (owns the log, its triggers and the migrations), "
        "the ingest role (adds to the log only what a table's registered key signed) and the "
        "floor role (reads the log, owns the read model), and the inbox the tables ship to. "
        "Run once, as the database administrator; running it again applies new migrations.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the floor database, as its admin")
    p.add_argument("--owner", default="floorctl_owner", help="the owner role (floorctl_owner)")
    p.add_argument("--ingest", default="floorctl_ingest", help="the ingest role (floorctl_ingest)")
    p.add_argument(
        "--floor-role", default="floorctl_floor", help="the floor's service role (floorctl_floor)"
    )
    p.set_defaults(func=_init)

    p = sub.add_parser(
        "add-table",
        help="give a table its own role, which writes only that table's inbox",
        description="Create a login role for one table: it may read and add only that "
        "table's rows of the floor's inbox, so a table PC's credential cannot write another "
        "table's record. Run as the database administrator, after floor init.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the floor database, as its admin")
    p.add_argument("--table", required=True, help="the table's id")
    p.add_argument("--role", help="the role's name (floorctl_table_ and the table id)")
    p.set_defaults(func=_add_table)

    p = sub.add_parser(
        "register-key",
        help="register a table's public key on the floor, once",
        description="Record a table's public key (table.pub from floorctl keygen) in the "
        "floor's registry, naming the supervisor who registered it. A key is registered once "
        "and never changed; the floor then takes in only what that key signed.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the floor database (as owner)")
    p.add_argument("--table", required=True, help="the table's id")
    p.add_argument("--key", required=True, metavar="FILE", help="the table's table.pub")
    p.add_argument("--by", required=True, metavar="NAME", help="the supervisor registering it")
    p.set_defaults(func=_register_key)
