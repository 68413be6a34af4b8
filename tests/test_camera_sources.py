"""Frame sources: folders, single images, video files; a live source that stops is reopened."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera.sources import CaptureSource, FolderSource, SourceError, open_source


def _image(path: Path, level: int) -> None:
    cv2.imwrite(str(path), np.full((48, 64, 3), level, np.uint8))


def test_a_folder_is_read_in_name_order_then_runs_dry(tmp_path: Path) -> None:
    for name, level in (("b.png", 20), ("a.png", 10), ("c.jpg", 30), ("notes.txt", 0)):
        if name.endswith("txt"):
            (tmp_path / name).write_text("not an image")
        else:
            _image(tmp_path / name, level)
    source = open_source(str(tmp_path))
    assert isinstance(source, FolderSource)
    levels = []
    while (frame := source.read()) is not None:
        levels.append(round(float(frame.mean())))
    assert levels == [10, 20, 30]


def test_sources_that_cannot_be_opened_are_named(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"'/nonexistent/cam': no such camera index"):
        open_source("/nonexistent/cam")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="the folder holds no images"):
        open_source(str(tmp_path / "empty"))


def test_a_live_source_that_stops_is_opened_again_after_a_pause(tmp_path: Path) -> None:
    video = tmp_path / "v.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"MJPG"), 10.0, (64, 48))
    for level in (40, 80, 120):
        writer.write(np.full((48, 64, 3), level, np.uint8))
    writer.release()
    now = [0.0]
    source = CaptureSource(str(video), reopen_after=2.0, clock=lambda: now[0])
    assert isinstance(open_source(str(video)), CaptureSource)
    assert not source.live  # a file that ends has ended...
    assert [source.read() is not None for _ in range(4)] == [True, True, True, False]
    source.live = True  # ...but a camera or stream that stops is tried again
    assert source.read() is None
    now[0] = 1.0
    assert source.read() is None  # too soon
    now[0] = 2.5
    assert source.read() is None  # reopened now
    frame = source.read()
    assert frame is not None and abs(float(frame.mean()) - 40) < 4  # from the start again


def test_a_camera_that_is_not_there_is_one_clear_line_not_opencvs_warnings() -> None:
    """At a terminal the service's JSON lines are not interleaved with OpenCV's own warnings:
    a missing camera is one error, in a technician's words."""
    import subprocess
    import sys

    code = (
        "from drivers.camera.sources import open_source, SourceError\n"
        "try:\n    open_source('57')\nexcept SourceError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "cannot be opened: no such camera" in done.stdout, done
    assert "WARN" not in done.stderr and "VIDEOIO" not in done.stderr, done.stderr
