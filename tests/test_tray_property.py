"""The tray against an oracle: random gaming days of random legal rounds with random tray events.

The rounds and their nets come from the independent oracle (`benchmarks/oracle/`, written from
the rule book without reading the engine). The tray is modelled here, from the event
reference's words alone, as the physical chips would move: each round pays or takes the
oracle's nets, a fill adds its chips, a credit and a buy-in take theirs away, and every count
counts what is physically there. With no fault, no `tray` or `slip` flag may be raised and each
day's win (closer - opener + credits - fills + drop) must equal the oracle's house net to the
cent. With one mispay of any amount (the dealer pays `m` too much, or too little), exactly one
`tray` flag must be raised, at the first count after it, naming `m`; the day's win then differs
from the house net by exactly `-m`.

    .venv/bin/python -m pytest -q tests/test_tray_property.py
    FLOORCTL_SLOW_CHECKS=1 .venv/bin/python -m pytest -q tests/test_tray_property.py  # more days
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.oracle.game import BLACKJACK, PONTOON  # noqa: E402
from benchmarks.oracle.scenario import generate  # noqa: E402
from benchmarks.oracle.strategy import load, shipped  # noqa: E402
from controller.engine import Table  # noqa: E402
from controller.events import parse_event, parse_setup  # noqa: E402

SLOW = bool(os.environ.get("FLOORCTL_SLOW_CHECKS"))
# The tray's chips, in cents, largest first (a cent chip only so any amount can be counted).
DENOMINATIONS = (
    (500_000, "5000"),
    (100_000, "1000"),
    (10_000, "100"),
    (2_500, "25"),
    (500, "5"),
    (100, "1"),
    (1, "0.01"),
)
STRATEGIES = {r.game: load(shipped(r.game), r.pontoon) for r in (PONTOON, BLACKJACK)}


def chips(cents: int) -> dict[str, int]:
    """A pile of chips worth exactly ``cents`` (greedy, largest chips first)."""
    assert cents >= 0
    out: dict[str, int] = {}
    for value, name in DENOMINATIONS:
        n, cents = divmod(cents, value)
        if n:
            out[name] = n
    return out or {"1": 0}


def dollars(cents: int) -> str:
    return str(Decimal(cents) / 100)


@dataclass
class Day:
    """What the oracle says one gaming day comes to, in cents."""

    opener: int
    fills: int = 0
    credits: int = 0
    buy_ins: int = 0
    house_net: int = 0
    closer: int = 0


@dataclass
class Plan:
    events: list[dict[str, Any]] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)  # the seq of each tray_count, in order
    days: list[Day] = field(default_factory=list)


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["fill", "credit", "cash", "marker", "check", "new_day"]),
        st.integers(1, 400_000),  # cents
    ),
    max_size=3,
)


def build_day(
    game: str,
    seed: int,
    rounds: int,
    gaps: list[list[tuple[str, int]]],
    mispay: tuple[int, int] | None,
) -> tuple[dict[str, Any], Plan, int | None]:
    """The scenario: the oracle's rounds with the tray's events between them. Returns the table
    line, the plan, and the index in ``plan.counts`` of the count that must catch the mispay."""
    rules = PONTOON if game == PONTOON.game else BLACKJACK
    events, expected = generate(rules, STRATEGIES[game], rounds, f"tray-{seed}", wild=0.1)
    plan = Plan()
    seq = 0
    tray = 2_000_000_00  # $2,000,000 in cents: no round or credit here can empty it
    slip_no = 1000
    catch: int | None = None
    pending_mispay = False

    def add(ev: dict[str, Any]) -> None:
        nonlocal seq
        seq += 1
        plan.events.append(ev)

    def count(kind: str) -> None:
        nonlocal pending_mispay, catch
        add({"type": "tray_count", "kind": kind, "chips": chips(tray), "by": ["d1", "s1"]})
        plan.counts.append(seq)
        if pending_mispay:
            catch = len(plan.counts) - 1
            pending_mispay = False

    def open_day() -> None:
        count("opener")
        plan.days.append(Day(opener=tray))

    def close_day() -> None:
        day = plan.days[-1]
        count("closer")
        day.closer = tray
        add({"type": "drop_count", "amount": dollars(day.buy_ins), "by": ["c1", "c2"]})

    open_day()
    p = 1
    for i, exp in enumerate(expected):
        for action, cents in gaps[i % len(gaps)] if gaps else ():
            day = plan.days[-1]
            if action in ("fill", "credit"):
                slip_no += 1
                amount = cents // 10_000 * 10_000 + 10_000  # whole $100 chips
                add(
                    {
                        "type": action,
                        "slip": slip_no,
                        "chips": chips(amount),
                        "by": ["r1", "s1", "d1"],
                    }
                )
                if action == "fill":
                    tray += amount
                    day.fills += amount
                else:
                    tray -= amount
                    day.credits += amount
            elif action in ("cash", "marker"):
                add({"type": "buy_in", "amount": dollars(cents), "kind": action})
                tray -= cents
                day.buy_ins += cents
            elif action == "check":
                count("check")
            else:
                close_day()
                open_day()
        while events[p]["type"] == "shuffle":
            add(events[p])
            p += 1
        played = events[p : p + len(exp.events)]
        assert played == exp.events, "the oracle's scenario is not rounds between shuffles"
        for ev in played:
            add(ev)
        p += len(exp.events)
        net = -sum(row[4] for row in exp.rows)  # the house's net of the round, in cents
        tray += net
        plan.days[-1].house_net += net
        if mispay is not None and mispay[0] == i:
            tray -= mispay[1]  # paid mispay[1] too much (a negative: too little)
            pending_mispay = True
    close_day()
    return events[0], plan, catch


def replay(line: dict[str, Any], plan: Plan) -> tuple[Table, list[Any]]:
    t = Table(parse_setup(line))
    flags = []
    for ev in plan.events:
        flags.extend(t.apply(parse_event(ev)).flags)
    return t, flags


DAYS = st.tuples(
    st.sampled_from([PONTOON.game, BLACKJACK.game]),
    st.integers(0, 10**6),
    st.integers(1, 30),
    st.lists(ACTIONS, min_size=1, max_size=6),
)
EXAMPLES = 200 if SLOW else 12


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DAYS)
def test_no_fault_no_flag_and_each_days_win_is_the_house_net(day: tuple) -> None:
    game, seed, rounds, gaps = day
    line, plan, _ = build_day(game, seed, rounds, gaps, None)
    t, flags = replay(line, plan)
    assert flags == [], [(f.rule, f.message) for f in flags]
    doc = t.result()["tray"]
    assert len(doc["days"]) == len(plan.days)
    for got, want in zip(doc["days"], plan.days, strict=True):
        win = want.closer - want.opener + want.credits - want.fills + want.buy_ins
        assert win == want.house_net  # the oracle's own books balance
        assert Decimal(got["win"]) == Decimal(want.house_net) / 100
        assert Decimal(got["house_net"]) == Decimal(want.house_net) / 100
        assert Decimal(got["difference"]) == 0
    assert all(Decimal(c["difference"] or 0) == 0 for c in doc["counts"])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DAYS, st.data())
def test_one_mispay_is_one_tray_flag_at_the_next_count_naming_the_amount(
    day: tuple, data: st.DataObject
) -> None:
    game, seed, rounds, gaps = day
    at = data.draw(st.integers(0, rounds - 1), label="mispaid round")
    cents = data.draw(
        st.integers(-50_000_00, 50_000_00).filter(lambda c: c != 0), label="mispaid cents"
    )
    line, plan, catch = build_day(game, seed, rounds, gaps, (at, cents))
    assert catch is not None
    t, flags = replay(line, plan)
    assert [f.rule for f in flags] == ["tray"], [(f.rule, f.message) for f in flags]
    [flag] = flags
    assert flag.seq == plan.counts[catch]
    amount = f"${abs(Decimal(cents) / 100):,.2f} {'short' if cents > 0 else 'over'}"
    assert amount in flag.message
    doc = t.result()["tray"]
    differences = [Decimal(c["difference"] or 0) for c in doc["counts"]]
    assert differences[catch] == Decimal(-cents) / 100
    assert sum(1 for d in differences if d) == 1
    days = [Decimal(d["difference"]) for d in doc["days"]]
    assert sorted(days, key=abs)[-1] == Decimal(-cents) / 100 and sum(1 for d in days if d) == 1
