"""The camera: a pinhole with a real pose over the layout, and radial (barrel) lens distortion.

World coordinates are layout millimetres: x to the right along the dealer's edge, y towards
the dealer, z into the table (a point ``h`` mm above the felt has ``z = -h``), which makes the
frame right-handed. The camera's own frame is OpenCV's: x to the right of the picture, y down
the picture, z along the optical axis.

The pose is what a technician sets when mounting the camera: where it is, how far the optical
axis is tipped from straight down (``tilt``), which way it faces (``yaw``: 0 looks across the
layout towards the players, -y), and how far the picture is turned about the axis (``roll``).
The lens is a focal length, a principal point and Brown's radial terms ``k1``, ``k2`` (negative
``k1``: barrel distortion, as cheap wide lenses have). Pixel ``(u, v)`` has its centre at
integer ``u, v`` (OpenCV's convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]

UP = np.array([0.0, 0.0, -1.0])  # the world's "up", out of the felt


@dataclass(frozen=True)
class Pose:
    position: tuple[float, float, float]  # the camera's centre (world mm, z = -height)
    tilt_deg: float  # the optical axis from straight down (0 = looking straight down)
    yaw_deg: float  # about the vertical; 0 = facing the players (-y), positive turns to +x
    roll_deg: float  # about the optical axis, positive turns the picture clockwise

    @property
    def height_mm(self) -> float:
        return -self.position[2]

    def rotation(self) -> F64:
        """World-to-camera rotation: its rows are the camera's right, down and forward axes."""
        t, y, r = (math.radians(a) for a in (self.tilt_deg, self.yaw_deg, self.roll_deg))
        forward = np.array([math.sin(y) * math.sin(t), -math.cos(y) * math.sin(t), math.cos(t)])
        right = np.array([math.cos(y), math.sin(y), 0.0])
        down = np.cross(forward, right)
        right, down = (
            math.cos(r) * right + math.sin(r) * down,
            -math.sin(r) * right + math.cos(r) * down,
        )
        return np.stack([right, down, forward])


def look_at(
    target: tuple[float, float], distance_mm: float, tilt: float, yaw: float, roll: float
) -> Pose:
    """The pose whose optical axis meets the felt at ``target`` from ``distance_mm`` away."""
    forward = Pose((0.0, 0.0, 0.0), tilt, yaw, roll).rotation()[2]
    position = np.array([target[0], target[1], 0.0]) - distance_mm * forward
    return Pose((float(position[0]), float(position[1]), float(position[2])), tilt, yaw, roll)


def bumped(pose: Pose, rng: np.random.Generator, degrees: float, mm: float) -> Pose:
    """The pose after a knock: each angle off by up to ``degrees``, the mount by up to ``mm``."""
    if degrees == 0 and mm == 0:
        return pose
    dt, dy, dr = rng.uniform(-degrees, degrees, 3)
    shift = rng.uniform(-mm, mm, 3)
    x, y, z = pose.position
    return replace(
        pose,
        position=(x + float(shift[0]), y + float(shift[1]), z + float(shift[2]) * 0.5),
        tilt_deg=pose.tilt_deg + float(dt),
        yaw_deg=pose.yaw_deg + float(dy),
        roll_deg=pose.roll_deg + float(dr) * 0.5,
    )


@dataclass(frozen=True)
class Lens:
    focal: float  # focal length in pixels per pixel of image width (fx = fy = focal * width)
    cx: float  # principal point as a fraction of the width (0.5: the centre)
    cy: float  # ... and of the height
    k1: float  # radial distortion terms: x_d = x (1 + k1 r^2 + k2 r^4)
    k2: float

    def distort(self, x: F64, y: F64) -> tuple[F64, F64]:
        r2 = x * x + y * y
        s = 1.0 + self.k1 * r2 + self.k2 * r2 * r2
        return x * s, y * s

    def undistort(self, xd: F64, yd: F64) -> tuple[F64, F64]:
        """The ideal pinhole coordinates whose distorted image is ``(xd, yd)``: Newton's method
        on the radius, ``r (1 + k1 r^2 + k2 r^4) = r_d``."""
        rd = np.hypot(xd, yd)
        r = rd.copy()
        for _ in range(8):
            r2 = r * r
            f = r * (1.0 + self.k1 * r2 + self.k2 * r2 * r2) - rd
            df = 1.0 + 3.0 * self.k1 * r2 + 5.0 * self.k2 * r2 * r2
            r -= f / df
        scale = np.divide(r, rd, out=np.ones_like(rd), where=rd > 1e-12)
        return xd * scale, yd * scale


