"""The players' decisions as they arrive: stand, hit, double, split, surrender, rescue, insurance,
and the dealer's offers of insurance and surrender.

Each handler asks the predicate of :mod:`~controller.engine.decisions` whether the decision is
allowed; a refusal is a flag naming the rule, and the event changes nothing. Decisions in turn
name the box only as a check: the hand in play is the engine's to know.
"""

from __future__ import annotations

from controller.engine import deal, decisions
from controller.engine.decisions import (
    double_amount_refusal,
    double_refusal,
    may_surrender,
    split_refusal,
    split_undoable,
)
from controller.engine.results import Refusal, money
from controller.engine.state import (
    BETTING,
    CLOSED,
    DEALER,
    DEALING,
    PLAY,
    ZERO,
    Box,
    Hand,
    Round,
    TableState,
)
from controller.engine.state import Wager as _Wager
from controller.events import (
    Double,
    Hit,
    Insurance,
    OfferInsurance,
    OfferSurrender,
    OnBox,
    Rescue,
    Split,
    Stand,
    Surrender,
)


def in_play(t: TableState, ev: OnBox, action: str) -> tuple[Round, Box, int] | None:
    """The round, box and hand an in-turn decision applies to; flags ``turn`` otherwise."""
    rnd = t.current_round
    if rnd is not None and rnd.peek_pending:
        deal.peek(t, rnd)  # the first decision closes insurance: the dealer checks the hole card
        rnd = t.current_round
    if rnd is None or rnd.phase is not PLAY:
        phase = "no round is in play" if rnd is None else f"the round is in {rnd.phase}"
        t.flag("turn", f"{action} for box {ev.box}: {phase}: ignored", ev.box)
        return None
    target = rnd.hand_in_play()
    assert target is not None
    box, idx = target
    if box.number != ev.box:
        t.flag(
            "turn", f"{action} for box {ev.box}, but box {box.number} is in play: ignored", ev.box
        )
        return None
    return rnd, box, idx


def on_stand(t: TableState, ev: Stand) -> None:
    found = in_play(t, ev, "stand")
    if found is None:
        return
    rnd, box, idx = found
    hand = box.hands[idx]
    if len(hand.cards) < 2:
        t.flag(
            t.ref("split_order"),
            f"box {box.number} hand {idx} has one card: it must take its second card first",
            box.number,
        )
        return
    if hand.doubled:
        t.flag(
            t.ref("double_card"),
            f"box {box.number} doubled: it takes exactly one more card",
            box.number,
        )
        return
    if not box.decided and not hand.split:
        decisions.first_decision(t, rnd, box)
    hand.done = True
    if rnd.offered_to == (box.number, idx):
        deal.pass_offer(t, rnd)
    deal.advance(t, rnd)


def on_hit(t: TableState, ev: Hit) -> None:
    """A hit is optional (the next card is one); it takes a 16.4 card on offer."""
    found = in_play(t, ev, "hit")
    if found is None:
        return
    rnd, box, idx = found
    if rnd.offered_to == (box.number, idx):
        deal.accept_pending(t, rnd)


def on_double(t: TableState, ev: Double) -> None:
    """12.1-12.4 (10.1-10.3): the controller doubles, then back-bettors in line (15.3)."""
    assert ev.player is not None and ev.amount is not None
    found = in_play(t, ev, "double")
    if found is None:
        return
    rnd, box, idx = found
    hand = box.hands[idx]
    wager = hand.wager_of(ev.player)
    if ev.player != box.controller:
        _back_bettor_double(t, box, hand, idx, wager, ev)
        return
    assert wager is not None
    if hand.doubled:
        t.flag(
            t.ref("double_card"),
            f"box {box.number} has already doubled: no second double",
            box.number,
        )
        return
    why = double_refusal(t.rules, hand)
    if why:
        t.flag(t.ref("double"), why, box.number)
        return
    why = double_amount_refusal(t.rules, wager, ev.amount)
    if why:
        t.flag(t.ref("double_amount"), why, box.number)
        return
    if not box.decided and not hand.split:
        decisions.first_decision(t, rnd, box)
    hand.doubled = True
    wager.double = ev.amount
    if t.rules.double_aces_count_one:  # 12.2
        hand.aces_fixed = sum(1 for c in hand.cards[:2] if c[0] == "A")
    if rnd.offered_to == (box.number, idx):
        deal.accept_pending(t, rnd)


