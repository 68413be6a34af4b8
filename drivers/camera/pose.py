"""The camera's pose over the layout, from the fiducials' corners.

A pinhole camera with one radial distortion term is fitted to the fiducial corners (layout
millimetres on the table plane, pixels in the frame) with OpenCV's camera calibration: the
principal point is held at the frame's centre, pixels are square, and the focal length and
distortion are either the technician's learned ones (``[camera.learned]``) or estimated from
the frame itself. From the pose follow, for every point of the layout, where a chip's edge at
any height above it shows in the frame: the parallax that makes a stack's chips show one above
the other, and how far each chip moves (the "step") in each box.

World coordinates are layout millimetres: x to the right, y towards the dealer, and heights
measured up from the cloth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

_FLAGS = (
    cv2.CALIB_USE_INTRINSIC_GUESS
    | cv2.CALIB_FIX_PRINCIPAL_POINT
    | cv2.CALIB_FIX_ASPECT_RATIO
    | cv2.CALIB_ZERO_TANGENT_DIST
    | cv2.CALIB_FIX_K2
    | cv2.CALIB_FIX_K3
)


@dataclass(frozen=True)
class Intrinsics:
    """A camera's focal length (pixels) and radial distortion, at a given frame width."""

    focal_px: float
    k1: float
    width: int

    def at(self, width: int) -> Intrinsics:
        scale = width / self.width
        return Intrinsics(self.focal_px * scale, self.k1, width)


@dataclass(frozen=True)
class CameraModel:
    matrix: FloatArray  # 3x3
    dist: FloatArray  # OpenCV's 5 distortion coefficients (only k1 is used)
    rvec: FloatArray  # world -> camera rotation (Rodrigues)
    tvec: FloatArray
    rms_px: float  # how well the fiducial corners fit
    size: tuple[int, int]  # frame width, height

    @property
    def rotation(self) -> FloatArray:
        r, _ = cv2.Rodrigues(self.rvec)
        return np.asarray(r, np.float64)

    @property
    def centre(self) -> tuple[float, float, float]:
        """Where the camera is: layout x, y (mm) of the point under it, and its height (mm)."""
        c = -self.rotation.T @ self.tvec.reshape(3)
        return (float(c[0]), float(c[1]), float(-c[2]))

    @property
    def tilt_deg(self) -> float:
        """The angle of the camera's optical axis from the vertical."""
        axis = self.rotation.T @ np.array([0.0, 0.0, 1.0])  # the optical axis, in the world
        return math.degrees(math.acos(min(1.0, abs(float(axis[2])))))

    @property
    def intrinsics(self) -> Intrinsics:
        return Intrinsics(float(self.matrix[0, 0]), float(self.dist[0]), self.size[0])

    def project(self, points: FloatArray) -> FloatArray:
        """Frame pixels of layout points ``(x, y, height)`` (N x 3, mm)."""
        pts = np.asarray(points, np.float64).reshape(-1, 3).copy()
        pts[:, 2] = -pts[:, 2]
        out, _ = cv2.projectPoints(pts, self.rvec, self.tvec, self.matrix, self.dist)
        return np.asarray(out, np.float64).reshape(-1, 2)

    def on_cloth(self, x: FloatArray, y: FloatArray, height: float | FloatArray) -> FloatArray:
        """Where the camera's ray through the points ``(x, y, height)`` meets the cloth: a point
        above the layout shows in the frame where this point of the cloth would."""
        cx, cy, ch = self.centre
        k = ch / np.maximum(ch - np.asarray(height, np.float64), 1e-6)
        return np.stack([cx + (x - cx) * k, cy + (y - cy) * k], axis=-1)


def fit_camera(
    layout_mm: FloatArray,
    image_px: FloatArray,
    size: tuple[int, int],
    known: Intrinsics | None = None,
) -> CameraModel | None:
    """The camera that maps the layout points (N x 2, on the cloth) to the frame points.

    ``known``: the technician's learned focal length and distortion; without it they are
    estimated from these points, which needs the layout seen at a slant (any table camera but
    one looking straight down). None when no sensible camera fits."""
    w, h = size
    obj = np.zeros((len(layout_mm), 3), np.float32)
    obj[:, :2] = np.asarray(layout_mm, np.float32)
    img = np.asarray(image_px, np.float32).reshape(-1, 2)
    if len(obj) < 6:
        return None
    flags = _FLAGS
    if known is not None:
        k = known.at(w)
        f0, k1 = k.focal_px, k.k1
        flags |= cv2.CALIB_FIX_FOCAL_LENGTH | cv2.CALIB_FIX_K1
    else:
        f0, k1 = 1.0 * w, 0.0
    matrix = np.array([[f0, 0, (w - 1) / 2], [0, f0, (h - 1) / 2], [0, 0, 1]], np.float64)
    dist = np.array([k1, 0, 0, 0, 0], np.float64)
    try:
        rms, fitted, coeffs, rvecs, tvecs = cv2.calibrateCamera(
            [obj], [img], (w, h), matrix, dist, flags=flags
        )
    except cv2.error:
        return None
    matrix = np.asarray(fitted, np.float64)
    dist = np.asarray(coeffs, np.float64)
    f = float(matrix[0, 0])
    if not (0.2 * w < f < 8 * w) or not math.isfinite(float(rms)):
        return None
    cam = CameraModel(
        np.asarray(matrix, np.float64),
        np.asarray(dist, np.float64).reshape(-1)[:5],
        np.asarray(rvecs[0], np.float64).reshape(3),
        np.asarray(tvecs[0], np.float64).reshape(3),
        float(rms),
        (w, h),
    )
    if cam.centre[2] <= 0:
        return None  # a camera under the table: a mirror image or a bad fit
    return cam
