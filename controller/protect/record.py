"""A table's record for game protection: its events walked through the engine, in shoe order.

:func:`read_table` applies a table's events (the table line first, as a scenario or the audit
store's export holds them) to :class:`controller.engine.Table` through its public API and
notes, as a perfect charting would:

- for each **round**: the count before it (the cards seen since the shuffle: every card out of
  the shoe, a hole card only once it is turned), each player's initial wager over their boxes
  and their net over the round's settlements, the dealer on duty, the flags, voids and
  corrections, its times;
- for each **playing decision** of a box's controller (a card taken while a hit was open, a
  stand, a double, a split, a surrender, an insurance wager): the hand before it, the dealer's
  up card, the action, the action the basic strategy table takes among the decisions open, the
  next card out of the shoe, the hole card where the game has one, the true count and the
  cards the player had not seen;
- for each **shuffle**: the count of the shoe it ended, how many cards had been dealt and where
  the cutting card was;
- each **flag** with the time it was raised and its acknowledgement (``acknowledge``).

A decision the engine refused (a flag, and play went on) is not a decision of the player. The
records are plain values: :mod:`benchmarks.protect_population` builds the same ones from its own
game, and a test checks that both agree on the same rounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

from controller.engine import Kind, Role, Table
from controller.events import ScenarioError, parse_event, parse_setup
from controller.protect.tags import VALUES, CountSystem, count_system, value_index
from controller.rules import HoleCard
from controller.sim.strategy import Strategy, load_strategy, strategy_path

PLAY_KINDS: Final = frozenset({Kind.HIT, Kind.STAND, Kind.DOUBLE, Kind.SPLIT, Kind.SURRENDER})
DECISION_EVENTS: Final = frozenset({"hit", "stand", "double", "split", "surrender"})


@dataclass(slots=True)
class Decision:
    """One playing decision of a box's controller."""

    round: int
    seq: int
    player: str
    box: int
    hand: int
    cards: tuple[str, ...]  # the hand before the decision
    up: str  # the dealer's up card
    action: str  # hit, stand, double, split, surrender, insurance
    advised: str  # what the basic strategy table does among the decisions open
    next_card: str | None  # the next card out of the shoe after the decision
    hole: str | None  # the dealer's hole card (hole-card games), else None
    true_count: float
    unseen: tuple[int, ...]  # cards of each value class the player had not seen
    dealer: str | None = None


@dataclass(slots=True)
class PlayerRound:
    player: str
    wager: Decimal  # initial wagers over the player's boxes
    net: Decimal  # over every settlement row of the player
    boxes: tuple[int, ...]


@dataclass(slots=True)
class FlagRecord:
    seq: int
    rule: str
    round: int
    box: int | None
    message: str
    at: datetime | None
    dealer: str | None
    acknowledged_seq: int | None = None
    acknowledged_at: datetime | None = None
    acknowledged_by: str | None = None


@dataclass(slots=True)
class RoundRecord:
    round: int
    status: str  # settled, void, incomplete
    shoe: int  # which shoe of the record (1, 2, ...)
    true_count: float  # before the round (at its first wager)
    cards_dealt: int  # from the shoe before the round
    cut_out: bool  # the cutting card had come out before the round
    dealer: str | None
    seq_first: int
    seq_last: int
    start: datetime | None
    end: datetime | None
    players: list[PlayerRound] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    voids: int = 0
    corrections: int = 0

    @property
    def wagered(self) -> Decimal:
        return sum((p.wager for p in self.players), Decimal(0))

    @property
    def house_net(self) -> Decimal:
        return -sum((p.net for p in self.players), Decimal(0))


@dataclass(slots=True)
class ShuffleRecord:
    seq: int
    shoe: int  # the shoe this shuffle ended
    true_count: float
    cards_dealt: int
    cut_card: int | None  # cards before the cutting card (None: none inserted)
    cut_out: bool
    dealer: str | None
    at: datetime | None

    @property
    def early(self) -> bool:
        """Shuffled before the cutting card came out."""
        return self.cut_card is not None and not self.cut_out and self.cards_dealt < self.cut_card


