"""A seeded shoe for the simulator: it plays the shoe reader's part.

The shoe holds ``decks`` decks of the rule set's cards (a Pontoon shoe has no tens), shuffled
by a :class:`random.Random` the caller seeds, with the cutting card ``penetration`` of the way
in. The simulator reports the cutting card to the engine when it comes out and shuffles after
that round, as a dealer does (16.9); a shoe that runs dry mid-round has its discards shuffled
back in (16.7).
"""

from __future__ import annotations

import random
from typing import Any

from controller.cards import deck


class SimShoe:
    def __init__(
        self, rng: random.Random, decks: int, excluded_ranks: str, penetration: float
    ) -> None:
        if not 0.0 < penetration < 1.0:
            raise ValueError(f"penetration {penetration!r} must be between 0 and 1 (exclusive)")
        self._rng = rng
        self.decks = decks
        self.penetration = penetration
        self._full = deck(excluded_ranks) * decks
        self.size = len(self._full)
        self._cards: list[str] = []
        self.position = 0  # index of the next card
        self.cut_position = 0  # cards before the cutting card
        self.cut_out = False  # the cutting card has come out
        self._round_start = 0
        self.shuffles = 0

    def shuffle(self) -> dict[str, Any]:
        """Load a freshly shuffled shoe; returns the ``shuffle`` event for the engine."""
        cards = list(self._full)
        self._rng.shuffle(cards)
        self._load(cards)
        self.shuffles += 1
        return {"type": "shuffle", "decks": self.decks, "cut_card": self.cut_position}

    def _load(self, cards: list[str]) -> None:
        self._cards = cards
        self.position = 0
        self._round_start = 0
        self.cut_position = max(1, min(len(cards) - 1, int(len(cards) * self.penetration)))
        self.cut_out = False

    def start_round(self) -> None:
        """Mark where this round's cards begin (the cards before it are the discards)."""
        self._round_start = self.position

    @property
    def at_cut_card(self) -> bool:
        """The cutting card is the next thing out of the shoe."""
        return not self.cut_out and self.position == self.cut_position

    @property
    def empty(self) -> bool:
        return self.position >= len(self._cards)

    def dealt_cards(self) -> list[str]:
        """The cards dealt from this shoe since it was loaded, in order (what a counter saw)."""
        return self._cards[: self.position]

    def draw(self) -> str:
        card = self._cards[self.position]
        self.position += 1
        return card

    def reshuffle_discards(self) -> dict[str, Any]:
        """16.7: shuffle the discard rack into a new shoe; returns the engine event."""
        discards = self._cards[: self._round_start]
        if not discards:
            raise RuntimeError("the shoe ran out in its first round: too few decks for the round")
        self._rng.shuffle(discards)
        self._load(discards)
        return {"type": "reshuffle_discards", "cut_card": self.cut_position}
