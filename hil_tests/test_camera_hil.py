"""The chip camera's contract against a real camera over a real layout (run by a technician).

The same ``CameraContract`` CI runs on synthetic frames and on a rendered video file
(tests/test_camera_contract.py) runs here against the camera named by CAMERA_SOURCE. Without
CAMERA_SOURCE every test here is skipped with that reason.

Environment:
    CAMERA_SOURCE     camera index (0), RTSP/HTTP URL, video file or folder (required)
    CAMERA_CONFIG     the table config with the [camera] section (default
                      config/table.example.toml)
    CAMERA_WAGERS     the chips the technician placed, as box:amount pairs, e.g. "1:25,3:110"
                      (boxes not named must be empty; the wager test needs it)
    CAMERA_HIL_HAND   1 to run the hand test (the technician passes a hand over the boxes)
    CAMERA_HIL_COVER  1 to run the camera-loss test (the technician covers the lens)
    CAMERA_HIL_TIMEOUT seconds to wait for the technician (default 30)

Calibration, before these tests (see docs/technician/camera.md):
    floorctl calibrate --config TABLE.toml --source "$CAMERA_SOURCE" --out overlay.png
and check in overlay.png that every fiducial is outlined in green and every betting circle
sits on the printed one.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_camera_contract import CameraContract

from drivers.camera.config import CameraConfig, load_camera_config
from drivers.camera.monitor import CameraMonitor
from drivers.camera.sources import FrameSource, open_source

CAMERA_SOURCE = os.environ.get("CAMERA_SOURCE", "")
ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = float(os.environ.get("CAMERA_HIL_TIMEOUT", "30"))

pytestmark = pytest.mark.skipif(
    not CAMERA_SOURCE,
    reason="CAMERA_SOURCE is not set: no chip camera attached (e.g. CAMERA_SOURCE=0)",
)


def tell(message: str) -> None:
    """Speak to the technician past pytest's output capture."""
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(f"\n>>> {message}\n")
    except OSError:
        print(f"\n>>> {message}", file=sys.__stderr__)


@pytest.fixture(scope="module")
def cfg() -> CameraConfig:
    return load_camera_config(os.environ.get("CAMERA_CONFIG", ROOT / "config/table.example.toml"))


@pytest.fixture
def source(cfg: CameraConfig) -> Iterator[FrameSource]:
    src = open_source(CAMERA_SOURCE, cfg.resolution)
    yield src
    src.close()


@pytest.fixture
def placed() -> dict[int, int]:
    text = os.environ.get("CAMERA_WAGERS", "")
    if not text.strip():
        pytest.skip('CAMERA_WAGERS is not set: say which chips are placed, e.g. "1:25,3:110"')
    out: dict[int, int] = {}
    for item in text.split(","):
        box, _, amount = item.strip().partition(":")
        if not (box.isdigit() and amount.isdigit()):
            raise pytest.UsageError(f"CAMERA_WAGERS: {item.strip()!r} is not box:amount")
        out[int(box)] = int(amount)
    return out


class TestRealCamera(CameraContract):
    pass


@pytest.mark.skipif(os.environ.get("CAMERA_HIL_HAND") != "1", reason="CAMERA_HIL_HAND is not 1")
def test_a_hand_passing_over_the_boxes_is_not_a_change(
    cfg: CameraConfig, source: FrameSource, placed: dict[int, int]
) -> None:
    monitor = CameraMonitor(cfg, source)
    for _ in range(4 * cfg.stable_frames):
        monitor.step()
    tell(f"Pass a hand slowly over every box, for about {TIMEOUT:.0f} seconds.")
    end = time.monotonic() + TIMEOUT
    while time.monotonic() < end:
        for event in monitor.step():
            assert int(event["amount"]) == placed.get(event["box"], 0), event
    tell("Thank you: keep your hands off the layout.")


@pytest.mark.skipif(os.environ.get("CAMERA_HIL_COVER") != "1", reason="CAMERA_HIL_COVER is not 1")
def test_a_covered_lens_is_a_device_fault_and_the_camera_recovers(
    cfg: CameraConfig, source: FrameSource
) -> None:
    monitor = CameraMonitor(cfg, source)
    monitor.step()
    tell("Cover the camera's lens completely.")
    end = time.monotonic() + TIMEOUT
    while monitor.status.ok and time.monotonic() < end:
        monitor.step()
    assert not monitor.status.ok, "the camera did not report the covered lens"
    assert monitor.status.kind in ("black frame", "fiducials not found"), monitor.status.reason
    tell("Uncover the lens.")
    end = time.monotonic() + TIMEOUT
    while not monitor.status.ok and time.monotonic() < end:
        monitor.step()
    assert monitor.status.ok, monitor.status.reason
