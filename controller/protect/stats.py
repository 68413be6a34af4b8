"""The tests of game protection, each a z-score with a stated null distribution.

- :func:`cluster_slope` — the slope of y on x with a standard error that allows any dependence
  within a shoe (cluster-robust): bets and counts both drift through a shoe, so rounds are not
  independent, but shoes are. Used for bet against count and for playing against count.
- :func:`informed` — whether a decision that departs from the strategy table was right given
  the next card (or the hole card), and how likely that was for a player who could not know it:
  the share of the cards the player had not seen for which it would be right. A player who
  does not know the card is right with exactly that probability, whatever he counts.
- :func:`poisson_binomial_z` — how far above chance a run of such decisions was, as the normal
  score of its exact tail probability.
- :func:`index_direction` — the direction a high count pushes a departure from the table
  (+1: stand rather than hit, double, split, surrender, insure; -1: the reverse).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Final

from controller.cards import VALUE, best_total

_NORMAL: Final = NormalDist()
# A representative card of each value class (the class decides every total).
_CLASS_CARD: Final = ("AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "KS")


def normal_sf(z: float) -> float:
    """P(Z >= z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def z_of_tail(p: float) -> float:
    """The normal score whose upper tail is ``p`` (capped at +-8.3)."""
    p = min(max(p, 1e-16), 1.0 - 1e-16)
    return -_NORMAL.inv_cdf(p)


def cluster_slope(
    x: Sequence[float], y: Sequence[float], clusters: Sequence[int]
) -> tuple[float, float, int]:
    """(slope, z, clusters) of the least-squares slope of y on x, its standard error robust to
    any dependence within a cluster (with the small-sample factor G/(G-1)). z is 0 where y or x
    does not vary or fewer than 2 clusters hold data."""
    n = len(x)
    if n < 3:
        return 0.0, 0.0, 0
    mx = sum(x) / n
    my = sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    if sxx <= 0:
        return 0.0, 0.0, 0
    slope = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sxx
    scores: dict[int, float] = {}
    for a, b, g in zip(x, y, clusters, strict=True):
        resid = (b - my) - slope * (a - mx)
        scores[g] = scores.get(g, 0.0) + (a - mx) * resid
    g_count = len(scores)
    if g_count < 2:
        return slope, 0.0, g_count
    meat = sum(s * s for s in scores.values()) * g_count / (g_count - 1)
    if meat <= 0:
        return slope, 0.0, g_count
    se = math.sqrt(meat) / sxx
    return slope, slope / se, g_count


def poisson_binomial_z(hits: int, probs: Sequence[float]) -> tuple[float, float]:
    """(tail probability, z) of ``hits`` or more successes among independent trials with
    success probabilities ``probs``, computed exactly."""
    n = len(probs)
    if n == 0 or hits <= 0:
        return 1.0, 0.0
    dist = [1.0] + [0.0] * n
    for k, p in enumerate(probs, start=1):
        for j in range(k, 0, -1):
            dist[j] = dist[j] * (1.0 - p) + dist[j - 1] * p
        dist[0] *= 1.0 - p
    tail = math.fsum(dist[hits:])
    return tail, z_of_tail(tail)


def index_direction(advised: str, action: str) -> int:
    """+1 where a high count favours the departure (stand, double, split, surrender or insure
    instead of what the table says), -1 where a low count does, 0 where it says nothing."""
    rank = {"hit": 0, "stand": 1, "double": 2, "split": 2, "surrender": 2}
    if action == "insurance":
        return 1
    if advised not in rank or action not in rank or advised == action:
        return 0
    if {advised, action} == {"double", "split"}:
        return 0
    return 1 if rank[action] > rank[advised] else -1


def _total_after(cards: Sequence[str], card: str, doubled: bool, pontoon: bool) -> int:
    fixed = sum(1 for c in cards[:2] if VALUE[c] == 1) if (doubled and pontoon) else 0
    return best_total([*cards, card], fixed)[0]


def _right_by_next(
    cards: Sequence[str], advised: str, action: str, card: str, pontoon: bool
) -> bool | None:
    """Was the departure right, had the player known the next card? None: not judged."""
    before = best_total(cards)[0]
    if action == "stand" and advised in ("hit", "double", "split"):
        return _total_after(cards, card, False, pontoon) > 21
    if action == "hit" and advised == "stand":
        return _total_after(cards, card, False, pontoon) <= 21
    if action == "double" and advised in ("hit", "stand"):
        after = _total_after(cards, card, True, pontoon)
        return 18 <= after <= 21
    if advised == "double" and action in ("hit", "stand"):
        after = _total_after(cards, card, True, pontoon)
        return after > 21 or after < 17 or (after < before)
    return None


def _dealer_start(up: str, hole: str) -> int:
    return best_total([up, hole])[0]


def _right_by_hole(
    cards: Sequence[str], up: str, advised: str, action: str, hole: str
) -> bool | None:
    """Was the departure right, had the player known the dealer's hole card?"""
    if action == "insurance":
        return VALUE[hole] == 10
    dealer = _dealer_start(up, hole)
    mine = best_total(cards)[0]
    stiff = 12 <= dealer <= 16
    if action == "stand" and advised in ("hit", "double", "split"):
        return stiff or dealer <= mine
    if action == "hit" and advised == "stand":
        return dealer >= 17 and dealer > mine
    if action == "double" and advised in ("hit", "stand"):
        return stiff
    if advised == "double" and action in ("hit", "stand"):
        return dealer >= 17 and not stiff
    return None


def informed(
    cards: Sequence[str],
    up: str,
    advised: str,
    action: str,
    unseen: Sequence[int],
    *,
    next_card: str | None,
    hole: str | None,
    pontoon: bool,
) -> list[tuple[str, bool, float]]:
    """For a departure from the table: [(what was known, right, chance of being right)] for
    the next card and, where the game has one, the hole card. The chance is the share of the
    unseen cards (by value) for which the departure would have been right."""
    out: list[tuple[str, bool, float]] = []
    if advised == action:
        return out
    total = sum(unseen)
    if total <= 0:
        return out
    if next_card is not None and action != "insurance":
        right = _right_by_next(cards, advised, action, next_card, pontoon)
        if right is not None:
            p = sum(
                n
                for n, c in zip(unseen, _CLASS_CARD, strict=True)
                if n and _right_by_next(cards, advised, action, c, pontoon)
            )
            out.append(("next card", right, p / total))
    if hole is not None:
        right = _right_by_hole(cards, up, advised, action, hole)
        if right is not None:
            # After the peek everyone knows the hole card does not make a blackjack (insurance
            # is decided before it).
            barred = None if action == "insurance" else {10: 0, 1: 9}.get(VALUE[up])
            weights = [0 if i == barred else n for i, n in enumerate(unseen)]
            base = sum(weights)
            if base > 0:
                p = sum(
                    n
                    for n, c in zip(weights, _CLASS_CARD, strict=True)
                    if n and _right_by_hole(cards, up, advised, action, c)
                )
                out.append(("hole card", right, p / base))
    return out
