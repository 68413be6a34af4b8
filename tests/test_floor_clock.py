"""The floor's time queries after a table's clock was set back (issue 25, item 6).

A table (the generator's play, recorded by the store's own Recorder with injected clocks) has
its wall clock set back in the middle of its shift, so later rounds carry times earlier rounds
already had. `floor round --at` such a time must not pick one of them silently: it names every
round in play by the clock, in the order played, and the clock event between them; rounds
are listed in the order played, not by their recorded times.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_floor_support import pg_schema, quiet

from controller.floor.generate import Shift, iso
from controller.store.clockwatch import ClockWatch
from controller.store.recorder import Recorder
from controller.store.repository import Store

START = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)  # 19:00 NZDT


class Clocks:
    def __init__(self) -> None:
        self.wall = START
        self.mono = 100.0

    def now(self) -> str:
        return iso(self.wall)


def record_with_a_step_back(url: str) -> int:
    """Record 8 rounds; after the 4th, the wall clock goes back half the time played so far.
    Returns the step back in seconds."""
    events = list(Shift("T09", seed=5, start=START).events(8))
    clocks = Clocks()
    ends = [i for i, (e, _at) in enumerate(events) if e["type"] == "card"]
    step_at = ends[len(ends) // 2]
    times = [datetime.fromisoformat(at) for _e, at in events]
    back = (times[step_at] - times[0]).total_seconds() / 2
    with Store.open(url) as store:
        rec = Recorder.open(
            store,
            events[0][0],
            spool=None,
            retry_every=None,
            clock=clocks.now,
            watch=ClockWatch(monotonic=lambda: clocks.mono),
        )
        try:
            for i, ((event, _at), moment) in enumerate(zip(events, times, strict=True)):
                if i == 0:
                    continue
                clocks.mono = 100.0 + (moment - times[0]).total_seconds()
                clocks.wall = moment - timedelta(seconds=back if i >= step_at else 0)
                rec.record(event)
        finally:
            rec.close()
    return int(back)


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp: Path = tmp_path_factory.mktemp("floor-clock")
    store = f"sqlite:///{tmp / 'T09.db'}"
    record_with_a_step_back(store)
    for url in pg_schema():
        assert quiet(["ship", "--db", store, "--to", url])[0] == 0
        yield url


def round_doc(floor: str, number: int) -> dict[str, Any]:
    status, out = quiet(
        ["floor", "round", "--db", floor, "--table", "T09", "--round", str(number), "--json"]
    )
    assert status == 0, out
    return json.loads(out)


def test_a_time_two_rounds_share_names_both_in_the_order_played(
    floor: str, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [round_doc(floor, n) for n in range(1, 9)]
    spans = [
        (
            d["round"],
            datetime.fromisoformat(d["started"]["utc"].replace("Z", "+00:00")),
            datetime.fromisoformat(d["ended"]["utc"].replace("Z", "+00:00")),
            d["events"]["first"],
        )
        for d in docs
    ]
    # A moment inside a round played after the step, that an earlier round also covers.
    found = None
    for late in spans:
        for early in spans:
            if early[3] < late[3]:
                lo, hi = max(early[1], late[1]), min(early[2], late[2])
                if lo < hi:
                    found = (early[0], late[0], lo + (hi - lo) / 2)
                    break
        if found:
            break
    assert found is not None, spans  # the clock set back made rounds overlap in time
    early_round, late_round, moment = found
    capsys.readouterr()
    status, _out = quiet(
        ["floor", "round", "--db", floor, "--table", "T09", "--at", moment.isoformat()]
    )
    err = capsys.readouterr().err
    assert status == 2, err
    assert f"round {early_round} (events" in err and f"round {late_round} (events" in err
    assert err.index(f"round {early_round} (") < err.index(f"round {late_round} (")
    assert "clock was set back in between (clock event" in err and "--round N" in err
    # A time only one round covers still finds it.
    first = spans[0]
    status, out = quiet(
        [
            "floor",
            "round",
            "--db",
            floor,
            "--table",
            "T09",
            "--at",
            (first[1] + timedelta(seconds=1)).isoformat(),
            "--json",
        ]
    )
    assert status == 0 and json.loads(out)["round"] == 1


def test_the_clock_event_is_on_the_floor_with_its_flag(floor: str) -> None:
    flags = [f for n in range(1, 9) for f in round_doc(floor, n)["flags"] if f["rule"] == "clock"]
    assert len(flags) == 1 and "stepped back by" in flags[0]["message"]
