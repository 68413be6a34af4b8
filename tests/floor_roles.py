"""A floor database of its own, prepared as the administrator prepares it (`floorctl floor
init`, `add-table`), and connections as each of its roles."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import paths
import psycopg

from controller.cli import main


class FloorDb:
    """A fresh database and the (cluster-wide, so uniquely named) roles made on it."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:10]
        self.tag = tag
        self.name = f"signed_{tag}"
        self.owner = f"signed_owner_{tag}"
        self.ingest = f"signed_ingest_{tag}"
        self.floor = f"signed_floor_{tag}"
        self.tables: dict[str, str] = {}  # table id -> its role
        root = paths.PG_URL.rsplit("/", 1)[0]
        self.host = root.split("@", 1)[1]
        self.admin = f"{root}/{self.name}"

    def url(self, role: str) -> str:
        return f"postgresql+psycopg://{role}@{self.host}/{self.name}"

    @property
    def owner_url(self) -> str:
        return self.url(self.owner)

    @property
    def ingest_url(self) -> str:
        return self.url(self.ingest)

    @property
    def floor_url(self) -> str:
        return self.url(self.floor)

    def table_url(self, table_id: str) -> str:
        return self.url(self.tables[table_id])

    def init(self) -> int:
        return main(
            [
                "floor",
                "init",
                "--db",
                self.admin,
                "--owner",
                self.owner,
                "--ingest",
                self.ingest,
                "--floor-role",
                self.floor,
            ]
        )

    def add_table(self, table_id: str) -> int:
        role = f"signed_t_{table_id.lower()}_{self.tag}"
        status = main(
            ["floor", "add-table", "--db", self.admin, "--table", table_id, "--role", role]
        )
        if status == 0:
            self.tables[table_id] = role
        return status

    def ingest_now(self) -> int:
        return main(["floor", "ingest", "--db", self.ingest_url])

    def connect(self, role: str) -> psycopg.Connection[Any]:
        return psycopg.connect(paths.pg_conninfo(self.url(role)), autocommit=True)

    def connect_admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(paths.pg_conninfo(self.admin), autocommit=True)

    def drop(self) -> None:
        base = paths.pg_conninfo(paths.PG_URL)
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            for role in (*self.tables.values(), self.owner, self.ingest, self.floor):
                conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def floor_db() -> Iterator[FloorDb]:
    db = FloorDb()
    with psycopg.connect(paths.pg_conninfo(paths.PG_URL), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db.name}"')
    try:
        yield db
    finally:
        db.drop()
