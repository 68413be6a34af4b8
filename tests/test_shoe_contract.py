"""The shoe reader's contract, run against a socat pseudo-terminal pair and loop://.

``ReaderContract`` (and ``UnplugContract``) are written against a *rig*: something that makes
cards pass a reader and, where it can, unplugs it. CI rigs write real bytes into a real port;
``hil_tests/test_shoe_hil.py`` runs the same classes against a physical reader (SHOE_PORT).
The helpers here (socat pair, reader harness) are imported by the other shoe tests.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from drivers.shoe.events import CardRead, CutCard, DeviceStatus, Heartbeat, Misread, ShoeEvent
from drivers.shoe.framing import encode
from drivers.shoe.reader import ShoeReader
from drivers.shoe.simulator import FaultPlan, SimulatedShoe, Written, load_shoe, parse_faults
from drivers.shoe.transport import Backoff, SerialTransport, Transport, TransportError

FAST_BACKOFF = Backoff(initial=0.05, factor=2.0, maximum=0.2)
Dealt = CardRead | CutCard

# -- socat pseudo-terminal pair ---------------------------------------------------------------


class SocatPair:
    """``socat -d -d pty,raw,echo=0 pty,raw,echo=0``: two ptys joined back to back.

    ``a``/``b`` are the pty paths socat reports; ``link_a``/``link_b`` are stable symlinks to
    them, so stopping and starting socat again is a reader unplugged and plugged back in.
    """

    def __init__(self, directory: Path) -> None:
        self.link_a = str(directory / "shoe-a")
        self.link_b = str(directory / "shoe-b")
        self.a = ""
        self.b = ""
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 5.0) -> None:
        assert self._proc is None, "socat is already running"
        proc = subprocess.Popen(
            [
                "socat",
                "-d",
                "-d",
                f"pty,raw,echo=0,link={self.link_a}",
                f"pty,raw,echo=0,link={self.link_b}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._proc = proc
        assert proc.stderr is not None
        log = b""
        deadline = time.monotonic() + timeout
        while b"starting data transfer loop" not in log:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([proc.stderr], [], [], max(0.0, left))
            chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
            if not chunk:
                self.stop()
                raise RuntimeError(f"socat did not start within {timeout} s: {log.decode()!r}")
            log += chunk
        ptys = re.findall(rb"PTY is (\S+)", log)
        assert len(ptys) == 2, f"expected two PTY paths in socat's log: {log.decode()!r}"
        self.a, self.b = (p.decode() for p in ptys)
        # keep draining socat's log so it can never block on a full pipe
        threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    @property
    def running(self) -> bool:
        return self._proc is not None


def _drain(pipe: Any) -> None:
    while pipe.read(4096):
        pass


def running_socat(tmp_path: Path) -> Iterator[SocatPair]:
    """Body of the ``socat_pair`` fixture of each shoe test module: started, always stopped."""
    if shutil.which("socat") is None:
        pytest.fail("socat is not installed (apt-get install socat); the shoe tests need it")
    pair = SocatPair(tmp_path)
    pair.start()
    try:
        yield pair
    finally:
        pair.stop()


@pytest.fixture
def socat_pair(tmp_path: Path) -> Iterator[SocatPair]:
    yield from running_socat(tmp_path)


# -- a reader running in a thread, with its timeline of events and status changes -------------


class ReaderHarness:
    def __init__(self, reader: ShoeReader) -> None:
        self.reader = reader
        self.timeline: list[ShoeEvent | DeviceStatus] = []
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            for event in self.reader.events():
                self._record(event)
        except BaseException as exc:  # reported by stop(): the reader must never raise
            self.error = exc

    def _record(self, item: ShoeEvent | DeviceStatus) -> None:
        with self._cond:
            self.timeline.append(item)
            self._cond.notify_all()

    def on_status(self, status: DeviceStatus) -> None:
        self._record(status)

    def start(self) -> ReaderHarness:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.reader.stop()
        self._thread.join(timeout=5)
        assert not self._thread.is_alive(), "the reader did not stop within 5 s"
        assert self.error is None, f"the reader raised {self.error!r}"

    def wait_for(
        self, what: str, check: Callable[[list[ShoeEvent | DeviceStatus]], bool], timeout: float
    ) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: check(self.timeline), timeout=timeout):
                raise AssertionError(
                    f"timed out after {timeout} s waiting for {what}: {self.timeline[-20:]}"
                )

    def events(self, heartbeats: bool = False) -> list[ShoeEvent]:
        with self._cond:
            return [
                e
                for e in self.timeline
                if not isinstance(e, DeviceStatus) and (heartbeats or not isinstance(e, Heartbeat))
            ]

    def statuses(self) -> list[DeviceStatus]:
        with self._cond:
            return [e for e in self.timeline if isinstance(e, DeviceStatus)]

    def wait_for_events(self, count: int, timeout: float) -> list[ShoeEvent]:
        self.wait_for(
            f"{count} events",
            lambda t: sum(1 for e in t if not isinstance(e, DeviceStatus | Heartbeat)) >= count,
            timeout,
        )
        return self.events()

    def wait_for_state(self, state: str, timeout: float, after: int = 0) -> DeviceStatus:
        """The first status ``state`` after the first ``after`` status changes."""
        self.wait_for(
            f"status {state!r}",
            lambda t: any(s.state == state for s in _statuses(t)[after:]),
            timeout,
        )
        return next(s for s in self.statuses()[after:] if s.state == state)


def _statuses(timeline: list[ShoeEvent | DeviceStatus]) -> list[DeviceStatus]:
    return [e for e in timeline if isinstance(e, DeviceStatus)]


def start_reader(
    transport: Transport | str, silence_timeout: float | None = 0.5, **kwargs: Any
) -> ReaderHarness:
    holder: list[ReaderHarness] = []
    reader = ShoeReader(
        transport,
        silence_timeout=silence_timeout,
        backoff=FAST_BACKOFF,
        on_status=lambda s: holder[0].on_status(s),
        **kwargs,
    )
    harness = ReaderHarness(reader)
    holder.append(harness)
    return harness.start()


def expected_events(written: Sequence[Written]) -> list[type | ShoeEvent | int]:
    """What a reader must yield for what the simulated shoe wrote: worked out from the record
    of each line's intent (not by parsing it), faults as misreads; a run of faulty lines with
    no valid line between is one misread, given here as the number of lines in the run."""
    out: list[type | ShoeEvent | int] = []
    for item in written:
        if item.kind == "card":
            assert item.card is not None
            out.append(item.card)
        elif item.kind == "cut_card":
            out.append(CutCard())
        elif item.kind == "heartbeat":
            out.append(Heartbeat)
        elif out and isinstance(out[-1], int):
            out[-1] += 1
        else:
            out.append(1)
    return out


def matches(events: Sequence[ShoeEvent], expected: Sequence[type | ShoeEvent | int]) -> bool:
    if len(events) != len(expected):
        return False
    return all(
        (isinstance(e, Misread) and e.count == x)
        if isinstance(x, int)
        else isinstance(e, x)
        if isinstance(x, type)
        else e == x
        for e, x in zip(events, expected, strict=True)
    )


# -- rigs -------------------------------------------------------------------------------------


class Rig(Protocol):
    """What a contract test needs from its setting (CI port pair, or a physical reader)."""

    silence_timeout: float | None
    heartbeat_period: float
    timeout: float  # how long to wait for cards to be dealt

    def reader_port(self) -> Transport | str: ...

    def test_cards(self) -> list[Dealt]: ...

    def deal(self, cards: Sequence[Dealt]) -> None: ...

    def unplug(self) -> None: ...

    def replug(self) -> None: ...


class WritingRig:
    """A CI rig: writes reader lines into a port, with a heartbeat every 0.1 s."""

    silence_timeout: float | None = 1.0  # ten heartbeats: no false alarm on a busy CI box
    heartbeat_period = 0.1
    timeout = 5.0

    def __init__(self, writer: Transport) -> None:
        self.writer = writer
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beats = 0
        self._thread = threading.Thread(target=self._heartbeat, daemon=True)

    def start(self) -> None:
        self.writer.open()
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.writer.close()

    def write(self, data: bytes) -> None:
        with self._lock:
            self.writer.write(data)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.heartbeat_period):
            self._beats += 1
            with contextlib.suppress(TransportError):  # unplugged on purpose by some tests
                self.write(encode(Heartbeat(self._beats)))

    def test_cards(self) -> list[Dealt]:
        load = load_shoe(2, random.Random(4), cut_card=None)
        cards: list[Dealt] = list(load.cards[:20])
        cards.insert(7, CardRead(cards[7].card, cards[7].deck, face_up=True))  # type: ignore[union-attr]
        cards.insert(12, CutCard())
        return cards

    def deal(self, cards: Sequence[Dealt]) -> None:
        for card in cards:
            self.write(encode(card))


class PtyRig(WritingRig):
    def __init__(self, pair: SocatPair) -> None:
        super().__init__(SerialTransport(pair.link_a))
        self.pair = pair

    def reader_port(self) -> Transport | str:
        return self.pair.link_b

    def unplug(self) -> None:
        with self._lock:
            self.writer.close()
            self.pair.stop()

    def replug(self) -> None:
        with self._lock:
            self.pair.start()
            self.writer.open()


class LoopRig(WritingRig):
    """loop://: one port whose writes come back as reads, shared by writer and reader."""

    def __init__(self) -> None:
        super().__init__(SerialTransport("loop://"))

    def reader_port(self) -> Transport | str:
        return self.writer

    def unplug(self) -> None:  # pragma: no cover - LoopRig runs only ReaderContract
        raise NotImplementedError("loop:// cannot be unplugged")

    replug = unplug


