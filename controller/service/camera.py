"""The chip camera, wired to the table service.

`CameraFeed` runs the camera driver's own monitor (`drivers.camera.CameraMonitor`: frames,
fiducials, detector, stability) in a thread and hands each stable wager to the service; the
monitor's status (ok, or a fault with its reason) goes to the dealer's screen. It is also the
layout's watcher: armed at "no more bets", each change of a box's stack it sees goes to the
service (``TableService.watch``), which records the ones the round does not explain (5.5).
The boxes a counting camera covers (``counted``) are watched, never counted: their wagers
seen from above are not recorded. A camera that
cannot be opened or stops giving frames is retried; meanwhile wagers are entered by hand.

`SyntheticSource` is the demo's camera: the camera driver's layout renderer draws the wagers
the demo's players place, with the camera's perspective, light and noise, frame after frame.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from typing import Any

import numpy as np
import structlog

from controller.service.check import NOT_LEARNED
from controller.service.core import TableService
from drivers.camera import CameraConfig, CameraMonitor, FrameSource, SourceError, open_source
from drivers.camera.render import LayoutRenderer, Look, Scene, Stack, random_look
from drivers.camera.watch import encode_still

log = structlog.get_logger("floorctl.camera")

SourceFactory = Callable[[], FrameSource]


class CameraFeed:
    """A camera monitor in a thread: stable wagers to the service, status to the screen."""

    def __init__(
        self,
        service: TableService,
        cfg: CameraConfig,
        open_frames: SourceFactory,
        *,
        max_fps: float = 15.0,
        retry_seconds: float = 2.0,
        name: str = "chip camera",
        counted: frozenset[int] = frozenset(),
    ) -> None:
        self.service = service
        self.cfg = cfg
        self.open_frames = open_frames
        self.min_period = 1.0 / max_fps if max_fps > 0 else 0.0
        self.retry_seconds = retry_seconds
        self.monitor: CameraMonitor | None = None
        # A camera whose chips were never learned here works, but less surely: said at start
        # and as the camera's state while it works (the screen shows it on the device).
        self.ok_note = ""
        if cfg.learned is None:
            self.ok_note = NOT_LEARNED
            log.warning("chip camera not learned", reason=NOT_LEARNED)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # The last frame handed on: when it was read (monotonic), and whether every box was
        # then reported as it stands (``StabilityTracker.settled``) by a working camera.
        self._reported: tuple[float, bool, bool] = (0.0, False, False)
        self._read_at: deque[float] = deque(maxlen=256)  # when the last frames were read
        self.name = name
        self.counted = counted  # boxes a counting camera covers: watched, not counted
        self._armed: bool | None = None  # as the service last asked (None: not yet)
        service.set_device("camera", "connecting", cfg.source)
        service.add_camera(self)
        service.watch.add(self)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="chip-camera", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.monitor is not None:
            self.monitor.close()

    def watch(self, armed: bool) -> None:
        """Arm the watcher ("no more bets": the boxes as they stand are the baseline) or
        disarm it (the round ended); done in the camera's thread before its next frame."""
        self._armed = armed

    def reported_since(self, since: float) -> bool:
        """Whether this camera has reported every box as it stands in a frame read after
        ``since`` (``time.monotonic()``). A camera that is down has nothing to report: the
        dealer keys the wagers in, so it is not waited for."""
        started, ok, settled = self._reported
        if self.service.device("camera").state not in ("ok", "connected"):
            return True
        return started > since and (settled or not ok)

    def frames_since(self, since: float) -> int:
        """How many frames this camera has read and handed on since ``since``."""
        return sum(1 for t in list(self._read_at) if t > since)

    def _open(self) -> CameraMonitor | None:
        try:
            return CameraMonitor(self.cfg, self.open_frames())
        except (SourceError, OSError) as exc:
            self.service.set_device("camera", "fault", str(exc))
            return None

    def _run(self) -> None:
        dry_since: float | None = None
        while not self._stop.is_set():
            if self.monitor is None:
                self.monitor = self._open()
                if self.monitor is None:
                    self._stop.wait(self.retry_seconds)
                    continue
            started = time.monotonic()
            armed = self._armed
            if armed is not None and armed != self.monitor.watcher.armed:
                if armed:
                    self.monitor.watcher.arm()
                else:
                    self.monitor.watcher.disarm()
            try:
                events = self.monitor.step()
            except Exception as exc:  # the driver must not take the table down
                log.exception("camera step failed", error=str(exc))
                self.service.set_device("camera", "fault", f"camera driver failed: {exc}")
                self._reopen()
                continue
            status = self.monitor.status
            if status.ok:
                self.service.set_device("camera", "ok", self.ok_note)
                dry_since = None
            else:
                self.service.set_device("camera", "fault", status.reason)
                if status.kind == "no frames":
                    dry_since = dry_since or started
                    if started - dry_since > self.retry_seconds:
                        self._reopen()  # a camera unplugged: open it again
                        dry_since = None
            for event in events:
                # After "no more bets" a change is the watcher's to report (the round may
                # explain it: a double, a split); a box a counting camera covers, never.
                if event.get("box") not in self.counted and not self.monitor.watcher.armed:
                    self.service.camera_seen(event)
            for change in self.monitor.changes:
                self.service.watch.changed(
                    change.box,
                    encode_still(change.before),
                    encode_still(change.after),
                    change.area_mm2,
                )
            self.service.watch.review()
            unsure = self.monitor.tracker.unsure if status.ok else {}
            self.service.camera_unsure({b: r for b, r in unsure.items() if b not in self.counted})
            self._reported = (started, status.ok, status.ok and self.monitor.tracker.settled())
            self._read_at.append(started)
            spare = self.min_period - (time.monotonic() - started)
            if spare > 0:
                self._stop.wait(spare)

    def _reopen(self) -> None:
        if self.monitor is not None:
            try:
                self.monitor.close()
            except Exception:
                log.exception("closing the camera failed")
        self.monitor = None
        self._stop.wait(self.retry_seconds)


