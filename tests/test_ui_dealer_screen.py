"""The dealer's touchscreen in a real browser (Debian's Chromium, headless, via Playwright).

The table behind the page is the real one: the simulated shoe writes cards into a
pseudo-terminal, the shoe reader reads them, the engine applies them, the audit store records
them. Screenshots go to artifacts/ui/ (kept as test artifacts).
"""

from __future__ import annotations

import asyncio
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from controller.service.app import Table, open_table, serve
from controller.service.demo import DealerPacedShoe, PtyMaster, PtyPair
from controller.service.devices import ShoeFeed
from controller.service.pin import hash_pin
from drivers.shoe.simulator import load_shoe, parse_faults

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts" / "ui"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SIZES = [(1280, 800), (1920, 1080)]
TABLE_LINE: dict[str, Any] = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "T07",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}
PIN = "2468"


class LiveTable:
    """The table service with a simulated shoe on a pty, serving on an ephemeral port."""

    def __init__(
        self,
        tmp: Path,
        *,
        seed: int,
        faults: str = "",
        max_attempts: int = 5,
        spool: bool = True,
    ) -> None:
        self.table: Table = open_table(
            TABLE_LINE,
            f"sqlite:///{tmp / 'audit.db'}",
            {"jsmith": hash_pin(PIN, iterations=1000)},
            pin_max_attempts=max_attempts,
            spool=spool,
        )
        self.service = self.table.service
        self.pty = PtyPair()
        self.feed = ShoeFeed(self.service, self.pty.path, silence_timeout=5.0)
        self.feed.start()
        rng = random.Random(seed)
        load = load_shoe(6, rng, pontoon=True)
        self.service.submit(load.shuffle_event(), source="shoe-loader")
        self.shoe = DealerPacedShoe(
            PtyMaster(self.pty),
            load,
            rng,
            faults=parse_faults(faults) if faults else None,
        )
        threading.Thread(target=self.shoe.run, daemon=True).start()
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done: asyncio.Future[None] | None = None
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        assert ready.wait(15), "the dealer's screen did not start"

    def _serve(self, ready: threading.Event) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._done = self._loop.create_future()

            def on_ready(url: str) -> None:
                self.url = url
                ready.set()

            await serve(self.table, "127.0.0.1", 0, on_ready=on_ready, until=self._done)

        asyncio.run(main())

    def draw(self) -> None:
        """The dealer draws one card from the shoe; wait until the table has heard it."""
        before = self.service.seq
        self.shoe.grant()
        wait_for(lambda: self.service.seq > before, what="the shoe's card")

    def due(self) -> dict[str, Any]:
        return self.service.due()

    def bet(self, box: int, player: str, amount: int) -> None:
        result = self.service.submit(
            {"type": "bet", "box": box, "player": player, "amount": amount},
            source="manual",
            actor="jsmith",
        )
        assert result.ok

    def close(self) -> None:
        if self._loop is not None and self._done is not None:
            done = self._done
            self._loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))
        self._thread.join(timeout=10)
        self.shoe.stop()
        self.feed.stop()
        self.table.close()
        self.pty.close()


def wait_for(check: Callable[[], Any], *, what: str, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveTable]:
    t = LiveTable(tmp_path, seed=4)
    yield t
    t.close()


def open_page(browser: Browser, url: str, size: tuple[int, int] = SIZES[0]) -> Page:
    page = browser.new_page(viewport={"width": size[0], "height": size[1]}, has_touch=True)
    page.goto(url)
    page.wait_for_selector("#boxes .box")
    return page


def shot(page: Page, name: str) -> None:
    w = page.viewport_size["width"] if page.viewport_size else 0
    page.screenshot(path=str(ARTIFACTS / f"{name}-{w}.png"))


def cards_on_page(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "#dealer .card, #boxes .card", "els => els.map(e => e.dataset.card)"
    )


