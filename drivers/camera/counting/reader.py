"""The counting camera's reader: each box's stacks, chip by chip, from the side.

Only the boxes' regions are read. In a box's region:

1. **Where the stacks stand.** Pixels that are neither the cloth (its colour taken from the
   cloth in front of the box, in the same frame) nor the printed line make a mask; a stack is a
   block of columns as wide as a chip at the box's scale (from the calibration), standing on
   the cloth between the box's front and back rows. A stack's own width gives its scale.
2. **Counting by edges.** Down the stack's middle the edge pattern and the dark seam between
   chips repeat once a chip. The row profile's period (its autocorrelation, searched near the
   band the scale predicts) gives the chip's height in pixels; the seams are then found one by
   one, from the cloth up to the top face. The count is the number of bands between seams.
3. **Cross-checks.** The stack's height in pixels over the band must agree with the seam count;
   the period must agree with the scale from the stack's width; every band must look like one
   chip (its colour close to one denomination's, far from the second nearest).
4. **Unsure, with the reason**, whenever a check fails, a stack touches the region's edge or
   another stack, or something stands in front (a hand, a sleeve): the dealer keys the box in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.counting.calibration import Calibration

U8Array = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

CHIP_MM = 39.0
BAND_MM = 3.3
MAX_CHIPS = 25


@dataclass(frozen=True)
class StackReading:
    chips: tuple[int, ...]  # values bottom to top
    x0: int
    x1: int
    foot: int
    top: int
    band_px: float

    @property
    def total(self) -> int:
        return sum(self.chips)


@dataclass(frozen=True)
class BoxRead:
    box: int
    camera: str
    total: int | None  # None: unsure
    stacks: tuple[StackReading, ...] = ()
    reason: str = ""  # why unsure

    @property
    def unsure(self) -> bool:
        return self.total is None


@dataclass
class Palette:
    """Each denomination's edge colour (Lab) under the table's lights, from known stacks."""

    means: dict[int, F32] = field(default_factory=dict)
    spreads: dict[int, F32] = field(default_factory=dict)

    def to_json(self) -> dict[int, dict[str, list[float]]]:
        return {
            v: {"mean": self.means[v].tolist(), "spread": self.spreads[v].tolist()}
            for v in self.means
        }

    @classmethod
    def from_json(cls, data: dict[int, dict[str, list[float]]]) -> Palette:
        return cls(
            {int(v): np.asarray(d["mean"], np.float32) for v, d in data.items()},
            {int(v): np.asarray(d["spread"], np.float32) for v, d in data.items()},
        )

    def classify(self, feature: F32) -> tuple[int | None, str]:
        """The denomination, or None with the reason (no palette, nothing near, two near)."""
        if not self.means:
            return None, "no chip colours learned"
        scores = sorted(
            (float(np.sqrt(np.sum(((feature - m) / self.spreads[v]) ** 2) / feature.size)), v)
            for v, m in self.means.items()
        )
        best, value = scores[0]
        second = scores[1][0] if len(scores) > 1 else 99.0
        if best > 3.0:
            return None, f"a chip's colour matches no denomination (off by {best:.1f})"
        if second < 2.0 * best + 1.0:
            return None, f"a chip's colour lies between ${value} and ${scores[1][1]}"
        return value, ""


def _lab(img: U8Array) -> F32:
    return cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)


def _runs(flags: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    """[start, end) of each run of True."""
    d = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(), strict=True))


@dataclass
class Region:
    """One box's region of the picture and the rows and columns that matter in it."""

    box: int
    x0: int
    y0: int
    x1: int
    y1: int
    foot_far: float  # region rows: a foot above this stands behind the box
    foot_near: float  # ... below this, in front of it
    scale: float  # px per mm at the box's centre


def box_region(cal: Calibration, box: int) -> Region:
    fix = cal.boxes[box]
    s = fix.scale
    w, h = cal.size
    x0 = int(max(0, fix.cx - 95 * s))
    x1 = int(min(w, fix.cx + 95 * s))
    y0 = int(max(0, fix.foot_y - 115 * s))
    y1 = int(min(h, fix.foot_y + 45 * s))
    far, near = cal.foot_range(box, 75.0, 75.0)
    return Region(box, x0, y0, x1, y1, far - y0, near - y0, s)


