"""The overhead camera's changes after "no more bets", judged against the round (5.5).

The camera (``drivers.camera.watch``) says *that* a box's stack changed; the table says
whether the round explains it. A box's chips change, as play goes, when a player doubles,
splits, insures, surrenders or is rescued, and when a hand is paid or collected as it ends (a
natural, a bust). Each of those shows in the engine's view of the box (:func:`signature`):
its hands, doubles, insurance, surrender, the hands ended. A change the camera reports within
``grace`` seconds of such a move of the same box (either side: the chips go down as the
dealer taps, a moment before or after) is explained; any other is recorded as a
``stack_changed`` event, which the engine flags as 5.5, with the box's stills (before and
after) written beside the audit record and named in the event's note.

The camera is armed when "no more bets" is recorded (each box as it then stands is its
baseline) and disarmed when the round ends: before the call, and while the dealer pays and
collects, the layout is the players'.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from controller.engine import Phase, TableView

if TYPE_CHECKING:
    from controller.service.core import TableService

log = structlog.get_logger("floorctl.watch")

GRACE = 3.0  # seconds either side of a move of the box in which a change is explained
WATCHED = frozenset({Phase.CLOSED, Phase.DEALING, Phase.PLAY, Phase.DEALER})


class Watching(Protocol):
    """A camera that watches the layout (``controller.service.camera.CameraFeed``)."""

    def watch(self, armed: bool) -> None: ...


@dataclass
class _Held:
    box: int
    round: int
    seen_at: float  # monotonic
    before: bytes  # JPEG
    after: bytes
    area_mm2: float


def signature(view: TableView, box: int) -> tuple[Any, ...] | None:
    """What of a box's state moves its chips: a split (its hands), doubles, naturals paid,
    busts collected, insurance, surrender, a void (None: the box is not in the round). The
    deal itself moves none."""
    rnd = view.round
    found = rnd.box(box) if rnd is not None else None
    if found is None:
        return None
    hands = found.hands
    return (
        max(len(hands), 1),
        sum(h.doubled for h in hands),
        sum(h.natural for h in hands),
        sum(h.total > 21 for h in hands),
        len(found.insurance),
        found.surrendered,
        found.void,
    )


class WatchDesk:
    """Arms the watching cameras at "no more bets", and judges each change they report."""

    def __init__(self, service: TableService, *, grace: float = GRACE) -> None:
        self.service = service
        self.grace = grace
        self.stills_dir: Path | None = None  # where the stills go (None: not kept)
        self._lock = threading.Lock()
        self._cameras: list[Watching] = []
        self._armed = False
        self._round = 0
        self._signatures: dict[int, tuple[Any, ...] | None] = {}
        self._moved: dict[int, float] = {}  # box -> when the round last moved its chips
        self._held: list[_Held] = []
        self.explained = 0  # changes the round explained (for the log and the benchmark)

    def add(self, camera: Watching) -> None:
        with self._lock:
            self._cameras.append(camera)
            armed = self._armed
        camera.watch(armed)

    def noted(self, view: TableView) -> None:
        """After each recorded event (the service's lock held): arm or disarm the cameras as
        the round passes "no more bets" or ends, and note the boxes whose chips it moved."""
        rnd = view.round
        armed = rnd is not None and view.phase in WATCHED
        now = time.monotonic()
        with self._lock:
            changed = armed != self._armed
            self._armed = armed
            if rnd is not None and rnd.number != self._round:
                self._round = rnd.number
                self._signatures, self._moved = {}, {}
            for b in rnd.boxes if rnd is not None else ():
                sig = signature(view, b.number)
                if b.number in self._signatures and self._signatures[b.number] != sig:
                    self._moved[b.number] = now
                self._signatures[b.number] = sig
            if not armed:
                self._held = []
            cameras = list(self._cameras)
        if changed:
            for camera in cameras:
                camera.watch(armed)

    def changed(self, box: int, before: bytes, after: bytes, area_mm2: float) -> None:
        """A camera saw ``box``'s stack change (its stills as JPEG): held for ``grace``
        seconds, then explained by a move of the box, or recorded (:meth:`review`)."""
        with self._lock:
            if not self._armed:
                return
            self._held.append(_Held(box, self._round, time.monotonic(), before, after, area_mm2))
        self.review()

    def review(self) -> None:
        """Judge the changes held long enough (called by the cameras' threads)."""
        now = time.monotonic()
        due: list[_Held] = []
        with self._lock:
            keep: list[_Held] = []
            for h in self._held:
                moved = self._moved.get(h.box)
                if moved is not None and abs(moved - h.seen_at) <= self.grace:
                    self.explained += 1
                    log.info("stack change explained by the round", box=h.box, round=h.round)
                elif now - h.seen_at >= self.grace:
                    due.append(h)
                else:
                    keep.append(h)
            self._held = keep
        for h in due:
            self._record(h)

    def _record(self, h: _Held) -> None:
        note = self._keep_stills(h)
        event: dict[str, Any] = {"type": "stack_changed", "box": h.box}
        if note:
            event["note"] = note
        result = self.service.submit(event, source="camera")
        if not result.ok:
            log.error("stack change not recorded", box=h.box, error=result.error)
        else:
            log.warning("stack changed after no more bets", box=h.box, round=h.round)

    def _keep_stills(self, h: _Held) -> str:
        """Write the stills beside the record; the note that names them ("" if not kept)."""
        where = self.stills_dir
        if where is None:
            return ""
        table = self.service.setup.table_id
        stem = f"{table}-r{h.round}-box{h.box}-{int(time.time() * 1000)}"
        names = (f"{stem}-before.jpg", f"{stem}-after.jpg")
        try:
            where.mkdir(parents=True, exist_ok=True)
            for name, data in zip(names, (h.before, h.after), strict=True):
                (where / name).write_bytes(data)
        except OSError as exc:
            log.error("stills not kept", box=h.box, error=str(exc))
            return "stills not kept: " + str(exc)[:200]
        return f"stills {where.name}/{names[0]}, {names[1]}"
