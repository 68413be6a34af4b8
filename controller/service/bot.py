"""The demo's dealer bot: plays the dealer's (and the players') part from the engine's typed
decisions (`Table.open_decisions()`).

It does what the engine says is open: calls "no more bets", draws the next card when one is
due, makes the announcements the engine lists (insurance, surrender offers, the hole-card
check, a new shoe), and takes each players' decision the way a sensible player would (the
game's strategy table from `controller.sim.strategy`; back-bettors follow doubles and splits
at random). It never decides what the rules allow: it only picks among the decisions listed.

Given the cards (:class:`Cards`: the decks, the reader they pass through), it also opens the
table and changes shoes as the rule book has it: the dealer signs in, the table is opened with
the supervisor, each deck never checked is inspected through the reader (6.1), the opening's
steps are confirmed one by one (6.2, 6.3), the shoe is loaded; at a shoe's end it taps
``shoe_end`` and has the cards left read out before the next shoe is loaded, so that shoe is
reconciled. It loads the decks it is given: a deck that failed is flagged again at each load,
as the table would flag it.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

import structlog

from controller.engine import DayState, Decision, Kind, Role
from controller.service.core import TableService
from controller.service.flags import needs
from controller.service.trayday import TrayDay
from controller.sim.strategy import Strategy, StrategyError, load_strategy, strategy_path

log = structlog.get_logger("floorctl.bot")

PLAYERS = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy")
PLAY_KINDS = frozenset({Kind.STAND, Kind.HIT, Kind.DOUBLE, Kind.SPLIT, Kind.SURRENDER})

Wagers = dict[int, Decimal]
KEY_IN_AFTER = 6.0  # seconds a dealer gives the camera to read the first wager before keying in
OPENING_STEPS = ("spread", "chemmy", "stack", "riffle", "cut")  # 6.2, 6.3 (a)-(c), the cut
SHUFFLE_STEPS = ("chemmy", "stack", "riffle", "cut")  # a later shoe's shuffle


class Cards(Protocol):
    """The table's cards, as the dealer handles them: the decks and the reader they pass."""

    def decks(self) -> list[str]:
        """The serials of the decks the next shoe is made of."""
        ...

    def read_deck(self, serial: str) -> None:
        """Pass one deck through the reader for inspection; return once the table heard it."""
        ...

    def read_out(self) -> None:
        """Read out the cards left in the shoe; return once the table heard them."""
        ...

    def load(self) -> None:
        """Shuffle the decks into the shoe and record the load (the ``shuffle`` event)."""
        ...


@dataclass
class Look:
    """What the bot reads from the table at one moment (under the service's lock)."""

    phase: str
    round: int
    rounds_played: int
    decisions: tuple[Decision, ...]
    next_card: tuple[int | None, int | None] | None  # (box, hand); (None, None) for the dealer
    up: str | None  # the dealer's first card
    shuffle_due: bool = False  # no shoe loaded, or the cutting card came out (16.9, 16.10)
    hands: dict[tuple[int, int], tuple[list[str], int]] = field(default_factory=dict)
    staked: dict[int, Decimal] = field(default_factory=dict)  # box -> its initial wagers


