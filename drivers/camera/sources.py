"""Frame sources: anything OpenCV can open, or a folder of still images.

``open_source("0")`` opens camera 0; ``"rtsp://..."``/``"http://..."`` a network stream; a
path to a video file plays it; a path to a folder reads its images in name order; a path to
one image reads that image once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

# OpenCV's own warnings (a camera index that is not there, a stream that drops) go to standard
# error in its own format, between the service's JSON log lines: a source that cannot be read
# is reported once, by this module, in words a technician can act on.
cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)

U8Array = npt.NDArray[np.uint8]
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


class SourceError(OSError):
    """A frame source that cannot be opened; the message names it."""


class FrameSource(Protocol):
    name: str

    def read(self) -> U8Array | None:
        """The next BGR frame, or None when there is none (stream ended, camera gone)."""
        ...

    def close(self) -> None: ...


class CaptureSource:
    """A camera index, a stream URL or a video file, through ``cv2.VideoCapture``."""

    def __init__(
        self,
        spec: str,
        resolution: tuple[int, int] | None = None,
        *,
        reopen_after: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = spec
        self._target: int | str = int(spec) if spec.isdigit() else spec
        # A camera or a stream that stops is opened again (a replugged USB camera, a restarted
        # encoder); a video file that ends has simply ended.
        self.live = isinstance(self._target, int) or "://" in spec
        self._resolution = resolution
        self._reopen_after = reopen_after
        self._clock = clock
        self._failed_at: float | None = None
        self._cap = self._open()
        if not self._cap.isOpened():
            raise SourceError(
                f"camera source {spec!r} cannot be opened: no such camera, file or stream, or "
                "another program is using it"
            )

    def _open(self) -> cv2.VideoCapture:
        cap = cv2.VideoCapture(self._target)
        if cap.isOpened() and self._resolution is not None and isinstance(self._target, int):
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self._resolution[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self._resolution[1])
        return cap

    def read(self) -> U8Array | None:
        ok, frame = self._cap.read() if self._cap.isOpened() else (False, None)
        if ok and frame is not None:
            self._failed_at = None
            return np.asarray(frame, np.uint8)
        now = self._clock()
        if self._failed_at is None:
            self._failed_at = now
        elif self.live and now - self._failed_at >= self._reopen_after:
            self._cap.release()
            self._cap = self._open()
            self._failed_at = now
        return None

    def close(self) -> None:
        self._cap.release()


class FolderSource:
    """The images of a folder (or a single image), in name order, each read once."""

    def __init__(self, path: Path) -> None:
        self.name = str(path)
        if path.is_dir():
            self.paths = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if not self.paths:
                raise SourceError(f"camera source {str(path)!r}: the folder holds no images")
        else:
            self.paths = [path]
        self._iter: Iterator[Path] = iter(self.paths)
        self.current: Path | None = None

    def read(self) -> U8Array | None:
        for path in self._iter:
            self.current = path
            frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
            return None if frame is None else np.asarray(frame, np.uint8)
        return None

    def close(self) -> None:
        self._iter = iter(())


def open_source(spec: str, resolution: tuple[int, int] | None = None) -> FrameSource:
    if spec.isdigit() or "://" in spec:
        return CaptureSource(spec, resolution)
    path = Path(spec)
    if path.is_dir() or (path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES):
        return FolderSource(path)
    if path.is_file():
        return CaptureSource(spec)
    raise SourceError(f"camera source {spec!r}: no such camera index, URL, file or folder")
