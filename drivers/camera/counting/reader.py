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
from typing import cast

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
        worst = float(np.max(np.abs(feature - self.means[value]) / self.spreads[value]))
        if best > 2.5 or worst > 3.5:
            return None, f"a chip's colour matches no denomination (off by {max(best, worst):.1f})"
        if second < max(2.0, 1.8 * best + 0.5):
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
    line_rows: tuple[float, float] = (0.0, 0.0)  # the printed circle's far and near rows
    box_cx: float = 0.0  # the box's centre column in the region
    box_radius: float = 0.0  # mm


def box_region(cal: Calibration, box: int) -> Region:
    fix = cal.boxes[box]
    s = fix.scale
    w, h = cal.size
    x0 = int(max(0, fix.cx - 95 * s))
    x1 = int(min(w, fix.cx + 95 * s))
    y0 = int(max(0, fix.foot_y - 115 * s))
    y1 = int(min(h, fix.foot_y + 45 * s))
    far, near = cal.foot_range(box, 110.0, 75.0)
    r = cal.centres[box][2]
    l_far, l_near = cal.foot_range(box, r + 8.0, r + 8.0)
    return Region(
        box, x0, y0, x1, y1, far - y0, near - y0, s, (l_far - y0, l_near - y0), fix.cx - x0, r
    )


def _foreground(lab: F32, reg: Region) -> tuple[npt.NDArray[np.bool_], F32]:
    """Pixels that are not cloth, and the cloth's colour (from the rows in front of the box)."""
    h = lab.shape[0]
    ref_rows = lab[int(min(h - 2, max(reg.foot_near + 2, h * 0.85))) :]
    cloth = np.median(ref_rows.reshape(-1, 3), axis=0)
    d = lab - cloth
    dist = np.sqrt(0.3 * d[..., 0] ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2)
    spread = float(np.median(np.abs(ref_rows.reshape(-1, 3) - cloth)))
    return dist > max(14.0, 6.0 * spread), cloth


def _masks(lab: F32, bgr: U8Array, reg: Region) -> npt.NDArray[np.bool_]:
    """Pixels that are neither the cloth (lit or in shadow), nor the printed line, nor their
    row's background (the rail and the wall behind run across the region in rows)."""
    h = lab.shape[0]
    start = int(min(h - 2, max(reg.foot_near + 0.3 * (h - reg.foot_near), h * 0.8)))
    ref = lab[start:].reshape(-1, 3)
    rgb = bgr.astype(np.float32) + 4.0
    chroma = rgb[..., :2] / rgb.sum(axis=-1, keepdims=True)  # shading leaves it as it is
    ref_chroma = chroma[start:].reshape(-1, 2)
    cloth_c = np.median(ref_chroma, axis=0)
    d_c = np.sqrt(np.sum((chroma - cloth_c) ** 2, axis=-1))
    c_spread = float(np.median(np.sqrt(np.sum((ref_chroma - cloth_c) ** 2, axis=-1))))
    cloth_l = float(np.median(ref[:, 0]))
    not_cloth = (d_c > max(0.035, 5.0 * c_spread)) | (lab[..., 0] > cloth_l + 35.0)
    w = np.array([0.5, 1.0, 1.0], np.float32)
    row_bg = np.median(lab, axis=1, keepdims=True)
    d_row = np.sqrt(np.sum(((lab - row_bg) * w) ** 2, axis=-1))
    row_noise = np.median(d_row, axis=1, keepdims=True)
    fg = not_cloth & (d_row > np.clip(4.0 * row_noise, 6.0, 15.0))
    # the printed circle, in the rows it can be in: its colour from the brightest pixels there
    # (its ellipse shows beside any stack), or from the cloth in front of the box
    a, b = max(0, int(reg.line_rows[0]) - 3), max(0, int(reg.line_rows[1]) + 4)
    band = lab[a:b]
    bright = band[(band[..., 0] > cloth_l + 25.0) & not_cloth[a:b]]
    printed = ref[np.sqrt(np.sum(((ref - np.median(ref, axis=0)) * w) ** 2, axis=-1)) > 40.0]
    if len(bright) > 30:
        printed = bright
    if len(printed) > 20:
        d_p = np.sqrt(np.sum(((band - np.median(printed, axis=0)) * w) ** 2, axis=-1))
        fg[a:b] &= d_p > 12.0
    fg = cv2.morphologyEx(fg.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)) > 0
    return fg


