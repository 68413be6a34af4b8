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


def shots(page: Page, name: str) -> None:
    """A screenshot at each of the two screen sizes (the page is left at the first)."""
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(120)  # the hands re-fan to the new width
        shot(page, name)
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})


def type_id(page: Page, ident: str) -> None:
    for ch in ident.upper():
        page.locator(f'[data-idkey="{ch}"]:visible').first.tap()


def enter_pin(page: Page, pin: str, where: str = "#modal") -> None:
    for digit in pin:
        page.tap(f'{where} .keypad button[data-key="{digit}"]')
    page.tap(f"{where} button[data-ok]")


def supervisor_login(page: Page, pin: str = PIN, who: str = "jsmith") -> None:
    page.tap("#sup-open")
    page.wait_for_selector("#modal .keypad")
    type_id(page, who)
    enter_pin(page, pin)


def test_a_round_from_the_simulated_shoe_appears_card_by_card(
    browser: Browser, live: LiveTable
) -> None:
    pages = [open_page(browser, live.url, size) for size in SIZES]
    page = pages[0]
    live.bet(2, "ann", 20)
    live.bet(5, "bob", 50)
    page.wait_for_selector('#boxes .box[data-box="5"] .wager:has-text("$50")')
    for p in pages:
        shot(p, "betting")
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
    engine_cards = [c for b in live.due()["boxes"] for h in b["hands"] for c in h["cards"]]
    engine_cards += live.due()["dealer"]["cards"]
    assert sorted(seen) == sorted(engine_cards)
    # The shoe counter says what the engine counts.
    shoe = live.due()["shoe"]
    counter = page.inner_text("#status")
    assert f"{shoe['drawn']} dealt" in counter and f"{shoe['remaining']} left" in counter
    # Play the round from the screen: offers and stands are the dealer's taps.
    taps = 0
    while live.due()["phase"] not in ("idle",) and taps < 40:
        due = live.due()
        seq = live.service.seq
        page.wait_for_selector(f'body[data-seq="{seq}"]')  # the screen has caught up
        offer = page.locator('#actions button.table[data-action^="offer"]')
        stand = page.locator('#actions button[data-action="stand"]')
        if due["decisions"] and any(d["action"] == "stand" for d in due["decisions"]):
            if taps == 0:
                for p in pages:
                    p.wait_for_selector(f'body[data-seq="{seq}"]')
                    shot(p, "decisions")
            (offer.first if offer.count() else stand.first).tap()
            wait_for(lambda s=seq: live.service.seq > s, what="the tap to be recorded")
            taps += 1
        elif due["next_card"]:
            live.draw()
        else:
            break
    assert taps >= 2
    recorded = [r for r in live.service.recent if r["type"] in ("stand", "offer_surrender")]
    assert recorded and all(r["source"] == "dealer" for r in recorded)
    # Settled: each box shows the chips to move, as the engine settled it: the win beside the
    # stake ("pay 20" for a $20 even-money win), "take" a lost stake, "push" a stand-off.
    result = live.service.last_round
    assert result is not None and result["status"] == "settled"
    for s in result["settlements"]:
        payout = page.locator(f'#boxes .payout[data-payout="{s["box"]}"]')
        payout.wait_for()
        net = float(s["net"])
        expected = (
            f"pay {s['net']}" if net > 0 else "push" if net == 0 else f"take {s['net'].lstrip('-')}"
        )
        assert expected in payout.inner_text()
        assert f"pay {s['returned']}" not in payout.inner_text() or s["returned"] == s["net"]
    for p in pages:
        p.wait_for_selector("#boxes .payout")
        shot(p, "settled")
        p.close()


