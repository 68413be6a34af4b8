"""A pinhole camera with a pose on the dealer's side and radial lens distortion.

World: table millimetres (x to the dealer's right, y towards the players, z up). The camera's
own frame is OpenCV's: x to the right of the picture, y down it, z along the optical axis, so
``X_cam = R (X - C)``. A point projects to ``x = X/Z, y = Y/Z``, is distorted radially by
``1 + k1 r^2 + k2 r^4`` (``r^2 = x^2 + y^2``; negative ``k1`` is barrel distortion) and lands on
pixel ``u = fx x' + cx, v = fy y' + cy`` (pixel centres at integer coordinates).

The picture is traced on an undistorted *canvas* (the same pinhole, its principal point moved
by ``offset``) large enough to hold everything the distorted picture shows; the lens then
resamples the canvas (:meth:`Camera.lens_maps`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]

SIZES = {"1920x1080": (1920, 1080), "3840x2160": (3840, 2160)}


@dataclass(frozen=True)
class Pose:
    position: tuple[float, float, float]  # the lens centre (mm; z = height above the cloth)
    yaw_deg: float  # bearing of the optical axis from +y, towards +x
    tilt_deg: float  # down from horizontal
    roll_deg: float  # about the optical axis, clockwise in the picture

    def rotation(self) -> F64:
        """World-to-camera rotation; its rows are the picture's right, down and forward."""
        y, t, r = (math.radians(a) for a in (self.yaw_deg, self.tilt_deg, self.roll_deg))
        forward = np.array([math.sin(y) * math.cos(t), math.cos(y) * math.cos(t), -math.sin(t)])
        right = np.array([math.cos(y), -math.sin(y), 0.0])
        down = np.cross(forward, right)
        right, down = (
            math.cos(r) * right - math.sin(r) * down,
            math.sin(r) * right + math.cos(r) * down,
        )
        return np.stack([right, down, forward])

    def to_dict(self) -> dict[str, object]:
        rot = self.rotation()
        c = np.array(self.position)
        return {
            "position_mm": [round(v, 3) for v in self.position],
            "yaw_deg": round(self.yaw_deg, 4),
            "tilt_deg": round(self.tilt_deg, 4),
            "roll_deg": round(self.roll_deg, 4),
            "R": [[round(float(v), 8) for v in row] for row in rot],
            "t_mm": [round(float(v), 4) for v in -rot @ c],
        }


@dataclass(frozen=True)
class Intrinsics:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    k1: float
    k2: float

    def to_dict(self) -> dict[str, object]:
        return {
            "size": [self.width, self.height],
            "fx": round(self.fx, 4),
            "fy": round(self.fy, 4),
            "cx": round(self.cx, 4),
            "cy": round(self.cy, 4),
            "k1": round(self.k1, 6),
            "k2": round(self.k2, 6),
            "model": "u = fx*x*(1+k1*r^2+k2*r^4)+cx, v = fy*y*(1+k1*r^2+k2*r^4)+cy; "
            "x = X/Z, y = Y/Z in OpenCV's camera frame, X_cam = R (X_world - C)",
        }


