"""Writing a set: each frame's image and, after it, its truth file; a manifest at the end."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from drivers.camera.sideview.frames import Frame


def write_frames(frames: Iterable[Frame], out: Path) -> list[str]:
    """Write every frame under ``out``; the truth file goes after its image, so a folder cut
    short never holds a truth without its frame. Returns the frames' relative names."""
    names = []
    for frame in frames:
        path = out / frame.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(frame.data)
        path.with_suffix(".json").write_text(
            json.dumps(frame.truth, indent=1) + "\n", encoding="utf-8"
        )
        names.append(frame.name)
    return names


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
