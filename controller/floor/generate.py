"""Realistic shifts of a table, played through the engine: for the floor's tests and benchmark.

:func:`play` deals rounds on a table of several boxes the way a dealer and players would: the
chip camera reports each box's wager (``wager_seen``) before the dealer records it (now and
then it sees something else, or a bet arrives late: 5.2, 5.5), the dealer calls no more bets,
deals whenever the engine is due a card, makes the announcements the engine's open decisions
call for, and the players decide from the game's strategy table. Now and then a card is found
face up in the shoe (16.1). Each event gets the time it happened: a few seconds between the
dealer's actions, half a minute or so between rounds, the table closed overnight.

Everything comes from ``Table.open_decisions()`` and ``Table.next_card()``; the generator never
decides what the rules allow. It yields ``(event, recorded_at)`` pairs; the first event is the
table line.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from controller.cards import deck
from controller.engine import Kind, Phase, Role, Table
from controller.events import parse_event, parse_setup
from controller.sim.strategy import Strategy, load_strategy, strategy_path

PLAYERS = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "jo")
DEALERS = ("d.tane", "d.rewi", "d.mere", "d.aroha")
AMOUNTS = (5, 10, 10, 15, 20, 25, 25, 50, 100)
# The tray's chips, largest first (a cent chip only for the odd cents of a 3:2 payout).
CHIPS = tuple((Decimal(d), d) for d in ("1000", "100", "25", "5", "1", "0.5", "0.01"))
BUY_INS = (100, 100, 200, 200, 300, 500, 1000)
TRAY_START = Decimal(50_000)


def chips_for(amount: Decimal) -> dict[str, int]:
    """A tray worth exactly ``amount``, in the fewest chips."""
    out: dict[str, int] = {}
    for value, name in CHIPS:
        n, amount = divmod(amount, value)
        if n:
            out[name] = int(n)
    return out or {"1": 0}


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


class Shift:
    """One table's play; :meth:`events` yields ``(event, recorded_at)``."""

    def __init__(
        self,
        table_id: str,
        *,
        game: str = "pontoon-nz-2000",
        seed: int | str = 1,
        start: datetime,
        boxes: int = 7,
        irregular: float = 0.02,
        open_hours: float = 16.0,
        vocabulary: bool = False,
        tray: bool = False,
        mispay: tuple[int, Decimal] | None = None,
    ) -> None:
        self.rng = random.Random(f"floor-generate/{seed}")
        self.line: dict[str, Any] = {
            "type": "table",
            "game": game,
            "table_id": table_id,
            "boxes": boxes,
            "min_bet": 5,
            "max_bet": 1000,
            "rules": {},
        }
        self.setup = parse_setup(self.line, 1)
        self.table = Table(self.setup, keep_rounds=1)
        self.strategy: Strategy = load_strategy(strategy_path(game))
        self.clock = start
        self.day_end = start + timedelta(hours=open_hours)
        self.open_hours = open_hours
        self.irregular = irregular
        self.vocabulary = vocabulary  # dealer changes (the `dealer` event) when the engine has it
        self.shoe: list[tuple[str | None, str]] = []
        self.serials: list[str] = []
        self.day = 0
        self.opened = False
        self.drop = irregular / 20 if vocabulary else 0.0  # a card off the table, never read
        self.short: set[str] = set()  # decks of this shoe with a card lost
        self.replaced = 0
        self.cut_at = 0
        self.cut_out = False
        self.dealer_index = 0
        self.dealer_since = start
        # The chip tray (``tray``): its chips as they physically are, the day's buy-ins, the
        # slips' numbers; ``mispay``: after that round (from 1) the dealer pays that much too much.
        self.tray = tray
        self.mispay = mispay
        self.tray_value = TRAY_START
        self.tray_open = False
        self.day_buy_ins = Decimal(0)
        self.slip_no = 10_000 + self.rng.randrange(80_000) * 10
        self.rounds_dealt = 0

    # ----- time ---------------------------------------------------------------------------------

    def tick(self, low: float, high: float) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return iso(self.clock)

    def _emit(
        self, event: dict[str, Any], low: float = 1.5, high: float = 4.0
    ) -> tuple[dict[str, Any], str]:
        at = self.tick(low, high)
        applied = self.table.apply(parse_event(event))
        settled = applied.settled
        if settled is not None:  # the tray pays the players and takes their losses
            for s in settled.settlements:
                self.tray_value += s.staked - s.returned
        return event, at

    # ----- the shoe -----------------------------------------------------------------------------

    def _shuffle(self) -> dict[str, Any]:
        one = deck(self.table.rules.excluded_ranks)
        if self.vocabulary:
            cards: list[tuple[str | None, str]] = [(s, c) for s in self.serials for c in one]
        else:
            cards = [(None, c) for _ in range(self.setup.decks) for c in one]
        self.rng.shuffle(cards)
        self.shoe = cards
        self.cut_at = int(len(cards) * self.rng.uniform(0.7, 0.8))
        self.cut_out = False
        event: dict[str, Any] = {
            "type": "shuffle",
            "decks": self.setup.decks,
            "cut_card": self.cut_at,
            "source": "dealer",
        }
        if self.vocabulary:
            event["deck_serials"] = list(self.serials)
        return event

    def _card(self, serial: str | None, card: str) -> dict[str, Any]:
        event: dict[str, Any] = {"type": "card", "card": card, "source": "shoe"}
        if serial is not None:
            event["deck"] = serial
        return event

    def _open_day(self) -> Iterator[tuple[dict[str, Any], str]]:
        """The table's day begins (6.1-6.3): every deck inspected through the reader, spread,
        chemmy shuffled, stacked, riffled and cut, by the dealer and a supervisor."""
        self.day += 1
        base = "".join(c for c in self.setup.table_id.upper() if c.isalnum())[:6]
        self.serials = [f"{base}{self.day:03d}{k:02d}"[-12:] for k in range(self.setup.decks)]
        dealer = DEALERS[self.dealer_index]
        yield self._emit({"type": "dealer", "dealer": dealer, "source": "dealer"})
        yield self._emit(
            {
                "type": "open_table",
                "by": [dealer, "s.kahu"],
                "source": "supervisor",
                "actor": "s.kahu",
            },
            30,
            90,
        )
        one = deck(self.table.rules.excluded_ranks)
        for serial in self.serials:
            yield self._emit({"type": "inspect", "deck": serial, "by": [dealer, "s.kahu"]}, 5, 10)
            for card in one:
                yield self._emit(self._card(serial, card), 0.2, 0.4)
            yield self._emit({"type": "inspect_end"}, 1, 3)
        for step in ("spread", "chemmy", "stack", "riffle", "cut"):
            yield self._emit({"type": "opening_step", "step": step, "actor": dealer}, 20, 60)
        self.opened = True
        self.shoe = []

    def _end_shoe(self) -> Iterator[tuple[dict[str, Any], str]]:
        """The shoe is finished: the cards left are read out for its reconciliation."""
        yield self._emit({"type": "shoe_end", "source": "dealer"}, 5, 15)
        while self.shoe:
            serial, card = self.shoe.pop()
            yield self._emit(self._card(serial, card), 0.2, 0.5)
        # A deck that came out short is replaced by a new one, inspected before it is loaded.
        dealer = DEALERS[self.dealer_index]
        one = deck(self.table.rules.excluded_ranks)
        for serial in sorted(self.short):
            self.replaced += 1
            new = f"{serial[:8]}R{self.replaced:03d}"[-12:]
            self.serials = [new if s == serial else s for s in self.serials]
            yield self._emit({"type": "inspect", "deck": new, "by": [dealer, "s.kahu"]}, 30, 60)
            for card in one:
                yield self._emit(self._card(new, card), 0.2, 0.4)
            yield self._emit({"type": "inspect_end"}, 1, 3)
        self.short.clear()

    def _drawn(self) -> int:
        return len(deck(self.table.rules.excluded_ranks)) * self.setup.decks - len(self.shoe)

    def _draw(self) -> Iterator[tuple[dict[str, Any], str]]:
        if not self.cut_out and self._drawn() >= self.cut_at:
            self.cut_out = True
            yield self._emit({"type": "cut_card", "source": "shoe"}, 0.5, 1.0)
        if not self.shoe:
            raise RuntimeError("the generated shoe ran out")
        if self.drop and len(self.shoe) > 1 and self.rng.random() < self.drop:
            lost, _card = self.shoe.pop()  # behind the shoe: never read, missing at the end
            if lost is not None:
                self.short.add(lost)
        serial, card = self.shoe.pop()
        event = self._card(serial, card)
        if self.rng.random() < self.irregular / 4:
            event["face_up"] = True
        yield self._emit(event, 1.0, 3.0)

    # ----- rounds -------------------------------------------------------------------------------

    def events(self, rounds: int) -> Iterator[tuple[dict[str, Any], str]]:
        yield self.line, iso(self.clock)
        for _ in range(rounds):
            yield from self._between_rounds()
            yield from self._round()
            self.rounds_dealt += 1
            if self.mispay is not None and self.mispay[0] == self.rounds_dealt:
                self.tray_value -= self.mispay[1]
        if self.tray and self.tray_open:
            yield from self._close_tray()
        if self.vocabulary:
            yield from self._close_day()

    # ----- the chip tray ------------------------------------------------------------------------

    def _count(self, kind: str) -> tuple[dict[str, Any], str]:
        dealer = DEALERS[self.dealer_index]
        return self._emit(
            {
                "type": "tray_count",
                "kind": kind,
                "chips": chips_for(self.tray_value),
                "by": [dealer, "s.kahu"],
                "source": "supervisor",
            },
            60,
            180,
        )

    def _open_tray(self) -> Iterator[tuple[dict[str, Any], str]]:
        self.tray_open = True
        self.day_buy_ins = Decimal(0)
        yield self._count("opener")

    def _close_tray(self) -> Iterator[tuple[dict[str, Any], str]]:
        self.tray_open = False
        yield self._count("closer")
        yield self._emit(
            {"type": "drop_count", "amount": str(self.day_buy_ins), "by": ["c.ngata", "c.wiremu"]},
            30,
            60,
        )

    def _slip(self, kind: str, amount: int) -> tuple[dict[str, Any], str]:
        self.slip_no += 1
        self.tray_value += amount if kind == "fill" else -amount
        return self._emit(
            {
                "type": kind,
                "slip": self.slip_no,
                "chips": {"1000": amount // 1000},
                "by": ["r.hemi", "s.kahu", DEALERS[self.dealer_index]],
                "source": "supervisor",
            },
            60,
            120,
        )

    def _tray_between(self) -> Iterator[tuple[dict[str, Any], str]]:
        rng = self.rng
        if rng.random() < 0.15:
            amount = Decimal(rng.choice(BUY_INS))
            kind = "marker" if rng.random() < 0.1 else "cash"
            self.tray_value -= amount
            self.day_buy_ins += amount
            yield self._emit(
                {"type": "buy_in", "amount": str(amount), "kind": kind, "source": "dealer"}, 5, 20
            )
        if self.tray_value < 30_000:
            yield self._slip("fill", 20_000)
        elif self.tray_value > 80_000:
            yield self._slip("credit", 20_000)

    def _close_day(self) -> Iterator[tuple[dict[str, Any], str]]:
        if self.shoe:
            yield from self._end_shoe()
        yield self._emit({"type": "close_table", "source": "supervisor", "actor": "s.kahu"})
        self.opened = False

    def _between_rounds(self) -> Iterator[tuple[dict[str, Any], str]]:
        if self.clock >= self.day_end:  # the table closes for the night
            if self.tray and self.tray_open:
                yield from self._close_tray()
            if self.vocabulary and self.opened:
                yield from self._close_day()
            self.clock += timedelta(hours=24 - self.open_hours)
            self.day_end = self.clock + timedelta(hours=self.open_hours)
            self.tick(0, 600)
        if self.vocabulary and not self.opened:
            yield from self._open_day()
        if self.vocabulary and self.clock - self.dealer_since > timedelta(minutes=40):
            self.dealer_index = (self.dealer_index + 1) % len(DEALERS)
            self.dealer_since = self.clock
            yield self._emit(
                {"type": "dealer", "dealer": DEALERS[self.dealer_index], "source": "dealer"}
            )
            if self.tray and self.tray_open:
                yield self._count("check")  # the tray counted at the change of dealer
        if self.tray and not self.tray_open:
            yield from self._open_tray()
        if self.tray:
            yield from self._tray_between()
        if self.shoe and not self.cut_out and self._drawn() >= self.cut_at:
            self.cut_out = True  # the cutting card is next: out now, and a shuffle follows
            yield self._emit({"type": "cut_card", "source": "shoe"}, 0.5, 1.0)
        view = self.table.view()
        if view.shoe is None or view.reshuffle_due or self.cut_out:
            if self.vocabulary and self.shoe:
                yield from self._end_shoe()
            yield self._emit(self._shuffle(), 20, 60)

    def _round(self) -> Iterator[tuple[dict[str, Any], str]]:
        table = self.table
        rng = self.rng
        count = rng.randint(1, min(5, self.setup.boxes))
        boxes = sorted(rng.sample(range(1, self.setup.boxes + 1), count))
        players = rng.sample(PLAYERS, count)
        self.tick(15, 40)
        for box, player in zip(boxes, players, strict=True):
            amount = rng.choice(AMOUNTS)
            back = (
                rng.choice([p for p in PLAYERS if p not in players])
                if (rng.random() < 0.08)
                else None
            )
            seen = amount + (10 if back else 0)
            if rng.random() < self.irregular:
                seen += 5  # the camera sees a chip nobody recorded (5.5 at settlement)
            yield self._emit(
                {
                    "type": "wager_seen",
                    "box": box,
                    "amount": seen,
                    "confidence": "0.97",
                    "source": "camera",
                },
                0.5,
                2.0,
            )
            yield self._emit(
                {"type": "bet", "box": box, "player": player, "amount": amount, "source": "camera"},
                0.2,
                1.0,
            )
            if back is not None:  # a back-bettor, entered by the dealer
                yield self._emit(
                    {"type": "bet", "box": box, "player": back, "amount": 10, "source": "dealer"}
                )
        yield self._emit({"type": "no_more_bets", "source": "dealer"})
        late = rng.random() < self.irregular
        declined: set[tuple[Any, ...]] = set()
        for _ in range(400):
            view = table.view()
            rnd = view.round
            if rnd is None:
                return
            opened = view.open
            kinds = {d.kind for d in opened}
            if late and rnd.phase is Phase.PLAY:
                late = False
                yield self._emit(
                    {
                        "type": "bet",
                        "box": boxes[0],
                        "player": players[0],
                        "amount": 5,
                        "source": "dealer",
                    }
                )
                continue
            if Kind.OFFER_INSURANCE in kinds:
                yield self._emit({"type": "offer_insurance", "source": "dealer"})
                continue
            offer = next((d for d in opened if d.kind is Kind.OFFER_SURRENDER), None)
            if offer is not None:
                yield self._emit({**offer.event(), "source": "dealer"})
                continue
            acted = False
            for d in opened:
                if d.kind in (Kind.INSURANCE, Kind.RESCUE) or d.by is Role.BACK_BETTOR:
                    key = (rnd.number, str(d.kind), d.box, d.hand, d.player)
                    if key in declined:
                        continue
                    declined.add(key)
                    take = d.by is Role.BACK_BETTOR and rng.random() < 0.5
                    if d.kind is Kind.RESCUE and rnd.dealer:
                        hand = table.hand(d.box or 0, d.hand or 0)
                        take = self.strategy.rescues(hand.best, rnd.dealer[0])
                    if take:
                        yield self._emit({**d.event(), "source": "dealer"})
                        acted = True
                        break
            if acted:
                continue
            if Kind.PEEK in kinds:
                yield self._emit({"type": "peek", "source": "dealer"})
                continue
            target = table.next_card()
            if target is not None and target.to == "box":
                own = [
                    d
                    for d in opened
                    if d.box == target.box
                    and d.by is Role.CONTROLLER
                    and d.kind in (Kind.STAND, Kind.HIT, Kind.DOUBLE, Kind.SPLIT, Kind.SURRENDER)
                ]
                if own and rnd.dealer:
                    hand = table.hand(target.box or 0, target.hand or 0)
                    offered = {str(d.kind) for d in own}
                    choice = self.strategy.decide(hand.cards, rnd.dealer[0], offered)
                    if choice != "hit":
                        chosen = next(d for d in own if str(d.kind) == choice)
                        yield self._emit({**chosen.event(), "source": "dealer"})
                        continue
            if target is not None:
                yield from self._draw()
                continue
            raise RuntimeError(f"nothing to do: {table.due().to_dict()!r}")
        raise RuntimeError("a generated round did not end")


def money(text: Any) -> Decimal:
    return Decimal(str(text))
