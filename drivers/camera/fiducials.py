"""The layout's QR fiducials: drawing them (for the renderer) and finding them in a frame.

Each fiducial is a QR code printed at a known place on the layout. zbar reads each code with
its four corners in the symbol's own order (see ``qr.py``), so every code read gives four
layout↔image point pairs whatever printer made it and however the camera is turned. From
them come a homography (layout millimetres to frame pixels) and the camera's pose
(``pose.py``: where the camera is, so how each box's stacks show).

Between searches a cheap check says whether the codes are still where the fix puts them: each
code's picture at the time of the fix, resampled to ``_TEMPLATE`` samples a side and smoothed,
is looked for around the same place in the new frame. Motion blur spreads a picture evenly
either way along the motion, so it lowers the match but does not move it: a blurred frame
(camera shake, 5-8 px on the evaluation renderer's hard tier, where zbar reads nothing) keeps
the last good fix, while a camera moved by a couple of millimetres or more does not.
``LayoutTracker`` is the one place that keeps a fix from frame to frame or searches again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import CameraConfig, FiducialSpec
from drivers.camera.pose import CameraModel, Intrinsics, fit_camera
from drivers.camera.qr import read_qr

FloatArray = npt.NDArray[np.float64]
U8Array = npt.NDArray[np.uint8]
F32Array = npt.NDArray[np.float32]

_TEMPLATE = 32  # side, in samples, of a code's picture kept for the per-frame check
_SMOOTH = 1.0  # samples: the Gaussian both pictures are compared through
_REACH = 5  # samples either way the code is looked for around where the fix put it
_MATCH = 0.6  # normalised correlation, at its best alignment, of a code still in view
_SHIFT = 0.5  # samples (1.25 mm of an 80 mm code) a code may seem to move and still count
_FIT_LIMIT_MM = 6.0  # a fix worse than this drops its worst code, if enough are left


def qr_modules(code: str) -> U8Array:
    """The code's modules as a 0/255 image, one pixel per module, without the quiet zone
    (OpenCV's encoder: the renderer prints with it; reading does not depend on it)."""
    encoder = cv2.QRCodeEncoder.create()
    image = np.asarray(encoder.encode(code), dtype=np.uint8)
    dark = np.argwhere(image < 128)
    (top, left), (bottom, right) = dark.min(axis=0), dark.max(axis=0)
    return image[top : bottom + 1, left : right + 1]


def fiducial_corners_mm(fid: FiducialSpec) -> FloatArray:
    """Top-left, bottom-left, bottom-right, top-right corners of the code, in layout mm."""
    cx, cy = fid.center_mm
    h = fid.size_mm / 2
    return np.array([[cx - h, cy - h], [cx - h, cy + h], [cx + h, cy + h], [cx + h, cy - h]])


@dataclass(frozen=True)
class LayoutFix:
    """Where the layout is in the frame: the homography from layout mm to frame pixels, and
    the camera's pose when it could be fitted."""

    homography: FloatArray  # 3x3, layout mm -> image px (the cloth's plane, no distortion)
    found: tuple[str, ...]  # the codes read
    corners_px: dict[str, FloatArray]  # code -> its 4 corners in the image (TL, BL, BR, TR)
    error_mm: float  # worst distance between a fiducial corner and where the fix puts it
    camera: CameraModel | None = None
    # code -> its picture at the fix, for the per-frame check, and where in the frame it was
    # taken: the corners read, or for a code in view that was not read, where the fix puts it
    templates: dict[str, F32Array] = field(default_factory=dict, repr=False)
    template_px: dict[str, FloatArray] = field(default_factory=dict, repr=False)

    def to_image(self, points_mm: FloatArray, height_mm: float = 0.0) -> FloatArray:
        """Frame pixels of layout points (N x 2), on the cloth or ``height_mm`` above it."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        if self.camera is not None:
            xyz = np.column_stack([pts, np.full(len(pts), height_mm)])
            return self.camera.project(xyz)
        return np.asarray(
            cv2.perspectiveTransform(pts.reshape(-1, 1, 2), self.homography), np.float64
        ).reshape(-1, 2)


@dataclass(frozen=True)
class FiducialSearch:
    fix: LayoutFix | None
    found: tuple[str, ...]
    unknown: tuple[str, ...]  # QR codes read that are not this table's fiducials
    reason: str  # why there is no fix ("" when there is one)


def _grey(frame: U8Array) -> U8Array:
    return np.asarray(
        frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), np.uint8
    )


def _sharpened(grey: U8Array, scale: float) -> U8Array:
    """The image enlarged ``scale`` times and sharpened (soft focus, motion blur, codes a
    few pixels a module)."""
    big = (
        grey
        if scale == 1
        else cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    )
    soft = cv2.GaussianBlur(big, (0, 0), 1.5 * scale)
    return np.asarray(cv2.addWeighted(big, 2.0, soft, -1.0, 0), np.uint8)


def _binarised(grey: U8Array, scale: float) -> U8Array:
    """The image enlarged ``scale`` times and thresholded against its own neighbourhood (a
    code blurred by motion or focus keeps its modules' light and dark about their local
    mean, where a global threshold or a sharpening loses them)."""
    big = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    block = int(31 * scale) | 1
    return np.asarray(
        cv2.adaptiveThreshold(
            big, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, block, 0
        ),
        np.uint8,
    )


def locate_layout(frame: U8Array, cfg: CameraConfig) -> FiducialSearch:
    """Read the fiducials in ``frame`` (BGR or grey) and fit the layout and the camera."""
    grey = _grey(frame)
    by_code = {f.code: f for f in cfg.fiducials}
    corners_px: dict[str, FloatArray] = {}
    unknown: list[str] = []

    def take_all(image: U8Array, scale: float, offset: tuple[int, int] = (0, 0)) -> None:
        for sym in read_qr(image):
            if sym.text not in by_code:
                if sym.text not in unknown:
                    unknown.append(sym.text)
                continue
            if sym.text not in corners_px:
                # zbar gives corners on pixel boundaries; OpenCV counts from pixel centres.
                corners_px[sym.text] = (sym.corners / scale + np.array(offset)) - 0.5

    def look_where_missing(binarise: bool = False) -> None:
        # The codes still missing (small, far, soft): where the ones read put them, enlarged.
        rough = _fit([c for c in by_code if c in corners_px], corners_px, by_code)
        if rough is None:
            return
        for fid in cfg.fiducials:
            if fid.code in corners_px:
                continue
            where = cv2.perspectiveTransform(
                fiducial_corners_mm(fid).reshape(-1, 1, 2), rough[0]
            ).reshape(-1, 2)
            # One code alone places the others only roughly: a wider margin then.
            spread = 0.6 if len(corners_px) > 1 else 1.5
            pad = spread * float(np.ptp(where, axis=0).max()) + 8
            x0, y0 = np.floor(where.min(axis=0) - pad).astype(int)
            x1, y1 = np.ceil(where.max(axis=0) + pad).astype(int)
            x0, y0 = max(x0, 0), max(y0, 0)
            x1, y1 = min(x1, grey.shape[1]), min(y1, grey.shape[0])
            if x1 - x0 >= 8 and y1 - y0 >= 8:
                crop = grey[y0:y1, x0:x1]
                take_all(_sharpened(crop, 2.5), 2.5, (x0, y0))
                if binarise and fid.code not in corners_px:
                    take_all(_binarised(crop, 2.0), 2.0, (x0, y0))

    take_all(grey, 1.0)
    if not corners_px:
        take_all(_sharpened(grey, 1.0), 1.0)
    if len(corners_px) < len(by_code):
        look_where_missing()
    if len(corners_px) < cfg.min_fiducials:
        take_all(_sharpened(grey, 2.0), 2.0)
        look_where_missing()
    if len(corners_px) < cfg.min_fiducials:
        # Blurred codes (a fast pan, soft focus): the frame thresholded locally.
        take_all(_binarised(grey, 2.0), 2.0)
        look_where_missing(binarise=True)
    return fit_layout(grey, corners_px, cfg, tuple(unknown))


def fit_layout(
    grey: U8Array,
    corners_px: dict[str, FloatArray],
    cfg: CameraConfig,
    unknown: tuple[str, ...] = (),
) -> FiducialSearch:
    """The fix from the corners of the codes read (code -> TL, BL, BR, TR in the image), with
    the codes' pictures in ``grey`` for the per-frame check."""
    by_code = {f.code: f for f in cfg.fiducials}
    codes = [f.code for f in cfg.fiducials if f.code in corners_px]
    need = cfg.min_fiducials
    if len(codes) < need:
        reason = f"fiducials not found: read {len(codes)} of {len(cfg.fiducials)} (need {need})"
        return FiducialSearch(None, tuple(codes), unknown, reason)
    fitted = _fit(codes, corners_px, by_code)
    while fitted is not None and fitted[1] > _FIT_LIMIT_MM and len(codes) > need:
        # One code read in the wrong place (a reflection, a code stuck on top): leave out the
        # one whose absence fits the rest best.
        trials = [
            (
                [c for c in codes if c != drop],
                _fit([c for c in codes if c != drop], corners_px, by_code),
            )
            for drop in codes
        ]
        trials = [(c, f) for c, f in trials if f is not None]
        if not trials:
            break
        codes, fitted = min(trials, key=lambda t: t[1][1] if t[1] is not None else np.inf)
    if fitted is None:
        return FiducialSearch(None, tuple(codes), unknown, "fiducials not found: degenerate fit")
    h, error = fitted
    src = np.concatenate([fiducial_corners_mm(by_code[c]) for c in codes])
    dst = np.concatenate([corners_px[c] for c in codes])
    size = (grey.shape[1], grey.shape[0])
    known = None
    if cfg.learned is not None and cfg.learned.focal_px is not None:
        known = Intrinsics(cfg.learned.focal_px, cfg.learned.k1, cfg.learned.width)
    camera = fit_camera(src, dst, size, known)
    if camera is None and known is None:
        camera = fit_camera(src, dst, size, Intrinsics(float(size[0]), 0.0, size[0]))
    if camera is not None:
        error = min(error, _camera_error_mm(camera, src, dst, h))
    kept = {c: corners_px[c] for c in codes}
    fix = LayoutFix(h, tuple(codes), kept, error, camera)
    # The codes not read are watched too, where the fix puts them: the per-frame check asks
    # whether the picture there has stayed put, which holds for them as for the others, and a
    # fix from two codes read is then not lost as soon as a hand covers one of them.
    places = {
        f.code: kept[f.code] if f.code in kept else fix.to_image(fiducial_corners_mm(f))
        for f in cfg.fiducials
    }
    templates = {c: t for c, px in places.items() if (t := _template(grey, px)) is not None}
    fix = replace(fix, templates=templates, template_px={c: places[c] for c in templates})
    return FiducialSearch(fix, tuple(codes), unknown, "")


def _fit(
    codes: list[str], corners_px: dict[str, FloatArray], by_code: dict[str, FiducialSpec]
) -> tuple[FloatArray, float] | None:
    if not codes:
        return None
    src = np.concatenate([fiducial_corners_mm(by_code[c]) for c in codes]).astype(np.float64)
    dst = np.concatenate([corners_px[c] for c in codes]).astype(np.float64)
    h, _ = cv2.findHomography(src, dst, 0)
    if h is None or abs(float(np.linalg.det(h))) < 1e-12:
        return None
    hom = np.asarray(h, np.float64)
    back = cv2.perspectiveTransform(dst.reshape(-1, 1, 2), np.linalg.inv(hom)).reshape(-1, 2)
    return hom, float(np.max(np.linalg.norm(back - src, axis=1)))


def _camera_error_mm(camera: CameraModel, src: FloatArray, dst: FloatArray, h: FloatArray) -> float:
    """The camera fit's worst corner error, in layout mm (pixels over the local scale)."""
    xyz = np.column_stack([src, np.zeros(len(src))])
    err_px = np.linalg.norm(camera.project(xyz) - dst, axis=1)
    step = (src + np.array([1.0, 0.0])).reshape(-1, 1, 2)
    ahead = cv2.perspectiveTransform(step, h).reshape(-1, 2)
    here = cv2.perspectiveTransform(src.reshape(-1, 1, 2), h).reshape(-1, 2)
    px_per_mm = np.maximum(np.linalg.norm(ahead - here, axis=1), 1e-6)
    return float(np.max(err_px / px_per_mm))


def _template(grey: U8Array, corners: FloatArray) -> F32Array | None:
    """The code's area resampled to ``_TEMPLATE`` samples a side (smoothed to that scale)."""
    side = float(np.mean(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)))
    target = (
        np.array([[0, 0], [0, _TEMPLATE], [_TEMPLATE, _TEMPLATE], [_TEMPLATE, 0]], np.float32) - 0.5
    )
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), target)
    sigma = max(0.0, 0.5 * side / _TEMPLATE - 0.5)
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 8
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 8
    h, w = grey.shape
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        return None
    crop = grey[y0:y1, x0:x1].astype(np.float32)
    if sigma > 0.3:
        crop = np.asarray(cv2.GaussianBlur(crop, (0, 0), sigma), np.float32)
    shift = np.array([[1, 0, x0], [0, 1, y0], [0, 0, 1]], np.float64)
    warped = np.asarray(
        cv2.warpPerspective(crop, m @ shift, (_TEMPLATE, _TEMPLATE), flags=cv2.INTER_LINEAR),
        np.float32,
    )
    if float(warped.std()) < 8:
        return None  # a flat patch: nothing to compare
    return warped


