"""Supersampled layers of traced objects, and what the camera saw of the scene.

A :class:`Layer` holds the radiance of traced objects on a grid ``scale`` times finer than the
picture, touched only in the rectangles traced. :func:`measure` reads the layers for the truth
file: the pixels of each chip the camera sees (not hidden behind another stack or the hand),
each chip's width in the picture, how much of each betting circle and fiducial the hand covers,
which of them lie wholly in the picture, and how many pixels a fiducial's module spans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import CameraConfig
from drivers.camera.scene.camera import Camera
from drivers.camera.scene.chips import Chip, ChipModel
from drivers.camera.scene.layout import QUIET_MODULES
from drivers.camera.scene.lighting import F32, F64


@dataclass
class Region:
    """A rectangle of a picture's grid and a mask within it."""

    rows: slice
    cols: slice
    mask: npt.NDArray[np.bool_]

    @property
    def count(self) -> int:
        return int(self.mask.sum())


@dataclass
class Measured:
    """What the tracing saw, for the truth file."""

    chip_px: F64  # visible pixels of each chip (frame order)
    chip_width_px: F64  # its projected diameter
    circle_cover: dict[int, float]  # share of each betting circle under the hand
    hand_over_chips: dict[int, int]  # supersampled rays that would meet a box's chips
    circle_in_view: dict[int, bool]
    circle_px: dict[int, tuple[float, float]]
    fiducial_cover: dict[str, float]
    fiducial_corners: dict[str, list[tuple[float, float]]]
    fiducial_in_view: dict[str, bool]
    fiducial_module_px: dict[str, float]  # the smallest side of a module in the picture


