"""The clock alert on the dealer's screen, in Debian's Chromium at the screen's real sizes
(issue 25, item 6): the table's wall clock (injected, never the machine's) is set back an hour
mid-round; the screen must stop on a "Clock changed" banner saying what happened and what to
do, and the dealer's Seen must be recorded as the acknowledgement of the clock flag."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Browser
from service_server import Served
from test_ui_dealer_screen import SIZES, browser, shot, wait_for  # noqa: F401 - the fixture
from test_ui_screen_states import sign_in

from controller.store.clockwatch import ClockWatch

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Clocks:
    def __init__(self) -> None:
        self.wall = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
        self.mono = 50.0

    def now(self) -> str:
        self.wall += timedelta(seconds=1)  # each reading a second on, on both clocks
        self.mono += 1
        return self.wall.isoformat(timespec="microseconds").replace("+00:00", "Z")


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()


@pytest.fixture
def served(tmp_path: Path, clocks: Clocks) -> Iterator[Served]:
    s = Served(tmp_path, clock=clocks.now, watch=ClockWatch(monotonic=lambda: clocks.mono))
    yield s
    s.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_clock_set_back_stops_the_screen_on_a_banner_until_seen(
    browser: Browser,  # noqa: F811
    served: Served,
    clocks: Clocks,
    size: tuple[int, int],
) -> None:
    page = browser.new_page(viewport={"width": size[0], "height": size[1]}, has_touch=True)
    try:
        page.goto(served.url)
        page.wait_for_selector("#boxes .box")
        sign_in(page)
        service = served.service
        for event in (
            {"type": "shuffle", "decks": 6, "cut_card": 216},
            {"type": "bet", "box": 1, "player": "p1", "amount": 10},
        ):
            assert service.submit(event, source="dealer", actor=service.dealer).ok
        clocks.wall -= timedelta(hours=1)
        assert service.submit({"type": "no_more_bets"}, source="dealer", actor=service.dealer).ok
        alert = page.locator('#alerts .alert[data-rule="clock"]')
        alert.wait_for()
        text = alert.inner_text()
        assert "Clock changed" in text
        assert "stepped back by 1 h 00 min" in text
        assert "tell the supervisor" in text and "clock was changed" in text
        shot(page, "flag-clock")
        seq = service.seq
        page.tap('#alerts .alert[data-rule="clock"] button[data-ack]')
        wait_for(lambda: service.seq > seq, what="the acknowledgement")
        ack = served.table.store.records("T07")[-1].event()
        assert (ack["type"], ack["rule"], ack["actor"]) == ("acknowledge", "clock", "ann")
        page.wait_for_selector("#alerts", state="hidden")
    finally:
        page.close()
