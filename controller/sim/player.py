"""Drive the live table's engine through whole rounds: the simulator's dealer and player.

:class:`RoundPlayer` owns a :class:`controller.engine.Table` and a seeded :class:`SimShoe`. Each
round it plays both sides of the table through the engine's public API only:

* as the **dealer** it loads and shuffles the shoe, takes the bet, closes betting, makes the
  announcements the engine's open decisions call for (insurance, surrender offers, the
  hole-card check), reports the cutting card and deals the next card out of the shoe whenever
  the engine is due one (``table.next_card()``);
* as the **player** it answers each decision ``table.open_decisions()`` opens for its box with
  the strategy table (:mod:`controller.sim.strategy`), choosing only among those decisions.

It reads the same typed decisions the dealer's screen shows (``Table.due()`` is built from
them); it never decides who gets a card, what a hand is worth to the house or whether a move
is legal: that is the engine's, so the figures measure the same rules the live table enforces.
Any flag the engine raises means the simulator broke a rule; it is counted and reported.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal
from typing import Final

from controller.cards import ALL_CODES
from controller.engine import Decision, Kind, Role, RoundResult, Table
from controller.engine.decisions import SCREEN_KINDS
from controller.engine.results import HAND, SUPER_BONUS
from controller.events import Event, parse_event, parse_setup
from controller.sim.runner import SimConfig
from controller.sim.shoe import SimShoe
from controller.sim.stats import Tally
from controller.sim.strategy import Strategy, load_strategy

# Three-card hands by their sorted ranks, counted by suit class as 11.1 pays them.
THREE_CARD_SHAPES: Final = {"678": "six_seven_eight", "777": "seven_seven_seven"}


def suit_class(cards: list[str]) -> str:
    """11.1's three suit classes: "mixed", "suited" (one suit, not spades) or "spades"."""
    suits = {c[1] for c in cards}
    if len(suits) > 1:
        return "mixed"
    return "spades" if suits == {"S"} else "suited"


BOX: Final = 1
PLAYER: Final = "sim"
PLAY_ACTIONS: Final = frozenset({Kind.STAND, Kind.HIT, Kind.DOUBLE, Kind.SPLIT, Kind.SURRENDER})
OFFER_INSURANCE: Final[Kind] = Kind.OFFER_INSURANCE
OFFER_SURRENDER: Final[Kind] = Kind.OFFER_SURRENDER
PEEK: Final[Kind] = Kind.PEEK
SHUFFLE: Final[Kind] = Kind.SHUFFLE
INSURANCE: Final[Kind] = Kind.INSURANCE
RESCUE: Final[Kind] = Kind.RESCUE
SUPERVISOR: Final[Role] = Role.SUPERVISOR
MAX_STEPS: Final = 400  # events in one round; far beyond any legal round


class SimulationError(Exception):
    """The engine and the simulator disagree about what is due: a defect, not a rule breach."""


