"""Calibration of a counting camera: where it stands, and where each box is in its picture.

A printed card stands upright in each box, facing the camera, with a QR code reading ``BOX n``
centred on it; ``RAIL`` codes are on the far rail. The codes' centres and the middles of their
top and bottom edges are points whose place on the table is known, so the camera's focal
length, lens distortion, position and turn follow (:mod:`drivers.camera.counting.pose`), and
with them each box's place in the picture and how far away anything standing on the cloth is.

The ``RAIL`` codes do not move: their corners, seen at calibration, are the reference the fix
is checked against at start and between rounds (:func:`check_fix`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.counting.pose import Pose, solve_table_pose
from drivers.camera.qr import read_qr

U8Array = npt.NDArray[np.uint8]

CARD_MM = (110.0, 80.0)  # the target card, width x height
QR_MM = 56.0  # the code's side on the card, centred
RAIL_QR_MM = 60.0
MIN_QR_PX = 24.0  # a code smaller than this cannot place a box well enough
FIX_TOLERANCE_PX = 3.0  # a RAIL code moved by more than this (or a scale off by 1.5%) = knocked
FIX_SCALE_TOLERANCE = 0.015
MAX_POSE_RMS_PX = 8.0  # the codes placed worse than this: the cards or the config are wrong
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
    """One camera's fix: its pose, its boxes' places in the picture, the rail references and
    the chips' colours."""

    camera: str
    size: tuple[int, int]
    pose: Pose
    boxes: dict[int, BoxFix]
    centres: dict[int, tuple[float, float, float]]  # each box's centre and radius on the cloth, mm
    rail: list[RailRef]
    palette: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    values: list[int] = field(default_factory=list)  # the table's denominations

    def to_json(self) -> dict[str, Any]:
        return {
            "camera": self.camera,
            "size": list(self.size),
            "pose": self.pose.to_json(),
            "boxes": {str(k): asdict(v) for k, v in self.boxes.items()},
            "centres": {str(k): list(v) for k, v in self.centres.items()},
            "rail": [asdict(r) for r in self.rail],
            "palette": {str(k): v for k, v in self.palette.items()},
            "values": list(self.values),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        try:
            return cls(
                camera=str(data["camera"]),
                size=(int(data["size"][0]), int(data["size"][1])),
                pose=Pose.from_json(data["pose"]),
                boxes={int(k): BoxFix(**v) for k, v in data["boxes"].items()},
                centres={int(k): tuple(float(x) for x in v) for k, v in data["centres"].items()},  # type: ignore[misc]
                rail=[
                    RailRef((float(r["center"][0]), float(r["center"][1])), float(r["side_px"]))
                    for r in data["rail"]
                ],
                palette={int(k): v for k, v in data.get("palette", {}).items()},
                values=[int(v) for v in data.get("values", [])],
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
        """The rows where the cloth is from ``back_mm`` behind to ``front_mm`` before the box's
        centre, along the camera's line of sight."""
        x, y, _ = self.centres[box]
        c = self.pose.centre_mm
        d = np.array([x - c[0], y - c[1]])
        d /= np.linalg.norm(d)
        far = self.pose.project(np.array([[x + back_mm * d[0], y + back_mm * d[1], 0.0]]))[0, 1]
        near = self.pose.project(np.array([[x - front_mm * d[0], y - front_mm * d[1], 0.0]]))[0, 1]
        return float(far), float(near)


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


def _variants(grey: U8Array) -> list[U8Array]:
    """The picture as zbar gets it, then smoothed (JPEG blocks and sensor noise break a code's
    modules), then thresholded against its neighbourhood (a code in a dim corner)."""
    smooth = cast(U8Array, cv2.GaussianBlur(grey, (3, 3), 0))
    local = cv2.adaptiveThreshold(smooth, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 31, 5)
    return [grey, smooth, cast(U8Array, local)]


def find_codes(
    image: U8Array, *, thorough: bool = True
) -> tuple[dict[int, npt.NDArray[np.float64]], list[npt.NDArray[np.float64]]]:
    """The ``BOX n`` codes (by box) and the ``RAIL`` codes in a frame.

    ``thorough``: when a pass finds fewer codes than another might, the picture is tried
    smoothed and thresholded too, and what each finds is kept (a code once, where first read).
    """
    grey = cast(U8Array, cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image)
    boxes: dict[int, npt.NDArray[np.float64]] = {}
    rails: list[npt.NDArray[np.float64]] = []
    for variant in _variants(grey) if thorough else [grey]:
        for sym in read_qr(variant):
            text = sym.text.strip()
            m = _BOX_TEXT.match(text)
            if m:
                boxes.setdefault(int(m.group(1)), sym.corners)
            elif text == "RAIL":
                centre = sym.corners.mean(axis=0)
                side = float(np.linalg.norm(sym.corners[0] - sym.corners[1]))
                if all(np.linalg.norm(r.mean(axis=0) - centre) > side for r in rails):
                    rails.append(sym.corners)
    return boxes, rails


def calibrate(
    camera: str,
    image: U8Array,
    boxes: list[int],
    table: dict[str, Any],
    rail_image: U8Array | None = None,
) -> CalibrationResult:
    """The fix from a frame with a target standing in each of ``boxes``; PASS or FAIL why.

    ``table``: the table's description (``table.json``: boxes' centres, the rail and its codes).
    ``rail_image``: a frame from the same camera without the cards (they can stand in front of
    the RAIL codes), where the RAIL codes are taken from if the targets' frame shows none.
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
    centres = {
        int(b["box"]): (float(b["center_mm"][0]), float(b["center_mm"][1]), float(b["radius_mm"]))
        for b in table["boxes"]
    }
    unknown = [b for b in boxes if b not in centres]
    if unknown:
        return CalibrationResult(
            False, f"camera {camera}: box {unknown[0]} is not on the table", None
        )
    for b in boxes:
        side = _qr_geometry(codes[b])[2]
        if side < MIN_QR_PX:
            return CalibrationResult(
                False,
                f"camera {camera}: box {b}'s code is {side:.0f} px, under {MIN_QR_PX:.0f}",
                None,
            )
    if not rails and rail_image is not None:
        rails = find_codes(rail_image)[1]
    if not rails:
        return CalibrationResult(
            False,
            f"camera {camera}: no RAIL code in view, so the fix cannot be checked later",
            None,
        )
    h, w = image.shape[:2]
    pose = solve_table_pose(
        (w, h), {b: codes[b] for b in boxes}, rails, table, CARD_MM[1] / 2, QR_MM
    )
    if pose is None or pose.rms_px > MAX_POSE_RMS_PX:
        rms = "no fit" if pose is None else f"{pose.rms_px:.1f} px off"
        return CalibrationResult(
            False,
            f"camera {camera}: the codes do not agree with the table's plan ({rms}): a card out "
            "of its box or not upright, or the table's config not this table",
            None,
        )
    height = float(pose.centre_mm[2])
    if not 20.0 <= height <= 150.0:
        return CalibrationResult(
            False,
            f"camera {camera}: the lens is {height:.0f} mm above the cloth, not 3-12 cm",
            None,
        )
    fixes: dict[int, BoxFix] = {}
    for b in boxes:
        x, y, _ = centres[b]
        (u, v), (_, v2) = pose.project(np.array([[x, y, 0.0], [x, y, 10.0]]))
        fixes[b] = BoxFix(b, float(u), float(v), float(abs(v - v2) / 10.0))
    rail = [RailRef(tuple(c.mean(axis=0)), _qr_geometry(c)[2]) for c in rails]
    cal = Calibration(camera, (w, h), pose, fixes, {b: centres[b] for b in boxes}, rail)
    scales = ", ".join(f"box {b} {f.scale:.2f} px/mm" for b, f in sorted(fixes.items()))
    return CalibrationResult(
        True,
        f"camera {camera}: {len(fixes)} boxes placed ({scales}), lens {height:.0f} mm up, "
        f"focal length {pose.focal:.0f} px, codes placed within {pose.rms_px:.1f} px, "
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
                f"camera {cal.camera}: a RAIL code's size changed by "
                f"{abs(side / ref.side_px - 1):.1%}",
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
