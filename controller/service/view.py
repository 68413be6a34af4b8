"""What the dealer's screen shows, computed from the engine's `due()` and the round results.

Pure functions, no state: the service calls them for every snapshot. They rearrange what the
engine says (per box: wagers, hands, the camera's wager, the payout) and turn the engine's
prompts into the dealer's announcement buttons; they never decide anything about the rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from controller.events import TableSetup

_SURRENDER_PROMPT = re.compile(r"offer surrender to box (\d+)")


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
) -> list[dict[str, Any]]:
    """One view per box (1..boxes): players' wagers, hands, the camera's wager, the payout.

    During a round the hands come from the engine's `due()`; between rounds the screen keeps
    the last round's hands with its settlements, so the dealer pays from the screen.
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
            "flags": per_box_flags.get(number, 0),
            "payouts": [],
        }
        if number in live:
            _from_live(view, live[number])
        elif settled is not None:
            _from_result(view, settled, number)
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
                "total": f"soft {total}" if hand.get("soft") and total != 21 else total,
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
        view["payouts"].append(
            {
                "player": s.get("player"),
                "hand": s.get("hand"),
                "kind": s.get("kind"),
                "staked": s.get("staked"),
                "returned": s.get("returned"),
                "net": s.get("net"),
            }
        )
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
        view["hands"].append(
            {
                "hand": hand.get("hand", 0),
                "cards": list(hand.get("cards") or []),
                "total": hand.get("total"),
                "doubled": bool(hand.get("doubled")),
                "status": None,
                "outcome": hand.get("outcome"),
            }
        )


def table_actions(due: Mapping[str, Any], setup: TableSetup) -> list[dict[str, Any]]:
    """The dealer's own announcements open now (no PIN): no more bets, offers, a new shoe."""
    actions: list[dict[str, Any]] = []
    prompts = [str(p) for p in due.get("prompts") or []]
    phase = due.get("phase")
    if phase == "betting" and due.get("boxes"):
        actions.append({"type": "no_more_bets", "label": "No more bets"})
    if "offer insurance" in prompts:
        actions.append({"type": "offer_insurance", "label": "Offer insurance"})
    for prompt in prompts:
        m = _SURRENDER_PROMPT.search(prompt)
        if m:
            box = int(m.group(1))
            actions.append(
                {"type": "offer_surrender", "box": box, "label": f"Offer surrender · box {box}"}
            )
    if phase == "idle":
        cards = setup.decks * setup.rules.cards_per_deck()
        actions.append(
            {
                "type": "shuffle",
                "label": "New shoe",
                "decks": setup.decks,
                "cut_card_default": str(round(cards * 0.75)),
            }
        )
    return actions


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
