"""The chip camera as the table service runs it: frames in, ``wager_seen`` events out.

Each step reads a frame, checks it (no frame, black frame), places the layout
(``LayoutTracker``: the fiducials are searched for every ``relocate_every`` frames, at once if
a quick per-frame check says the camera has moved, and after any fault), reads the boxes and
feeds the stability tracker and the watcher (``watch.py``: a hand over a box, a stack
changed after "no more bets"; its changes since the last step are in ``changes``).
Faults go to the status object and the log; they never raise: the table carries on with
manual wager entry while the camera is down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from drivers.camera.config import CameraConfig
from drivers.camera.detector import ChipDetector, FrameReading, U8Array
from drivers.camera.fiducials import LayoutFix, LayoutTracker
from drivers.camera.sources import FrameSource
from drivers.camera.stability import StabilityTracker, StableReport, wager_seen_event
from drivers.camera.status import BLACK_FRAME, FIDUCIALS_NOT_FOUND, NO_FRAMES, CameraStatus
from drivers.camera.watch import Change, Watcher


def is_black(frame: U8Array, level: float) -> bool:
    return float(frame[::8, ::8].mean()) < level


class CameraMonitor:
    def __init__(
        self,
        cfg: CameraConfig,
        source: FrameSource,
        *,
        detector: ChipDetector | None = None,
        status: CameraStatus | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.cfg = cfg
        self.source = source
        self.detector = detector or ChipDetector(cfg)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.status = status or CameraStatus(source.name, clock=self.clock)
        self.tracker = StabilityTracker(
            tuple(b.box for b in cfg.boxes), cfg.stable_frames, cfg.min_confidence
        )
        self.layout = LayoutTracker(cfg)
        self.watcher = Watcher(tuple(b.box for b in cfg.boxes))
        self.last_reading: FrameReading | None = None
        self.last_reports: list[StableReport] = []
        self.changes: list[Change] = []

    @property
    def fix(self) -> LayoutFix | None:
        return self.layout.fix

    def step(self) -> list[dict[str, Any]]:
        """Process one frame; returns the ``wager_seen`` events it produced (often none)."""
        self.last_reports = []
        self.last_reading = None
        self.changes = []
        frame = self.source.read()
        if frame is None:
            return self._fault(NO_FRAMES, f"no frames from {self.source.name}")
        self.status.frames += 1
        if is_black(frame, self.cfg.black_level):
            return self._fault(BLACK_FRAME, f"black frame from {self.source.name}")
        fix = self.layout.update(frame)
        if fix is None:
            return self._fault(FIDUCIALS_NOT_FOUND, self.layout.reason)
        reading = self.detector.read(frame, fix)
        self.last_reading = reading
        self.status.set_ok()
        unreadable = sum(1 for r in reading.boxes.values() if r.confidence == 0.0)
        if unreadable * 2 > len(reading.boxes):
            self.layout.search_next()  # look for the layout again next frame
        self.last_reports = self.tracker.update(reading)
        self.changes = self.watcher.update(
            frame, reading, self.detector.patches, self.detector.white
        )
        now = self.clock()
        return [wager_seen_event(r, time=now) for r in self.last_reports]

    def _fault(self, kind: str, reason: str) -> list[dict[str, Any]]:
        self.status.set_fault(kind, reason)
        self.tracker.interrupt()
        self.layout.drop()
        return []

    def run(
        self, max_frames: int | None = None, *, stop_when_dry: bool = True
    ) -> Iterator[dict[str, Any]]:
        """Step through the source, yielding events. With ``stop_when_dry`` (files, folders)
        it ends at the first missing frame; a live camera keeps being read."""
        n = 0
        while max_frames is None or n < max_frames:
            events = self.step()
            yield from events
            n += 1
            if stop_when_dry and self.status.kind == NO_FRAMES:
                return

    def close(self) -> None:
        self.source.close()


__all__ = ["CameraMonitor", "is_black"]
