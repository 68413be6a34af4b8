"""Card codes and the seeded shoe of the oracle.

A card is an int `rank * 4 + suit`: rank 0..12 is A 2 3 4 5 6 7 8 9 T J Q K, suit 0..3 is
S H D C, so `card >> 2` is the rank and `card & 3` the suit. `VALUE[card]` is the point value
(an ace 1; T, J, Q, K 10). A Pontoon deck has no tens (docs/reference/rule-book.md, 6.1): 48 cards.
"""

from __future__ import annotations

import random

RANKS = "A23456789TJQK"
SUITS = "SHDC"
ACE_RANK = 0
SEVEN_RANK = 6
TEN_RANK = 9
SPADES = 0

VALUE: tuple[int, ...] = tuple(1 if r == 0 else min(r + 1, 10) for r in range(13) for _ in SUITS)
CODE: tuple[str, ...] = tuple(RANKS[r] + s for r in range(13) for s in SUITS)


def parse(code: str) -> int:
    """The card of a two-character code such as `"QH"`."""
    if len(code) != 2 or code[0] not in RANKS or code[1] not in SUITS:
        raise ValueError(f"{code!r} is not a card code")
    return RANKS.index(code[0]) * 4 + SUITS.index(code[1])


def deck(pontoon: bool) -> list[int]:
    """One deck: 52 cards, or 48 for Pontoon (the four tens removed)."""
    return [c for c in range(52) if not (pontoon and c >> 2 == TEN_RANK)]


class Shoe:
    """`decks` decks shuffled by a seeded `random.Random`, with a cutting card.

    `cards` holds the cards still to come in reverse order (so `cards.pop()` is the next one);
    `cut` is how many cards are dealt before the cutting card. The dealer reshuffles after a
    round once `cut` or more cards are out (the cutting card has come out or is next)."""

    def __init__(self, decks: int, pontoon: bool, rng: random.Random, penetration: float) -> None:
        self.decks = decks
        self.pontoon = pontoon
        self.rng = rng
        self.size = decks * len(deck(pontoon))
        self.cut = int(self.size * penetration)
        if not 0 < self.cut < self.size:
            raise ValueError(f"penetration {penetration} leaves no cards before or after the cut")
        self.cards: list[int] = []
        self.shuffles = 0
        self.shuffle()

    def shuffle(self) -> None:
        cards = deck(self.pontoon) * self.decks
        self.rng.shuffle(cards)
        self.cards = cards
        self.shuffles += 1

    @property
    def dealt(self) -> int:
        return self.size - len(self.cards)

    def due_for_shuffle(self) -> bool:
        return self.dealt >= self.cut

    def bring_to_front(self, wanted: list[int | None]) -> bool:
        """Reorder the cards still to come so that the next ones are `wanted` in that order
        (`None`: whatever comes). The shoe stays a genuine shoe: the cards are only moved.
        Returns False, and leaves the order alone, when a wanted card is no longer there."""
        rest = self.cards[::-1]
        for i, want in enumerate(wanted):
            if want is None:
                continue
            try:
                j = rest.index(want, i)
            except ValueError:
                return False
            rest[i], rest[j] = rest[j], rest[i]
        self.cards = rest[::-1]
        return True