@dataclass
class TableRecord:
    table_id: str
    game: str
    count: CountSystem
    hole_card: bool
    rounds: list[RoundRecord] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    shuffles: list[ShuffleRecord] = field(default_factory=list)
    flags: list[FlagRecord] = field(default_factory=list)
    shoes_failed: int = 0  # shoes or decks flagged (shoe, 6.1)
    events: int = 0

    def restricted(
        self,
        rounds: Sequence[RoundRecord],
        *,
        shuffles: Sequence[ShuffleRecord] | None = None,
        flags: Sequence[FlagRecord] | None = None,
    ) -> TableRecord:
        """The same table over ``rounds`` only, with their decisions."""
        numbers = {r.round for r in rounds}
        return TableRecord(
            table_id=self.table_id,
            game=self.game,
            count=self.count,
            hole_card=self.hole_card,
            rounds=list(rounds),
            decisions=[d for d in self.decisions if d.round in numbers],
            shuffles=list(self.shuffles if shuffles is None else shuffles),
            flags=list(self.flags if flags is None else flags),
            shoes_failed=self.shoes_failed,
            events=self.events,
        )


def _time(obj: Mapping[str, Any]) -> datetime | None:
    text = obj.get("time")
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _next_cards(objs: Sequence[Mapping[str, Any]]) -> list[str | None]:
    """For each event, the next card out of the shoe at or after it (None past a shuffle)."""
    out: list[str | None] = [None] * len(objs)
    nxt: str | None = None
    for i in range(len(objs) - 1, -1, -1):
        obj = objs[i]
        kind = obj.get("type")
        if kind in ("shuffle", "reshuffle_discards", "shoe_end", "inspect_end"):
            nxt = None
        elif kind == "card" and not obj.get("face_up"):
            nxt = str(obj.get("card"))
        out[i] = nxt
    return out


