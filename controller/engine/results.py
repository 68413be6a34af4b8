"""What the engine answers: flags, settlements, a round's result, and what one event did.

These are the engine's outputs, read by the replay document, the audit store's derived rows,
the simulator and the dealer's screen. Amounts are :class:`~decimal.Decimal`; :func:`money`
prints them as the outputs show them.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import cache
from typing import Any, Final

CENT: Final = Decimal("0.01")

# The classes here and in :mod:`.state` write their ``__init__`` by hand (the dataclass adds
# equality and repr): an optional mypyc build makes them native classes, and a hand-written
# initialiser is what it turns into a fast constructor. Treat the results as values: never
# change one.


@cache
def money(d: Decimal) -> str:
    """A decimal amount as the output shows it: no exponent, no needless trailing zeros.

    Cached: a table sees few distinct amounts, and equal amounts print alike."""
    if d == d.to_integral_value():
        return str(d.quantize(Decimal(1)))
    return str(d.quantize(CENT))


@dataclass(init=False, unsafe_hash=True, slots=True)
class Flag:
    """An irregularity or a refused event, naming the rule (``"16.4"``, ``"12.3"``, ``"shoe"``).

    ``round`` is the round it belongs to (0: before the first), ``seq`` the event that raised it
    and ``kind`` that event's type (what the dealer's banner for it says depends on it).
    """

    rule: str
    message: str
    box: int | None
    round: int
    seq: int
    kind: str

    def __init__(
        self,
        rule: str,
        message: str,
        box: int | None = None,
        round: int = 0,
        seq: int = 0,
        kind: str = "",
    ) -> None:
        self.rule = rule
        self.message = message
        self.box = box
        self.round = round
        self.seq = seq
        self.kind = kind

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule}
        if self.box is not None:
            out["box"] = self.box
        out["message"] = self.message
        out["event"] = self.seq
        return out


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an event may not happen now (:meth:`Table.check`): the rule a flag for it names,
    and the reason."""

    rule: str
    reason: str


class SettlementKind(StrEnum):
    """What a settlement row pays: the main wager with any double, insurance, the Super Bonus
    (11.2), the $50 bonus (11.3). A ``StrEnum``: it prints and serialises as its value."""

    HAND = "hand"
    INSURANCE = "insurance"
    SUPER_BONUS = "super_bonus"
    BONUS_50 = "bonus_50"


HAND: Final[SettlementKind] = SettlementKind.HAND
INSURANCE: Final[SettlementKind] = SettlementKind.INSURANCE
SUPER_BONUS: Final[SettlementKind] = SettlementKind.SUPER_BONUS
BONUS_50: Final[SettlementKind] = SettlementKind.BONUS_50


@dataclass(init=False, unsafe_hash=True, slots=True)
class Settlement:
    """One player's money on one box, hand and kind (``hand``, ``insurance``, ``super_bonus``,
    ``bonus_50``): what was staked and what comes back."""

    player: str
    box: int
    hand: int
    kind: SettlementKind
    staked: Decimal
    returned: Decimal

    def __init__(
        self,
        player: str,
        box: int,
        hand: int,
        kind: SettlementKind,
        staked: Decimal,
        returned: Decimal,
    ) -> None:
        self.player = player
        self.box = box
        self.hand = hand
        self.kind = kind
        self.staked = staked
        self.returned = returned

    @property
    def net(self) -> Decimal:
        return self.returned - self.staked

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "box": self.box,
            "hand": self.hand,
            "kind": str(self.kind),
            "staked": money(self.staked),
            "returned": money(self.returned),
            "net": money(self.net),
        }


@dataclass(init=False, slots=True)
class RoundResult:
    """A round as the replay document shows it (``docs/reference/events.md``).

    ``flags`` stays open after the round ends: a flag noticed after the round (a 16.3 card, a
    misread before the next bet) joins the round it follows.
    """

    round: int
    status: str
    dealer: list[str]
    dealer_total: int
    hands: list[dict[str, Any]]
    settlements: list[Settlement]
    flags: list[Flag]
    dealers: list[str]  # the dealers on duty during the round, in order (``dealer`` events)

    def __init__(
        self,
        round: int,
        status: str,
        dealer: list[str],
        dealer_total: int,
        hands: list[dict[str, Any]],
        settlements: list[Settlement],
        flags: list[Flag],
        dealers: list[str] | None = None,
    ) -> None:
        self.round = round
        self.status = status
        self.dealer = dealer
        self.dealer_total = dealer_total
        self.hands = hands
        self.settlements = settlements
        self.flags = flags
        self.dealers = [] if dealers is None else dealers

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "status": self.status,
            "dealer": {"cards": list(self.dealer), "total": self.dealer_total},
            "hands": [dict(h) for h in self.hands],
            "settlements": [s.to_dict() for s in self.settlements],
            "flags": [f.to_dict() for f in self.flags],
            "dealers": list(self.dealers),
        }


@dataclass(init=False, slots=True)
class Applied:
    """What one event did: the flags it raised and the round it ended, if any.

    ``accepted`` is False when the event raised a flag (it was refused, or an irregularity
    procedure handled it)."""

    flags: tuple[Flag, ...]
    settled: RoundResult | None
    accepted: bool

    def __init__(
        self,
        flags: tuple[Flag, ...] = (),
        settled: RoundResult | None = None,
        accepted: bool = True,
    ) -> None:
        self.flags = flags
        self.settled = settled
        self.accepted = accepted


NOTHING: Final = Applied()  # an event that raised nothing and ended nothing: shared