def _foreground(lab: F32, reg: Region) -> tuple[npt.NDArray[np.bool_], F32]:
    """Pixels that are not cloth, and the cloth's colour (from the rows in front of the box)."""
    h = lab.shape[0]
    ref_rows = lab[int(min(h - 2, max(reg.foot_near + 2, h * 0.85))) :]
    cloth = np.median(ref_rows.reshape(-1, 3), axis=0)
    d = lab - cloth
    dist = np.sqrt(0.3 * d[..., 0] ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2)
    spread = float(np.median(np.abs(ref_rows.reshape(-1, 3) - cloth)))
    return dist > max(14.0, 6.0 * spread), cloth


def _masks(lab: F32, reg: Region) -> npt.NDArray[np.bool_]:
    """Pixels that are neither the cloth, nor the printed line, nor their row's background."""
    h = lab.shape[0]
    ref = lab[int(min(h - 2, max(reg.foot_near + 0.3 * (h - reg.foot_near), h * 0.8))) :].reshape(
        -1, 3
    )
    cloth = np.median(ref, axis=0)
    w = np.array([0.4, 1.0, 1.0], np.float32)

    def dist(c: F32) -> F32:
        d = (lab - c) * w
        return np.sqrt(np.sum(d * d, axis=-1))

    d_cloth = dist(cloth)
    spread = float(np.median(np.abs(ref - cloth) * w)) + 1.0
    t = max(12.0, 6.0 * spread)
    printed = ref[np.sqrt(np.sum(((ref - cloth) * w) ** 2, axis=-1)) > 3 * t]
    row_bg = np.median(lab, axis=1, keepdims=True)
    d_row = np.sqrt(np.sum(((lab - row_bg) * w) ** 2, axis=-1))
    fg = (d_cloth > t) & (d_row > t)
    if len(printed) > 20:
        fg &= dist(np.median(printed, axis=0)) > t
    fg = cv2.morphologyEx(fg.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)) > 0
    return fg


def _seam_profile(lab: F32, x0: int, x1: int, y0: int, y1: int) -> F32:
    """Down the stack: how much darker each row is than the rows about it, across the stack."""
    L = lab[y0:y1, x0:x1, 0]
    smooth = cv2.blur(L, (1, 5))
    hp = L - smooth
    return np.median(hp, axis=1).astype(np.float32)


def _period(profile: F32, expect: float) -> tuple[float, float]:
    """The profile's period near ``expect`` (autocorrelation peak) and the peak's strength."""
    p = profile - profile.mean()
    n = len(p)
    if n < 2 * expect + 4:
        return expect, 0.0
    ac = np.correlate(p, p, "full")[n - 1 :]
    ac = ac / (ac[0] + 1e-6)
    lo, hi = int(expect * 0.75), min(n - 2, int(expect * 1.3) + 1)
    if hi <= lo + 1:
        return expect, 0.0
    k = lo + int(np.argmax(ac[lo:hi]))
    if 0 < k < n - 1:  # parabolic refinement
        a, b, c = ac[k - 1], ac[k], ac[k + 1]
        den = a - 2 * b + c
        off = 0.5 * (a - c) / den if den != 0 else 0.0
    else:
        off = 0.0
    return float(k + np.clip(off, -0.5, 0.5)), float(ac[k])


def _run_lengths(fg: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32]:
    """For each pixel, the length of the foreground run down the column ending at it."""
    r = np.zeros(fg.shape, np.int32)
    prev = np.zeros(fg.shape[1], np.int32)
    for y in range(fg.shape[0]):
        prev = (prev + 1) * fg[y]
        r[y] = prev
    return r


def _block(frac: F32, foot_lo: int, foot_hi: int, level: float) -> tuple[int, int] | None:
    """The rows [top, foot] of the lowest block of rows above ``level`` with its foot in range."""
    on = frac > level
    best = None
    for a, b in _runs(on):
        if foot_lo <= b - 1 <= foot_hi:
            best = (a, b - 1)
    return best


def band_feature(lab: F32, x0: int, x1: int, y0: int, y1: int) -> F32:
    """A chip band's colour: the median Lab of its middle rows across the stack's middle."""
    patch = lab[y0:y1, x0:x1].reshape(-1, 3)
    return np.median(patch, axis=0).astype(np.float32) * np.array([0.5, 1, 1], np.float32)


@dataclass
class _Stack:
    x0: int
    x1: int
    foot: int
    top_c: int
    top_s: int
    period: float
    strength: float
    count: int | None
    why: str
    height: float = 0.0


