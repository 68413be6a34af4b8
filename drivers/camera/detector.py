"""Frames in, per-box wagers out.

For each betting box the detector samples a small image of the cloth round the box, turned so
the camera is straight "down" in it (``geometry.py``: the stacks of that box lean straight up
in it, by a step per chip that follows from the camera's pose). Colours are balanced against
the layout's printed white (the fiducials' light modules, in every frame) and their brightness
is taken relative to the cloth beside the box, so warm or cool, bright or dim, even or uneven
light all read alike; colours are then told apart mostly by their chromaticity, so a chip's
shaded side is still its own colour.

In each box: whatever is not cloth is found by its colour against the cloth beside the box;
what lies beyond where this box's chips could show (a hand, a sleeve, a cash paddle) makes the
box unsure. Each stack's bottom (the near rim of its bottom chip) and top (the far rim of its
top chip's face) give its height through the camera's pose; the face's near rim, found where
the shaded sides give way to the lit face, gives it a second time. Each chip's side band is
read between the rims the height puts it at, by the median of its pixels, so the edge spots
(a minority of any band) do not make another chip; the top face is read clear of its inlay.
The confidence is the least of the cross-checks: the two heights agree and fall on a whole
number of chips, every band's colour is clearly one chip's, the top band is the face's chip,
the stack is as wide as a chip, and the box looks the same as in the previous frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import CameraConfig
from drivers.camera.fiducials import LayoutFix
from drivers.camera.geometry import BoxView, box_views

U8Array = npt.NDArray[np.uint8]
F32Array = npt.NDArray[np.float32]
FloatArray = npt.NDArray[np.float64]

SIDE_SHADE = 0.7  # a chip's side band against its face, when not learned
PAPER_WHITE = 0.92  # the printed white's reflectance, against which colours are given


@dataclass(frozen=True)
class BoxReading:
    box: int
    amount: Decimal
    chips: dict[int, int]  # value -> count
    confidence: float  # 0..1
    stacks: tuple[tuple[int, ...], ...] = ()  # what was read, bottom chip first
    note: str = ""  # why confidence is low ("hand over the box", ...)

    def key(self) -> tuple[Decimal, tuple[tuple[int, int], ...]]:
        return (self.amount, tuple(sorted(self.chips.items())))


@dataclass(frozen=True)
class FrameReading:
    boxes: dict[int, BoxReading]
    fix: LayoutFix


@dataclass(frozen=True)
class _ChipModel:
    value: int
    face: FloatArray  # BGR reflectance (printed white = PAPER_WHITE)
    side: FloatArray


def _chroma(bgr: FloatArray) -> FloatArray:
    s = bgr.sum(axis=-1, keepdims=True) + 0.03
    return np.asarray(bgr / s, np.float64)


def _lum(bgr: FloatArray) -> FloatArray:
    return np.asarray(bgr @ np.array([0.114, 0.587, 0.299]), np.float64)


@dataclass
class ChipDetector:
    cfg: CameraConfig
    _views: list[BoxView] = field(default_factory=list, init=False, repr=False)
    _views_for: tuple[int, tuple[int, int]] | None = field(default=None, init=False, repr=False)
    _models: list[_ChipModel] = field(default_factory=list, init=False, repr=False)
    _felt: FloatArray = field(init=False, repr=False)
    _print: FloatArray = field(init=False, repr=False)
    _print_c: FloatArray = field(init=False, repr=False)
    _previous: dict[int, F32Array] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        cfg = self.cfg
        learned = {c.value: c for c in cfg.learned.chips} if cfg.learned else {}
        for chip in cfg.chips:
            face = np.array(chip.colour[::-1], np.float64) / 255.0
            side = face * SIDE_SHADE
            if chip.value in learned:
                face = np.array(learned[chip.value].face[::-1], np.float64) / 255.0 * PAPER_WHITE
                side = np.array(learned[chip.value].side[::-1], np.float64) / 255.0 * PAPER_WHITE
            self._models.append(_ChipModel(chip.value, face, side))
        self._felt = np.array(cfg.layout.felt[::-1], np.float64) / 255.0
        self._print = np.array(cfg.layout.print_colour[::-1], np.float64) / 255.0
        self._print_c = _chroma(self._print)

    # -- per frame -------------------------------------------------------------------------

    def read(self, frame: U8Array, fix: LayoutFix) -> FrameReading:
        size = (frame.shape[1], frame.shape[0])
        if self._views_for != (id(fix), size):
            self._views = box_views(self.cfg, fix, size)
            self._views_for = (id(fix), size)
            self._previous = {}
        white = _printed_white(frame, fix)
        boxes = {}
        for view in self._views:
            patch = cv2.remap(frame, view.maps[0], view.maps[1], cv2.INTER_LINEAR)
            refl = np.asarray(patch, np.float32) / white.astype(np.float32) * PAPER_WHITE
            boxes[view.area.box] = self._read_box(refl, view)
        return FrameReading(boxes, fix)

    def _read_box(self, refl: F32Array, view: BoxView) -> BoxReading:
        box = view.area.box

        def unsure(note: str) -> BoxReading:
            return BoxReading(box, Decimal(0), {}, 0.0, (), note)

        if not view.inside[view.visible].size or view.visible[view.inside].mean() < 0.98:
            return unsure("box not wholly in view")
        ref = refl[view.felt_ref].astype(np.float64)
        if len(ref) < 50:
            return unsure("no cloth beside the box in view")
        felt_obs = np.median(ref, axis=0)
        chroma = _chroma(cv2.blur(refl, (3, 3)).astype(np.float64))
        felt_c = _chroma(felt_obs)
        cdist = np.linalg.norm(chroma - felt_c, axis=-1)
        lum = _lum(refl.astype(np.float64))
        felt_l = float(_lum(felt_obs))
        if felt_l < 0.01:
            return unsure("too dark to read")
        rel = lum / felt_l
        felt_like = (cdist[view.felt_ref] < 0.06) & (rel[view.felt_ref] < 2.0)
        if felt_like.mean() < 0.6:
            return unsure("cloth beside the box is covered")
        scale = felt_l / float(_lum(self._felt))  # the light here against the config's
        fg = (cdist > 0.07) | (rel > 2.2)
        # The printed lines and numbers (the print's colour, or blurred into the cloth's), on
        # the ring or outside the reach.
        printed = _segment_distance(chroma, felt_c, self._print_c) < 0.04
        fg &= ~(printed & (view.on_line | view.outside))
        fg &= ~(view.on_line & (cdist < 0.16))
        fg_u8 = fg.astype(np.uint8)
        k = max(3, round(2.0 * view.ppm) | 1)
        fg_u8 = cv2.morphologyEx(fg_u8, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
        stray = fg_u8.astype(bool) & view.outside
        if stray.sum() > 30 * view.ppm**2:
            return unsure("something over the box besides chips")
        fg_u8[~view.inside] = 0
        # How far each pixel is from the cloth (or the printed ring, where it is printed).
        bgdiff = np.linalg.norm(refl - felt_obs.astype(np.float32), axis=-1).astype(np.float64)
        print_obs = self._print * (felt_obs / np.maximum(self._felt, 1e-3))
        on_ring = refl[view.on_line].astype(np.float64)
        bgdiff[view.on_line] = np.minimum(
            bgdiff[view.on_line], _segment_distance(on_ring, felt_obs, print_obs)
        )
        n_cc, cc, stats, _ = cv2.connectedComponentsWithStats(fg_u8, connectivity=8)
        ppm = view.ppm
        r_mm = self.cfg.layout.chip_diameter_mm / 2
        d_px = 2 * r_mm * ppm
        stacks: list[tuple[int, ...]] = []
        confidence = 1.0
        notes: list[str] = []
        for i in range(1, n_cc):
            x, y, w, h, area = (int(v) for v in stats[i])
            if area < 0.35 * math.pi * (r_mm * ppm) ** 2:
                if area > 0.08 * math.pi * (r_mm * ppm) ** 2:
                    confidence = min(confidence, 0.5)
                    notes.append("a small thing in the box")
                continue
            columns = _split_columns(cc[y : y + h, x : x + w] == i, d_px)
            if columns is None:
                return unsure("something other than chips in the box")
            for ca, cb in columns:
                mask = cc == i
                stack, conf, note = self._read_stack(refl, bgdiff, mask, view, x + ca, x + cb, scale)
                if not stack:
                    return unsure(note or "a stack could not be read")
                stacks.append(stack)
                if conf < confidence:
                    confidence = conf
                if note:
                    notes.append(note)
        chips: dict[int, int] = {}
        for stack in stacks:
            for v in stack:
                chips[v] = chips.get(v, 0) + 1
        amount = sum((Decimal(v) * n for v, n in chips.items()), Decimal(0))
        return BoxReading(
            box,
            amount,
            dict(sorted(chips.items())),
            float(np.clip(confidence, 0.0, 1.0)),
            tuple(stacks),
            "; ".join(dict.fromkeys(notes)),
        )

    def _read_stack(
        self,
        refl: F32Array,
        bgdiff: FloatArray,
        mask: npt.NDArray[np.bool_],
        view: BoxView,
        xa: int,
        xb: int,
        scale: float,
    ) -> tuple[tuple[int, ...], float, str]:
        lay = self.cfg.layout
        ppm = view.ppm
        r_mm = lay.chip_diameter_mm / 2
        chip_h = lay.chip_height_mm
        uc = (xa + xb - 1) / 2
        half = max(1, round(0.3 * r_mm * ppm))
        c0, c1 = max(0, round(uc) - half), min(mask.shape[1], round(uc) + half + 1)
        occupancy = mask[:, c0:c1].mean(axis=1)
        rows = np.flatnonzero(occupancy > 0.5)
        if rows.size == 0:
            return (), 0.0, "a stack could not be read"
        # Edges where the colour is half way from the cloth's to the chip's (a blur mixes the
        # two in proportion, so the half-way point stays where the edge is), in each column
        # across the middle of the stack, put back on the centre line along the rim's curve;
        # the median leaves out columns where the printed ring or a neighbour got in the way.
        r_px = r_mm * ppm
        bottoms, tops = [], []
        for col in range(c0, c1):
            du = col - uc
            lift = r_px - math.sqrt(max(r_px**2 - du**2, 0.0))
            prof = bgdiff[:, col]
            bottoms.append(_crossing(prof, int(rows[-1] - lift), +1) + lift)
            tops.append(_crossing(prof, int(rows[0] + lift), -1) - lift)
        bottom = float(np.median(bottoms))
        base_v = bottom - r_px
        base = view.layout_of(uc, base_v)
        # The face is larger than the foot by the parallax's enlargement: a first height
        # from the centre column, then the top rim's curve at that size.
        top = float(np.median(tops))
        z_top = view.height_at_row(base, top, -1, r_mm)
        k = view.height_mm / max(view.height_mm - z_top, 1.0)
        tops = []
        for col in range(c0, c1):
            du = col - uc
            lift = r_px * k - math.sqrt(max((r_px * k) ** 2 - du**2, 0.0))
            tops.append(_crossing(bgdiff[:, col], int(rows[0] + lift), -1) - lift)
        top = float(np.median(tops))
        z_top = view.height_at_row(base, top, -1, r_mm)
        exact = z_top / chip_h
        n = round(exact)
        if n < 1:
            if exact < 0.4:
                return (), 0.0, "a flat thing in the box"
            n = 1
        if n > lay.max_stack:
            return (), 0.0, f"a stack taller than {lay.max_stack} chips"
        off = abs(exact - n)
        conf = float(np.clip(1.0 - (off - 0.2) / 0.25, 0.0, 1.0))
        note = "" if conf >= 0.8 else "stack height between two counts"
        # The width of the stack's foot: a chip's, or something else.
        width = (xb - xa) / ppm
        if abs(width - 2 * r_mm) > 0.3 * 2 * r_mm:
            conf = min(conf, 0.3)
            note = "stack not as wide as a chip"
        values: list[int] = []
        lum_scale = scale
        for i in range(n):
            lo = view.rim_row(base, (i + 1) * chip_h, +1, r_mm)
            hi = view.rim_row(base, i * chip_h, +1, r_mm)
            pixels = _band_pixels(refl, uc, lo, hi, r_mm * ppm)
            if pixels is None:
                return (), 0.0, "a chip's band is out of view"
            value, c = self._classify(pixels, lum_scale, side=True)
            values.append(value)
            if c < conf:
                conf, note = c, "a chip's colour is unclear"
        # The top face, clear of the inlay in its middle and of the spots at its rim.
        far = view.rim_row(base, n * chip_h, -1, r_mm)
        near = view.rim_row(base, n * chip_h, +1, r_mm)
        face_px = _face_pixels(refl, uc, (far + near) / 2, (near - far) / 2)
        if face_px is not None:
            face_value, fc = self._classify(face_px, lum_scale, side=False)
            if face_value != values[-1]:
                conf, note = min(conf, 0.2), "top chip's side and face disagree"
            elif fc < conf:
                conf, note = fc, "the top face's colour is unclear"
        return tuple(values), conf, note

    def _classify(self, pixels: FloatArray, scale: float, *, side: bool) -> tuple[int, float]:
        """The chip whose face (or side) colour the pixels' median is nearest, and how clearly."""
        med = np.median(pixels, axis=0) / max(scale, 1e-6)
        c = _chroma(med)
        lum = float(_lum(med))
        dists = []
        for m in self._models:
            ref = m.side if side else m.face
            rc = _chroma(ref)
            rl = float(_lum(ref))
            d_c = float(np.linalg.norm(c - rc))
            d_l = abs(math.log((lum + 0.02) / (rl + 0.02)))
            # Shading changes lightness a lot and chromaticity little.
            dists.append(d_c + 0.08 * max(0.0, d_l - 0.5))
        order = np.argsort(dists)
        best, second = dists[order[0]], dists[order[1]]
        margin = (second - best) / max(second, 1e-6)
        return self._models[int(order[0])].value, float(np.clip(margin / 0.3, 0.0, 1.0))


