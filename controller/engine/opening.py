"""The table's day (6.1-6.3) and who is at it.

``open_table`` begins the day: the decks are inspected (6.1, :mod:`.inspection`), spread for
the first players (6.2), chemmy shuffled, stacked and riffle shuffled (6.3), then cut and
loaded; the dealer confirms each step (``opening_step``, who confirmed it being the event's
``actor``). Until the first shoe is loaded the opening's order is checked: a step confirmed
before the one the rule book puts first is flagged with its rule (the spread before any deck
was inspected: 6.2; chemmy before the spread, the stack before chemmy, the riffle before the
stack: 6.3), and so is a first shoe loaded with a step never confirmed (:func:`at_load`). Later
shoes' shuffles are recorded and not checked (the pages we hold say nothing of them).
``close_table`` ends the day, after the last shoe's reconciliation.

Here too, because they are about the people at the table rather than the cards: the dealer on
duty (``dealer``: each round's result lists the dealers on duty during it). The screen's own
records (``manual_mode``, ``acknowledge``) are the desk's (:mod:`.desk`).
"""

from __future__ import annotations

from typing import Final

from controller.engine.inspection import finish_shoe, unfinished
from controller.engine.state import SETTLED, VOID, Day, DayState, TableState
from controller.events import CloseTable, Dealer, Event, OpeningStepDone, OpenTable

# The opening's steps in the rule book's order, each with the rule that puts it there and the
# step that must come before it (None: the inspection, 6.1).
ORDER: Final[tuple[tuple[str, str, str | None], ...]] = (
    ("spread", "6.2", None),
    ("chemmy", "6.3", "spread"),
    ("stack", "6.3", "chemmy"),
    ("riffle", "6.3", "stack"),
)
WORDS: Final[dict[str, str]] = {
    "spread": "spread face up for the players to see (6.2)",
    "chemmy": "chemmy shuffled (6.3(a))",
    "stack": "stacked (6.3(b))",
    "riffle": "riffle shuffled (6.3(c))",
    "cut": "cut",
}
MAX_STEPS: Final = 64  # the steps a day keeps (a bounded table's memory must not grow)


def on_dealer(t: TableState, ev: Dealer) -> None:
    dealer = ev.dealer
    assert dealer is not None
    t.dealer_on_duty = dealer
    rnd = t.current_round
    live = rnd is not None and rnd.phase is not SETTLED and rnd.phase is not VOID
    if live and rnd is not None and (not rnd.dealers or rnd.dealers[-1] != dealer):
        rnd.dealers.append(dealer)


def on_open_table(t: TableState, ev: OpenTable) -> None:
    day = t.day = Day()
    day.state = DayState.OPENING
    day.seq = t.seq
    day.by = ev.by or ()
    # A new day's decks are inspected anew (6.1); a deck that failed a check stays failed.
    for serial in [s for s, status in t.deck_status.items() if status.ok]:
        del t.deck_status[serial]


def on_opening_step(t: TableState, ev: OpeningStepDone) -> None:
    step = ev.step
    assert step is not None
    day = t.day
    if day.state is DayState.OPENING:
        done = {s for s, _who, _seq in day.steps}
        for name, rule, before in ORDER:
            if name != step:
                continue
            if before is None and not day.inspected:
                t.flag(rule, f"the cards were {WORDS[step]} before any deck was inspected (6.1)")
            elif before is not None and before not in done:
                t.flag(rule, f"the cards were {WORDS[step]} before they were {WORDS[before]}")
    day.steps.append((step, actor(ev), t.seq))
    if len(day.steps) > MAX_STEPS:
        del day.steps[: len(day.steps) - MAX_STEPS]


def actor(ev: Event) -> str:
    """Who the event says did it ("" when it names nobody)."""
    return ev.actor or ""


def at_load(t: TableState) -> None:
    """The first shoe of the day is loaded: every step of 6.2-6.3 must have been confirmed."""
    day = t.day
    if day.state is not DayState.OPENING:
        return
    day.state = DayState.OPEN
    done = {s for s, _who, _seq in day.steps}
    for rule in ("6.2", "6.3"):
        missing = [WORDS[name] for name, r, _b in ORDER if r == rule and name not in done]
        if missing:
            t.flag(
                rule,
                f"the first shoe of the day was loaded before the cards were {', '.join(missing)}",
            )


def in_force(t: TableState) -> bool:
    """Whether decks must have passed inspection to be loaded: the day was opened, or decks
    have been inspected since the last close."""
    day = t.day
    return day.state is not DayState.CLOSED or day.inspected > 0


def on_close_table(t: TableState, ev: CloseTable) -> None:
    if t.inspection is not None:
        unfinished(t, "the table closed")
    shoe = t.shoe
    if shoe is not None and shoe.ended:
        finish_shoe(t, shoe)
    elif shoe is not None and shoe.record is not None and shoe.record.reconciled is None:
        t.flag(
            "shoe",
            f"the table closed with the shoe loaded at event {shoe.record.seq} not reconciled: "
            "end it (shoe_end) and read out the cards left",
        )
    day = t.day = Day()
    day.seq = 0
