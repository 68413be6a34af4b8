"""One rendering of a round for people: the replay's account, the export's timelines, the
floor's text and its evidence PDF all print a round's hands and settlements through here.

A round here is the replay document's round (``docs/reference/events.md``): its ``hands`` and
``settlements`` number a box's hands from 0, in the order they are played. People count from
1: the text says "box 3 hand 1" for the JSON's ``{"box": 3, "hand": 0}``, everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def hand_number(hand: int) -> int:
    """A hand as people number it (the first hand of a box is hand 1)."""
    return hand + 1


def hand_label(box: Any, hand: int) -> str:
    return f"box {box} hand {hand_number(hand)}"


def dealer_line(rnd: Mapping[str, Any]) -> str:
    dealer = rnd["dealer"]
    return f"dealer: {' '.join(dealer['cards']) or '-'} ({dealer['total']})"


def hand_rows(rnd: Mapping[str, Any]) -> list[tuple[str, str, int, str]]:
    """(hand, cards, total, outcome) for each hand, as a table shows them."""
    return [
        (
            hand_label(h["box"], h["hand"]),
            " ".join(h["cards"]),
            h["total"],
            (h["outcome"] or "-") + ("  doubled" if h["doubled"] else ""),
        )
        for h in rnd["hands"]
    ]


SETTLEMENT_HEAD = ("player", "box", "hand", "kind", "staked", "returned", "net")


def settlement_rows(rnd: Mapping[str, Any]) -> list[tuple[str, Any, int, str, str, str, str]]:
    """One row per settlement, its hand numbered as people number it."""
    return [
        (
            s["player"],
            s["box"],
            hand_number(s["hand"]),
            s["kind"],
            s["staked"],
            s["returned"],
            s["net"],
        )
        for s in rnd["settlements"]
    ]


def round_lines(rnd: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """The dealer's hand, each hand, the settlements as a table, the dealers on duty and the
    flags: the body every text of a round shares."""
    out = [dealer_line(rnd)]
    for label, cards, total, outcome in hand_rows(rnd):
        out.append(f"{indent}{label}  {cards:<24} {total:>2}  {outcome}")
    rows = settlement_rows(rnd)
    if rows:
        out.append(
            f"{indent}{'player':<12} {'box':>3} {'hand':>4}  {'kind':<12} "
            f"{'staked':>10} {'returned':>10} {'net':>10}"
        )
        for player, box, hand, kind, staked, returned, net in rows:
            out.append(
                f"{indent}{player:<12} {box:>3} {hand:>4}  {kind:<12} "
                f"{staked:>10} {returned:>10} {net:>10}"
            )
    if rnd.get("dealers"):
        out.append(f"{indent}dealers on duty: {', '.join(rnd['dealers'])}")
    for f in rnd.get("flags") or []:
        box = f" box {f['box']}" if f.get("box") is not None else ""
        out.append(f"{indent}FLAG {f['rule']}{box}: {f['message']}")
    return out
