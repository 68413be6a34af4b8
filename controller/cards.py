"""Cards as two-character codes: rank `A 2 3 4 5 6 7 8 9 T J Q K`, suit `S H D C`.

A card is kept as its code (a plain ``str``): it is what the shoe reads, what the audit log
stores and what the dealer's screen shows, and lookups on it are cheap on the engine's hot path.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "SHDC"
PICTURES = frozenset("JQK")
TEN_VALUES = frozenset("TJQK")

ALL_CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
_CODES = frozenset(ALL_CODES)

# Point value with an ace counted 1; the best total adds 10 for one ace where that does not bust.
VALUE: dict[str, int] = {
    code: (1 if code[0] == "A" else 10 if code[0] in TEN_VALUES else int(code[0]))
    for code in ALL_CODES
}


def is_card(code: object) -> bool:
    return isinstance(code, str) and code in _CODES


def best_total(cards: Iterable[str], aces_fixed: int = 0) -> tuple[int, bool]:
    """The best total and whether it is soft (an ace counted 11).

    ``aces_fixed`` leading aces must count 1 (a doubled Pontoon hand, rule 12.2); an ace beyond
    them may still count 11.
    """
    total = 0
    free_aces = -aces_fixed
    for c in cards:
        v = VALUE[c]
        total += v
        if v == 1:
            free_aces += 1
    if free_aces > 0 and total <= 11:
        return total + 10, True
    return total, False


def deck(excluded_ranks: str = "") -> list[str]:
    """One deck in a fixed order, without the excluded ranks (Pontoon removes the tens)."""
    return [c for c in ALL_CODES if c[0] not in excluded_ranks]
