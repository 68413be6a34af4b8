"""A compact way to write table scenarios in tests.

Each step is a line of words, e.g. ``"bet 1 ann 10"``, ``"card AS"``, ``"card 5C exposed"``,
``"double 1 ann 10"``, ``"split 1 bob"``; or an event dict. :func:`run` applies them to a fresh
table (after a shuffle) and returns it with every flag raised, in order.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from controller.engine import Flag, RoundResult, Table
from controller.events import parse_event, parse_setup

_WORDS: dict[str, tuple[str, ...]] = {
    "bet": ("box", "player", "amount"),
    "nmb": (),
    "no_more_bets": (),
    "card": ("card",),
    "cut_card": (),
    "offer_insurance": (),
    "insurance": ("box", "player", "amount"),
    "offer_surrender": ("box",),
    "surrender": ("box",),
    "hit": ("box",),
    "stand": ("box",),
    "double": ("box", "player", "amount"),
    "split": ("box", "player"),
    "rescue": ("box", "player"),
    "refuse": ("box",),
    "absent": ("box",),
    "void": ("box",),
    "shuffle": ("decks", "cut_card"),
    "reshuffle_discards": ("cut_card",),
    "misread": ("raw",),
    "wager_seen": ("box", "amount"),
    "peek": (),
}
_INTS = {"box", "decks", "cut_card"}
_CARD_FLAGS = {
    "face_up": ("face_up", True),
    "damaged": ("damaged", True),
    "exposed": ("in_error", "exposed"),
    "unexposed": ("in_error", "unexposed"),
}


def step(text: str) -> dict[str, Any]:
    words = text.split()
    kind = "no_more_bets" if words[0] == "nmb" else words[0]
    obj: dict[str, Any] = {"type": kind}
    names = _WORDS[words[0]]
    rest = words[1:]
    for name, word in zip(names, rest, strict=False):
        if word == "none":
            obj[name] = None
        elif name in _INTS:
            obj[name] = int(word)
        elif name == "amount":
            obj[name] = word
        else:
            obj[name] = word
    for word in rest[len(names) :]:
        if kind == "card" and word in _CARD_FLAGS:
            key, value = _CARD_FLAGS[word]
            obj[key] = value
        elif kind == "card" and word.startswith("deck="):
            obj["deck"] = word[5:]
        elif kind == "bet" and word == "controls":
            obj["controls"] = True
        else:
            raise ValueError(f"unknown word {word!r} in step {text!r}")
    if kind == "shuffle" and "cut_card" not in obj:
        obj["cut_card"] = None
    return obj


def new_table(
    game: str = "pontoon-nz-2000",
    rules: dict[str, Any] | None = None,
    boxes: int = 7,
    min_bet: int = 5,
    max_bet: int = 1000,
) -> Table:
    setup = parse_setup(
        {
            "type": "table",
            "game": game,
            "table_id": "T",
            "boxes": boxes,
            "min_bet": min_bet,
            "max_bet": max_bet,
            "rules": rules or {},
        }
    )
    return Table(setup)


def feed(table: Table, *steps: str | dict[str, Any]) -> list[Flag]:
    """Apply steps to a table; return the flags they raised, in order."""
    flags: list[Flag] = []
    for s in steps:
        obj = step(s) if isinstance(s, str) else s
        flags.extend(table.apply(parse_event(obj)).flags)
    return flags


def run(
    *steps: str | dict[str, Any],
    game: str = "pontoon-nz-2000",
    rules: dict[str, Any] | None = None,
    shuffle: bool = True,
) -> tuple[Table, list[Flag]]:
    table = new_table(game, rules)
    first = ("shuffle 6 300",) if shuffle else ()
    flags = feed(table, *first, *steps)
    return table, flags


def rules_of(flags: list[Flag]) -> list[str]:
    return [f.rule for f in flags]


def last_round(table: Table) -> RoundResult:
    assert table.rounds, "no round has ended"
    return table.rounds[-1]


def nets(result: RoundResult) -> dict[tuple[str, int, int, str], Decimal]:
    return {(s.player, s.box, s.hand, s.kind): s.net for s in result.settlements}


def outcomes(result: RoundResult) -> list[str | None]:
    return [h["outcome"] for h in result.hands]
