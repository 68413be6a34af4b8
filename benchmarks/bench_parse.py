"""Replay and verify: events parsed and applied per CPU second, beside the parse alone; and
pydantic, the other one-class-per-kind decoder, measured on the same events.

    .venv/bin/python benchmarks/bench_parse.py [--rounds 600] [--trials 5]
    VENV/bin/python benchmarks/bench_parse.py --installed    # a venv made by pip install .

The events are a generated table's day (controller.floor.generate, as the floor's benchmark
makes them: the opening, every shoe with its cutting card, irregularities, 2% of events),
as JSON lines the way a store or a scenario holds them. Figures (CPU time, median of the
trials, this process):

1. ``decode_event`` alone (a JSON line to its event class, decoded and checked in one step by
   msgspec, as `floorctl replay` and `verify` read them); the engine's apply alone (events
   parsed beforehand); the two together; the parse's share (the aim: no more than 0.5 of
   apply);
2. ``json.loads`` + ``parse_event`` (an object already read, as the service's taps arrive)
   beside it;
3. the same events decoded by pydantic (``TypeAdapter`` of a discriminated union, one model
   per kind) with the same field checks (box 1-99, amounts of at most cents and at most the
   table's ceiling, card codes, deck counts, ids of printable text up to 64, the passthrough
   fields). Only the kinds the day holds are modelled; the share of events covered is
   printed.
"""

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

ROOT = Path(__file__).resolve().parent.parent
# --installed: the floorctl installed in this Python (pip install .); else the checkout's.
if "--installed" not in sys.argv:
    sys.path.insert(0, str(ROOT))

from controller.engine import Table, native  # noqa: E402
from controller.events import decode_event, parse_event, parse_setup  # noqa: E402
from controller.floor.generate import Shift  # noqa: E402

CARD = r"^[A23456789TJQK][SHDC]$"
NAME = r"^[^\x00-\x1f\x7f]{1,64}$"
SERIAL = r"^[A-Z0-9]{4,12}$"
CEILING = Decimal(10) ** 12


def day_of_events(rounds: int) -> tuple[dict[str, Any], list[bytes]]:
    shift = Shift(
        "T1",
        game="blackjack",
        seed=7,
        start=datetime(2026, 1, 1, tzinfo=UTC),
        irregular=0.02,
        vocabulary=True,
    )
    stream = [event for event, _at in shift.events(rounds)]
    return stream[0], [json.dumps(e).encode() for e in stream[1:]]


def cpu(fn: Callable[[], object], trials: int) -> float:
    times = []
    for _ in range(trials):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


# --- one class per kind: pydantic ---------------------------------------------------------------


