"""The technician's calibration picture: the frame with fiducials, box outlines and wagers."""

from __future__ import annotations

import math

import cv2
import numpy as np

from drivers.camera.config import CameraConfig
from drivers.camera.detector import FrameReading, U8Array
from drivers.camera.fiducials import FiducialSearch, fiducial_corners_mm

_GREEN, _RED, _YELLOW, _WHITE = (60, 220, 60), (40, 40, 230), (0, 220, 255), (255, 255, 255)


def _text(img: U8Array, text: str, org: tuple[int, int], colour: tuple[int, int, int]) -> None:
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)
    x, y = org
    cv2.rectangle(img, (x - 2, y - h - 3), (x + w + 2, y + base), (0, 0, 0), -1)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)


def draw_overlay(
    frame: U8Array,
    cfg: CameraConfig,
    search: FiducialSearch,
    reading: FrameReading | None,
) -> U8Array:
    img = frame.copy()
    fix = search.fix
    if fix is None:
        _text(img, search.reason or "layout not found", (12, 24), _RED)
        return img
    for fid in cfg.fiducials:
        where = fix.to_image(fiducial_corners_mm(fid))
        seen = fid.code in fix.found
        colour = _GREEN if seen else _RED
        cv2.polylines(img, [np.round(where).astype(np.int32)], True, colour, 2, cv2.LINE_AA)
        tl = where[0]
        label = f"{fid.code}{'' if seen else ' (not read)'}"
        _text(img, label, (int(tl[0]), int(tl[1]) - 6), colour)
    lay = cfg.layout
    for area in cfg.boxes:
        cx, cy = area.center_mm
        ring = np.array(
            [
                (cx + area.radius_mm * math.cos(t), cy + area.radius_mm * math.sin(t))
                for t in np.linspace(0, 2 * math.pi, 64, endpoint=False)
            ]
        )
        r = reading.boxes.get(area.box) if reading is not None else None
        sure = r is not None and r.confidence >= cfg.min_confidence
        colour = _GREEN if sure else _YELLOW
        cv2.polylines(img, [np.round(fix.to_image(ring)).astype(np.int32)], True, colour, 2)
        # Where the top of the tallest stack looked for would show: the face of a chip
        # max_stack chips up, and the line up to it from the circle's centre.
        top = lay.max_stack * lay.chip_height_mm
        face = np.array(
            [
                (
                    cx + lay.chip_diameter_mm / 2 * math.cos(t),
                    cy + lay.chip_diameter_mm / 2 * math.sin(t),
                )
                for t in np.linspace(0, 2 * math.pi, 32, endpoint=False)
            ]
        )
        cv2.polylines(
            img, [np.round(fix.to_image(face, top)).astype(np.int32)], True, colour, 1, cv2.LINE_AA
        )
        axis = np.vstack(
            [fix.to_image(np.array([[cx, cy]])), fix.to_image(np.array([[cx, cy]]), top)]
        )
        cv2.polylines(img, [np.round(axis).astype(np.int32)], False, colour, 1, cv2.LINE_AA)
        anchor = fix.to_image(np.array([[cx - area.radius_mm, cy + area.radius_mm + 14]]))[0]
        x, y = int(anchor[0]), int(anchor[1])
        _text(img, f"box {area.box}", (x, y), _WHITE)
        if r is not None:
            chips = " ".join(f"{n}x${v}" for v, n in r.chips.items()) or "no chips"
            _text(img, f"${r.amount}  {chips}", (x, y + 16), colour)
            _text(img, f"conf {r.confidence:.2f} {r.note}".rstrip(), (x, y + 32), colour)
    found = len(fix.found)
    _text(
        img,
        f"fiducials {found}/{len(cfg.fiducials)}  fit error {fix.error_mm:.1f} mm",
        (12, 24),
        _GREEN if found == len(cfg.fiducials) else _YELLOW,
    )
    return img
