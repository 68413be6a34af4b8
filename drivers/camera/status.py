"""The camera's device status: ok, or a fault with its reason, logged when it changes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog

NO_FRAMES = "no frames"
BLACK_FRAME = "black frame"
FIDUCIALS_NOT_FOUND = "fiducials not found"


@dataclass
class CameraStatus:
    """What the table service shows for the camera. ``reason`` is empty while ``ok``."""

    source: str
    ok: bool = False
    reason: str = "starting"
    kind: str = "starting"  # "ok", "starting", NO_FRAMES, BLACK_FRAME, FIDUCIALS_NOT_FOUND
    since: datetime = field(default_factory=lambda: datetime.now(UTC))
    frames: int = 0
    faults: int = 0
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), repr=False)
    log: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.log is None:
            self.log = structlog.get_logger("floorctl.camera").bind(
                device="camera", source=self.source
            )

    def set_ok(self) -> None:
        if self.ok:
            return
        was = self.reason
        self.ok, self.kind, self.reason, self.since = True, "ok", "", self.clock()
        self.log.info("camera_ok", recovered_from=was)

    def set_fault(self, kind: str, detail: str = "") -> None:
        reason = detail or kind
        if not self.ok and self.kind == kind and self.reason == reason:
            return
        self.ok, self.kind, self.reason, self.since = False, kind, reason, self.clock()
        self.faults += 1
        self.log.error("camera_fault", fault=kind, reason=reason, manual_entry=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": "camera",
            "source": self.source,
            "ok": self.ok,
            "state": self.kind,
            "reason": self.reason,
            "since": self.since.isoformat(),
            "frames": self.frames,
            "faults": self.faults,
        }