def _alignment(template: F32Array, now: F32Array) -> tuple[float, float]:
    """How alike ``now`` is to ``template`` at their best alignment (normalised correlation)
    and how far, in samples, it is from where it was.

    Plain correlation, not phase correlation: a symmetric blur (the camera's shake during the
    exposure) leaves the correlation's peak where it was, whereas phase correlation weighs
    every frequency alike, among them those the blur's line kernel turns over, and under
    5-8 px of blur it both moved still codes by up to a sample and hid real moves of 2-4 mm
    (measured on the tuning frames)."""
    a = np.asarray(cv2.GaussianBlur(template, (0, 0), _SMOOTH), np.float32)
    b = np.asarray(cv2.GaussianBlur(now, (0, 0), _SMOOTH), np.float32)
    r = np.asarray(
        cv2.matchTemplate(b, a[_REACH:-_REACH, _REACH:-_REACH], cv2.TM_CCOEFF_NORMED), np.float64
    )
    if not np.all(np.isfinite(r)):
        return 0.0, math.inf
    py, px = np.unravel_index(int(np.argmax(r)), r.shape)
    peak = float(r[py, px])

    def vertex(before: float, at: float, after: float) -> float:
        # the peak of the parabola through three samples, from the middle one
        curve = before - 2 * at + after
        return 0.0 if curve >= 0 else 0.5 * (before - after) / curve

    edge = 2 * _REACH
    if not (0 < px < edge and 0 < py < edge):
        return peak, math.inf  # best at the edge of the search: moved further than it reaches
    dx = px - _REACH + vertex(r[py, px - 1], peak, r[py, px + 1])
    dy = py - _REACH + vertex(r[py - 1, px], peak, r[py + 1, px])
    return peak, math.hypot(dx, dy)


