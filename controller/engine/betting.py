"""Wagers: bets, "no more bets", and the chip camera's view of the boxes (5.2, 5.5, limits).

A round starts with the first bet after the previous round ended. After "no more bets" and the
first card no wager may be made, altered or withdrawn (5.5); the camera's stable wager per box
is compared with the recorded wagers at "no more bets" (5.2), after it (5.5) and at settlement.
"""

from __future__ import annotations

from typing import Final

from controller.engine.results import Refusal, money
from controller.engine.state import (
    BETTING,
    CLOSED,
    DEALER,
    LIVE_PHASES,
    SETTLED,
    VOID,
    ZERO,
    Box,
    Round,
    TableState,
)
from controller.events import Bet, NoMoreBets, WagerSeen


def bet_refusal(t: TableState, ev: Bet) -> Refusal | None:
    """Why a bet may not be made now (None: it may). 5.5: no wager after "no more bets" and the
    first card; none while the last round's dealer hand is incomplete; the table's boxes and
    limits (a withdrawal, an amount of 0, is always within them)."""
    assert ev.box is not None and ev.player is not None and ev.amount is not None
    rnd = t.current_round
    if rnd is not None and rnd.phase is DEALER:
        # The dealer's hand is incomplete: the round is not settled until it is (or until a
        # supervisor voids it, 16.5), and the next round's wagers wait for that.
        return Refusal(
            "dealer",
            f"{ev.player}'s bet on box {ev.box} refused: round {rnd.number} is not settled, "
            f"the dealer's hand is incomplete ({_dealer_hand(rnd)}); draw the dealer's cards, "
            "or a supervisor voids the round (16.5)",
        )
    if rnd is not None and rnd.phase in LIVE_PHASES:
        return Refusal(
            t.ref("late_bet"),
            f"{ev.player} bet {money(ev.amount)} on box {ev.box} after no more bets "
            "and the first card: refused",
        )
    setup = t.setup
    if ev.box > setup.boxes:
        return Refusal("limits", f"box {ev.box} does not exist at a {setup.boxes}-box table")
    if ev.amount != 0 and not setup.min_bet <= ev.amount <= setup.max_bet:
        return Refusal(
            "limits",
            f"{ev.player}'s wager of {money(ev.amount)} on box {ev.box} is outside the "
            f"table's limits {money(setup.min_bet)}-{money(setup.max_bet)}: refused",
        )
    return None


# A bet refused in these phases belongs to the round in play; between rounds a bet, even one
# refused, opens the next round, which its flag then belongs to.
LIVE_PHASES_AND_DEALER: Final = LIVE_PHASES | {DEALER}


def on_bet(t: TableState, ev: Bet) -> None:
    assert ev.box is not None and ev.player is not None and ev.amount is not None
    why = bet_refusal(t, ev)
    rnd = t.current_round
    if why is not None and rnd is not None and rnd.phase in LIVE_PHASES_AND_DEALER:
        t.flag(why.rule, why.reason, ev.box)
        return
    if rnd is None or rnd.phase is SETTLED or rnd.phase is VOID:
        rnd = t.open_round()
    if why is not None:
        # A box the table lacks was flagged without naming it (it has no box to name).
        t.flag(why.rule, why.reason, None if ev.box > t.setup.boxes else ev.box)
        return
    box = rnd.boxes.get(ev.box)
    if ev.amount == 0:
        if box is not None and ev.player in box.bets:
            del box.bets[ev.player]
            if not box.bets:
                del rnd.boxes[ev.box]
            elif box.controller == ev.player:
                box.controller = next(iter(box.bets))
        return
    if box is None:
        box = rnd.boxes[ev.box] = Box(number=ev.box, bets={}, controller=ev.player)
    box.bets[ev.player] = ev.amount
    if ev.controls:
        box.controller = ev.player


def _dealer_hand(rnd: Round) -> str:
    return f"{' '.join(rnd.dealer)}, {rnd.dealer_best}"


def on_no_more_bets(t: TableState, ev: NoMoreBets) -> None:
    rnd = t.current_round
    if rnd is None or rnd.phase is not BETTING or not rnd.boxes:
        return
    rnd.phase = CLOSED
    check_presence(t, rnd)


def check_presence(t: TableState, rnd: Round) -> None:
    """5.2 at "no more bets": chips with no recorded wager, a wager with no chips."""
    if not rnd.seen:
        return  # the camera has reported no box: nothing to compare
    for number in sorted(set(rnd.seen) | set(rnd.boxes)):
        seen = rnd.seen.get(number)
        box = rnd.boxes.get(number)
        if seen is None:
            continue  # the camera has not reported this box: nothing to compare
        if box is not None and seen == 0:
            recorded = money(sum(box.bets.values(), ZERO))
            t.flag(
                t.ref("camera_presence"),
                f"box {number} has a recorded wager of {recorded} but the camera sees no chips",
                number,
            )
        elif box is None and seen > 0:
            t.flag(
                t.ref("camera_presence"),
                f"the camera sees {money(seen)} in box {number}, which has no recorded wager",
                number,
            )


def on_wager_seen(t: TableState, ev: WagerSeen) -> None:
    assert ev.box is not None and ev.amount is not None
    rnd = t.current_round
    if rnd is None or rnd.phase is SETTLED or rnd.phase is VOID:
        return  # between rounds the layout is the players' own
    before = rnd.seen.get(ev.box)
    rnd.seen[ev.box] = ev.amount
    if rnd.phase is BETTING:
        return
    if ev.box not in rnd.boxes and ev.amount == 0:
        return  # stray chips taken back from a box nobody bet on: no wager changed
    if (before if before is not None else ZERO) != ev.amount:
        t.flag(
            t.ref("camera_change"),
            f"the wager in box {ev.box} changed from {money(before or ZERO)} to "
            f"{money(ev.amount)} after no more bets",
            ev.box,
        )