class _Walker:
    def __init__(
        self, setup_obj: Mapping[str, Any], strategy: Strategy | None, table: Table | None
    ) -> None:
        setup = parse_setup(setup_obj, 1)
        self.table = table if table is not None else Table(setup, keep_rounds=1)
        rules = setup.rules
        self.rules = rules
        self.count = count_system(rules.name, rules.excluded_ranks)
        self.strategy = strategy or load_strategy(strategy_path(rules.name))
        self.hole_game = rules.hole_card is HoleCard.PEEK
        self.record = TableRecord(
            table_id=str(setup_obj.get("table_id") or ""),
            game=rules.name,
            count=self.count,
            hole_card=self.hole_game,
        )
        # The count.
        self.shoe_total = [0] * len(VALUES)
        self.seen = [0] * len(VALUES)
        self.running = 0
        self.hole: str | None = None  # dealt face down, not yet seen
        self.shoe_index = 0
        self.cut_card: int | None = None
        self.cut_out = False
        self.dealt = 0
        self.reading = False  # inspect..inspect_end or shoe_end..shuffle: cards not dealt
        # The round.
        self.dealer: str | None = None
        self.current: RoundRecord | None = None
        self.bets: dict[tuple[int, str], Decimal] = {}
        self.last_hit: tuple[int, int] | None = None  # (seq, box) of a `hit` event just seen
        self.flags_by_seq: dict[int, list[FlagRecord]] = {}

    # --- the count -----------------------------------------------------------------------

    def load(self, decks: int) -> None:
        self.shoe_total = [n * decks for n in self.count.per_deck]
        self.seen = [0] * len(VALUES)
        self.running = 0
        self.hole = None
        self.dealt = 0
        self.cut_out = False

    def see(self, code: str) -> None:
        if not self.count.counts(code):
            return
        i = value_index(code)
        self.seen[i] += 1
        self.running += self.count.tags[i]

    def unseen(self) -> tuple[int, ...]:
        return tuple(t - s for t, s in zip(self.shoe_total, self.seen, strict=True))

    def true_count(self) -> float:
        return self.count.true_count(self.running, sum(self.shoe_total) - sum(self.seen))

    def reveal_hole(self) -> None:
        if self.hole is not None:
            self.see(self.hole)
            self.hole = None

    # --- events --------------------------------------------------------------------------

    def walk(
        self,
        events: Sequence[tuple[int, Mapping[str, Any], datetime | None]],
    ) -> TableRecord:
        """Apply ``events``: (sequence number, event, time), the number as the store keeps it
        (the table line is 0; a scenario's line is one more)."""
        nexts = _next_cards([obj for _, obj, _ in events])
        rec = self.record
        for (seq, obj, at), nxt in zip(events, nexts, strict=True):
            self.step(str(obj.get("type")), obj, seq, at, nxt)
        if self.current is not None:
            self.current.status = "incomplete"
            rec.rounds.append(self.current)
            self.current = None
        rec.events = len(events)
        return rec

    def step(
        self, kind: str, obj: Mapping[str, Any], seq: int, at: datetime | None, nxt: str | None
    ) -> None:
        table = self.table
        rec = self.record
        pending: Decision | None = None
        if kind in ("shuffle", "reshuffle_discards"):
            if self.shoe_index and kind == "shuffle":
                rec.shuffles.append(
                    ShuffleRecord(
                        seq=seq,
                        shoe=self.shoe_index,
                        true_count=self.true_count(),
                        cards_dealt=self.dealt,
                        cut_card=self.cut_card,
                        cut_out=self.cut_out,
                        dealer=self.dealer,
                        at=at,
                    )
                )
            decks = obj.get("decks") if kind == "shuffle" else None
            # 16.7's reshuffled discards are counted as a fresh shoe of the table's decks.
            self.load(int(decks) if isinstance(decks, int) else self.rules.decks)
            self.shoe_index += 1
            cut = obj.get("cut_card")
            self.cut_card = cut if isinstance(cut, int) else None
            self.reading = False
        elif kind in ("inspect", "shoe_end"):
            self.reading = True
        elif kind in ("inspect_end", "close_table"):
            self.reading = False
        elif kind == "cut_card":
            self.cut_out = True
        elif kind == "dealer":
            self.dealer = str(obj.get("dealer"))
        elif kind in DECISION_EVENTS:
            pending = self.decision(kind, obj, seq, nxt)
        elif kind == "card" and not self.reading:
            target = table.next_card()
            code = str(obj.get("card"))
            if (
                target is not None
                and target.to == "box"
                and target.box is not None
                and not obj.get("face_up")
                and self.last_hit != (seq - 1, target.box)
            ):
                pending = self.decision("hit", {"box": target.box}, seq, code, implied=True)
        elif kind == "insurance":
            pending = self.insurance(obj, seq)
        was_open = self.current is not None
        dealer_cards_before = self.dealer_cards()
        applied = table.apply(parse_event(obj, seq + 1))
        if kind == "bet" and applied.accepted:
            self.bet(obj, seq, at, was_open)
        if kind == "card" and not self.reading and applied.accepted:
            self.card(str(obj.get("card")), bool(obj.get("face_up")), dealer_cards_before)
        if kind == "hit" and applied.accepted:
            self.last_hit = (seq, int(obj.get("box", 0)))
        if pending is not None and applied.accepted and not applied.flags:
            rec.decisions.append(pending)
        cur = self.current
        if cur is not None:
            cur.seq_last = seq
            cur.end = at or cur.end
            if obj.get("correction_of") is not None:
                cur.corrections += 1
            if kind == "void" and applied.accepted:
                cur.voids += 1
        for flag in applied.flags:
            fr = FlagRecord(
                seq=seq,
                rule=flag.rule,
                round=flag.round,
                box=flag.box,
                message=flag.message,
                at=at,
                dealer=self.dealer,
            )
            rec.flags.append(fr)
            self.flags_by_seq.setdefault(seq, []).append(fr)
            if flag.rule in ("shoe", "6.1"):
                rec.shoes_failed += 1
            if cur is not None and flag.round == cur.round:
                cur.flags.append(flag.rule)
        if kind == "acknowledge":
            flag_seq = obj.get("flag_event")
            for fr in self.flags_by_seq.get(flag_seq if isinstance(flag_seq, int) else -1, []):
                if fr.rule == obj.get("rule") and fr.acknowledged_seq is None:
                    fr.acknowledged_seq = seq
                    fr.acknowledged_at = at
                    actor = obj.get("actor")
                    fr.acknowledged_by = str(actor) if actor is not None else None
        if applied.settled is not None and cur is not None:
            self.settle(cur, applied.settled)

    def dealer_cards(self) -> int:
        rnd = self.table.current_round
        return len(rnd.dealer) if rnd is not None else 0

    def card(self, code: str, face_up: bool, dealer_cards_before: int) -> None:
        self.dealt += 1
        if (
            self.hole_game
            and not face_up
            and dealer_cards_before == 1
            and self.dealer_cards() == 2
            and self.hole is None
        ):
            self.hole = code  # the hole card: seen when the dealer turns it
            return
        if dealer_cards_before >= 2 and self.dealer_cards() > dealer_cards_before:
            self.reveal_hole()
        self.see(code)

    def bet(self, obj: Mapping[str, Any], seq: int, at: datetime | None, was_open: bool) -> None:
        if not was_open:
            rnd = self.table.current_round
            self.current = RoundRecord(
                round=rnd.number if rnd is not None else self.table.rounds_played + 1,
                status="incomplete",
                shoe=self.shoe_index,
                true_count=self.true_count(),
                cards_dealt=self.dealt,
                cut_out=self.cut_out,
                dealer=self.dealer,
                seq_first=seq,
                seq_last=seq,
                start=at,
                end=at,
            )
            self.bets = {}
        key = (int(obj["box"]), str(obj["player"]))
        amount = Decimal(str(obj["amount"]))
        if amount > 0:
            self.bets[key] = amount
        else:
            self.bets.pop(key, None)

    def settle(self, cur: RoundRecord, result: Any) -> None:
        self.reveal_hole()
        cur.status = result.status
        nets: dict[str, Decimal] = {}
        for s in result.settlements:
            nets[s.player] = nets.get(s.player, Decimal(0)) + (s.returned - s.staked)
        wagers: dict[str, Decimal] = {}
        boxes: dict[str, list[int]] = {}
        for (box, player), amount in self.bets.items():
            wagers[player] = wagers.get(player, Decimal(0)) + amount
            boxes.setdefault(player, []).append(box)
        for player in sorted(set(wagers) | set(nets)):
            cur.players.append(
                PlayerRound(
                    player=player,
                    wager=wagers.get(player, Decimal(0)),
                    net=nets.get(player, Decimal(0)),
                    boxes=tuple(sorted(boxes.get(player, []))),
                )
            )
        self.record.rounds.append(cur)
        self.current = None
        self.bets = {}

    # --- decisions -----------------------------------------------------------------------

    def decision(
        self,
        kind: str,
        obj: Mapping[str, Any],
        seq: int,
        nxt: str | None,
        *,
        implied: bool = False,
    ) -> Decision | None:
        table = self.table
        rnd = table.current_round
        box = obj.get("box")
        if rnd is None or not isinstance(box, int) or not rnd.dealer:
            return None
        if kind == "split" and obj.get("player") is not None:
            return None  # a back-bettor following the split: not a playing decision
        mine = [d for d in table.open_decisions() if d.box == box and d.by is Role.CONTROLLER]
        offered = {d.kind for d in mine if d.kind in PLAY_KINDS}
        if (implied and Kind.HIT not in offered) or Kind(kind) not in offered:
            return None
        hand_idx = next((d.hand for d in mine if d.kind in PLAY_KINDS and d.hand is not None), 0)
        try:
            hand = table.hand(box, hand_idx)
        except KeyError:
            return None
        if len(hand.cards) < 2:
            return None
        up = rnd.dealer[0]
        advised = self.strategy.decide(hand.cards, up, {str(k) for k in offered})
        player = next((d.player for d in mine if d.player), None) or self.controller(box)
        return Decision(
            round=rnd.number,
            seq=seq,
            player=player,
            box=box,
            hand=hand_idx,
            cards=tuple(hand.cards),
            up=up,
            action=kind,
            advised=advised,
            next_card=nxt,
            hole=self.hole,
            true_count=self.true_count(),
            unseen=self.unseen(),
            dealer=self.dealer,
        )

    def insurance(self, obj: Mapping[str, Any], seq: int) -> Decision | None:
        rnd = self.table.current_round
        box = obj.get("box")
        if rnd is None or not isinstance(box, int) or not rnd.dealer:
            return None
        try:
            cards = tuple(self.table.hand(box, 0).cards)
        except KeyError:
            return None
        return Decision(
            round=rnd.number,
            seq=seq,
            player=str(obj.get("player")),
            box=box,
            hand=0,
            cards=cards,
            up=rnd.dealer[0],
            action="insurance",
            advised="insurance" if self.strategy.insurance else "no insurance",
            next_card=None,
            hole=self.hole,
            true_count=self.true_count(),
            unseen=self.unseen(),
            dealer=self.dealer,
        )

    def controller(self, box: int) -> str:
        for (b, player), _ in self.bets.items():
            if b == box:
                return player
        return f"box {box}"


def read_table(
    objs: Iterable[Mapping[str, Any]],
    *,
    times: Sequence[datetime | None] | None = None,
    strategy: Strategy | None = None,
) -> TableRecord:
    """A table's record from its events (the table line first).

    ``times`` gives each event's time (the floor's ``recorded_at``); without it an event's own
    ``time`` field is read where it has one. Raises :class:`ScenarioError` naming the line and
    field of a malformed event."""
    events = list(objs)
    if not events:
        raise ScenarioError(1, "type", "no events: the table line is missing")
    walker = _Walker(events[0], strategy, None)
    return walker.walk(
        [
            (i, obj, times[i] if times is not None else _time(obj))
            for i, obj in enumerate(events)
            if i > 0
        ]
    )


def read_from(
    setup: Mapping[str, Any],
    table: Table,
    events: Sequence[tuple[int, Mapping[str, Any], datetime | None]],
    *,
    table_id: str = "",
) -> TableRecord:
    """A table's record from a table restored at a checkpoint just before a shuffle (the
    floor's) and the events after it: (store sequence number, event, recorded time)."""
    walker = _Walker(setup, None, table)
    walker.record.table_id = table_id or walker.record.table_id
    return walker.walk(events)