def verify_fix(grey: U8Array, fix: LayoutFix, cfg: CameraConfig) -> int:
    """How many fiducials are still where ``fix`` puts them (a cheap per-frame check that the
    camera has not moved): each code's picture now is looked for around its place at the fix;
    it counts if it is alike there (``_MATCH``) and has moved by no more than about a
    millimetre (``_SHIFT``; on the tuning frames still codes, blurred or not, seemed to move
    by 0.17 samples at most, codes moved by 2 mm by 0.53 at least). Blur makes it less alike
    but moves nothing, so a blurred frame keeps the fix; a knock of the camera moves it, so it
    does not; a code under a hand is not alike."""
    good = 0
    for code, template in fix.templates.items():
        now = _template(grey, fix.template_px[code])
        if now is None:
            continue
        alike, moved = _alignment(template, now)
        if alike >= _MATCH and moved <= _SHIFT:
            good += 1
    return good


class LayoutTracker:
    """The layout fix carried from frame to frame of one camera, the one place that decides
    whether to keep it or search again (the table service, ``chips score`` and ``chips
    detect`` all go through it).

    A fix is kept while ``verify_fix`` finds at least ``min_fiducials`` of its codes where it
    put them, so a fixed camera keeps its layout through frames too blurred to read; it is
    dropped as soon as they are not (the camera knocked, the codes covered), and the layout is
    searched for afresh in that frame.

    While the camera stays still the fix is refined: the layout is searched for again at the
    1st, 2nd, 4th, 8th ... frame after a fresh search, and the fix is refitted to each
    code's corners taken over the searches that read it (their median). One frame's corners
    are noisy: a fix from two codes of a blurred frame placed the far corners 2-4 px off, and
    one kept from a single frame for a whole session misread boxes another frame's fix read
    right. A search that fails (a blurred
    frame) leaves the fix as it was. Every ``relocate_every`` frames the corners start again
    from a fresh search, so that a slow drift of the camera is followed."""

    def __init__(self, cfg: CameraConfig) -> None:
        self.cfg = cfg
        self.fix: LayoutFix | None = None
        self.reason = ""  # why there is no fix, from the last search
        self._since = 0  # frames since the last fresh search
        self._size: tuple[int, int] | None = None  # the frame size the fix was found at
        self._seen: dict[str, list[FloatArray]] = {}  # code -> its corners, search by search

    def update(self, frame: U8Array) -> LayoutFix | None:
        """The fix for ``frame`` (BGR or grey): the kept one (perhaps refined), or a new
        search's (None when the layout is not found; ``reason`` says why)."""
        grey = _grey(frame)
        size = (grey.shape[1], grey.shape[0])
        if self.fix is not None and size == self._size:
            self._since += 1
            if verify_fix(grey, self.fix, self.cfg) >= self.cfg.min_fiducials:
                if self._since >= self.cfg.relocate_every:
                    search = locate_layout(grey, self.cfg)
                    if search.fix is not None:
                        self._start(search.fix)
                    self._since = 0
                elif self._refine_now():
                    self._refine(grey, locate_layout(grey, self.cfg).fix)
                return self.fix
        search = locate_layout(grey, self.cfg)
        self.reason, self._size = search.reason, size
        self._since = 0
        if search.fix is None:
            self.drop()
        else:
            self._start(search.fix)
        return self.fix

    def _refine_now(self) -> bool:
        # Not at every frame while the fix lacks codes: a code this camera never reads (a far
        # one under 2 px a module) would have it search every frame, at a quarter of the
        # frame rate (12 frames/s instead of 53 on a still mild frame read from 2 codes).
        return (self._since & (self._since - 1)) == 0  # a power of two

    def _start(self, fix: LayoutFix) -> None:
        self.fix = fix
        self._seen = {c: [fix.corners_px[c]] for c in fix.found}

    def _refine(self, grey: U8Array, found: LayoutFix | None) -> None:
        if found is None or self.fix is None:
            return
        for code in found.found:
            self._seen.setdefault(code, []).append(found.corners_px[code])
        # the median, corner by corner: one search's stray corner does not move the fix
        typical = {c: np.median(np.stack(seen), axis=0) for c, seen in self._seen.items()}
        refit = fit_layout(grey, typical, self.cfg).fix
        if refit is not None and len(refit.found) >= len(self.fix.found):
            self.fix = refit

    def search_next(self) -> None:
        """Search for the layout afresh at the next frame if the fix still verifies (it does
        but the boxes read badly)."""
        self._since = max(self._since, self.cfg.relocate_every - 1)

    def drop(self) -> None:
        """Forget the fix (a fault, another camera): the next frame is searched."""
        self.fix = None
        self._since = 0
        self._seen = {}