def pydantic_decoder() -> Callable[[bytes], Any] | None:
    try:
        from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
    except ImportError:
        return None

    Box = Annotated[int, Field(ge=1, le=99, strict=True)]
    Amount = Annotated[Decimal, Field(ge=0, le=CEILING, decimal_places=2)]
    Name = Annotated[str, Field(pattern=NAME)]
    Serial = Annotated[str, Field(pattern=SERIAL)]
    Ids = Annotated[list[Name], Field(min_length=1, max_length=8)]

    class Base(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        time: Name | None = None
        actor: Name | None = None
        source: Annotated[str, Field(max_length=32)] | None = None
        correction_of: Annotated[int, Field(ge=1)] | None = None
        note: Annotated[str, Field(max_length=2000)] | None = None

    class Shuffle(Base):
        type: Literal["shuffle"]
        decks: Annotated[int, Field(ge=1, le=16)]
        cut_card: Annotated[int, Field(ge=0, le=1_000_000)] | None
        deck_serials: list[Serial] | None = None

    class Bet(Base):
        type: Literal["bet"]
        box: Box
        player: Name
        amount: Amount
        controls: bool = False

    class Card(Base):
        type: Literal["card"]
        card: Annotated[str, Field(pattern=CARD)]
        face_up: bool = False
        in_error: Literal["unexposed", "exposed"] | None = None
        damaged: bool = False
        deck: Serial | None = None

    class OnBox(Base):
        type: Literal["stand", "hit", "surrender", "offer_surrender", "refuse", "absent"]
        box: Box

    class Money(Base):
        type: Literal["double", "insurance"]
        box: Box
        player: Name
        amount: Amount

    class Split(Base):
        type: Literal["split"]
        box: Box
        player: Name | None = None

    class Rescue(Base):
        type: Literal["rescue"]
        box: Box
        player: Name

    class Bare(Base):
        type: Literal[
            "no_more_bets", "cut_card", "offer_insurance", "peek", "inspect_end", "shoe_end"
        ]

    class Dealer(Base):
        type: Literal["dealer"]
        dealer: Name

    class Inspect(Base):
        type: Literal["inspect"]
        deck: Serial | None = None
        by: Ids | None = None

    class OpeningStep(Base):
        type: Literal["opening_step"]
        step: Literal["spread", "chemmy", "stack", "riffle", "cut"]

    class Day(Base):
        type: Literal["open_table", "close_table"]
        by: Ids | None = None

    class Void(Base):
        type: Literal["void"]
        box: Box | None = None

    class Misread(Base):
        type: Literal["misread"]
        raw: Annotated[str, Field(max_length=512)]

    class WagerSeen(Base):
        type: Literal["wager_seen"]
        box: Box
        amount: Amount
        chips: dict[str, Annotated[int, Field(ge=0, le=1_000_000)]] | None = None
        confidence: Annotated[Decimal, Field(ge=0, le=1)] | None = None

    union = Annotated[
        Shuffle | Bet | Card | OnBox | Money | Split | Rescue | Bare | Dealer | Inspect
        | OpeningStep | Day | Void | Misread | WagerSeen,
        Field(discriminator="type"),
    ]  # fmt: skip
    return TypeAdapter(union).validate_json


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=600, help="rounds in the generated day")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument(
        "--installed", action="store_true", help="measure the floorctl installed in this Python"
    )
    args = ap.parse_args()
    line, raw = day_of_events(args.rounds)
    setup = parse_setup(line, 1)
    kinds = Counter(json.loads(r)["type"] for r in raw)
    n = len(raw)
    print(
        f"floorctl event parse benchmark: {n:,} events of a generated blackjack day "
        f"({args.rounds} rounds; {len(kinds)} kinds, card {kinds['card'] / n:.0%}), "
        f"engine {native.describe()}, median of {args.trials} trials, CPU time"
    )
    parsed = [decode_event(r) for r in raw]
    assert [p.to_dict() for p in parsed] == [parse_event(json.loads(r)).to_dict() for r in raw]

    def parse_only() -> None:
        for r in raw:
            decode_event(r)

    def loads_and_parse() -> None:
        for r in raw:
            parse_event(json.loads(r))

    def apply_only() -> None:
        table = Table(setup)
        for ev in parsed:
            table.apply(ev)

    def both() -> None:
        table = Table(setup)
        for r in raw:
            table.apply(decode_event(r))

    t_parse = cpu(parse_only, args.trials)
    t_apply = cpu(apply_only, args.trials)
    t_both = cpu(both, args.trials)
    t_dicts = cpu(loads_and_parse, args.trials)
    print(f"  {'decode_event alone (msgspec)':<44} {n / t_parse:>12,.0f} events/s")
    print(f"  {'apply alone (parsed beforehand)':<44} {n / t_apply:>12,.0f} events/s")
    print(f"  {'parsed and applied (replay, verify)':<44} {n / t_both:>12,.0f} events/s")
    print(f"  parse / apply = {t_parse / t_apply:.2f}   (aim: 0.5 or less)")
    print(
        f"  {'json.loads + parse_event (an object read)':<44} {n / t_dicts:>12,.0f} events/s"
        f"  ({t_dicts / t_apply:.2f} of apply)"
    )
    decode = pydantic_decoder()
    if decode is None:
        print("  pydantic: not installed here (pip install pydantic)")
        return 0
    covered = [r for r in raw if _decodes(decode, r)]
    left = Counter(json.loads(r)["type"] for r in raw if not _decodes(decode, r))
    if left:
        print(f"  (pydantic refused or has no class for: {dict(left)})")
    t = cpu(lambda: [decode(r) for r in covered], args.trials)
    rate = len(covered) / t
    print(
        f"  {'pydantic: decode + validate, one class per kind':<44} {rate:>12,.0f} events/s"
        f"  ({len(covered) / n:.1%} of the events; {t / len(covered) * n / t_apply:.2f} "
        "of apply)"
    )
    return 0


def _decodes(decode: Callable[[bytes], Any], raw: bytes) -> bool:
    try:
        decode(raw)
    except Exception:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
