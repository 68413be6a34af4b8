"""One round of NZ Pontoon or the generic blackjack, played and settled by the oracle.

Written from docs/reference/rule-book.md (and the Gazette pages it quotes), never from floorctl's
engine. Money is integer cents. What the rule book leaves to reading is read so:

Both games
- The deal: a card to each box in box order, one to the dealer, a second card to each box; in
  the generic blackjack (dealer peeks) then the dealer's hole card. A box's hands are played in
  order; a split hand gets its second card when its turn comes (13.3), and a hand split again
  puts its new hand right after itself.
- A hand stops by itself at 21 or over (no `stand` is needed), and after a double card.
- Split aces get one card each and nothing more; aces are split once; the hand limit is 3 per
  box (Pontoon, 13.4(a)) or 4 (generic blackjack). A two-card 21 on a split hand is an
  ordinary 21 (13.4(c)); the natural (pontoon / blackjack) is the box's first hand's first two
  cards: an ace and a ten-value card.
- A back-bettor who does not follow a split stays on the first hand only; one who follows
  puts his own original wager on the new hand. Each player doubles and rescues for himself.
- The dealer stands on every 17 (soft 17 included) and draws below.

Pontoon (Gazette 2000 No. 50)
- No hole card: the dealer's second card is drawn after every box has played, always; more
  cards only while a hand still depends on his total: one that has not busted, is under 21,
  was not surrendered and carries a wager that was not rescued.
- 5.1: a player pontoon wins (against a dealer pontoon too); otherwise a dealer pontoon beats
  every hand; a player 21 wins against anything but a dealer pontoon; a bust loses at once;
  a dealer bust pays every live hand; equal totals stand off.
- 11.1 odds for a winning wager that was not doubled: pontoon, 5-card 21, 6-7-8 or 7-7-7
  mixed 3:2; 6-card 21, 6-7-8 / 7-7-7 of one suit (not spades) 2:1; 7+-card 21, 6-7-8 / 7-7-7
  all spades 3:1; others 1:1. A split hand earns them too (13.4(c) takes away pontoon only).
- 11.2: a 7-7-7 of one suit, dealer's first card a 7, pays $1,000 on a $2-$24 wager and $5,000
  on $25 or more, on each wager on the hand that was not doubled (12.5, 12.6).
  11.3: then every (player, box) of the round without a Super Bonus winner gets $50, on the
  first hand the player has there.
- 12.1 doubles: a box's first two cards, a split hand's first two (not split aces), any hand
  under 21 of three or more cards; 1 to the original wager (12.3); one card (12.4).
  12.2: once doubled, an ace among the hand's first two cards counts 1.
  12.5: a doubled wager wins 1:1 on both parts. 12.7: against a dealer pontoon only the
  original is lost. 12.8: a rescued wager loses its original and gets its double back,
  whatever the dealer makes: net = -original.
- A busted doubled hand loses both parts (5.1(f): it loses at once, before 12.7 could apply).
- Against a dealer pontoon every split hand loses its original wager (splits are taken).
- 9.5: a surrendered box loses half of each wager, all of it against a dealer pontoon.
- 10: insurance (at most half the wager, not on a pontoon) wins 2:1 when the dealer's second
  card is K, Q or J, else loses.

Generic blackjack (`config/blackjack.toml`)
- 6 decks of 52, peek: with an ace or ten-value up card and a blackjack, the round ends at
  once: a player blackjack pushes, every other hand loses its original wager.
- Blackjack pays 3:2; double any first two cards, after splits too, for the original wager
  exactly; split any two cards of the same value; no surrender; equal totals push, 21 too.
- The dealer draws only while a hand that has not busted and is not a blackjack remains.
- Insurance wins 2:1 when the hole card is ten-valued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from .cards import ACE_RANK, CODE, SEVEN_RANK, SPADES, VALUE, Shoe
from .strategy import (
    BY_TOTAL,
    DOUBLE_OR_HIT,
    DOUBLE_OR_STAND,
    HIT,
    NO_SURRENDER,
    SPLIT,
    STAND,
    Strategy,
    StrategyError,
)

# The controller's moves on a hand.
M_HIT, M_STAND, M_DOUBLE, M_SPLIT = "hit", "stand", "double", "split"


@dataclass(frozen=True)
class Rules:
    """The handful of settings the oracle knows; everything else is the game's own logic."""

    game: str
    pontoon: bool
    decks: int
    max_hands: int
    super_small: int = 100_000  # cents: $1,000 (11.2)
    super_small_min: int = 200
    super_large: int = 500_000
    super_large_min: int = 2_500
    bonus_50: int = 5_000

    @property
    def natural_name(self) -> str:
        return "pontoon" if self.pontoon else "blackjack"


