"""The oracle's rounds written as a scenario, with the oracle's expected results.

Each round seats 1-4 boxes of boxes 1-7, each with its controller and up to two back-bettors,
wagers of $5-$300. The controller plays the strategy table; with `wild` > 0 a share of the
decisions is any other legal one (hit, stand, double, split; an insurance, a surrender, a
partial double, a rescue against the table), and back-bettors choose at random whether to
follow a double (for a random amount up to their own wager in Pontoon, the same wager in
blackjack) or a split, and whether to rescue. With `boost` > 0 a share of the rounds is dealt
from a shoe whose next cards were moved to the front (the shoe stays a genuine shoe) to make
a case the rules single out: a Super Bonus, a rescued tie, a double or a rescue against a
dealer pontoon, pontoon against pontoon, a 5-, 6-, 7-card 21, a suited 6-7-8, split aces, a
dealer blackjack under a peek.

Every event is legal play by the oracle's reading of the rule book, so floorctl should raise no
flags; every insurance, surrender, double, split and rescue the oracle makes is announced the
way the event reference says (insurance offered on an ace up, surrender offered to each Pontoon box
before its first decision, a `peek` after insurance in the generic blackjack).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from .cards import CODE, Shoe, parse
from .game import M_DOUBLE, M_HIT, M_SPLIT, M_STAND, Box, Hand, Round, Row, Rules, Stake, stands_off
from .game import play_round as _play
from .strategy import Strategy

WAGERS = (5, 5, 7, 10, 10, 10, 13, 20, 25, 25, 30, 55, 100, 300)


@dataclass
class Expected:
    """What the oracle says one round ends with."""

    rows: list[Row]
    dealer: list[str]
    hands: list[tuple[int, int, list[str]]]  # box, hand, cards
    events: list[dict[str, object]]  # the round's own events, bets to last card
    template: str | None
    totals: dict[tuple[int, int], int] = field(default_factory=dict)  # (box, hand): total
    rescued: set[tuple[str, int, int]] = field(default_factory=set)  # player, box, hand
    dealer_total: int = 0
    dealer_natural: bool = False


class Wild:
    """Off-strategy legal choices (the `Choices` of `game`), drawn from a seeded rng."""

    def __init__(self, rng: random.Random, rate: float) -> None:
        self.rng = rng
        self.rate = rate

    def _dollars(self, most_cents: int) -> int:
        return self.rng.randint(1, max(most_cents // 100, 1)) * 100

    def insure(self, stake: Stake, most: int) -> int:
        if most < 100 or self.rng.random() >= self.rate:
            return 0
        return self._dollars(most)

    def surrender(self, hand: Hand) -> bool:
        return self.rng.random() < self.rate / 3

    def move(self, hand: Hand, legal: list[str], advised: str) -> str:
        if self.rng.random() < self.rate:
            return self.rng.choice(legal)
        return advised

    def double_amount(self, stake: Stake, controller: bool, equal: bool) -> int:
        if controller:
            if equal or self.rng.random() >= self.rate:
                return stake.orig
            return self._dollars(stake.orig)
        choice = self.rng.random()
        if choice < 0.4:
            return 0
        if equal or choice < 0.7:
            return stake.orig
        return self._dollars(stake.orig)

    def follow_split(self, stake: Stake) -> bool:
        return self.rng.random() < 0.6

    def rescue(self, stake: Stake, controller: bool, advised: bool) -> bool:
        if controller:
            return advised != (self.rng.random() < self.rate)
        return self.rng.random() < 0.5

    def say_hit(self) -> bool:
        return self.rng.random() < 0.1


# Templates: the next cards of a round for its first box, in dealing order (box, up, box, then
# the box's draws and the dealer's), "?" for any card; written for the strategy tables' plays.
# A template whose cards go past the box's own draws (it fixes the dealer's second card) is
# dealt to one box; the others ("*" in front of the name) to a table of 1-4 boxes, the first
# box's cards placed where the deal puts them.
PONTOON_TEMPLATES: dict[str, list[str]] = {
    "*super_bonus": ["7H", "7C", "7H", "7H"],  # suited 7-7 v 7: hit (chase), 7-7-7 + $1,000
    "*super_bonus_spades": ["7S", "7D", "7S", "7S"],  # others on the table: $50 (11.3)
    "rescue_tie": ["6D", "AS", "5C", "6H", "6S"],  # 11 v A, double, 17, rescue; dealer 17
    "rescue_v_pontoon": ["6D", "AS", "5C", "6H", "KS"],
    "rescue_dealer_stops": ["5D", "8S", "5C", "3H", "6C", "9D"],  # 10 v 8: 13 rescued; 14
    "double_v_pontoon": ["5D", "AH", "6C", "9S", "QH"],  # 20 kept; dealer pontoon: -original
    "pontoon_v_pontoon": ["AD", "AH", "KC", "JS"],
    "*six_seven_eight_suited": ["6H", "9C", "7H", "8H"],
    "*six_seven_eight_spades": ["6S", "9C", "7S", "8S"],
    "*five_card_21": ["2C", "9D", "3C", "4H", "5S", "7D"],
    "*six_card_21": ["2C", "9D", "2D", "2H", "3S", "3D", "9H"],
    "*seven_card_21": ["2C", "9D", "2D", "2H", "3S", "3D", "4C", "5H"],
    "split_aces": ["AC", "5D", "AH", "KS", "QD"],
    "split_and_double": ["8C", "6D", "8H", "3S", "7D"],  # 8-8 v 6: split, 11: double
}
# Blackjack deals the hole card fourth: box, up, box, hole, then the box's draws.
BLACKJACK_TEMPLATES: dict[str, list[str]] = {
    "dealer_blackjack_ace": ["9C", "AH", "8D", "KS"],
    "dealer_blackjack_ten": ["AC", "QH", "KD", "AS"],  # blackjack v blackjack: push
    "split_aces": ["AC", "6D", "AH", "9D", "KS", "QD"],  # two 21s, not blackjacks
    "double_11": ["5C", "6D", "6H", "TS", "9C"],
    "split_and_double": ["8C", "6D", "8H", "TS", "3S", "7D"],
}


def _placed(cards: list[str], boxes: int) -> list[int | None]:
    """A Pontoon template's cards at their places in the deal of `boxes` boxes."""
    wanted: list[int | None] = [None] * (2 * boxes + 1 + len(cards) - 3)
    places = [0, boxes, boxes + 1] + [2 * boxes + 1 + j for j in range(len(cards) - 3)]
    for place, code in zip(places, cards, strict=True):
        wanted[place] = None if code == "?" else parse(code)
    return wanted


