"""The technician's calibration picture: the frame with fiducials, box outlines and wagers."""

from __future__ import annotations

import math

import cv2
import numpy as np

from drivers.camera.config import CameraConfig
from drivers.camera.detector import FrameReading, U8Array
from drivers.camera.fiducials import FiducialSearch, fiducial_corners_mm

_GREEN, _RED, _YELLOW, _WHITE = (60, 220, 60), (40, 40, 230), (0, 220, 255), (255, 255, 255)


Box = tuple[int, int, int, int]  # left, top, right, bottom


class Labels:
    """Labels on one picture that never cover each other: a label whose place is taken moves
    down, a line at a time, until it is free (and stays inside the picture)."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.placed: list[Box] = []

    def place(self, text: str, org: tuple[int, int]) -> tuple[tuple[int, int], Box]:
        (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)
        x = min(max(2, org[0]), max(2, self.width - w - 4))
        y = min(max(h + 3, org[1]), self.height - base - 1)
        step = h + base + 5
        for _ in range(64):
            box = (x - 2, y - h - 3, x + w + 2, y + base)
            if not any(_overlap(box, other) for other in self.placed):
                break
            y += step
            if y + base >= self.height:  # no room below: try above the first place instead
                y, step = org[1] - step, -step
        self.placed.append(box)
        return (x, y), box


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _text(
    img: U8Array,
    text: str,
    org: tuple[int, int],
    colour: tuple[int, int, int],
    labels: Labels | None = None,
) -> None:
    if labels is not None:
        org, box = labels.place(text, org)
    else:
        (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)
        box = (org[0] - 2, org[1] - h - 3, org[0] + w + 2, org[1] + base)
    cv2.rectangle(img, (box[0], box[1]), (box[2], box[3]), (0, 0, 0), -1)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)


def draw_overlay(
    frame: U8Array,
    cfg: CameraConfig,
    search: FiducialSearch,
    reading: FrameReading | None,
) -> U8Array:
    img = frame.copy()
    labels = Labels(img.shape[1], img.shape[0])
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
        _text(img, label, (int(tl[0]), int(tl[1]) - 6), colour, labels)
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
        _text(img, f"box {area.box}", (x, y), _WHITE, labels)
        if r is not None:
            chips = " ".join(f"{n}x${v}" for v, n in r.chips.items()) or "no chips"
            _text(img, f"${r.amount}  {chips}", (x, y + 16), colour, labels)
            _text(img, f"conf {r.confidence:.2f} {r.note}".rstrip(), (x, y + 32), colour, labels)
    found = len(fix.found)
    _text(
        img,
        f"fiducials {found}/{len(cfg.fiducials)}  fit error {fix.error_mm:.1f} mm",
        (12, 24),
        _GREEN if found == len(cfg.fiducials) else _YELLOW,
        labels,
    )
    return img
