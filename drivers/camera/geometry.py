"""Each betting box as the detector looks at it: a small image of the cloth around the box,
turned so that the camera is straight "down" in it, and where a chip's edges show in it.

A chip at height z over the cloth shows where the camera's ray through it meets the cloth:
pushed away from the camera by z / (h - z) of its distance from the point under the camera
(h: the camera's height), and enlarged by h / (h - z). So in each box's image a stack leans
straight "up" (away from the camera), and for a stack standing on the cloth at ``base`` the
rim of its chip at height z shows at rows that follow from the camera's pose alone: that is
the box's parallax direction and chip step, different for every box and every camera pose.

Frames from a camera with no pose (the fix has only a homography) are read as if from a
camera far away over the dealer's side, 55 degrees from the vertical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import BoxArea, CameraConfig
from drivers.camera.fiducials import LayoutFix

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_MARGIN_MM = 16.0  # cloth kept round a box's reach


@dataclass(frozen=True)
class BoxView:
    area: BoxArea
    ppm: float  # pixels a millimetre in the box image
    size: tuple[int, int]  # w, h of the box image
    centre_px: tuple[float, float]  # the betting circle's centre in the box image
    toward: tuple[float, float]  # unit layout vector from the box to the camera ("down")
    across: tuple[float, float]  # unit layout vector to the box image's right
    foot_mm: tuple[float, float]  # the point of the cloth under the camera
    height_mm: float  # the camera's height over the cloth
    maps: tuple[npt.NDArray[np.int16], npt.NDArray[np.uint16]]  # for cv2.remap
    inside: BoolArray  # where chips standing in the circle can show
    felt_ref: BoolArray  # cloth that only cloth covers (towards the camera, outside the circle)
    outside: BoolArray  # cloth beyond where any chip of this box can show
    on_line: BoolArray  # the printed betting circle
    visible: BoolArray  # inside the frame
    in_view: float  # the share of ``inside`` that is in the frame
    outside_u8: npt.NDArray[np.uint8]  # ``outside`` as 0/1, for OpenCV
    ring_zone: BoolArray  # where the betting circle's printed rings lie

    def layout_of(self, u: float, v: float) -> tuple[float, float]:
        """The layout point (mm) at box-image pixel (u, v)."""
        cx, cy = self.centre_px
        du, dv = (u - cx) / self.ppm, (v - cy) / self.ppm
        ax, ay = self.across
        tx, ty = self.toward
        bx, by = self.area.center_mm
        return (bx + du * ax + dv * tx, by + du * ay + dv * ty)

    def pixel_of(self, x: float, y: float) -> tuple[float, float]:
        bx, by = self.area.center_mm
        dx, dy = x - bx, y - by
        cx, cy = self.centre_px
        return (
            cx + (dx * self.across[0] + dy * self.across[1]) * self.ppm,
            cy + (dx * self.toward[0] + dy * self.toward[1]) * self.ppm,
        )

    def rim_row(self, base_mm: tuple[float, float], z: float, side: float, r_mm: float) -> float:
        """The box-image row where the rim of a chip of radius ``r_mm`` at height ``z`` over
        ``base_mm`` shows, on its side nearest the camera (``side`` = +1) or farthest (-1)."""
        fx, fy = self.foot_mm
        bx, by = base_mm
        dx, dy = fx - bx, fy - by
        d = math.hypot(dx, dy) or 1.0
        px, py = bx + side * r_mm * dx / d, by + side * r_mm * dy / d
        k = self.height_mm / max(self.height_mm - z, 1e-6)
        cx, cy = fx + (px - fx) * k, fy + (py - fy) * k
        return self.pixel_of(cx, cy)[1]

    def height_at_row(
        self, base_mm: tuple[float, float], row: float, side: float, r_mm: float
    ) -> float:
        """The inverse of ``rim_row``: the height of a rim that shows at ``row``."""
        fx, fy = self.foot_mm
        v_foot = self.pixel_of(fx, fy)[1]
        v_rim0 = self.rim_row(base_mm, 0.0, side, r_mm)
        s = (row - v_foot) / (v_rim0 - v_foot) if v_rim0 != v_foot else 1.0
        if s <= 0:
            return math.inf
        return self.height_mm * (1.0 - 1.0 / s)

    def step_px(self, base_mm: tuple[float, float], chip_mm: float, r_mm: float) -> float:
        """How many rows the first chip's rim moves up the box image."""
        return self.rim_row(base_mm, 0.0, 1, r_mm) - self.rim_row(base_mm, chip_mm, 1, r_mm)


