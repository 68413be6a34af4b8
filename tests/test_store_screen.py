"""STORE DOWN on the dealer's screen, in a real browser: the whole screen says play is
halted and why, taps are refused, the cards the shoe read meanwhile are listed as not
recorded, and the screen clears by itself once the store is back, the cards then recorded
in the order they were read.

The table runs without a spool and another connection holds its SQLite database locked,
so the store can take nothing (the same state a full disk under a full spool gives).
"""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright
from test_ui_dealer_screen import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    LiveTable,
    open_page,
    shot,
    wait_for,
)

from controller.store.repository import Store


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def tap(url: str, event: dict[str, object], seq: int) -> tuple[int, dict[str, object]]:
    req = urllib.request.Request(
        url + "api/event",
        data=json.dumps({"event": event, "seq": seq}).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_store_down_fills_the_screen_holds_the_cards_and_clears_when_back(
    chromium: Browser, tmp_path: Path
) -> None:
    live = LiveTable(tmp_path, seed=6, spool=False)
    try:
        page = open_page(chromium, live.url)
        live.bet(3, "cat", 25)
        status, _ = tap(live.url, {"type": "no_more_bets"}, live.service.seq)
        assert status == 200
        seq = live.service.seq
        lock = sqlite3.connect(tmp_path / "audit.db", isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            live.shoe.grant()  # a card leaves the shoe: the store cannot take it
            page.wait_for_selector("#store-down:not(.hidden)", timeout=10_000)
            assert "STORE DOWN" in page.inner_text("#store-down")
            assert "locked" in page.inner_text("#store-down-reason")
            page.wait_for_selector("#store-down-list li")
            live.shoe.grant()
            page.wait_for_function("document.querySelectorAll('#store-down-list li').length == 2")
            held = page.eval_on_selector_all(
                "#store-down-list li", "els => els.map(e => e.textContent)"
            )
            assert all(text.startswith("card ") for text in held)
            assert live.service.seq == seq  # nothing was acknowledged
            status, body = tap(live.url, {"type": "stand", "box": 3}, seq)
            assert status == 503 and "STORE DOWN" in str(body["error"])
            shot(page, "store-down")
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        page.wait_for_selector("#store-down", state="hidden", timeout=15_000)
        wait_for(lambda: live.service.seq == seq + 2, what="the held cards to be recorded")
        with Store.open(f"sqlite:///{tmp_path / 'audit.db'}") as store:
            last = [r.event() for r in store.records("T07")][-2:]
        assert [e["type"] for e in last] == ["card", "card"]
        assert [f"card {e['card']}" for e in last] == held  # in the order they were read
        assert all(e["source"] == "shoe" for e in last)
        page.close()
    finally:
        live.close()
