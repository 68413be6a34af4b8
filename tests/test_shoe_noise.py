"""A noisy shoe line: a device fault, misreads counted in runs, nothing real dropped.

The gate is checked on hand-timed sequences, a property test interleaves random garbage with
real card lines split anywhere, and the reader and the table service are run on a real
pseudo-terminal flooded with garbage.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_shoe_contract import start_reader

from controller.engine.desk import MAX_MISREADS
from controller.service.app import open_table
from controller.service.demo import PtyPair
from controller.service.devices import ShoeFeed
from controller.service.pin import hash_pin
from drivers.shoe.events import CardRead, Heartbeat, Misread, ShoeEvent
from drivers.shoe.framing import LineFramer, encode, parse_line
from drivers.shoe.noise import NoiseGate

CARD = CardRead("7S", "K7Q2M9")


def bad(n: int) -> Misread:
    return Misread(f"JUNK{n}?".encode(), "not a card barcode")


def test_one_misread_then_a_card_is_one_misread_then_the_card() -> None:
    gate = NoiseGate(limit=5, window=10)
    assert gate.feed(bad(1), 0.0) == []  # held while a run may go on
    assert gate.feed(CARD, 0.1) == [bad(1), CARD]
    assert gate.noise(0.1) is None


def test_a_run_of_misreads_is_one_counted_misread_with_the_first_lines_bytes() -> None:
    gate = NoiseGate(limit=5, window=10)
    out: list[ShoeEvent] = []
    for n in range(7):
        out += gate.feed(bad(n), n * 0.01)
    assert out == []
    out += gate.feed(CARD, 0.1)
    assert len(out) == 2 and out[1] == CARD
    run = out[0]
    assert isinstance(run, Misread) and run.count == 7 and run.raw == b"JUNK0?"
    assert run.to_dict()["count"] == 7 and "7 misreads in a row" in run.reason


def test_a_run_ends_after_a_quiet_gap_and_at_least_every_run_max_seconds() -> None:
    gate = NoiseGate(limit=100, window=10, run_gap=0.3, run_max=2.0)
    gate.feed(bad(1), 0.0)
    assert gate.tick(0.2) == []
    assert gate.tick(0.3) == [bad(1)]
    out: list[ShoeEvent] = []
    t = 1.0
    while t < 5.05:  # a misread every 0.1 s for 4 s: reported once 2 s have passed
        out += gate.feed(bad(2), t)
        t += 0.1
    out += gate.tick(t + 1)
    counts = [e.count for e in out if isinstance(e, Misread)]
    assert counts == [21, 20]  # 1.0–3.0 s, then 3.1–5.0 s


def test_past_the_limit_the_line_is_noisy_until_a_window_passes_without_a_misread() -> None:
    gate = NoiseGate(limit=5, window=10)
    for n in range(5):  # five within the window: a damaged card or five, not noise
        gate.feed(bad(n), n * 1.0)
        gate.feed(CARD, n * 1.0 + 0.5)
    assert gate.noise(4.5) is None
    gate.feed(bad(5), 5.0)  # the sixth within 10 s
    reason = gate.noise(5.0)
    assert reason is not None and "line noise" in reason and "5 misreads within 10 s" in reason
    assert gate.noise(14.9) is not None
    assert gate.noise(15.0) is None
    gate.feed(bad(6), 15.5)  # one more is not noise again
    assert gate.noise(15.5) is None


def test_misreads_spread_out_are_never_noise() -> None:
    gate = NoiseGate(limit=5, window=10)
    for n in range(50):  # one every 2.1 s: at most 5 in any 10 s
        gate.feed(bad(n), n * 2.1)
        assert gate.noise(n * 2.1) is None


garbage_line = st.binary(min_size=1, max_size=120).filter(
    lambda b: b"\r" not in b and b"\n" not in b and isinstance(parse_line(b), Misread)
)
cards = st.builds(
    CardRead,
    card=st.sampled_from(["AS", "7H", "TD", "KC", "2S"]),
    deck=st.sampled_from(["K7Q2M9", "AB12", "ZZZZ99"]),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(garbage_line, cards), min_size=1, max_size=60),
    st.lists(st.integers(min_value=1, max_value=97), min_size=1, max_size=20),
)
def test_every_card_amid_garbage_comes_through_in_order_and_every_misread_is_counted(
    lines: list[bytes | CardRead], cuts: list[int]
) -> None:
    stream = b"".join(encode(x) if isinstance(x, CardRead) else x + b"\r\n" for x in lines)
    framer, gate = LineFramer(), NoiseGate(limit=3, window=1.0)
    out: list[ShoeEvent] = []
    pos, now, i = 0, 0.0, 0
    while pos < len(stream):  # the stream split anywhere, time passing as it comes
        step = cuts[i % len(cuts)]
        out += gate.feed_all(framer.feed(stream[pos : pos + step]), now)
        out += gate.tick(now)
        pos, now, i = pos + step, now + 0.05, i + 1
    out += gate.feed_all(framer.flush("end"), now) + gate.flush()
    assert [e for e in out if isinstance(e, CardRead)] == [
        x for x in lines if not isinstance(x, bytes)
    ]
    assert sum(e.count for e in out if isinstance(e, Misread)) == sum(
        isinstance(x, bytes) for x in lines
    )


def flood(master: int, rng: random.Random, lines: int, cards: list[CardRead]) -> bytes:
    """Garbage lines with the cards spread among them; returns what was written."""
    written = bytearray()
    at = sorted(rng.sample(range(lines), len(cards)))
    for n in range(lines):
        chunk = b"%\x07noise" + bytes(rng.randrange(33, 127) for _ in range(rng.randrange(4, 40)))
        chunk += b"\r\n"
        if at and at[0] == n:
            at.pop(0)
            chunk += encode(cards[len(cards) - len(at) - 1])
        os.write(master, chunk)
        written += chunk
    return bytes(written)


def test_a_flooded_line_is_a_line_noise_fault_and_every_card_still_arrives() -> None:
    pty = PtyPair()
    harness = start_reader(pty.path, silence_timeout=None, noise_misreads=5, noise_window=0.5)
    try:
        harness.wait_for_state("connected", timeout=5)
        dealt = [CardRead(c, "K7Q2M9") for c in ("AS", "9D", "QH", "3C", "TS")]
        sent = flood(pty.master, random.Random(3), 3000, dealt)
        assert len(sent) > 60_000
        harness.wait_for_events(1, timeout=5)
        fault = harness.wait_for_state("fault", timeout=5)
        assert "line noise" in fault.reason
        harness.wait_for(
            "every card", lambda t: sum(isinstance(e, CardRead) for e in t) == 5, timeout=10
        )
        os.write(pty.master, encode(Heartbeat(1)))
        harness.wait_for_state("connected", timeout=5, after=2)  # quiet again
        events = harness.events()
        assert [e for e in events if isinstance(e, CardRead)] == dealt
        runs = [e for e in events if isinstance(e, Misread)]
        assert sum(r.count for r in runs) == 3000
        assert len(runs) <= 6 + 3000 // 200  # a run per gap between cards, and per pause
    finally:
        harness.stop()
        pty.close()


def test_the_table_records_a_noisy_line_as_a_few_counted_misreads(tmp_path: Path) -> None:
    line = {"type": "table", "game": "pontoon-nz-2000", "table_id": "T07", "boxes": 7}
    table = open_table(
        {**line, "min_bet": 5, "max_bet": 1000},
        f"sqlite:///{tmp_path / 'audit.db'}",
        {"jsmith": hash_pin("2468", iterations=1000)},
    )
    pty = PtyPair()
    feed = ShoeFeed(table.service, pty.path, silence_timeout=None, noise_misreads=5)
    feed.start()
    try:
        table.service.submit({"type": "shuffle", "decks": 6, "cut_card": 200}, source="dealer")
        before = table.service.seq
        dealt = [CardRead(c, "K7Q2M9") for c in ("AS", "9D", "QH")]
        rng = random.Random(5)
        for _ in range(25):  # bursts of noise, a card now and then, for a few seconds
            flood(pty.master, rng, 120, [dealt[rng.randrange(3)]] if rng.random() < 0.2 else [])
            time.sleep(0.1)
        deadline = time.monotonic() + 10
        while table.service.device("shoe").state != "fault":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert "line noise" in table.service.device("shoe").reason
        time.sleep(0.6)  # the last run ends
        records = [r.event() for r in table.store.records("T07")][before + 1 :]
        misreads = [e for e in records if e["type"] == "misread"]
        assert records and all(e["type"] in ("misread", "card") for e in records)
        counted = sum(int(e.get("note", "1 ").split()[0]) for e in misreads)
        assert counted == 25 * 120
        assert len(misreads) < 120  # not one audited event (and fsync) per garbage line
        assert len(table.service.misreads) <= MAX_MISREADS
        snap = table.service.snapshot()
        assert snap["misreads_dropped"] == max(0, len(misreads) - MAX_MISREADS)
    finally:
        feed.stop()
        table.close()
        pty.close()
