"""The reader's device handling: silence, a missing port, unplugging, socket://, logging."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from test_shoe_contract import (
    FAST_BACKOFF,
    SocatPair,
    expected_events,
    matches,
    run_simulated_shoe,
    running_socat,
    start_reader,
)

from drivers.shoe.events import CardRead, CutCard, DeviceStatus, Heartbeat, Misread, ShoeEvent
from drivers.shoe.framing import encode
from drivers.shoe.reader import ShoeReader
from drivers.shoe.simulator import parse_faults
from drivers.shoe.transport import Backoff, SerialTransport


@pytest.fixture
def socat_pair(tmp_path: Path) -> Iterator[SocatPair]:
    yield from running_socat(tmp_path)


def test_silence_past_the_limit_is_a_fault_and_the_next_line_clears_it(
    socat_pair: SocatPair,
) -> None:
    harness = start_reader(socat_pair.b, silence_timeout=0.3)
    writer = SerialTransport(socat_pair.a)
    writer.open()
    try:
        harness.wait_for_state("connected", timeout=5)
        writer.write(encode(Heartbeat(1)))
        fault = harness.wait_for_state("fault", timeout=3)
        assert "silent" in fault.reason and socat_pair.b in fault.reason
        writer.write(encode(CardRead("9D", "AB12CD")))
        harness.wait_for_state("connected", timeout=3, after=2)
        assert harness.events() == [CardRead("9D", "AB12CD")]
        assert [s.state for s in harness.statuses()] == ["connected", "fault", "connected"]
    finally:
        writer.close()
        harness.stop()


def test_a_reader_without_heartbeat_is_never_a_silence_fault(socat_pair: SocatPair) -> None:
    harness = start_reader(socat_pair.b, silence_timeout=None)
    try:
        harness.wait_for_state("connected", timeout=5)
        time.sleep(0.5)
        assert [s.state for s in harness.statuses()] == ["connected"]
    finally:
        harness.stop()


def test_a_port_that_is_not_there_yet_is_one_fault_then_connects_when_it_appears(
    tmp_path: Path,
) -> None:
    pair = SocatPair(tmp_path)
    harness = start_reader(pair.link_b, silence_timeout=None)
    try:
        fault = harness.wait_for_state("fault", timeout=3)
        assert pair.link_b in fault.reason and "No such file" in fault.reason
        time.sleep(0.5)  # several retries with backoff: the screen still shows one fault
        assert [s.state for s in harness.statuses()] == ["fault"]
        pair.start()
        harness.wait_for_state("connected", timeout=3)
        writer = SerialTransport(pair.link_a)
        writer.open()
        writer.write(encode(CutCard()))
        assert harness.wait_for_events(1, timeout=3) == [CutCard()]
        writer.close()
    finally:
        harness.stop()
        pair.stop()


def test_lines_read_before_an_unplug_arrive_before_the_fault_and_a_cut_line_is_a_misread(
    socat_pair: SocatPair,
) -> None:
    harness = start_reader(socat_pair.link_b, silence_timeout=None)
    writer = SerialTransport(socat_pair.link_a)
    writer.open()
    try:
        harness.wait_for_state("connected", timeout=5)
        writer.write(encode(CardRead("2C", "QQQQ")) + encode(CardRead("3C", "QQQQ")) + b"QQQQ-4")
        harness.wait_for_events(2, timeout=3)
        time.sleep(0.2)  # the reader has the partial line in hand
        writer.close()
        socat_pair.stop()
        harness.wait_for_state("fault", timeout=3, after=1)
        timeline = [t for t in harness.timeline if not isinstance(t, Heartbeat)]
        assert timeline[1:3] == [CardRead("2C", "QQQQ"), CardRead("3C", "QQQQ")]
        cut = timeline[3]
        assert isinstance(cut, Misread) and cut.raw == b"QQQQ-4" and "cut off" in cut.reason
        fault = timeline[4]
        assert isinstance(fault, DeviceStatus) and fault.state == "fault"
        assert "port lost" in fault.reason
    finally:
        harness.stop()


def test_the_simulated_shoe_dropping_its_connection_loses_no_card(socat_pair: SocatPair) -> None:
    harness = start_reader(socat_pair.b, silence_timeout=0.5)
    writer = SerialTransport(socat_pair.a)
    try:
        harness.wait_for_state("connected", timeout=5)
        written = run_simulated_shoe(
            writer,
            parse_faults("drop@5,silence@9"),
            cards=12,
            heartbeat_interval=0.05,
            drop_seconds=1.0,
            silence_seconds=1.0,
        )
        expected = expected_events(written)
        harness.wait_for(
            "every line written",
            lambda t: len([e for e in t if not isinstance(e, DeviceStatus)]) >= len(expected),
            timeout=5,
        )
        assert matches(harness.events(heartbeats=True), expected)
        states = [s.state for s in harness.statuses()]
        assert states == ["connected", "fault", "connected", "fault", "connected"]
    finally:
        writer.close()
        harness.stop()


class OneClientAtATimeServer:
    """A loopback TCP server standing in for a serial-over-network adapter."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(5)

    def accept(self) -> socket.socket:
        conn, _ = self.sock.accept()
        return conn

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def tcp_server() -> Iterator[OneClientAtATimeServer]:
    server = OneClientAtATimeServer()
    try:
        yield server
    finally:
        server.close()


