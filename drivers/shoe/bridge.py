"""Shoe events as round-engine events (the vocabulary of ``docs/reference/events.md``).

The engine owns the deck-serial check (foreign deck, card read twice): the bridge passes each
card's deck serial on, and the shuffle record loads the serials. Heartbeats and the reader's
own error reports are device status, not engine events, and map to ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .events import CardRead, CutCard, Heartbeat, Misread, ReaderError, ShoeEvent
from .framing import is_deck_serial

SOURCE = "shoe"


def to_engine_event(event: ShoeEvent, *, time: datetime | None = None) -> dict[str, Any] | None:
    """The engine event for a shoe event, or ``None`` for heartbeats and reader errors.

    ``time`` (when the line was read) is added as ISO 8601; the engine ignores it but the audit
    log keeps it.
    """
    out: dict[str, Any]
    if isinstance(event, CardRead):
        out = {"type": "card", "card": event.card, "deck": event.deck}
        if event.face_up:
            out["face_up"] = True
    elif isinstance(event, CutCard):
        out = {"type": "cut_card"}
    elif isinstance(event, Misread):
        out = {"type": "misread", "raw": event.text}
        if event.count > 1:  # one event for a run of misreads (the first one's bytes)
            out["note"] = f"{event.count} misreads in a row"
    elif isinstance(event, Heartbeat | ReaderError):
        return None
    else:  # pragma: no cover - the union is exhaustive (mypy checks it)
        raise TypeError(f"not a shoe event: {event!r}")
    out["source"] = SOURCE
    if time is not None:
        out["time"] = time.isoformat()
    return out


def shuffle_event(deck_serials: Sequence[str], cut_card: int | None) -> dict[str, Any]:
    """The ``shuffle`` event that loads a shoe of these decks (``cut_card``: cards before it)."""
    if not deck_serials:
        raise ValueError("a shoe needs at least one deck serial")
    for serial in deck_serials:
        if not is_deck_serial(serial):
            raise ValueError(f"deck serial {serial!r} is not 4-12 characters A-Z 0-9")
    if len(set(deck_serials)) != len(deck_serials):
        dupes = sorted({s for s in deck_serials if deck_serials.count(s) > 1})
        raise ValueError(f"deck serials loaded twice: {', '.join(dupes)}")
    if cut_card is not None and cut_card < 0:
        raise ValueError(f"cut_card {cut_card} is negative")
    return {
        "type": "shuffle",
        "decks": len(deck_serials),
        "cut_card": cut_card,
        "deck_serials": list(deck_serials),
    }