def _seam_profile(lab: F32, x0: int, x1: int, y0: int, y1: int) -> F32:
    """Down the stack: how much darker each row is than the rows about it, across the stack."""
    L = lab[y0:y1, x0:x1, 0]
    smooth = cv2.blur(L, (1, 5))
    hp = L - smooth
    return cast(F32, np.median(hp, axis=1).astype(np.float32))


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


def _block(
    frac: F32, foot_lo: int, foot_hi: int, level: float, gap: int = 3
) -> tuple[int, int] | None:
    """The rows [top, foot] of the lowest block of rows above ``level`` with its foot in range
    (gaps of up to ``gap`` rows bridged: a chip the colour of the row behind it)."""
    on = frac > level
    for a, b in _runs(~on):
        if b - a <= gap and a > 0 and b < len(on):
            on[a:b] = True
    best = None
    for a, b in _runs(on):
        if foot_lo <= b - 1 <= foot_hi:
            best = (a, b - 1)
    return best


FEATURE_FLOOR = np.array(
    [1.5, 1.5, 2.5, 2.5, 2.5, 2.5, 4.0, 4.0], np.float32
)  # the least spread a colour is given


def cloth_level(bgr: U8Array, reg: Region) -> float:
    """How brightly the cloth in front of the box is lit (12 ln of its mean level): chips'
    brightness is taken relative to it, so a lamp nearer one box than another does not
    change a chip's colour."""
    h = bgr.shape[0]
    start = int(min(h - 2, max(reg.foot_near + 0.3 * (h - reg.foot_near), h * 0.8)))
    total = bgr[start:].reshape(-1, 3).astype(np.float32).sum(axis=1) + 6.0
    return float(12.0 * np.log(np.median(total) / 3.0))


