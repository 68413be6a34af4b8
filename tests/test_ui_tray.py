"""The chip tray on the dealer's screen, in a real browser at the table PC's 1280x800: the
opener counted blind on the chip pad, a cash buy-in shown as the chips to give, a fill slip
with its number and the runner's id, and a check count $100 short that stops the table with
what the flag means and what to do. The table behind it is the real service (the live table of
test_ui_dealer_screen)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page
from test_ui_dealer_screen import (
    LiveTable,
    open_page,
    shot,
    supervisor_login,
    type_id,
    wait_for,
)
from test_ui_dealer_screen import browser as browser

WIDTH, HEIGHT = 1280, 800


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveTable]:
    t = LiveTable(tmp_path, seed=7)
    yield t
    t.close()


def inside_viewport(page: Page, selector: str) -> None:
    """Every visible control matching ``selector`` lies wholly inside the 1280x800 screen."""
    boxes = page.eval_on_selector_all(
        selector,
        "els => els.filter(e => e.offsetParent !== null).map(e => {"
        " const r = e.getBoundingClientRect();"
        " return [e.textContent.trim().slice(0, 20), r.left, r.top, r.right, r.bottom]; })",
    )
    assert boxes
    outside = [b for b in boxes if b[1] < 0 or b[2] < 0 or b[3] > WIDTH or b[4] > HEIGHT]
    assert not outside, f"controls outside the {WIDTH}x{HEIGHT} screen: {outside}"


def key_in(page: Page, digits: str) -> None:
    for d in digits:
        page.tap(f'#modal .keypad button[data-key="{d}"]')


def chips(page: Page, counts: dict[str, str]) -> None:
    for denom, n in counts.items():
        page.tap(f'#modal [data-denom="{denom}"]')
        key_in(page, n)


def recorded(live: LiveTable, kind: str) -> dict:
    """The table's own record of the last event of ``kind`` (the engine's tray records)."""
    tray = live.service.table.tray
    records = {"tray_count": tray.counts, "fill": tray.slips, "buy_in": tray.buy_in_list}[kind]
    wait_for(lambda: records, what=f"the {kind} to be recorded")
    return records[-1]


def test_a_day_of_the_tray_on_the_screen(browser: Browser, live: LiveTable) -> None:
    page = open_page(browser, live.url, (WIDTH, HEIGHT))
    supervisor_login(page)
    page.wait_for_selector('[data-sup="tray"]')
    page.evaluate("() => { document.querySelector('#modal .drawer').scrollTop = 0; }")
    inside_viewport(page, "#modal button")
    page.tap('[data-sup="tray"]')
    page.wait_for_selector('[data-tray="opener"]')
    inside_viewport(page, "#modal button")
    # The opener: $1,000 x 5 and $100 x 40, counted blind.
    page.tap('[data-tray="opener"]')
    page.wait_for_selector("#modal [data-denom]")
    chips(page, {"1000": "5", "100": "40"})
    assert page.inner_text("[data-tray-total]") == "$9000"
    assert "should hold" not in page.inner_text("#modal")
    assert page.locator("[data-tray-expected]").count() == 0
    inside_viewport(page, "#modal button")
    shot(page, "tray-opener")
    page.tap("#modal button[data-ok]")
    page.wait_for_selector("[data-tray-result]")
    assert "Counted $9000" in page.inner_text("[data-tray-result]")
    opener = recorded(live, "tray_count")
    assert opener["chips"] == {"1000": 5, "100": 40} and opener["kind"] == "opener"
    page.tap("#modal button[data-ok]")

    # A cash buy-in of $225 at box 3, shown as the chips to give.
    page.tap("#buy-in")
    key_in(page, "225")
    page.tap('#modal [data-buyin-box="3"]')
    inside_viewport(page, "#modal button")
    page.tap("#modal button[data-ok]")
    page.wait_for_selector("[data-give]")
    give = page.eval_on_selector_all("[data-give] li", "els => els.map(e => e.textContent)")
    assert give == ["2 × $100", "1 × $25"]
    bought = recorded(live, "buy_in")
    assert (bought["amount"], bought["box"], bought["kind"]) == ("225", 3, "cash")
    page.tap("#modal button[data-ok]")

    # A fill of $2,000 on slip 4471, carried by runner R7: signed by the runner and the
    # supervisor who unlocked the screen.
    page.tap("#sup-open")
    page.tap('[data-sup="tray"]')
    page.tap('[data-tray="fill"]')
    key_in(page, "4471")
    inside_viewport(page, "#modal button")
    page.tap("#modal button[data-ok]")
    type_id(page, "R7")
    inside_viewport(page, "#modal button")
    page.tap("#modal button[data-ok]")
    chips(page, {"1000": "2"})
    inside_viewport(page, "#modal button")
    page.tap("#modal button[data-ok]")
    fill = recorded(live, "fill")
    assert (fill["kind"], fill["slip"], fill["by"]) == ("fill", "4471", ["r7", "jsmith"])
    assert fill["chips"] == {"1000": 2}

    # The check count finds $10,675: the tray should hold 9,000 + 2,000 - 225 = $10,775.
    page.tap("#sup-open")
    page.tap('[data-sup="tray"]')
    page.tap('[data-tray="check"]')
    chips(page, {"1000": "10", "500": "1", "100": "1", "25": "3"})
    assert "should hold" not in page.inner_text("#modal")
    page.tap("#modal button[data-ok]")
    page.wait_for_selector("[data-tray-result]")
    assert page.inner_text("[data-tray-expected]") == "$10775"
    assert page.inner_text("[data-tray-difference]") == "$100.00 short"
    # The tray flag stops the table like any flag: what it means, what to do, who acts.
    page.wait_for_selector("#alerts:not(.hidden)")
    alert = page.inner_text("#alerts")
    assert "$100.00 short" in alert
    assert "touch nothing in the tray" in alert
    assert "mispay" in alert
    inside_viewport(page, "#alerts button")
    shot(page, "tray-flag")
    flags = [f for f in live.service.pending.values() if f.get("rule") == "tray"]
    assert len(flags) == 1
