"""Many rounds of one box and one player through the oracle, tallied like `floorctl simulate`.

House edge = -(mean net per round) / initial wager; its standard error = the per-round standard
deviation of net / wager, over sqrt(rounds). Frequencies are per round. For each card-count and
three-card category two counts are kept: `made` (a hand of that shape, whatever it was paid)
and `paid` (a winning wager paid at that category's 11.1 odds: not doubled).

    python -m benchmarks.oracle.simulate --game pontoon-nz-2000 --rounds 100000 --seed 1
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .cards import Shoe
from .game import GAMES, Hand, Round, Rules, play_round, stands_off
from .strategy import Strategy, load, shipped

CATEGORIES = (
    "natural",
    "five_card_21",
    "six_card_21",
    "seven_plus_card_21",
    "six_seven_eight",
    "six_seven_eight_mixed",
    "six_seven_eight_suited",
    "six_seven_eight_spades",
    "seven_seven_seven",
    "seven_seven_seven_mixed",
    "seven_seven_seven_suited",
    "seven_seven_seven_spades",
    "super_bonus",
    "double",
    "rescue",
    "split",
    "dealer_bust",
    "dealer_natural",
    "hand_won",
    "hand_lost",
    "hand_pushed",
    "hand_rescued",
    "rescued_tie",
)
_THREE = {"678": "six_seven_eight", "777": "seven_seven_seven"}
_CARDS21 = {5: "five_card_21", 6: "six_card_21"}


@dataclass
class Tally:
    game: str
    bet: int  # cents
    rounds: int = 0
    hands: int = 0
    net: int = 0  # cents
    net_sq: int = 0
    made: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    made_sq: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    paid: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    rescued_tie_cents: int = 0  # originals lost on rescued hands that stand off (5.1(e))
    shuffles: int = 0
    seconds: float = 0.0

    def house_edge(self) -> float:
        return -self.net / self.rounds / self.bet

    def standard_error(self) -> float:
        n = self.rounds
        mean = self.net / n
        var = (self.net_sq / n - mean * mean) * n / (n - 1)
        return math.sqrt(max(var, 0.0) / n) / self.bet

    def house_edge_paying_rescued_ties(self) -> float:
        """The edge if a rescued hand that ties the dealer got its whole stake back, as
        floorctl settled it before issue 18 was fixed: for comparison only."""
        return -(self.net + self.rescued_tie_cents) / self.rounds / self.bet

    def per_round(self, key: str, paid: bool = False) -> float:
        return (self.paid if paid else self.made)[key] / self.rounds

    def per_round_variance(self, key: str) -> float:
        """Variance of the per-round count of `key` (for the standard error of its rate)."""
        n = self.rounds
        mean = self.made[key] / n
        return max(self.made_sq[key] / n - mean * mean, 0.0)


def _keys(result: Round, pontoon: bool) -> tuple[list[str], list[str]]:
    """The categories this round made and paid, once per occurrence."""
    made: list[str] = []
    paid: list[str] = []
    if result.dealer_total > 21:
        made.append("dealer_bust")
    if result.dealer_natural:
        made.append("dealer_natural")
    boxes_seen: set[int] = set()
    for hand in result.hands:
        if hand.box not in boxes_seen:
            boxes_seen.add(hand.box)
        else:
            made.append("split")
        _hand_keys(hand, pontoon, made, paid)
        if hand.stakes[0].rescued and stands_off(
            hand.total(pontoon), result.dealer_total, result.dealer_natural
        ):
            made.append("rescued_tie")
    for row in result.rows:
        if row[3] == "super_bonus":
            made.append("super_bonus")
            paid.append("super_bonus")
    return made, paid


def _hand_keys(hand: Hand, pontoon: bool, made: list[str], paid: list[str]) -> None:
    controller = hand.stakes[0]
    if hand.natural:
        made.append("natural")
    if hand.doubled:
        made.append("double")
    if controller.rescued:
        made.append("rescue")
        made.append("hand_rescued")
    elif controller.net > 0:
        made.append("hand_won")
    elif controller.net < 0:
        made.append("hand_lost")
    else:
        made.append("hand_pushed")
    total = hand.total(pontoon)
    if total != 21 or not pontoon:
        return
    n = len(hand.cards)
    key = None
    if n >= 7:
        key = "seven_plus_card_21"
    elif n in _CARDS21:
        key = _CARDS21[n]
    else:
        shape = hand.three_card_class()
        if shape is not None:
            base = _THREE[shape[0]]
            made.append(base)
            key = f"{base}_{shape[1]}"
    if key is None:
        return
    made.append(key)
    if not controller.dbl and controller.net > 0:  # won, at the 11.1 odds (12.5)
        paid.append(key)
        if key.startswith("six_seven") or key.startswith("seven_seven"):
            paid.append(key.rsplit("_", 1)[0])


def run(
    rules: Rules,
    strategy: Strategy,
    rounds: int,
    seed: str,
    bet: int = 1000,
    penetration: float = 0.75,
    progress: Callable[[int], None] | None = None,
) -> Tally:
    """Play `rounds` rounds of one box ($`bet` cents, player "p1") from a seeded shoe."""
    rng = random.Random(f"oracle/{rules.game}/{seed}")
    shoe = Shoe(rules.decks, rules.pontoon, rng, penetration)
    tally = Tally(rules.game, bet)
    boxes = [(1, [("p1", bet)])]
    made, made_sq, paid = tally.made, tally.made_sq, tally.paid
    pontoon = rules.pontoon
    net_sum = net_sq = hands = 0
    start = time.perf_counter()
    for r in range(rounds):
        result = play_round(rules, strategy, shoe, boxes)
        if shoe.due_for_shuffle():
            shoe.shuffle()
        net = 0
        for row in result.rows:
            net += row[4]
        net_sum += net
        net_sq += net * net
        hands += len(result.hands)
        keys_made, keys_paid = _keys(result, pontoon)
        if keys_made:
            if "rescued_tie" in keys_made:
                tally.rescued_tie_cents += sum(
                    h.stakes[0].orig
                    for h in result.hands
                    if h.stakes[0].rescued
                    and stands_off(h.total(pontoon), result.dealer_total, result.dealer_natural)
                )
            for key in keys_made:
                made[key] += 1
            for key in set(keys_made):
                c = keys_made.count(key)
                made_sq[key] += c * c
        for key in keys_paid:
            paid[key] += 1
        if progress is not None and r % 100_000 == 99_999:
            progress(r + 1)
    tally.rounds = rounds
    tally.hands = hands
    tally.net = net_sum
    tally.net_sq = net_sq
    tally.shuffles = shoe.shuffles
    tally.seconds = time.perf_counter() - start
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(GAMES), required=True)
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--bet", type=int, default=10, help="whole dollars (default 10)")
    parser.add_argument("--strategy", type=Path, default=None)
    args = parser.parse_args(argv)
    rules = GAMES[args.game]
    strategy = load(args.strategy or shipped(rules.game), rules.pontoon)

    def tick(done: int) -> None:
        print(f"  {done:,} rounds", file=sys.stderr, flush=True)

    t = run(rules, strategy, args.rounds, args.seed, bet=args.bet * 100, progress=tick)
    print(
        f"{rules.game}: {t.rounds:,} rounds, house edge {t.house_edge():.4%} "
        f"± {t.standard_error():.4%}, {t.rounds / t.seconds:,.0f} rounds/s"
    )
    for key in CATEGORIES:
        paid = f"   paid {t.per_round(key, paid=True):.6f}" if t.paid[key] else ""
        print(f"  {key:<26} {t.per_round(key):.6f}{paid}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
