"""``floorctl shoe listen`` and ``floorctl shoe simulate``, run as a technician would."""

from __future__ import annotations

import json
import random
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_shoe_contract import SocatPair, running_socat, start_reader

from controller.replay import replay_dicts
from drivers.shoe.bridge import to_engine_event
from drivers.shoe.events import CardRead, CutCard, Heartbeat
from drivers.shoe.framing import encode, parse_line
from drivers.shoe.simulator import load_shoe
from drivers.shoe.transport import SerialTransport

FLOORCTL = [sys.executable, "-m", "controller.cli"]


@pytest.fixture
def socat_pair(tmp_path: Path) -> Iterator[SocatPair]:
    yield from running_socat(tmp_path)


def floorctl(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FLOORCTL, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


class Listener:
    """``floorctl shoe listen`` in the background, its standard output read line by line."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*FLOORCTL, "shoe", "listen", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def line(self, timeout: float = 10) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"floorctl shoe listen printed nothing for {timeout} s"
        return self.proc.stdout.readline().rstrip("\n")

    def finish(self, timeout: float = 10) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err


def test_listen_json_prints_status_then_each_event_as_it_arrives(socat_pair: SocatPair) -> None:
    listener = Listener("--url", socat_pair.b, "--json", "--count", "4", "--no-heartbeat")
    first = json.loads(listener.line())
    assert first["type"] == "status" and first["state"] == "connected"
    assert first["url"] == socat_pair.b
    writer = SerialTransport(socat_pair.a)
    writer.open()
    writer.write(
        encode(CardRead("7S", "K7Q2M9"))
        + encode(CardRead("QH", "K7Q2M9", face_up=True), with_checksum=True)
        + b"K7Q2M9-7S*01\r\n"
        + encode(CutCard())
        + encode(CardRead("2D", "K7Q2M9"))  # after --count 4: not printed
    )
    writer.close()
    status, out, err = listener.finish()
    assert status == 0, err
    events: list[dict[str, Any]] = [json.loads(line) for line in out.splitlines()]
    for event in events:
        assert event.pop("time").startswith("20")
    assert events == [
        {"type": "card", "card": "7S", "deck": "K7Q2M9"},
        {"type": "card", "card": "QH", "deck": "K7Q2M9", "face_up": True},
        {
            "type": "misread",
            "raw": "K7Q2M9-7S*01",
            "reason": "checksum *01 does not match *22",
        },
        {"type": "cut_card"},
    ]


def test_listen_shows_a_silent_reader_as_a_fault_in_plain_text(socat_pair: SocatPair) -> None:
    listener = Listener("--url", socat_pair.b, "--silence", "0.3", "--seconds", "2")
    assert listener.line() == f"-- connected ({socat_pair.b})"
    writer = SerialTransport(socat_pair.a)
    writer.open()
    writer.write(encode(Heartbeat(41)) + b"#ERR lamp dim\r\n" + b"AB-7S\r\n")
    status, out, err = listener.finish()
    writer.close()
    assert status == 0, err
    lines = out.splitlines()
    assert lines[:3] == [
        "heartbeat 41",
        "reader error: lamp dim",
        "MISREAD 'AB-7S': not a card barcode <deck serial>-<card>, CUT or #message",
    ]
    assert lines[3].startswith(f"-- FAULT: {socat_pair.b}: reader silent for")
    fault_log = [json.loads(x) for x in err.splitlines() if '"shoe.fault"' in x]
    assert fault_log and fault_log[0]["level"] == "error"


def test_simulate_deals_the_seeded_shoe_into_a_port(socat_pair: SocatPair) -> None:
    harness = start_reader(socat_pair.b, silence_timeout=None)
    try:
        harness.wait_for_state("connected", timeout=5)
        result = floorctl(
            "shoe", "simulate", "--url", socat_pair.a, "--decks", "2", "--seed", "5",
            "--interval", "0", "--cards", "30", "--cut-card", "20", "--faults", "faceup@3",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        load = load_shoe(2, random.Random(5), cut_card=20)
        assert json.loads(result.stdout.splitlines()[0]) == load.shuffle_event()
        assert "wrote 32 lines (card 30, cut_card 1, heartbeat 1)" in result.stderr
        events = harness.wait_for_events(31, timeout=10)
    finally:
        harness.stop()
    third = load.cards[2]
    expected = [
        *load.cards[:2],
        CardRead(third.card, third.deck, face_up=True),
        *load.cards[3:20],
        CutCard(),
        *load.cards[20:30],
    ]
    assert events == expected


def test_simulate_refuses_a_bad_fault_spec_naming_it() -> None:
    result = floorctl("shoe", "simulate", "--url", "loop://", "--decks", "1", "--faults", "smoke")
    assert result.returncode == 2
    assert "fault 'smoke' is not KIND" in result.stderr


def test_simulate_refuses_a_cut_card_beyond_the_shoe() -> None:
    result = floorctl("shoe", "simulate", "--url", "loop://", "--decks", "1", "--cut-card", "60")
    assert result.returncode == 2
    assert "cut card position 60 is outside 0..52" in result.stderr


def test_simulate_names_a_port_it_cannot_open(tmp_path: Path) -> None:
    missing = str(tmp_path / "ttyUSB9")
    started = time.monotonic()
    result = floorctl("shoe", "simulate", "--url", missing, "--decks", "1")
    assert result.returncode == 1
    assert f"{missing}: cannot open port" in result.stderr
    assert time.monotonic() - started < 20


def test_simulate_inspects_deals_and_reads_out_a_short_deck_the_engine_then_names() -> None:
    # The simulated shoe's lines (--echo) and the dealer's taps it prints, in the order they
    # happened, make the scenario; the engine must name the card the simulator took out.
    result = floorctl(
        "shoe", "simulate", "--url", "loop://", "--decks", "2", "--pontoon", "--seed", "9",
        "--interval", "0", "--read-interval", "0", "--cards", "30", "--no-heartbeat",
        "--inspect", "--read-out", "--echo", "--faults", "short-deck@2",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [put_in] = [x for x in result.stderr.splitlines() if "put in" in x]
    missing = re.search(r"short-deck in deck (\w+): (\w+-\w\w) missing", put_in)
    assert missing is not None
    serial, card = missing[1], missing[2]
    events: list[dict[str, Any]] = []
    for line in result.stdout.splitlines():
        obj = json.loads(line)
        if "type" in obj:
            events.append(obj)
        else:
            read = parse_line(obj["line"].encode("latin-1").rstrip(b"\r\n"))
            engine = to_engine_event(read)
            assert engine is not None
            events.append(engine)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "inspect" and kinds.count("inspect") == kinds.count("inspect_end") == 2
    assert kinds.count("card") == 48 + 47 + 95 and "shoe_end" in kinds
    table = {"type": "table", "game": "pontoon-nz-2000", "boxes": 7, "decks": 2,
             "min_bet": 5, "max_bet": 1000}  # fmt: skip
    doc = replay_dicts([table, *events, {"type": "close_table"}])
    assert doc["inspections"][1]["deck"] == serial
    assert doc["inspections"][1]["missing"] == [card.split("-")[1]]
    assert doc["shoes"][0]["missing"] == [card] and doc["shoes"][0]["extra"] == []
    assert doc["shoes"][0]["reconciled"] is False
