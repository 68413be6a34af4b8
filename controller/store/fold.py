"""A table's state as a fold over its stored events, and the rows that follow from them.

The engine (``controller.engine.Table``) is the only place the rules live; this module feeds
it stored events in order and turns what it answers into the store's derived rows: shoes,
rounds, flags and settlements. The recorder, a restart, ``verify``, ``export`` and ``ship``
all go through here, so a replay and the live table cannot disagree on what is derived.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.engine import Applied, Table
from controller.events import (
    PASSTHROUGH,
    Event,
    ReshuffleDiscards,
    Shuffle,
    TableSetup,
    decode_event,
    parse_event,
    parse_setup,
)
from controller.store.canonical import ChainRecord
from controller.store.repository import NO_ROWS, Derived, json_list


def setup_body(raw: Mapping[str, Any]) -> tuple[TableSetup, dict[str, Any]]:
    """Check a table line; return its setup and the form the store keeps."""
    setup = parse_setup(raw, 1)
    body = setup.to_dict()
    for key in PASSTHROUGH:
        if key in raw:
            body[key] = raw[key]
    return setup, body


def same_setup(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two stored table lines set the table up alike (times and notes aside)."""
    strip = set(PASSTHROUGH)
    return {k: v for k, v in a.items() if k not in strip} == {
        k: v for k, v in b.items() if k not in strip
    }


def event_body(raw: Mapping[str, Any], line: int = 0) -> tuple[Event, dict[str, Any]]:
    """Check an event; return it and the form the store keeps (``Event.to_dict``)."""
    event = parse_event(raw, line)
    return event, event.to_dict()


def derive(table_id: str, seq: int, event: Event, applied: Applied) -> Derived:
    """The derived rows that event ``seq`` gave when applied (most give none: then the
    shared, empty :data:`~controller.store.repository.NO_ROWS`)."""
    shoe = isinstance(event, (Shuffle, ReshuffleDiscards))
    if not shoe and not applied.flags and applied.settled is None:
        return NO_ROWS
    out = Derived()
    if isinstance(event, (Shuffle, ReshuffleDiscards)):
        loaded = event if isinstance(event, Shuffle) else None
        out.shoes.append(
            {
                "table_id": table_id,
                "seq": seq,
                "kind": event.type,
                "decks": loaded.decks if loaded is not None else None,
                "cut_card": event.cut_card,
                "deck_serials": None
                if loaded is None or loaded.deck_serials is None
                else json_list(list(loaded.deck_serials)),
            }
        )
    for idx, flag in enumerate(applied.flags):
        out.flags.append(
            {
                "table_id": table_id,
                "seq": seq,
                "idx": idx,
                "round": flag.round,
                "rule": flag.rule,
                "box": flag.box,
                "message": flag.message,
            }
        )
    if applied.settled is not None:
        result = applied.settled.to_dict()
        out.rounds.append(
            {
                "table_id": table_id,
                "round": result["round"],
                "status": result["status"],
                "closed_seq": seq,
                "dealer": json_list(result["dealer"]),
                "hands": json_list(result["hands"]),
            }
        )
        for idx, row in enumerate(result["settlements"]):
            out.settlements.append(
                {
                    "table_id": table_id,
                    "round": result["round"],
                    "idx": idx,
                    "seq": seq,
                    "player": row["player"],
                    "box": row["box"],
                    "hand": row["hand"],
                    "kind": row["kind"],
                    "staked": row["staked"],
                    "returned": row["returned"],
                    "net": row["net"],
                }
            )
    return out


FOLD_FORMAT = "floorctl-fold-state"
FOLD_VERSION = 1


class Fold:
    """One table rebuilt from its events: ``Fold(record0)`` then ``apply`` each record.

    ``keep_rounds``: how many settled rounds the engine keeps (None: all, as a replay document
    needs; a live table keeps a few: see :class:`~controller.engine.Table`).
    """

    def __init__(
        self, table_id: str, setup: Mapping[str, Any], *, keep_rounds: int | None = None
    ) -> None:
        self.table_id = table_id
        self.setup = parse_setup(setup, 1)
        self.table = Table(self.setup, keep_rounds=keep_rounds)
        self.seq = 0
        self.restored_from: int | None = None  # the checkpoint it was restored from, if any

    def snapshot(self) -> dict[str, Any]:
        """The fold's whole state as plain JSON-able data: its table, the sequence number it
        has reached, and the engine's own snapshot (which carries its digest)."""
        return {
            "format": FOLD_FORMAT,
            "version": FOLD_VERSION,
            "table_id": self.table_id,
            "seq": self.seq,
            "engine": self.table.snapshot(),
        }

    @classmethod
    def restore(
        cls,
        table_id: str,
        setup: Mapping[str, Any],
        state: Any,
        *,
        keep_rounds: int | str | None = "snapshot",
    ) -> Fold:
        """The fold a :meth:`snapshot` was taken of, under the table line ``setup``.

        Raises ``ValueError`` (the engine's ``SnapshotError`` among them) naming what is wrong.
        """
        if not isinstance(state, dict) or state.get("format") != FOLD_FORMAT:
            raise ValueError(f'not a fold state (no "format": "{FOLD_FORMAT}")')
        if state.get("version") != FOLD_VERSION:
            raise ValueError(f"fold state version {state.get('version')!r}: this reads 1")
        if state.get("table_id") != table_id:
            raise ValueError(f"fold state of table {state.get('table_id')!r}, not {table_id!r}")
        seq = state.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise ValueError(f"fold state: {seq!r} is not a sequence number")
        fold = cls(table_id, setup)
        fold.table = Table.restore(fold.setup, state.get("engine"), keep_rounds=keep_rounds)
        if fold.table.seq != seq:
            raise ValueError(f"fold state at event {seq} holds an engine at event {fold.table.seq}")
        fold.seq = seq
        fold.restored_from = seq
        return fold

    @classmethod
    def from_record(cls, record: ChainRecord) -> Fold:
        return cls(record.table_id, record.event())

    def apply(self, seq: int, body: Mapping[str, Any]) -> tuple[Event, Applied, Derived]:
        event = parse_event(body, seq)
        return self.apply_event(seq, event)

    def apply_text(self, seq: int, body: str) -> tuple[Event, Applied, Derived]:
        """:meth:`apply` for an event as the store keeps it (its canonical JSON text)."""
        return self.apply_event(seq, decode_event(body, seq))

    def apply_event(self, seq: int, event: Event) -> tuple[Event, Applied, Derived]:
        if seq != self.seq + 1:
            raise ValueError(f"table {self.table_id}: event {seq} applied after event {self.seq}")
        applied = self.table.apply(event)
        self.seq = seq
        return event, applied, derive(self.table_id, seq, event, applied)

    def round_of_next(self) -> int:
        """The number of the round in progress, or of the next one."""
        return self.table.view().number

    def round_of(self, before: int | None, applied: Applied) -> int:
        """The round an event just applied belongs to: the round it ended, or the round in
        progress after it, or the one in progress before it; between rounds, the round its
        flags name (a card after the dealer finished belongs to that round), else the next
        (the shuffle and the bets before it). ``before``: :meth:`Table.in_play` before it."""
        if applied.settled is not None:
            return applied.settled.round
        number = self.table.in_play()
        if number is not None:
            return number
        if before is not None:
            return before
        if applied.flags and applied.flags[0].round > 0:
            return applied.flags[0].round
        return self.round_of_next()
