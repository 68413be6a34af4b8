"""The table: one table's state, and the one way in (:meth:`Table.apply`) and out
(:meth:`Table.due`, :meth:`Table.open_decisions`, :meth:`Table.result`).

The table holds the state the rooms change (the round in progress, the shoe, the discard rack,
the rounds kept) and raises the flags they call for; it routes each event to the room that owns
it. It decides nothing itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from controller.cards import deck
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
from controller.engine.decisions import Decision, Fixed, open_decisions
from controller.engine.results import NOTHING, Applied, Flag, Refusal, RoundResult
from controller.engine.state import (
    SETTLED,
    VOID,
    Day,
    DeckStatus,
    Desk,
    Hand,
    Inspection,
    InspectionResult,
    Reshuffle,
    Round,
    Shoe,
    ShoeRecord,
)
from controller.engine.tableview import TableView, table_view
from controller.engine.view import Due
from controller.events import MAX_DECKS, TRAY_EVENTS, Event, TableSetup
from controller.rules import RuleSet

Handler = Callable[["Table", Event], None]

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
    "stack_changed": betting.on_stack_changed,
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


class Table:
    """One table's rounds, from its setup line through every event it hears.

    ``keep_rounds``: how many settled rounds :attr:`rounds` keeps (None: every one, as a replay
    needs; a live table keeps the last few, enough for the screen and for a flag noticed after
    a round). It must be at least 1.
    """

    def __init__(self, setup: TableSetup, *, keep_rounds: int | None = None) -> None:
        if keep_rounds is not None and keep_rounds < 1:
            raise ValueError(f"keep_rounds must be at least 1 (or None for all): {keep_rounds}")
        self.setup = setup
        self.rules: RuleSet = setup.rules
        self.keep_rounds = keep_rounds
        self.rounds: list[RoundResult] = []
        self.rounds_played = 0  # the number of the last round that ended
        self.current_round: Round | None = None
        self.shoe: Shoe | None = None
        self.discards: list[str] = []  # the discard rack since the shoe was loaded, in order
        self.removed: list[str] = []  # this shoe's foreign or impossible cards, off the table
        self.seq = 0
        self.unassigned: list[Flag] = []  # flags raised before the first round
        self.reshuffle_reason = Reshuffle.NONE  # 16.9 or 16.10 once due after the round
        # The opening and the shoes' records (:mod:`.opening`, :mod:`.inspection`).
        self.dealer_on_duty: str | None = None
        self.day = Day()
        self.inspection: Inspection | None = None  # the deck being inspected now
        self.inspections: list[InspectionResult] = []
        self.deck_status: dict[str, DeckStatus] = {}  # by deck serial, the most recent last
        self.shoes: list[ShoeRecord] = []  # one per shoe loaded
        # What the rules say, read once for the hot path.
        rules = self.rules
        self.excluded_ranks = frozenset(rules.excluded_ranks)
        self.cards_per_deck = rules.cards_per_deck()
        self.deck_codes: tuple[str, ...] = tuple(deck(rules.excluded_ranks))
        self.no_hole_card = rules.hole_card == "none"
        self.hole_card_peek = rules.hole_card == "peek"
        self._refs = dict(rules.rule_refs)
        self.fixed = Fixed(self)
        self.desk = Desk()  # manual modes, flags waiting to be seen, misreads (:mod:`.desk`)
        self.tray = tray.Tray()  # the chip tray's counts, slips, buy-ins, drop (:mod:`.tray`)
        # What the event being applied did.
        self._kind = ""
        self._flags: list[Flag] | None = None
        self._settled: RoundResult | None = None
        self._open: tuple[int, tuple[Decision, ...]] | None = None
        self._view: TableView | None = None

    # ----- the way in -----------------------------------------------------------------------

    def apply(self, ev: Event) -> Applied:
        """Apply one event; return the flags it raised and the round it ended, if any."""
        kind = ev.type
        self._begin(kind)
        refusal = check.refusal(self, ev) if kind in GATED else None
        if refusal is not None:
            self.flag(refusal.rule, refusal.reason, ev.box)
        else:
            HANDLERS[kind](self, ev)
        flags = self._flags
        if flags is not None or kind in desk.NOTED or ev.extra:
            desk.note(self, ev, flags)  # (a card corrects a misread only with correction_of)
        return self._what_it_did()

    def check(self, ev: Event) -> Refusal | None:
        """May this event happen now? None if so; else why not (the rule and the reason). The
        one answer the screen, the service and the bots ask; nothing here changes the table."""
        return check.refusal(self, ev)

    def _begin(self, kind: str) -> None:
        self.seq += 1
        self._kind = kind
        self._flags = None
        self._settled = None

    def _what_it_did(self) -> Applied:
        # Read in a method of its own: the attributes were reset in another (for mypyc, whose
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
        cached = self._open
        if cached is not None and cached[0] == self.seq:
            return cached[1]
        found = open_decisions(self)
        self._open = (self.seq, found)
        return found

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

    # ----- for the rooms --------------------------------------------------------------------

    def flag(self, rule: str, message: str, box: int | None = None) -> None:
        """Raise a flag on the round in progress (or the last one, or the first one to come)."""
        rnd = self.current_round
        number = rnd.number if rnd is not None else self.rounds_played
        flag = Flag(rule, message, box, number, self.seq, self._kind)
        if rnd is not None:
            rnd.flags.append(flag)
        elif self.rounds:
            self.rounds[-1].flags.append(flag)  # noticed after that round
        else:
            self.unassigned.append(flag)  # belongs to the first round
        if self._flags is None:
            self._flags = [flag]
        else:
            self._flags.append(flag)

    def ref(self, situation: str) -> str:
        """The rule a flag for ``situation`` names in this game (``rule_refs``)."""
        return self._refs.get(situation, situation)

    def open_round(self) -> Round:
        rnd = Round(number=self.rounds_played + 1)
        if self.dealer_on_duty is not None:
            rnd.dealers.append(self.dealer_on_duty)
        if self.unassigned:
            rnd.flags.extend(self.unassigned)
            self.unassigned.clear()
        self.current_round = rnd
        return rnd

    def end_round(self, result: RoundResult) -> None:
        tray.on_round_ended(self, result)
        self.rounds.append(result)
        self.rounds_played = result.round
        keep = self.keep_rounds
        if keep is not None and len(self.rounds) > keep:
            del self.rounds[: len(self.rounds) - keep]
        self.current_round = None
        self._settled = result

    def bound_records(self) -> None:
        """A bounded table (``keep_rounds``) keeps as many shoes' records as rounds, and the
        last inspections of at least a full shoe's decks."""
        keep = self.keep_rounds
        if keep is None:
            return
        if len(self.shoes) > keep:
            del self.shoes[: len(self.shoes) - keep]
        most = max(keep, MAX_DECKS)
        if len(self.inspections) > most:
            del self.inspections[: len(self.inspections) - most]

    def shoe_remaining(self) -> int:
        shoe = self.shoe
        return shoe.decks * self.cards_per_deck - shoe.drawn if shoe is not None else 0

    @property
    def reshuffle_due(self) -> bool:
        """A shuffle is due before the next round: the cutting card came out, or 16.9/16.10."""
        shoe = self.shoe
        return shoe is not None and (
            shoe.cut_out or shoe.ended or self.reshuffle_reason is not Reshuffle.NONE
        )

    def reshuffle_rule(self) -> str:
        """The rule a shuffle due now answers (6.1-6.3 when no shoe is loaded, or the shoe has
        ended)."""
        shoe = self.shoe
        if shoe is None:
            return "6.3"
        if shoe.ended:
            return str(self.reshuffle_reason) or "6.3"
        return str(self.reshuffle_reason) or "16.9"

    def require_reshuffle(self, reason: Reshuffle) -> None:
        if self.reshuffle_reason is Reshuffle.NONE:
            self.reshuffle_reason = reason

    def reshuffled(self) -> None:
        self.reshuffle_reason = Reshuffle.NONE
