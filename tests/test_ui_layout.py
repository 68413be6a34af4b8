"""Every state of the dealer's screen, looked at as a person does, at 1280x800, the kiosk's
1366x768 and 1920x1080: every control inside the viewport, no text cut off, nothing scrolling
(tests/screen_layout.py), and axe-core finding no serious fault.

The walk goes through sign-in, the day's opening (the supervisor's PIN, the drawer, the
confirmation, the inspection, the steps), betting, each kind of decision, settlement, flags
(one, several, and those of rounds long over), a device fault, manual mode (reason, chip pad,
card pad, a wager with a player's name) and the connection lost. At 1280x800
each state is also photographed into docs/img/ under a fixed name: the dealer's guide
(docs/dealer/guide.md) shows those pictures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page
from screen_layout import layout_faults
from service_server import Served
from test_ui_dealer_screen import (
    browser,  # noqa: F401 - the fixture
    supervisor_login,
    wait_for,
)
from test_ui_screen_states import (
    Screen,
    axe_faults,
    make_flag,
    open_round,
    sign_in,
)

from controller.cards import deck

ROOT = Path(__file__).resolve().parent.parent
DOCS_IMG = ROOT / "docs" / "img"
KIOSK = (1366, 768)
SIZES = [(1280, 800), KIOSK, (1920, 1080)]
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Walk:
    """Collects the faults of each state looked at; photographs it for the guide."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.faults: list[str] = []
        self.states: list[str] = []
        page.on("pageerror", lambda e: self.faults.append(f"the page's script failed: {e}"))

    def look(self, name: str, *, shoot: bool = True, axe: bool = True) -> None:
        page = self.page
        if name != "connection-lost":
            page.wait_for_selector("#conn", state="hidden")
        self.states.append(name)
        for w, h in SIZES:
            page.set_viewport_size({"width": w, "height": h})
            page.wait_for_timeout(60)  # the hands re-fan to the new width
            self.faults.extend(f"{name} at {w}x{h}: {f}" for f in layout_faults(page))
        page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
        page.wait_for_timeout(60)
        if shoot:
            DOCS_IMG.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS_IMG / f"dealer-{name}.jpg"), type="jpeg", quality=80)
        if axe:
            self.faults.extend(axe_faults(page, name))

    def done(self) -> None:
        assert not self.faults, "\n".join(self.faults)


def served_page(browser: Browser, tmp_path: Path) -> tuple[Served, Page]:  # noqa: F811
    served = Served(tmp_path, pin_max_attempts=50)
    page = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]}, has_touch=True)
    page.goto(served.url)
    page.wait_for_selector("#boxes .box")
    return served, page


@pytest.fixture
def walk(browser: Browser, tmp_path: Path) -> Iterator[tuple[Screen, Walk]]:  # noqa: F811
    served, page = served_page(browser, tmp_path)
    try:
        w = Walk(page)
        w.look("sign-in")
        sign_in(page)
        s = Screen(served, page)
        s.service.set_device("shoe", "connected", "/dev/ttyUSB0")
        s.service.set_device("camera", "ok")
        yield s, w
    finally:
        page.close()
        served.close()


def test_the_opening_and_the_supervisor_fit_every_screen(walk: tuple[Screen, Walk]) -> None:
    s, w = walk
    page = s.page
    s.caught_up()
    w.look("no-shoe")
    page.tap("#sup-open")
    page.wait_for_selector("#modal .keypad")
    w.look("supervisor-pin")
    page.tap("#modal-close")
    supervisor_login(page)
    page.wait_for_selector('[data-sup="lock"]')
    w.look("supervisor-panel")
    page.tap('[data-sup="open-table"]')
    page.wait_for_selector("#modal button[data-ok]")
    w.look("confirm-open")
    page.tap("#modal button[data-ok]")
    page.wait_for_selector("[data-opening-panel]")
    page.tap("#modal-close")
    s.caught_up()
    w.look("opening")
    page.tap('[data-opening="inspect"]')
    page.wait_for_selector("#modal [data-no-serial]")
    w.look("inspect-serial")
    page.tap("#modal [data-no-serial]")
    page.wait_for_selector("[data-inspection]")
    for card in deck("T")[:30]:
        s.shoe(card, deck="AAAA01")
    s.caught_up()
    w.look("opening-inspection")
    for card in deck("T")[30:]:
        s.shoe(card, deck="AAAA01")
    page.tap('[data-opening="inspect_end"]')
    page.wait_for_selector('[data-opening="inspect"]')
    for step in ("spread", "chemmy", "stack", "riffle"):
        before = s.service.seq
        page.tap(f'[data-opening-step="{step}"]')
        wait_for(lambda b=before: s.service.seq > b, what=step)
    s.caught_up()
    w.look("opening-steps")
    w.done()


