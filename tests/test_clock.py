"""A wall clock stepped during play is never silent (issue 25, item 6).

The table's clocks are injected (a fake wall clock and a fake monotonic clock that the test
moves), never the machine's own. The attack: the wall clock set back an hour in the middle of
a round. The record must then carry a ``clock`` event before the next event, the dealer's
screen a ``clock`` alert, the log a warning; and in the stored log ``recorded_at`` may run
backwards only right after a ``clock`` event. `floorctl verify` must still pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from controller.cli import main
from controller.service.app import Table, open_table
from controller.service.pin import hash_pin
from controller.store.clockwatch import ClockWatch
from controller.store.repository import Store

LINE = {
    "type": "table",
    "table_id": "T07",
    "game": "pontoon-nz-2000",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
}
SUPERVISORS = {"jsmith": hash_pin("2468", iterations=1000)}
PLAY = [
    {"type": "shuffle", "decks": 6, "cut_card": 200},
    {"type": "bet", "box": 1, "player": "p1", "amount": 10},
    {"type": "bet", "box": 2, "player": "p2", "amount": 20},
    {"type": "no_more_bets"},
    {"type": "card", "card": "9S"},
    {"type": "card", "card": "5H"},
    {"type": "card", "card": "7D"},
]


class FakeClocks:
    """A wall clock a person can set, and a monotonic clock only time moves."""

    def __init__(self) -> None:
        self.wall = datetime(2026, 12, 2, 20, 0, tzinfo=UTC)
        self.mono = 5000.0

    def now(self) -> str:
        return self.wall.isoformat(timespec="microseconds").replace("+00:00", "Z")

    def monotonic(self) -> float:
        return self.mono

    def passes(self, seconds: float) -> None:
        self.wall += timedelta(seconds=seconds)
        self.mono += seconds

    def set_by(self, seconds: float) -> None:
        self.wall += timedelta(seconds=seconds)


@pytest.fixture
def clocks() -> FakeClocks:
    return FakeClocks()


def opened(url: str, clocks: FakeClocks, forward: float = 120.0) -> Table:
    return open_table(
        LINE,
        url,
        SUPERVISORS,
        spool=False,
        clock=clocks.now,
        watch=ClockWatch(forward_bound=forward, monotonic=clocks.monotonic),
    )


def play(table: Table, clocks: FakeClocks, events: list[dict[str, Any]]) -> None:
    for event in events:
        clocks.passes(2.0)
        table.service.submit(event, source="dealer")


def stored(url: str) -> list[tuple[int, str, str, dict[str, Any]]]:
    with Store.open(url, create=False) as store:
        return [
            (r.seq, r.event()["type"], r.recorded_at, r.event()) for r in store.iter_records("T07")
        ]


def assert_never_backwards_unseen(rows: list[tuple[int, str, str, dict[str, Any]]]) -> None:
    for before, after in itertools.pairwise(rows):
        if after[2] < before[2]:
            assert after[1] == "clock", f"event {after[0]} recorded before event {before[0]}"


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'audit.db'}"


def test_a_clock_set_back_an_hour_mid_round_is_recorded_flagged_and_logged(
    url: str, clocks: FakeClocks
) -> None:
    table = opened(url, clocks)
    try:
        play(table, clocks, PLAY[:4])
        clocks.set_by(-3600)
        with capture_logs() as logs:
            play(table, clocks, PLAY[4:])
        snapshot = table.service.snapshot()
        alert = next(a for a in snapshot["alerts"] if a["rule"] == "clock")
        # The dealer taps Seen: recorded like any flag's acknowledgement, and the alert goes.
        table.service.submit(
            {"type": "acknowledge", "flag_event": alert["seq"], "rule": "clock"}, source="dealer"
        )
        assert not [a for a in table.service.snapshot()["alerts"] if a["rule"] == "clock"]
    finally:
        table.close()
    rows = stored(url)[:-1]  # (the acknowledgement last)
    kinds = [k for _s, k, _a, _b in rows]
    assert kinds == [
        "table",
        "shuffle",
        "bet",
        "bet",
        "no_more_bets",
        "clock",
        "card",
        "card",
        "card",
    ]
    clock = rows[5][3]
    assert clock["was"] == rows[4][2] and clock["now"] == rows[5][2] < clock["was"]
    assert float(clock["elapsed"]) == pytest.approx(2.0)
    assert_never_backwards_unseen(rows)
    steps = [e for e in logs if "wall clock was stepped" in e["event"]]
    assert len(steps) == 1 and steps[0]["way"] == "back" and steps[0]["log_level"] == "warning"
    assert steps[0]["step_seconds"] == pytest.approx(-3600)
    alerts = [a for a in snapshot["alerts"] if a["rule"] == "clock"]
    assert len(alerts) == 1, snapshot["alerts"]
    assert "stepped back by 1 h 00 min 00 s" in alerts[0]["message"]
    assert alerts[0]["direction"] and alerts[0]["words"]
    # The record still verifies: the clock event and its flag are the engine's, replayed alike.
    assert main(["verify", "--db", url]) == 0


def test_a_clock_set_forward_beyond_the_bound_is_flagged_and_within_it_is_not(
    url: str, clocks: FakeClocks
) -> None:
    table = opened(url, clocks, forward=120.0)
    try:
        play(table, clocks, PLAY[:2])
        clocks.set_by(100)  # within the bound (an NTP step after a long drift): not flagged
        play(table, clocks, PLAY[2:3])
        clocks.set_by(3 * 3600)
        play(table, clocks, PLAY[3:4])
    finally:
        table.close()
    rows = stored(url)
    assert [k for _s, k, _a, _b in rows] == [
        "table",
        "shuffle",
        "bet",
        "bet",
        "clock",
        "no_more_bets",
    ]
    assert float(rows[4][3]["elapsed"]) == pytest.approx(2.0)
    with Store.open(url, create=False) as store:
        flags = [f for f in store_flags(store) if f["rule"] == "clock"]
    assert len(flags) == 1 and "stepped forward by 3 h 00 min 00 s" in flags[0]["message"]


def store_flags(store: Store) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [
            dict(r._mapping)
            for r in conn.exec_driver_sql("SELECT rule, message, seq FROM flags ORDER BY seq")
        ]


def test_a_small_step_back_keeps_the_order_without_a_flag(url: str, clocks: FakeClocks) -> None:
    table = opened(url, clocks)
    try:
        play(table, clocks, PLAY[:2])
        clocks.mono += 0.3  # 0.3 s pass and the clock is set back 0.8 s (an NTP correction):
        clocks.set_by(-0.5)  # it reads 0.5 s before the last event
        table.service.submit(PLAY[2], source="dealer")
    finally:
        table.close()
    rows = stored(url)
    assert "clock" not in [k for _s, k, _a, _b in rows]
    assert rows[3][2] == rows[2][2]  # recorded at the last event's time, not before it
    assert_never_backwards_unseen(rows)


def test_a_clock_behind_the_stored_log_at_restart_is_flagged(url: str, clocks: FakeClocks) -> None:
    table = opened(url, clocks)
    try:
        play(table, clocks, PLAY[:3])
    finally:
        table.close()
    clocks.set_by(-86_400)  # restarted with the clock a day behind (a dead RTC battery)
    clocks.mono = 10.0  # a new boot: the monotonic clock started again
    table = opened(url, clocks)
    try:
        play(table, clocks, PLAY[3:4])
        assert [a["rule"] for a in table.service.snapshot()["alerts"]] == ["clock"]
    finally:
        table.close()
    rows = stored(url)
    assert [k for _s, k, _a, _b in rows][-2:] == ["clock", "no_more_bets"]
    assert "elapsed" not in rows[-2][3]  # nothing measured the time across the restart
    assert_never_backwards_unseen(rows)
    # A later restart with the clock right again: the table goes on, no new clock event.
    clocks.set_by(86_400)
    table = opened(url, clocks)
    try:
        play(table, clocks, PLAY[4:5])
    finally:
        table.close()
    assert [k for _s, k, _a, _b in stored(url)][-1] == "card"


def test_a_clock_event_from_outside_is_an_input_error_when_malformed() -> None:
    from controller.events import ScenarioError, parse_event

    good = parse_event(
        {"type": "clock", "was": "2026-12-02T20:00:00Z", "now": "2026-12-02T19:00:00Z"}
    )
    assert good.was == "2026-12-02T20:00:00Z"
    for bad in (
        {"type": "clock", "was": "yesterday", "now": "2026-12-02T19:00:00Z"},
        {"type": "clock", "was": "2026-12-02T20:00:00", "now": "2026-12-02T19:00:00Z"},
        {"type": "clock", "was": "2026-12-02T20:00:00Z"},
        {
            "type": "clock",
            "was": "2026-12-02T20:00:00Z",
            "now": "2026-12-02T19:00:00Z",
            "elapsed": -1,
        },
        {
            "type": "clock",
            "was": "2026-12-02T20:00:00Z",
            "now": "2026-12-02T19:00:00Z",
            "elapsed": "nan",
        },
    ):
        with pytest.raises(ScenarioError):
            parse_event(bad)
