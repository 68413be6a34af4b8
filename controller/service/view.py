"""What the dealer's screen shows, computed from the engine's `due()` and the round results.

Pure functions, no state: the service calls them for every snapshot. They rearrange what the
engine says (per box: wagers, hands, the camera's wager, the chips to pay or take) and turn the
engine's typed decisions (:func:`controller.engine.decisions.open_decisions`) into the dealer's
buttons and the supervisor's; they never decide anything about the rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from controller.engine.decisions import Decision, Kind, Role
from controller.engine.results import money
from controller.engine.tableview import RoundView
from controller.events import TableSetup
from controller.rules import RuleSet
from controller.service.payview import round_lines


def flag_view(flag: Mapping[str, Any], round_number: int, words: str, seq: int) -> dict[str, Any]:
    """A flag as the screen lists it: rule number, the rule's words, what happened, where."""
    return {
        "seq": seq,
        "round": round_number or None,
        "rule": str(flag.get("rule", "")),
        "box": flag.get("box"),
        "message": str(flag.get("message", "")),
        "words": words,
    }


def box_views(
    boxes: int,
    due: Mapping[str, Any],
    seen: Mapping[int, Mapping[str, Any]],
    settled: Mapping[str, Any] | None,
    flags: Iterable[Mapping[str, Any]],
    *,
    rules: RuleSet,
    rescues: Iterable[tuple[int, int, int, str]] = (),
    unsure: Mapping[int, str] | None = None,
) -> list[dict[str, Any]]:
    """One view per box (1..boxes): players' wagers, hands, the camera's wager (or why it
    cannot read the box: ``unsure``), the payout.

    During a round the hands come from the engine's `due()`; between rounds the screen keeps
    the last round's hands with its chip actions (pay, take, push), so the dealer pays from
    the screen.
    """
    per_box_flags: dict[int, int] = {}
    for f in flags:
        box = f.get("box")
        if isinstance(box, int):
            per_box_flags[box] = per_box_flags.get(box, 0) + 1
    live = {b["box"]: b for b in due.get("boxes") or [] if isinstance(b.get("box"), int)}
    out: list[dict[str, Any]] = []
    for number in range(1, boxes + 1):
        view: dict[str, Any] = {
            "box": number,
            "players": [],
            "staked": "0",
            "hands": [],
            "seen": dict(seen[number]) if number in seen else None,
            "unsure": (unsure or {}).get(number),
            "flags": per_box_flags.get(number, 0),
            "payouts": [],
        }
        if number in live:
            _from_live(view, live[number])
        elif settled is not None:
            _from_result(view, settled, number)
            view["payouts"] = round_lines(settled, number, rules, rescues)
        out.append(view)
    return out


def _from_live(view: dict[str, Any], box: Mapping[str, Any]) -> None:
    controller = box.get("controller")
    insurance = box.get("insurance") or {}
    bets: Mapping[str, Any] = box.get("bets") or {}
    view["players"] = [
        {
            "player": player,
            "amount": str(amount),
            "controls": player == controller,
            "insurance": str(insurance[player]) if player in insurance else None,
        }
        for player, amount in bets.items()
    ]
    view["staked"] = str(sum((Decimal(str(a)) for a in bets.values()), Decimal(0)))
    box_status = (
        "void"
        if box.get("void")
        else "surrendered"
        if box.get("surrendered")
        else "absent"
        if box.get("absent")
        else None
    )
    for hand in box.get("hands") or []:
        cards = list(hand.get("cards") or [])
        total = hand.get("total")
        status = box_status
        if hand.get("natural"):
            status = "natural"
        elif isinstance(total, int) and total > 21:
            status = "bust"
        elif any(w.get("rescued") for w in hand.get("wagers") or []):
            status = "rescued"
        view["hands"].append(
            {
                "hand": hand.get("hand", 0),
                "cards": cards,
                "total": total,
                "soft": bool(hand.get("soft")) and total != 21,
                "doubled": bool(hand.get("doubled")),
                "status": status,
                "outcome": None,
            }
        )