def test_a_round_from_bets_to_settlement_fits_every_screen(walk: tuple[Screen, Walk]) -> None:
    s, w = walk
    page = s.page
    s.dealer({"type": "shuffle", "decks": 6, "cut_card": 216})
    s.caught_up()
    w.look("waiting-for-bets")
    s.bets(
        b1=("ann", 50), b2=("bob", 50), b3=("cat", 20), b4=("dan", 30),
        b5=("eve", 40), b6=("fay", 25), b7=("gus", 10),
    )  # fmt: skip
    s.caught_up()
    w.look("betting")
    s.dealer({"type": "no_more_bets"})
    s.shoe("AS", "9S", "5S", "KS", "5H", "9H", "2S", "AD", "KH", "8S", "6S", "6H", "4H", "7H", "3S")
    s.caught_up()
    w.look("offer-insurance")
    s.dealer({"type": "offer_insurance"})
    s.caught_up()
    w.look("insurance")
    page.tap('#actions button[data-action="insurance"][data-box="2"]')
    page.wait_for_selector("#modal .keypad")
    w.look("insurance-amount")
    page.tap("#modal button[data-ok]")
    s.dealer({"type": "offer_surrender", "box": 2}, {"type": "stand", "box": 2})
    s.dealer({"type": "offer_surrender", "box": 3})
    s.caught_up()
    w.look("decisions")
    s.dealer({"type": "double", "box": 3, "player": "cat", "amount": "20"})
    s.shoe("9C")
    s.dealer({"type": "offer_surrender", "box": 4}, {"type": "surrender", "box": 4})
    s.dealer(
        {"type": "offer_surrender", "box": 5},
        {"type": "double", "box": 5, "player": "eve", "amount": "40"},
    )
    s.shoe("2H")
    s.caught_up()
    w.look("rescue")
    s.dealer(
        {"type": "rescue", "box": 5, "player": "eve"},
        {"type": "offer_surrender", "box": 6},
        {"type": "stand", "box": 6},
        {"type": "offer_surrender", "box": 7},
    )
    s.shoe("4S", "5S", "7C", "6D")
    s.caught_up()
    page.wait_for_selector("#boxes .payout")
    w.look("settled")
    # A pair to split, and a flag in the round after.
    s.bets(b2=("ann", 20), b5=("bob", 50))
    s.dealer({"type": "no_more_bets"})
    s.shoe("8S", "9D", "6H", "8C", "9C")
    s.dealer({"type": "offer_surrender", "box": 2})
    s.caught_up()
    w.look("split", axe=False)
    s.dealer({"type": "stand", "box": 2})
    s.shoe("5H", face_up=True)
    s.caught_up()
    page.wait_for_selector("#alerts:not(.hidden)")
    w.look("flag")
    s.submit({"type": "bet", "box": 3, "player": "cat", "amount": 10}, "camera")
    s.submit({"type": "misread", "raw": "K7Q2M9-?S"}, "shoe")
    s.caught_up()
    w.look("flags-several")
    w.done()


