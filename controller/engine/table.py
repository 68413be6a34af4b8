"""The table: one table's state, and the one way in (:meth:`Table.apply`) and out
(:meth:`Table.due`, :meth:`Table.open_decisions`, :meth:`Table.result`).

The table holds the state the rooms change (the round in progress, the shoe, the discard rack,
the rounds kept) and raises the flags they call for; it routes each event to the room that owns
it. It decides nothing itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from controller.engine import (
    betting,
    check,
    deal,
    desk,
    inspection,
    irregular,
    opening,
    play,
    settle,
    shoe,
    snapshot,
    tray,
    view,
)
from controller.engine.decisions import Decision, Fixed, open_now
from controller.engine.results import NOTHING, Applied, Refusal, RoundResult
from controller.engine.state import (
    SETTLED,
    VOID,
    Hand,
    TableState,
)
from controller.engine.tableview import TableView, table_view
from controller.engine.view import Due
from controller.events import TRAY_EVENTS, Event, TableSetup, box_of

# Each takes the table and its own kind of event (the dict cannot say which to mypy).
Handler = Callable[["Table", Any], None]

HANDLERS: Final[dict[str, Handler]] = {
    "shuffle": shoe.on_shuffle,
    "bet": betting.on_bet,
    "no_more_bets": betting.on_no_more_bets,
    "card": deal.on_card,
    "cut_card": shoe.on_cut_card,
    "offer_insurance": play.on_offer_insurance,
    "insurance": play.on_insurance,
    "offer_surrender": play.on_offer_surrender,
    "surrender": play.on_surrender,
    "hit": play.on_hit,
    "stand": play.on_stand,
    "double": play.on_double,
    "split": play.on_split,
    "rescue": play.on_rescue,
    "refuse": deal.on_refuse,
    "absent": irregular.on_absent,
    "void": irregular.on_void,
    "reshuffle_discards": irregular.on_reshuffle_discards,
    "misread": shoe.on_misread,
    "wager_seen": betting.on_wager_seen,
    "peek": deal.on_peek,
    "inspect": inspection.on_inspect,
    "inspect_end": inspection.on_inspect_end,
    "shoe_end": inspection.on_shoe_end,
    "open_table": opening.on_open_table,
    "opening_step": opening.on_opening_step,
    "close_table": opening.on_close_table,
    "dealer": opening.on_dealer,
    "manual_mode": desk.on_manual_mode,
    "acknowledge": desk.on_acknowledge,
    "tray_count": tray.on_tray_count,
    "fill": tray.on_fill,
    "credit": tray.on_credit,
    "buy_in": tray.on_buy_in,
    "drop_count": tray.on_drop_count,
    "clock": desk.on_clock,
}
# The events a person initiates whose refusal is the engine's one answer (:mod:`.check`): the
# table asks it before the handler, which then only carries the event out.
GATED: Final = frozenset(
    {
        "open_table",
        "close_table",
        "opening_step",
        "inspect",
        "inspect_end",
        "shoe_end",
        "manual_mode",
        "acknowledge",
        *TRAY_EVENTS,
    }
)


class Table(TableState):
    """One table's rounds, from its setup line through every event it hears.

    ``keep_rounds``: how many settled rounds :attr:`rounds` keeps (None: every one, as a replay
    needs; a live table keeps the last few, enough for the screen and for a flag noticed after
    a round). It must be at least 1. The state and what the rooms do to it are
    :class:`~controller.engine.state.TableState`'s; the table adds the way in (:meth:`apply`)
    and the questions asked from outside.
    """

    def __init__(self, setup: TableSetup, *, keep_rounds: int | None = None) -> None:
        super().__init__(setup, keep_rounds)
        self.fixed = Fixed(self)
        self.tray = tray.Tray()
        self._view: TableView | None = None

    # ----- the way in -----------------------------------------------------------------------

    def apply(self, ev: Event) -> Applied:
        """Apply one event; return the flags it raised and the round it ended, if any."""
        kind = ev.type
        self.begin(kind)
        refusal = check.refusal(self, ev) if kind in GATED else None
        if refusal is not None:
            self.flag(refusal.rule, refusal.reason, box_of(ev))
        else:
            HANDLERS[kind](self, ev)
        flags = self._flags
        if flags is not None or kind in desk.NOTED or ev.correction_of is not None:
            desk.note(self, ev, flags)  # (a card corrects a misread only with correction_of)
        return self._what_it_did()

    def check(self, ev: Event) -> Refusal | None:
        """May this event happen now? None if so; else why not (the rule and the reason). The
        one answer the screen, the service and the bots ask; nothing here changes the table."""
        return check.refusal(self, ev)

    def _what_it_did(self) -> Applied:
        # Read in a method of its own: the effects were reset in another (for mypyc, whose
        # narrowing of an attribute set to None would otherwise outlive the handler's call).
        flags = self._flags
        settled = self._settled
        if flags is None:
            return NOTHING if settled is None else Applied((), settled, True)
        return Applied(tuple(flags), settled, False)

    # ----- the way out ----------------------------------------------------------------------

    def due(self) -> Due:
        """What the dealer must do next, and exactly which decisions are open to whom."""
        return view.due(self)

    def open_decisions(self) -> tuple[Decision, ...]:
        """Every decision open now, typed (see :class:`~controller.engine.decisions.Decision`)."""
        return open_now(self)

    def view(self) -> TableView:
        """The table now, typed and frozen: what everything outside the engine reads."""
        cached = self._view
        if cached is not None and cached.seq == self.seq:
            return cached
        made = self._view = table_view(self)
        return made

    def in_play(self) -> int | None:
        """The number of the round in progress (None between rounds): the cheap question a
        reader of every event asks (the whole view is :meth:`view`)."""
        rnd = self.current_round
        if rnd is None or rnd.phase is SETTLED or rnd.phase is VOID:
            return None
        return rnd.number

    def dealer_up(self) -> str | None:
        """The dealer's first card in the round in progress (None: not dealt yet, or between
        rounds)."""
        rnd = self.current_round
        return rnd.dealer[0] if rnd is not None and rnd.dealer else None

    def round_result(self, number: int) -> RoundResult | None:
        """A settled round the table still keeps, by its number (None: not kept, or not
        ended)."""
        for kept in reversed(self.rounds):
            if kept.round == number:
                return kept
        return None

    def next_card(self) -> deal.Target | None:
        """Who is due the next card out of the shoe (None: nobody, or a decision first)."""
        return deal.next_card(self)

    def hand(self, box: int, hand: int = 0) -> Hand:
        """A hand of the round in progress (read it, never change it)."""
        rnd = self.current_round
        if rnd is None or box not in rnd.boxes or not 0 <= hand < len(rnd.boxes[box].hands):
            raise KeyError(f"box {box} has no hand {hand} in play")
        return rnd.boxes[box].hands[hand]

    def result(self) -> dict[str, Any]:
        """The whole replay document: every round kept, the one in progress included.

        The record ends here: a shoe whose cards are being read out is reconciled as it would
        be at the next ``shuffle`` or ``close_table`` (SCENARIO.md), on a copy of the table, so
        the table itself goes on reading the shoe out."""
        shoe = self.shoe
        if shoe is not None and shoe.ended:
            closing = Table.restore(self.setup, self.snapshot())
            ended = closing.shoe
            assert ended is not None
            inspection.finish_shoe(closing, ended)
            return closing._document()
        return self._document()

    def _document(self) -> dict[str, Any]:
        rounds = [r.to_dict() for r in self.rounds]
        rnd = self.current_round
        if rnd is not None and rnd.phase is not SETTLED and rnd.phase is not VOID:
            rounds.append(settle.round_result(self, rnd, "incomplete").to_dict())
        out: dict[str, Any] = {
            "game": self.setup.game,
            "table_id": self.setup.table_id,
            "rounds": rounds,
            "shoes": [s.to_dict() for s in self.shoes],
            "inspections": [i.to_dict() for i in self.inspections],
        }
        if self.tray.used:
            out["tray"] = tray.document(self.tray)
        return out

    # ----- the checkpoint -------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The table's whole state as plain JSON-able data (see :mod:`.snapshot`)."""
        return snapshot.dump(self)

    @classmethod
    def restore(
        cls, setup: TableSetup, data: Any, *, keep_rounds: int | str | None = "snapshot"
    ) -> Table:
        """The table a :meth:`snapshot` was taken of; :class:`.snapshot.SnapshotError` if the
        data is corrupt, of another table or another rule set. ``keep_rounds`` defaults to the
        snapshot's own."""
        return snapshot.load(cls, setup, data, keep_rounds)