PONTOON = Rules(game="pontoon-nz-2000", pontoon=True, decks=6, max_hands=3)
BLACKJACK = Rules(game="blackjack", pontoon=False, decks=6, max_hands=4)
GAMES = {r.game: r for r in (PONTOON, BLACKJACK)}


class ShoeExhausted(RuntimeError):
    """The round needed more cards than the shoe held (16.7 is not modelled)."""


class Stake:
    """One player's wager on one hand, in cents."""

    __slots__ = ("dbl", "ins", "net", "orig", "player", "rescued")

    def __init__(self, player: str, orig: int) -> None:
        self.player = player
        self.orig = orig
        self.dbl = 0
        self.rescued = False
        self.ins = 0
        self.net = 0  # the hand row's net, once settled


class Hand:
    __slots__ = (
        "aces",
        "box",
        "cards",
        "doubled",
        "hard",
        "natural",
        "split_aces",
        "split_hand",
        "stakes",
        "surrendered",
    )

    def __init__(self, box: int, cards: list[int], stakes: list[Stake]) -> None:
        self.box = box
        self.cards = cards
        self.hard = sum(VALUE[c] for c in cards)
        self.aces = sum(1 for c in cards if c >> 2 == ACE_RANK)
        self.stakes = stakes
        self.doubled = False
        self.natural = False
        self.split_aces = False
        self.split_hand = False
        self.surrendered = False

    def add(self, card: int) -> None:
        self.cards.append(card)
        self.hard += VALUE[card]
        if card >> 2 == ACE_RANK:
            self.aces += 1

    def soft_aces(self, pontoon: bool) -> int:
        """Aces that may count 11: with 12.2, not those of a doubled hand's first two cards."""
        if pontoon and self.doubled:
            return sum(1 for c in self.cards[2:] if c >> 2 == ACE_RANK)
        return self.aces

    def total(self, pontoon: bool) -> int:
        hard = self.hard
        if hard <= 11 and self.aces and self.soft_aces(pontoon):
            return hard + 10
        return hard

    def three_card_class(self) -> tuple[str, str] | None:
        """("678" or "777", "mixed" / "suited" / "spades") for a hand of exactly those cards."""
        if len(self.cards) != 3:
            return None
        ranks = sorted(c >> 2 for c in self.cards)
        if ranks == [5, 6, 7]:
            kind = "678"
        elif ranks == [6, 6, 6]:
            kind = "777"
        else:
            return None
        suits = {c & 3 for c in self.cards}
        if len(suits) > 1:
            return kind, "mixed"
        return kind, "spades" if SPADES in suits else "suited"

    def super_bonus_shape(self) -> bool:
        cards = self.cards
        return (
            len(cards) == 3
            and all(c >> 2 == SEVEN_RANK for c in cards)
            and len({c & 3 for c in cards}) == 1
        )


