"""Every documented house edge by a second method: the oracle beside `floorctl simulate`.

The edges are those docs/developer/game-math.md quotes.

The oracle (`benchmarks/oracle/`) is a compact simulator written from the rule book and the shipped
strategy tables without reading floorctl's engine, payouts, cards or simulator (issue 18). This
script plays the same number of rounds of one box, one player, the same wager, the same
strategy table and the same 75% penetration through both (different seeds: the shoes are
independent), and prints:

1. both house edges with their standard errors, and the z-score of their difference;
2. the per-round frequency of every paid category from both, with z-scores: pontoon /
   blackjack, 5-, 6-, 7+-card 21, 6-7-8 and 7-7-7 by suit class, Super Bonus, doubles, rescues,
   splits, dealer bust (and dealer pontoon, and what the money of each hand did);
3. the speed of each, as rounds/s and their ratio (measured in the same run).

floorctl's `simulate --json` keys are read defensively: a missing key is printed as missing.

    .venv/bin/python benchmarks/bench_house_edge.py                      # 200,000 rounds each
    .venv/bin/python benchmarks/bench_house_edge.py --game pontoon-nz-2000
    # the long runs (minutes; run at low priority on a shared machine):
    nice -n 19 .venv/bin/python benchmarks/bench_house_edge.py --game pontoon-nz-2000 \\
        --rounds 5000000 --jobs 2
    nice -n 19 .venv/bin/python benchmarks/bench_house_edge.py --game blackjack --rounds 2000000
    # the oracle alone, no floorctl run:
    .venv/bin/python benchmarks/bench_house_edge.py --rounds 5000000 --oracle-only

`--floorctl-json FILE` reads a saved `floorctl simulate --json` document instead of running it.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.oracle.game import GAMES
from benchmarks.oracle.simulate import Tally, run
from benchmarks.oracle.strategy import load, repo_root, shipped

# Oracle category -> the keys floorctl's frequencies may use for it, first match wins.
FLOORCTL_KEYS: dict[str, tuple[str, ...]] = {
    "natural": ("natural", "pontoon", "blackjack"),
    "five_card_21": ("five_card_21",),
    "six_card_21": ("six_card_21",),
    "seven_plus_card_21": ("seven_plus_card_21", "seven_card_21"),
    "six_seven_eight": ("six_seven_eight",),
    "six_seven_eight_mixed": ("six_seven_eight_mixed",),
    "six_seven_eight_suited": ("six_seven_eight_suited", "six_seven_eight_same_suit"),
    "six_seven_eight_spades": ("six_seven_eight_spades",),
    "seven_seven_seven": ("seven_seven_seven",),
    "seven_seven_seven_mixed": ("seven_seven_seven_mixed",),
    "seven_seven_seven_suited": ("seven_seven_seven_suited", "seven_seven_seven_same_suit"),
    "seven_seven_seven_spades": ("seven_seven_seven_spades",),
    "super_bonus": ("super_bonus",),
    "double": ("double",),
    "rescue": ("rescue",),
    "split": ("split",),
    "dealer_bust": ("dealer_bust",),
    "dealer_natural": ("dealer_natural",),
    "hand_won": ("money_won", "won"),
    "hand_lost": ("money_lost", "lost"),
    "hand_pushed": ("money_pushed", "pushed"),
    "hand_rescued": ("money_rescued", "rescued"),
    "rescued_tie": ("rescued_tie",),
}
PONTOON_ONLY = {
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
    "rescue",
    "hand_rescued",
    "rescued_tie",
}
LABELS = {
    "hand_won": "hands whose money won",
    "hand_lost": "hands whose money lost",
    "hand_pushed": "hands whose money pushed",
    "hand_rescued": "hands rescued (12.8)",
    "rescued_tie": "rescued hands tying dealer",
}


def run_floorctl(game: str, rounds: int, seed: str, bet: int, jobs: int) -> dict[str, Any]:
    exe = repo_root() / ".venv" / "bin" / "floorctl"
    cmd = [str(exe), "simulate", "--game", game, "--rounds", str(rounds), "--seed", seed]
    cmd += ["--bet", str(bet), "--jobs", str(jobs), "--json", "--quiet"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr.strip()}")
    try:
        doc: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"floorctl simulate printed no JSON document: {exc}") from None
    doc.setdefault("_wall_seconds", elapsed)
    return doc


def _number(doc: dict[str, Any], *keys: str) -> float | None:
    for key in keys:
        value = doc.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                continue
    return None


def floorctl_rate(freqs: dict[str, Any], keys: tuple[str, ...], rounds: int) -> float | None:
    for key in keys:
        entry = freqs.get(key)
        if isinstance(entry, dict):
            per_round = _number(entry, "per_round")
            if per_round is not None:
                return per_round
            count = _number(entry, "count")
            if count is not None and rounds:
                return count / rounds
        elif isinstance(entry, (int, float)) and not isinstance(entry, bool):
            return float(entry) / rounds if entry > 1 else float(entry)
    return None


def compare(tally: Tally, doc: dict[str, Any] | None, oracle_rate: float) -> None:
    pontoon = GAMES[tally.game].pontoon
    e_o, se_o = tally.house_edge(), tally.standard_error()
    print(f"\n== {tally.game}: house edge, $ {tally.bet // 100} wager, one box")
    print(f"  {'':<28} {'rounds':>11} {'house edge':>11} {'± SE':>9} {'rounds/s':>10}")
    print(
        f"  {'oracle (benchmarks/oracle)':<28} {tally.rounds:>11,} {e_o:>11.4%} {se_o:>9.4%} "
        f"{oracle_rate:>10,.0f}"
    )
    if pontoon:
        e_b = tally.house_edge_paying_rescued_ties()
        print(
            f"  {'oracle, tied rescues paid':<28} {'':>11} {e_b:>11.4%} {'':>9}   "
            "(as floorctl settled them before the issue 18 fix)"
        )
    if doc is None:
        frequencies(tally, {}, 0)
        return
    n_f = int(_number(doc, "rounds") or 0)
    e_f = _number(doc, "house_edge")
    if e_f is None:
        pct = _number(doc, "house_edge_percent")
        e_f = pct / 100 if pct is not None else None
    se_f = _number(doc, "standard_error")
    if se_f is None:
        pct = _number(doc, "standard_error_percent")
        se_f = pct / 100 if pct is not None else None
    timing: dict[str, Any] = doc["timing"] if isinstance(doc.get("timing"), dict) else {}
    f_rate = _number(timing, "rounds_per_second") or (
        n_f / doc["_wall_seconds"] if doc.get("_wall_seconds") else None
    )
    if e_f is None or se_f is None or not n_f:
        print("  floorctl: house_edge / standard_error / rounds missing from simulate --json")
    else:
        rate = f"{f_rate:>10,.0f}" if f_rate else f"{'?':>10}"
        print(f"  {'floorctl simulate':<28} {n_f:>11,} {e_f:>11.4%} {se_f:>9.4%} {rate}")
        z = (e_o - e_f) / math.hypot(se_o, se_f)
        print(f"  difference oracle - floorctl: {e_o - e_f:+.4%}, z = {z:+.2f}")
        if pontoon:
            e_b = tally.house_edge_paying_rescued_ties()
            z_b = (e_b - e_f) / math.hypot(se_o, se_f)
            print(
                f"  difference oracle with tied rescues paid - floorctl: {e_b - e_f:+.4%}, "
                f"z = {z_b:+.2f} (SE as the oracle's)"
            )
        if f_rate:
            print(f"  speed: oracle / floorctl = {oracle_rate / f_rate:.1f}x (same run)")
    if doc.get("flags"):
        print(f"  floorctl reported {doc.get('flags')} flags during its run")
    freqs = doc.get("frequencies")
    if not isinstance(freqs, dict):
        print("  floorctl: no 'frequencies' object in simulate --json")
        freqs = {}
    frequencies(tally, freqs, n_f)


def frequencies(tally: Tally, freqs: dict[str, Any], n_f: int) -> None:
    """The per-round rates side by side (floorctl's `freqs` may be empty: oracle only)."""
    pontoon = GAMES[tally.game].pontoon
    print(
        f"\n  {'per round':<28} {'oracle':>10} {'(paid)':>10} {'floorctl':>10} {'z':>7}"
        "   floorctl key"
    )
    used: set[str] = set()
    for key, fkeys in FLOORCTL_KEYS.items():
        if key in PONTOON_ONLY and not pontoon:
            continue
        p_o = tally.per_round(key)
        paid = f"{tally.per_round(key, paid=True):>10.6f}" if tally.paid.get(key) else f"{'':>10}"
        p_f = floorctl_rate(freqs, fkeys, n_f) if n_f else None
        found = next((k for k in fkeys if k in freqs), None)
        if found:
            used.add(found)
        label = LABELS.get(key, key)
        if p_f is None:
            print(f"  {label:<28} {p_o:>10.6f} {paid} {'missing':>10} {'':>7}   not in output")
            continue
        var = tally.per_round_variance(key)
        se = math.sqrt(var / tally.rounds + var / n_f) if var > 0 else 0.0
        z_text = f"{(p_o - p_f) / se:+7.2f}" if se > 0 else f"{'-':>7}"
        print(f"  {label:<28} {p_o:>10.6f} {paid} {p_f:>10.6f} {z_text}   {found}")
    rest = sorted(set(freqs) - used)
    if rest:
        print("  floorctl keys not compared (another definition):")
        for key in rest:
            other = floorctl_rate(freqs, (key,), n_f)
            print(f"    {key:<26} {'' if other is None else f'{other:.6f}'}")
    print(
        "  (oracle: a hand of that shape, however it was paid; (paid): won at the category's "
        "11.1 odds, not doubled)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=[*sorted(GAMES), "all"], default="all")
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--oracle-rounds", type=int, help="oracle rounds (default --rounds)")
    parser.add_argument("--seed", default="2026")
    parser.add_argument("--bet", type=int, default=10, help="whole dollars (default 10)")
    parser.add_argument("--jobs", type=int, default=1, help="floorctl simulate --jobs")
    parser.add_argument("--oracle-only", action="store_true", help="do not run floorctl")
    parser.add_argument("--floorctl-json", type=Path, help="a saved floorctl simulate --json")
    parser.add_argument("--save-floorctl-json", type=Path, help="keep floorctl's document here")
    args = parser.parse_args(argv)
    games = sorted(GAMES) if args.game == "all" else [args.game]
    for game in games:
        rules = GAMES[game]
        strategy = load(shipped(game), rules.pontoon)
        oracle_rounds = args.oracle_rounds or args.rounds
        start = time.perf_counter()
        tally = run(rules, strategy, oracle_rounds, args.seed, bet=args.bet * 100)
        rate = oracle_rounds / (time.perf_counter() - start)
        doc: dict[str, Any] | None = None
        if args.floorctl_json is not None:
            doc = json.loads(args.floorctl_json.read_text(encoding="utf-8"))
            if doc.get("game") not in (None, game):
                continue
        elif not args.oracle_only:
            doc = run_floorctl(game, args.rounds, args.seed, args.bet, args.jobs)
            if args.save_floorctl_json is not None:
                path = args.save_floorctl_json
                if len(games) > 1:
                    path = path.with_name(f"{path.stem}-{game}{path.suffix}")
                path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        compare(tally, doc, rate)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