def _printed_white(frame: U8Array, fix: LayoutFix) -> FloatArray:
    """The printed white as the camera sees it now: the light modules of the fiducials."""
    samples = []
    h, w = frame.shape[:2]
    for corners in fix.corners_px.values():
        x0, y0 = np.floor(corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 - x0 < 4 or y1 - y0 < 4:
            continue
        crop = frame[y0:y1, x0:x1].reshape(-1, 3).astype(np.float64)
        grey = crop.sum(axis=1)
        light = crop[grey >= np.percentile(grey, 80)]
        samples.append(np.median(light, axis=0))
    if not samples:
        return np.array([235.0, 235.0, 235.0])
    return np.maximum(np.median(np.array(samples), axis=0), 8.0)


def _segment_distance(points: FloatArray, a: FloatArray, b: FloatArray) -> FloatArray:
    """Distance of each point (..., 3) from the segment a-b."""
    ab = b - a
    t = np.clip(((points - a) @ ab) / max(float(ab @ ab), 1e-9), 0.0, 1.0)
    return np.asarray(np.linalg.norm(points - (a + t[..., None] * ab), axis=-1), np.float64)


def _crossing(profile: FloatArray, start: int, direction: int) -> float:
    """Sub-pixel row where ``profile`` (a difference from the cloth) is half way between the
    chip's just inside ``start`` and the cloth's beyond it, walking out in ``direction``."""
    n = len(profile)
    # Far enough in and out that a soft edge does not reach: the chip's level is the upper
    # quartile inside (seams and spots pull the median down), the cloth's the median beyond.
    back = [start - direction * j for j in range(2, 13) if 0 <= start - direction * j < n]
    beyond = [start + direction * j for j in range(4, 11) if 0 <= start + direction * j < n]
    inside = float(np.percentile(profile[back], 75)) if back else float(profile[start])
    outside = float(np.median(profile[beyond])) if beyond else 0.0
    level = (inside + outside) / 2
    y = start - 2 * direction
    if not 0 <= y < n:
        y = start
    while 0 <= y + direction < n and profile[y + direction] > level:
        y += direction
    nxt = y + direction
    if not (0 <= nxt < n):
        return float(y)
    a, b = float(profile[y]), float(profile[nxt])
    frac = (a - level) / max(a - b, 1e-6)
    return float(y + direction * np.clip(frac, 0.0, 1.0))


def _split_columns(mask: npt.NDArray[np.bool_], d_px: float) -> list[tuple[int, int]] | None:
    """The column ranges of the stacks in one blob: one or two chips wide, else None."""
    w = mask.shape[1]
    k = round(w / d_px)
    if k <= 1:
        return [(0, w)] if w <= 1.35 * d_px else None
    if k == 2 and w <= 2.5 * d_px:
        # Two stacks touching: split at the narrowest column near the middle.
        heights = mask.sum(axis=0).astype(np.float64)
        mid = w // 2
        lo, hi = max(1, mid - round(0.25 * d_px)), min(w - 1, mid + round(0.25 * d_px))
        cut = lo + int(np.argmin(heights[lo:hi]))
        return [(0, cut), (cut, w)]
    return None


def _band_pixels(
    refl: F32Array, uc: float, lo: float, hi: float, r_px: float
) -> FloatArray | None:
    """Pixels of one chip's side band: between rows ``lo`` (its top rim) and ``hi`` (its
    bottom rim) at the stack's centre, following the rim's curve across the middle of it."""
    h, w = refl.shape[:2]
    span = hi - lo
    pad = 0.2 * span
    out = []
    for du in range(-round(0.6 * r_px), round(0.6 * r_px) + 1):
        col = round(uc + du)
        if not 0 <= col < w:
            continue
        lift = r_px - math.sqrt(max(r_px**2 - du**2, 0.0))
        a, b = lo - lift + pad, hi - lift - pad
        r0, r1 = math.floor(a + 0.5), math.ceil(b - 0.5)
        if r1 < r0:
            r0 = r1 = round((a + b) / 2)
        if r0 < 0 or r1 >= h:
            return None
        out.append(refl[r0 : r1 + 1, col])
    if not out:
        return None
    return np.concatenate(out).astype(np.float64)


def _face_pixels(refl: F32Array, uc: float, vc: float, r_px: float) -> FloatArray | None:
    h, w = refl.shape[:2]
    y0, y1 = math.floor(vc - r_px), math.ceil(vc + r_px) + 1
    x0, x1 = math.floor(uc - r_px), math.ceil(uc + r_px) + 1
    if y0 < 0 or x0 < 0 or y1 > h or x1 > w:
        return None
    ys, xs = np.mgrid[y0:y1, x0:x1]
    d = np.hypot(xs - uc, ys - vc) / max(r_px, 1e-6)
    ring = (d > 0.66) & (d < 0.8)
    if ring.sum() < 6:
        ring = d < 0.8
    return np.asarray(refl[y0:y1, x0:x1][ring], np.float64)
