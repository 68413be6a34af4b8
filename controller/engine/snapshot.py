"""Placeholder: filled in with the checkpoint format."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.engine.table import Table
    from controller.events import TableSetup


class SnapshotError(ValueError):
    pass


def dump(t: Table) -> dict[str, Any]:
    raise NotImplementedError


def load(cls: type[Table], setup: TableSetup, data: Any, keep_rounds: int | str | None) -> Table:
    raise NotImplementedError
