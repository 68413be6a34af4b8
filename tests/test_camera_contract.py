"""The chip camera's contract, run in CI against synthetic cameras and, in hil_tests/, against
a real camera over a real layout.

A subclass provides two fixtures: ``source`` (a frame source showing the layout) and
``placed`` (box -> the wager in chips placed in it; boxes not named are empty).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import cv2
import pytest

from drivers.camera.config import CameraConfig, load_camera_config
from drivers.camera.fiducials import locate_layout
from drivers.camera.monitor import CameraMonitor, is_black
from drivers.camera.render import SyntheticSource
from drivers.camera.sources import FrameSource, open_source

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"


class CameraContract:
    def test_frames_arrive_and_the_layout_is_found(
        self, cfg: CameraConfig, source: FrameSource
    ) -> None:
        for _ in range(5):
            frame = source.read()
            assert frame is not None, f"no frame from {source.name}"
            assert not is_black(frame, cfg.black_level), f"black frame from {source.name}"
        search = locate_layout(frame, cfg)
        assert search.fix is not None, search.reason
        assert search.fix.error_mm < 5.0, f"layout fit error {search.fix.error_mm:.1f} mm"

    def test_each_box_settles_on_the_wager_placed_and_nothing_else_is_reported(
        self, cfg: CameraConfig, source: FrameSource, placed: dict[int, int]
    ) -> None:
        monitor = CameraMonitor(cfg, source)
        reported: dict[int, str] = {}
        for _ in range(4 * cfg.stable_frames):
            for event in monitor.step():
                box, amount = event["box"], event["amount"]
                assert Decimal(amount) == placed.get(box, 0), f"box {box}: reported {event}"
                reported[box] = amount
            if len(reported) == len(cfg.boxes):
                break
        assert monitor.status.ok, monitor.status.reason
        expected = {b.box: str(placed.get(b.box, 0)) for b in cfg.boxes}
        assert reported == expected


PLACED = {1: 25, 3: 60, 4: 5, 6: 1000, 7: 50}


@pytest.fixture(scope="module")
def cfg() -> CameraConfig:
    return load_camera_config(EXAMPLE)


@pytest.fixture
def placed() -> dict[int, int]:
    return dict(PLACED)


class TestSyntheticCamera(CameraContract):
    @pytest.fixture
    def source(self, cfg: CameraConfig) -> FrameSource:
        synthetic = SyntheticSource(cfg, seed=11)
        synthetic.set_wagers(dict(PLACED))
        return synthetic


class TestRenderedVideoFile(CameraContract):
    @pytest.fixture
    def source(self, cfg: CameraConfig, tmp_path: Path) -> Iterator[FrameSource]:
        synthetic = SyntheticSource(cfg, seed=12)
        synthetic.set_wagers(dict(PLACED))
        path = tmp_path / "layout.avi"
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 15.0, (1280, 720))
        for _ in range(4 * cfg.stable_frames):
            frame = synthetic.read()
            assert frame is not None
            writer.write(frame)
        writer.release()
        source = open_source(str(path))
        yield source
        source.close()
