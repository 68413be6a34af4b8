"""``floorctl simulate``: the house edge of a game as the engine plays it, with a strategy table.

    floorctl simulate --game blackjack --rounds 1000000 --seed 1 --jobs 2 [--json]

Plays N rounds through the live table's engine (see :mod:`controller.sim.player`), one box,
the same initial wager every round, and prints the house edge with its standard error and the
frequencies of naturals, 5-card 21, 6-7-8, 7-7-7, Super Bonus and dealer bust. The same seed
gives the same figures, whatever ``--jobs`` is (:mod:`controller.sim.runner`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from decimal import Decimal, InvalidOperation
from typing import Any

from controller import argtypes
from controller.engine import native
from controller.events import ScenarioError, parse_setup
from controller.rules import RuleSetError
from controller.sim.runner import CHUNK_ROUNDS, ProgressBar, SimConfig, default_jobs, run
from controller.sim.strategy import StrategyError, load_strategy, strategy_path

LABELS: tuple[tuple[str, str], ...] = (
    ("natural", "{natural}"),
    ("five_card_21", "5-card 21"),
    ("six_card_21", "6-card 21"),
    ("seven_plus_card_21", "7+-card 21"),
    ("six_seven_eight", "6-7-8"),
    ("six_seven_eight_mixed", "  mixed suits"),
    ("six_seven_eight_suited", "  one suit (not S)"),
    ("six_seven_eight_spades", "  all spades"),
    ("seven_seven_seven", "7-7-7"),
    ("seven_seven_seven_mixed", "  mixed suits"),
    ("seven_seven_seven_suited", "  one suit (not S)"),
    ("seven_seven_seven_spades", "  all spades"),
    ("super_bonus", "Super Bonus"),
    ("dealer_bust", "dealer bust"),
    ("dealer_natural", "dealer {natural}"),
    ("double", "doubles"),
    ("split", "splits"),
    ("surrender", "surrenders"),
    ("rescue", "rescues (12.8)"),
    ("insurance", "insurance taken"),
)
# What the hands did against the dealer, and what the money on them did.
HAND_LABELS: tuple[tuple[str, str], ...] = (
    ("win", "hands won"),
    ("lose", "hands lost"),
    ("push", "hands pushed"),
    ("surrender", "hands surrendered"),
)
MONEY_LABELS: tuple[tuple[str, str], ...] = (
    ("won", "money won"),
    ("lost", "money lost"),
    ("pushed", "money pushed"),
    ("surrendered", "money surrendered"),
    ("rescued", "money rescued"),
    ("rescued_tie", "  tied the dealer"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="house edge of a game by simulation through the engine",
        description=(
            "Play many rounds through the table engine with a strategy table and print the "
            "house edge (with its standard error) and the frequencies of the bonus hands."
        ),
    )
    p.add_argument(
        "--game", required=True, help="rule set: pontoon-nz-2000, blackjack-nz-1994, blackjack"
    )
    p.add_argument(
        "--rules",
        default="{}",
        metavar="JSON",
        help='rule setting overrides, as in a scenario\'s "rules" object, e.g. \'{"decks": 8}\'',
    )
    p.add_argument(
        "--rounds", type=argtypes.positive_int, required=True, help="rounds to play (one box)"
    )
    p.add_argument("--seed", required=True, help="seed of the shuffles (any text)")
    p.add_argument(
        "--strategy",
        metavar="FILE",
        help="strategy table (default: config/strategy-<game>.toml for the game)",
    )
    p.add_argument(
        "--jobs",
        type=argtypes.count,
        default=1,
        help="worker processes (0: one per core; default 1)",
    )
    p.add_argument("--bet", default="10", help="the initial wager every round (default 10)")
    p.add_argument(
        "--penetration",
        type=float,
        default=0.75,
        help="share of the shoe dealt before the cutting card (default 0.75)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)


def _error(message: str) -> int:
    print(f"floorctl simulate: {message}", file=sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    try:
        overrides = json.loads(args.rules, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        return _error(f"--rules: not valid JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(overrides, dict):
        return _error(f"--rules: {args.rules!r} is not a JSON object of rule settings")
    if args.rounds < 1:
        return _error(f"--rounds: {args.rounds} must be at least 1")
    if args.jobs < 0:
        return _error(f"--jobs: {args.jobs} must be 0 (one per core) or more")
    if not 0.0 < args.penetration < 1.0:
        return _error(f"--penetration: {args.penetration} must be between 0 and 1")
    try:
        bet = Decimal(args.bet)
    except InvalidOperation:
        return _error(f"--bet: {args.bet!r} is not an amount")
    if not bet.is_finite() or bet <= 0:
        return _error(f"--bet: {args.bet!r} must be a positive amount")
    try:
        setup = parse_setup(
            {
                "type": "table",
                "game": args.game,
                "boxes": 1,
                "min_bet": str(bet),
                "max_bet": str(bet),
                "rules": overrides,
            }
        )
    except ScenarioError as exc:
        field = "--game" if exc.field == "game" else "--rules"
        return _error(f"{field}: {exc.detail}")
    except RuleSetError as exc:  # pragma: no cover - parse_setup wraps these
        return _error(f"--rules: {exc}")
    try:
        path = strategy_path(args.game, args.strategy)
        strategy = load_strategy(path)
    except StrategyError as exc:
        return _error(f"--strategy: {exc}")
    jobs = args.jobs or default_jobs()
    config = SimConfig(
        game=args.game,
        strategy_path=str(path),
        seed=str(args.seed),
        bet=bet,
        penetration=args.penetration,
        overrides=tuple(overrides.items()),
    )
    bar = None
    if not args.quiet and args.rounds > CHUNK_ROUNDS and sys.stderr.isatty():
        bar = ProgressBar(args.rounds, sys.stderr)
    start = time.perf_counter()
    try:
        tally = run(config, args.rounds, jobs, bar)
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - start
    doc: dict[str, Any] = {
        "game": args.game,
        "natural_name": setup.rules.natural_name,
        "rules": {k: _jsonable(v) for k, v in overrides.items()},
        "decks": setup.rules.decks,
        "settings": {
            k: v for k, v in setup.rules.to_dict().items() if k not in ("rule_refs", "rule_words")
        },
        "strategy": {"file": str(path), "name": strategy.name},
        "seed": str(args.seed),
        "bet": str(bet),
        "penetration": args.penetration,
        "chunk_rounds": CHUNK_ROUNDS,
        "engine": native.describe(),
        **tally.to_dict(),
        "timing": {
            "jobs": jobs,
            "seconds": round(elapsed, 3),
            "rounds_per_second": round(tally.rounds / elapsed, 1) if elapsed > 0 else None,
            "rounds_per_second_per_job": round(tally.rounds / elapsed / jobs, 1)
            if elapsed > 0
            else None,
        },
    }
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(format_report(doc))
    if tally.flags:
        print(
            f"floorctl simulate: the engine raised {tally.flags} flag(s) during the run "
            f"(a simulator defect): {'; '.join(tally.flag_samples)}",
            file=sys.stderr,
        )
        return 1
    return 0


def _jsonable(v: Any) -> Any:
    if isinstance(v, Decimal):
        return str(v)
    return v


def describe_settings(r: dict[str, Any]) -> str:
    """The settings that move a house edge, in a line (all of them are in the JSON)."""
    double = {
        "any": "double any two",
        "totals": "double on " + "/".join(str(t) for t in r["double_totals"]),
        "never": "no double",
    }.get(r["double_first_two"], "")
    parts = [
        f"{r['decks']} decks",
        "hole card, dealer peeks" if r["hole_card"] == "peek" else "no hole card",
        "dealer hits soft 17" if r["dealer_hits_soft_17"] else "dealer stands on soft 17",
        f"{r['natural_name']} pays {r['natural_pays']}",
        double + (", after split" if r["double_after_split"] else ", not after split"),
        f"up to {r['max_hands']} hands",
        "resplit aces" if r["resplit_aces"] else "no resplit of aces",
        "surrender" if r["surrender"] else "no surrender",
    ]
    if r.get("rescue"):
        parts.append("rescue (12.8)")
    return ", ".join(parts)


def format_report(doc: dict[str, Any]) -> str:
    natural = doc.get("natural_name") or "natural"
    rules = ", ".join(f"{k}={v}" for k, v in doc["rules"].items()) or "rule set defaults"
    n = doc["rounds"]
    # From the unrounded figures: the *_percent fields are rounded to 4 places already.
    he, se = doc["house_edge"] * 100, doc["standard_error"] * 100
    out = [
        f"{doc['game']}: {n:,} rounds, seed {doc['seed']}, bet {doc['bet']}, "
        f"{doc['decks']} decks, penetration {doc['penetration']:.0%}",
        f"rules: {rules}",
        f"settings: {describe_settings(doc['settings'])}",
        f"strategy: {doc['strategy']['name']} ({doc['strategy']['file']})",
        f"engine: {doc.get('engine', 'unknown')}",
        "",
        f"house edge      {he:+.3f}%  ± {se:.3f}% (1 standard error)",
        f"95% interval    {he - 1.96 * se:+.3f}% to {he + 1.96 * se:+.3f}%",
        f"sd per round    {doc['sd_per_round_units']:.3f} units",
        f"hands played    {doc['hands']:,}",
        "",
        f"{'frequency':<20}{'count':>12}{'per round':>14}{'1 in':>12}",
    ]
    for key, label in LABELS:
        f = doc["frequencies"][key]
        rate = f["per_round"] or 0.0
        one_in = f"{1 / rate:,.0f}" if rate else "-"
        out.append(
            f"{label.format(natural=natural):<20}{f['count']:>12,}{rate * 100:>13.4f}%{one_in:>12}"
        )
    out.append("")
    out.append(f"{'per hand':<20}{'count':>12}{'per hand':>14}")
    for key, label in HAND_LABELS + MONEY_LABELS:
        f = doc["frequencies"][key]
        rate = f.get("per_hand") or 0.0
        out.append(f"{label:<20}{f['count']:>12,}{rate * 100:>13.4f}%")
    t = doc["timing"]
    out.append("")
    out.append(
        f"{t['seconds']:.1f} s on {t['jobs']} job(s): {t['rounds_per_second']:,.0f} rounds/s "
        f"({t['rounds_per_second_per_job']:,.0f} per job)"
    )
    return "\n".join(out)
