"""A population of players at a simulated table, for measuring game protection.

The game is the oracle's (``benchmarks/oracle``: NZ Pontoon and the generic blackjack, written
from the rule book without floorctl's engine), so the sessions are legal play that the engine
never dealt. A table has the player studied on box 1 and a flat basic-strategy player on box 2,
three dealers in turn (100 rounds each), a 75% cut, an honest dealer's occasional early shuffle
(0.5% of rounds, whatever the count), 60 rounds an hour.

Player types (:data:`TYPES`):

- honest: ``flat`` (basic strategy, one bet), ``paroli`` (doubles after a win, three times at
  most), ``martingale`` (doubles after a loss, to 8 units), ``streak`` (one more unit for each win
  in a row, to 5), ``hunch`` (a bet of 1, 2, 4 or 10 units changed on a whim one round in five,
  and 3% of decisions any other legal move), ``sloppy`` (flat, 3% of decisions any legal move);
- counters (the game's own tags): ``counter-1-4``, ``counter-1-8``, ``counter-1-12`` (bets by
  the true count, basic strategy), ``counter-1-8-index``, ``counter-1-12-index`` (with index
  plays: the usual stand/double/insurance departures at their counts), ``backcounter`` (sits in
  from a true count of +2, out below +1, 2 to 8 units);
- ``knower-5``, ``knower-2``: flat, and on 5% (2%) of decisions plays as if the next card were
  known (stands on a busting card, hits to a good one, doubles into a strong total);
- ``favoured``: flat; when dealer D2 deals, knows the next card on 20% of decisions (a dealer
  flashing or sequencing cards for one player).

:func:`play_session` returns the table's record built directly from the game (the same
:class:`controller.protect.record` values the engine path builds from events) and, when asked,
the session's events as a scenario, which ``floorctl replay`` replays without a flag and
``floorctl protect`` reads into the same record (``tests/test_protect_population.py``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from benchmarks.oracle.cards import CODE, VALUE, Shoe
from benchmarks.oracle.game import (
    BLACKJACK,
    M_DOUBLE,
    M_HIT,
    M_STAND,
    PONTOON,
    Hand,
    Rules,
    Stake,
    play_round,
)
from benchmarks.oracle.scenario import table_line
from benchmarks.oracle.strategy import load, shipped
from controller.protect.record import (
    Decision,
    PlayerRound,
    RoundRecord,
    ShuffleRecord,
    TableRecord,
)
from controller.protect.tags import CountSystem, count_system, value_index

GAMES: dict[str, Rules] = {"pontoon-nz-2000": PONTOON, "blackjack": BLACKJACK}
HONEST = ("flat", "paroli", "martingale", "streak", "hunch", "sloppy")
TYPES = (
    *HONEST,
    "counter-1-4",
    "counter-1-8",
    "counter-1-12",
    "counter-1-8-index",
    "counter-1-12-index",
    "backcounter",
    "knower-5",
    "knower-2",
    "favoured",
)
UNIT = 1000  # cents: $10
DEALERS = ("D1", "D2", "D3")
DEALER_ROUNDS = 100
EARLY_SHUFFLE = 0.005
START = datetime(2026, 3, 2, 18, 0, tzinfo=timezone(timedelta(hours=13)))
PLAYER = "studied"
_CARD = {code: card for card, code in enumerate(CODE)}
FILLER = "filler"


def _total(cards: list[int]) -> int:
    hard = sum(VALUE[c] for c in cards)
    if hard <= 11 and any(VALUE[c] == 1 for c in cards):
        return hard + 10
    return hard


@dataclass
class Behaviour:
    kind: str
    rng: random.Random
    units: int = 1
    wins: int = 0
    losses: int = 0
    seated: bool = True

    @property
    def max_units(self) -> int:
        return int(self.kind.split("-")[2]) if self.kind.startswith("counter") else 8

    def bet(self, tc: float) -> int:
        """Units to bet this round (0: sits out)."""
        k = self.kind
        if k.startswith("counter"):
            top = self.max_units
            if tc < 1:
                return 1
            return max(1, min(top, round(1 + (tc - 0.5) * (top - 1) / 4)))
        if k == "backcounter":
            if self.seated and tc < 1:
                self.seated = False
            elif not self.seated and tc >= 2:
                self.seated = True
            return 0 if not self.seated else max(2, min(8, round(2 * tc)))
        if k == "paroli":
            return 2 ** min(self.wins, 3) if self.wins < 3 else 1
        if k == "martingale":
            return min(8, 2**self.losses)
        if k == "streak":
            return min(5, 1 + self.wins)
        if k == "hunch":
            if self.rng.random() < 0.2:
                self.units = self.rng.choice((1, 2, 4, 10))
            return self.units
        return 2 if k in ("flat", "sloppy") or k.startswith(("knower", "favoured")) else 1

    def settle(self, net: int) -> None:
        if net > 0:
            self.wins += 1
            self.losses = 0
        elif net < 0:
            self.losses += 1
            self.wins = 0


# Index plays (departures from the table at a true count), for counters "with index plays":
# (hard total, up-card value, action at or above the count, count).
INDEX_PLAYS: dict[tuple[int, int], tuple[str, float]] = {
    (16, 10): (M_STAND, 0.0),
    (15, 10): (M_STAND, 4.0),
    (16, 9): (M_STAND, 5.0),
    (12, 3): (M_STAND, 2.0),
    (12, 2): (M_STAND, 3.0),
    (13, 2): (M_STAND, -1.0),
    (12, 4): (M_STAND, 0.0),
    (10, 10): (M_DOUBLE, 4.0),
    (10, 1): (M_DOUBLE, 4.0),
    (9, 2): (M_DOUBLE, 1.0),
    (9, 7): (M_DOUBLE, 3.0),
    (11, 1): (M_DOUBLE, 1.0),
}


@dataclass
class Table:
    """The simulated table: the shoe, the count, the dealers, the record and the events."""

    rules: Rules
    count: CountSystem
    rng: random.Random
    studied: Behaviour
    filler: Behaviour
    log_events: bool
    record: TableRecord
    shoe: Shoe = field(init=False)
    events: list[dict[str, Any]] = field(default_factory=list)
    seen: list[int] = field(default_factory=lambda: [0] * 10)
    running: int = 0
    shoe_index: int = 0
    dealer: str = DEALERS[0]
    round_log: list[dict[str, Any]] = field(default_factory=list)
    round_number: int = 0
    n_boxes: int = 0
    seq_base: int = 0
    # This round's decisions: (player, box, hand cards, action, advised, next, seen, hole, up).
    pending: list[
        tuple[str, int, tuple[int, ...], str, str, int | None, list[int], int | None, int, int]
    ] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.shoe = Shoe(self.rules.decks, self.rules.pontoon, self.rng, 0.75)
        self.shoe_total = [n * self.rules.decks for n in self.count.per_deck]

    # --- the count -------------------------------------------------------------------------

    def see(self, card: int) -> None:
        i = value_index(CODE[card])
        self.seen[i] += 1
        self.running += self.count.tags[i]

    def tc(self, extra_seen: list[int] | None = None) -> float:
        running = self.running
        seen = sum(self.seen)
        for c in extra_seen or ():
            running += self.count.tags[value_index(CODE[c])]
            seen += 1
        return self.count.true_count(running, sum(self.shoe_total) - seen)

    def unseen(self, extra_seen: list[int]) -> tuple[int, ...]:
        out = [t - s for t, s in zip(self.shoe_total, self.seen, strict=True)]
        for c in extra_seen:
            out[value_index(CODE[c])] -= 1
        return tuple(out)

    def round_cards(self) -> list[int]:
        return [_CARD[e["card"]] for e in self.round_log if e["type"] == "card"]

    def shuffle(self) -> None:
        if self.shoe_index:
            dealt = self.shoe.dealt
            self.record.shuffles.append(
                ShuffleRecord(
                    seq=self.seq_base + len(self.events) if self.log_events else 0,
                    shoe=self.shoe_index,
                    true_count=self.tc(),
                    cards_dealt=dealt,
                    cut_card=self.shoe.cut,
                    cut_out=dealt > self.shoe.cut,
                    dealer=self.dealer,
                    at=None,
                )
            )
            self.shoe.shuffle()
        self.shoe_index += 1
        self.seen = [0] * 10
        self.running = 0
        self.emit({"type": "shuffle", "decks": self.rules.decks, "cut_card": self.shoe.cut})

    def emit(self, event: dict[str, Any]) -> None:
        if self.log_events:
            self.events.append(event)


class Choices:
    """The oracle's off-strategy hook, answering for each box's player."""

    def __init__(self, table: Table) -> None:
        self.t = table

    def _who(self, box: int) -> Behaviour:
        return self.t.studied if box == 1 else self.t.filler

    # The cards of the round so far, less the hole card (not yet seen).
    def _seen_now(self) -> tuple[list[int], int | None, int]:
        cards = self.t.round_cards()
        n = self.t.n_boxes
        up = cards[n]
        hole = None
        if not self.t.rules.pontoon and len(cards) > 2 * n + 1:
            hole = cards[2 * n + 1]
            cards = cards[: 2 * n + 1] + cards[2 * n + 2 :]
        return cards, hole, up

    def insure(self, stake: Stake, most: int) -> int:
        b = self.t.studied if stake.player == PLAYER else self.t.filler
        if b.kind.endswith("-index") and most >= 100:
            seen, hole, up = self._seen_now()
            tc = self.t.tc(seen)
            if tc >= 3.0:
                n = self.t.n_boxes
                cards = self.t.round_cards()
                i = 0  # the studied player's box is the first dealt
                self.t.pending.append(
                    (
                        stake.player,
                        1,
                        (cards[i], cards[n + 1 + i]),
                        "insurance",
                        "no insurance",
                        None,
                        seen,
                        hole,
                        up,
                        len(self.t.shoe.cards),
                    )
                )
                return most - most % 100
        return 0

    def surrender(self, hand: Hand) -> bool:
        return False

    def move(self, hand: Hand, legal: list[str], advised: str) -> str:
        t = self.t
        b = self._who(hand.box)
        seen, hole, up = self._seen_now()
        nxt = t.shoe.cards[-1] if t.shoe.cards else None
        action = advised
        k = b.kind
        knows = 0.0
        if k.startswith("knower"):
            knows = 0.05 if k == "knower-5" else 0.02
        elif k == "favoured" and t.dealer == "D2":
            knows = 0.20
        if knows and nxt is not None and b.rng.random() < knows:
            action = _informed(hand, legal, advised, nxt, t.rules.pontoon)
        elif k in ("hunch", "sloppy") and b.rng.random() < 0.03:
            action = b.rng.choice(legal)
        elif k.endswith("-index"):
            total = _total(hand.cards)
            soft = hand.hard <= 11 and hand.aces > 0
            rule = None if soft else INDEX_PLAYS.get((total, VALUE[up]))
            if rule is not None:
                play, at = rule
                tc = t.tc(seen)
                if tc >= at and play in legal:
                    action = play
                elif tc < at and advised == play:
                    action = M_HIT
        player = PLAYER if hand.box == 1 else FILLER
        t.pending.append(
            (
                player,
                hand.box,
                tuple(hand.cards),
                action,
                advised,
                nxt,
                seen,
                hole,
                up,
                len(t.shoe.cards),
            )
        )
        return action

    def double_amount(self, stake: Stake, controller: bool, equal: bool) -> int:
        return stake.orig

    def follow_split(self, stake: Stake) -> bool:
        return False

    def rescue(self, stake: Stake, controller: bool, advised: bool) -> bool:
        return advised

    def say_hit(self) -> bool:
        return False


def _informed(hand: Hand, legal: list[str], advised: str, nxt: int, pontoon: bool) -> str:
    """What a player who knows the next card does."""
    before = _total(hand.cards)
    after = _total([*hand.cards, nxt])
    if after > 21:
        return M_STAND if advised != M_STAND else advised
    if advised == M_DOUBLE and after < 17:
        return M_HIT
    if advised == M_STAND and before <= 16 and after >= 17:
        return M_HIT
    if advised == M_HIT and M_DOUBLE in legal and after >= 18:
        return M_DOUBLE
    return advised


def play_session(
    game: str, kind: str, rounds: int, seed: str, *, events: bool = False
) -> tuple[TableRecord, list[dict[str, Any]]]:
    """One table session of ``rounds`` rounds with a player of ``kind`` on box 1."""
    rules = GAMES[game]
    count = count_system(game, "T" if rules.pontoon else "")
    strategy = load(shipped(game), rules.pontoon)
    rng = random.Random(f"protect-population/{game}/{kind}/{seed}")
    record = TableRecord(table_id="SIM", game=game, count=count, hole_card=not rules.pontoon)
    t = Table(
        rules=rules,
        count=count,
        rng=rng,
        studied=Behaviour(kind, random.Random(rng.random())),
        filler=Behaviour("flat", random.Random(rng.random())),
        log_events=events,
        record=record,
    )
    line = table_line(rules)
    line["table_id"] = "SIM"
    line["boxes"] = 7
    line["max_bet"] = 1000
    t.emit(line)
    t.emit({"type": "dealer", "dealer": t.dealer})
    t.shuffle()
    choices = Choices(t)
    for n in range(rounds):
        if n and n % DEALER_ROUNDS == 0:
            t.dealer = DEALERS[(n // DEALER_ROUNDS) % len(DEALERS)]
            t.emit({"type": "dealer", "dealer": t.dealer})
        tc = t.tc()
        units = t.studied.bet(tc)
        boxes: list[tuple[int, list[tuple[str, int]]]] = []
        if units:
            boxes.append((1, [(PLAYER, units * UNIT)]))
        boxes.append((2, [(FILLER, 2 * UNIT)]))
        t.n_boxes = len(boxes)
        t.round_log = []
        t.pending = []
        start_seq = len(t.events)
        result = play_round(rules, strategy, t.shoe, boxes, choices, t.round_log)
        t.round_number += 1
        at = START + timedelta(minutes=n)
        if events:
            first = dict(t.round_log[0])
            first["time"] = at.isoformat()
            t.round_log[0] = first
            t.events.extend(t.round_log)
        shuffle = t.shoe.due_for_shuffle() or rng.random() < EARLY_SHUFFLE
        # A card that did not come out before a shuffle or the end of the record is unknown.
        _record_round(t, result, boxes, tc, start_seq, at, shuffle or n == rounds - 1)
        for c in t.round_cards():
            t.see(c)
        if shuffle:
            t.shuffle()
    return record, t.events


def _record_round(
    t: Table,
    result: Any,
    boxes: list[tuple[int, list[tuple[str, int]]]],
    tc: float,
    start_seq: int,
    at: datetime,
    shuffle: bool,
) -> None:
    nets: dict[str, int] = {}
    for player, _box, _hand, _kind, cents in result.rows:
        nets[player] = nets.get(player, 0) + cents
    rnd = RoundRecord(
        round=t.round_number,
        status="settled",
        shoe=t.shoe_index,
        true_count=tc,
        cards_dealt=sum(t.seen),
        cut_out=False,
        dealer=t.dealer,
        seq_first=start_seq,
        seq_last=len(t.events) - 1,
        start=at,
        end=at,
    )
    for box, seats in boxes:
        for player, cents in seats:
            net = nets.get(player, 0)
            rnd.players.append(
                PlayerRound(player, Decimal(cents) / 100, Decimal(net) / 100, (box,))
            )
            if player == PLAYER:
                t.studied.settle(net)
    t.record.rounds.append(rnd)
    left = len(t.shoe.cards)
    for player, box, cards, action, advised, nxt, seen, hole, up, remaining in t.pending:
        if shuffle and remaining == left:
            nxt = None  # that card never came out: the shoe was shuffled first
        t.record.decisions.append(
            Decision(
                round=t.round_number,
                seq=0,
                player=player,
                box=box,
                hand=0,
                cards=tuple(CODE[c] for c in cards),
                up=CODE[up],
                action=action,
                advised=advised,
                next_card=CODE[nxt] if nxt is not None else None,
                hole=CODE[hole] if hole is not None else None,
                true_count=t.tc(seen),
                unseen=t.unseen(seen),
                dealer=t.dealer,
            )
        )
