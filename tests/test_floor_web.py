"""`floorctl floor serve` in Debian's Chromium (headless, via Playwright): logins and roles, the
floor updating live, a round found by time and watched step by step, a report, flags, the
lookup log. Screenshots go to artifacts/floor/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import test_floor_support as support
from playwright.sync_api import Browser, Page, sync_playwright
from test_floor_support import FloorData, quiet, record

from controller.floor import users
from controller.floor.audit import Who
from controller.floor.generate import Shift
from controller.floor.pit import money
from controller.floor.schema import Floor, open_floor
from controller.floor.web import FloorServer

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts" / "floor"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORDS = {"sally": "watching the floor 1", "pete": "pit boss password 2"}

floor_data = support.floor_data


@pytest.fixture(scope="module")
def served(floor_data: FloorData) -> Iterator[tuple[Floor, str]]:
    floor = open_floor(floor_data.url)
    who = Who("test-admin", "cli", "cli")
    users.add_user(floor, who, "sally", "surveillance", PASSWORDS["sally"])
    users.add_user(floor, who, "pete", "pit", PASSWORDS["pete"])
    server = FloorServer(floor, "127.0.0.1", 0, poll=0.3)
    with server.running() as url:
        yield floor, url
    floor.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


def login(browser: Browser, url: str, name: str, password: str | None = None) -> Page:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    assert "/login" in page.url
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password or PASSWORDS[name])
    page.click("button[type=submit]")
    return page


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def lookups(floor: Floor, who: str) -> list[dict[str, Any]]:
    from controller.floor.audit import lookups as rows

    return rows(floor, who=who)


def test_no_page_without_a_login(served: tuple[Floor, str]) -> None:
    _floor, url = served
    for path in (
        "/",
        "/round?table=T01&round=1",
        "/report?table=T01&date=2026-12-01",
        "/lookups",
        "/evidence?table=T01&round=1",
    ):
        r = httpx.get(url.rstrip("/") + path, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login")
    r = httpx.get(url + "api/floor")
    assert r.status_code == 401


def test_a_wrong_password_is_refused_and_logged_then_locks_out(
    served: tuple[Floor, str], browser: Browser
) -> None:
    floor, url = served
    page = login(browser, url, "sally", "not her password")
    assert page.locator(".error").inner_text() == "Wrong name or password."
    shot(page, "login-refused")
    assert any(
        r["what"] == "login" and r["outcome"].startswith("refused") for r in lookups(floor, "sally")
    )
    for _ in range(5):  # five wrong passwords lock the name out
        r = httpx.post(url + "login", data={"name": "nobody-here", "password": "x" * 12})
        assert r.status_code == 401
    r = httpx.post(url + "login", data={"name": "nobody-here", "password": "x" * 12})
    assert r.status_code == 429 and "try again" in r.text
    page.close()


def test_the_floor_page_lists_the_tables_and_updates_live(
    served: tuple[Floor, str], browser: Browser, floor_data: FloorData
) -> None:
    floor, url = served
    page = login(browser, url, "pete")
    page.wait_for_selector("#floor-rows .tile[data-table=T01]")
    assert page.locator("#floor-rows .tile").count() == 3
    assert "closed" in page.locator("#floor-rows .tile[data-table=T01]").inner_text().lower()
    t02 = page.locator("#floor-rows .tile[data-table=T02]").inner_text().lower()
    assert "between rounds" in t02
    # The shipped shifts ended long ago: a table not closed is marked silent, a closed one not.
    assert page.locator("#floor-rows .tile[data-table=T02].stale .stale-mark").count() == 1
    assert page.locator("#floor-rows .tile[data-table=T01].stale").count() == 0
    shot(page, "floor")
    # A new table ships while the page is open: it appears without a reload.
    shift = Shift("T03", seed=13, start=support.T01_START)
    events = list(shift.events(3))
    store = f"sqlite:///{floor_data.tmp / 'T03.db'}"
    record(store, events[:-4])  # the last round not finished yet
    assert quiet(["ship", "--db", store, "--to", floor_data.url])[0] == 0
    page.wait_for_selector("#floor-rows .tile[data-table=T03]", timeout=15000)
    page.wait_for_function(
        "document.querySelector('#floor-rows .tile[data-table=T03] .status').textContent"
        " === 'dealing'",
        timeout=15000,
    )
    shot(page, "floor-live")
    assert any(r["what"] == "floor" for r in lookups(floor, "pete"))
    page.close()


def test_the_pit_opens_todays_report_and_flags_and_a_flags_round(
    served: tuple[Floor, str], browser: Browser
) -> None:
    floor, url = served
    today = floor.settings.today().isoformat()
    page = login(browser, url, "pete")
    page.wait_for_selector("#floor-rows .tile[data-table=T02]")
    # An open flag on a tile names its rule and opens its round.
    flag = page.locator("#floor-rows .tile .open-flags a").first
    if flag.count():
        rule = flag.locator(".rule").inner_text()
        flag.click()
        page.wait_for_selector("#s-boxes .box")
        assert "round=" in page.url and rule in page.inner_text("main")
        page.go_back()
        page.wait_for_selector("#floor-rows .tile[data-table=T02]")
    page.click("#floor-rows .tile[data-table=T02] a[data-report]")
    page.wait_for_selector("#figures")
    assert f"gaming day {today}" in page.content()
    # The flags page opened from the menu shows today's flags, its day filled in.
    page.goto(url + "flags")
    page.wait_for_selector("#flag-list")
    assert page.input_value("#flag-form input[name=date]") == today
    page.close()


def test_a_round_found_by_time_and_watched_step_by_step(
    served: tuple[Floor, str], browser: Browser, floor_data: FloorData
) -> None:
    floor, url = served
    page = login(browser, url, "sally")
    page.goto(url + "round")
    closed = floor_data.closed("T01")
    chain = floor_data.chain("T01")
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    settled_at = datetime.fromisoformat(chain[closed[9]].replace("Z", "+00:00"))
    typed = (settled_at - timedelta(seconds=1)).astimezone(ZoneInfo("Pacific/Auckland"))
    page.select_option("#by-time select[name=table]", "T01")
    page.fill("#by-time input[name=at]", typed.strftime("%Y-%m-%d %H:%M:%S"))
    shot(page, "find-a-round")
    page.click("#by-time button[type=submit]")
    page.wait_for_selector("#s-boxes .box")
    assert page.locator("h1").first.inner_text().startswith("Table T01 · round 9")
    doc = json.loads(page.locator("#round-data").inner_text())
    oracle = next(r for r in floor_data.oracle("T01")["rounds"] if r["round"] == 9)
    assert doc["hands"] == oracle["hands"]
    steps = doc["steps"]
    # Step through: after each card event, the card shows in the box (or dealer) it went to.
    cards_seen = 0
    for i, step in enumerate(steps):
        if i:
            page.click("#next")
        page.wait_for_function(f"document.body.dataset.step === '{i}'")
        # Every step of round 9's page is headed round 9 (before its first wager the table
        # still shows round 8: the heading says so, not "Round 8").
        assert page.inner_text("#s-round").startswith("Round 9"), (i, page.inner_text("#s-round"))
        for moved in step["moved"]:
            where = (
                "#s-dealer"
                if moved["to"] == "dealer"
                else (
                    f"#s-boxes .box[data-box='{moved['box']}'] .hand[data-hand='{moved['hand']}']"
                )
            )
            card = page.locator(f"{where} .card.new[data-card='{moved['card']}']")
            assert card.count() >= 1, (step["seq"], moved)
            cards_seen += 1
            if cards_seen in (1, 6):
                shot(page, f"watch-step-{i + 1:02d}")
        assert f"#{step['seq']}" in page.locator("#s-event").inner_text()
    assert cards_seen == sum(1 for c in doc["cards"] if c["to"])
    shot(page, "watch-last-step")
    # The settled screen shows each box's payout as the dealer's screen did.
    last = steps[-1]["screen"]
    paid = [b for b in last["boxes"] if b["payouts"]]
    assert paid and page.locator("#s-boxes .payout").count() == len(paid)
    # Each line says the chips the step's payouts name (never "collect (undefined)").
    for box in paid:
        where = f"#s-boxes .box[data-box='{box['box']}'] .payout strong"
        said = page.locator(where).all_inner_texts()
        assert said == [
            "push" if p["action"] == "push" else f"{p['action']} {p['amount']}"
            for p in box["payouts"]
        ], box
    assert "undefined" not in page.locator("#s-boxes").inner_text()
    # Amounts read as money: "Wagered $75.00; the house won -$12.50."
    from decimal import Decimal

    from controller.engine.tray import dollars

    body = page.locator(f"#round-{doc['round']}").inner_text()
    wagered, result = (dollars(Decimal(doc[k])) for k in ("wagered", "result"))
    assert f"Wagered {wagered}; the house won {result}." in body
    assert all(dollars(Decimal(s["net"])) in body for s in doc["settlements"])
    assert any(r["what"] == "round" and r["params"].get("at") for r in lookups(floor, "sally"))
    page.close()


def test_a_report_and_flags_and_the_lookup_log(served: tuple[Floor, str], browser: Browser) -> None:
    _floor, url = served
    page = login(browser, url, "pete")
    page.goto(url + "report?table=T01&date=2026-12-01")
    page.wait_for_selector("#figures")
    doc = json.loads(
        quiet(
            [
                "floor",
                "report",
                "--db",
                served[0].url,
                "--table",
                "T01",
                "--date",
                "2026-12-01",
                "--json",
            ]
        )[1]
    )
    assert page.locator("#result").inner_text() == money(doc["result"])
    assert page.locator("#result-share").inner_text() == doc["result_pct_of_wagered"]
    shot(page, "report")
    pdf = page.request.get(url + "report.pdf?table=T01&date=2026-12-01")
    assert pdf.status == 200 and pdf.body().startswith(b"%PDF")
    page.goto(url + "flags?date=2026-12-01&table=T01")
    page.wait_for_selector("#flag-list")
    assert page.locator("#flag-list tbody tr").count() == sum(
        f["count"] for f in doc["flags_by_rule"]
    )
    shot(page, "flags")
    # The pit may not read the lookup log nor take evidence away.
    page.goto(url + "lookups")
    assert "may not see this page" in page.locator("#message").inner_text()
    r = page.request.get(url + "evidence?table=T01&round=1")
    assert r.status == 403
    page.close()
    page = login(browser, url, "sally")
    page.goto(url + "lookups?who=pete")
    page.wait_for_selector("#lookups")
    text = page.locator("#lookups").inner_text()
    assert "report" in text and "flags" in text and "refused: the pit role" in text
    shot(page, "lookup-log")
    r = page.request.get(url + "evidence?table=T01&round=3")
    assert r.status == 200 and r.body()[:2] == b"PK"
    page.close()


def test_bad_questions_on_the_web_are_pages_not_tracebacks(
    served: tuple[Floor, str], browser: Browser
) -> None:
    _floor, url = served
    page = login(browser, url, "sally")
    for path, words in (
        ("round?table=T99&round=1", "no table 'T99' on the floor"),
        ("round?table=T01&at=2026-11-30 05:00", "no round was in play"),
        ("round?table=T01&at=tomorrow", "is not a time"),
        ("round?table=T01&round=abc", "is not a round number"),
        ("report?table=T01&date=2026-02-30", "is not a date"),
        ("flags?date=2026-12-01&shift=lunch", "no shift"),
    ):
        response = page.goto(url + path)
        assert response is not None and response.status in (400, 404)
        assert words in page.locator("#message").inner_text()
    shot(page, "bad-question")
    page.close()


def test_floorctl_floor_serve_listens_on_loopback_and_stops_on_sigterm(
    floor_data: FloorData,
) -> None:
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "floor",
            "serve",
            "--db",
            floor_data.url,
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("floorctl floor: serving on http://127.0.0.1:"), line
        url = line.split()[4]
        r = httpx.get(url + "login")
        assert r.status_code == 200 and "Every lookup on the floor is logged" in r.text
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
