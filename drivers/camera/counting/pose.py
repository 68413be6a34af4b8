"""The counting camera's pose and focal length from the codes it sees.

Each ``BOX n`` card stands upright in its box with the code's centre at half the card's height;
each ``RAIL`` code is on the rail's face at its listed azimuth, centred at half the rail's
height. The middles of a code's top and bottom edges and its centre are points whose place on
the table is known whichever way the card is turned, so every code gives three. The focal
length is the one at which a pinhole camera (principal point at the picture's centre) places
those points best (``cv2.solvePnP`` for each focal length tried); the pose follows.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, cast

import cv2
import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Pose:
    focal: float
    cx: float
    cy: float
    rvec: tuple[float, float, float]
    tvec: tuple[float, float, float]
    rms_px: float
    k1: float = 0.0  # radial distortion, OpenCV's model

    @property
    def dist(self) -> F64:
        return np.array([self.k1, 0.0, 0.0, 0.0, 0.0])

    @property
    def K(self) -> F64:
        return np.array([[self.focal, 0, self.cx], [0, self.focal, self.cy], [0, 0, 1]], np.float64)

    @property
    def R(self) -> F64:
        return cast(F64, cv2.Rodrigues(np.asarray(self.rvec, float))[0])

    @property
    def centre_mm(self) -> F64:
        return cast(F64, -self.R.T @ np.asarray(self.tvec, float))

    def project(self, points: F64) -> F64:
        pts = np.asarray(points, float).reshape(-1, 1, 3)
        proj, _ = cv2.projectPoints(
            pts, np.asarray(self.rvec, float), np.asarray(self.tvec, float), self.K, self.dist
        )
        return cast(F64, proj.reshape(-1, 2))

    def on_cloth(self, u: float, v: float, z: float = 0.0) -> F64 | None:
        """The point at height ``z`` seen at pixel (u, v), or None (at or above the horizon)."""
        x, y = cv2.undistortPoints(np.array([[[u, v]]], float), self.K, self.dist).ravel()
        ray = self.R.T @ np.array([x, y, 1.0])
        c = self.centre_mm
        if ray[2] >= -1e-9 and c[2] > z:
            return None
        t = (z - c[2]) / ray[2]
        return c + t * ray if t > 0 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "focal": self.focal,
            "cx": self.cx,
            "cy": self.cy,
            "rvec": list(self.rvec),
            "tvec": list(self.tvec),
            "rms_px": self.rms_px,
            "k1": self.k1,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Pose:
        return cls(
            float(d["focal"]),
            float(d["cx"]),
            float(d["cy"]),
            tuple(float(x) for x in d["rvec"]),  # type: ignore[arg-type]
            tuple(float(x) for x in d["tvec"]),  # type: ignore[arg-type]
            float(d["rms_px"]),
            float(d.get("k1", 0.0)),
        )


def code_points(corners: F64) -> F64:
    """Image points: the code's centre, its top edge's middle, its bottom edge's middle.

    ``corners``: top-left, bottom-left, bottom-right, top-right (zbar's symbol order)."""
    tl, bl, br, tr = np.asarray(corners, float)
    return np.array([(tl + bl + br + tr) / 4, (tl + tr) / 2, (bl + br) / 2])


TRAY_PENALTY = 0.05  # px of placing error a millimetre off the tray's edge is worth
K1_TRIED = (0.0, -0.05, -0.1, -0.15)


def _solve(
    obj: F64, img: F64, size: tuple[int, int], focal: float, k1: float
) -> tuple[float, float, F64, F64]:
    """(score, rms px, rvec, tvec) at this focal length and distortion; the score adds how
    far the lens stands off the tray's front edge (y = 0), where the mount puts it."""
    w, h = size
    K = np.array([[focal, 0, w / 2], [0, focal, h / 2], [0, 0, 1]], float)
    dist = np.array([k1, 0, 0, 0, 0], float)
    ok, rvec, tvec = cv2.solvePnP(obj, img, K, dist, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        return math.inf, math.inf, np.zeros(3, np.float64), np.zeros(3, np.float64)
    proj, _ = cv2.projectPoints(obj, rvec, tvec, K, dist)
    err = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - img) ** 2, axis=1))))
    R = cv2.Rodrigues(rvec)[0]
    if np.any((R @ obj.T + tvec).T[:, 2] <= 0):
        return math.inf, err, cast(F64, rvec.ravel()), cast(F64, tvec.ravel())
    centre = -R.T @ tvec.ravel()
    return (
        err + TRAY_PENALTY * abs(float(centre[1])),
        err,
        cast(F64, rvec.ravel()),
        cast(F64, tvec.ravel()),
    )


