"""Derive each game's balanced count tags from its effect of removal, by simulation.

    .venv/bin/python tools/derive_count_tags.py [--rounds 1500000] [--edge-rounds 600000]
        [--jobs 2] [--seed tags-1] [--out config/count-tags.toml]

For each game (``pontoon-nz-2000``, ``blackjack-nz-1994``, ``blackjack``) it plays rounds
through the live table's engine with the game's basic strategy (``controller.sim``: one box, a
$10 wager, a 75% cut):

1. **Effect of removal.** From a one-deck shoe (where a card's removal moves the odds the most,
   so the effect is measured the most precisely) it regresses each round's result, in units of
   the wager, on the composition already dealt when the round began: for each point value
   (A, 2..9, T = every ten-value card, in Pontoon the pictures) the excess of that value over
   its share of the cards dealt, per deck remaining. The coefficients, centred so that removing
   an average card changes nothing, are the effect of removing one card of that value from a
   deck, with its standard error.
2. **Tags.** The balanced level-one tags (each -1, 0 or +1, summing to zero over a deck) whose
   betting correlation with the effects of removal is highest; every such tag set is tried.
3. **Advantage per true count.** ``sum(n * eor * tag) / sum(n * tag**2)`` over the values (n:
   cards of the value in a deck): the change in the player's expectation for one unit of true
   count (running count per deck remaining).
4. **House edge and spread.** From a six-deck shoe, the basic-strategy edge and the standard
   deviation of one round's result per unit of wager, with standard errors.

It writes ``config/count-tags.toml`` (read by :mod:`controller.protect.tags`) and prints the
figures. The same seed gives the same figures whatever ``--jobs`` is.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from decimal import Decimal
from pathlib import Path

import numpy as np

from controller.cards import deck
from controller.rules import CONFIG_DIR
from controller.sim.player import RoundPlayer
from controller.sim.runner import SimConfig
from controller.sim.strategy import strategy_path

GAMES = ("pontoon-nz-2000", "blackjack-nz-1994", "blackjack")
VALUES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
CHUNK = 50_000
BET = Decimal(10)


def value_of(code: str) -> str:
    return "T" if code[0] in "TJQK" else code[0]


def per_deck(game: str) -> dict[str, int]:
    """Cards of each point value in one deck of the game."""
    from controller.rules import load_ruleset

    counts = dict.fromkeys(VALUES, 0)
    for code in deck(load_ruleset(game).excluded_ranks):
        counts[value_of(code)] += 1
    return counts


def _chunk(
    args: tuple[str, int, int, str, int],
) -> tuple[np.ndarray, np.ndarray, float, float, int]:
    """Play one chunk; returns (X'X, X'y) for the regression and sums for the edge."""
    game, decks, index, seed, rounds = args
    config = SimConfig(
        game=game,
        strategy_path=str(strategy_path(game)),
        seed=seed,
        bet=BET,
        overrides=(("decks", decks),),
    )
    player = RoundPlayer(config, f"derive-tags/{game}/{decks}/{seed}/{index}")
    counts = per_deck(game)
    size = sum(counts.values())
    share = np.array([counts[v] / size for v in VALUES])
    shoe_cards = size * decks
    xtx = np.zeros((len(VALUES) + 1, len(VALUES) + 1))
    xty = np.zeros(len(VALUES) + 1)
    total = total_sq = 0.0
    row = np.zeros(len(VALUES) + 1)
    row[0] = 1.0
    for _ in range(rounds):
        seen = [] if player.shuffle_due else player.shoe.dealt_cards()
        before = player.tally.net
        player.play_round()
        y = float((player.tally.net - before) / BET)
        total += y
        total_sq += y * y
        if decks > 1:
            continue
        dealt = np.zeros(len(VALUES))
        for code in seen:
            dealt[VALUES.index(value_of(code))] += 1
        remaining_decks = (shoe_cards - len(seen)) / size
        row[1:] = (dealt - share * len(seen)) / remaining_decks
        xtx += np.outer(row, row)
        xty += row * y
    # A one-deck shoe may run short mid-round (16.7: the discards are reshuffled): expected.
    defects = [f for f in player.tally.flag_samples if ": 16.7: " not in f]
    if defects:
        raise RuntimeError(f"{game}: the engine raised flags: {defects}")
    return xtx, xty, total, total_sq, rounds


def play(game: str, decks: int, rounds: int, seed: str, jobs: int) -> tuple[np.ndarray, ...]:
    parts = [
        (game, decks, k, seed, min(CHUNK, rounds - start))
        for k, start in enumerate(range(0, rounds, CHUNK))
    ]
    if jobs > 1:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            results = list(pool.map(_chunk, parts))
    else:
        results = [_chunk(p) for p in parts]
    xtx = sum((r[0] for r in results), np.zeros_like(results[0][0]))
    xty = sum((r[1] for r in results), np.zeros_like(results[0][1]))
    total = sum(r[2] for r in results)
    total_sq = sum(r[3] for r in results)
    n = sum(r[4] for r in results)
    return xtx, xty, np.array([total, total_sq, n])


def effects_of_removal(
    xtx: np.ndarray, xty: np.ndarray, moments: np.ndarray, share: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Centred effects of removal per value and their standard errors (in units of wager)."""
    _, total_sq, n = moments
    # The excesses sum to zero, so drop the last value and recover it from the centring.
    k = len(VALUES)
    keep = list(range(k))  # intercept + the first k-1 values
    a = xtx[np.ix_(keep, keep)]
    b = xty[keep]
    beta = np.linalg.solve(a, b)
    resid_var = (total_sq - beta @ b) / (n - len(keep))
    cov = np.linalg.inv(a) * resid_var
    coef = np.zeros(k)
    coef[: k - 1] = beta[1:]
    # Centre: removing a card of the average composition changes nothing.
    eor = coef - float(share @ coef)
    # Standard errors of the centred effects (a linear map of beta).
    m = np.zeros((k, k))
    m[:, 1:] = np.eye(k)[:, : k - 1] - np.outer(np.ones(k), share[: k - 1])
    m[:, 0] = 0.0
    se = np.sqrt(np.clip(np.diag(m @ cov @ m.T), 0, None))
    return eor, se


