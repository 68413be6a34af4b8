"""Every state the dealer's screen must show, in Debian's Chromium at 1280x800 and 1920x1080,
as a dealer would meet it: signing in, settlement with every kind of payout, each kind of flag,
play by hand, a device fault, the connection lost, the day's opening. Each state is
screenshotted at both sizes (artifacts/ui/), every button is measured against a finger, and
axe-core runs in the page for serious accessibility faults.

The table behind the page is the real service (engine, audit store, web server); the events a
device would send are submitted to it directly, so each state is reached exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page
from service_server import DEALER_PIN, Served
from test_ui_dealer_screen import (
    SIZES,
    browser,  # noqa: F401 - the fixture
    enter_pin,
    shots,
    supervisor_login,
    type_id,
    wait_for,
)

from controller.cards import deck

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / ".venv" / "node" / "node_modules" / "axe-core" / "axe.min.js"
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Screen:
    """A served table, its dealer signed in through the page, and helpers to reach states."""

    def __init__(self, served: Served, page: Page) -> None:
        self.served = served
        self.service = served.service
        self.page = page

    def shoe(self, *cards: str, **fields: Any) -> None:
        for card in cards:
            self.submit({"type": "card", "card": card, **fields}, source="shoe")

    def submit(self, event: dict[str, Any], source: str = "dealer") -> Any:
        actor = self.service.dealer if source == "dealer" else None
        result = self.service.submit(event, source=source, actor=actor)
        assert result.ok, (event, result.error)
        return result

    def dealer(self, *events: dict[str, Any]) -> None:
        for event in events:
            self.submit(event)

    def bets(self, **by_box: tuple[str, int]) -> None:
        for box, (player, amount) in by_box.items():
            self.submit(
                {"type": "bet", "box": int(box[1:]), "player": player, "amount": amount}, "camera"
            )

    def caught_up(self) -> None:
        self.page.wait_for_selector(f'body[data-seq="{self.service.seq}"]')

    def resolve_all(self) -> None:
        """A supervisor resolves every flag waiting (through the service, as the API does)."""
        for key in list(self.service.pending):
            self.service.submit(
                {"type": "acknowledge", "flag_event": key[0], "rule": key[1]},
                source="supervisor",
                actor="jsmith",
            )


def sign_in(page: Page) -> None:
    page.wait_for_selector("#signin:not(.hidden)")
    type_id(page, "ann")
    enter_pin(page, DEALER_PIN, where="#signin")
    page.wait_for_selector("#signin", state="hidden")
    page.wait_for_selector('#on-duty[data-dealer="ann"]')


@pytest.fixture
def screen(browser: Browser, tmp_path: Path) -> Iterator[Screen]:  # noqa: F811
    served = Served(tmp_path, pin_max_attempts=50)
    page = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]}, has_touch=True)
    try:
        page.goto(served.url)
        page.wait_for_selector("#boxes .box")
        sign_in(page)
        s = Screen(served, page)
        s.service.set_device("shoe", "connected", "/dev/ttyUSB0")
        s.service.set_device("camera", "ok")
        s.dealer({"type": "shuffle", "decks": 6, "cut_card": 216})
        yield s
    finally:
        page.close()
        served.close()


def lines(page: Page, box: int) -> list[str]:
    return page.eval_on_selector_all(
        f'#boxes .payout[data-payout="{box}"] .pay-line .act', "els => els.map(e => e.textContent)"
    )


def notes(page: Page, box: int) -> str:
    return page.inner_text(f'#boxes .payout[data-payout="{box}"]')


def test_the_dealer_signs_in_on_the_screen(browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    served = Served(tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 800}, has_touch=True)
    try:
        page.goto(served.url)
        page.wait_for_selector("#signin:not(.hidden)")
        assert not re.search(r"\bann\b", page.content())  # dealers are not listed
        shots(page, "sign-in")
        type_id(page, "ann")
        enter_pin(page, "0000", where="#signin")
        page.wait_for_selector("#signin-error:has-text('wrong dealer or PIN')")
        enter_pin(page, DEALER_PIN, where="#signin")
        page.wait_for_selector("#signin", state="hidden")
        last = served.table.store.records("T07")[-1].event()
        assert (last["type"], last["dealer"], last["actor"]) == ("dealer", "ann", "ann")
        assert page.inner_text("#on-duty") == "Dealer: ann"
    finally:
        page.close()
        served.close()


def round_with_every_hand_payout(s: Screen) -> None:
    """Seven boxes, the dealer's ace then a six (soft 17): a pontoon, a stand-off with lost
    insurance, a doubled win, a surrender, a rescue, a loss and a five-card 21."""
    s.bets(
        b1=("ann", 50), b2=("bob", 50), b3=("cat", 20), b4=("dan", 30),
        b5=("eve", 40), b6=("fay", 25), b7=("gus", 10),
    )  # fmt: skip
    s.dealer({"type": "no_more_bets"})
    s.shoe("AS", "9S", "5S", "KS", "5H", "9H", "2S", "AD", "KH", "8S", "6S", "6H", "4H", "7H", "3S")
    s.dealer(
        {"type": "offer_insurance"},
        {"type": "insurance", "box": 2, "player": "bob", "amount": "25"},
        {"type": "offer_surrender", "box": 2},
        {"type": "stand", "box": 2},
        {"type": "offer_surrender", "box": 3},
        {"type": "double", "box": 3, "player": "cat", "amount": "20"},
    )
    s.shoe("9C")
    s.dealer(
        {"type": "offer_surrender", "box": 4},
        {"type": "surrender", "box": 4},
        {"type": "offer_surrender", "box": 5},
        {"type": "double", "box": 5, "player": "eve", "amount": "40"},
    )
    s.shoe("2H")
    s.dealer(
        {"type": "rescue", "box": 5, "player": "eve"},
        {"type": "offer_surrender", "box": 6},
        {"type": "stand", "box": 6},
        {"type": "offer_surrender", "box": 7},
    )
    s.shoe("4S", "5S", "7C", "6D")
    assert s.service.last_round is not None and s.service.last_round["flags"] == []


def test_settlement_says_the_chips_to_move_for_every_kind_of_payout(screen: Screen) -> None:
    page = screen.page
    round_with_every_hand_payout(screen)
    screen.caught_up()
    assert lines(page, 1) == ["pay 75"] and "pontoon (11.1) 3:2" in notes(page, 1)
    assert lines(page, 2) == ["push", "take 25"] and "insurance loses" in notes(page, 2)
    assert lines(page, 3) == ["pay 40"] and "12.5" in notes(page, 3)
    assert lines(page, 4) == ["take 15", "return 15"] and "9.5" in notes(page, 4)
    assert lines(page, 5) == ["take 40", "return 40"] and "12.8" in notes(page, 5)
    assert lines(page, 6) == ["take 25"]
    assert lines(page, 7) == ["pay 15"] and "five-card 21 (11.1) 3:2" in notes(page, 7)
    badges = page.eval_on_selector_all(
        "#boxes [data-outcome]", "els => els.map(e => e.dataset.outcome)"
    )
    assert badges == ["win", "push", "win", "surrender", "lose", "lose", "win"]
    # The outcome words are coloured apart: a win is not shown like a loss.
    colour = "e => getComputedStyle(e).backgroundColor"
    win = page.eval_on_selector('#boxes [data-outcome="win"]', colour)
    lose = page.eval_on_selector('#boxes [data-outcome="lose"]', colour)
    assert win != lose
    assert "soft 17" in page.inner_text("#dealer")
    shots(page, "settled-payouts")
    # A Super Bonus round (11.2) and the $50 bonus to every other wager (11.3).
    screen.bets(b1=("ann", 25), b2=("bob", 10))
    screen.dealer({"type": "no_more_bets"})
    screen.shoe("7H", "9C", "7S", "7H", "9D")
    screen.dealer({"type": "offer_surrender", "box": 1})
    screen.shoe("7H")
    screen.dealer({"type": "offer_surrender", "box": 2}, {"type": "stand", "box": 2})
    screen.shoe("9D", "6C")
    screen.caught_up()
    assert lines(page, 1) == ["pay 50", "pay 5000"] and "Super Bonus (11.2)" in notes(page, 1)
    assert lines(page, 2) == ["pay 10", "pay 50"] and "bonus (11.3)" in notes(page, 2)
    assert page.locator("#dealer .badge.bust").count() == 1
    assert "BUST 22" in page.inner_text("#dealer")
    shots(page, "settled-bonus")
    # The dealer's pontoon: insurance wins 2:1; a doubled hand loses the original only (12.7).
    screen.bets(b1=("ann", 20), b2=("bob", 20))
    screen.dealer({"type": "no_more_bets"})
    screen.shoe("5C", "9S", "AH", "6C", "9C")
    screen.dealer(
        {"type": "offer_insurance"},
        {"type": "insurance", "box": 2, "player": "bob", "amount": "10"},
        {"type": "offer_surrender", "box": 1},
        {"type": "double", "box": 1, "player": "ann", "amount": "20"},
    )
    screen.shoe("8C")
    screen.dealer({"type": "offer_surrender", "box": 2}, {"type": "stand", "box": 2})
    screen.shoe("KH")
    screen.caught_up()
    assert lines(page, 1) == ["take 20", "return 20"] and "12.7" in notes(page, 1)
    assert lines(page, 2) == ["take 20", "pay 20"] and "insurance wins (2:1)" in notes(page, 2)
    shots(page, "settled-insurance")


def open_round(s: Screen) -> None:
    s.bets(b2=("ann", 20), b5=("bob", 50))
    s.dealer({"type": "no_more_bets"})
    s.shoe("9S", "8D", "6H", "7C", "9D")  # box 2: 9-7, box 5: 8-9, the dealer's 6


FLAG_CASES: list[tuple[str, str, str]] = [
    # (name, rule, the words the direction must hold)
    ("16.1", "16.1", "Put the 5H in the discard rack"),
    ("16.4", "16.4", "Offer the 4C to box 2"),
    ("16.8", "16.8", "replace the damaged"),
    ("5.5", "5.5", "hand back the chips"),
    ("6.1", "6.1", "hand it to the supervisor"),
    ("misread", "shoe", "the supervisor enters the card"),
    ("16.5", "16.5", "Return box 5's wagers"),
    ("16.7", "16.7", "reshuffled discards"),
    ("16.3", "16.3", "face down in the discard rack"),
]


def make_flag(s: Screen, name: str) -> None:
    if name == "16.1":
        s.shoe("5H", face_up=True)
    elif name == "16.4":
        s.dealer({"type": "offer_surrender", "box": 2})
        s.shoe("4C", in_error="exposed")
    elif name == "16.8":
        s.dealer({"type": "offer_surrender", "box": 2})
        s.shoe("2C", damaged=True)
    elif name == "5.5":
        s.submit({"type": "bet", "box": 3, "player": "cat", "amount": 10}, "camera")
    elif name == "6.1":
        s.shoe("TS")
    elif name == "misread":
        s.submit({"type": "misread", "raw": "K7Q2M9-?S"}, "shoe")
    elif name == "16.5":
        s.submit({"type": "void", "box": 5}, "supervisor")
    elif name == "16.7":
        s.submit({"type": "reshuffle_discards", "cut_card": None}, "supervisor")
    elif name == "16.3":
        s.submit({"type": "void"}, "supervisor")
        s.resolve_all()
        s.shoe("3D")


def test_each_kind_of_flag_stops_the_table_until_seen(screen: Screen) -> None:
    page = screen.page
    open_round(screen)
    page.wait_for_selector('#actions button[data-action="stand"]')
    layout = """() => JSON.stringify(['#boxes', '#actions', '#dealer', '#status', '#due'].map(
        q => document.querySelector(q).getBoundingClientRect()))"""
    for name, rule, direction in FLAG_CASES:
        make_flag(screen, name)
        screen.caught_up()
        alert = page.locator(f'#alerts .alert[data-rule="{rule}"]').first
        alert.wait_for()
        text = alert.inner_text()
        assert (f"Rule {rule}" if rule[0].isdigit() else "Shoe") in text, (name, text)
        assert direction in text, (name, text)
        words = screen.service.setup.rules.words(rule)
        if name != "misread":
            assert words and words in text, (name, text)
        # The banner covers the actions: nothing can be tapped under it.
        covered = page.evaluate(
            """() => { const b = document.querySelector('#actions button');
                       if (!b) return true;
                       const r = b.getBoundingClientRect();
                       const top = document.elementFromPoint(r.x + 5, r.y + 5);
                       return !b.contains(top); }"""
        )
        assert covered, name
        # The banner is an overlay: taking it away moves nothing under it.
        with_banner = page.evaluate(layout)
        page.evaluate("() => document.querySelector('#alerts').classList.add('hidden')")
        assert page.evaluate(layout) == with_banner, name
        page.evaluate("() => document.querySelector('#alerts').classList.remove('hidden')")
        shots(page, f"flag-{name}")
        needs = alert.get_attribute("data-needs")
        if needs == "dealer":
            seq = screen.service.seq
            page.tap(f'#alerts .alert[data-rule="{rule}"] button[data-ack]')
            wait_for(lambda s=seq: screen.service.seq > s, what="the acknowledgement")
            ack = screen.served.table.store.records("T07")[-1].event()
            assert (ack["type"], ack["rule"], ack["actor"]) == ("acknowledge", rule, "ann")
        else:
            assert name in ("6.1", "misread", "16.5", "16.7"), name
            assert "Supervisor needed" in text
            assert alert.locator("button[data-ack]").count() == 0
            if name == "misread":
                (misread,) = screen.service.misreads
                screen.submit(
                    {"type": "card", "card": "2D", "correction_of": misread}, "supervisor"
                )
        screen.resolve_all()
        page.wait_for_selector("#alerts", state="hidden")


def test_play_by_hand_under_a_supervisors_manual_mode(screen: Screen) -> None:
    page = screen.page
    service = screen.service
    service.set_device("shoe", "fault", "/dev/ttyUSB0: no such device")
    service.set_device("camera", "fault", "frame is black")
    page.wait_for_selector('#status[data-state="fault"]')
    assert "Chip camera FAULT" in page.inner_text("#status")
    supervisor_login(page)
    for device in ("shoe", "camera"):
        page.tap(f'[data-sup="manual-on-{device}"]')
        page.tap("#modal [data-reason]")
        before = service.seq
        page.tap("#modal button[data-ok]")
        wait_for(lambda b=before: service.seq > b, what="manual mode")
        page.wait_for_selector(f'[data-sup="manual-off-{device}"]')
    records = [r.event() for r in screen.served.table.store.records("T07")]
    modes = [e for e in records if e["type"] == "manual_mode"]
    assert [(e["device"], e["on"], e["actor"]) for e in modes] == [
        ("shoe", True, "jsmith"),
        ("camera", True, "jsmith"),
    ]
    assert all(e["reason"] for e in modes)
    page.tap("#modal-close")
    page.wait_for_selector('#status[data-state="manual"]')
    assert "Shoe reader MANUAL (shoe reader fault): cards on the card pad" in page.inner_text(
        "#status"
    )
    assert page.get_attribute('#devices .dev[data-device="shoe"]', "data-state") == "manual"
    # The chip pad: box 4, a green and a red chip.
    page.tap('#actions button[data-manual="wager"]')
    page.tap('#modal [data-pad-box="4"]')
    page.tap('#modal [data-chip="25"]')
    page.tap('#modal [data-chip="5"]')
    shots(page, "manual-chip-pad")
    page.tap("#modal button[data-ok]")
    wait_for(lambda: service.table.due().to_dict()["boxes"], what="the wager")
    page.tap('#actions button[data-action="no_more_bets"]')
    # The card pad: each card as it leaves the shoe.
    for card in ("9S", "6H", "7D"):
        screen.caught_up()
        page.tap('#actions button[data-manual="card"]')
        page.tap(f'#modal button[data-rank="{card[0]}"]')
        page.tap(f'#modal button[data-suit="{card[1]}"]')
        before = service.seq
        page.tap("#modal button[data-ok]")
        wait_for(lambda b=before: service.seq > b, what=f"the card {card}")
        page.tap("#modal-close")
    shots(page, "manual-mode")
    entries = [
        r.event()
        for r in screen.served.table.store.records("T07")
        if r.event()["type"] in ("card", "bet")
    ]
    assert [(e["type"], e["source"], e["actor"]) for e in entries] == [
        ("bet", "manual", "ann"),
        ("card", "manual", "ann"),
        ("card", "manual", "ann"),
        ("card", "manual", "ann"),
    ]
    assert entries[0]["amount"] == "30" and entries[0]["player"] == "box4"


def test_connection_lost_covers_the_screen_and_the_devices_read_unknown(
    screen: Screen,
) -> None:
    page = screen.page
    open_round(screen)
    page.wait_for_selector('#actions button[data-action="stand"]')
    where = page.eval_on_selector(
        '#actions button[data-action="stand"]', "e => JSON.stringify(e.getBoundingClientRect())"
    )
    screen.served.close()
    page.wait_for_selector("#conn:not(.hidden)")
    states = page.eval_on_selector_all("#devices .dev", "els => els.map(e => e.dataset.state)")
    assert states and set(states) == {"unknown"}
    # The layout under the overlay did not move.
    assert (
        page.eval_on_selector(
            '#actions button[data-action="stand"]',
            "e => JSON.stringify(e.getBoundingClientRect())",
        )
        == where
    )
    assert "Do not deal" in page.inner_text("#conn")
    shots(page, "connection-lost")


def inspect(s: Screen, serial: str, skip: str = "") -> None:
    for card in deck("T"):
        if card != skip:
            s.shoe(card, deck=serial)


def test_the_days_opening_and_closing_on_the_screen(screen: Screen) -> None:
    page = screen.page
    service = screen.service
    supervisor_login(page)
    page.tap('[data-sup="open-table"]')
    page.tap("#modal button[data-ok]")
    page.wait_for_selector("[data-opening-panel]")
    page.tap("#modal-close")
    assert "opened by ann, jsmith" in page.inner_text("[data-opening-panel]")
    page.tap('[data-opening="inspect"]')
    page.tap("#modal [data-no-serial]")  # the reader decodes the deck's serial
    page.wait_for_selector("[data-inspection]")
    for card in deck("T")[:30]:
        screen.shoe(card, deck="AAAA01")
    screen.caught_up()
    panel = page.inner_text("[data-opening-panel]")
    assert "Deck AAAA01: 30 of 48 read" in panel and "missing so far" in panel
    shots(page, "opening-inspection")
    for card in deck("T")[30:]:
        screen.shoe(card, deck="AAAA01")
    page.tap('[data-opening="inspect_end"]')
    page.wait_for_selector('[data-opening="inspect"]')
    assert "passed: AAAA01" in page.inner_text("[data-opening-panel]")
    for step in ("spread", "chemmy", "stack", "riffle", "cut"):
        before = service.seq
        page.tap(f'[data-opening-step="{step}"]')
        wait_for(lambda b=before: service.seq > b, what=step)
        page.wait_for_selector(f'[data-step="{step}"] .done')
    assert "✓ Spread face up for the players (6.2) — ann" in page.inner_text("[data-opening-panel]")
    shots(page, "opening-steps")
    steps = [r.event() for r in screen.served.table.store.records("T07")]
    confirmed = [(e["step"], e["actor"]) for e in steps if e["type"] == "opening_step"]
    assert confirmed == [(s, "ann") for s in ("spread", "chemmy", "stack", "riffle", "cut")]
    # Closing: the shoe ends, its cards are read out, the supervisor closes the day.
    screen.submit(
        {"type": "shuffle", "decks": 1, "cut_card": 30, "deck_serials": ["AAAA01"]}, "supervisor"
    )
    screen.resolve_all()  # one deck where the game's shoe has six: the supervisor's to see
    page.wait_for_selector('#actions button[data-action="shoe_end"]')
    page.tap('#actions button[data-action="shoe_end"]')
    page.tap("#modal button[data-ok]")  # a confirmation: it is not tapped by mistake
    wait_for(lambda: (service.table.due().shoe or {}).get("ended"), what="the shoe's end")
    inspect(screen, "AAAA01")
    page.tap("#sup-open")
    page.tap('[data-sup="close-table"]')
    page.tap("#modal button[data-ok]")
    wait_for(lambda: service.table.due().opening is None, what="the table to close")
    assert service.table.result()["shoes"][-1]["reconciled"] is True


def every_button_fits_a_finger(page: Page, where: str) -> None:
    found = page.evaluate(
        """() => [...document.querySelectorAll('button')].filter(b => {
                const r = b.getBoundingClientRect(); const s = getComputedStyle(b);
                return r.width > 0 && r.height > 0 && s.visibility !== 'hidden';
            }).map(b => { const r = b.getBoundingClientRect();
                return {text: b.innerText, height: r.height, width: r.width}; })"""
    )
    assert found, where
    for b in found:
        label = re.sub(r"\s+", " ", b["text"])
        assert b["height"] >= 48 and b["width"] >= 48, f"{where}: {label!r} is {b}"


def axe_faults(page: Page, where: str) -> list[str]:
    assert AXE.exists(), f"axe-core is not installed at {AXE}: run `make test` (it installs it)"
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{where}: {v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_every_button_fits_a_finger_and_no_serious_accessibility_fault(
    screen: Screen,
) -> None:
    page = screen.page
    faults: list[str] = []

    def check(where: str) -> None:
        screen.caught_up()
        for w, h in SIZES:
            page.set_viewport_size({"width": w, "height": h})
            every_button_fits_a_finger(page, f"{where} at {w}x{h}")
            metrics = page.evaluate(
                "() => [document.documentElement.scrollWidth, window.innerWidth,"
                " document.documentElement.scrollHeight, window.innerHeight]"
            )
            assert metrics[0] <= metrics[1] and metrics[2] <= metrics[3], (where, metrics)
        faults.extend(axe_faults(page, where))
        page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})

    check("betting")
    open_round(screen)
    page.wait_for_selector('#actions button[data-action="stand"]')
    check("decisions open")
    page.tap('#actions button[data-action="double"]')
    check("double's keypad")
    page.tap("#modal-close")
    make_flag(screen, "16.1")
    page.wait_for_selector("#alerts:not(.hidden)")
    check("a flag")
    screen.resolve_all()
    supervisor_login(page)
    page.wait_for_selector('[data-sup="lock"]')
    check("supervisor panel")
    page.tap("#modal-close")
    round_end = [{"type": "stand", "box": 2}, {"type": "offer_surrender", "box": 5}]
    screen.dealer(*round_end, {"type": "stand", "box": 5})
    screen.shoe("KD", "5S", "4S")
    page.wait_for_selector("#boxes .payout")
    check("settled")
    assert faults == [], "\n".join(faults)


def test_a_box_the_camera_cannot_read_is_keyed_in_on_its_own_chip_pad(screen: Screen) -> None:
    page = screen.page
    service = screen.service
    # The camera works, reads box 2 surely, and cannot read box 3 (a tall stack it is not sure
    # of): box 3 says why and offers its chip pad; box 2 offers none.
    screen.bets(b2=("box2", 10))
    service.camera_unsure({3: "stack height between two counts"})
    page.wait_for_selector('#boxes [data-unsure="3"]')
    assert "camera cannot read: stack height between two counts" in page.inner_text(
        '#boxes [data-unsure="3"]'
    )
    assert page.query_selector('#boxes [data-enter-wager="2"]') is None
    assert page.query_selector('#actions button[data-manual="wager"]') is None  # not manual mode
    shots(page, "camera-cannot-read-a-box")
    page.tap('#boxes button[data-enter-wager="3"]')
    page.tap('#modal [data-chip="25"]')
    page.tap('#modal [data-chip="25"]')
    before = service.seq
    page.tap("#modal button[data-ok]")
    wait_for(lambda: service.seq > before, what="the wager keyed in")
    bet = [r.event() for r in screen.served.table.store.records("T07")][-1]
    assert (bet["type"], bet["box"], bet["amount"], bet["source"], bet["actor"]) == (
        "bet",
        3,
        "50",
        "manual",
        "ann",
    )
    assert bet["note"] == (
        "entered by hand: the camera cannot read box 3 (stack height between two counts)"
    )
    # Box 2, which the camera reads, is the camera's: a wager keyed in for it is refused.
    page.tap('#boxes button[data-enter-wager="3"]')
    page.tap('#modal [data-pad-box="2"]')
    page.tap('#modal [data-chip="5"]')
    page.tap("#modal button[data-ok]")
    page.wait_for_selector("#toast.error:has-text('which reads box 2')")
    assert [r.event() for r in screen.served.table.store.records("T07")][-1] == bet