def fit_pose(obj: F64, img: F64, size: tuple[int, int]) -> Pose | None:
    """The focal length, distortion and pose that place ``obj`` (world mm) at ``img`` (px)
    best, the lens kept near the tray's edge."""
    if len(obj) < 6:
        return None
    w, h = size
    best: tuple[float, float, float] = (math.inf, 0.0, 0.0)
    for k1 in K1_TRIED if len(obj) >= 9 else (0.0,):
        for f in np.geomspace(0.3 * w, 4.0 * w, 40):
            score = _solve(obj, img, size, float(f), k1)[0]
            if score < best[0]:
                best = (score, float(f), k1)
    if not math.isfinite(best[0]):
        return None
    k1 = best[2]
    lo, hi = best[1] / 1.07, best[1] * 1.07
    for _ in range(25):  # golden-section search about the best
        a = hi - (hi - lo) / 1.618
        b = lo + (hi - lo) / 1.618
        if _solve(obj, img, size, a, k1)[0] < _solve(obj, img, size, b, k1)[0]:
            hi = b
        else:
            lo = a
    f = (lo + hi) / 2
    _, err, r, t = _solve(obj, img, size, f, k1)
    return Pose(f, w / 2, h / 2, tuple(r), tuple(t), err, k1)


def box_code_world(centre_mm: tuple[float, float], qr_height_mm: float, qr_mm: float) -> F64:
    x, y = centre_mm
    return np.array(
        [[x, y, qr_height_mm], [x, y, qr_height_mm + qr_mm / 2], [x, y, qr_height_mm - qr_mm / 2]]
    )


def rail_code_world(rail: dict[str, Any], azimuth_deg: float, size_mm: float) -> F64:
    ax, ay = rail["arc_center_mm"]
    r = float(rail["radius_mm"])
    z = float(rail["height_mm"]) / 2
    a = math.radians(azimuth_deg)
    x, y = ax + r * math.sin(a), ay + r * math.cos(a)
    return np.array([[x, y, z], [x, y, z + size_mm / 2], [x, y, z - size_mm / 2]])


def solve_table_pose(
    size: tuple[int, int],
    box_codes: dict[int, F64],
    rail_codes: list[F64],
    table: dict[str, Any],
    qr_height_mm: float,
    qr_mm: float,
) -> Pose | None:
    """The pose from the boxes' codes and the RAIL codes (which RAIL is which: the assignment,
    in the rail's order left to right, that places every point best)."""
    centres = {int(b["box"]): tuple(b["center_mm"]) for b in table["boxes"]}
    obj = [box_code_world(centres[b], qr_height_mm, qr_mm) for b in box_codes if b in centres]
    img = [code_points(c) for b, c in box_codes.items() if b in centres]
    rail = table.get("rail")
    marks = sorted(rail["marks"], key=lambda m: m["azimuth_deg"]) if rail else []
    seen = sorted(rail_codes, key=lambda c: float(np.mean(c[:, 0])))
    if not seen or len(seen) > len(marks):
        return fit_pose(np.concatenate(obj), np.concatenate(img), size) if obj else None
    best: Pose | None = None
    for pick in itertools.combinations(marks, len(seen)):
        o = obj + [
            rail_code_world(cast(dict[str, Any], rail), m["azimuth_deg"], m["size_mm"])
            for m in pick
        ]
        i = img + [code_points(c) for c in seen]
        pose = fit_pose(np.concatenate(o), np.concatenate(i), size)
        if pose is not None and (best is None or pose.rms_px < best.rms_px):
            best = pose
    return best