def _back_bettor_double(
    t: TableState, box: Box, hand: Hand, idx: int, wager: _Wager | None, ev: Double
) -> None:
    if wager is None:
        t.flag(
            t.ref("back_bettor"),
            f"{ev.player} has no wager on box {box.number} hand {idx}: double refused",
            box.number,
        )
    elif not hand.doubled:  # the hand in play waits for its double card: in line
        t.flag(
            t.ref("back_bettor"),
            f"{ev.player} doubled on box {box.number}, where the controller "
            f"{box.controller} has not: refused",
            box.number,
        )
    elif wager.double > 0:
        t.flag(
            t.ref("double_card"),
            f"{ev.player} has already doubled on box {box.number}",
            box.number,
        )
    else:
        why = double_amount_refusal(t.rules, wager, ev.amount)
        if why:
            t.flag(t.ref("double_amount"), why, box.number)
        else:
            wager.double = ev.amount


def on_split(t: TableState, ev: Split) -> None:
    """13.1-13.4 (11.1-11.4): the controller splits; a back-bettor follows (15.3)."""
    found = in_play(t, ev, "split")
    if found is None:
        return
    rnd, box, idx = found
    if ev.player is not None and ev.player != box.controller:
        _back_bettor_split(t, box, ev.player)
        return
    hand = box.hands[idx]
    situation, why = split_refusal(t.rules, box, hand)
    if situation:
        t.flag(t.ref(situation), why, box.number)
        return
    if not box.decided and not hand.split:
        decisions.first_decision(t, rnd, box)
    aces = hand.cards[0][0] == "A"
    controller = hand.wager_of(box.controller)
    assert controller is not None
    new = Hand(
        box=box.number,
        wagers=[_Wager(box.controller, controller.amount)],
        split=True,
        split_aces=aces,
    )
    new.add(hand.take_last())
    hand.split = True
    hand.split_aces = aces
    box.hands.insert(idx + 1, new)
    box.split_open = (idx, idx + 1)
    if rnd.offered_to == (box.number, idx):
        deal.accept_pending(t, rnd)


def _back_bettor_split(t: TableState, box: Box, player: str) -> None:
    if box.split_open is None:
        t.flag(
            t.ref("back_bettor"),
            f"{player} split on box {box.number}, where the controller {box.controller} "
            "has not: refused",
            box.number,
        )
        return
    source, new = box.split_open
    wager = box.hands[source].wager_of(player)
    if wager is None or box.hands[new].wager_of(player) is not None:
        t.flag(
            t.ref("back_bettor"),
            f"{player} has no wager on box {box.number} hand {source} to follow the split",
            box.number,
        )
        return
    box.hands[new].wagers.append(_Wager(player, wager.amount))


def offer_surrender_refusal(t: TableState, box: int) -> Refusal | None:
    """The dealer may offer surrender to any box with a wager in the round, in a game that has
    surrender (the offer is what 16.12 asks about later)."""
    if not t.rules.surrender:
        return Refusal(t.ref("surrender"), "this game has no surrender")
    rnd = t.current_round
    if rnd is None or box not in rnd.boxes:
        return Refusal("turn", f"surrender offered to box {box}, which is not in play")
    return None


def on_offer_surrender(t: TableState, ev: OfferSurrender) -> None:
    assert ev.box is not None
    why = offer_surrender_refusal(t, ev.box)
    if why is not None:
        t.flag(why.rule, why.reason, ev.box)
        return
    rnd = t.current_round
    assert rnd is not None
    rnd.boxes[ev.box].surrender_offered = True


def on_surrender(t: TableState, ev: Surrender) -> None:
    """9 (assumed): the controller surrenders for every wager on the box (9.6); late, 16.12."""
    assert ev.box is not None
    rnd = t.current_round
    box = rnd.boxes.get(ev.box) if rnd is not None else None
    if rnd is None or box is None or not (rnd.phase is PLAY or rnd.phase is DEALER):
        t.flag("turn", f"surrender for box {ev.box}: no hand of it is in play", ev.box)
        return
    if not t.rules.surrender:
        t.flag(t.ref("surrender"), "this game has no surrender", ev.box)
        return
    target = rnd.hand_in_play()
    in_turn = target is not None and target[0] is box
    hand = box.hands[0]
    late = box.late_surrender
    two_cards = len(box.hands) == 1 and len(hand.cards) == 2
    if not ((two_cards and (in_turn or late)) or split_undoable(box)) or hand.natural:
        t.flag(
            t.ref("surrender"),
            f"box {ev.box} may surrender only on its first two cards, before it draws",
            ev.box,
        )
        return
    if not may_surrender(t.rules, box):
        t.flag(t.ref("surrender"), f"box {ev.box} may not surrender", ev.box)
        return
    if len(box.hands) == 2:  # 16.12 after a split: the split is undone
        second = box.hands.pop()
        hand.add(second.take_last())
        hand.split = hand.split_aces = False
        box.split_open = None
    if hand.doubled:  # 16.12 after a double: the double is withdrawn
        hand.doubled = False
        hand.aces_fixed = 0
        for w in hand.wagers:
            w.double = ZERO
    box.surrendered = True
    hand.surrendered = True
    hand.done = True
    box.decided = True
    box.late_surrender = False
    if rnd.offered_to == (box.number, 0):
        deal.pass_offer(t, rnd)
    deal.advance(t, rnd)