class Camera:
    def __init__(self, name: str, pose: Pose, k: Intrinsics) -> None:
        self.name = name
        self.pose = pose
        self.k = k
        self.R = pose.rotation()
        self.C = np.array(pose.position, dtype=np.float64)

    # --- projection ---------------------------------------------------------------------

    def to_camera(self, points: F64) -> F64:
        return (np.asarray(points, np.float64).reshape(-1, 3) - self.C) @ self.R.T

    def depth(self, points: F64) -> F64:
        """Distance along the optical axis (mm)."""
        return self.to_camera(points)[:, 2]

    def project(self, points: F64) -> F64:
        """World points (N, 3) to distorted pixels (N, 2); NaN for points behind the lens."""
        pc = self.to_camera(points)
        z = pc[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            x, y = pc[:, 0] / z, pc[:, 1] / z
        r2 = x * x + y * y
        f = 1 + self.k.k1 * r2 + self.k.k2 * r2 * r2
        uv = np.stack([self.k.fx * x * f + self.k.cx, self.k.fy * y * f + self.k.cy], axis=1)
        uv[z <= 1e-6] = np.nan
        return uv

    def in_view(self, uv: F64, margin: float = 0.0) -> npt.NDArray[np.bool_]:
        u, v = uv[:, 0], uv[:, 1]
        return (
            np.isfinite(u)
            & (u >= margin)
            & (v >= margin)
            & (u <= self.k.width - 1 - margin)
            & (v <= self.k.height - 1 - margin)
        )

    # --- the undistorted canvas the scene is traced on -------------------------------------

    @cached_property
    def _undistort_grid(self) -> tuple[F32, F32]:
        """Each output pixel's undistorted normalised coordinates (x, y)."""
        k = self.k
        u = np.arange(k.width, dtype=np.float32)
        v = np.arange(k.height, dtype=np.float32)
        xd = ((u - k.cx) / k.fx)[None, :].repeat(k.height, 0)
        yd = ((v - k.cy) / k.fy)[:, None].repeat(k.width, 1)
        x, y = xd.copy(), yd.copy()
        for _ in range(12):  # fixed point: x = xd / (1 + k1 r^2 + k2 r^4)
            r2 = x * x + y * y
            f = 1 + np.float32(k.k1) * r2 + np.float32(k.k2) * r2 * r2
            x = xd / f
            y = yd / f
        return x, y

    @cached_property
    def canvas(self) -> tuple[int, int, float, float]:
        """(width, height, principal x, principal y) of the undistorted canvas."""
        x, y = self._undistort_grid
        k = self.k
        u0 = float(x.min()) * k.fx
        u1 = float(x.max()) * k.fx
        v0 = float(y.min()) * k.fy
        v1 = float(y.max()) * k.fy
        px = math.ceil(-u0) + 3
        py = math.ceil(-v0) + 3
        return (px + math.ceil(u1) + 4, py + math.ceil(v1) + 4, float(px), float(py))

    def lens_maps(self) -> tuple[F32, F32]:
        """For cv2.remap: where in the canvas each output pixel looks."""
        x, y = self._undistort_grid
        _, _, px, py = self.canvas
        return (
            (x * np.float32(self.k.fx) + np.float32(px)).astype(np.float32),
            (y * np.float32(self.k.fy) + np.float32(py)).astype(np.float32),
        )

    def canvas_project(self, points: F64) -> F64:
        """World points to undistorted canvas pixels (NaN behind the lens)."""
        pc = self.to_camera(points)
        z = pc[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = np.stack([pc[:, 0] / z * self.k.fx, pc[:, 1] / z * self.k.fy], axis=1)
        _, _, px, py = self.canvas
        uv += (px, py)
        uv[z <= 1e-6] = np.nan
        return uv

    def rays(self, u: F32, v: F32) -> tuple[F32, F32, F32]:
        """World directions (not normalised) of canvas pixels ``u, v``: dx, dy, dz."""
        _, _, px, py = self.canvas
        a = (u - np.float32(px)) / np.float32(self.k.fx)
        b = (v - np.float32(py)) / np.float32(self.k.fy)
        r = self.R.astype(np.float32)  # rows right, down, forward; world dir = R^T (a, b, 1)
        return (
            r[0, 0] * a + r[1, 0] * b + r[2, 0],
            r[0, 1] * a + r[1, 1] * b + r[2, 1],
            r[0, 2] * a + r[1, 2] * b + r[2, 2],
        )

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "intrinsics": self.k.to_dict(), "pose": self.pose.to_dict()}


def focal_for(
    pose: Pose,
    size: tuple[int, int],
    points: F64,
    fill: float = 0.86,
) -> float:
    """The longest focal length (px) that still keeps ``points`` inside ``fill`` of the frame."""
    w, h = size
    pc = (points - np.array(pose.position)) @ pose.rotation().T
    z = np.maximum(pc[:, 2], 1.0)
    ax = float(np.max(np.abs(pc[:, 0] / z)))
    ay = float(np.max(np.abs(pc[:, 1] / z)))
    return min(fill * w / 2 / max(ax, 1e-6), fill * h / 2 / max(ay, 1e-6))


def required_focal(farthest_mm: float, thickness_mm: float) -> float:
    """DEVICES.md's rule: one chip edge at least 5 px tall at the farthest box."""
    return 5.0 * farthest_mm / thickness_mm
