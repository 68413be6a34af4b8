"""The chip camera: sources, fiducials, chip detector, stability, synthetic layout renderer.

cfg = load_camera_config("config/table.example.toml")
monitor = CameraMonitor(cfg, open_source(cfg.source))
for event in monitor.run():      # wager_seen event dicts for the round engine
    ...
monitor.status.to_dict()         # ok / fault with its reason, for the dealer's screen

The names below are imported on first use, not with the package: most of the modules import
OpenCV and numpy, and `floorctl chips --help` (which imports drivers.camera.cli, and so this
package) must start without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drivers.camera.config import CameraConfig, CameraConfigError, load_camera_config
    from drivers.camera.detector import BoxReading, ChipDetector, FrameReading
    from drivers.camera.fiducials import LayoutFix, locate_layout
    from drivers.camera.monitor import CameraMonitor
    from drivers.camera.sources import FrameSource, SourceError, open_source
    from drivers.camera.stability import StabilityTracker, StableReport, wager_seen_event
    from drivers.camera.status import CameraStatus

__all__ = [
    "BoxReading",
    "CameraConfig",
    "CameraConfigError",
    "CameraMonitor",
    "CameraStatus",
    "ChipDetector",
    "FrameReading",
    "FrameSource",
    "LayoutFix",
    "SourceError",
    "StabilityTracker",
    "StableReport",
    "load_camera_config",
    "locate_layout",
    "open_source",
    "wager_seen_event",
]

# Each public name and the module it comes from (the same as the TYPE_CHECKING imports above;
# tests/test_camera_cli.py checks the three lists agree).
_MODULE_OF = {
    "CameraConfig": "drivers.camera.config",
    "CameraConfigError": "drivers.camera.config",
    "load_camera_config": "drivers.camera.config",
    "BoxReading": "drivers.camera.detector",
    "ChipDetector": "drivers.camera.detector",
    "FrameReading": "drivers.camera.detector",
    "LayoutFix": "drivers.camera.fiducials",
    "locate_layout": "drivers.camera.fiducials",
    "CameraMonitor": "drivers.camera.monitor",
    "FrameSource": "drivers.camera.sources",
    "SourceError": "drivers.camera.sources",
    "open_source": "drivers.camera.sources",
    "StabilityTracker": "drivers.camera.stability",
    "StableReport": "drivers.camera.stability",
    "wager_seen_event": "drivers.camera.stability",
    "CameraStatus": "drivers.camera.status",
}


def __getattr__(name: str) -> object:
    """Import a public name's module the first time the name is used, and keep the name."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