def test_faults_and_play_by_hand_fit_every_screen(walk: tuple[Screen, Walk]) -> None:
    s, w = walk
    page = s.page
    service = s.service
    s.dealer({"type": "shuffle", "decks": 6, "cut_card": 216})
    service.set_device(
        "shoe", "fault", "/dev/ttyUSB0: could not open port: [Errno 2] No such file or directory"
    )
    service.set_device("camera", "fault", "OpenCV cannot open it: /dev/video0 (VIDEOIO ERROR)")
    page.wait_for_selector('#status[data-state="fault"]')
    s.caught_up()
    w.look("faults")
    supervisor_login(page)
    page.tap('[data-sup="manual-on-camera"]')
    page.wait_for_selector("#modal [data-reason]")
    w.look("manual-reason")
    page.tap("#modal [data-reason]")
    page.tap("#modal button[data-ok]")
    page.wait_for_selector('[data-sup="manual-off-camera"]')
    page.tap('[data-sup="manual-on-shoe"]')
    page.tap("#modal [data-reason]")
    page.tap("#modal button[data-ok]")
    page.wait_for_selector('[data-sup="manual-off-shoe"]')
    page.tap('[data-sup="wager-3"]')
    page.wait_for_selector('#modal [data-text-readout="player"]')
    w.look("manual-wager-name")
    page.tap("#modal-close")
    s.caught_up()
    w.look("manual-mode")
    page.tap('#actions button[data-manual="wager"]')
    page.tap('#modal [data-pad-box="4"]')
    page.tap('#modal [data-chip="25"]')
    page.tap('#modal [data-chip="5"]')
    w.look("chip-pad")
    page.tap("#modal button[data-ok]")
    wait_for(lambda: service.table.due().to_dict()["boxes"], what="the wager")
    page.tap('#actions button[data-action="no_more_bets"]')
    s.caught_up()
    page.tap('#actions button[data-manual="card"]')
    page.tap('#modal button[data-rank="9"]')
    page.tap('#modal button[data-suit="S"]')
    w.look("card-pad")
    page.tap("#modal-close")
    s.served.close()
    page.wait_for_selector("#conn:not(.hidden)")
    w.look("connection-lost", axe=False)
    w.done()


def test_the_layout_check_sees_a_control_off_the_screen(walk: tuple[Screen, Walk]) -> None:
    """The check can fail: a button pushed below the edge and a clipped label are reported."""
    s, _ = walk
    page = s.page
    assert layout_faults(page) == []
    page.evaluate(
        """() => {
          const b = document.createElement('button');
          b.textContent = 'Below the edge'; b.style.position = 'fixed';
          b.style.top = (innerHeight - 10) + 'px'; b.style.left = '10px';
          document.body.append(b);
          const d = document.getElementById('game');
          d.style.display = 'inline-block'; d.style.width = '12px'; d.style.overflow = 'hidden';
          d.style.whiteSpace = 'nowrap'; d.textContent = 'a long game name';
        }"""
    )
    faults = layout_faults(page)
    assert any("Below the edge" in f and "not wholly on screen" in f for f in faults), faults
    assert any("a long game name" in f and "cut off" in f for f in faults), faults


def test_flags_of_rounds_over_are_counted_aside_until_seen(walk: tuple[Screen, Walk]) -> None:
    """A flag left unseen when its round ends does not sit over the next round's boxes: it is
    counted, with its rule, at the top of the side column until the dealer taps Seen there (the
    acknowledgement is recorded with the dealer's id). A flag of the round on the table is a
    compact sheet over the decision buttons, not over the boxes."""
    s, w = walk
    page = s.page
    s.dealer({"type": "shuffle", "decks": 6, "cut_card": 216})
    open_round(s)
    make_flag(s, "16.1")  # round 1: a card face up in the shoe
    s.caught_up()
    sheet = page.locator("#alerts .alert-sheet")
    sheet.wait_for()
    boxes = page.eval_on_selector("#boxes", "e => e.getBoundingClientRect().toJSON()")
    top = sheet.bounding_box()
    assert top is not None
    # The sheet leaves most of the boxes in view (it used to cover everything below the prompt).
    assert top["y"] > boxes["y"] + boxes["height"] * 0.5, (top, boxes)
    assert page.locator('#alerts .alert[data-rule="16.1"]').count() == 1
    # Round 1 ends with the flag unseen; round 2 is dealt.
    s.dealer({"type": "offer_surrender", "box": 2}, {"type": "stand", "box": 2})
    s.dealer({"type": "offer_surrender", "box": 5}, {"type": "stand", "box": 5})
    s.shoe("KD", "5S")
    wait_for(lambda: s.service.last_round is not None, what="round 1 to end")
    s.bets(b3=("cat", 20))
    s.dealer({"type": "no_more_bets"})
    s.shoe("9C", "6D", "8H")
    s.caught_up()
    page.wait_for_selector("#alerts", state="hidden")
    older = page.locator("#older")
    older.wait_for()
    text = older.inner_text()
    assert "1 flag of round 1 not seen" in text and "Rule 16.1" in text, text
    w.look("flags-of-rounds-over")
    before = s.service.seq
    page.tap("#older button[data-ack-older]")
    wait_for(lambda: s.service.seq > before, what="the acknowledgement")
    ack = s.served.table.store.records("T07")[-1].event()
    assert (ack["type"], ack["rule"], ack["actor"]) == ("acknowledge", "16.1", "ann")
    page.wait_for_selector("#older", state="hidden")
    w.done()