def _measure(lab: F32, fg: npt.NDArray[np.bool_], reg: Region, x0: int, x1: int) -> _Stack:
    width = x1 - x0
    s = width / CHIP_MM
    expect = BAND_MM * s
    lo, hi = int(reg.foot_far - 2 * expect), int(reg.foot_near + 2 * expect)
    mid = fg[:, x0 + width // 4 : x1 - width // 4].mean(axis=1)
    blk = _block(mid, lo, hi, 0.6)
    if blk is not None and blk[1] - blk[0] < 1.5 * expect:  # the printed line, not a chip
        blk = _block(mid[: blk[0] - 1], lo, hi, 0.6) if blk[0] > 1 else None
    if blk is None:
        return _Stack(x0, x1, 0, 0, 0, expect, 0.0, None, "a stack's foot is not on the box")
    top_c, foot = blk
    sides = np.concatenate(
        [fg[:, x0 + width // 10 : x0 + width // 5], fg[:, x1 - width // 5 : x1 - width // 10]],
        axis=1,
    ).mean(axis=1)
    sblk = _block(sides, foot - 3, foot + 3, 0.6)
    top_s = sblk[0] if sblk is not None else top_c
    a = max(top_s, top_c)
    prof = _seam_profile(lab, x0 + width // 6, x1 - width // 6, a, foot + 1)
    period, strength = _period(prof, expect)
    return _Stack(x0, x1, foot, top_c, top_s, period, strength, None, "")


def find_stacks(
    lab: F32, fg: npt.NDArray[np.bool_], reg: Region
) -> tuple[list[tuple[int, int]], str]:
    """Column spans of the stacks standing in the box, or a reason to be unsure."""
    runs = _run_lengths(fg)
    lo = max(0, int(reg.foot_far - 2 * BAND_MM * reg.scale))
    hi = min(fg.shape[0], int(reg.foot_near + 2 * BAND_MM * reg.scale) + 1)
    colscore = runs[lo:hi].max(axis=0)
    chip_w = CHIP_MM * reg.scale
    cols = colscore >= 1.4 * BAND_MM * reg.scale
    spans = []
    for a, b in _runs(cols):
        w = b - a
        if w < 0.25 * chip_w:
            continue
        if a == 0 or b == fg.shape[1]:
            return [], "a stack reaches the edge of the box's region"
        if w < 0.8 * chip_w:
            return [], f"a stack shows only {w / chip_w:.0%} of a chip's width (hidden in part)"
        if w > 1.25 * chip_w:
            return [], "stacks touching, or something in front of the box"
        spans.append((a, b))
    return spans, ""


def read_box(image: U8Array, cal: Calibration, palette: Palette, box: int) -> BoxRead:
    reg = box_region(cal, box)
    roi = image[reg.y0 : reg.y1, reg.x0 : reg.x1]
    if roi.size == 0:
        return BoxRead(box, cal.camera, None, (), "the box is outside the picture")
    lab = _lab(roi)
    fg = _masks(lab, reg)
    spans, why = find_stacks(lab, fg, reg)
    if why:
        return BoxRead(box, cal.camera, None, (), why)
    stacks = []
    for x0, x1 in spans:
        st = _measure(lab, fg, reg, x0, x1)
        if st.why:
            return BoxRead(box, cal.camera, None, (), st.why)
        count, why = _count(st, reg, cal)
        if count is None:
            return BoxRead(box, cal.camera, None, (), why)
        chips, why = _denominations(lab, st, count, palette)
        if chips is None:
            return BoxRead(box, cal.camera, None, (), why)
        stacks.append(
            StackReading(
                tuple(chips),
                x0 + reg.x0,
                x1 + reg.x0,
                st.foot + reg.y0,
                st.top_c + reg.y0,
                st.period,
            )
        )
    return BoxRead(box, cal.camera, sum(s.total for s in stacks), tuple(stacks))


def _count(st: _Stack, reg: Region, cal: Calibration) -> tuple[int | None, str]:
    """Chips in the stack: its height over the seams' period, both checked against its width.

    The top chip's face shows above its edge as an ellipse whose height grows with the angle
    the camera looks down at it: W (row - horizon) / (f - W) for a stack W px wide.
    """
    width = st.x1 - st.x0
    expect = BAND_MM * width / CHIP_MM
    horizon = cal.horizon_y - reg.y0
    face = max(0.0, width * (st.top_c - horizon) / max(cal.focal_px - width, 1.0))
    height = st.foot - st.top_c - face
    by_width = height / expect
    n = int(round(by_width))
    if n < 1:
        return None, "a stack too low to count"
    if n > MAX_CHIPS:
        return None, f"a stack of {n} chips is taller than a stack may be"
    if abs(by_width - n) > 0.25:
        return None, f"the stack's height ({by_width:.2f} chips) is not a whole number of chips"
    if n < 3:
        return None, f"a stack of {n} chips is too low for its seams to confirm the count"
    if n >= 3:
        if st.strength < 0.25:
            return None, "the chips' seams do not repeat clearly"
        by_seams = height / st.period
        if abs(st.period / expect - 1) > 0.1 or int(round(by_seams)) != n:
            return (
                None,
                f"edges and height disagree ({by_seams:.1f} by the seams, {n} by the height)",
            )
    st.height = height
    return n, ""


def chip_features(lab: F32, st: _Stack, n: int) -> list[F32]:
    """Each chip's edge colour, bottom to top."""
    width = st.x1 - st.x0
    band = st.height / n
    out = []
    for k in range(n):
        lo = st.foot - (k + 1) * band
        out.append(
            band_feature(
                lab,
                st.x0 + width // 5,
                st.x1 - width // 5,
                int(round(lo + 0.25 * band)),
                max(int(round(lo + 0.75 * band)), int(round(lo + 0.25 * band)) + 1),
            )
        )
    return out


def _denominations(lab: F32, st: _Stack, n: int, palette: Palette) -> tuple[list[int] | None, str]:
    chips = []
    for feat in chip_features(lab, st, n):
        value, why = palette.classify(feat)
        if value is None:
            return None, why
        chips.append(value)
    return chips, ""


def learn_palette(
    frames: list[tuple[U8Array, Calibration, dict[int, int]]], stack: int = 10, floor: float = 4.0
) -> tuple[Palette, str]:
    """Each denomination's edge colour from known stacks: (frame, its camera's fix, {box: value}).

    Every chip of a known stack read whole adds a sample; a denomination with no sample is
    named in the second value (the calibration then fails).
    """
    samples: dict[int, list[F32]] = {}
    for image, cal, known in frames:
        for box, value in known.items():
            if box not in cal.boxes:
                continue
            reg = box_region(cal, box)
            lab = _lab(image[reg.y0 : reg.y1, reg.x0 : reg.x1])
            fg = _masks(lab, reg)
            spans, why = find_stacks(lab, fg, reg)
            if why or len(spans) != 1:
                continue
            st = _measure(lab, fg, reg, *spans[0])
            if st.why:
                continue
            _count(st, reg, cal)  # the face's height
            width = st.x1 - st.x0
            horizon = cal.horizon_y - reg.y0
            face = max(0.0, width * (st.top_c - horizon) / max(cal.focal_px - width, 1.0))
            st.height = st.foot - st.top_c - face
            n = stack
            if abs(st.height / (BAND_MM * width / CHIP_MM) / n - 1) > 0.15:
                continue  # not the stack the technician stood there
            samples.setdefault(value, []).extend(chip_features(lab, st, n))
    pal = Palette()
    for value, feats in samples.items():
        arr = np.stack(feats)
        pal.means[value] = np.median(arr, axis=0).astype(np.float32)
        pal.spreads[value] = np.maximum(arr.std(axis=0), floor).astype(np.float32)
    return pal, ""


def missing_denominations(pal: Palette, values: list[int]) -> list[int]:
    return [v for v in values if v not in pal.means]


def read_boxes(
    image: U8Array, cal: Calibration, palette: Palette, boxes: list[int] | None = None
) -> dict[int, BoxRead]:
    """Every box the camera covers (or those named), each from its own region only."""
    return {b: read_box(image, cal, palette, b) for b in (boxes or sorted(cal.boxes))}


def combine(reads: list[BoxRead]) -> BoxRead:
    """One box seen by several cameras: all sure and agreeing -> read; otherwise unsure."""
    if not reads:
        raise ValueError("combine: no readings")
    box = reads[0].box
    names = "+".join(r.camera for r in reads)
    sure = [r for r in reads if not r.unsure]
    if len(sure) < len(reads):
        why = "; ".join(f"{r.camera}: {r.reason}" for r in reads if r.unsure)
        return BoxRead(box, names, None, (), why)
    totals = {r.total for r in sure}
    if len(totals) > 1:
        seen = ", ".join(f"{r.camera} ${r.total}" for r in sure)
        return BoxRead(box, names, None, (), f"the cameras disagree ({seen})")
    return BoxRead(box, names, sure[0].total, sure[0].stacks)