def on_rescue(t: TableState, ev: Rescue) -> None:
    """12.8: after the double card, 21 or under, before any further card: each player may take
    back the doubled part and forfeit the original wager."""
    assert ev.box is not None and ev.player is not None
    if not t.rules.rescue:
        t.flag(t.ref("rescue"), "this game has no rescue of a doubled wager", ev.box)
        return
    rnd = t.current_round
    box = rnd.boxes.get(ev.box) if rnd is not None else None
    hand = next((h for h in box.hands if h.rescue_open), None) if box is not None else None
    if hand is None:
        t.flag(
            t.ref("rescue"),
            f"rescue on box {ev.box}: no doubled hand has just taken its card (21 or under, "
            "no further card drawn)",
            ev.box,
        )
        return
    wager = hand.wager_of(ev.player)
    if wager is None or wager.double == 0 or wager.rescued:
        t.flag(
            t.ref("rescue"),
            f"rescue on box {ev.box}: {ev.player} has no doubled wager to withdraw",
            ev.box,
        )
        return
    wager.rescued = True
    assert rnd is not None
    deal.advance(t, rnd)


def on_insurance(t: TableState, ev: Insurance) -> None:
    """10.1-10.4 (and 16.11): up to half the initial wager, when the dealer's first card is an
    ace, after the initial deal and before any further card."""
    assert ev.box is not None and ev.player is not None and ev.amount is not None
    rnd = t.current_round
    box = rnd.boxes.get(ev.box) if rnd is not None else None
    if not t.rules.insurance:
        t.flag(t.ref("insurance_not_due"), "this game has no insurance", ev.box)
        return
    if rnd is None:
        t.flag(
            t.ref("insurance_window"),
            f"insurance from {ev.player} on box {ev.box}: no round is in play",
            ev.box,
        )
        return
    if box is None or ev.player not in box.bets:
        t.flag(
            t.ref("insurance_not_due"),
            f"insurance from {ev.player} on box {ev.box}, where they have no initial wager",
            ev.box,
        )
        return
    if rnd.phase is BETTING or rnd.phase is CLOSED or rnd.phase is DEALING:
        t.flag(
            t.ref("insurance_window"),
            "insurance is taken after the initial deal is complete",
            ev.box,
        )
        return
    if not decisions.dealer_ace_up(rnd):
        t.flag(
            t.ref("insurance_not_due"),
            "insurance only when the dealer's first card is an ace",
            ev.box,
        )
        return
    if not rnd.insurance_open:
        t.flag(
            t.ref("insurance_window"),
            f"insurance from {ev.player} on box {ev.box} after play had begun: refused",
            ev.box,
        )
        return
    if box.hands[0].natural:
        t.flag(
            t.ref("insurance_natural"),
            f"box {ev.box} holds {t.rules.natural_name} and may not insure",
            ev.box,
        )
        return
    if ev.player in box.insurance:
        t.flag("5.6", f"{ev.player}'s insurance on box {ev.box} is already placed", ev.box)
        return
    limit = box.bets[ev.player] * t.rules.insurance_max_fraction
    if ev.amount > limit:
        t.flag(
            t.ref("insurance_amount"),
            f"{ev.player}'s insurance of {money(ev.amount)} is more than half the wager "
            f"({money(limit)})",
            ev.box,
        )
        return
    if ev.amount > 0:
        box.insurance[ev.player] = ev.amount


def offer_insurance_refusal(t: TableState) -> Refusal | None:
    """The dealer announces insurance when his first card is an ace (10.1), in a game that has
    it; announced late, the window it reopens is the decisions' to say (10.3, 16.11)."""
    rnd = t.current_round
    if rnd is None or not t.rules.insurance or not decisions.dealer_ace_up(rnd):
        return Refusal(
            t.ref("insurance_not_due"),
            "insurance announced, but the dealer's first card is not an ace",
        )
    return None


def on_offer_insurance(t: TableState, ev: OfferInsurance) -> None:
    why = offer_insurance_refusal(t)
    if why is not None:
        t.flag(why.rule, why.reason)
        return
    rnd = t.current_round
    assert rnd is not None
    rnd.insurance_offered = True
