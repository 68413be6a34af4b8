"""From per-frame readings to stable wagers, and from stable wagers to ``wager_seen`` events.

A box's wager is reported only once the detector has read the same chips there, with at least
``min_confidence``, in ``k`` frames in a row. A frame in which the box cannot be read (a hand
over it, a low confidence) breaks the run but never changes the stable wager, so a hand
passing over the layout is not a change of wager.

A box read below ``min_confidence`` in ``k`` frames in a row is *unsure* (``unsure``: box ->
the detector's reason) until it is read surely in ``k`` frames in a row again: its wager is
then the dealer's to enter by hand, while the camera goes on reading the other boxes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from drivers.camera.detector import BoxReading, FrameReading

RESTLESS = 4  # k-frame spans a box may read surely but never alike before it is unsure


@dataclass(frozen=True)
class StableReport:
    """A box's wager once it has held for ``frames`` frames."""

    box: int
    amount: Decimal
    chips: dict[int, int]
    confidence: float  # the lowest confidence over the run that made it stable
    frames: int
    previous: Decimal | None  # the stable amount before this one (None: first report)


@dataclass
class _Run:
    key: tuple[Decimal, tuple[tuple[int, int], ...]] | None = None
    reading: BoxReading | None = None
    length: int = 0
    confidence: float = 1.0


@dataclass
class StabilityTracker:
    boxes: tuple[int, ...]
    k: int
    min_confidence: float
    stable: dict[int, StableReport] = field(default_factory=dict)
    unsure: dict[int, str] = field(default_factory=dict)  # box -> why it cannot be read
    _runs: dict[int, _Run] = field(default_factory=dict, init=False, repr=False)
    _doubt: dict[int, int] = field(default_factory=dict, init=False, repr=False)
    _restless: dict[int, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"stable_frames must be at least 1, not {self.k}")
        self._runs = {b: _Run() for b in self.boxes}
        self._doubt = {b: 0 for b in self.boxes}
        self._restless = {b: 0 for b in self.boxes}

    def update(self, reading: FrameReading) -> list[StableReport]:
        """Feed one frame's readings; returns the boxes whose stable wager changed."""
        out: list[StableReport] = []
        for box in self.boxes:
            r = reading.boxes.get(box)
            run = self._runs[box]
            if r is None or r.confidence < self.min_confidence:
                self._runs[box] = _Run()
                self._doubt[box] += 1
                if self._doubt[box] >= self.k:
                    self.unsure[box] = (r.note if r is not None else "") or "not read surely"
                continue
            self._doubt[box] = 0
            key = r.key()
            if key == run.key:
                run.length += 1
                run.confidence = min(run.confidence, r.confidence)
                run.reading = r
            else:
                run = self._runs[box] = _Run(key, r, 1, r.confidence)
            if run.length >= self.k:
                self.unsure.pop(box, None)
                self._restless[box] = 0
            else:
                # Read surely, but never the same k frames in a row for a long while: the
                # reading keeps changing (two counts it flips between), and the dealer keys
                # the wager in rather than wait for it.
                self._restless[box] += 1
                if self._restless[box] >= RESTLESS * self.k:
                    self.unsure[box] = "the reading of the box keeps changing"
            current = self.stable.get(box)
            if run.length >= self.k and (current is None or _key(current) != key):
                report = StableReport(
                    box,
                    r.amount,
                    dict(r.chips),
                    run.confidence,
                    run.length,
                    None if current is None else current.amount,
                )
                self.stable[box] = report
                out.append(report)
        return out

    def settled(self) -> bool:
        """Whether every box, as of the last frame, is reported as it stands: its run of
        readings has lasted ``k`` frames and is the stable wager reported, or it is unsure
        (its wager is the dealer's to key in). A box whose chips just changed, or under a
        hand, is not settled until ``k`` frames agree on it again."""
        for box in self.boxes:
            if box in self.unsure and self._runs[box].length < self.k:
                continue
            run = self._runs[box]
            current = self.stable.get(box)
            if run.length < self.k or current is None or _key(current) != run.key:
                return False
        return True

    def interrupt(self) -> None:
        """No reading could be made (a device fault): every run starts again (and the boxes
        left unsure stay so until they are read surely again)."""
        self._runs = {b: _Run() for b in self.boxes}
        self._doubt = {b: 0 for b in self.boxes}
        self._restless = {b: 0 for b in self.boxes}


def _key(report: StableReport) -> tuple[Decimal, tuple[tuple[int, int], ...]]:
    return (report.amount, tuple(sorted(report.chips.items())))


def wager_seen_event(report: StableReport, *, time: datetime | None = None) -> dict[str, Any]:
    """The ``wager_seen`` event for the round engine (see the engine's event vocabulary)."""
    event: dict[str, Any] = {
        "type": "wager_seen",
        "box": report.box,
        "amount": _money(report.amount),
        "chips": {str(value): count for value, count in sorted(report.chips.items())},
        "confidence": min(1.0, max(0.0, float(report.confidence))),  # full precision
        "source": "camera",
    }
    if time is not None:
        event["time"] = time.isoformat()
    return event


def _money(amount: Decimal) -> str:
    return str(amount.quantize(Decimal(1))) if amount == amount.to_integral() else str(amount)