# -- the contract -----------------------------------------------------------------------------


class ReaderContract:
    """What any shoe reader on any port must do. Subclasses provide the ``rig`` fixture."""

    def test_cards_arrive_in_the_order_drawn_with_their_deck_serials(self, rig: Rig) -> None:
        harness = start_reader(rig.reader_port(), rig.silence_timeout)
        try:
            harness.wait_for_state("connected", timeout=5)
            cards = rig.test_cards()
            rig.deal(cards)
            events = harness.wait_for_events(len(cards), timeout=rig.timeout)
            assert events == cards
        finally:
            harness.stop()

    def test_heartbeats_keep_the_reader_connected(self, rig: Rig) -> None:
        if rig.silence_timeout is None:
            pytest.skip("this reader sends no heartbeat (SHOE_NO_HEARTBEAT)")
        harness = start_reader(rig.reader_port(), rig.silence_timeout)
        try:
            watch = rig.silence_timeout * 2
            harness.wait_for(
                "heartbeats",
                lambda t: sum(isinstance(e, Heartbeat) for e in t) >= 3,
                timeout=watch + 5 * rig.heartbeat_period,
            )
            time.sleep(watch)
            beats = [e.counter for e in harness.events(heartbeats=True) if isinstance(e, Heartbeat)]
            assert beats == sorted(set(beats)), f"heartbeat counters not increasing: {beats}"
            assert harness.events() == [], "an idle reader sends only well-formed heartbeats"
            assert [s.state for s in harness.statuses()] == ["connected"]
        finally:
            harness.stop()


