"""Calibration of a counting camera: where each box stands in its picture, and how far.

A printed card stands upright in each box, facing the camera, with a QR code reading ``BOX n``
centred on it. The code's corners give the box's place in the picture: its centre line, where
the cloth is under the card (the code's centre stands at half the card's height), and the scale
at the box's distance (pixels a millimetre, from the code's known side). From the boxes' scales
and cloth lines the camera's height above the cloth and its horizon follow, which say where the
foot of a stack standing at the front or the back of a box can be.

The ``RAIL`` codes on the far rail do not move: their corners, seen at calibration, are the
reference the fix is checked against at start and between rounds (:func:`check_fix`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.qr import read_qr

U8Array = npt.NDArray[np.uint8]

CARD_MM = (110.0, 80.0)  # the target card, width x height
QR_MM = 56.0  # the code's side on the card, centred
RAIL_QR_MM = 60.0
MIN_QR_PX = 24.0  # a code smaller than this cannot place a box well enough
FIX_TOLERANCE_PX = 3.0  # a RAIL code moved by more than this (or a scale off by 1.5%) = knocked
FIX_SCALE_TOLERANCE = 0.015
_BOX_TEXT = re.compile(r"^BOX (\d+)$")


class CalibrationError(ValueError):
    """A calibration file or frame that cannot be used; the message says why."""


@dataclass(frozen=True)
class BoxFix:
    box: int
    cx: float  # the box's centre line in the picture (px)
    foot_y: float  # the cloth under the card, at the box's centre (px)
    scale: float  # px per mm at the box's distance (the code's mean side / QR_MM)


@dataclass(frozen=True)
class RailRef:
    center: tuple[float, float]
    side_px: float


@dataclass
class Calibration:
    """One camera's fix: its boxes, the horizon and height, the rail references, the palette."""

    camera: str
    size: tuple[int, int]
    boxes: dict[int, BoxFix]
    horizon_y: float  # where the cloth plane meets the sky, px
    height_mm: float  # the lens above the cloth
    rail: list[RailRef]
    focal_px: float
    palette: dict[int, dict[str, list[float]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "camera": self.camera,
            "size": list(self.size),
            "boxes": {str(k): asdict(v) for k, v in self.boxes.items()},
            "horizon_y": self.horizon_y,
            "height_mm": self.height_mm,
            "rail": [asdict(r) for r in self.rail],
            "focal_px": self.focal_px,
            "palette": {str(k): v for k, v in self.palette.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        try:
            return cls(
                camera=str(data["camera"]),
                size=(int(data["size"][0]), int(data["size"][1])),
                boxes={int(k): BoxFix(**v) for k, v in data["boxes"].items()},
                horizon_y=float(data["horizon_y"]),
                height_mm=float(data["height_mm"]),
                rail=[
                    RailRef((float(r["center"][0]), float(r["center"][1])), float(r["side_px"]))
                    for r in data["rail"]
                ],
                focal_px=float(data["focal_px"]),
                palette={int(k): v for k, v in data.get("palette", {}).items()},
            )
        except (KeyError, TypeError, ValueError) as err:
            raise CalibrationError(f"calibration: missing or bad field ({err})") from err

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: Path) -> Calibration:
        try:
            return cls.from_json(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError) as err:
            raise CalibrationError(f"{path}: {err}") from err

    def foot_range(self, box: int, back_mm: float, front_mm: float) -> tuple[float, float]:
        """The rows where the cloth is from ``back_mm`` behind to ``front_mm`` before the box's centre.

        The cloth at distance D shows at ``horizon + height * f / D``; the box's scale is f / D0.
        """
        fix = self.boxes[box]
        d0 = self.focal_px / fix.scale
        lift = self.height_mm * fix.scale  # the box's cloth row below the horizon
        far = self.horizon_y + lift * d0 / (d0 + back_mm)
        near = self.horizon_y + lift * d0 / max(d0 - front_mm, 0.3 * d0)
        return far, near


@dataclass
class CalibrationResult:
    passed: bool
    reason: str
    calibration: Calibration | None


def _qr_geometry(corners: npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
    """(centre x, centre y, mean side px, vertical side px) of a code (TL, BL, BR, TR)."""
    tl, bl, br, tr = corners
    c = corners.mean(axis=0)
    sides = [np.linalg.norm(a - b) for a, b in ((tl, bl), (bl, br), (br, tr), (tr, tl))]
    vertical = (np.linalg.norm(tl - bl) + np.linalg.norm(tr - br)) / 2
    return float(c[0]), float(c[1]), float(np.mean(sides)), float(vertical)


def find_codes(
    image: U8Array,
) -> tuple[dict[int, npt.NDArray[np.float64]], list[npt.NDArray[np.float64]]]:
    """The ``BOX n`` codes (by box) and the ``RAIL`` codes in a frame."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    boxes: dict[int, npt.NDArray[np.float64]] = {}
    rails: list[npt.NDArray[np.float64]] = []
    for sym in read_qr(grey):
        m = _BOX_TEXT.match(sym.text.strip())
        if m:
            boxes[int(m.group(1))] = sym.corners
        elif sym.text.strip() == "RAIL":
            rails.append(sym.corners)
    return boxes, rails


def _focal(fixes: dict[int, BoxFix], centres: dict[int, tuple[float, float]], width: int) -> float:
    """The focal length (px) from pairs of boxes whose distance apart on the cloth is known.

    A box at lateral offset X and depth Z shows at u = cx + f X / Z with scale s = f / Z, so
    X = (u - cx) / s and Z = f / s; the known distance between two boxes then fixes f.
    """
    est = []
    items = sorted(fixes.values(), key=lambda f: f.box)
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            if a.box not in centres or b.box not in centres:
                continue
            length = float(np.hypot(*np.subtract(centres[a.box], centres[b.box])))
            dx = (a.cx - width / 2) / a.scale - (b.cx - width / 2) / b.scale
            dinv = 1 / a.scale - 1 / b.scale
            if abs(dinv) * width < 0.05 * length or length**2 <= dx**2:
                continue
            est.append(float(np.sqrt(length**2 - dx**2) / abs(dinv)))
    f = float(np.median(est)) if est else float(width)
    return float(np.clip(f, 0.5 * width, 3.0 * width))


def calibrate(
    camera: str,
    image: U8Array,
    boxes: list[int],
    centres: dict[int, tuple[float, float]] | None = None,
) -> CalibrationResult:
    """The fix from a frame with a target standing in each of ``boxes``; PASS or FAIL why.

    ``centres``: the boxes' centres on the cloth (mm, from the table's config), for the lens's
    focal length; without them a 53-degree lens is assumed.
    """
    if image is None or image.ndim != 3 or image.shape[0] < 16 or image.shape[1] < 16:
        return CalibrationResult(False, f"camera {camera}: no usable frame", None)
    codes, rails = find_codes(image)
    missing = [b for b in boxes if b not in codes]
    if missing:
        return CalibrationResult(
            False,
            f"camera {camera}: no target read in box {', '.join(map(str, missing))} "
            "(stand the card upright in the box, facing the camera, in full view)",
            None,
        )
    fixes: dict[int, BoxFix] = {}
    for b in boxes:
        x, y, side, vertical = _qr_geometry(codes[b])
        if side < MIN_QR_PX:
            return CalibrationResult(
                False,
                f"camera {camera}: box {b}'s code is {side:.0f} px, under {MIN_QR_PX:.0f}",
                None,
            )
        scale = side / QR_MM
        v_scale = vertical / QR_MM
        fixes[b] = BoxFix(b, x, y + (CARD_MM[1] / 2) * v_scale, scale)
    # the cloth row at scale s is horizon + height * s: a line through the boxes' (s, row)
    s = np.array([f.scale for f in fixes.values()])
    rows = np.array([f.foot_y for f in fixes.values()])
    if len(fixes) >= 2 and float(np.ptp(s)) > 0.05 * float(s.mean()):
        height, horizon = np.polyfit(s, rows, 1)
    else:  # one distance only: the horizon from the code's own height above the cloth
        height, horizon = 70.0, float(rows.mean() - 70.0 * s.mean())
    if not 20.0 <= height <= 200.0:
        return CalibrationResult(
            False,
            f"camera {camera}: the boxes put the lens {height:.0f} mm above the cloth, not "
            "3-12 cm: a card not upright, or standing outside its box",
            None,
        )
    rail = [RailRef(tuple(c.mean(axis=0)), _qr_geometry(c)[2]) for c in rails]  # type: ignore[arg-type]
    if not rail:
        return CalibrationResult(
            False,
            f"camera {camera}: no RAIL code in view, so the fix cannot be checked later",
            None,
        )
    h, w = image.shape[:2]
    focal = _focal(fixes, centres or {}, w)
    cal = Calibration(camera, (w, h), fixes, float(horizon), float(height), rail, focal)
    scales = ", ".join(f"box {b} {f.scale:.2f} px/mm" for b, f in sorted(fixes.items()))
    return CalibrationResult(
        True,
        f"camera {camera}: {len(fixes)} boxes placed ({scales}), lens {height:.0f} mm up, "
        f"{len(rail)} RAIL codes as reference",
        cal,
    )


def check_fix(cal: Calibration, image: U8Array) -> tuple[bool, str]:
    """Is the camera where it was calibrated? Judged by the RAIL codes, which never move."""
    _, rails = find_codes(image)
    if not rails:
        return False, f"camera {cal.camera}: no RAIL code seen (covered, or the camera moved)"
    worst = 0.0
    for ref in cal.rail:
        best = min(
            (np.hypot(*(c.mean(axis=0) - np.array(ref.center))), _qr_geometry(c)[2]) for c in rails
        )
        moved, side = best
        if moved > 4 * FIX_TOLERANCE_PX + ref.side_px:
            continue  # that code not seen now (a head in the way); judged by the others
        worst = max(worst, moved)
        if abs(side / ref.side_px - 1) > FIX_SCALE_TOLERANCE * 3:
            return (
                False,
                f"camera {cal.camera}: a RAIL code's size changed by {abs(side / ref.side_px - 1):.1%}",
            )
    seen = sum(
        1
        for ref in cal.rail
        if min(np.hypot(*(c.mean(axis=0) - np.array(ref.center))) for c in rails)
        <= 4 * FIX_TOLERANCE_PX + ref.side_px
    )
    if seen == 0:
        return False, f"camera {cal.camera}: the RAIL codes are not where they were (knocked?)"
    if worst > FIX_TOLERANCE_PX:
        return False, f"camera {cal.camera}: moved {worst:.1f} px since calibration (knocked?)"
    return True, f"camera {cal.camera}: fix holds (RAIL codes within {worst:.1f} px)"