def band_feature(bgr: U8Array, x0: int, x1: int, y0: int, y1: int) -> F32:
    """A chip band's colour across the stack's middle: its chromaticity (red and green shares,
    in %: the same in light and shade) at the median and at the tenth from either end (the
    marks: a white chip's blue stripes, a green chip's white and yellow spots), and its
    brightness (12 ln) at the darkest and the brightest tenth (a black chip's white inserts)."""
    patch = bgr[y0:y1, x0:x1].reshape(-1, 3).astype(np.float32) + 2.0
    total = patch.sum(axis=1)
    red = np.percentile(100 * patch[:, 2] / total, [50, 10, 90])
    green = np.percentile(100 * patch[:, 1] / total, [50, 10, 90])
    dark, light = 12.0 * np.log(np.percentile(total, [10, 90]) / 3.0)
    return np.array([red[0], green[0], red[1], red[2], green[1], green[2], dark, light], np.float32)


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
    expect = BAND_MM * width / CHIP_MM
    lo, hi = int(reg.foot_far - 2 * expect), int(reg.foot_near + 2 * expect)
    mid = fg[:, x0 + width // 4 : x1 - width // 4].mean(axis=1)
    blk = _block(mid, lo, hi, 0.6, gap=max(3, int(0.6 * expect)))
    if blk is not None and blk[1] - blk[0] < 0.6 * expect:  # the printed line, not a chip
        blk = _block(mid[: blk[0] - 1], lo, hi, 0.6) if blk[0] > 1 else None
    if blk is None:
        return _Stack(x0, x1, 0, 0, 0, expect, 0.0, None, "a stack's foot is not on the box")
    top_c, foot = blk
    return _Stack(x0, x1, foot, top_c, top_c, expect, 0.0, None, "")


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


def _unexplained(fg: npt.NDArray[np.bool_], reg: Region, spans: list[tuple[int, int]]) -> bool:
    """Is there more on the box than the stacks found? Chips the mask hardly sees (green on
    green in some lights) show as short runs beside them; a box with such remains is not read
    (as empty, or as the stacks that were found)."""
    runs = _run_lengths(fg)
    lo = max(0, int(reg.foot_far - 2 * BAND_MM * reg.scale))
    hi = min(fg.shape[0], int(reg.foot_near + 2 * BAND_MM * reg.scale) + 1)
    some = runs[lo:hi].max(axis=0) >= max(3.0, 0.9 * BAND_MM * reg.scale)
    for a, b in spans:
        some[a:b] = False
    reach = (reg.box_radius + CHIP_MM / 2) * reg.scale
    lo_c = max(0, int(reg.box_cx - reach))
    hi_c = min(fg.shape[1], int(reg.box_cx + reach) + 1)
    return int(some[lo_c:hi_c].sum()) > 0.2 * CHIP_MM * reg.scale


def read_box(image: U8Array, cal: Calibration, palette: Palette, box: int) -> BoxRead:
    reg = box_region(cal, box)
    roi = image[reg.y0 : reg.y1, reg.x0 : reg.x1]
    if roi.size == 0:
        return BoxRead(box, cal.camera, None, (), "the box is outside the picture")
    lab = _lab(roi)
    fg = _masks(lab, roi, reg)
    spans, why = find_stacks(lab, fg, reg)
    if why:
        return BoxRead(box, cal.camera, None, (), why)
    if _unexplained(fg, reg, spans):
        why = "something on the box the camera cannot make out as a stack"
        return BoxRead(box, cal.camera, None, (), why)
    stacks = []
    for x0, x1 in spans:
        st = _measure(lab, fg, reg, x0, x1)
        if st.why:
            return BoxRead(box, cal.camera, None, (), st.why)
        count, m, why = _count(lab, st, reg, cal, box)
        if count is None or m is None:
            return BoxRead(box, cal.camera, None, (), why)
        if count == 0:
            continue  # behind the box
        chips, why = _denominations(roi, st, m, count, palette, cloth_level(roi, reg))
        if chips is None:
            return BoxRead(box, cal.camera, None, (), why)
        band = float(m.seams[0] - m.seams[1])
        stacks.append(
            StackReading(
                tuple(chips), x0 + reg.x0, x1 + reg.x0, st.foot + reg.y0, st.top_c + reg.y0, band
            )
        )
    return BoxRead(box, cal.camera, sum(s.total for s in stacks), tuple(stacks))


@dataclass
class _Model:
    """A stack as the camera must see it: its front line's seam rows (region rows, bottom to
    top: the cloth, then the top of each chip) and the silhouette's top for each count."""

    seams: F32  # seams[k]: the front line at height k chips, k = 0..MAX_CHIPS
    tops: F32  # tops[n]: the silhouette's top for n chips (n = 0 unused)
    width: float  # the stack's predicted width at its foot, px
    place: str  # "in", "behind" or "outside"


def _model(st: _Stack, reg: Region, cal: Calibration, box: int) -> _Model | None:
    pose = cal.pose
    u = (st.x0 + st.x1) / 2 + reg.x0
    v = st.foot + 0.5 + reg.y0
    front = pose.on_cloth(u, v)
    if front is None:
        return None
    c = pose.centre_mm
    d = front[:2] - c[:2]
    d /= np.linalg.norm(d)
    r = CHIP_MM / 2
    axis = front[:2] + r * d
    bx, by, radius = cal.centres[box]
    off = axis - np.array([bx, by])
    reach = float(np.linalg.norm(off))
    along = float(off @ d)
    if reach <= radius + r * 0.6:
        place = "in"
    elif along > 0 and reach > radius + 2 * r:
        place = "behind"
    else:
        place = "outside"
    k = np.arange(MAX_CHIPS + 1, dtype=float) * BAND_MM
    fronts = np.column_stack([np.repeat(front[0], len(k)), np.repeat(front[1], len(k)), k])
    back = axis + r * d
    backs = np.column_stack([np.repeat(back[0], len(k)), np.repeat(back[1], len(k)), k])
    vf = pose.project(fronts)[:, 1] - reg.y0
    vb = pose.project(backs)[:, 1] - reg.y0
    perp = np.array([-d[1], d[0]])
    edge = pose.project(np.array([[*(axis + r * perp), 0.0], [*(axis - r * perp), 0.0]]))
    return _Model(
        vf.astype(np.float32),
        np.minimum(vf, vb).astype(np.float32),
        float(abs(edge[0, 0] - edge[1, 0])),
        place,
    )


def _seams_confirmed(lab: F32, st: _Stack, m: _Model, n: int) -> float:
    """The share of the n - 1 seams the model predicts that show as a darker row than the
    middles of the chips either side."""
    if n < 2:
        return 1.0
    width = st.x1 - st.x0
    top = int(max(0, np.floor(m.seams[n]) - 2))
    prof = _seam_profile(lab, st.x0 + width // 6, st.x1 - width // 6, top, st.foot + 2)
    ok = 0
    for k in range(1, n):
        y = m.seams[k] - top
        band = float(m.seams[k - 1] - m.seams[k])
        lo, hi = int(np.floor(y - 0.2 * band)), int(np.ceil(y + 0.2 * band)) + 1
        mids = [round(y - 0.5 * band), round(y + 0.5 * band)]
        if lo < 0 or hi > len(prof) or min(mids) < 0 or max(mids) >= len(prof):
            continue
        if float(prof[lo:hi].min()) < float(np.mean(prof[mids])) - 1.0:
            ok += 1
    return ok / (n - 1)


def _count(
    lab: F32, st: _Stack, reg: Region, cal: Calibration, box: int
) -> tuple[int | None, _Model | None, str]:
    """Chips in the stack: the count whose height, at the stack's distance (from where its
    foot meets the cloth), matches the silhouette's top, confirmed by the seams in between."""
    m = _model(st, reg, cal, box)
    if m is None:
        return None, None, "a stack's foot is above the horizon"
    width = st.x1 - st.x0
    fits = abs(width / m.width - 1) <= 0.12
    if m.place == "behind" and fits:
        return 0, m, ""  # a player's own chips behind the box: not a wager
    if m.place != "in":
        return None, m, "a stack stands on the box's edge, in front of it, or its foot is unclear"
    if not fits:
        return None, m, f"a stack {width / m.width:.0%} as wide as a chip there (hidden in part?)"
    return _count_on_model(lab, st, m)


def _count_on_model(lab: F32, st: _Stack, m: _Model) -> tuple[int | None, _Model | None, str]:
    """The count from the silhouette's top, with its checks: seams between the chips, and,
    where there are none to see (a lone chip), nothing above it that the mask may have missed
    (a white stack on the cream outline kept only its bottom chip in the mask once)."""
    top = st.top_c - 0.5
    err = np.abs(m.tops[1:] - top)
    n = int(np.argmin(err)) + 1
    step = float(abs(m.tops[min(n + 1, MAX_CHIPS)] - m.tops[n])) or float(m.seams[0] - m.seams[1])
    if n == MAX_CHIPS and top < m.tops[MAX_CHIPS] - 0.5 * step:
        return None, m, "a stack taller than 25 chips, or something on top of it"
    off = float(err[n - 1]) / step
    if off > (0.2 if n == 1 else 0.3):
        return (
            None,
            m,
            f"the stack's height is {n - 1 + (1 - off) if top > m.tops[n] else n + off:.2f} "
            "chips, not a whole number",
        )
    if n >= 2:
        share = _seams_confirmed(lab, st, m, n)
        if share < 0.7:
            return None, m, f"edges and height disagree (only {share:.0%} of {n - 1} seams seen)"
    elif not _clear_above(lab, st, m):
        return None, m, "a lone chip with no seam to confirm it, and chips may stand above it"
    return n, m, ""


def _clear_above(lab: F32, st: _Stack, m: _Model) -> bool:
    """Evidence that a stack read as one chip is one chip: the rows where the next three
    chips would show, down the stack's middle, look like the columns either side of it (no
    white or chip colour the mask may have dropped). Not seen (too near the region's top or
    side) is not evidence: False."""
    width = st.x1 - st.x0
    band = float(m.seams[0] - m.seams[1])
    y1 = int(np.floor(min(m.tops[1], st.top_c))) - 1
    y0 = int(np.floor(m.tops[min(4, MAX_CHIPS)] - 0.5 * band))
    if y0 < 0 or y1 - y0 < 2 * band:
        return False
    gap = max(2, width // 10)
    left = lab[y0:y1, max(0, st.x0 - width // 2) : max(0, st.x0 - gap)]
    right = lab[y0:y1, st.x1 + gap : st.x1 + width // 2]
    if left.shape[1] < 3 or right.shape[1] < 3:
        return False
    mid = np.median(lab[y0:y1, st.x0 + width // 4 : st.x1 - width // 4], axis=1)
    side = np.median(np.concatenate([left, right], axis=1), axis=1)
    w = np.array([0.5, 1.0, 1.0], np.float32)
    d = np.sqrt(np.sum(((mid - side) * w) ** 2, axis=-1))
    return float(np.mean(d > 10.0)) < 0.15


def chip_features(bgr: U8Array, st: _Stack, m: _Model, n: int, level: float) -> list[F32]:
    """Each chip's edge colour, bottom to top, its brightness relative to the cloth's."""
    width = st.x1 - st.x0
    out = []
    for k in range(n):
        lo, hi = float(m.seams[k + 1]), float(m.seams[k])
        band = hi - lo
        y0 = round(lo + 0.25 * band)
        y1 = max(round(lo + 0.75 * band), y0 + 1)
        feat = band_feature(bgr, st.x0 + width // 5, st.x1 - width // 5, y0, y1)
        feat[6:] -= level
        out.append(feat)
    return out


def _denominations(
    bgr: U8Array, st: _Stack, m: _Model, n: int, palette: Palette, level: float
) -> tuple[list[int] | None, str]:
    chips = []
    for feat in chip_features(bgr, st, m, n, level):
        value, why = palette.classify(feat)
        if value is None:
            return None, why
        chips.append(value)
    return chips, ""


def learn_palette(
    frames: list[tuple[U8Array, Calibration, dict[int, int]]], stack: int = 10
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
            roi = image[reg.y0 : reg.y1, reg.x0 : reg.x1]
            lab = _lab(roi)
            fg = _masks(lab, roi, reg)
            spans, why = find_stacks(lab, fg, reg)
            if why or len(spans) != 1:
                continue
            st = _measure(lab, fg, reg, *spans[0])
            if st.why:
                continue
            m = _model(st, reg, cal, box)
            if m is None or m.place != "in":
                continue
            n = stack
            step = float(m.seams[0] - m.seams[1])
            if abs(float(m.tops[n]) - (st.top_c - 0.5)) > 0.6 * step:
                continue  # not the stack the technician stood there (or not seen whole)
            samples.setdefault(value, []).extend(
                chip_features(roi, st, m, n, cloth_level(roi, reg))
            )
    pal = Palette()
    for value, feats in samples.items():
        arr = np.stack(feats)
        pal.means[value] = np.median(arr, axis=0).astype(np.float32)
        pal.spreads[value] = np.maximum(arr.std(axis=0), FEATURE_FLOOR).astype(np.float32)
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