def test_a_round_from_the_simulated_shoe_appears_card_by_card(
    browser: Browser, live: LiveTable
) -> None:
    pages = [open_page(browser, live.url, size) for size in SIZES]
    page = pages[0]
    live.bet(2, "ann", 20)
    live.bet(5, "bob", 50)
    page.wait_for_selector('#boxes .box[data-box="5"] .wager:has-text("$50")')
    # The dealer taps "No more bets" on the screen; the engine hears it.
    page.tap('#actions button[data-action="no_more_bets"]')
    wait_for(lambda: live.due()["phase"] == "closed", what="betting to close")
    seen: list[str] = []
    for n in range(1, 6):  # the initial deal: box 2, box 5, dealer, box 2, box 5
        live.draw()
        page.wait_for_function(
            f"document.querySelectorAll('#dealer .card, #boxes .card').length == {n}"
        )
        now = cards_on_page(page)
        # One more card than before, and every card shown before is still shown.
        assert len(now) == n
        assert all(now.count(c) >= seen.count(c) for c in seen), (seen, now)
        seen = now
        if n == 3:
            for p in pages:
                p.wait_for_function(
                    "document.querySelectorAll('#dealer .card, #boxes .card').length == 3"
                )
                shot(p, "deal-3-cards")
    engine_cards = [c for b in live.due()["boxes"] for h in b["hands"] for c in h["cards"]]
    engine_cards += live.due()["dealer"]["cards"]
    assert sorted(seen) == sorted(engine_cards)
    # Play the round from the screen: offers and stands are the dealer's taps.
    taps = 0
    while live.due()["phase"] not in ("idle",) and taps < 40:
        due = live.due()
        seq = live.service.seq
        page.wait_for_selector(f'body[data-seq="{seq}"]')  # the screen has caught up
        offer = page.locator('#actions button.table[data-action^="offer"]')
        stand = page.locator('#actions button[data-action="stand"]')
        if due["decisions"] and any(d["action"] == "stand" for d in due["decisions"]):
            (offer.first if offer.count() else stand.first).tap()
            if taps == 0:
                for p in pages:
                    shot(p, "decision")
            wait_for(lambda s=seq: live.service.seq > s, what="the tap to be recorded")
            taps += 1
        elif due["next_card"]:
            live.draw()
        else:
            break
    assert taps >= 2
    recorded = [r for r in live.service.recent if r["type"] in ("stand", "offer_surrender")]
    assert recorded and all(r["source"] == "dealer" for r in recorded)
    # Settled: each box shows its payout, as the engine settled it.
    result = live.service.last_round
    assert result is not None and result["status"] == "settled"
    for s in result["settlements"]:
        payout = page.locator(f'#boxes .payout[data-payout="{s["box"]}"]')
        payout.wait_for()
        expected = f"pay ${s['returned']}" if s["returned"] != "0" else "collect"
        assert expected in payout.inner_text()
        assert s["net"].lstrip("-") in payout.inner_text()
    for p in pages:
        p.wait_for_selector("#boxes .payout")
        shot(p, "settled")
        p.close()


def test_a_flag_appears_with_its_rule_number_and_words(browser: Browser, tmp_path: Path) -> None:
    live = LiveTable(tmp_path, seed=9, faults="faceup@1")
    try:
        page = open_page(browser, live.url)
        live.bet(1, "ann", 10)
        page.tap('#actions button[data-action="no_more_bets"]')
        wait_for(lambda: live.due()["phase"] == "closed", what="betting to close")
        live.draw()  # found face up in the shoe: 16.1, not dealt
        flag = page.locator('#flags li.flag[data-rule="16.1"]')
        flag.wait_for()
        text = flag.inner_text()
        assert "Rule 16.1" in text
        assert live.service.setup.rules.words("16.1") in text
        assert page.locator("#flag-count").inner_text() == "1"
        assert cards_on_page(page) == []  # the face-up card was not dealt
        shot(page, "flag-16.1")
        page.set_viewport_size({"width": 1920, "height": 1080})
        shot(page, "flag-16.1")
    finally:
        live.close()


def enter_pin(page: Page, pin: str) -> None:
    for digit in pin:
        page.tap(f'#modal .keypad button[data-key="{digit}"]')
    page.tap("#modal button[data-ok]")


