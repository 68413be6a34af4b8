"""Registering a table's public key on the floor, as a supervisor does it (the CLI)."""

from __future__ import annotations

from pathlib import Path

from controller.cli import main


def register_key(db: str, table: str, public: Path, by: str = "sup-anna") -> int:
    """``floorctl floor register-key``; its exit status."""
    return main(
        ["floor", "register-key", "--db", db, "--table", table, "--key", str(public), "--by", by]
    )
