"""Writing frames to a folder: ``frame_NNNNN.png`` or ``.jpg`` with ``frame_NNNNN.json``.

The image's bytes are those the camera model encoded (a JPEG is not re-encoded), and the truth
file is written after its image, so a folder interrupted mid-write never holds a truth file
without its frame.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from drivers.camera.scene.frames import SceneFrame


def write_frames(frames: Iterable[SceneFrame], out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for frame in frames:
        (out / frame.name).write_bytes(frame.data)
        truth = out / (Path(frame.name).stem + ".json")
        truth.write_text(json.dumps(frame.truth, indent=1) + "\n", encoding="utf-8")
        n += 1
    return n