def test_a_table_with_no_shoe_reader_inspects_a_deck_in_a_few_taps(
    walk: tuple[Screen, Walk],
) -> None:
    """No shoe reader: the deck's serial is typed, a few cards are tapped on the deck's grid as
    they are turned, and once the spread deck is checked complete the rest are recorded in one
    tap: a deck in well under twenty taps, every card recorded as entered by hand."""
    s, w = walk
    page = s.page
    s.service.set_device("shoe", "off", "no shoe reader configured")
    s.submit(
        {"type": "manual_mode", "device": "shoe", "on": True, "reason": "no shoe reader"},
        "supervisor",
    )
    s.submit({"type": "open_table"}, "supervisor")
    s.caught_up()
    taps = 0

    def tap(selector: str) -> None:
        nonlocal taps
        page.tap(selector)
        taps += 1

    tap('[data-opening="inspect"]')
    for key in "BBBB02":
        tap(f'#modal [data-idkey="{key}"]')
    tap("#modal button[data-ok]")
    page.wait_for_selector('[data-inspection="BBBB02"]')
    tap('[data-opening="by-hand"]')
    for card in ("AS", "2S", "KH"):
        before = s.service.seq
        tap(f'#modal [data-deck-card="{card}"]')
        wait_for(lambda b=before: s.service.seq > b, what=card)
    page.wait_for_selector('#modal [data-deck-card="KH"][disabled]')
    w.look("deck-by-hand")
    tap("#modal [data-deck-rest]")
    wait_for(
        lambda: (s.service.table.due().to_dict().get("inspection") or {}).get("read") == 48,
        what="the whole deck",
    )
    s.caught_up()
    tap("#modal button[data-ok]")
    page.wait_for_selector('[data-opening="inspect"]')
    assert "passed: BBBB02" in page.inner_text("[data-opening-panel]")
    assert taps < 20, taps
    events = [r.event() for r in s.served.table.store.records("T07")]
    cards = [e for e in events if e["type"] == "card"]
    assert len(cards) == 48 and {e["source"] for e in cards} == {"manual"}
    assert sorted(e["card"] for e in cards) == sorted(deck("T"))
    inspect = next(e for e in events if e["type"] == "inspect")
    assert inspect["deck"] == "BBBB02"
    w.done()


def test_the_dealers_guide_shows_every_state_the_walk_photographs() -> None:
    """docs/dealer/guide.md shows the walk's pictures: each it names exists under a name a
    look() above gives, and each state photographed is on the page."""
    guide = (ROOT / "docs" / "dealer" / "guide.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\.\./img/dealer-([a-z0-9-]+)\.jpg", guide))
    source = Path(__file__).read_text(encoding="utf-8")
    taken = set(re.findall(r'\.look\("([a-z0-9-]+)"(?![^)]*shoot=False)', source))
    assert shown == taken, (sorted(shown - taken), sorted(taken - shown))
    for name in shown:
        assert (DOCS_IMG / f"dealer-{name}.jpg").exists(), name


def test_the_tray_panels_fit_every_screen(walk: tuple[Screen, Walk]) -> None:
    """The chip tray's panels (the count pad, a buy-in) held to the same check."""
    s, w = walk
    page = s.page
    s.dealer({"type": "shuffle", "decks": 6, "cut_card": 216})
    supervisor_login(page)
    page.wait_for_selector('[data-sup="tray"]')
    w.look("supervisor-panel", shoot=False, axe=False)
    page.tap('[data-sup="tray"]')
    page.wait_for_selector('[data-tray="opener"]')
    w.look("tray", shoot=False)
    page.tap('[data-tray="opener"]')
    page.wait_for_selector("#modal [data-denom]")
    w.look("tray-count", shoot=False)
    page.tap("#modal-close")
    page.tap("#buy-in")
    page.wait_for_selector("#modal [data-buyin-box]")
    w.look("buy-in", shoot=False)
    w.done()