class Choices(Protocol):
    """Off-strategy decisions for the scenario writer (back-bettors, legal deviations)."""

    def insure(self, stake: Stake, most: int) -> int: ...
    def surrender(self, hand: Hand) -> bool: ...
    def move(self, hand: Hand, legal: list[str], advised: str) -> str: ...
    def double_amount(self, stake: Stake, controller: bool, equal: bool) -> int: ...
    def follow_split(self, stake: Stake) -> bool: ...
    def rescue(self, stake: Stake, controller: bool, advised: bool) -> bool: ...
    def say_hit(self) -> bool: ...


Row = tuple[str, int, int, str, int]  # player, box, hand (per box, from 0), kind, net cents


@dataclass
class Round:
    hands: list[Hand]
    dealer: list[int]
    dealer_total: int
    dealer_natural: bool
    rows: list[Row] = field(default_factory=list)
    super_bonus_wagers: int = 0

    @property
    def dealer_bust(self) -> bool:
        return self.dealer_total > 21


Box = tuple[int, list[tuple[str, int]]]  # box number, [(player, wager in cents)], controller first


class _Play:
    """The state of one round while it is played (one instance per round)."""

    def __init__(
        self,
        rules: Rules,
        strategy: Strategy,
        shoe: Shoe,
        choices: Choices | None,
        log: list[dict[str, object]] | None,
    ) -> None:
        self.rules = rules
        self.pontoon = rules.pontoon
        self.strategy = strategy
        self.shoe = shoe
        self.choices = choices
        self.log = log
        self.behind = shoe.size - shoe.cut  # cards left when the cutting card is next
        # Without a log a card is only `pop()` (an empty shoe raises IndexError, which
        # play_round turns into ShoeExhausted).
        self.draw: Callable[[], int] = shoe.cards.pop if log is None else self._draw_logged

    def _draw_logged(self) -> int:
        cards = self.shoe.cards
        if not cards:
            raise ShoeExhausted("the shoe ran out of cards during a round")
        log = self.log
        assert log is not None
        if len(cards) == self.behind:
            log.append({"type": "cut_card"})
        card = cards.pop()
        log.append({"type": "card", "card": CODE[card]})
        return card

    def emit(self, event: dict[str, object]) -> None:
        if self.log is not None:
            self.log.append(event)


def _natural(a: int, b: int) -> bool:
    return VALUE[a] + VALUE[b] == 11 and (a >> 2 == ACE_RANK or b >> 2 == ACE_RANK)


def _dollars(cents: int) -> int | str:
    return cents // 100 if cents % 100 == 0 else f"{cents // 100}.{cents % 100:02d}"


