"""The desk: what people did about the table beside the rules, kept with the rest of its state.

Here: ``manual_mode`` (a device a supervisor put in manual mode), ``acknowledge`` (a flag seen),
and what every event leaves for the dealer's screen — the flags waiting to be seen, the misreads
awaiting the card a supervisor enters for them (``card`` with ``correction_of``), the camera's
latest reading of each box, the rescues taken. None of it changes a round; all of it is part of
the table's state, so a restart restores it from the checkpoint like the rest.
"""

from __future__ import annotations

from typing import Final

from controller.engine.opening import actor
from controller.engine.results import Flag
from controller.engine.state import (
    Desk,
    ManualMode,
    Misread,
    Pending,
    Resolution,
    Resolved,
    Seen,
    TableState,
)
from controller.events import Acknowledge, Card, Clock, Event, Rescue, WagerSeen
from controller.events import ManualMode as ManualModeEvent
from controller.events import Misread as MisreadEvent

MAX_PENDING: Final = 200  # flags waiting to be seen (the oldest stop waiting first; all stored)
MAX_RESOLVED: Final = 800  # how each of the last flags was resolved
MAX_MISREADS: Final = 20  # misreads awaiting correction (the oldest are dropped, still stored)
RESCUE_ROUNDS: Final = 2  # the rounds whose rescues are kept (the one in play and the last)
# The events the desk reads even when they raise no flag and carry no passthrough field (a card
# corrects a misread only with ``correction_of``, so a bare card is not read here).
NOTED: Final = frozenset({"misread", "wager_seen", "rescue"})
SHOE_RULE: Final = "shoe"


def on_manual_mode(t: TableState, ev: ManualModeEvent) -> None:
    device = ev.device
    if ev.on:
        t.desk.manual[device] = ManualMode(device, t.seq, actor(ev), ev.reason or "")
    else:
        t.desk.manual.pop(device, None)


def on_acknowledge(t: TableState, ev: Acknowledge) -> None:
    key = (ev.flag_event, ev.rule)
    t.desk.pending.pop(key, None)
    resolve(t.desk, key, Resolution(Resolved.SEEN, actor(ev)))


CLOCK_RULE: Final = "clock"


def on_clock(t: TableState, ev: Clock) -> None:
    """The recorder found the table's wall clock stepped: a flag for the dealer's screen (the
    round is not touched; the events' order is their sequence, whatever the clock said)."""
    t.flag(CLOCK_RULE, clock_message(ev.was, ev.now, ev.elapsed))


def clock_message(was: str, now: str, elapsed: object) -> str:
    from datetime import datetime

    try:
        step = (datetime.fromisoformat(now) - datetime.fromisoformat(was)).total_seconds()
        if elapsed is not None:
            step -= float(str(elapsed))
    except ValueError:
        step = 0.0
    way = "back" if step < 0 else "forward"
    measured = "" if elapsed is None else f" ({elapsed} s had passed)"
    return (
        f"the table's clock stepped {way} by {_span(abs(step))}: the last event was recorded "
        f"at {was}, the clock now says {now}{measured}; events keep their order by number"
    )


def _span(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min {secs:02d} s"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{seconds:.1f} s"


def note(t: TableState, ev: Event, flags: list[Flag] | None) -> None:
    """What one event, just applied, leaves on the desk."""
    desk = t.desk
    kind = ev.type
    if isinstance(ev, MisreadEvent):
        rnd = t.current_round
        desk.misreads[t.seq] = Misread(t.seq, ev.raw, ev.note or "", rnd.number if rnd else None)
        while len(desk.misreads) > MAX_MISREADS:
            del desk.misreads[min(desk.misreads)]
            desk.misreads_dropped += 1
    elif isinstance(ev, Card):
        corrected = ev.correction_of
        if corrected is not None and corrected in desk.misreads:
            del desk.misreads[corrected]
            key = (corrected, SHOE_RULE)
            desk.pending.pop(key, None)
            resolve(desk, key, Resolution(Resolved.CORRECTED, actor(ev), ev.card))
    elif isinstance(ev, WagerSeen):
        desk.seen[ev.box] = Seen(ev.amount, ev.confidence)
    elif isinstance(ev, Rescue):
        _rescued(t, ev)
    if flags:
        for flag in flags:
            pend(desk, flag, kind)


def pend(desk: Desk, flag: Flag, kind: str) -> None:
    """A flag waits to be seen; several of one rule at one event wait as one."""
    key = (flag.seq, flag.rule)
    waiting = desk.pending.get(key)
    if waiting is not None:
        waiting.messages.append(flag.message)
        return
    desk.pending[key] = Pending(flag.seq, flag.rule, kind, flag.round, flag.box, [flag.message])
    while len(desk.pending) > MAX_PENDING:
        del desk.pending[next(iter(desk.pending))]


def resolve(desk: Desk, key: tuple[int, str], how: Resolution) -> None:
    desk.resolved[key] = how
    while len(desk.resolved) > MAX_RESOLVED:
        del desk.resolved[next(iter(desk.resolved))]


def _rescued(t: TableState, ev: Rescue) -> None:
    """The hands whose double the rescuing player took back (the settlement alone cannot always
    say: a rescue and 12.7 both return the double when the dealer makes pontoon)."""
    rnd = t.current_round
    if rnd is None:
        return
    box = rnd.boxes.get(ev.box)
    if box is None:
        return
    desk = t.desk
    for i, hand in enumerate(box.hands):
        wager = hand.wager_of(ev.player)
        if wager is not None and wager.rescued:
            desk.rescues.add((rnd.number, box.number, i, wager.player))
    oldest = rnd.number - RESCUE_ROUNDS + 1
    desk.rescues = {r for r in desk.rescues if r[0] >= oldest}