def test_the_pin_guards_supervisor_actions(browser: Browser, live: LiveTable) -> None:
    page = open_page(browser, live.url)
    live.bet(3, "cat", 25)
    page.tap('#actions button[data-action="no_more_bets"]')
    wait_for(lambda: live.due()["phase"] == "closed", what="betting to close")
    live.draw()
    # No PIN, no supervisor actions: the dialog asks for one.
    page.tap("#sup-open")
    page.wait_for_selector("#modal .keypad")
    assert page.locator("[data-sup]").count() == 0
    enter_pin(page, "1111")
    page.wait_for_selector("#pin-error:not(:empty)")
    assert "wrong" in page.locator("#pin-error").inner_text()
    assert page.locator("[data-sup]").count() == 0
    shot(page, "pin-refused")
    enter_pin(page, PIN)
    page.wait_for_selector('[data-sup="void-round"]')
    shot(page, "supervisor-panel")
    before = live.service.seq
    page.tap('[data-sup="void-round"]')
    page.tap("#modal button[data-ok]")
    wait_for(lambda: live.service.seq > before, what="the void to be recorded")
    last = live.service.recent[-1]
    assert last["type"] == "void" and last["actor"] == "jsmith"
    assert live.service.last_round is not None
    assert live.service.last_round["status"] == "void"
    # Locking again puts the actions back behind the PIN.
    page.tap('[data-sup="lock"]')
    page.tap("#sup-open")
    page.wait_for_selector("#modal .keypad")
    assert page.locator("[data-sup]").count() == 0


def test_pin_attempts_lock_out_at_the_screen(browser: Browser, tmp_path: Path) -> None:
    live = LiveTable(tmp_path, seed=2, max_attempts=3)
    try:
        page = open_page(browser, live.url)
        page.tap("#sup-open")
        for pin in ("1111", "2222", "3333"):
            enter_pin(page, pin)
            page.wait_for_function("document.querySelector('#pin-error').textContent !== ''")
        page.wait_for_selector('#pin-error:has-text("too many wrong PINs")')
        enter_pin(page, PIN)  # even the right PIN waits out the lockout
        page.wait_for_selector('#pin-error:has-text("too many wrong PINs")')
        assert page.locator("[data-sup]").count() == 0
        shot(page, "pin-lockout")
    finally:
        live.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_screen_fits_and_its_buttons_fit_fingers(
    browser: Browser, live: LiveTable, size: tuple[int, int]
) -> None:
    page = open_page(browser, live.url, size)
    for box, player in ((1, "ann"), (3, "bob"), (4, "cat"), (7, "dan")):
        live.bet(box, player, 10)
    page.tap('#actions button[data-action="no_more_bets"]')
    while not live.due()["decisions"]:
        live.draw()
    page.wait_for_selector('#actions button[data-action="stand"]')
    shot(page, "fit")
    metrics = page.evaluate(
        """() => ({
            scrollW: document.documentElement.scrollWidth, innerW: window.innerWidth,
            scrollH: document.documentElement.scrollHeight, innerH: window.innerHeight,
            buttons: [...document.querySelectorAll('#actions button, #sup-open')].map(b => {
                const r = b.getBoundingClientRect();
                return {text: b.innerText, top: r.top, bottom: r.bottom, left: r.left,
                        right: r.right, height: r.height, width: r.width};
            }),
        })"""
    )
    assert metrics["scrollW"] <= metrics["innerW"], "the page scrolls sideways"
    assert metrics["scrollH"] <= metrics["innerH"], "the page scrolls down"
    assert metrics["buttons"], "no buttons on screen"
    for b in metrics["buttons"]:
        label = re.sub(r"\s+", " ", b["text"])
        assert b["height"] >= 48 and b["width"] >= 48, f"{label!r} is too small for a finger"
        assert b["left"] >= 0 and b["right"] <= size[0], f"{label!r} is off screen"
        assert b["top"] >= 0 and b["bottom"] <= size[1], f"{label!r} is off screen"


def play_to_first_decision(live: LiveTable, page: Page) -> dict[str, Any]:
    page.tap('#actions button[data-action="no_more_bets"]')
    wait_for(lambda: live.due()["phase"] == "closed", what="betting to close")
    while not live.due()["decisions"]:
        live.draw()
    return live.due()