def best_tags(eor: np.ndarray, counts: np.ndarray) -> tuple[tuple[int, ...], float]:
    """The balanced level-one tags with the highest betting correlation with ``eor``."""
    best: tuple[tuple[int, ...], float] = ((0,) * len(eor), -2.0)
    for tags in itertools.product((-1, 0, 1), repeat=len(eor)):
        t = np.array(tags, dtype=float)
        if int(counts @ t) != 0 or not t.any():
            continue
        bc = betting_correlation(eor, t, counts)
        if bc > best[1]:
            best = (tags, bc)
    return best


def betting_correlation(eor: np.ndarray, tags: np.ndarray, counts: np.ndarray) -> float:
    """Correlation of tags with effects of removal over the cards of a deck."""
    w = counts / counts.sum()
    e = eor - w @ eor
    t = tags - w @ tags
    return float((w @ (e * t)) / math.sqrt((w @ (e * e)) * (w @ (t * t))))


def derive(game: str, rounds: int, edge_rounds: int, seed: str, jobs: int) -> dict[str, object]:
    counts_map = per_deck(game)
    counts = np.array([counts_map[v] for v in VALUES], dtype=float)
    share = counts / counts.sum()
    t0 = time.process_time()
    xtx, xty, moments = play(game, 1, rounds, seed, jobs)
    eor, se = effects_of_removal(xtx, xty, moments, share)
    tags, bc = best_tags(eor, counts)
    t = np.array(tags, dtype=float)
    per_tc = float((counts * eor) @ t / (counts @ (t * t)))
    _, _, m6 = play(game, 6, edge_rounds, seed, jobs)
    total, total_sq, n = m6
    mean = total / n
    sd = math.sqrt((total_sq - n * mean * mean) / (n - 1))
    return {
        "game": game,
        "values": VALUES,
        "cards_per_deck": [int(c) for c in counts],
        "effect_of_removal": [round(float(x), 6) for x in eor],
        "effect_se": [round(float(x), 6) for x in se],
        "tags": list(tags),
        "betting_correlation": round(bc, 4),
        "advantage_per_true_count": round(per_tc, 6),
        "house_edge": round(-mean, 6),
        "house_edge_se": round(sd / math.sqrt(n), 6),
        "sd_per_unit": round(sd, 4),
        "rounds_one_deck": rounds,
        "rounds_six_decks": int(n),
        "seed": seed,
        "cpu_seconds_main": round(time.process_time() - t0, 1),
    }


