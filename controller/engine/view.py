"""The dealer's screen's view: what is due next (:class:`Due`), in the dealer's words.

Everything here is read from the state and from the typed decisions of
:func:`controller.engine.decisions.open_decisions`: the prompts are those decisions and the
hand in play said in words, ``Due.decisions`` is the same list in the form the screen's buttons
read. The per-box view (wagers, hands, totals) is built only when someone reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.engine import deal, decisions, inspection, opening
from controller.engine.decisions import SCREEN_KINDS, Decision, Kind
from controller.engine.results import money
from controller.engine.state import (
    BETTING,
    CLOSED,
    DEALER,
    DEALING,
    PLAY,
    Box,
    DayState,
    Round,
    TableState,
)


@dataclass(slots=True)
class Due:
    """What the dealer must do next: the dealer's screen shows exactly this.

    ``open`` holds the typed decisions (:class:`~controller.engine.decisions.Decision`);
    ``decisions`` is the screen's form of those a box's players (or the hole-card check) take.
    Read a ``Due`` before the next event is applied: its box view is built when first read.
    """

    phase: str
    round: int
    next_card: dict[str, Any] | None = None
    prompts: list[str] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    dealer: dict[str, Any] = field(default_factory=lambda: {"cards": [], "total": 0})
    shoe: dict[str, Any] | None = None
    in_play: dict[str, Any] | None = None  # the hand in play: box, hand, cards, total, soft
    inspection: dict[str, Any] | None = None  # the deck under inspection: a running count
    opening: dict[str, Any] | None = None  # the table's day once opened: who, the steps done
    open: tuple[Decision, ...] = ()
    view: Callable[[], list[dict[str, Any]]] = field(default=lambda: [], repr=False)
    _boxes: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def boxes(self) -> list[dict[str, Any]]:
        if self._boxes is None:
            self._boxes = self.view()
        return self._boxes

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "round": self.round,
            "next_card": self.next_card,
            "prompts": list(self.prompts),
            "decisions": [dict(d) for d in self.decisions],
            "boxes": self.boxes,
            "dealer": self.dealer,
            "shoe": self.shoe,
            "in_play": self.in_play,
            "inspection": self.inspection,
            "opening": self.opening,
        }


def due(t: TableState) -> Due:
    """What the dealer must do next, and exactly which decisions are open to whom."""
    rnd = t.current_round
    out = Due(phase="idle", round=rnd.number if rnd else t.rounds_played + 1)
    prompts = out.prompts
    shoe = t.shoe
    remaining = t.shoe_remaining()
    _opening(t, out)
    if shoe is None:
        prompts.append("load a shoe: shuffle and record the decks and the cutting card")
    else:
        out.shoe = {
            "decks": shoe.decks,
            "drawn": shoe.drawn,
            "remaining": max(0, remaining),
            "cut_card": shoe.cut_card,
            "cut_out": shoe.cut_out,
            "ended": shoe.ended,
            "read_out": shoe.read_out,
        }
        if shoe.ended:
            prompts.append(
                f"read out the cards left in the shoe ({shoe.read_out} read), then load the "
                "next shoe"
            )
    reshuffle = shoe is not None and t.reshuffle_due
    opened = decisions.open_now(t)
    out.open = opened
    if rnd is None:
        prompts.append("shuffle before the next round" if reshuffle else "place your bets")
        return out
    out.phase = str(rnd.phase)
    out.view = lambda: [box_view(rnd, b) for b in rnd.ordered_boxes()]
    out.dealer = {"cards": list(rnd.dealer), "total": rnd.dealer_best if rnd.dealer else 0}
    target = deal.next_card(t)
    out.next_card = target.to_dict() if target is not None else None
    kinds = {d.kind for d in opened}
    if Kind.OFFER_INSURANCE in kinds:
        prompts.append("offer insurance")
    phase = rnd.phase
    if phase is BETTING:
        prompts.append("call no more bets" if rnd.boxes else "place your bets")
    elif phase is CLOSED:
        first = rnd.ordered_boxes()[0].number if rnd.boxes else None
        prompts.append(f"deal: the first card to box {first}")
    elif phase is DEALING:
        target_box = rnd.deal_queue[0]
        if target_box == 0:
            prompts.append("deal the dealer's card")
        else:
            prompts.append(f"deal a card to box {target_box}")
    elif phase is PLAY:
        _play_prompts(t, rnd, out, opened)
    elif phase is DEALER:
        if len(rnd.dealer) < 2:
            prompts.append("draw the dealer's second card")
        else:
            prompts.append(f"draw for the dealer (dealer has {rnd.dealer_best})")
    out.decisions = [d.to_dict() for d in opened if d.kind in SCREEN_KINDS]
    if shoe is not None and remaining <= 0:
        prompts.append("not enough cards: shuffle the discards, cut and load them (16.7)")
    if reshuffle:
        prompts.append("shuffle after this round")
    for card in rnd.damaged:
        prompts.append(f"replace the damaged {card} at the end of the round")
    return out


def _opening(t: TableState, out: Due) -> None:
    """The inspection in progress and the day's opening, with their prompts first."""
    found = inspection.inspection_view(t)
    if found is not None:
        out.inspection = found
        deck = found["deck"] or "the deck"
        out.prompts.append(
            f"inspection of {deck}: {found['read']} of {found['of']} cards read; "
            "end the inspection when the whole deck is read"
        )
    day = t.day
    if day.state is DayState.CLOSED:
        return
    done = [s for s, _who, _seq in day.steps]
    to_do = [s for s, _rule, _before in opening.ORDER if s not in done]
    out.opening = {
        "state": str(day.state),
        "opened": day.seq,
        "by": list(day.by),
        "inspected": day.inspected,
        "steps": [{"step": s, "by": who or None, "event": seq} for s, who, seq in day.steps],
        "to_do": to_do if day.state is DayState.OPENING else [],
        "decks": {
            "passed": [s for s, st in t.deck_status.items() if st.ok],
            "failed": [s for s, st in t.deck_status.items() if not st.ok],
        },
    }
    if day.state is DayState.OPENING and found is None:
        if not day.inspected:
            out.prompts.append("inspect each deck through the reader (6.1)")
        elif to_do:
            out.prompts.append(f"inspect the next deck, or the cards {opening.WORDS[to_do[0]]}")