def test_socket_url_reconnects_after_the_server_drops_the_connection(
    tcp_server: OneClientAtATimeServer,
) -> None:
    harness = start_reader(f"socket://127.0.0.1:{tcp_server.port}", silence_timeout=None)
    try:
        first = tcp_server.accept()
        harness.wait_for_state("connected", timeout=3)
        first.sendall(encode(CardRead("AS", "NET1")) + encode(CutCard()))
        harness.wait_for_events(2, timeout=3)
        first.close()
        fault = harness.wait_for_state("fault", timeout=3, after=1)
        assert f"socket://127.0.0.1:{tcp_server.port}" in fault.reason
        second = tcp_server.accept()
        harness.wait_for_state("connected", timeout=3, after=2)
        second.sendall(encode(CardRead("KD", "NET1")))
        assert harness.wait_for_events(3, timeout=3) == [
            CardRead("AS", "NET1"),
            CutCard(),
            CardRead("KD", "NET1"),
        ]
        second.close()
    finally:
        harness.stop()


def test_faults_and_misreads_are_logged_as_data() -> None:
    port = SerialTransport("loop://")
    port.open()
    with structlog.testing.capture_logs() as logs:
        reader = ShoeReader(port, silence_timeout=0.2, backoff=FAST_BACKOFF)
        port.write(b"K7Q2M9-7S*00\r\n")
        events: list[ShoeEvent] = []
        thread = threading.Thread(target=reader.run, args=(events.append,))
        thread.start()
        time.sleep(0.6)
        reader.stop()
        thread.join(timeout=5)
    assert [type(e) for e in events] == [Misread]
    misread = next(entry for entry in logs if entry["event"] == "shoe.misread")
    assert misread["log_level"] == "warning"
    assert misread["raw"] == "K7Q2M9-7S*00" and "checksum" in misread["reason"]
    fault = next(entry for entry in logs if entry["event"] == "shoe.fault")
    assert fault["log_level"] == "error" and fault["url"] == "loop://"
    assert "silent" in fault["reason"]


def test_a_failing_status_callback_does_not_stop_the_reader() -> None:
    port = SerialTransport("loop://")
    port.open()

    def broken(status: DeviceStatus) -> None:
        raise RuntimeError("screen unavailable")

    reader = ShoeReader(port, silence_timeout=None, on_status=broken)
    port.write(encode(CardRead("5H", "ABCD")))
    with structlog.testing.capture_logs() as logs:
        events = reader.events()
        assert next(events) == CardRead("5H", "ABCD")
        reader.stop()
        assert list(events) == []
    assert any(entry["event"] == "shoe.status_callback_failed" for entry in logs)


def test_stop_ends_the_reader_promptly_even_while_it_waits_to_reconnect(tmp_path: Path) -> None:
    reader = ShoeReader(str(tmp_path / "no-such-port"), backoff=Backoff(5.0, 1.0, 5.0))
    thread = threading.Thread(target=reader.run, args=(lambda e: None,))
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    reader.stop()
    thread.join(timeout=3)
    assert not thread.is_alive() and time.monotonic() - started < 1.0
    assert reader.status.state == "fault"


def test_backoff_grows_to_its_maximum() -> None:
    delays = Backoff(initial=0.1, factor=2.0, maximum=1.0).delays()
    assert [round(next(delays), 3) for _ in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    with pytest.raises(ValueError, match="initial <= maximum"):
        Backoff(initial=2.0, maximum=1.0)


def test_a_shoe_read_over_a_pty_keeps_every_card_of_a_seeded_shoe(socat_pair: SocatPair) -> None:
    """A whole 6-deck shoe, written as fast as the pty takes it: nothing lost or reordered."""
    from drivers.shoe.simulator import load_shoe

    load = load_shoe(6, random.Random(99))
    harness = start_reader(socat_pair.b, silence_timeout=None)
    writer = SerialTransport(socat_pair.a)
    writer.open()
    try:
        harness.wait_for_state("connected", timeout=5)
        writer.write(b"".join(encode(card) for card in load.cards))
        assert harness.wait_for_events(len(load.cards), timeout=10) == list(load.cards)
    finally:
        writer.close()
        harness.stop()