def test_the_pin_guards_supervisor_actions(browser: Browser, live: LiveTable) -> None:
    page = open_page(browser, live.url)
    live.bet(3, "cat", 25)
    page.tap('#actions button[data-action="no_more_bets"]')
    wait_for(lambda: live.due()["phase"] == "closed", what="betting to close")
    live.draw()
    # No PIN, no supervisor actions; the screen does not list who the supervisors are.
    page.tap("#sup-open")
    page.wait_for_selector("#modal .keypad")
    assert page.locator("[data-sup]").count() == 0
    assert "jsmith" not in page.content()
    type_id(page, "jsmith")
    enter_pin(page, "1111")
    page.wait_for_selector("#pin-error:not(:empty)")
    assert "wrong" in page.locator("#pin-error").inner_text()
    assert page.locator("[data-sup]").count() == 0
    shot(page, "pin-refused")
    enter_pin(page, PIN)
    page.wait_for_selector('[data-sup="void-round"]')
    # The session's countdown is on the button and in the panel.
    assert re.search(r"Supervisor jsmith · [0-2]:\d\d", page.inner_text("#sup-open"))
    assert "locks in" in page.inner_text("#modal-timer")
    # Only the boxes of this round may be voided.
    voidable = page.eval_on_selector_all(
        "[data-sup^='void-box-']", "els => els.map(e => e.dataset.sup)"
    )
    assert voidable == ["void-box-3"]
    shot(page, "supervisor-panel")
    before = live.service.seq
    page.tap('[data-sup="void-round"]')
    page.tap("#modal button[data-ok]")
    wait_for(lambda: live.service.seq > before, what="the void to be recorded")
    void = next(r for r in reversed(live.service.recent) if r["type"] == "void")
    assert void["actor"] == "jsmith"
    assert live.service.last_round is not None
    assert live.service.last_round["status"] == "void"
    # A settled round offers no void.
    page.wait_for_selector("#modal [data-sup='lock']")
    assert page.locator("[data-sup='void-round']").count() == 0
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
        type_id(page, "jsmith")
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
    assert doubles, "this seeded shoe's first hand can double"
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
    supervisor_login(page)
    page.wait_for_selector('[data-sup="wager-6"]')
    # This table has no chip camera at all: the drawer says so (not "camera down").
    assert "no chip camera configured" in page.locator("#modal").inner_text()
    page.tap('[data-sup="wager-6"]')
    # The name on the on-screen keyboard (the kiosk has no other), the wager on the chip pad.
    for key in "ZOE":
        page.tap(f'#modal button[data-textkey="{key}"]')
    assert page.inner_text('#modal [data-text-readout="player"]') == "Zoe"
    for chip in ("25", "5", "5"):
        page.tap(f'#modal button[data-chip="{chip}"]')
    assert page.inner_text("#modal [data-chip-list]") == "25 + 5 + 5"
    before = live.service.seq
    page.tap("#modal button[data-ok]")
    wait_for(lambda: live.service.seq > before, what="the wager to be recorded")
    box6 = next(b for b in live.due()["boxes"] if b["box"] == 6)
    assert box6["bets"] == {"Zoe": "35"}
    last = live.service.recent[-1]
    assert (last["type"], last["source"], last["actor"]) == ("bet", "manual", "jsmith")
    page.wait_for_selector('#boxes .box[data-box="6"] .wager:has-text("Zoe")')
    shot(page, "manual-wager")


def test_a_misread_stops_the_table_until_a_supervisor_enters_the_card(
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
        alert = page.locator('#alerts .alert[data-case="shoe:misread"]')
        alert.wait_for()
        text = alert.inner_text()
        assert "Supervisor needed" in text and "supervisor enters the card" in text
        assert "decks loaded" not in text  # the words fit a misread, not a foreign card
        assert alert.locator("button[data-ack]").count() == 0  # not the dealer's to dismiss
        shots(page, "flag-misread")
        page.tap(f'#alerts button[data-call-supervisor="{seq}"]')
        type_id(page, "jsmith")
        enter_pin(page, PIN)
        page.tap(f'[data-sup="correct-{seq}"]')
        page.tap('#modal button[data-rank="7"]')
        page.tap('#modal button[data-suit="H"]')
        shot(page, "misread-correction")
        page.tap("#modal button[data-ok]")
        wait_for(lambda: not live.service.misreads, what="the correction")
        correction = next(r for r in reversed(live.service.recent) if r["type"] == "card")
        assert correction["text"] == f"card 7H (corrects #{seq})"
        assert correction["actor"] == "jsmith"
        page.wait_for_selector('#boxes .box[data-box="2"] .card[data-card="7H"]')
        page.wait_for_selector("#alerts", state="hidden")
        done = page.locator('#flags li.flag[data-rule="shoe"]')
        assert "corrected: 7H entered by a supervisor" in done.inner_text()
        assert "enter or correct it by hand" not in done.inner_text()
    finally:
        live.close()


def test_a_device_fault_is_shown_at_once_with_what_to_do(browser: Browser, live: LiveTable) -> None:
    page = open_page(browser, live.url)
    page.wait_for_selector('#devices .dev[data-device="shoe"][data-state="connected"]')
    before = page.eval_on_selector("#boxes", "e => e.getBoundingClientRect().top")
    live.shoe.stop()
    live.pty.close()  # the cable is pulled
    page.wait_for_selector('#status[data-state="fault"]')
    band = page.inner_text("#status")
    assert band.startswith("Shoe reader FAULT:")
    # In the dealer's words: what to do, not the port's error (that is the technician's, on the
    # device's label).
    assert "stop drawing" in band and "call the supervisor" in band
    assert "/dev/" not in band and "Errno" not in band
    page.wait_for_selector('#devices .dev[data-device="shoe"][data-state="fault"]')
    assert page.get_attribute('#devices .dev[data-device="shoe"]', "title")
    # The band takes the shoe counter's place: nothing below it moved.
    assert page.eval_on_selector("#boxes", "e => e.getBoundingClientRect().top") == before
    shots(page, "device-fault")