class RoundPlayer:
    def __init__(self, config: SimConfig, seed: str, strategy: Strategy | None = None) -> None:
        self.config = config
        self.setup = parse_setup(
            {
                "type": "table",
                "game": config.game,
                "table_id": "SIM",
                "boxes": 7,
                "min_bet": str(config.bet),
                "max_bet": str(config.bet),
                "rules": config.rules(),
            }
        )
        self.rules = self.setup.rules
        # The simulator reads each round's result as it ends: the table keeps only the last.
        self.table = Table(self.setup, keep_rounds=1)
        self.strategy: Strategy = strategy or load_strategy(config.strategy_path)
        self.shoe = SimShoe(
            random.Random(seed), self.rules.decks, self.rules.excluded_ranks, config.penetration
        )
        self.bet = config.bet
        # Events that never change, parsed once through the public parser.
        self._card_events = {
            card: parse_event({"type": "card", "card": card}) for card in ALL_CODES
        }
        self._bet = parse_event(
            {"type": "bet", "box": BOX, "player": PLAYER, "amount": str(self.bet)}
        )
        self._no_more_bets = parse_event({"type": "no_more_bets"})
        self._stand = parse_event({"type": "stand", "box": BOX})
        self._split = parse_event({"type": "split", "box": BOX})
        self._surrender = parse_event({"type": "surrender", "box": BOX})
        self._offer_surrender = parse_event({"type": "offer_surrender", "box": BOX})
        self._offer_insurance = parse_event({"type": "offer_insurance"})
        self._peek = parse_event({"type": "peek"})
        self._cut_card = parse_event({"type": "cut_card"})
        self._rescue = parse_event({"type": "rescue", "box": BOX, "player": PLAYER})
        self._double = parse_event(
            {"type": "double", "box": BOX, "player": PLAYER, "amount": str(self.bet)}
        )
        self._insure = parse_event(
            {"type": "insurance", "box": BOX, "player": PLAYER, "amount": str(self.bet / 2)}
        )
        self.tally = Tally()
        self._shuffle_due = True
        self._settled: RoundResult | None = None
        # Per-round driver state.
        self._rescued: set[int] = set()  # the hands (by index) this round's player rescued
        self._insured = 0

    @property
    def shuffle_due(self) -> bool:
        """The next round starts with a freshly shuffled shoe."""
        return self._shuffle_due

    # --- events ---------------------------------------------------------------------------

    def _apply(self, ev: Event) -> None:
        applied = self.table.apply(ev)
        if applied.flags:
            for flag in applied.flags:
                self.tally.add_flag(f"round {flag.round}: {flag.rule}: {flag.message}")
        if applied.settled is not None:
            self._settled = applied.settled

    def _deal(self) -> None:
        """The next card out of the shoe (the cutting card first if it is next)."""
        shoe = self.shoe
        if shoe.at_cut_card:
            self._apply(self._cut_card)
            shoe.cut_out = True
            self._shuffle_due = True
        if shoe.empty:
            self._apply(parse_event(shoe.reshuffle_discards()))
            self._shuffle_due = True
        self._apply(self._card_events[shoe.draw()])

    # --- rounds ---------------------------------------------------------------------------

    def play(self, rounds: int, tick: Callable[[int], None] | None = None) -> Tally:
        for i in range(1, rounds + 1):
            self.play_round()
            if tick is not None and i % 500 == 0:
                tick(i)
        self.tally.shuffles = self.shoe.shuffles
        return self.tally

    def play_round(self) -> RoundResult:
        table = self.table
        if self._shuffle_due:
            self._apply(parse_event(self.shoe.shuffle()))
            self._shuffle_due = False
        self._begin_round()
        self._apply(self._bet)
        self._apply(self._no_more_bets)
        offered_insurance = offered_surrender = False
        considered: set[tuple[str, int, int]] = set()
        open_decisions = table.open_decisions
        for _ in range(MAX_STEPS):
            if self._settled is not None:
                break
            mine: list[Decision] | None = None
            peek = False
            announce: Event | None = None
            for d in open_decisions():
                kind = d.kind
                if d.by is SUPERVISOR:
                    continue
                if kind is OFFER_INSURANCE:
                    if not offered_insurance and announce is None:
                        offered_insurance = True
                        announce = self._offer_insurance
                elif kind is OFFER_SURRENDER:
                    if not offered_surrender and announce is None:
                        offered_surrender = True
                        announce = self._offer_surrender
                elif kind is PEEK:
                    peek = True
                elif d.box == BOX and kind in SCREEN_KINDS:
                    if mine is None:
                        mine = [d]
                    else:
                        mine.append(d)
            if announce is not None:
                self._apply(announce)
                continue
            if mine is not None and self._decide(mine, considered):
                continue
            if peek:
                self._apply(self._peek)
                continue
            if table.next_card() is not None:
                self._deal()
                continue
            raise SimulationError(
                f"nothing to do in round {table.due().round}: due = {table.due().to_dict()!r}"
            )
        else:
            raise SimulationError(f"round did not end within {MAX_STEPS} steps")
        result = self._settled
        assert result is not None
        if any(d.kind is SHUFFLE for d in open_decisions()):
            self._shuffle_due = True  # the engine says a shuffle is due before the next round
        if self.shoe.at_cut_card:
            # The cutting card is next out of the shoe: it comes out now, and the dealer
            # shuffles before the next round (never deals a round past it, 16.9).
            self._apply(self._cut_card)
            self.shoe.cut_out = True
            self._shuffle_due = True
        self._record(result)
        return result

    def _begin_round(self) -> None:
        # Reset in a method of its own: mypyc would take _settled, set to None here, for None
        # all through play_round.
        self.shoe.start_round()
        self._settled = None
        self._rescued = set()
        self._insured = 0

    def _decide(self, decisions: list[Decision], considered: set[tuple[str, int, int]]) -> bool:
        """Answer the decisions open for the box; False when none needs an answer now."""
        table = self.table
        actions = {d.kind for d in decisions}
        up = table.dealer_up()
        if INSURANCE in actions and ("insurance", 0, 0) not in considered:
            considered.add(("insurance", 0, 0))
            if self.strategy.insurance:
                self._insured += 1
                self._apply(self._insure)
                return True
        if RESCUE in actions:
            rescue = next(d for d in decisions if d.kind is RESCUE)
            idx = rescue.hand or 0
            hand = table.hand(BOX, idx)
            key = ("rescue", idx, len(hand.cards))
            if key not in considered:
                considered.add(key)
                if up is not None and self.strategy.rescues(hand.best, up):
                    self._rescued.add(idx)
                    self._apply(self._rescue)
                    return True
        hand_idx = next((d.hand or 0 for d in decisions if d.kind in PLAY_ACTIONS), None)
        if hand_idx is None or up is None:
            return False
        cards = table.hand(BOX, hand_idx).cards
        action = self.strategy.decide(cards, up, actions & PLAY_ACTIONS)
        if action == "hit":
            self._deal()
        elif action == "stand":
            self._apply(self._stand)
        elif action == "double":
            self._apply(self._double)
        elif action == "split":
            self._apply(self._split)
        elif action == "surrender":
            self._apply(self._surrender)
        else:  # pragma: no cover - decide() returns only the actions above
            raise SimulationError(f"strategy chose {action!r}")
        return True

    # --- the tally -------------------------------------------------------------------------

    def _record(self, result: RoundResult) -> None:
        tally = self.tally
        counts = tally.counts
        net = Decimal(0)
        staked = Decimal(0)
        hands = result.hands
        for s in result.settlements:
            if s.player != PLAYER:
                continue
            row_net = s.returned - s.staked
            net += row_net
            staked += s.staked
            if s.kind is HAND:  # what the money on the hand did
                if s.hand in self._rescued:
                    counts["rescued"] += 1
                    if hands[s.hand]["outcome"] == "push":
                        counts["rescued_tie"] += 1
                elif hands[s.hand]["outcome"] == "surrender":
                    counts["surrendered"] += 1
                elif row_net > 0:
                    counts["won"] += 1
                elif row_net < 0:
                    counts["lost"] += 1
                else:
                    counts["pushed"] += 1
            elif s.kind is SUPER_BONUS:
                counts["super_bonus"] += 1
        tally.add_round(net, self.bet, staked)
        tally.hands += len(hands)
        split = len(hands) > 1
        counts["split"] += len(hands) - 1
        for h in hands:
            cards = h["cards"]
            n = len(cards)
            total = h["total"]
            if h["doubled"]:
                counts["double"] += 1
            outcome = h["outcome"]
            if outcome in ("win", "lose", "push", "surrender"):
                counts[outcome] += 1
            if total == 21:
                if n == 2 and not split:
                    counts["natural"] += 1
                elif n == 5:
                    counts["five_card_21"] += 1
                elif n == 6:
                    counts["six_card_21"] += 1
                elif n >= 7:
                    counts["seven_plus_card_21"] += 1
            if n == 3:
                shape = THREE_CARD_SHAPES.get("".join(sorted(c[0] for c in cards)))
                if shape is not None:
                    counts[shape] += 1
                    counts[f"{shape}_{suit_class(cards)}"] += 1
        dealer = result.dealer
        if result.dealer_total > 21:
            counts["dealer_bust"] += 1
        if len(dealer) == 2 and result.dealer_total == 21:
            counts["dealer_natural"] += 1
        counts["rescue"] += len(self._rescued)
        counts["insurance"] += self._insured