def box_views(cfg: CameraConfig, fix: LayoutFix, frame_size: tuple[int, int]) -> list[BoxView]:
    """The box images' geometry and sampling maps for frames placed by ``fix``."""
    lay = cfg.layout
    ppm = cfg.work_px_per_mm
    if fix.camera is not None:
        fx, fy, height = fix.camera.centre
    else:
        far, tilt = 1500.0, math.radians(55)
        fx, fy, height = (
            lay.width_mm / 2,
            lay.height_mm + far * math.sin(tilt),
            far * math.cos(tilt),
        )
    top = lay.max_stack * lay.chip_height_mm
    r_chip = lay.chip_diameter_mm / 2
    views = []
    w_frame, h_frame = frame_size
    for area in cfg.boxes:
        bx, by = area.center_mm
        dx, dy = fx - bx, fy - by
        d = math.hypot(dx, dy) or 1.0
        toward = (dx / d, dy / d)
        # The box image's right is the camera's right: for a camera over the dealer's side
        # (toward = +y) that is the layout's +x, so the image is not mirrored.
        across = (toward[1], -toward[0])
        r = area.radius_mm
        k = height / max(height - top, 1.0)
        # Reach away from the camera: the far rim of a top chip of a stack at the circle's back.
        reach = (d + r) * k - d - r + r_chip * (k - 1)
        u0, u1 = -(r + _MARGIN_MM + r_chip * (k - 1)), r + _MARGIN_MM + r_chip * (k - 1)
        v0, v1 = -(r + reach + _MARGIN_MM), r + _MARGIN_MM
        w = math.ceil((u1 - u0) * ppm)
        h = math.ceil((v1 - v0) * ppm)
        cpx = (-u0 * ppm - 0.5, -v0 * ppm - 0.5)
        us = (np.arange(w, dtype=np.float64) - cpx[0]) / ppm
        vs = (np.arange(h, dtype=np.float64) - cpx[1]) / ppm
        uu, vv = np.meshgrid(us, vs)
        xm = bx + uu * across[0] + vv * toward[0]
        ym = by + uu * across[1] + vv * toward[1]
        # The frame position of every pixel: projected on a coarse grid (the camera's mapping
        # is smooth) and filled in between.
        step = 6
        gw, gh = (w - 1) // step + 2, (h - 1) // step + 2
        gx = np.arange(gw, dtype=np.float64) * step
        gy = np.arange(gh, dtype=np.float64) * step
        gu, gv = np.meshgrid((gx - cpx[0]) / ppm, (gy - cpx[1]) / ppm)
        grid_pts = np.column_stack(
            [
                (bx + gu * across[0] + gv * toward[0]).ravel(),
                (by + gu * across[1] + gv * toward[1]).ravel(),
            ]
        )
        coarse = fix.to_image(grid_pts).reshape(gh, gw, 2)
        fine_x = np.interp(np.arange(w), gx, np.arange(gw))
        fine_y = np.interp(np.arange(h), gy, np.arange(gh))
        img = np.empty((h, w, 2), np.float32)
        for c in range(2):
            img[..., c] = cv2.remap(
                coarse[..., c].astype(np.float32),
                np.broadcast_to(fine_x[None, :], (h, w)).astype(np.float32),
                np.broadcast_to(fine_y[:, None], (h, w)).astype(np.float32),
                cv2.INTER_LINEAR,
            )
        maps = cv2.convertMaps(img[..., 0], img[..., 1], cv2.CV_16SC2)
        visible = (
            (img[..., 0] >= 0)
            & (img[..., 0] <= w_frame - 1)
            & (img[..., 1] >= 0)
            & (img[..., 1] <= h_frame - 1)
        )
        dist = np.hypot(uu, vv)
        # Chips stand in the circle; their tops lean up to ``reach`` away from the camera.
        lean = np.clip(-vv, 0, None)
        allowed = r + r_chip * (k - 1) * np.clip(lean / max(reach, 1e-6), 0, 1) + 2.0
        inside = (np.abs(uu) <= allowed) & (
            (dist <= r + 2.0) | ((vv < 0) & (vv >= -(r + reach + 2.0)))
        )
        felt_ref = (dist > r + 4.0) & (vv > 0.25 * r) & ~inside
        edge = 12.0  # the layout's own edge, blurred into the rail, is no object
        on_layout = (
            (xm >= edge) & (xm <= lay.width_mm - edge) & (ym >= edge) & (ym <= lay.height_mm - edge)
        )
        for fid in cfg.fiducials:  # the printed codes and their white surround
            half = fid.size_mm * 0.75 + 8.0
            fx0, fy0 = fid.center_mm
            on_layout &= ~((np.abs(xm - fx0) <= half) & (np.abs(ym - fy0) <= half))
        outside = ~inside & (dist > r + 5.0) & on_layout
        inside &= on_layout
        on_line = np.abs(dist - r) < 3.5
        views.append(
            BoxView(
                area,
                ppm,
                (w, h),
                cpx,
                toward,
                across,
                (fx, fy),
                height,
                (np.asarray(maps[0]), np.asarray(maps[1])),
                inside,
                felt_ref & visible & on_layout,
                outside & visible,
                on_line,
                visible,
                float(visible[inside].mean()) if inside.any() else 0.0,
                (outside & visible).astype(np.uint8),
                (dist > r - 14.0) & (dist < r + 5.0) & visible,
            )
        )
    return views