class DealerBot:
    """One step at a time (`step()`), or in its own thread (`start()`)."""

    def __init__(
        self,
        service: TableService,
        *,
        draw: Callable[[], None],
        place_wagers: Callable[[Wagers], None],
        new_shoe: Callable[[], None],
        rng: random.Random,
        pace: float = 0.5,
        settle_pause: float = 2.0,
        strategy: Strategy | None = None,
        max_rounds: int = 0,
        cards: Cards | None = None,
        dealer: str = "dana",
        supervisor: str = "demo",
        read_pause: float = 2.0,
        after_call: Callable[[int], None] | None = None,
        tray: TrayDay | None = None,
    ) -> None:
        self.service = service
        self.cards = cards  # None: new_shoe() does the shoe change, with no opening
        self.dealer = dealer
        self.supervisor = supervisor
        self.draw = draw
        self.place_wagers = place_wagers
        self.new_shoe = new_shoe
        self.rng = rng
        self.pace = pace
        self.settle_pause = settle_pause
        self.max_rounds = max_rounds  # 0: no limit; else no new round once this many ended
        self.read_pause = read_pause  # seconds a dealer takes to read a flag before "Seen"
        self.after_call = after_call  # called with the round's number after "no more bets"
        self._reading: tuple[tuple[int, str], float] | None = None  # the flag being read
        self.seen_flags = 0  # flags this bot acknowledged (or had its supervisor resolve)
        self.tray = tray  # the pit's day at the tray (controller.service.trayday), or None
        self.strategy = strategy if strategy is not None else _default_strategy(service)
        self._declined: set[tuple[Any, ...]] = set()
        self._placed: Wagers = {}
        self._placed_at = 0.0
        self._settled_at: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.steps = 0

    # ----- running ----------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dealer-bot", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                did = self.step()
            except Exception:
                log.exception("dealer bot step failed")
                did = "error"
            self._stop.wait(self.pace if did != "wait" else 0.05)

    # ----- one step ---------------------------------------------------------------------

    def step(self) -> str:
        """Do the next thing the table needs; returns what was done ("wait" if nothing)."""
        self.steps += 1
        held = self._read_flag()
        if held:
            return held
        look = self.look()
        if look.phase == "idle":
            return self._between_rounds(look, look.shuffle_due)
        self._settled_at = None
        if look.phase == "betting":
            return self._betting(look)
        for d in look.decisions:
            if d.kind is Kind.OFFER_INSURANCE or d.kind is Kind.OFFER_SURRENDER:
                return self._send(d.event())
        done = self._window_decision(look)
        if done:
            return done
        done = self._play_decision(look)
        if done:
            return done
        if look.next_card is not None:
            self.draw()
            return "draw"
        return "wait"

    def _read_flag(self) -> str:
        """A flag holds the table (dealer sign-in configured): the dealer stops, reads it for
        ``read_pause`` seconds and taps "Seen"; a flag only a supervisor resolves is the
        supervisor's to acknowledge (a misread's, by the card the demo's supervisor keys in).
        Returns "" when no flag holds the table."""
        flag = self.service.blocking()
        if flag is None:
            self._reading = None
            return ""
        key = (int(flag["seq"]), str(flag["rule"]))
        now = time.monotonic()
        if self._reading is None or self._reading[0] != key:
            self._reading = (key, now)
            log.info("dealer reads a flag", rule=key[1], message=flag.get("message"))
            return "wait"
        if now - self._reading[1] < self.read_pause:
            return "wait"
        kind = flag.get("event_type")
        if kind == "misread":
            return "wait"  # resolved by the card keyed in for it
        who = needs(key[1], kind)
        actor = self.supervisor if who == "supervisor" else self.dealer
        event = {"type": "acknowledge", "flag_event": key[0], "rule": key[1]}
        self._send(event, actor=actor)
        self.seen_flags += 1
        self._reading = None
        return "acknowledge"

    def look(self) -> Look:
        """Read the table as it is now (the service's view: frozen, as of the last event)."""
        view = self.service.view()
        rnd = view.round
        target = view.next_card
        look = Look(
            phase=str(view.phase),
            round=view.number,
            rounds_played=view.rounds_played,
            decisions=view.open,
            next_card=None if target is None else (target.box, target.hand),
            up=rnd.dealer[0] if rnd is not None and rnd.dealer else None,
            shuffle_due=view.shoe is None or view.reshuffle_due,
        )
        if rnd is not None:
            for box in rnd.boxes:
                look.staked[box.number] = box.staked
                for hand in box.hands:
                    look.hands[(box.number, hand.hand)] = (list(hand.cards), hand.total)
        return look

    def _between_rounds(self, look: Look, shuffle_due: bool) -> str:
        now = time.monotonic()
        if look.rounds_played and self._settled_at is None:
            self._settled_at = now
            self._placed = {}
            self.place_wagers({})  # the dealer pays and collects; players pick up their chips
        if self._settled_at is not None and now - self._settled_at < self.settle_pause:
            return "wait"  # the dealer pays and collects; the screen shows the payouts
        last = bool(self.max_rounds) and look.rounds_played >= self.max_rounds
        if self.tray is not None and not self._placed and (last or not shuffle_due):
            # Between rounds with a shoe loaded (so after the table's opening), or the day over.
            done = self.tray.step(look.rounds_played, self.max_rounds)
            if done:
                return done
        if self.max_rounds and look.rounds_played >= self.max_rounds:
            return "wait"
        if shuffle_due:  # no shoe loaded, or the cutting card came out (16.9, 16.10)
            self.place_wagers({})  # chips collected before the shuffle
            if self.cards is not None:
                self.change_shoe(self.cards)
            else:
                self.new_shoe()
            return "shuffle"
        if not self._placed:
            self._placed = self._choose_wagers()
            self._placed_at = now
            self.place_wagers(self._placed)
            return "wagers"
        if now - self._placed_at > KEY_IN_AFTER and self._key_in_unread(look):
            return "keyed in"
        if now - self._placed_at > 10:  # the wagers never arrived (camera down?): place again
            self._placed = {}
        return "wait"

    def _betting(self, look: Look) -> str:
        arrived = all(look.staked.get(box) == amount for box, amount in self._placed.items())
        if not arrived and time.monotonic() - self._placed_at < 3:
            return "wait"  # the camera reports a wager once it has been still for a moment
        if not arrived and self._key_in_unread(look):
            return "keyed in"  # the round is open: the boxes the camera cannot read, by hand
        if not any(d.kind is Kind.NO_MORE_BETS for d in look.decisions):
            return "wait"
        self.service.close_betting()  # waits for the cameras to see the boxes as they stand
        done = self._send({"type": "no_more_bets"})
        if self.after_call is not None:
            self.after_call(look.round)
        return done

    def _key_in_unread(self, look: Look) -> bool:
        """The wagers placed on boxes the camera says it cannot read, keyed in by hand as the
        dealer would (the chip pad); whether any was."""
        done = False
        for box, amount in self._placed.items():
            if look.staked.get(box) != amount and box in self.service.unsure:
                done |= self.service.key_in_bet(box, amount, actor=self.dealer) is not None
        return done

    def _choose_wagers(self) -> Wagers:
        setup = self.service.setup
        count = self.rng.randint(1, min(4, setup.boxes))
        boxes = sorted(self.rng.sample(range(1, setup.boxes + 1), count))
        low = max(setup.min_bet, Decimal(5))
        top = min(setup.max_bet, Decimal(100))
        steps = [
            a for a in (Decimal(v) for v in (5, 10, 15, 20, 25, 30, 50, 75, 100)) if low <= a <= top
        ] or [low]
        return {box: self.rng.choice(steps) for box in boxes}

    def _key(self, look: Look, d: Decision) -> tuple[Any, ...]:
        return (look.round, str(d.kind), d.box, d.hand, d.player)

    def _window_decision(self, look: Look) -> str:
        """Insurance and rescue: each player's own choice, open out of turn."""
        for d in look.decisions:
            if d.kind is not Kind.INSURANCE and d.kind is not Kind.RESCUE:
                continue
            key = self._key(look, d)
            if key in self._declined:
                continue
            self._declined.add(key)
            if self.strategy is None or look.up is None:
                continue
            if d.kind is Kind.INSURANCE:
                if self.strategy.insurance:
                    return self._send(d.event())
            else:
                assert d.box is not None and d.hand is not None
                total = look.hands[(d.box, d.hand)][1]
                if self.strategy.rescues(total, look.up):
                    return self._send(d.event())
        return ""

    def _play_decision(self, look: Look) -> str:
        # Back-bettors following a double or a split: each their own choice.
        for d in look.decisions:
            if d.by is not Role.BACK_BETTOR:
                continue
            key = self._key(look, d)
            if key in self._declined:
                continue
            self._declined.add(key)
            if self.rng.random() < 0.5:
                return self._send(d.event())
        # 16.4: an exposed error card offered to the box in play: take it or refuse it.
        refuse = next((d for d in look.decisions if d.kind is Kind.REFUSE), None)
        if refuse is not None:
            if self.rng.random() < 0.8:
                return self._send({"type": "hit", "box": refuse.box})
            return self._send(refuse.event())
        if any(d.kind is Kind.PEEK for d in look.decisions):
            return self._send({"type": "peek"})
        if look.next_card is None or look.next_card[0] is None:
            return ""
        box, hand = look.next_card[0], look.next_card[1] or 0
        own = [
            d
            for d in look.decisions
            if d.box == box and d.by is Role.CONTROLLER and d.kind in PLAY_KINDS
        ]
        if not own:
            return ""
        cards, total = look.hands[(box, hand)]
        offered = {str(d.kind) for d in own}
        choice = "stand"
        if self.strategy is not None and look.up is not None and cards:
            choice = self.strategy.decide(cards, look.up, offered)
        elif "hit" in offered and total < 17:
            choice = "hit"
        if choice == "hit":
            self.draw()
            return "draw"
        chosen = next(d for d in own if str(d.kind) == choice)
        return self._send(chosen.event())

    # ----- the table's day and its shoes -------------------------------------------------

    def change_shoe(self, cards: Cards) -> None:
        """Open the table if it is not open, end and read out the shoe in play, inspect the
        decks never checked, confirm the shuffle's steps, load the next shoe."""
        view = self.service.view()
        signed_in = view.dealer == self.dealer
        opening = view.day.state is DayState.CLOSED
        in_play = view.shoe is not None and not view.shoe.ended
        if not signed_in:
            self._send({"type": "dealer", "dealer": self.dealer}, actor=self.dealer)
        if opening:
            self._send(
                {"type": "open_table", "by": [self.dealer, self.supervisor]}, actor=self.supervisor
            )
        if in_play:
            self._send({"type": "shoe_end"}, actor=self.dealer)
            cards.read_out()
        serials = cards.decks()
        known = {d.serial for d in self.service.view().decks}
        for serial in serials:
            if serial in known:
                continue  # it passed an inspection or a reconciliation (or failed one) today
            by = [self.dealer, self.supervisor]
            self._send({"type": "inspect", "deck": serial, "by": by}, actor=self.dealer)
            cards.read_deck(serial)
            self._send({"type": "inspect_end"}, actor=self.dealer)
        for step in OPENING_STEPS if opening else SHUFFLE_STEPS:
            self._send({"type": "opening_step", "step": step}, actor=self.dealer)
        cards.load()

    def _send(self, event: dict[str, Any], actor: str | None = None) -> str:
        result = self.service.submit(event, source="dealer", actor=actor)
        if not result.ok:
            log.warning("dealer bot input refused", input=event, error=result.error)
        return str(event["type"])


def _default_strategy(service: TableService) -> Strategy | None:
    try:
        return load_strategy(strategy_path(service.setup.game))
    except StrategyError as exc:
        log.warning("no strategy table: the bot stands on 17", error=str(exc))
        return None
