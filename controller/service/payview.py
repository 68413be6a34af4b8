"""A settled round's money as the dealer handles the chips: what to pay, take or leave.

The engine settles each wager as (staked, returned); a dealer does not hand back the stake and
pay the return, he leaves the stake and pays the win beside it, or takes the stake. So each
settlement row becomes lines of chip actions:

- ``pay 50`` (the win, beside the stake) with the odds and their rule where they are not even
  money: ``pay 75 (3:2)``, "pontoon (11.1)", "five-card 21 (11.1)", "doubled: even money (12.5)";
- ``take 50`` (the stake is lost), ``push`` (the stake stays), ``return 50`` (a void, 16.5);
- insurance, surrender and a rescue on lines of their own: "insurance: pay 20 (2:1)",
  "surrender: take 25, return 25 (9.5)", "rescue: take 50, return the double 50 (12.8)";
- the Super Bonus (11.2) and the $50 bonus (11.3) as ``pay`` lines naming them.

Every amount comes from the engine's settlement; only the wording is this module's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from controller.engine.results import money
from controller.rules import RuleSet

ZERO = Decimal(0)


def odds_text(ratio: Decimal) -> str:
    """1.5 -> "3:2", 2 -> "2:1"."""
    frac = Fraction(ratio).limit_denominator(20)
    return f"{frac.numerator}:{frac.denominator}"


def category(cards: list[str], rules: RuleSet, ratio: Decimal) -> str:
    """The odds category a winning hand was paid at (11.1), by its cards."""
    number = " (11.1)" if rules.bonus_odds else ""
    n = len(cards)
    ranks = sorted(c[0] for c in cards)
    if n == 3 and ranks in (["6", "7", "8"], ["7", "7", "7"]):
        suits = {c[1] for c in cards}
        kind = "suited spades" if suits == {"S"} else "suited" if len(suits) == 1 else "mixed"
        trio = "7-7-7" if ranks == ["7", "7", "7"] else "6-7-8"
        return f"{trio} {kind}{number}"
    if n == 2:
        return f"{rules.natural_name}{number}"
    if n >= 5:
        words = {5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}
        return f"{words.get(n, str(n))}-card 21{number}"
    return f"odds {odds_text(ratio)}{number}"


def line(action: str, amount: Decimal | None, note: str = "", kind: str = "hand") -> dict[str, Any]:
    return {
        "action": action,
        "amount": money(amount) if amount is not None else None,
        "note": note,
        "kind": kind,
    }


def settlement_lines(
    row: Mapping[str, Any],
    hand: Mapping[str, Any] | None,
    rules: RuleSet,
    *,
    rescued: bool = False,
) -> list[dict[str, Any]]:
    """The chip actions for one settlement row (``hand``: the row's hand in the result)."""
    kind = str(row.get("kind"))
    staked = Decimal(str(row.get("staked", "0")))
    returned = Decimal(str(row.get("returned", "0")))
    net = returned - staked
    if kind == "super_bonus":
        return [line("pay", returned, "Super Bonus (11.2)", kind)]
    if kind == "bonus_50":
        return [line("pay", returned, "bonus (11.3)", kind)]
    if kind == "insurance":
        if returned > staked:
            ratio = odds_text(net / staked) if staked else ""
            return [line("pay", net, f"insurance wins ({ratio})", kind)]
        if returned == staked:
            return [line("return", staked, "insurance returned: hand void (10.7)", kind)]
        return [line("take", staked, "insurance loses", kind)]
    outcome = (hand or {}).get("outcome")
    cards = list((hand or {}).get("cards") or [])
    doubled = bool((hand or {}).get("doubled"))
    if outcome == "void":
        return [line("return", staked, "void (16.5)")]
    if rescued:
        return [
            line("take", -net, "rescue (12.8): original forfeit", "rescue"),
            line("return", returned, "the double back", "rescue"),
        ]
    if outcome == "surrender":
        if returned == 0:
            return [line("take", staked, "surrender: all, to a pontoon (9.5)", kind)]
        return [
            line("take", -net, "surrender: half (9.5)", "surrender"),
            line("return", returned, "half back", "surrender"),
        ]
    if net > 0:
        if doubled:
            return [line("pay", net, "doubled: even money (12.5)")]
        paid = net / staked if staked else Decimal(1)
        if paid.quantize(Decimal("0.01")) != 1:
            return [line("pay", net, f"{category(cards, rules, paid)} {odds_text(paid)}")]
        return [line("pay", net, "even money")]
    if net == 0:
        return [line("push", None, "the stake stays")]
    if returned > 0:  # 12.7: the dealer's pontoon takes the original, the double comes back
        return [
            line("take", -net, "the original (12.7)"),
            line("return", returned, "the double back"),
        ]
    return [line("take", staked, "")]


def round_lines(
    result: Mapping[str, Any],
    box: int,
    rules: RuleSet,
    rescues: Iterable[tuple[int, int, int, str]] = (),
) -> list[dict[str, Any]]:
    """Every chip action of one box in a settled round, player by player, hand by hand.

    ``rescues``: the wagers the service saw rescued, as (round, box, hand, player). Without
    it a rescue is told by its figures: a doubled hand returning less than its stake though it
    won or stood off, or returning something though it lost to a dealer without a natural."""
    hands = {
        (h.get("box"), h.get("hand")): h
        for h in result.get("hands") or []
        if isinstance(h, Mapping)
    }
    number = result.get("round")
    rescued = {(b, h, p) for r, b, h, p in rescues if r == number}
    dealer = result.get("dealer") or {}
    dealer_natural = len(dealer.get("cards") or []) == 2 and dealer.get("total") == 21
    out: list[dict[str, Any]] = []
    for row in result.get("settlements") or []:
        if row.get("box") != box:
            continue
        hand = hands.get((box, row.get("hand")))
        player = str(row.get("player"))
        doubled = hand is not None and bool(hand.get("doubled"))
        staked = Decimal(str(row.get("staked", "0")))
        back = Decimal(str(row.get("returned", "0")))
        outcome = (hand or {}).get("outcome")
        was_rescued = (
            row.get("kind") == "hand"
            and doubled
            and (
                (box, row.get("hand"), player) in rescued
                or (outcome in ("win", "push") and 0 < back < staked)
                or (outcome == "lose" and back > 0 and not dealer_natural)
            )
        )
        for item in settlement_lines(row, hand, rules, rescued=was_rescued):
            out.append({"player": row.get("player"), "hand": row.get("hand"), **item})
    return out