class UnplugContract:
    def test_an_unplugged_reader_is_a_fault_until_it_is_plugged_back(self, rig: Rig) -> None:
        harness = start_reader(rig.reader_port(), rig.silence_timeout)
        try:
            harness.wait_for_state("connected", timeout=5)
            rig.unplug()
            fault = harness.wait_for_state("fault", timeout=rig.timeout, after=1)
            assert fault.reason, "a fault must say why"
            rig.replug()
            harness.wait_for_state("connected", timeout=rig.timeout, after=2)
            cards = rig.test_cards()[:3]
            rig.deal(cards)
            assert harness.wait_for_events(3, timeout=rig.timeout) == cards
        finally:
            harness.stop()


@pytest.fixture
def pty_rig(socat_pair: SocatPair) -> Iterator[PtyRig]:
    rig = PtyRig(socat_pair)
    rig.start()
    try:
        yield rig
    finally:
        rig.close()


class TestPtyReader(ReaderContract, UnplugContract):
    @pytest.fixture
    def rig(self, pty_rig: PtyRig) -> PtyRig:
        return pty_rig


class TestLoopReader(ReaderContract):
    @pytest.fixture
    def rig(self) -> Iterator[LoopRig]:
        rig = LoopRig()
        rig.start()
        try:
            yield rig
        finally:
            rig.close()