class Layer:
    """Radiance of traced objects, touched only in the rectangles traced.

    ``ids`` holds 1 + the object's id (a chip's index; 0 for the hand) and 0 where nothing
    was met; all arrays start as zeros, which costs nothing until a rectangle is written."""

    def __init__(self, camera: Camera, scale: int) -> None:
        self.s = scale
        self.w, self.h = camera.width, camera.height
        shape = (self.h * scale, self.w * scale)
        self.rgb = np.zeros((*shape, 3), np.float32)
        self.t = np.zeros(shape, np.float64)
        self.ids = np.zeros(shape, np.int32)
        self.regions: list[tuple[slice, slice]] = []

    def nearer(self, rows: slice, cols: slice, t: F64) -> npt.NDArray[np.bool_]:
        ids = self.ids[rows, cols].reshape(-1)
        return np.asarray((ids == 0) | (t < self.t[rows, cols].reshape(-1)), bool)

    def put(
        self,
        rows: slice,
        cols: slice,
        front: npt.NDArray[np.bool_],
        t: F64,
        rgb: F64,
        ids: npt.NDArray[np.int64],
    ) -> None:
        shape = (rows.stop - rows.start, cols.stop - cols.start)
        where = front.reshape(shape)
        self.rgb[rows, cols][where] = rgb
        self.t[rows, cols][where] = t
        self.ids[rows, cols][where] = ids + 1
        self.regions.append((rows, cols))

    def down(self) -> tuple[F32, F32]:
        """Premultiplied radiance and coverage at the picture's resolution."""
        rgb = np.zeros((self.h, self.w, 3), np.float32)
        alpha = np.zeros((self.h, self.w), np.float32)
        s = self.s
        for rows, cols in self.regions:
            nr = slice(rows.start // s, rows.stop // s)
            nc = slice(cols.start // s, cols.stop // s)
            mask = (self.ids[rows, cols] != 0).astype(np.float32)
            size = (nc.stop - nc.start, nr.stop - nr.start)
            rgb[nr, nc] = cv2.resize(self.rgb[rows, cols], size, interpolation=cv2.INTER_AREA)
            alpha[nr, nc] = cv2.resize(mask, size, interpolation=cv2.INTER_AREA)
        return rgb, alpha

    def fine(self, rows: slice, cols: slice, scale: int) -> npt.NDArray[np.int32]:
        """``ids`` of a rectangle of the ``scale``-times grid (this layer is at one ray a
        pixel: each pixel's id stands for all its sub-pixels)."""
        r0, r1 = rows.start // scale, -(-rows.stop // scale)
        c0, c1 = cols.start // scale, -(-cols.stop // scale)
        block = np.repeat(np.repeat(self.ids[r0:r1, c0:c1], scale, 0), scale, 1)
        return block[
            rows.start - r0 * scale : rows.stop - r0 * scale,
            cols.start - c0 * scale : cols.stop - c0 * scale,
        ]


def measure(
    cfg: CameraConfig,
    qr_modules: dict[str, int],
    model: ChipModel,
    camera: Camera,
    chips: list[Chip],
    layer: Layer,
    hand_layer: Layer,
    hit_regions: dict[int, Region],
    circles: dict[int, Region],
    fiducials: dict[str, Region],
) -> Measured:
    """``layer`` holds the chips at ``layer.s`` rays a pixel, ``hand_layer`` the hand at one;
    ``circles`` and ``fiducials`` are the picture's pixels on each circle and code."""
    chip_px = _visible(layer, hand_layer, len(chips)) / (layer.s * layer.s)
    if chips:
        centres = np.array(
            [np.array(c.bottom) + np.array(c.frame[2]) * model.thickness_mm / 2 for c in chips]
        )
        _, depth = camera.project(centres)
        width = 2 * model.radius_mm * camera.fpx / np.maximum(depth, 1.0)
    else:
        width = np.zeros(0)
    hand = hand_layer.down()[1]
    cover: dict[int, float] = {}
    over: dict[int, int] = {}
    in_view: dict[int, bool] = {}
    where: dict[int, tuple[float, float]] = {}
    for box in cfg.boxes:
        reg = circles[box.box]
        cover[box.box] = float((hand[reg.rows, reg.cols] * reg.mask).sum() / max(reg.count, 1))
        hr = hit_regions.get(box.box)
        over[box.box] = (
            int((hand_layer.fine(hr.rows, hr.cols, layer.s) != 0)[hr.mask].sum()) if hr else 0
        )
        ring = np.array(
            [
                (
                    box.center_mm[0] + box.radius_mm * math.cos(a),
                    box.center_mm[1] + box.radius_mm * math.sin(a),
                    0.0,
                )
                for a in np.linspace(0, 2 * math.pi, 36, endpoint=False)
            ]
        )
        in_view[box.box] = inside(camera, ring)
        c, _ = camera.project(np.array([[box.center_mm[0], box.center_mm[1], 0.0]]))
        where[box.box] = (float(c[0, 0]), float(c[0, 1]))
    fid_cover: dict[str, float] = {}
    corners: dict[str, list[tuple[float, float]]] = {}
    fid_view: dict[str, bool] = {}
    module: dict[str, float] = {}
    for fid in cfg.fiducials:
        reg = fiducials[fid.code]
        fid_cover[fid.code] = float((hand[reg.rows, reg.cols] * reg.mask).sum() / max(reg.count, 1))
        n = qr_modules[fid.code]
        hs = fid.size_mm / 2
        uv, _ = camera.project(square(fid.center_mm, hs))
        corners[fid.code] = [(round(float(a), 2), round(float(b), 2)) for a, b in uv]
        sides = np.linalg.norm(uv - np.roll(uv, -1, axis=0), axis=1)
        module[fid.code] = float(sides.min()) / n
        quiet = hs + QUIET_MODULES * fid.size_mm / n
        fid_view[fid.code] = inside(camera, square(fid.center_mm, quiet))
    return Measured(
        chip_px, width, cover, over, in_view, where, fid_cover, corners, fid_view, module
    )


def _visible(layer: Layer, hand_layer: Layer, n: int) -> F64:
    """Rays on each chip not covered by the hand (over the union of the traced rectangles, so
    a chip traced in two overlapping rectangles is counted once)."""
    counts = np.zeros(n)
    if not n or not layer.regions:
        return counts
    r0 = min(r.start for r, _ in layer.regions)
    r1 = max(r.stop for r, _ in layer.regions)
    c0 = min(c.start for _, c in layer.regions)
    c1 = max(c.stop for _, c in layer.regions)
    ids = layer.ids[r0:r1, c0:c1]
    covered = hand_layer.fine(slice(r0, r1), slice(c0, c1), layer.s) != 0
    seen = ids[(ids > 0) & ~covered] - 1
    return np.bincount(seen, minlength=n)[:n].astype(np.float64)


def square(centre: tuple[float, float], half: float) -> F64:
    """The corners of a square on the felt: top left, top right, bottom right, bottom left."""
    cx, cy = centre
    return np.array(
        [
            [cx - half, cy - half, 0],
            [cx + half, cy - half, 0],
            [cx + half, cy + half, 0],
            [cx - half, cy + half, 0],
        ],
        np.float64,
    )


def inside(camera: Camera, points: F64) -> bool:
    """Whether every point is in front of the camera and inside the picture."""
    uv, depth = camera.project(points)
    return bool(
        np.all(depth > 0)
        and np.all((uv[:, 0] >= 0) & (uv[:, 0] <= camera.width - 1))
        and np.all((uv[:, 1] >= 0) & (uv[:, 1] <= camera.height - 1))
    )
