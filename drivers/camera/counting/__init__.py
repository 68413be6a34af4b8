"""The counting camera: each box's wager read from the side, chip by chip, never confidently wrong.

:mod:`calibration` places each box from the ``BOX n`` targets and keeps the ``RAIL`` codes as
the reference the fix is checked against; :mod:`reader` reads a box's stacks from its region
of the picture, and says *unsure*, with the reason, whenever its checks do not agree.
"""

from drivers.camera.counting.calibration import Calibration, CalibrationResult, calibrate, check_fix
from drivers.camera.counting.reader import (
    BoxRead,
    Palette,
    combine,
    learn_palette,
    read_box,
    read_boxes,
)

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