# -- the simulated shoe through a real port, faults included ----------------------------------


def run_simulated_shoe(
    writer: Transport, faults: FaultPlan, *, cards: int, seed: int = 11, **kwargs: Any
) -> list[Written]:
    load = load_shoe(2, random.Random(seed), cut_card=10)
    shoe = SimulatedShoe(
        writer,
        load,
        random.Random(seed),
        interval=0.0,
        faults=faults,
        **kwargs,
    )
    return shoe.run(cards)


@pytest.mark.parametrize("with_checksum", [False, True])
def test_a_simulated_shoe_with_faults_is_read_line_for_line_over_a_pty(
    socat_pair: SocatPair, with_checksum: bool
) -> None:
    harness = start_reader(socat_pair.b, silence_timeout=None)
    writer = SerialTransport(socat_pair.a)
    try:
        harness.wait_for_state("connected", timeout=5)
        faults = parse_faults(
            "misread@3,checksum@5,garbage@7,faceup@9,faceup@15,misread=0.1,garbage=0.1"
        )
        written = run_simulated_shoe(writer, faults, cards=60, with_checksum=with_checksum)
        expected = expected_events(written)
        harness.wait_for(
            "every line written",
            lambda t: len([e for e in t if not isinstance(e, DeviceStatus)]) >= len(expected),
            timeout=10,
        )
        events = harness.events(heartbeats=True)
        assert matches(events, expected), list(zip(events, expected, strict=False))
        misreads = [e for e in events if isinstance(e, Misread)]
        faulty = [
            (w.data.rstrip(b"\r\n"), i)
            for i, w in enumerate(written)
            if w.kind not in ("card", "cut_card", "heartbeat")
        ]
        # Each run is reported with the raw bytes of its first line; no faulty line is lost.
        firsts = [raw for n, (raw, i) in enumerate(faulty) if n == 0 or faulty[n - 1][1] != i - 1]
        assert [m.raw for m in misreads] == firsts
        assert sum(m.count for m in misreads) == len(faulty)
        face_up = [e for e in events if isinstance(e, CardRead) and e.face_up]
        assert face_up == [
            w.card for w in written if w.kind == "card" and w.card and w.card.face_up
        ]
        assert face_up, "the shoe should have had a card face up"
    finally:
        writer.close()
        harness.stop()


def test_a_simulated_shoe_over_loop_is_read_line_for_line() -> None:
    port = SerialTransport("loop://")
    port.open()
    harness = start_reader(port, silence_timeout=None)
    try:
        faults = parse_faults("misread@2,checksum@4,garbage@6,faceup@8")
        written = run_simulated_shoe(port, faults, cards=30)
        expected = expected_events(written)
        harness.wait_for(
            "every line written",
            lambda t: len([e for e in t if not isinstance(e, DeviceStatus)]) >= len(expected),
            timeout=10,
        )
        assert matches(harness.events(heartbeats=True), expected)
    finally:
        harness.stop()
