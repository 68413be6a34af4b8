"""The layout's QR fiducials: drawing them (for the renderer) and finding them in a frame.

Each fiducial is a QR code printed at a known place on the layout. zbar reports the four
corners of every code it reads together with the code's orientation, so each code read gives
four layout↔image point pairs; a homography fitted to them maps layout millimetres to frame
pixels even when the camera has been nudged or turned.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt
from pyzbar import pyzbar

from drivers.camera.config import CameraConfig, FiducialSpec

FloatArray = npt.NDArray[np.float64]
U8Array = npt.NDArray[np.uint8]


def qr_modules(code: str) -> U8Array:
    """The code's modules as a 0/255 image, one pixel per module, without the quiet zone."""
    encoder = cv2.QRCodeEncoder.create()
    image = np.asarray(encoder.encode(code), dtype=np.uint8)
    dark = np.argwhere(image < 128)
    (top, left), (bottom, right) = dark.min(axis=0), dark.max(axis=0)
    return image[top : bottom + 1, left : right + 1]


def _order_corners(grey: U8Array, poly: FloatArray, code: str) -> FloatArray | None:
    """The code's corners as top-left, bottom-left, bottom-right, top-right of the code itself.

    zbar gives the four corners in an order that depends on how the code lies in the image, so
    the code's own modules decide: the image inside the polygon is sampled on the module grid
    for each of the eight ways round and compared with the modules the code must have.
    """
    modules = _modules_cached(code)
    n = modules.shape[0]
    cell = 4
    size = n * cell
    target = np.array(
        [[0, 0], [0, size], [size, size], [size, 0]], np.float32
    )  # TL, BL, BR, TR of the sampled grid
    expected = modules < 128
    best: tuple[float, FloatArray] | None = None
    for order in (poly, poly[::-1]):
        for shift in range(4):
            cand = np.roll(order, -shift, axis=0)
            m = cv2.getPerspectiveTransform(cand.astype(np.float32), target)
            warped = cv2.warpPerspective(grey, m, (size, size), flags=cv2.INTER_LINEAR)
            cells = warped.reshape(n, cell, n, cell)[:, 1:3, :, 1:3].mean(axis=(1, 3))
            dark = cells < (float(cells.max()) + float(cells.min())) / 2
            score = float((dark == expected).mean())
            if best is None or score > best[0]:
                best = (score, cand)
    if best is None or best[0] < 0.8:
        return None
    return best[1]


_MODULES: dict[str, U8Array] = {}


def _modules_cached(code: str) -> U8Array:
    if code not in _MODULES:
        _MODULES[code] = qr_modules(code)
    return _MODULES[code]


def fiducial_corners_mm(fid: FiducialSpec) -> FloatArray:
    """Top-left, bottom-left, bottom-right, top-right corners of the code, in layout mm."""
    cx, cy = fid.center_mm
    h = fid.size_mm / 2
    return np.array([[cx - h, cy - h], [cx - h, cy + h], [cx + h, cy + h], [cx + h, cy - h]])


@dataclass(frozen=True)
class LayoutFix:
    """Where the layout is in the frame: the homography from layout mm to frame pixels."""

    homography: FloatArray  # 3x3, layout mm -> image px
    found: tuple[str, ...]  # the codes read
    corners_px: dict[str, FloatArray]  # code -> its 4 corners in the image (TL, BL, BR, TR)
    error_mm: float  # worst distance between a fiducial corner and where the fix puts it

    def to_image(self, points_mm: FloatArray) -> FloatArray:
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 1, 2)
        return np.asarray(cv2.perspectiveTransform(pts, self.homography), np.float64).reshape(-1, 2)


@dataclass(frozen=True)
class FiducialSearch:
    fix: LayoutFix | None
    found: tuple[str, ...]
    unknown: tuple[str, ...]  # QR codes read that are not this table's fiducials
    reason: str  # why there is no fix ("" when there is one)