@dataclass(frozen=True)
class Camera:
    pose: Pose
    lens: Lens
    width: int
    height: int

    @property
    def fpx(self) -> float:
        return self.lens.focal * self.width

    def project(self, points: F64) -> tuple[F64, F64]:
        """Pixel positions ``(N, 2)`` of world points ``(N, 3)``, and their depth along the axis
        (a point behind the camera has depth <= 0 and no meaningful position)."""
        rot = self.pose.rotation()
        cam = (np.asarray(points, np.float64) - np.array(self.pose.position)) @ rot.T
        depth = cam[:, 2]
        safe = np.where(depth > 1e-6, depth, 1e-6)
        xd, yd = self.lens.distort(cam[:, 0] / safe, cam[:, 1] / safe)
        u = self.fpx * xd + self.lens.cx * self.width
        v = self.fpx * yd + self.lens.cy * self.height
        return np.stack([u, v], axis=1), depth

    def rays(self, scale: int = 1) -> F32:
        """Unit world directions ``(H*scale, W*scale, 3)`` through each (sub)pixel centre."""
        return self.rays_in(slice(0, self.height * scale), slice(0, self.width * scale), scale)

    def rays_in(self, rows: slice, cols: slice, scale: int) -> F32:
        """The same for a rectangle ``rows x cols`` of the ``scale``-times finer grid."""
        j = np.arange(cols.start, cols.stop, dtype=np.float64)
        i = np.arange(rows.start, rows.stop, dtype=np.float64)
        uu, vv = np.meshgrid((j + 0.5) / scale - 0.5, (i + 0.5) / scale - 0.5)
        xd = (uu - self.lens.cx * self.width) / self.fpx
        yd = (vv - self.lens.cy * self.height) / self.fpx
        x, y = self.lens.undistort(xd, yd)
        rot = self.pose.rotation()
        d = x[..., None] * rot[0] + y[..., None] * rot[1] + rot[2]
        d /= np.linalg.norm(d, axis=2, keepdims=True)
        return np.asarray(d, np.float32)

    def scaled(self, width: int, height: int) -> Camera:
        """The same camera and lens read out at another resolution (same field of view)."""
        return replace(self, width=width, height=height)


def fit_focal(
    pose: Pose,
    lens: Lens,
    aspect: float,
    outline_mm: F64,
    margin: float,
) -> float:
    """The focal length (per pixel of width) at which the layout outline ``(N, 2)`` just fits
    inside the picture with ``margin`` of each half-size to spare — what an installer does by
    choosing the lens and zoom."""
    rot = pose.rotation()
    pts = np.column_stack([outline_mm, np.zeros(len(outline_mm))])
    cam = (pts - np.array(pose.position)) @ rot.T
    if np.any(cam[:, 2] <= 0):
        raise ValueError("part of the layout is behind the camera")
    xd, yd = lens.distort(cam[:, 0] / cam[:, 2], cam[:, 1] / cam[:, 2])
    # u = f W xd + cx W must stay within [m W/2, W - m W/2]; likewise v with H = W / aspect.
    half = 1.0 - margin
    limits = []
    for d, c, size in ((xd, lens.cx, 1.0), (yd, lens.cy, 1.0 / aspect)):
        pos, neg = d[d > 0], -d[d < 0]
        if pos.size:
            limits.append(((1 - c) * size - (1 - half) * size / 2) / pos.max())
        if neg.size:
            limits.append((c * size - (1 - half) * size / 2) / neg.max())
    return float(min(limits))


def outline(width_mm: float, height_mm: float, pad_mm: float, per_edge: int = 24) -> F64:
    """Points along the edges of the layout rectangle grown by ``pad_mm`` (for framing)."""
    x0, y0, x1, y1 = -pad_mm, -pad_mm, width_mm + pad_mm, height_mm + pad_mm
    t = np.linspace(0.0, 1.0, per_edge, endpoint=False)
    edges = [
        np.column_stack([x0 + (x1 - x0) * t, np.full_like(t, y0)]),
        np.column_stack([np.full_like(t, x1), y0 + (y1 - y0) * t]),
        np.column_stack([x1 - (x1 - x0) * t, np.full_like(t, y1)]),
        np.column_stack([np.full_like(t, x0), y1 - (y1 - y0) * t]),
    ]
    return np.concatenate(edges)