def test_a_double_is_tapped_and_its_amount_confirmed_on_the_keypad(
    browser: Browser, live: LiveTable
) -> None:
    page = open_page(browser, live.url)
    live.bet(4, "eve", 40)
    due = play_to_first_decision(live, page)
    doubles = [d for d in due["decisions"] if d["action"] == "double"]
    if not doubles:
        pytest.skip("this shoe's first hand cannot double")  # pragma: no cover - seeded shoe
    page.tap('#actions button[data-action="double"]')
    readout = page.locator("#modal [data-readout]")
    assert readout.inner_text() == doubles[0]["max"]  # the full double is offered first
    page.tap('#modal .keypad button[data-key="⌫"]')
    page.tap('#modal .keypad button[data-key="⌫"]')
    for key in "25":
        page.tap(f'#modal .keypad button[data-key="{key}"]')
    before = live.service.seq
    page.tap("#modal button[data-ok]")
    wait_for(lambda: live.service.seq > before, what="the double to be recorded")
    last = live.service.recent[-1]
    assert last["type"] == "double" and last["source"] == "dealer"
    assert "$25" in last["text"]


def test_a_supervisor_enters_a_wager_by_hand_when_the_camera_is_down(
    browser: Browser, live: LiveTable
) -> None:
    page = open_page(browser, live.url)
    page.tap("#sup-open")
    enter_pin(page, PIN)
    page.wait_for_selector('[data-sup="wager-6"]')
    assert "camera down" in page.locator("#modal").inner_text()
    page.tap('[data-sup="wager-6"]')
    page.fill("[data-player-input]", "zoe")
    for key in "35":
        page.tap(f'#modal .keypad button[data-key="{key}"]')
    before = live.service.seq
    page.tap("#modal button[data-ok]")
    wait_for(lambda: live.service.seq > before, what="the wager to be recorded")
    box6 = next(b for b in live.due()["boxes"] if b["box"] == 6)
    assert box6["bets"] == {"zoe": "35"}
    last = live.service.recent[-1]
    assert (last["type"], last["source"], last["actor"]) == ("bet", "manual", "jsmith")
    page.wait_for_selector('#boxes .box[data-box="6"] .wager:has-text("zoe")')
    shot(page, "manual-wager")


def test_a_misread_is_corrected_by_a_supervisor_picking_the_card(
    browser: Browser, tmp_path: Path
) -> None:
    live = LiveTable(tmp_path, seed=3, faults="misread@1")
    try:
        page = open_page(browser, live.url)
        live.bet(2, "ann", 10)
        page.tap('#actions button[data-action="no_more_bets"]')
        wait_for(lambda: live.due()["phase"] == "closed", what="betting to close")
        live.draw()
        wait_for(lambda: live.service.misreads, what="the misread")
        (seq,) = live.service.misreads
        page.locator('#flags li.flag[data-rule="shoe"]').wait_for()
        page.tap("#sup-open")
        enter_pin(page, PIN)
        page.tap(f'[data-sup="correct-{seq}"]')
        page.tap('#modal button[data-rank="7"]')
        page.tap('#modal button[data-suit="H"]')
        shot(page, "misread-correction")
        page.tap("#modal button[data-ok]")
        wait_for(lambda: not live.service.misreads, what="the correction")
        last = live.service.recent[-1]
        assert last["text"] == f"card 7H (corrects #{seq})"
        assert last["actor"] == "jsmith"
        page.wait_for_selector('#boxes .box[data-box="2"] .card[data-card="7H"]')
    finally:
        live.close()


def test_a_device_fault_is_shown_at_once(browser: Browser, live: LiveTable) -> None:
    page = open_page(browser, live.url)
    page.wait_for_selector('#devices .dev[data-device="shoe"][data-state="connected"]')
    live.shoe.stop()
    live.pty.close()  # the cable is pulled
    banner = page.locator("#faults")
    banner.wait_for(state="visible")
    assert banner.inner_text().startswith("Shoe reader:")
    page.wait_for_selector('#devices .dev[data-device="shoe"][data-state="fault"]')
    shot(page, "shoe-fault")