def _round_table(rng: random.Random) -> list[Box]:
    count = rng.choice((1, 1, 2, 3, 4))
    boxes = sorted(rng.sample(range(1, 8), count))
    table: list[Box] = []
    for box in boxes:
        seats = [(f"p{box}", rng.choice(WAGERS) * 100)]
        for j in range(rng.choice((0, 0, 0, 1, 2))):
            seats.append((f"b{box}{'xy'[j]}", rng.choice(WAGERS) * 100))
        table.append((box, seats))
    return table


def _expected(
    rules: Rules, result: Round, events: list[dict[str, object]], template: str | None
) -> Expected:
    per_box: dict[int, int] = {}
    exp = Expected(
        rows=list(result.rows),
        dealer=[CODE[c] for c in result.dealer],
        hands=[],
        events=events,
        template=template,
        dealer_total=result.dealer_total,
        dealer_natural=result.dealer_natural,
    )
    for hand in result.hands:
        k = per_box.get(hand.box, 0)
        per_box[hand.box] = k + 1
        exp.hands.append((hand.box, k, [CODE[c] for c in hand.cards]))
        exp.totals[(hand.box, k)] = hand.total(rules.pontoon)
        exp.rescued.update((s.player, hand.box, k) for s in hand.stakes if s.rescued)
    return exp


