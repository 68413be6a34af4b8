"""The simulator's tally: sums that merge exactly, and the figures derived from them.

Money sums are :class:`~decimal.Decimal` (exact), so tallies of chunks played in any order and
in any process add up to the same figures: a run's result depends on its seed and chunk size,
not on how many processes played it.

House edge = − (mean net result per round) / (initial wager), the usual definition: the
player's expected loss per unit of the initial wager, doubles, splits and insurance included
in the result but not in the divisor. Its standard error comes from the per-round variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

# What a round can show; each counts rounds (or hands, see HAND_CATEGORIES) where it happened.
CATEGORIES: tuple[str, ...] = (
    "natural",  # a pontoon / blackjack: ace and ten-value as the first two cards, unsplit
    "five_card_21",  # a hand of exactly 5 cards totalling 21
    "six_card_21",
    "seven_plus_card_21",
    "six_seven_eight",  # a three-card hand 6-7-8, of any suits
    "six_seven_eight_mixed",  # ... by suit class (11.1): mixed suits,
    "six_seven_eight_suited",  # one suit, not spades,
    "six_seven_eight_spades",  # all spades
    "seven_seven_seven",  # a three-card hand 7-7-7, and the same three classes
    "seven_seven_seven_mixed",
    "seven_seven_seven_suited",
    "seven_seven_seven_spades",
    "super_bonus",  # a super_bonus settlement row was paid (11.2)
    "dealer_bust",  # the dealer's total went over 21
    "dealer_natural",
    "double",  # hands doubled
    "split",  # splits made
    "surrender",
    "rescue",
    "insurance",
    "win",  # hands won / lost / pushed against the dealer (their outcome, by total)
    "lose",
    "push",
    "won",  # what the money on each hand did: returned more than staked,
    "lost",  # less (a rescued or surrendered hand counts under its own name instead),
    "pushed",  # exactly the stake,
    "surrendered",  # half back (9.5) or none (a dealer natural),
    "rescued",  # the double back and the original forfeit (12.8)
    "rescued_tie",  # a rescued hand whose total tied the dealer's: still only the double back
)
HAND_CATEGORIES = frozenset(
    {
        "natural",
        "five_card_21",
        "six_card_21",
        "seven_plus_card_21",
        "six_seven_eight",
        "six_seven_eight_mixed",
        "six_seven_eight_suited",
        "six_seven_eight_spades",
        "seven_seven_seven",
        "seven_seven_seven_mixed",
        "seven_seven_seven_suited",
        "seven_seven_seven_spades",
        "double",
        "split",
        "surrender",
        "rescue",
        "win",
        "lose",
        "push",
        "won",
        "lost",
        "pushed",
        "surrendered",
        "rescued",
        "rescued_tie",
    }
)
MAX_FLAG_SAMPLES = 5


@dataclass
class Tally:
    rounds: int = 0
    hands: int = 0
    net: Decimal = Decimal(0)  # sum of the player's net result per round
    net_sq: Decimal = Decimal(0)  # sum of its squares
    initial_wagered: Decimal = Decimal(0)
    total_wagered: Decimal = Decimal(0)  # every stake: doubles, splits, insurance
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    flags: int = 0  # flags the engine raised (a correct simulator raises none)
    flag_samples: list[str] = field(default_factory=list)
    shuffles: int = 0

    def add_round(self, net: Decimal, initial: Decimal, staked: Decimal) -> None:
        self.rounds += 1
        self.net += net
        self.net_sq += net * net
        self.initial_wagered += initial
        self.total_wagered += staked

    def add_flag(self, text: str) -> None:
        self.flags += 1
        if len(self.flag_samples) < MAX_FLAG_SAMPLES:
            self.flag_samples.append(text)

    def merge(self, other: Tally) -> None:
        self.rounds += other.rounds
        self.hands += other.hands
        self.net += other.net
        self.net_sq += other.net_sq
        self.initial_wagered += other.initial_wagered
        self.total_wagered += other.total_wagered
        for key, n in other.counts.items():
            self.counts[key] = self.counts.get(key, 0) + n
        self.flags += other.flags
        room = MAX_FLAG_SAMPLES - len(self.flag_samples)
        self.flag_samples.extend(other.flag_samples[: max(0, room)])
        self.shuffles += other.shuffles

    # --- derived figures ----------------------------------------------------------------------

    def unit(self) -> Decimal:
        """The initial wager per round (the simulator bets the same every round)."""
        return self.initial_wagered / self.rounds if self.rounds else Decimal(1)

    def house_edge(self) -> float:
        """Expected player loss per unit of initial wager (0.0043 = 0.43%)."""
        if not self.rounds:
            return math.nan
        return float(-self.net / self.initial_wagered)

    def standard_error(self) -> float:
        """Standard error of :meth:`house_edge`, from the per-round variance."""
        n = self.rounds
        if n < 2:
            return math.nan
        unit = self.unit()
        mean = self.net / n
        variance = (self.net_sq - n * mean * mean) / (n - 1)
        return math.sqrt(float(variance / (unit * unit)) / n)

    def sd_per_round(self) -> float:
        """Standard deviation of one round's result, in units of the initial wager."""
        return self.standard_error() * math.sqrt(self.rounds) if self.rounds > 1 else math.nan

    def to_dict(self) -> dict[str, Any]:
        n = self.rounds
        he, se = self.house_edge(), self.standard_error()
        freqs: dict[str, Any] = {}
        for key in CATEGORIES:
            count = self.counts.get(key, 0)
            per = "hand" if key in HAND_CATEGORIES else "round"
            base = self.hands if per == "hand" else n
            freqs[key] = {
                "count": count,
                "per_round": count / n if n else None,
                **({"per_hand": count / base if base else None} if per == "hand" else {}),
            }
        return {
            "rounds": n,
            "hands": self.hands,
            "house_edge": he,
            "standard_error": se,
            "house_edge_percent": round(he * 100, 4),
            "standard_error_percent": round(se * 100, 4),
            "sd_per_round_units": self.sd_per_round(),
            "net": str(self.net),
            "initial_wagered": str(self.initial_wagered),
            "total_wagered": str(self.total_wagered),
            "element_of_risk": float(-self.net / self.total_wagered)
            if self.total_wagered
            else None,
            "frequencies": freqs,
            "shuffles": self.shuffles,
            "flags": self.flags,
            "flag_samples": list(self.flag_samples),
        }
