"""Replay the oracle's scenario through `floorctl replay --json` and list every difference.

A round differs when its status is not `settled`, floorctl raised a flag (legal play must raise
none), a settlement row's net differs or a row is on one side only, or the dealer's or a hand's
cards differ. Each difference keeps the round's own events, so it can be written out as a
standalone one-round scenario (`scenario.one_round`).

    python -m benchmarks.oracle.crosscheck --game pontoon-nz-2000 --rounds 20000 --seed 1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from .game import GAMES, Rules, stands_off
from .scenario import Expected, generate, one_round, write
from .strategy import load, repo_root, shipped

Key = tuple[str, int, int, str]


@dataclass
class Difference:
    round: int  # 1-based
    what: list[str]
    expected: Expected
    got: dict[str, Any] = field(default_factory=dict)

    def kinds(self) -> set[str]:
        return {w.split(":", 1)[0] for w in self.what}


class ReplayError(RuntimeError):
    """floorctl replay failed or printed something that is not its JSON document."""


def floorctl() -> Path:
    return repo_root() / ".venv" / "bin" / "floorctl"


def replay(path: Path, exe: Path | None = None) -> dict[str, Any]:
    cmd = [str(exe or floorctl()), "replay", str(path), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ReplayError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    try:
        doc: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"floorctl replay printed no JSON document: {exc}") from None
    if not isinstance(doc.get("rounds"), list):
        raise ReplayError("floorctl replay's document has no 'rounds' list")
    return doc


def _cents(text: Any) -> int | None:
    try:
        value = Decimal(str(text)) * 100
    except InvalidOperation:
        return None
    return int(value) if value == value.to_integral_value() else None


def _fmt(cents: int | None) -> str:
    if cents is None:
        return "missing"
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def compare_round(number: int, exp: Expected, got: dict[str, Any]) -> Difference | None:
    what: list[str] = []
    if got.get("status") != "settled":
        what.append(f"status: floorctl says {got.get('status')!r}")
    for flag in got.get("flags", []):
        what.append(f"flag: {flag.get('rule')} {flag.get('message', '')}".rstrip())
    mine: dict[Key, int] = {}
    for player, box, hand, kind, net in exp.rows:
        mine[(player, box, hand, kind)] = mine.get((player, box, hand, kind), 0) + net
    theirs: dict[Key, int | None] = {}
    for row in got.get("settlements", []):
        try:
            key = (str(row["player"]), int(row["box"]), int(row["hand"]), str(row["kind"]))
        except (KeyError, TypeError, ValueError):
            what.append(f"row: unreadable settlement row {row!r}")
            continue
        cents = _cents(row.get("net"))
        theirs[key] = cents if key not in theirs else None
    for key in sorted(set(mine) | set(theirs)):
        a, b = mine.get(key), theirs.get(key)
        if a != b:
            player, box, hand, kind = key
            what.append(
                f"net: {player} box {box} hand {hand} {kind}: oracle {_fmt(a)}, floorctl {_fmt(b)}"
            )
    dealer = (got.get("dealer") or {}).get("cards")
    if dealer != exp.dealer:
        what.append(f"cards: dealer oracle {exp.dealer}, floorctl {dealer}")
    their_hands: dict[tuple[Any, Any], Any] = {
        (h.get("box"), h.get("hand")): h.get("cards") for h in got.get("hands", [])
    }
    my_hands: dict[tuple[Any, Any], Any] = {(b, k): cards for b, k, cards in exp.hands}
    for where in sorted(set(my_hands) | set(their_hands), key=str):
        if my_hands.get(where) != their_hands.get(where):
            what.append(
                f"cards: box {where[0]} hand {where[1]} oracle {my_hands.get(where)}, "
                f"floorctl {their_hands.get(where)}"
            )
    if not what:
        return None
    return Difference(number, what, exp, got)


def crosscheck(
    rules: Rules,
    rounds: int,
    seed: str,
    wild: float = 0.1,
    boost: float = 0.05,
    strategy_path: Path | None = None,
    exe: Path | None = None,
    keep: Path | None = None,
) -> tuple[list[Difference], int]:
    """Generate, replay and compare. Returns the differences and the rounds floorctl replayed."""
    strategy = load(strategy_path or shipped(rules.game), rules.pontoon)
    events, expected = generate(rules, strategy, rounds, seed, wild=wild, boost=boost)
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        path = keep or Path(tmp) / "scenario.jsonl"
        write(path, events)
        doc = replay(path, exe)
    got_rounds = doc["rounds"]
    diffs = []
    for i, exp in enumerate(expected):
        got = got_rounds[i] if i < len(got_rounds) else {"status": "missing"}
        diff = compare_round(i + 1, exp, got)
        if diff is not None:
            diffs.append(diff)
    if len(got_rounds) > len(expected):
        extra = Expected([], [], [], [], None)
        diffs.append(
            Difference(len(expected) + 1, [f"status: {len(got_rounds)} rounds replayed"], extra)
        )
    return diffs, len(got_rounds)


RESCUED_TIE = "a rescued wager on a hand that stands off against the dealer (issue 18)"


def case(d: Difference) -> str:
    """What the differing round is, as far as the oracle can tell: RESCUED_TIE when every
    difference is a net on a rescued wager whose hand would stand off against the dealer's
    (equal totals under 21), else the kinds of difference seen."""
    exp = d.expected
    if d.what and all(w.startswith("net:") for w in d.what):
        nets = [w for w in d.what if w.startswith("net:")]
        tie = True
        for w in nets:
            player, _, box, _, hand, kind = w[5:].split(":", 1)[0].split()
            key = (player, int(box), int(hand))
            total = exp.totals.get((int(box), int(hand)))
            tie = (
                tie
                and kind == "hand"
                and key in exp.rescued
                and total is not None
                and stands_off(total, exp.dealer_total, exp.dealer_natural)
            )
        if tie:
            return RESCUED_TIE
    return "other: " + ", ".join(sorted(d.kinds()))


def summary(diffs: list[Difference]) -> Counter[str]:
    """How many differing rounds are of each case."""
    return Counter(case(d) for d in diffs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(GAMES), required=True)
    parser.add_argument("--rounds", type=int, default=20_000)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--wild", type=float, default=0.1, help="share of off-strategy moves")
    parser.add_argument("--boost", type=float, default=0.05, help="share of stacked rounds")
    parser.add_argument("--show", type=int, default=5, help="differing rounds to print in full")
    parser.add_argument("--keep", type=Path, help="write the scenario here too")
    parser.add_argument("--dump", type=Path, help="write each shown round as its own scenario")
    parser.add_argument(
        "--floorctl", type=Path, help="the floorctl to check (default: this checkout's .venv)"
    )
    args = parser.parse_args(argv)
    rules = GAMES[args.game]
    diffs, replayed = crosscheck(
        rules,
        args.rounds,
        args.seed,
        wild=args.wild,
        boost=args.boost,
        keep=args.keep,
        exe=args.floorctl,
    )
    print(
        f"{rules.game}: {args.rounds:,} oracle rounds, {replayed:,} replayed by floorctl, "
        f"{len(diffs):,} differ"
    )
    for label, n in sorted(summary(diffs).items()):
        print(f"  {n:>7,}  {label}")
    others = [d for d in diffs if case(d) != RESCUED_TIE]
    shown = (others + [d for d in diffs if case(d) == RESCUED_TIE])[: args.show]
    for d in shown:
        print(f"\nround {d.round} ({d.expected.template or 'dealt'}, {case(d)}):")
        for w in d.what:
            print(f"  {w}")
        print("  events:", " ".join(_short(e) for e in d.expected.events))
        if args.dump is not None:
            args.dump.mkdir(parents=True, exist_ok=True)
            path = args.dump / f"{rules.game}-round-{d.round}.jsonl"
            write(path, one_round(rules, d.expected))
            print(f"  written to {path}")
    return 1 if diffs else 0


def _short(event: dict[str, object]) -> str:
    kind = event["type"]
    if kind == "card":
        return str(event["card"])
    rest = ",".join(f"{v}" for k, v in event.items() if k != "type")
    return f"[{kind} {rest}]" if rest else f"[{kind}]"


if __name__ == "__main__":
    sys.exit(main())