def table_line(rules: Rules) -> dict[str, object]:
    return {
        "type": "table",
        "game": rules.game,
        "table_id": "ORACLE",
        "boxes": 7,
        "decks": rules.decks,
        "min_bet": 5,
        "max_bet": 1000,
        "rules": {},
    }


def generate(
    rules: Rules,
    strategy: Strategy,
    rounds: int,
    seed: str,
    wild: float = 0.1,
    boost: float = 0.05,
    penetration: float = 0.75,
) -> tuple[list[dict[str, object]], list[Expected]]:
    """A scenario of `rounds` rounds and the oracle's expectation for each."""
    rng = random.Random(f"oracle-scenario/{rules.game}/{seed}")
    shoe = Shoe(rules.decks, rules.pontoon, rng, penetration)
    choices = Wild(rng, wild)
    templates = PONTOON_TEMPLATES if rules.pontoon else BLACKJACK_TEMPLATES
    names = sorted(templates)
    events: list[dict[str, object]] = [table_line(rules), _shuffle(shoe)]
    expected: list[Expected] = []
    for _ in range(rounds):
        template = None
        table = _round_table(rng)
        if rng.random() < boost:
            name = rng.choice(names)
            if not name.startswith("*"):
                table = table[:1]
            wanted = _placed(templates[name], len(table)) if rules.pontoon else None
            if wanted is None:
                wanted = [None if c == "?" else parse(c) for c in templates[name]]
            if shoe.size - shoe.dealt > 60 and shoe.bring_to_front(wanted):
                template = name.lstrip("*")
        log: list[dict[str, object]] = []
        result = _play(rules, strategy, shoe, table, choices, log)
        events.extend(log)
        expected.append(_expected(rules, result, log, template))
        if shoe.due_for_shuffle():
            shoe.shuffle()
            events.append(_shuffle(shoe))
    return events, expected


def _shuffle(shoe: Shoe) -> dict[str, object]:
    return {"type": "shuffle", "decks": shoe.decks, "cut_card": shoe.cut}


def write(path: Path, events: list[dict[str, object]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event) + "\n")


def one_round(rules: Rules, exp: Expected) -> list[dict[str, object]]:
    """A standalone scenario of one round (a fresh shoe, no cutting card event)."""
    body = [e for e in exp.events if e["type"] != "cut_card"]
    size = rules.decks * (48 if rules.pontoon else 52)
    return [
        table_line(rules),
        {"type": "shuffle", "decks": rules.decks, "cut_card": size - 20},
        *body,
    ]


__all__ = ["M_DOUBLE", "M_HIT", "M_SPLIT", "M_STAND", "Expected", "generate", "one_round", "write"]


def coverage(events: list[dict[str, object]], expected: list[Expected]) -> dict[str, int]:
    """How often the scenario exercises each case the rules single out (for the test to
    insist on, and for the report)."""
    counts: dict[str, int] = {}

    def bump(key: str, n: int = 1) -> None:
        counts[key] = counts.get(key, 0) + n

    for e in events:
        kind = str(e["type"])
        if kind in ("insurance", "surrender", "rescue", "hit", "cut_card", "shuffle"):
            bump(kind)
        elif kind == "split":
            bump("split by a back-bettor" if "player" in e else "split")
        elif kind == "double":
            bump("double by a back-bettor" if str(e["player"])[0] == "b" else "double")
    for exp in expected:
        for _player, _box, hand, kind, _net in exp.rows:
            if kind != "hand":
                bump(f"{kind} row")
            if hand == 2:
                bump("third hand on a box")
        if exp.template:
            bump(f"template {exp.template}")
        for _player, box, hand in exp.rescued:
            if stands_off(exp.totals[(box, hand)], exp.dealer_total, exp.dealer_natural):
                bump("rescued tie")
        if len(exp.dealer) == 2 and exp.dealer_total < 17:
            bump("dealer stopped under 17")
        if exp.dealer_total > 21:
            bump("dealer bust")
    return counts