def locate_layout(frame: U8Array, cfg: CameraConfig) -> FiducialSearch:
    """Read the fiducials in ``frame`` (BGR or grey) and fit the layout homography."""
    grey = np.asarray(
        frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), np.uint8
    )
    by_code = {f.code: f for f in cfg.fiducials}
    symbols = [(s, 1.0) for s in pyzbar.decode(grey, symbols=[pyzbar.ZBarSymbol.QRCODE])]
    seen = {s.data.decode("utf-8", errors="replace") for s, _ in symbols}
    if not set(by_code) <= seen:
        # Small or soft codes: a second look at twice the size finds most of the rest.
        big = cv2.resize(grey, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC)
        symbols += [(s, 0.5) for s in pyzbar.decode(big, symbols=[pyzbar.ZBarSymbol.QRCODE])]
    src: list[FloatArray] = []
    dst: list[FloatArray] = []
    found: list[str] = []
    unknown: list[str] = []
    corners_px: dict[str, FloatArray] = {}
    for sym, scale in symbols:
        text = sym.data.decode("utf-8", errors="replace")
        fid = by_code.get(text)
        if fid is None:
            unknown.append(text)
            continue
        if text in corners_px or len(sym.polygon) != 4:
            continue
        raw = np.array([[p.x, p.y] for p in sym.polygon], np.float64) * scale
        poly = _order_corners(grey, raw, text)
        if poly is None:
            continue
        src.append(fiducial_corners_mm(fid))
        dst.append(poly)
        corners_px[text] = poly
        found.append(text)
    found_t, unknown_t = tuple(found), tuple(unknown)
    need = cfg.min_fiducials
    if len(found) < need:
        reason = f"fiducials not found: read {len(found)} of {len(cfg.fiducials)} (need {need})"
        return FiducialSearch(None, found_t, unknown_t, reason)
    src_a = np.concatenate(src).astype(np.float64)
    dst_a = np.concatenate(dst).astype(np.float64)
    if len(src_a) < 4:
        reason = f"fiducials not found: {len(src_a)} usable points from {len(found)} codes"
        return FiducialSearch(None, found_t, unknown_t, reason)
    h, _ = cv2.findHomography(src_a, dst_a, 0)
    if h is None:
        return FiducialSearch(None, found_t, unknown_t, "fiducials not found: degenerate fit")
    h = np.asarray(h, dtype=np.float64)
    # Residual, measured back in layout millimetres.
    inv = np.linalg.inv(h)
    back = cv2.perspectiveTransform(dst_a.reshape(-1, 1, 2), inv).reshape(-1, 2)
    error = float(np.max(np.linalg.norm(back - src_a, axis=1)))
    fix = LayoutFix(np.asarray(h, np.float64), found_t, corners_px, error)
    return FiducialSearch(fix, found_t, unknown_t, "")


def verify_fix(grey: U8Array, fix: LayoutFix, cfg: CameraConfig) -> int:
    """How many fiducials are still where ``fix`` puts them (a cheap per-frame check that the
    camera has not moved): each code's area is sampled on its module grid and compared with
    the modules it must show."""
    good = 0
    for fid in cfg.fiducials:
        modules = _modules_cached(fid.code)
        n = modules.shape[0]
        cell = 3
        size = n * cell
        corners = fix.to_image(fiducial_corners_mm(fid)).astype(np.float32)
        target = np.array([[0, 0], [0, size], [size, size], [size, 0]], np.float32)
        m = cv2.getPerspectiveTransform(corners, target)
        warped = cv2.warpPerspective(grey, m, (size, size), flags=cv2.INTER_LINEAR)
        cells = warped.reshape(n, cell, n, cell)[:, 1, :, 1]
        lo, hi = float(cells.min()), float(cells.max())
        if hi - lo < 30:
            continue
        dark = cells < (lo + hi) / 2
        if float((dark == (modules < 128)).mean()) >= 0.85:
            good += 1
    return good
