"""The counting camera: each box's wager read from the side, chip by chip, never confidently wrong.

:mod:`calibration` places each box from the ``BOX n`` targets and keeps the ``RAIL`` codes as
the reference the fix is checked against; :mod:`reader` reads a box's stacks from its region
of the picture, and says *unsure*, with the reason, whenever its checks do not agree.
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use, so `floorctl chips --help` (which registers this package's commands)
# does not load OpenCV and numpy.
_HOME = {
    "Calibration": "calibration",
    "CalibrationResult": "calibration",
    "calibrate": "calibration",
    "check_fix": "calibration",
    "BoxRead": "reader",
    "Palette": "reader",
    "combine": "reader",
    "learn_palette": "reader",
    "read_box": "reader",
    "read_boxes": "reader",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)


__all__ = [
    "BoxRead",
    "Calibration",
    "CalibrationResult",
    "Palette",
    "calibrate",
    "check_fix",
    "combine",
    "learn_palette",
    "read_box",
    "read_boxes",
]
