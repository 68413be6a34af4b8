"""Settlement: each hand's outcome against the dealer (5.1) and what every wager returns.

The arithmetic of odds, bonuses and returns is :mod:`controller.payouts`; this room applies it
to a finished round, row by row (one :class:`~controller.engine.results.Settlement` per player,
box, hand and kind), ends the round and puts its cards in the discard rack.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

from controller import payouts
from controller.cards import TEN_VALUES
from controller.engine.results import (
    BONUS_50,
    HAND,
    INSURANCE,
    SUPER_BONUS,
    RoundResult,
    Settlement,
    money,
)
from controller.engine.state import SETTLED, VOID, ZERO, Hand, Phase, Round, TableState, Wager

ONE: Final = Decimal(1)


def finish(t: TableState, rnd: Round, status: Phase) -> None:
    """End the round: settled (or void), its result recorded, its cards to the discards."""
    rnd.phase = status
    result = round_result(t, rnd, status)
    if status is SETTLED:
        check_seen_wagers(t, rnd)
    result.flags = rnd.flags
    discards = t.discards
    for box in rnd.ordered_boxes():
        for hand in box.hands:
            discards.extend(hand.cards)
    discards.extend(rnd.dealer)
    if rnd.pending_card is not None:
        discards.append(rnd.pending_card)
        rnd.pending_card = None
    t.end_round(result)


def check_seen_wagers(t: TableState, rnd: Round) -> None:
    """5.5 at settlement: the wagers settled against the camera's view of the box."""
    if not rnd.seen:
        return  # the camera has reported no box: nothing to compare
    for number, box in sorted(rnd.boxes.items()):
        seen = rnd.seen.get(number)
        if seen is None or box.void:
            continue
        staked = sum(box.bets.values(), ZERO)
        if seen != staked:
            t.flag(
                t.ref("camera_change"),
                f"box {number} settled on wagers of {money(staked)} but the camera saw "
                f"{money(seen)}",
                number,
            )


def outcome(t: TableState, rnd: Round, hand: Hand) -> str:
    """5.1: ``win``, ``lose``, ``push``, ``surrender`` or ``void``."""
    if hand.void:
        return "void"
    if hand.surrendered:
        return "surrender"
    if hand.hard > 21:
        return "lose"
    return payouts.outcome(t.rules, hand.best, hand.natural, rnd.dealer_best, rnd.dealer_natural)


def returned(
    t: TableState, rnd: Round, box_first: Hand, hand: Hand, result: str, w: Wager
) -> Decimal:
    """What a wager (with its double) returns."""
    rules = t.rules
    # The 11.1 odds matter only to a win that is neither doubled (12.5) nor rescued (12.8).
    earns = result == "win" and not w.double and not w.rescued
    return payouts.returned(
        rules,
        result,
        w.amount,
        w.double,
        rescued=w.rescued,
        ratio=payouts.odds(rules, hand.cards, hand.best, hand.natural) if earns else ONE,
        dealer_natural=rnd.dealer_natural,
        busted=hand.hard > 21,
        added_by_split=hand.split and hand is not box_first,
    )


def round_result(t: TableState, rnd: Round, status: Phase | str) -> RoundResult:
    """The round as the replay document shows it; with settlements once it is final."""
    hands: list[dict[str, Any]] = []
    final = status in (SETTLED, VOID)
    outcomes: list[str | None] = []
    for box in rnd.ordered_boxes():
        for i, hand in enumerate(box.hands):
            result: str | None
            if status == VOID:
                result = "void"
            elif final:
                result = outcome(t, rnd, hand)
            else:
                result = "void" if hand.void else "lose" if hand.hard > 21 else None
            outcomes.append(result)
            hands.append(
                {
                    "box": box.number,
                    "hand": i,
                    "cards": list(hand.cards),
                    "total": hand.best,
                    "doubled": hand.doubled,
                    "outcome": result,
                }
            )
    settlements = settlement_rows(t, rnd, outcomes) if final else []
    return RoundResult(
        round=rnd.number,
        status=str(status),
        dealer=list(rnd.dealer),
        dealer_total=rnd.dealer_best if rnd.dealer else 0,
        hands=hands,
        settlements=settlements,
        flags=list(rnd.flags),
        dealers=list(rnd.dealers),
    )


def settlement_rows(t: TableState, rnd: Round, outcomes: list[str | None]) -> list[Settlement]:
    """Every settlement row of the round, by box, then player in betting order."""
    rules = t.rules
    super_winners: set[tuple[str, int]] = set()
    rows: dict[tuple[int, str], list[Settlement]] = {}
    dealer_first = rnd.dealer[0] if rnd.dealer else None
    k = 0  # index into outcomes, in the order the hands were listed
    for box in rnd.ordered_boxes():
        number = box.number
        if not box.hands:  # voided before the deal: the bets go back
            for player, amount in box.bets.items():
                rows[(number, player)] = [Settlement(player, number, 0, HAND, amount, amount)]
            continue
        first = box.hands[0]
        box_outcomes = outcomes[k : k + len(box.hands)]
        k += len(box.hands)
        for i, hand in enumerate(box.hands):
            result = box_outcomes[i] or "void"
            for w in hand.wagers:
                back = returned(t, rnd, first, hand, result, w)
                rows.setdefault((number, w.player), []).append(
                    Settlement(w.player, number, i, HAND, w.amount + w.double, back)
                )
        for player, amount in box.insurance.items():
            if box.void or box_outcomes[0] == "void":
                back = amount
            elif len(rnd.dealer) >= 2 and rnd.dealer[1][0] in TEN_VALUES:
                back = amount + amount * payouts.insurance_ratio(rules)
            else:
                back = ZERO
            rows.setdefault((number, player), []).append(
                Settlement(player, number, 0, INSURANCE, amount, back)
            )
        if rules.super_bonus and dealer_first is not None and dealer_first[0] == "7":  # 11.2
            for i, hand in enumerate(box.hands):
                if box_outcomes[i] == "void":
                    continue
                for w in hand.wagers:
                    bonus = payouts.super_bonus(
                        rules, hand.cards, dealer_first, w.amount, w.double > 0
                    )
                    if bonus:
                        super_winners.add((w.player, number))
                        rows[(number, w.player)].append(
                            Settlement(w.player, number, i, SUPER_BONUS, ZERO, bonus)
                        )
    if super_winners and rules.bonus_50 > 0:
        for box in rnd.ordered_boxes():
            for player in box.bets:
                if (player, box.number) in super_winners or box.void:
                    continue
                first_hand = next(
                    (i for i, h in enumerate(box.hands) if h.wager_of(player) is not None), 0
                )
                rows.setdefault((box.number, player), []).append(
                    Settlement(player, box.number, first_hand, BONUS_50, ZERO, rules.bonus_50)
                )
    ordered: list[Settlement] = []
    for box in rnd.ordered_boxes():
        for player in box.bets:
            ordered.extend(rows.get((box.number, player), []))
    return ordered
