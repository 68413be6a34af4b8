"""Frames in, per-box wagers out.

For each betting box the detector cuts a small rectified image out of the frame through the
layout homography (layout millimetres at ``work_px_per_mm``), evens out the lighting against
the felt beside the box, labels each pixel by its nearest colour (felt, printed line, skin,
one of the chip colours) through a lookup table, and reads the stacks it finds: a stack of
``n`` chips stands ``chip_diameter + n * chip_step`` tall in the rectified image, its chips'
edges showing as bands of ``chip_step`` from the bottom up and the top chip's face on top.

A box that a hand (skin) or anything else unexpected covers is reported with confidence 0, so
the stability tracker does not take it as a change of wager.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import BoxArea, CameraConfig
from drivers.camera.fiducials import LayoutFix

U8Array = npt.NDArray[np.uint8]
F32Array = npt.NDArray[np.float32]
FloatArray = npt.NDArray[np.float64]

FELT, PRINT, SKIN = 0, 1, 2
FIRST_CHIP = 3
# Skin tones from fair to dark: a hand over the layout is recognised by these.
_SKIN_RGB = [(236, 188, 160), (214, 160, 122), (170, 110, 75), (120, 76, 50), (90, 58, 40)]
_L_WEIGHT = 0.5  # lightness counts for less than hue: the lights are never even


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
class _BoxGeometry:
    area: BoxArea
    origin_mm: tuple[float, float]
    size_px: tuple[int, int]  # w, h
    center_px: tuple[float, float]
    radius_px: float
    felt_ref: npt.NDArray[np.bool_]  # pixels that only felt should cover
    inside: npt.NDArray[np.bool_]  # pixels that chips in this box can cover
    on_line: npt.NDArray[np.bool_]  # pixels of the printed betting circle
    core: npt.NDArray[np.bool_]  # well inside the circle, clear of its printed line


def _lab(rgb: list[tuple[int, int, int]]) -> F32Array:
    arr = np.array([[list(c)[::-1] for c in rgb]], np.float32) / 255.0
    return np.asarray(cv2.cvtColor(arr, cv2.COLOR_BGR2Lab)[0], np.float32)


@dataclass
class ChipDetector:
    cfg: CameraConfig
    _geo: list[_BoxGeometry] = field(default_factory=list, init=False, repr=False)
    _lut: U8Array = field(init=False, repr=False)
    _felt_lab: F32Array = field(init=False, repr=False)
    _values: list[int] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        cfg = self.cfg
        lay = cfg.layout
        ppm = cfg.work_px_per_mm
        margin = 14.0
        for area in cfg.boxes:
            up = lay.max_stack * area.chip_step_mm + 6
            cx, cy = area.center_mm
            r = area.radius_mm
            x0, y0 = cx - r - margin, cy - r - up
            w = math.ceil((2 * (r + margin)) * ppm)
            h = math.ceil((2 * r + up + margin) * ppm)
            ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
            xm, ym = x0 + (xs + 0.5) / ppm, y0 + (ys + 0.5) / ppm
            dist = np.hypot(xm - cx, ym - cy)
            felt_ref = (dist > r + 3.5) & (ym > cy + 0.2 * r)
            inside = (np.abs(xm - cx) <= r) & (ym <= cy + r) & ((dist <= r) | (ym < cy))
            on_line = np.abs(dist - r) < 3.5
            core = dist <= r - 5.0
            self._geo.append(
                _BoxGeometry(
                    area,
                    (x0, y0),
                    (w, h),
                    ((cx - x0) * ppm, (cy - y0) * ppm),
                    r * ppm,
                    felt_ref,
                    inside,
                    on_line,
                    core,
                )
            )
        self._values = [c.value for c in cfg.chips]
        protos = [lay.felt, lay.print_colour] + [c.colour for c in cfg.chips]
        proto_lab = _lab(protos)
        skin_lab = _lab(_SKIN_RGB)
        # Lookup table over 5-bit BGR: class of the nearest prototype.
        q = (np.arange(32, dtype=np.float32) * 8 + 4) / 255.0
        b, g, r_ = np.meshgrid(q, q, q, indexing="ij")
        grid = np.stack([b.ravel(), g.ravel(), r_.ravel()], axis=1)[None].astype(np.float32)
        lab = cv2.cvtColor(grid, cv2.COLOR_BGR2Lab)[0]
        weights = np.array([_L_WEIGHT, 1.0, 1.0], np.float32)

        def dist2(centres: F32Array) -> F32Array:
            diff = (lab[:, None, :] - centres[None, :, :]) * weights
            return np.asarray((diff**2).sum(axis=2), np.float32)

        d_main = dist2(proto_lab)  # felt, print, chips...
        d_skin = dist2(skin_lab).min(axis=1, keepdims=True)
        d_all = np.concatenate([d_main[:, :2], d_skin, d_main[:, 2:]], axis=1)
        self._lut = np.argmin(d_all, axis=1).astype(np.uint8)
        self._felt_lab = proto_lab[0]

    # -- per frame -------------------------------------------------------------------------

    def read(self, frame: U8Array, fix: LayoutFix) -> FrameReading:
        patches = [self._warp(frame, fix, g) for g in self._geo]
        refs = [p[g.felt_ref] for p, g in zip(patches, self._geo, strict=True)]
        felt_chroma = _chroma(np.concatenate([r[::4] for r in refs]).astype(np.float32))
        frame_felt = np.median(felt_chroma, axis=0).astype(np.float64)
        boxes = {}
        for patch, ref, geo in zip(patches, refs, self._geo, strict=True):
            boxes[geo.area.box] = self._read_box(patch, ref, geo, frame_felt)
        return FrameReading(boxes, fix)

    def _warp(self, frame: U8Array, fix: LayoutFix, geo: _BoxGeometry) -> U8Array:
        ppm = self.cfg.work_px_per_mm
        x0, y0 = geo.origin_mm
        patch_to_layout = np.array(
            [[1 / ppm, 0, x0 + 0.5 / ppm], [0, 1 / ppm, y0 + 0.5 / ppm], [0, 0, 1]], np.float64
        )
        m = fix.homography @ patch_to_layout
        out = cv2.warpPerspective(
            frame,
            m,
            geo.size_px,
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0),
        )
        return np.asarray(out, np.uint8)

    def _read_box(
        self, patch: U8Array, ref: U8Array, geo: _BoxGeometry, frame_felt: FloatArray
    ) -> BoxReading:
        box = geo.area.box
        lay = self.cfg.layout
        ppm = self.cfg.work_px_per_mm

        def unsure(note: str) -> BoxReading:
            return BoxReading(box, Decimal(0), {}, 0.0, (), note)

        # The felt beside the box sets the white balance; if it does not look like felt
        # (a hand, a sleeve, a cash tray over it) the box cannot be read.
        chroma = _chroma(ref.astype(np.float32))
        felt_like = np.linalg.norm(chroma - frame_felt, axis=1) < 0.06
        if felt_like.mean() < 0.6:
            return unsure("felt beside the box is covered")
        felt_obs = np.median(ref[felt_like].astype(np.float32), axis=0)
        if float(felt_obs.max()) < 8:
            return unsure("too dark to read")
        felt_nominal = np.array(lay.felt[::-1], np.float32)
        gains = felt_nominal / np.maximum(felt_obs, 1.0)
        # White balance and 5-bit quantisation in one table per channel, then the class table.
        levels = np.arange(256, dtype=np.float32)
        idx = np.zeros(patch.shape[:2], np.int32)
        for c, shift in enumerate((10, 5, 0)):
            table = (np.clip(levels * gains[c], 0, 255).astype(np.int32) >> 3) << shift
            idx |= table[patch[..., c]]
        labels = self._lut[idx]
        labels[~geo.inside] = FELT

        skin = (labels == SKIN).astype(np.uint8)
        if cv2.countNonZero(skin) >= 150 * ppm * ppm:
            # A hand is thick; the thin blends where a red chip's edge meets a white one are not.
            k_skin = max(3, round(6 * ppm) | 1)
            skin = cv2.morphologyEx(skin, cv2.MORPH_OPEN, np.ones((k_skin, k_skin), np.uint8))
            n_skin, _, stats, _ = cv2.connectedComponentsWithStats(skin, connectivity=8)
            if n_skin > 1 and stats[1:, cv2.CC_STAT_AREA].max() >= 150 * ppm * ppm:
                return unsure("hand over the box")

        # Anything on the felt but the printed circle is taken as chips here; a hand was ruled
        # out above, and the colours are read from the middle of each chip below.
        ink = (labels == PRINT) & geo.on_line
        chip_mask = ((labels != FELT) & ~ink).astype(np.uint8)
        norm = _Balanced(patch, gains, ink, felt_nominal)
        k_close = max(3, round(1.5 * ppm) | 1)
        k_open = max(3, round(3.0 * ppm) | 1)
        chip_mask = cv2.morphologyEx(
            chip_mask, cv2.MORPH_CLOSE, np.ones((k_close, k_close), np.uint8)
        )
        chip_mask = cv2.morphologyEx(chip_mask, cv2.MORPH_OPEN, np.ones((k_open, k_open), np.uint8))
        n_cc, cc, stats, _ = cv2.connectedComponentsWithStats(chip_mask, connectivity=8)
        n_cc, cc, stats = _merge_columns(
            n_cc, np.asarray(cc, np.int32), np.asarray(stats, np.int32), gap=5.0 * ppm
        )
        d_px = lay.chip_diameter_mm * ppm
        min_area = 0.45 * math.pi * (d_px / 2) ** 2
        stacks: list[tuple[int, ...]] = []
        confidence = 1.0
        stray = 0
        for i in range(1, n_cc):
            x, y, w, h, area = (int(v) for v in stats[i])
            if area < min_area:
                stray += int(
                    np.count_nonzero(
                        (cc[y : y + h, x : x + w] == i) & geo.core[y : y + h, x : x + w]
                    )
                )
                continue
            gap = 6.0 * ppm
            k = max(1, round((w + gap) / (d_px + gap)))
            width_fit = abs(w - (k * d_px + (k - 1) * gap)) / d_px
            if k > 3 or width_fit > 0.6:
                return unsure("something other than chips in the box")
            confidence = min(confidence, 1.0 - max(0.0, width_fit - 0.25))
            col_w = w / k
            for j in range(k):
                xa = x + j * col_w
                stack, conf = self._read_stack(geo, norm, labels, cc, i, xa, xa + col_w, y, y + h)
                if not stack:
                    return unsure("a stack could not be read")
                stacks.append(stack)
                confidence = min(confidence, conf)
        # Bits of colour too small to be a chip: a few are noise, more mean something is there
        # that the detector does not understand (a dropped chip on edge, a lighter, a coin).
        stray_share = stray / float(geo.core.sum())
        if stray_share > 0.01:
            confidence = min(confidence, 1.0 - 20 * (stray_share - 0.01))
        chips: dict[int, int] = {}
        for stack in stacks:
            for v in stack:
                chips[v] = chips.get(v, 0) + 1
        amount = sum((Decimal(v) * n for v, n in chips.items()), Decimal(0))
        return BoxReading(
            box,
            amount,
            dict(sorted(chips.items())),
            round(max(0.0, float(confidence)), 4),
            tuple(stacks),
            "",
        )

    def _read_stack(
        self,
        geo: _BoxGeometry,
        norm: _Balanced,
        labels: U8Array,
        cc: npt.NDArray[np.int32],
        label: int,
        xa: float,
        xb: float,
        ya: int,
        yb: int,
    ) -> tuple[tuple[int, ...], float]:
        lay = self.cfg.layout
        ppm = self.cfg.work_px_per_mm
        d_px = lay.chip_diameter_mm * ppm
        step = geo.area.chip_step_mm * ppm
        cx = (xa + xb) / 2
        half = max(1, round(d_px / 14))
        c0, c1 = max(0, round(cx) - half), min(cc.shape[1], round(cx) + half + 1)
        occupancy = (cc[ya:yb, c0:c1] == label).mean(axis=1)
        rows = np.flatnonzero(occupancy > 0.5)
        if rows.size == 0:
            return (), 0.0
        top, bottom = self._edges(geo, norm, c0, c1, ya + int(rows[0]), ya + int(rows[-1]) + 1)
        exact = ((bottom - top) - d_px) / step
        n = round(exact)
        # A stack whose height is near a half step between two counts is in doubt.
        # (Video codecs halve the colour resolution, so a colour-only edge such as purple on
        # blue felt can sit a pixel off: up to a quarter step is taken as exact.)
        fit = float(np.clip(1.0 - (abs(exact - n) - 0.25) / 0.25, 0.0, 1.0))
        if n < 1:
            if exact < 0.4:
                return (), 0.0
            n = 1
        if n > lay.max_stack:
            return (), 0.0
        wx = max(2, round(d_px / 5))
        x0, x1 = max(0, round(cx) - wx), min(labels.shape[1], round(cx) + wx + 1)
        band_half = max(1, round(step * 0.15))
        values: list[int] = []
        conf = fit
        for i in range(n):
            yc = round(bottom - (i + 0.5) * step)
            window = labels[max(yc - band_half, 0) : yc + band_half + 1, x0:x1].ravel()
            if i == n - 1:
                face_c = round(bottom - n * step - d_px / 2)
                fh = max(2, round(d_px / 6))
                face = labels[max(face_c - fh, 0) : face_c + fh + 1, x0:x1].ravel()
                window = np.concatenate([window, face])
            value, c = self._vote(window)
            values.append(value)
            conf = min(conf, c)
        return tuple(values), conf

    def _edges(
        self, geo: _BoxGeometry, norm: _Balanced, c0: int, c1: int, top: int, bottom: int
    ) -> tuple[float, float]:
        """Sub-pixel top and bottom of a stack: where the column's difference from the felt
        crosses halfway between the felt outside and the chip just inside."""
        step = geo.area.chip_step_mm * self.cfg.work_px_per_mm
        strip = norm.column(c0, c1) / 255.0
        lab = cv2.cvtColor(strip[None], cv2.COLOR_BGR2Lab)[0]
        weights = np.array([_L_WEIGHT, 1.0, 1.0], np.float32)
        d = np.sqrt((((lab - self._felt_lab) * weights) ** 2).sum(axis=1))
        h = len(d)

        def level(a: float, b: float) -> float:
            lo, hi = max(0, round(a)), min(h, round(b))
            return float(np.median(d[lo:hi])) if hi > lo else 0.0

        def crossing(start: int, stop: int, inward: int, threshold: float) -> float | None:
            # walk from outside (start) inwards to the first sample above threshold
            y = start
            while 0 <= y < h and y != stop:
                nxt = y + inward
                if 0 <= nxt < h and d[y] <= threshold < d[nxt]:
                    frac = (threshold - d[y]) / max(float(d[nxt] - d[y]), 1e-6)
                    return float(y + inward * frac)
                y = nxt
            return None

        reach = max(3, round(step * 1.0))
        t_in = level(top + 2, top + 2 + step)
        t_out = level(top - 2 - reach, top - 2)
        t = crossing(top - reach, top + reach, 1, (t_in + t_out) / 2)
        b_in = level(bottom - 0.8 * step, bottom - 0.2 * step)
        b_out = level(bottom + 2, bottom + 2 + reach)
        b = crossing(bottom + reach, bottom - reach, -1, (b_in + b_out) / 2)
        # Sample y covers [y, y + 1): its centre is y + 0.5. A refined edge far from the coarse
        # one has caught something else (the printed circle, a neighbour): keep the coarse one.
        t_edge = t + 0.5 if t is not None and abs(t + 0.5 - top) <= 2.0 else float(top)
        b_edge = b + 0.5 if b is not None and abs(b + 0.5 - bottom) <= 2.0 else float(bottom)
        return t_edge, b_edge

    def _vote(self, window: U8Array) -> tuple[int, float]:
        """The chip value most pixels of the window show, and the margin of its win."""
        counts = np.bincount(window, minlength=FIRST_CHIP + len(self._values))[FIRST_CHIP:]
        order = np.argsort(counts)[::-1]
        first = int(counts[order[0]])
        second = int(counts[order[1]]) if len(order) > 1 else 0
        if first == 0:
            return self._values[0], 0.0
        # Edge inserts, seams and blur take a share of any window: the winner against the
        # runner-up decides, and a lead of a quarter of their votes is a clear win.
        margin = (first - second) / (first + second)
        return self._values[int(order[0])], float(np.clip(margin / 0.25, 0.0, 1.0))


@dataclass(frozen=True)
class _Balanced:
    """A box image white-balanced against its felt, computed only where it is needed."""

    patch: U8Array
    gains: F32Array
    ink: npt.NDArray[np.bool_]  # the printed circle, shown as felt
    felt: F32Array

    def column(self, c0: int, c1: int) -> F32Array:
        cols = np.clip(self.patch[:, c0:c1].astype(np.float32) * self.gains, 0, 255)
        cols[self.ink[:, c0:c1]] = self.felt
        return np.asarray(cols.mean(axis=1), np.float32)


def _merge_columns(
    n: int, cc: npt.NDArray[np.int32], stats: npt.NDArray[np.int32], gap: float
) -> tuple[int, npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """Join pieces of one stack that a printed line or a dark seam cut apart: components that
    share most of their width and lie one above the other within ``gap``."""
    if n <= 2:
        return n, cc, stats
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    boxes = [tuple(int(v) for v in stats[i][:4]) for i in range(n)]
    for i in range(1, n):
        xi, yi, wi, hi = boxes[i]
        for j in range(i + 1, n):
            xj, yj, wj, hj = boxes[j]
            overlap = min(xi + wi, xj + wj) - max(xi, xj)
            if overlap < 0.6 * min(wi, wj):
                continue
            vgap = max(yi, yj) - min(yi + hi, yj + hj)
            if vgap <= gap:
                parent[find(j)] = find(i)
    roots = sorted({find(i) for i in range(1, n)})
    if len(roots) == n - 1:
        return n, cc, stats
    remap = np.zeros(n, np.int32)
    for new, root in enumerate(roots, start=1):
        for i in range(1, n):
            if find(i) == root:
                remap[i] = new
    merged = remap[cc]
    out = np.zeros((len(roots) + 1, 5), np.int32)
    for new in range(1, len(roots) + 1):
        members = [i for i in range(1, n) if remap[i] == new]
        x0 = min(boxes[i][0] for i in members)
        y0 = min(boxes[i][1] for i in members)
        x1 = max(boxes[i][0] + boxes[i][2] for i in members)
        y1 = max(boxes[i][1] + boxes[i][3] for i in members)
        out[new] = (x0, y0, x1 - x0, y1 - y0, sum(int(stats[i][4]) for i in members))
    return len(roots) + 1, merged, out


def _chroma(bgr: F32Array) -> F32Array:
    s = bgr.sum(axis=-1, keepdims=True) + 1.0
    return np.asarray(bgr[..., :2] / s, np.float32)