def to_toml(results: Sequence[dict[str, object]]) -> str:
    out = [
        "# Balanced count tags by game, derived from each game's effect of removal by",
        "# tools/derive_count_tags.py (the command and its figures: see its docstring and",
        "# docs/surveillance/game-protection.md). Generated: edit by re-running the tool.",
        "# values: A, 2..9, T (every ten-value card; in Pontoon the pictures J Q K).",
        "# effect_of_removal: the change in the player's expectation, in units of the wager, when",
        "# one card of the value is removed from a deck (one-deck shoe, basic strategy).",
        "# advantage_per_true_count: the change in expectation for +1 true count.",
        "# house_edge, sd_per_unit: six decks, basic strategy, per unit of initial wager.",
        "",
    ]
    for r in results:
        out.append(f'["{r["game"]}"]')
        out.append("values = [" + ", ".join(f'"{v}"' for v in VALUES) + "]")
        for key in (
            "tags",
            "cards_per_deck",
            "effect_of_removal",
            "effect_se",
        ):
            out.append(f"{key} = [" + ", ".join(str(x) for x in r[key]) + "]")  # type: ignore[attr-defined]
        for key in (
            "betting_correlation",
            "advantage_per_true_count",
            "house_edge",
            "house_edge_se",
            "sd_per_unit",
            "rounds_one_deck",
            "rounds_six_decks",
        ):
            out.append(f"{key} = {r[key]}")
        out.append(f'seed = "{r["seed"]}"')
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default=",".join(GAMES))
    p.add_argument("--rounds", type=int, default=1_500_000, help="one-deck rounds per game")
    p.add_argument("--edge-rounds", type=int, default=600_000, help="six-deck rounds per game")
    p.add_argument("--seed", default="tags-1")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default=str(CONFIG_DIR / "count-tags.toml"))
    args = p.parse_args(argv)
    results = []
    for game in args.games.split(","):
        start = time.perf_counter()
        r = derive(game, args.rounds, args.edge_rounds, args.seed, args.jobs)
        results.append(r)
        print(f"{game}  ({time.perf_counter() - start:.0f} s)")
        for v, e, s, t in zip(
            VALUES, r["effect_of_removal"], r["effect_se"], r["tags"], strict=True
        ):  # type: ignore[call-overload]
            print(f"  {v:>2}  EoR {e * 100:+.3f}% ± {s * 100:.3f}%  tag {t:+d}")
        print(
            f"  betting correlation {r['betting_correlation']}, advantage per true count "
            f"{float(r['advantage_per_true_count']) * 100:+.3f}%, house edge "  # type: ignore[arg-type]
            f"{float(r['house_edge']) * 100:.3f}% ± {float(r['house_edge_se']) * 100:.3f}%, "  # type: ignore[arg-type]
            f"sd {r['sd_per_unit']} units"
        )
        sys.stdout.flush()
    Path(args.out).write_text(to_toml(results), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