def start_camera(service: TableService, cfg: CameraConfig) -> Callable[[], None]:
    """Start the configured camera; returns its stop function."""
    feed = CameraFeed(service, cfg, lambda: open_source(cfg.source, cfg.resolution))
    feed.start()
    return feed.stop


# ----- the demo's camera --------------------------------------------------------------------


class SyntheticSource:
    """Frames of the layout with the chips the demo's players put down (a FrameSource)."""

    name = "synthetic layout"

    def __init__(self, cfg: CameraConfig, seed: int) -> None:
        self.cfg = cfg
        self.rng = np.random.default_rng(seed)
        self.renderer = LayoutRenderer(cfg)
        self.look: Look = random_look(self.rng, cfg)
        self._lock = threading.Lock()
        self._scene = Scene({b.box: () for b in cfg.boxes})
        self._layout: Any = None
        self._frames: list[Any] = []
        self._shown = 0
        self.placed: dict[int, Decimal] = {}  # the wagers last placed (for the record)

    def place(self, wagers: dict[int, Decimal]) -> None:
        """Chips for these wagers (others' boxes cleared), as players and dealer would."""
        if wagers:
            self.placed = dict(wagers)
        self._show(wagers)

    def tamper(self, box: int, amount: Decimal) -> None:
        """A player past-posts (or pinches): box ``box`` now holds ``amount``, whatever was
        placed (``placed`` keeps what the player staked)."""
        self._show({**self.placed, box: amount})

    def _show(self, wagers: dict[int, Decimal]) -> None:
        stacks: dict[int, tuple[Stack, ...]] = {}
        for area in self.cfg.boxes:
            amount = wagers.get(area.box, Decimal(0))
            stacks[area.box] = self._stacks(area.center_mm, amount)
        with self._lock:
            self._scene = Scene(stacks)
            self._layout = None

    def _stacks(self, centre: tuple[float, float], amount: Decimal) -> tuple[Stack, ...]:
        chips: list[int] = []
        left = int(amount)
        for value in sorted((c.value for c in self.cfg.chips), reverse=True):
            while left >= value:
                chips.append(value)
                left -= value
        if not chips:
            return ()
        tallest = self.cfg.layout.max_stack
        piles = [chips[i : i + tallest] for i in range(0, len(chips), tallest)]
        d = self.cfg.layout.chip_diameter_mm + 6
        x0 = centre[0] - (len(piles) - 1) * d / 2
        return tuple(
            Stack((x0 + i * d, centre[1]), tuple(pile), tuple(0.0 for _ in pile))
            for i, pile in enumerate(piles)
        )

    VARIANTS = 3  # noisy frames rendered per scene, then shown in turn (rendering is slow)

    def read(self) -> Any:
        with self._lock:
            if self._layout is None:
                self._layout, _mask = self.renderer.draw_scene(self._scene, self.look)
                self._frames = []
                self._shown = 0
            if len(self._frames) < self.VARIANTS:
                self._frames.append(self.renderer.to_frame(self._layout, self.look, self.rng))
            self._shown += 1
            return self._frames[self._shown % len(self._frames)]

    def close(self) -> None:
        pass


STAND_IN_LEAN_MM = 0.0  # the lean the stand-in's detector allows (its stacks stand upright)


class SyntheticCamera:
    """The demo's camera: synthetic frames through the real monitor and detector."""

    def __init__(self, source: SyntheticSource, feed: CameraFeed) -> None:
        self.source = source
        self.feed = feed

    @classmethod
    def start(cls, service: TableService, *, seed: int, max_fps: float = 12.0) -> SyntheticCamera:
        from controller.rules import CONFIG_DIR
        from drivers.camera import load_camera_config

        cfg = load_camera_config(CONFIG_DIR / "table.example.toml")
        # The stand-in's renderer stands every stack upright, as on a table whose dealer
        # squares the stacks: no lean to allow for (camera.layout.stack_lean_mm).
        cfg = replace(cfg, layout=replace(cfg.layout, stack_lean_mm=STAND_IN_LEAN_MM))
        source = SyntheticSource(cfg, seed)
        feed = CameraFeed(service, cfg, lambda: source, max_fps=max_fps)
        feed.start()
        return cls(source, feed)

    def place(self, wagers: dict[int, Decimal]) -> None:
        self.source.place(wagers)

    def tamper(self, box: int, amount: Decimal) -> None:
        self.source.tamper(box, amount)

    def stop(self) -> None:
        self.feed.stop()
