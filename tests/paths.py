"""Where the tests' fixed inputs and services are. Everything read lives in the repository
(tests/data); the one service, PostgreSQL, is named by ``FLOORCTL_TEST_PG`` (``make test``
sets it to the server `.ci/ensure-postgres` found or started)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = DATA / "examples"  # the worked scenarios and their expected replay documents

PG_URL = os.environ.get("FLOORCTL_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
"""The test server's database, as SQLAlchemy takes it."""


def pg_conninfo(url: str = PG_URL) -> str:
    """``url`` as psycopg takes it (no ``+psycopg``)."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def pg_address(url: str = PG_URL) -> tuple[str, int]:
    """The test server's host and port."""
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 5432
