"""What a hand is worth: outcomes (5.1), odds (11.1), the Super Bonus (11.2) and returns.

Pure functions of the rule set and the cards, used by the engine when a round settles. Cards
are two-character codes; totals are the best totals the engine computed for the hands.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_DOWN, Decimal

from controller.rules import RuleSet

ZERO = Decimal(0)
CENT = Decimal("0.01")
_TRIOS = (["6", "7", "8"], ["7", "7", "7"])


_RATIOS: dict[tuple[str, str], Decimal] = {}


def natural_ratio(rules: RuleSet) -> Decimal:
    """The rule set's natural odds (``natural_pays``), parsed once per text."""
    key = ("natural", rules.natural_pays)
    ratio = _RATIOS.get(key)
    if ratio is None:
        ratio = _RATIOS[key] = rules.natural_ratio
    return ratio


def insurance_ratio(rules: RuleSet) -> Decimal:
    """The rule set's insurance odds (``insurance_pays``), parsed once per text."""
    key = ("insurance", rules.insurance_pays)
    ratio = _RATIOS.get(key)
    if ratio is None:
        ratio = _RATIOS[key] = rules.insurance_ratio
    return ratio


def outcome(
    rules: RuleSet, total: int, natural: bool, dealer_total: int, dealer_natural: bool
) -> str:
    """5.1: a standing (not bust, void or surrendered) hand against the dealer's final hand."""
    if natural:
        return rules.natural_vs_dealer_natural.value if dealer_natural else "win"
    if dealer_natural:
        return "win" if total == 21 and rules.player_21_beats_dealer_pontoon else "lose"
    if dealer_total > 21:
        return "win"
    if total == 21 and rules.player_21_beats_dealer_21:
        return "win"
    if total == dealer_total:
        return "push"
    return "win" if total > dealer_total else "lose"


def odds(rules: RuleSet, cards: Sequence[str], total: int, natural: bool) -> Decimal:
    """11.1: the best odds category a winning, undoubled wager on this hand earns."""
    if natural:
        return natural_ratio(rules)
    if not rules.bonus_odds:
        return Decimal(1)
    n = len(cards)
    best = Decimal(1)
    if total == 21 and n >= 7:
        best = Decimal(3)
    elif total == 21 and n == 6:
        best = Decimal(2)
    elif total == 21 and n == 5:
        best = Decimal("1.5")
    if n == 3 and sorted(c[0] for c in cards) in _TRIOS:
        suits = {c[1] for c in cards}
        if suits == {"S"}:
            trio = Decimal(3)
        elif len(suits) == 1:
            trio = Decimal(2)
        else:
            trio = Decimal("1.5")
        best = max(best, trio)
    return best


def super_bonus(
    rules: RuleSet, cards: Sequence[str], dealer_first: str | None, wager: Decimal, doubled: bool
) -> Decimal:
    """11.2: 7-7-7 of one suit against a dealer's first card 7; never on a doubled wager (12.5)."""
    if not rules.super_bonus or doubled or dealer_first is None or dealer_first[0] != "7":
        return ZERO
    if len(cards) != 3 or any(c[0] != "7" for c in cards) or len({c[1] for c in cards}) != 1:
        return ZERO
    if wager >= rules.super_bonus_large_min:
        return rules.super_bonus_large
    if wager >= rules.super_bonus_small_min:
        return rules.super_bonus_small
    return ZERO


def returned(
    rules: RuleSet,
    result: str,
    amount: Decimal,
    double: Decimal,
    *,
    rescued: bool,
    ratio: Decimal,
    dealer_natural: bool,
    busted: bool,
    added_by_split: bool,
) -> Decimal:
    """What one player's wager on a hand (with its double) returns, given the hand's result.

    ``ratio`` is the hand's 11.1 odds; ``added_by_split`` marks a hand a split added to the box.
    Odd cents in a payout are rounded down.
    """
    staked = amount + double
    if result == "void":  # 16.5: every wager returned
        return staked
    if rescued:  # 12.8: the double comes back and the original is forfeit, whatever the dealer
        return double  # makes: a stand-off, a bust, a pontoon (12.7) alike
    if result == "push":
        return staked
    if result == "surrender":  # 9.5
        lost_all = dealer_natural and rules.surrender_lost_to_dealer_natural
        return ZERO if lost_all else (amount / 2).quantize(CENT, ROUND_DOWN)
    if result == "lose":
        if not dealer_natural or busted:
            return ZERO
        if added_by_split and not rules.dealer_natural_takes_splits:
            return staked
        return ZERO if rules.dealer_natural_takes_doubles else double  # 12.7
    if double > 0:  # 12.5: a doubled wager is paid 1:1
        return staked * 2
    return amount + (amount * ratio).quantize(CENT, ROUND_DOWN)