def _from_result(view: dict[str, Any], result: Mapping[str, Any], number: int) -> None:
    stakes: dict[str, Decimal] = {}
    for s in result.get("settlements") or []:
        if s.get("box") != number:
            continue
        if s.get("kind") == "hand" and s.get("hand") == 0:
            stakes[str(s.get("player"))] = Decimal(str(s.get("staked", "0")))
    view["players"] = [
        {"player": p, "amount": str(a), "controls": i == 0, "insurance": None}
        for i, (p, a) in enumerate(stakes.items())
    ]
    view["staked"] = str(sum(stakes.values(), Decimal(0)))
    for hand in result.get("hands") or []:
        if hand.get("box") != number:
            continue
        total = hand.get("total")
        view["hands"].append(
            {
                "hand": hand.get("hand", 0),
                "cards": list(hand.get("cards") or []),
                "total": total,
                "soft": False,
                "doubled": bool(hand.get("doubled")),
                "status": "bust" if isinstance(total, int) and total > 21 else None,
                "outcome": hand.get("outcome"),
            }
        )


def decision_view(d: Decision) -> dict[str, Any]:
    """One typed decision as the screen reads it: what, whose, where, within what, by which
    rule."""
    return {
        "kind": str(d.kind),
        "by": str(d.by),
        "rule": d.rule,
        "box": d.box,
        "hand": d.hand,
        "player": d.player,
        "min": money(d.min) if d.min is not None else None,
        "max": money(d.max) if d.max is not None else None,
        "card": d.card,
    }


# The dealer's own announcements (no PIN), as buttons above the boxes' decisions.
_ANNOUNCEMENTS = {
    Kind.NO_MORE_BETS: "No more bets",
    Kind.OFFER_INSURANCE: "Offer insurance",
}


_SHUFFLE_DUE = {
    "16.9": "due: the cutting card is out",
    "16.10": "due: no cutting card was inserted (16.10)",
}


def table_actions(opened: Iterable[Decision], setup: TableSetup) -> list[dict[str, Any]]:
    """The dealer's own announcements open now (no PIN): no more bets, offers, a new shoe."""
    actions: list[dict[str, Any]] = []
    for d in opened:
        if d.by is not Role.DEALER:
            continue
        if d.kind in _ANNOUNCEMENTS:
            actions.append({"type": str(d.kind), "label": _ANNOUNCEMENTS[d.kind], "rule": d.rule})
        elif d.kind is Kind.OFFER_SURRENDER:
            actions.append(
                {
                    "type": "offer_surrender",
                    "box": d.box,
                    "label": f"Offer surrender · box {d.box}",
                    "rule": d.rule,
                }
            )
        elif d.kind is Kind.SHUFFLE:
            cards = setup.decks * setup.rules.cards_per_deck()
            actions.append(
                {
                    "type": "shuffle",
                    "label": "New shoe",
                    "due": _SHUFFLE_DUE.get(d.rule, ""),
                    "rule": d.rule,
                    "decks": setup.decks,
                    "cut_card_default": str(round(cards * 0.75)),
                }
            )
    return actions


def supervisor_actions(opened: Iterable[Decision], rnd: RoundView | None) -> list[dict[str, Any]]:
    """The supervisor's actions open now: void the round or one of its boxes (16.5) while a
    round is in progress, reshuffle the discards (16.7) when the shoe runs short."""
    out: list[dict[str, Any]] = []
    for d in opened:
        if d.kind is Kind.VOID:
            out.append({"type": "void", "label": f"Void round {rnd.number}" if rnd else "Void"})
            if rnd is not None:
                for box in sorted(rnd.boxes, key=lambda b: b.number):
                    if not box.void:
                        out.append(
                            {"type": "void", "box": box.number, "label": f"Void box {box.number}"}
                        )
        elif d.kind is Kind.RESHUFFLE_DISCARDS:
            out.append({"type": "reshuffle_discards", "label": "Reshuffle discards (16.7)"})
    return out


def describe_event(record: Mapping[str, Any]) -> str:
    """One short line for the screen's log of recent events."""
    kind = str(record.get("type"))
    box = record.get("box")
    where = f" box {box}" if box is not None else ""
    player = f" {record['player']}" if record.get("player") else ""
    amount = f" ${record['amount']}" if record.get("amount") is not None else ""
    if kind == "card":
        text = f"card {record.get('card')}"
        if record.get("correction_of") is not None:
            text += f" (corrects #{record['correction_of']})"
        return text
    if kind == "misread":
        return f"misread “{record.get('raw', '')}”"
    if kind == "shuffle":
        cut = record.get("cut_card")
        return (
            f"new shoe: {record.get('decks')} decks, cut card {cut if cut is not None else 'none'}"
        )
    if kind == "reshuffle_discards":
        return "discards reshuffled and loaded (16.7)"
    if kind == "wager_seen":
        return f"camera{where}{amount}"
    return f"{kind.replace('_', ' ')}{where}{player}{amount}"