def _play_prompts(t: TableState, rnd: Round, out: Due, opened: tuple[Decision, ...]) -> None:
    prompts = out.prompts
    if rnd.peek_pending:
        prompts.append("take insurance, then check the hole card")
        return
    target = rnd.hand_in_play()
    assert target is not None
    box, idx = target
    hand = box.hands[idx]
    total, soft = hand.total()
    out.in_play = {
        "box": box.number,
        "hand": idx,
        "cards": list(hand.cards),
        "total": total,
        "soft": soft,
    }
    if rnd.pending_card is not None:
        prompts.append(
            f"offer the exposed {rnd.pending_card} to box {box.number}: take it or refuse it"
        )
        return
    if box.absent:
        prompts.append(f"draw for box {box.number} until {t.rules.absent_draw_to} or more (absent)")
        return
    if len(hand.cards) < 2:
        prompts.append(f"deal the second card to box {box.number} hand {idx}")
        return
    if hand.doubled:
        prompts.append(f"deal the double card to box {box.number}, sideways")
        return
    for d in opened:
        if d.kind is Kind.OFFER_SURRENDER:
            prompts.append(f"offer surrender to box {d.box}")
    prompts.append(
        f"box {box.number}{f' hand {idx}' if len(box.hands) > 1 else ''}: "
        f"{'soft ' if soft else ''}{total}, {box.controller} to decide"
    )


def box_view(rnd: Round, box: Box) -> dict[str, Any]:
    """One box as the dealer's screen shows it: players' wagers, hands, totals."""
    hands = []
    for i, hand in enumerate(box.hands):
        total, soft = hand.total()
        hands.append(
            {
                "hand": i,
                "cards": list(hand.cards),
                "total": total,
                "soft": soft,
                "doubled": hand.doubled,
                "done": hand.done,
                "natural": hand.natural,
                "wagers": [
                    {
                        "player": w.player,
                        "amount": money(w.amount),
                        "double": money(w.double),
                        "rescued": w.rescued,
                    }
                    for w in hand.wagers
                ],
            }
        )
    return {
        "box": box.number,
        "controller": box.controller,
        "bets": {p: money(a) for p, a in box.bets.items()},
        "insurance": {p: money(a) for p, a in box.insurance.items()},
        "absent": box.absent,
        "void": box.void,
        "surrendered": box.surrendered,
        "seen": money(rnd.seen[box.number]) if box.number in rnd.seen else None,
        "hands": hands,
    }
