"""The one answer to "may this event happen now, and if not, why": :func:`refusal`.

The dealer's screen, the service, the demo's bot and the simulator ask it and keep no rule of
their own. What it answers:

* a decision or an announcement (``stand``, ``double``, ``offer_insurance``, ``void``...):
  allowed exactly when it is among the decisions open now
  (:func:`~controller.engine.decisions.open_decisions`), for that box and player, within the
  amount's limits there; a ``shuffle`` is allowed whenever no round's cards are out (the engine
  lists it as a decision only when one is due). Three are the dealer's whenever the rule book
  lets them be: the offers (insurance while his first card is an ace, surrender to any box with
  a wager in the round) and 16.6 (a player absent) for any such box, by the predicates their
  handlers use;
* a ``bet``: the betting rules (:func:`~controller.engine.betting.bet_refusal`);
* the table's day (``open_table``, ``opening_step``, ``inspect``, ``inspect_end``,
  ``shoe_end``) and the desk (``manual_mode``, ``acknowledge``): the table asks this before
  their handlers, which only carry them out (``close_table`` is taken whenever there is a
  day, a shoe or an inspection to close: it reconciles whatever the day left);
* a card keyed in by hand (``source`` ``manual``): the shoe is in manual mode, or it corrects a
  misread awaiting correction.

What a device reports (a card from the shoe, the camera's reading, a misread, the cutting card)
happened whether or not it was allowed: it is never refused here, and the engine flags whatever
is irregular about it when it is applied.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Final

from controller.engine import betting, decisions, irregular, play, tray
from controller.engine.decisions import Decision, Kind, Role
from controller.engine.results import Refusal, money
from controller.engine.state import LIVE_PHASES, DayState, Device, TableState
from controller.events import (
    TRAY_EVENTS,
    Acknowledge,
    Bet,
    Card,
    Event,
    ManualMode,
    OpeningStepDone,
    amount_of,
    box_of,
    player_of,
)

DECISION_KINDS: Final = frozenset(str(k) for k in Kind)
# Who takes each decision at the screen: a person at the table (the dealer's taps) or the
# supervisor (behind the PIN).
PEOPLE: Final = frozenset({Role.DEALER, Role.CONTROLLER, Role.PLAYER, Role.BACK_BETTOR})
SHUFFLE_ANYTIME: Final = Decision(Kind.SHUFFLE, Role.DEALER, "6.3")


def refusal(t: TableState, ev: Event) -> Refusal | None:
    kind = ev.type
    if kind in DECISION_KINDS:
        return _decision(t, ev)
    if isinstance(ev, Bet):
        return betting.bet_refusal(t, ev)
    if kind == "inspect":
        rnd = t.current_round
        if rnd is not None and rnd.phase in LIVE_PHASES:
            return Refusal(
                "shoe",
                f"inspect refused: round {rnd.number} is being dealt; inspect decks between rounds",
            )
        return None
    if kind == "inspect_end":
        return None if t.inspection is not None else Refusal("shoe", NO_INSPECTION)
    if kind == "shoe_end":
        return _shoe_end(t)
    if kind == "open_table":
        if t.day.state is not DayState.CLOSED:
            return Refusal("day", "the table is open already")
        return None
    if isinstance(ev, OpeningStepDone):
        return _opening_step(t, ev)
    if kind == "close_table":
        if t.day.state is DayState.CLOSED and t.shoe is None and t.inspection is None:
            return Refusal("day", "the table is not open")
        return None
    if isinstance(ev, ManualMode):
        return _manual_mode(t, ev)
    if isinstance(ev, Acknowledge):
        key = (ev.flag_event, ev.rule)
        if key not in t.desk.pending:
            return Refusal(
                "acknowledge", f"no flag of rule {key[1]} at event #{key[0]} is waiting to be seen"
            )
        return None
    if isinstance(ev, Card):
        return _keyed_card(t, ev)
    if kind in TRAY_EVENTS:
        why = tray.refusal_reason(t, ev)
        return None if why is None else Refusal("tray", why)
    return None


NO_INSPECTION: Final = "inspect_end: no inspection is open"


def allowed(t: TableState) -> tuple[Decision, ...]:
    """What may be decided now: the open decisions, and a shuffle whenever no round's cards are
    out though none is due (what the screen offers)."""
    opened = decisions.open_now(t)
    if any(d.kind is Kind.SHUFFLE for d in opened) or not shuffle_allowed(t):
        return opened
    return (*opened, SHUFFLE_ANYTIME)


def shuffle_allowed(t: TableState) -> bool:
    """A new shoe may be loaded between rounds (a round in betting has no cards out)."""
    rnd = t.current_round
    return rnd is None or rnd.phase not in LIVE_PHASES


def _decision(t: TableState, ev: Event) -> Refusal | None:
    kind = ev.type
    if kind == "shuffle" and shuffle_allowed(t):
        return None
    number = box_of(ev)
    if kind == "offer_surrender":
        return play.offer_surrender_refusal(t, number or 0)
    if kind == "offer_insurance":
        return play.offer_insurance_refusal(t)
    if kind == "absent":
        return irregular.absent_refusal(t, number or 0)
    if kind == "void" and number is not None:
        rnd = t.current_round
        box = rnd.boxes.get(number) if rnd is not None else None
        if box is None or box.void:
            return Refusal("16.5", f"void box {number}: it has no wager in this round")
    who = player_of(ev)
    amount = amount_of(ev)
    near: Refusal | None = None
    for d in decisions.open_now(t):
        if str(d.kind) != kind:
            continue
        if d.box is not None and d.box != number:
            continue
        if d.kind in (Kind.DOUBLE, Kind.INSURANCE, Kind.RESCUE) and d.player != who:
            continue
        if d.kind is Kind.SPLIT and (
            (who is None) != (d.by is Role.CONTROLLER) or (who is not None and d.player != who)
        ):
            continue
        if amount is not None and d.max is not None and amount > d.max:
            near = Refusal(d.rule, f"{kind} of {money(amount)} on box {d.box}: at most {_m(d.max)}")
            continue
        if amount is not None and d.min is not None and amount < d.min:
            near = Refusal(
                d.rule, f"{kind} of {money(amount)} on box {d.box}: at least {_m(d.min)}"
            )
            continue
        return None
    if near is not None:
        return near
    where = f" for box {number}" if number is not None else ""
    if kind == "shuffle":
        return Refusal("shoe", "a new shoe is loaded between rounds, not while cards are out")
    return Refusal("turn", f"{kind.replace('_', ' ')}{where} is not open now")


def _m(d: Decimal) -> str:
    return money(d)


def _shoe_end(t: TableState) -> Refusal | None:
    shoe = t.shoe
    if shoe is None:
        return Refusal("shoe", "shoe_end: no shoe is loaded")
    if shoe.ended:
        return Refusal(
            "shoe", "shoe_end: this shoe has already ended; its cards are being read out"
        )
    rnd = t.current_round
    if rnd is not None and rnd.phase in LIVE_PHASES:
        return Refusal(
            "shoe",
            f"shoe_end refused: round {rnd.number} is being dealt from this shoe "
            "(if it ran short, shuffle the discards: 16.7)",
        )
    return None


def _opening_step(t: TableState, ev: OpeningStepDone) -> Refusal | None:
    """A step of the day's shuffle is confirmed once the table is open; during the opening
    (6.2, 6.3) each step once (the cut is recorded whenever it is made)."""
    day = t.day
    if day.state is DayState.CLOSED:
        return Refusal("day", "the table is not open: a supervisor opens it first")
    step = ev.step
    if (
        day.state is DayState.OPENING
        and step != "cut"
        and any(s == step for s, _w, _q in day.steps)
    ):
        return Refusal("day", f"{step} is confirmed already")
    return None


def _manual_mode(t: TableState, ev: ManualMode) -> Refusal | None:
    device = ev.device
    if ev.on:
        if device in t.desk.manual:
            return Refusal("manual", f"the {device} is in manual mode already")
        if not ev.reason:
            return Refusal(
                "manual", "say why the table goes to manual mode (the reason is recorded)"
            )
        return None
    if device not in t.desk.manual:
        return Refusal("manual", f"the {device} is not in manual mode")
    return None


def _keyed_card(t: TableState, ev: Card) -> Refusal | None:
    """A card keyed in by hand: in the shoe's manual mode, or for a misread awaiting it."""
    corrects = ev.correction_of
    if corrects is not None:
        if corrects not in t.desk.misreads:
            return Refusal("shoe", f"event #{corrects} is not a misread awaiting correction")
        return None
    if ev.source == "manual" and Device.SHOE not in t.desk.manual:
        return Refusal(
            "manual", "cards come from the shoe reader: a supervisor puts the shoe in manual mode"
        )
    return None