def play_round(
    rules: Rules,
    strategy: Strategy,
    shoe: Shoe,
    boxes: list[Box],
    choices: Choices | None = None,
    log: list[dict[str, object]] | None = None,
) -> Round:
    """Deal, play and settle one round. `boxes` in box order; with `log`, append the round's
    events (bets to the last dealer card) in the event vocabulary (docs/reference/events.md)."""
    p = _Play(rules, strategy, shoe, choices, log)
    pontoon = rules.pontoon
    if log is not None:
        for box, seats in boxes:
            for player, cents in seats:
                log.append({"type": "bet", "box": box, "player": player, "amount": _dollars(cents)})
        log.append({"type": "no_more_bets"})
    draw = p.draw
    try:
        first = [draw() for _ in boxes]
        up = draw()
        second = [draw() for _ in boxes]
        hole = -1 if pontoon else draw()
    except IndexError:
        raise ShoeExhausted("the shoe ran out of cards during the deal") from None
    by_box: list[list[Hand]] = []
    for (box, seats), a, b in zip(boxes, first, second, strict=True):
        hand = Hand(box, [a, b], [Stake(player, cents) for player, cents in seats])
        hand.natural = _natural(a, b)
        by_box.append([hand])
    upv = VALUE[up]
    if upv == 1:
        p.emit({"type": "offer_insurance"})
        if choices is not None:
            for hands in by_box:
                if hands[0].natural:
                    continue  # 10.2
                for stake in hands[0].stakes:
                    stake.ins = choices.insure(stake, stake.orig // 2)
                    if stake.ins:
                        p.emit(
                            {
                                "type": "insurance",
                                "box": hands[0].box,
                                "player": stake.player,
                                "amount": _dollars(stake.ins),
                            }
                        )
        if not pontoon:
            p.emit({"type": "peek"})
    dealer = [up] if pontoon else [up, hole]
    if not pontoon and _natural(up, hole):
        return _settle(rules, [h for hands in by_box for h in hands], dealer, True)
    try:
        for hands in by_box:
            _play_box(p, hands, up)
        if pontoon:
            dealer.append(draw())
        natural = _natural(dealer[0], dealer[1])
        all_hands = [h for hands in by_box for h in hands]
        if not natural and any(_depends(h, pontoon) for h in all_hands):
            _dealer_draws(dealer, draw)
    except IndexError:
        raise ShoeExhausted("the shoe ran out of cards during the round") from None
    return _settle(rules, all_hands, dealer, natural)


def _depends(hand: Hand, pontoon: bool) -> bool:
    """Whether the hand's settlement still needs the dealer's total."""
    if hand.surrendered or hand.natural:
        return False
    total = hand.total(pontoon)
    if total > 21 or (pontoon and total == 21):
        return False
    return any(not s.rescued for s in hand.stakes)


def _dealer_total(cards: list[int]) -> int:
    hard = sum(VALUE[c] for c in cards)
    if hard <= 11 and any(c >> 2 == ACE_RANK for c in cards):
        return hard + 10
    return hard


def _dealer_draws(dealer: list[int], draw: Callable[[], int]) -> None:
    while _dealer_total(dealer) < 17:
        dealer.append(draw())


def _play_box(p: _Play, hands: list[Hand], up: int) -> None:
    first = hands[0]
    if first.natural:
        return
    if p.pontoon:
        p.emit({"type": "offer_surrender", "box": first.box})
        if p.choices is not None and p.choices.surrender(first):
            first.surrendered = True
            p.emit({"type": "surrender", "box": first.box})
            return
    i = 0
    while i < len(hands):
        _play_hand(p, hands, i, up)
        i += 1


def _legal(p: _Play, hands: list[Hand], hand: Hand, total: int) -> tuple[bool, bool]:
    """(may double, may split) for the hand about to decide."""
    n = len(hand.cards)
    # 12.1: first two cards, or under 21 with three or more (split aces never decide);
    # the generic blackjack: first two cards only.
    can_double = n == 2 or (p.pontoon and total < 21)
    cards = hand.cards
    can_split = (
        n == 2
        and VALUE[cards[0]] == VALUE[cards[1]]
        and len(hands) < p.rules.max_hands
        and not hand.split_aces
    )
    return can_double, can_split


def _advice(p: _Play, hand: Hand, up: int, total: int, can_double: bool, can_split: bool) -> str:
    """The strategy table's move, read as `strategy`'s docstring says."""
    s = p.strategy
    cards = hand.cards
    n = len(cards)
    upv = VALUE[up]
    if (
        p.pontoon
        and s.chase_super_bonus
        and n == 2
        and upv == 7
        and cards[0] >> 2 == SEVEN_RANK
        and cards[1] >> 2 == SEVEN_RANK
        and (cards[0] & 3) == (cards[1] & 3)
    ):
        return M_HIT
    if n == 2 and VALUE[cards[0]] == VALUE[cards[1]]:
        row = s.pairs.get(VALUE[cards[0]])
        if row is not None:
            cell = NO_SURRENDER.get(row[upv], row[upv])
            if cell == SPLIT and can_split:
                return M_SPLIT
            if cell not in (SPLIT, BY_TOTAL):
                raise StrategyError(f"{s.path}: [pairs] cells must be P, Rp or -")
    soft = hand.hard <= 11 and hand.aces > 0
    rows = (s.soft if soft else s.hard)[min(n, len(s.hard) - 1)]
    try:
        cell = rows[total][upv]
    except KeyError:
        table = "soft" if soft else "hard"
        raise StrategyError(f"{s.path}: no [{table}] row for a total of {total}") from None
    cell = NO_SURRENDER.get(cell, cell)
    if cell == HIT:
        return M_HIT
    if cell == STAND:
        return M_STAND
    if cell == DOUBLE_OR_HIT:
        return M_DOUBLE if can_double else M_HIT
    if cell == DOUBLE_OR_STAND:
        return M_DOUBLE if can_double else M_STAND
    if cell == SPLIT:
        return M_SPLIT if can_split else M_HIT
    raise StrategyError(f"{s.path}: '-' is only for [pairs] (total {total})")


def _play_hand(p: _Play, hands: list[Hand], i: int, up: int) -> None:
    hand = hands[i]
    pontoon = p.pontoon
    choices = p.choices
    box = hand.box
    if len(hand.cards) == 1:  # a split hand's turn: its second card (13.3)
        hand.add(p.draw())
        if hand.split_aces:
            return
    while True:
        total = hand.total(pontoon)
        if total >= 21:
            return
        can_double, can_split = _legal(p, hands, hand, total)
        move = _advice(p, hand, up, total, can_double, can_split)
        if choices is not None:
            legal = [M_HIT, M_STAND]
            if can_double:
                legal.append(M_DOUBLE)
            if can_split:
                legal.append(M_SPLIT)
            move = choices.move(hand, legal, move)
        if move == M_HIT:
            if choices is not None and choices.say_hit():
                p.emit({"type": "hit", "box": box})
            hand.add(p.draw())
        elif move == M_STAND:
            p.emit({"type": "stand", "box": box})
            return
        elif move == M_SPLIT:
            _split(p, hands, i)
            hand.add(p.draw())
            if hand.split_aces:
                return
        else:
            _double(p, hand, up)
            return


def _split(p: _Play, hands: list[Hand], i: int) -> None:
    hand = hands[i]
    moved = hand.cards.pop()
    hand.hard -= VALUE[moved]
    if moved >> 2 == ACE_RANK:
        hand.aces -= 1
    controller, *backers = hand.stakes
    p.emit({"type": "split", "box": hand.box})
    stakes = [Stake(controller.player, controller.orig)]
    for stake in backers:
        if p.choices is not None and p.choices.follow_split(stake):
            p.emit({"type": "split", "box": hand.box, "player": stake.player})
            stakes.append(Stake(stake.player, stake.orig))
    new = Hand(hand.box, [moved], stakes)
    aces = moved >> 2 == ACE_RANK
    for h in (hand, new):
        h.split_hand = True
        h.split_aces = aces
    hands.insert(i + 1, new)


def _double(p: _Play, hand: Hand, up: int) -> None:
    pontoon = p.pontoon
    choices = p.choices
    for k, stake in enumerate(hand.stakes):
        controller = k == 0
        if choices is None:
            amount = stake.orig
        else:
            amount = choices.double_amount(stake, controller, equal=not pontoon)
        if amount:
            stake.dbl = amount
            p.emit(
                {
                    "type": "double",
                    "box": hand.box,
                    "player": stake.player,
                    "amount": _dollars(amount),
                }
            )
    hand.doubled = True
    hand.add(p.draw())
    total = hand.total(pontoon)
    if not pontoon or total > 21:
        return
    advised = p.strategy.rescue.get(total, [False] * 11)[VALUE[up]]
    for k, stake in enumerate(hand.stakes):
        if not stake.dbl:
            continue
        rescue = advised if choices is None else choices.rescue(stake, k == 0, advised)
        if rescue:
            stake.rescued = True
            p.emit({"type": "rescue", "box": hand.box, "player": stake.player})


def _odds(hand: Hand, total: int) -> tuple[int, int]:
    """11.1 odds (numerator, denominator) of a winning wager that was not doubled."""
    if total != 21:
        return 1, 1
    n = len(hand.cards)
    if n >= 7:
        return 3, 1
    if n == 6:
        return 2, 1
    if n == 5:
        return 3, 2
    shape = hand.three_card_class()
    if shape is not None:
        return {"mixed": (3, 2), "suited": (2, 1), "spades": (3, 1)}[shape[1]]
    return 1, 1


def _settle(rules: Rules, hands: list[Hand], dealer: list[int], natural: bool) -> Round:
    pontoon = rules.pontoon
    dealer_total = _dealer_total(dealer)
    result = Round(hands, dealer, dealer_total, natural)
    rows = result.rows
    index: dict[int, int] = {}
    winners: set[tuple[str, int]] = set()
    seven_up = dealer[0] >> 2 == SEVEN_RANK
    second = dealer[1]
    for hand in hands:
        k = index.get(hand.box, 0)
        index[hand.box] = k + 1
        total = hand.total(pontoon)
        super_shape = pontoon and seven_up and hand.super_bonus_shape()
        for stake in hand.stakes:
            o, d = stake.orig, stake.dbl
            if pontoon:
                net = _pontoon_net(hand, stake, total, dealer_total, natural)
            else:
                net = _blackjack_net(hand, o, d, total, dealer_total, natural)
            stake.net = net
            rows.append((stake.player, hand.box, k, "hand", net))
            if stake.ins:
                won = VALUE[second] == 10
                rows.append(
                    (stake.player, hand.box, k, "insurance", 2 * stake.ins if won else -stake.ins)
                )
            if super_shape and not d:
                large = o >= rules.super_large_min
                amount = rules.super_large if large else rules.super_small
                if o >= rules.super_small_min:
                    rows.append((stake.player, hand.box, k, "super_bonus", amount))
                    winners.add((stake.player, hand.box))
                    result.super_bonus_wagers += 1
    if winners and rules.bonus_50:
        seen: set[tuple[str, int]] = set()
        for hand in hands:
            for stake in hand.stakes:
                key = (stake.player, hand.box)
                if key in winners or key in seen:
                    continue
                seen.add(key)
                rows.append((stake.player, hand.box, 0, "bonus_50", rules.bonus_50))
    return result


def stands_off(total: int, dealer_total: int, dealer_natural: bool) -> bool:
    """Whether a Pontoon hand of `total` would stand off against the dealer (5.1(e)): equal
    totals under 21 (a 21 wins against a dealer 21, 5.1(d)). Used to label rescued wagers,
    which lose their original all the same (12.8)."""
    return not dealer_natural and total == dealer_total and total < 21


def _pontoon_net(hand: Hand, stake: Stake, total: int, dealer_total: int, natural: bool) -> int:
    o, d = stake.orig, stake.dbl
    if stake.rescued:
        return -o  # 12.8
    if hand.surrendered:
        return -o if natural else -(o // 2)  # 9.5
    if total > 21:
        return -(o + d)  # 5.1(f)
    if hand.natural:
        return o * 3 // 2  # 5.1(c), 11.1
    if natural:
        return -o  # dealer pontoon: 12.7 returns a double; a split hand loses its wager
    if total == 21 or dealer_total > 21 or total > dealer_total:
        if d:
            return o + d  # 12.5
        num, den = _odds(hand, total)
        return o * num // den
    if total == dealer_total:
        return 0
    return -(o + d)


def _blackjack_net(hand: Hand, o: int, d: int, total: int, dealer_total: int, natural: bool) -> int:
    if natural:
        return 0 if hand.natural else -o
    if total > 21:
        return -(o + d)
    if hand.natural:
        return o * 3 // 2
    if dealer_total > 21 or total > dealer_total:
        return o + d
    if total == dealer_total:
        return 0
    return -(o + d)
