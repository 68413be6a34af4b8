"""The chip camera: sources, fiducials, chip detector, stability, synthetic layout renderer.

cfg = load_camera_config("config/table.example.toml")
monitor = CameraMonitor(cfg, open_source(cfg.source))
for event in monitor.run():      # wager_seen event dicts for the round engine
    ...
monitor.status.to_dict()         # ok / fault with its reason, for the dealer's screen
"""

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
