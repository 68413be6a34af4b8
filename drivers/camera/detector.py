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
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import CameraConfig
from drivers.camera.fiducials import LayoutFix
from drivers.camera.geometry import BoxView, box_views

U8Array = npt.NDArray[np.uint8]
F32Array = npt.NDArray[np.float32]
FloatArray = npt.NDArray[np.float64]

_GREY_SAT = 0.1  # chromaticity saturation below which a chip counts as a grey (white, black)
_MARGIN = 1.2  # how much nearer the best chip must be than the next for full clarity
_FACE_MARGIN = 0.6  # the same for a top face
_FIT = 1.5  # a colour this far from every chip is no chip's
_UNCHANGED = 0.05  # largest change of a box's eighth-size image (reflectance) taken as none
_SHADOW = 0.45  # the deepest shadow on the cloth, against the cloth in the light
_PRINT_NEAR_MM = 5.0  # print-coloured parts of a chip lie this near its other colours
_PRINT_STROKE_MM = 7.0  # printing thinner than this is taken away (a chip is 39 mm across)
_SHADE_RANGE = (0.6, 1.6)  # a stack's sides lit against the learned sides' light, at most
_SEAM_AGREE = 0.25  # the seams' count must be this near the height's
_SEAM_QUALITY = 1.0  # ... and their period clearer than noise's (_seam_count)
_SEAM_NOISE = 2.7  # noise's period peak, 99 in 100 (normalised, times the rows' square root)
_SEAM_LEAN = 0.1  # the count's doubt once the seams agree with it
_TIE_BREAK = 0.85  # a count the face step chose between two is no surer than this
_EDGE_DOUBT = 0.6  # the confidence at most of a count whose end chips' edges are in doubt
_DARK = 0.2  # a chip whose configured colour is darker than this (luminance) is dark
_DARK_BAND = 0.1  # a foot band darker than this (reflectance), whatever its chip, is in shadow
_CLOTH_AWAY = 0.05  # cloth beside a box this far from the frame's (chromaticity) is covered
_DEEP_SHADE = 0.7  # cloth this much darker than the cloth beside the box is in deep shade
_DARK_SHARE = 0.25  # an empty box with more of it than this is not read as empty
_FOOT_TAIL = 0.08  # a band beyond the foot this faint (of the stack's contrast) may be a chip
_RUN_CHANGE = 0.4  # what a change of chip between two bands costs, in colour distance
_RUN_MARGIN = 1.4  # how much dearer another chip for a band must be for full clarity
_STRAY_MM2 = 120.0  # a thing this large beside the box, where no chip can be, is not nothing
SIDE_SHADE = 0.7  # a chip's side band against its face, when not learned
TALL_WHITE = 5  # this many white chips on top of one another are not read surely from above
TALL_WHITE_NOTE = "white chips on top of one another: their seams do not show from above"
STACKED_IN_PICTURE = "one stack above another in the picture: a stack split, or one behind another"
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
class StackSurvey:
    """What one stack measured, for the technician's calibration (``learn.py``)."""

    box: int
    exact: float  # its height in chips of the configured chip height
    sides: FloatArray  # n x 3: each band's colour, BGR 0..1, in the config colours' terms
    face: FloatArray | None  # its top face's colour, likewise
    step_mm: float  # how far the first chip showed along the parallax, on the cloth
    direction_deg: float  # the parallax direction on the layout (away from the camera)


@dataclass(frozen=True)
class _ChipModel:
    value: int
    face: FloatArray  # BGR reflectance (printed white = PAPER_WHITE)
    side: FloatArray


_CHECK_NOTES = {
    "width": "stack not as wide as a chip",
    "count": "stack height between two counts",
    "edges": "the stack's edges are unclear",
    "blur": "the bands' colours are uncertain under the blur",
    "nudge": "the bands read differently when nudged",
    "face_disagrees": "top chip's side and face disagree",
    "face": "the top face's colour is unclear",
    "bands": "a chip's colour is unclear",
    "edge_doubt": "a dark chip at the stack's foot: its edge is lost in the shadow",
    "lean": "a stack this tall may lean: its seams do not confirm the count",
    "foot": "something fainter just below the stack's foot: it may be a chip in shade",
}

_LUM_W = np.array([0.114, 0.587, 0.299], np.float32)


def _chroma(bgr: FloatArray) -> FloatArray:
    s = bgr.sum(axis=-1, keepdims=True) + 0.03
    return np.asarray(bgr / s, np.float64)


def _sat(bgr: FloatArray) -> float:
    return float(np.linalg.norm(_chroma(np.asarray(bgr, np.float64)) - 1 / 3))


def _lum(bgr: FloatArray) -> FloatArray:
    return np.asarray(bgr @ np.array([0.114, 0.587, 0.299]), np.float64)


@dataclass
class ChipDetector:
    cfg: CameraConfig
    _views: list[BoxView] = field(default_factory=list, init=False, repr=False)
    _views_for: tuple[int, tuple[int, int]] | None = field(default=None, init=False, repr=False)
    _models: list[_ChipModel] = field(default_factory=list, init=False, repr=False)
    _values: list[int] = field(default_factory=list, init=False, repr=False)
    _face: FloatArray = field(init=False, repr=False)
    _side: FloatArray = field(init=False, repr=False)
    _felt: FloatArray = field(init=False, repr=False)
    _print: FloatArray = field(init=False, repr=False)
    _print_c: FloatArray = field(init=False, repr=False)
    _last: dict[int, tuple[F32Array, BoxReading]] = field(
        default_factory=dict, init=False, repr=False
    )
    _survey: tuple[dict[int, int], list[StackSurvey]] | None = field(
        default=None, init=False, repr=False
    )
    # The last frame's box images (box -> its reflectance image and view): what the overhead
    # watcher (``watch.py``) compares from frame to frame.
    patches: dict[int, tuple[F32Array, BoxView]] = field(
        default_factory=dict, init=False, repr=False
    )
    white: Any = field(default=None, init=False, repr=False)  # the last frame's printed white
    # When a list: each stack read appends (box, its height in chips, its cross-checks).
    trace: list[tuple[int, float, dict[str, float], dict[str, float]]] | None = field(
        default=None, repr=False
    )

    def __post_init__(self) -> None:
        cfg = self.cfg
        learned = {c.value: c for c in cfg.learned.chips} if cfg.learned else {}
        for chip in cfg.chips:
            face = np.array(chip.colour[::-1], np.float64) / 255.0
            side = face * SIDE_SHADE
            if chip.value in learned:
                face = np.array(learned[chip.value].face[::-1], np.float64) / 255.0
                side = np.array(learned[chip.value].side[::-1], np.float64) / 255.0
            self._models.append(_ChipModel(chip.value, face, side))
        self._values = [m.value for m in self._models]
        self._face = np.array([m.face for m in self._models])
        # Which chips are greys (white, black) is the config's to say: a learned dark side
        # has a tint of whatever light reached it, which is no hue of the chip's.
        self._dark = np.array(
            [float(_lum(np.array(c.colour[::-1], np.float64) / 255.0)) < _DARK for c in cfg.chips]
        )
        self._grey = np.array(
            [_sat(np.array(c.colour[::-1], np.float64) / 255.0) <= _GREY_SAT for c in cfg.chips]
        )
        self._side = np.array([m.side for m in self._models])
        self._felt = np.array(cfg.layout.felt[::-1], np.float64) / 255.0
        self._print = np.array(cfg.layout.print_colour[::-1], np.float64) / 255.0
        self._print_c = _chroma(self._print)

    @property
    def chip_height_mm(self) -> float:
        learned = self.cfg.learned
        return learned.chip_height_mm if learned is not None else self.cfg.layout.chip_height_mm

    def survey(
        self, frame: U8Array, fix: LayoutFix, counts: dict[int, int]
    ) -> tuple[FrameReading, list[StackSurvey]]:
        """Read the frame with the stacks' counts known (box -> chips in its one stack), and
        report what each stack measured: for learning a table's colours and chip step."""
        found: list[StackSurvey] = []
        self._survey = (counts, found)
        try:
            reading = self.read(frame, fix)
        finally:
            self._survey = None
        return reading, found

    # -- per frame -------------------------------------------------------------------------

    def read(self, frame: U8Array, fix: LayoutFix) -> FrameReading:
        size = (frame.shape[1], frame.shape[0])
        if self._views_for != (id(fix), size):
            self._views = box_views(self.cfg, fix, size)
            self._views_for = (id(fix), size)
            self._last = {}
        white = printed_white(frame, fix)
        self.white = white
        patches = []
        for view in self._views:
            patch = cv2.remap(frame, view.maps[0], view.maps[1], cv2.INTER_LINEAR)
            patches.append(
                np.asarray(
                    np.asarray(patch, np.float32) / white.astype(np.float32) * PAPER_WHITE,
                    np.float32,
                )
            )
        # The cloth's colour in this frame: the middle of the boxes' own (something of the
        # cloth's hue over one box, a navy sleeve on blue cloth, is not the cloth).
        beside = [
            _cloth_beside(refl, view) for refl, view in zip(patches, self._views, strict=True)
        ]
        known = [_chroma(c) for c in beside if c is not None]
        cloth_c = np.median(known, axis=0) if known else _chroma(self._felt)
        self.patches = {
            view.area.box: (refl, view) for view, refl in zip(self._views, patches, strict=True)
        }
        boxes = {}
        for view, refl, felt_obs in zip(self._views, patches, beside, strict=True):
            # A box that looks as it did in the last frame (a fixed camera, nothing moved:
            # the frame-to-frame agreement) reads as it did; any change reads it afresh.
            thumb = np.asarray(
                cv2.resize(refl, None, fx=0.125, fy=0.125, interpolation=cv2.INTER_AREA), np.float32
            )
            last = self._last.get(view.area.box)
            if (
                last is not None
                and self._survey is None
                and float(np.abs(thumb - last[0]).max()) < _UNCHANGED
            ):
                boxes[view.area.box] = last[1]
                continue
            reading = self._read_box(refl, view, felt_obs, cloth_c)
            self._last[view.area.box] = (thumb, reading)
            boxes[view.area.box] = reading
        return FrameReading(boxes, fix)

    def _read_box(
        self, refl: F32Array, view: BoxView, felt_obs: FloatArray | None, cloth_c: FloatArray
    ) -> BoxReading:
        """Read one box from its image ``refl``, given the cloth beside it (``_cloth_beside``)
        and the frame's cloth chromaticity."""
        box = view.area.box

        def unsure(note: str) -> BoxReading:
            return BoxReading(box, Decimal(0), {}, 0.0, (), note)

        if view.in_view < 0.98:
            return unsure("box not wholly in view")
        if felt_obs is None:
            return unsure("no cloth beside the box in view")
        if np.linalg.norm(_chroma(felt_obs) - cloth_c) > _CLOTH_AWAY:
            return unsure("cloth beside the box is covered")
        felt_l = float(_lum(felt_obs))
        if felt_l < 0.01:
            return unsure("too dark to read")
        soft = cv2.blur(refl, (3, 3))
        total = cv2.transform(soft, np.ones((1, 3), np.float32)) + np.float32(0.03)
        chroma = np.asarray(soft / total[..., None], np.float32)
        felt_c = _chroma(felt_obs).astype(np.float32)
        cdist = _distance(chroma, felt_c)
        rel = cv2.transform(refl, _LUM_W[None]) * np.float32(1.0 / felt_l)
        felt_like = (cdist[view.felt_ref] < 0.06) & (rel[view.felt_ref] < 2.0)
        if felt_like.mean() < 0.6:
            return unsure("cloth beside the box is covered")
        scale = felt_l / float(_lum(self._felt))  # the light here against the config's
        # Not cloth: the cloth, lit more or less, is a * felt (in a range of lightness);
        # anything well away from that, or darker than a shadow, is something on the cloth.
        # (On a smoothed copy: the sensor's noise, not the light, is what a pixel's own
        # difference from the cloth mostly is in a dim frame.)
        away, shade = _cloth_distance(np.asarray(cv2.blur(refl, (5, 5)), np.float32), felt_obs)
        # The cloth's own spread (its median: a card or a chip may lie beside the box).
        noise = float(np.median(away[view.felt_ref])) if view.felt_ref.any() else 0.0
        fg = (away > max(0.2 * felt_l, 4.0 * noise, 0.02)) | (shade < 0.25)
        # The layout's printing (rings, numbers, words) is the print's colour, or that
        # blurred into the cloth's; and it is thin, strokes of a few millimetres. A chip's
        # side can look the print's colour too (a white chip lit by the blue cloth), but it
        # is wide and part of something that is not print. So: what an opening the size of a
        # chip's spot leaves (chips, hands, sleeves, bold letters), where it holds something
        # not of the print's colour. Then the holes spots and seams leave are closed.
        # The print's colour as this camera shows it: the betting circle's rings, where they
        # are not the cloth (they are most of that annulus, whatever stands on them).
        print_c = self._print_c
        ring = fg & view.ring_zone
        if ring.sum() > 100:
            local = _chroma(np.median(refl[ring], axis=0).astype(np.float64))
            if np.linalg.norm(local - self._print_c) < 0.1:
                print_c = local
        printed = np.zeros(fg.shape, bool)  # (only where it matters: off the cloth)
        near_print = _segment_distance(chroma[fg], felt_c, print_c) < 0.04
        if print_c is not self._print_c:
            near_print |= _segment_distance(chroma[fg], felt_c, self._print_c) < 0.04
        printed[fg] = near_print
        core = cv2.morphologyEx(
            (fg & ~printed).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)
        )
        kn = max(3, round(_PRINT_NEAR_MM * view.ppm) | 1)
        near = cv2.dilate(core, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (kn, kn)))
        fg = core.astype(bool) | (fg & printed & near.astype(bool) & ~view.ring_zone)
        ko = max(3, round(_PRINT_STROKE_MM * view.ppm) | 1)
        wide = cv2.morphologyEx(
            fg.astype(np.uint8),
            cv2.MORPH_OPEN,
            cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (ko, ko)),
        )
        n_w, lab_w = cv2.connectedComponents(wide, connectivity=8)
        own = np.bincount(lab_w[wide.astype(bool) & ~printed], minlength=n_w)
        keep = own >= 0.1 * math.pi * (self.cfg.layout.chip_diameter_mm / 2 * view.ppm) ** 2
        keep[0] = False
        fg_u8 = keep[lab_w].astype(np.uint8)
        kc = max(3, round(4.0 * view.ppm) | 1)
        fg_u8 = cv2.morphologyEx(
            fg_u8, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (kc, kc))
        )
        # Anything reaching from where chips stand to where no chip of this box can show,
        # with a sizeable part there: a hand, a sleeve, a paddle (a finger alone is some
        # 16 mm wide). It may hide chips, or be taken for them: the box is unsure until it
        # has gone. Things wholly beside the box (the layout's words, a card) are no matter.
        fg_u8 = np.asarray(fg_u8, np.uint8)
        if cv2.countNonZero(fg_u8 & view.outside_u8) >= _STRAY_MM2 * view.ppm**2:
            n_all, lab_all = cv2.connectedComponents(fg_u8, connectivity=8)
            counts_out = np.bincount(lab_all[view.outside], minlength=n_all)
            counts_in = np.bincount(lab_all[view.inside], minlength=n_all)
            reach = (counts_out[1:] >= _STRAY_MM2 * view.ppm**2) & (counts_in[1:] > 0)
            if reach.any():
                return unsure("something over the box besides chips")
        fg_u8[~view.inside] = 0
        # How far each pixel is from the cloth at any lightness (so a stack's shadow on the
        # cloth is cloth, not a chip's edge), or from the printed ring where it is printed.
        bgdiff, _ = _cloth_distance(refl, felt_obs, darkest=_SHADOW)
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
        spans: list[tuple[int, int]] = []  # each stack's columns in the box image
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
                # One stack above another in the picture: a tall stack broken in two where
                # its chips' sides meet the cloth's colour, or a stack behind another. Either
                # way the count of each is in doubt (a stack of 15 read as 1 and 3).
                for sa, sb in spans:
                    if min(sb, x + cb) - max(sa, x + ca) > 0.6 * d_px:
                        return unsure(STACKED_IN_PICTURE)
                spans.append((x + ca, x + cb))
                mask = cc == i
                stack, conf, note = self._read_stack(
                    refl, bgdiff, mask, view, x + ca, x + cb, scale
                )
                if not stack:
                    return unsure(note or "a stack could not be read")
                if self._white_run(stack) >= TALL_WHITE:
                    # Many white chips on top of one another: from above, white sides on
                    # white sides hide their seams, and the top face is lost against them
                    # (9 read as 8 with full confidence): the count is in doubt.
                    conf = min(conf, 0.5)
                    note = TALL_WHITE_NOTE
                stacks.append(stack)
                if conf < confidence:
                    confidence = conf
                if note:
                    notes.append(note)
        if not stacks and not notes:
            # Nothing but cloth: but cloth in shade or something dark of the cloth's own hue
            # over the box (a navy sleeve on blue cloth) look alike. A box mostly much darker
            # than the cloth beside it is not read as empty.
            dark = float(np.mean(shade[view.inside] < _DEEP_SHADE))
            if dark > _DARK_SHARE:
                return unsure("the box is in deep shade, or something dark is over it")
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

    def _white_run(self, stack: tuple[int, ...]) -> int:
        """How many light grey (white) chips lie on top of one another at the stack's top."""
        run = 0
        for value in reversed(stack):
            i = self._values.index(value)
            if not self._grey[i] or self._dark[i]:
                break
            run += 1
        return run

    def _read_stack(
        self,
        refl: F32Array,
        bgdiff: F32Array,
        mask: npt.NDArray[np.bool_],
        view: BoxView,
        xa: int,
        xb: int,
        scale: float,
    ) -> tuple[tuple[int, ...], float, str]:
        lay = self.cfg.layout
        ppm = view.ppm
        r_mm = lay.chip_diameter_mm / 2
        r_px = r_mm * ppm
        chip_h = self.chip_height_mm
        uc = (xa + xb - 1) / 2
        half = max(1, round(0.3 * r_px))
        c0, c1 = max(0, round(uc) - half), min(mask.shape[1], round(uc) + half + 1)
        occupancy = mask[:, c0:c1].mean(axis=1)
        rows = np.flatnonzero(occupancy > 0.5)
        if rows.size == 0:
            return (), 0.0, "a stack could not be read"
        # Edges where the colour is half way from the cloth's to the chip's (a blur mixes the
        # two in proportion, so the half-way point stays where the edge is), on the columns
        # across the middle of the stack straightened along the rim's curve.
        front = _straight(bgdiff, uc, half, r_px, +1).mean(axis=1)
        bottom = _crossing(front, int(rows[-1]), +1, reach=4)
        base = view.layout_of(uc, bottom - r_px)
        top = _crossing(bgdiff[:, round(uc)], int(rows[0]), -1)
        z_top = view.height_at_row(base, top, -1, r_mm)
        # The face is larger than the foot by the parallax's enlargement: its far rim's curve.
        k = view.height_mm / max(view.height_mm - z_top, 1.0)
        back = _straight(bgdiff, uc, half, r_px * k, -1).mean(axis=1)
        top = _crossing(back, int(rows[0]), -1, reach=4)
        z_top = view.height_at_row(base, top, -1, r_mm)
        exact = z_top / chip_h
        # The mask's top and the refined edge must be the same edge (not the printed ring,
        # a shadow or a neighbour's rim between them).
        step = max(view.step_px(base, chip_h, r_mm), 1.0)
        top_gap = abs(float(rows[0]) - top)
        n = round(exact)
        if n < 1:
            if exact < 0.4:
                return (), 0.0, "a flat thing in the box"
            n = 1
        if n > lay.max_stack:
            return (), 0.0, f"a stack taller than {lay.max_stack} chips"
        # The width of the stack's foot: a chip's, or something else.
        checks: dict[str, float] = {}
        width = (xb - xa) / ppm
        if abs(width - 2 * r_mm) > 0.3 * 2 * r_mm:
            checks["width"] = 0.3
        # The count is the height's: from the near rim of the bottom chip to the far rim of
        # the top face, through the camera's pose. The mask's edges must be the same edges
        # as the refined ones (not the printed ring, a shadow or a chip as dark as the cloth
        # between them), and the height near a whole number of chips; half way between two,
        # the step from the shaded sides to the lit face, where each count puts it, decides.
        strip = _straight(refl, uc, round(0.6 * r_px), r_px, +1)
        profile = np.median(strip, axis=1).astype(np.float64)
        off = abs(exact - n)
        known = self._survey[0].get(view.area.box) if self._survey is not None else None
        if known is not None:
            n, off = known, 0.0
        if off > 0.3:
            low, high = max(1, math.floor(exact)), min(lay.max_stack, math.ceil(exact))
            steps = {
                c: _face_step(profile, view.rim_row(base, c * chip_h, +1, r_mm), step)
                for c in {low, high}
            }
            n = max(steps, key=lambda c: steps[c])
            lead = abs(steps[high] - steps[low]) / max(max(steps.values()), 1e-6)
            c_count = _TIE_BREAK * float(np.clip((lead - 0.3) / 0.3, 0.0, 1.0))
            c_count *= float(np.clip((0.6 - abs(exact - n)) / 0.2, 0.0, 1.0))
        else:
            c_count = 1.0
        checks["count"] = c_count
        # A stack leaning towards or away from the camera looks taller or shorter by the
        # lean: along the camera's view a lean and a height look alike. A lean of up to the
        # table's stack_lean_mm a chip moves the top face n such leans; a count is sure only
        # when that cannot carry it to the next count, or when the seams between the chips,
        # counted along the side, agree with it (they are where the lean puts them).
        # The top face's far and near rims, where the pose puts them for this count.
        far = view.rim_row(base, n * chip_h, -1, r_mm)
        near = view.rim_row(base, n * chip_h, +1, r_mm)
        lean = n * lay.stack_lean_mm * ppm / step
        if 0.5 - abs(exact - n) - lean < 0.15:  # the lean alone would leave it in doubt
            seams, quality = _seam_count(profile, top + (near - far), bottom, step)
            if seams is not None and abs(seams - n) < _SEAM_AGREE and quality >= _SEAM_QUALITY:
                lean = min(lean, _SEAM_LEAN)
        nearness = float(np.clip((0.5 - abs(exact - n) - lean) / 0.15, 0.0, 1.0))
        if lay.stack_lean_mm > 0:
            checks["lean"] = nearness
        else:  # stacks stand straight here: what is left is the count's own nearness
            checks["count"] = min(checks["count"], nearness)
        bottom_gap = abs(float(rows[-1]) - bottom)
        c_edges = float(
            np.clip(1.0 - (max(top_gap, bottom_gap) - 0.6 * step) / (0.4 * step), 0.0, 1.0)
        )
        checks["edges"] = c_edges
        # A chip in shade at the foot (the lowest side of a stack gets the least light) may
        # stand out from the cloth less than half as much as the lit chips above it: the
        # half-way edge is then that chip's top, and the count one short. What lies within a
        # step beyond the foot must be the cloth's level, not a fainter band.
        tail = _foot_tail(front, int(rows[-1]), bottom, step)
        checks["foot"] = float(np.clip((_FOOT_TAIL - tail) / 0.04 + 1.0, 0.0, 1.0))
        # The bands: the stack's middle, straightened along the rim's curve, row by row (the
        # median across a row leaves out the edge spots), fitted as bands of one colour each
        # between the rims the pose puts them at, blurred as the frame is (so a thin band's
        # colour is not its neighbours').
        rims = [view.rim_row(base, i * chip_h, +1, r_mm) for i in range(n + 1)]
        fit = _fit_bands(profile, rims, view.rim_row(base, n * chip_h, -1, r_mm), bottom)
        if fit is None:
            return (), 0.0, "a chip's band is out of view"
        medians, plain = fit[1][:n], fit[1][n:]
        if self._survey is not None and known is not None:
            face_k = _face_pixels(refl, uc, (far + near) / 2, (near - far) / 2)
            tx, ty = view.toward
            self._survey[1].append(
                StackSurvey(
                    view.area.box,
                    exact,
                    medians / max(scale, 1e-6),
                    None if face_k is None else np.median(face_k, axis=0) / max(scale, 1e-6),
                    step / ppm,
                    math.degrees(math.atan2(-ty, -tx)),
                )
            )
        values, clarity = self._band_values(medians, scale)
        # Unblurred as fitted, and as they plainly are: a band whose chip differs between the
        # two is one the blur has made up or hidden.
        if self._band_values(plain, scale)[0] != values:
            checks["blur"] = 0.3
        # The same bands read again with the stack's rims nudged a third of a step up and
        # down: a reading that holds only where the rims happen to fall is not a reading.
        for nudge in (-0.33, 0.33):
            moved = [r + nudge * step for r in rims]
            again = _fit_bands(
                profile, moved, moved[-1] - (rims[-1] - rims[0]), bottom + nudge * step
            )
            if again is not None and self._band_values(again[1][:n], scale)[0] != values:
                checks["nudge"] = 0.3
        # The top face, clear of the inlay in its middle and of the spots at its rim.
        face_px = _face_pixels(refl, uc, (far + near) / 2, (near - far) / 2)
        face_clarity = 0.0
        if face_px is not None:
            face = np.median(face_px, axis=0)[None] / max(scale, 1e-6)
            face_values, face_c, _ = self._classify(face, side=False)
            face_clarity = float(face_c[0])
            if face_values[0] != values[-1]:
                checks["face_disagrees"] = 0.2
            else:
                checks["face"] = face_clarity
        worst = float(np.min(clarity))
        checks["bands"] = worst
        # A dark chip at the foot, or any chip's foot band as dark as a shadow, shows little
        # edge against the stack's own shadow on the cloth: the foot found may be the next
        # chip's, and the count one short. Such a count stands only if the step from the
        # shaded sides to the lit face is where it puts it, and not a chip above or below.
        i_foot = self._values.index(values[0])
        if self._dark[i_foot] or float(_lum(medians[0] / max(scale, 1e-6))) < _DARK_BAND:
            lit = {
                c: _face_step(profile, view.rim_row(base, c * chip_h, +1, r_mm), step)
                for c in (n - 1, n, n + 1)
                if 1 <= c <= lay.max_stack
            }
            if max(lit, key=lambda c: lit[c]) != n:
                checks["edge_doubt"] = _EDGE_DOUBT
        if self.trace is not None:
            self.trace.append((view.area.box, exact, dict(checks), {"sigma": fit[2], "n": n}))
        name = min(checks, key=lambda k: checks[k]) if checks else ""
        conf = checks[name] if checks else 1.0
        return tuple(values), conf, _CHECK_NOTES[name] if conf < 1.0 else ""

    def _band_values(self, medians: FloatArray, scale: float) -> tuple[list[int], FloatArray]:
        """The chips the bands' colours (bottom first) are, and how clearly each is."""
        n = len(medians)
        values, clarity, _ = self._classify(medians / max(scale, 1e-6), side=True)
        # The sides of one stack share their light: once the chips are known roughly, how
        # bright this stack's sides are against the side colours sets each band's lightness,
        # and a band far darker or lighter than its chip would be here is in doubt.
        # Only the coloured chips' bands say how this stack is lit: a white and a black chip
        # differ by lightness alone, which a shade taken from them would take away (a black
        # stack read roughly as white would be lit up to white). And the light on a stack's
        # sides varies only so much from the cloth's beside it.
        coloured = np.array([not self._grey[self._values.index(v)] for v in values], bool)
        if 2 * coloured.sum() <= len(coloured):
            coloured[:] = True
        ratios = _lum(medians[coloured] / max(scale, 1e-6)) / np.maximum(
            _lum(
                self._side[
                    [self._values.index(v) for v, c in zip(values, coloured, strict=True) if c]
                ]
            ),
            1e-3,
        )
        shade = float(np.clip(np.median(ratios), *_SHADE_RANGE))
        _, _, dists = self._classify(
            medians / max(scale * shade, 1e-6), side=True, light_tolerance=1.45
        )
        # A stack is a few runs of one chip each, not a chip picked band by band: a band an
        # edge spot has washed out is its run's chip unless its own colour says otherwise
        # by more than a change of chip costs. Each band's clarity is how much dearer the
        # best reading is in which that band is another chip (the chain's min-marginals).
        labels, gaps = _runs(dists, _RUN_CHANGE)
        best = dists[np.arange(n), labels]
        clarity = np.minimum(
            np.clip(gaps / _RUN_MARGIN, 0.0, 1.0), np.clip((_FIT - best) / 0.5, 0.0, 1.0)
        )
        return [self._values[int(i)] for i in labels], clarity

    def _classify(
        self, colours: FloatArray, *, side: bool, light_tolerance: float = 2.0
    ) -> tuple[list[int], FloatArray, FloatArray]:
        """For each colour (N x 3, reflectance), the chip whose face (or side) it is nearest,
        how clearly (0..1), and its distance from every chip (N x chips).

        Colours are compared by hue and saturation, which shading leaves alone: a shaded side
        is darker, not another hue, and the edge spots blurred into a band wash its colour
        out towards grey without turning it. Only the greys (white, black chips) are told
        apart by lightness, against the cloth's."""
        refs = self._side if side else self._face
        colours = np.maximum(colours, 0.0)
        o = _chroma(colours) - 1 / 3
        m = _chroma(refs) - 1 / 3
        sat_o = np.linalg.norm(o, axis=1)
        sat_m = np.linalg.norm(m, axis=1)
        cos = (o @ m.T) / np.maximum(sat_o[:, None] * sat_m[None, :], 1e-9)
        hue = np.arccos(np.clip(cos, -1.0, 1.0)) / (math.pi / 4)
        ratio = np.log(np.maximum(sat_o[:, None], 1e-3) / sat_m[None, :])
        coloured = ~self._grey[None, :]
        lum_o, lum_m = _lum(colours), _lum(refs)
        d_light = np.abs(np.log((lum_o[:, None] + 0.01) / (lum_m[None, :] + 0.01))) / math.log(3)
        # A coloured chip's lightness varies with its shading, but not by more than about
        # twice (less once the stack's own shading is known): a band much darker is a dark
        # chip with a neighbour's colour blurred into it.
        d_colour = (
            hue
            + 0.6 * np.abs(ratio)
            + np.where(ratio < math.log(0.35), 3.0, 0.0)
            + 2.0 * np.maximum(0.0, d_light - math.log(light_tolerance) / math.log(3))
        )
        # A dark colour's chromaticity is mostly noise and its neighbours' light: a black
        # chip's is weighed by how light it is.
        sat_eff = sat_o * np.minimum(1.0, np.maximum(lum_o, 0.0) / 0.25) ** 1.5
        d_grey = sat_eff[:, None] / _GREY_SAT + d_light
        dists = np.where(coloured, d_colour, d_grey)
        order = np.argsort(dists, axis=1)
        rows = np.arange(len(colours))
        best, second = dists[rows, order[:, 0]], dists[rows, order[:, 1]]
        # A face is a large even patch, a side band a thin strip of two colours: a face
        # needs less of a lead to be clear.
        margin = _MARGIN if side else _FACE_MARGIN
        clarity = np.minimum(
            np.clip((second - best) / margin, 0.0, 1.0), np.clip((_FIT - best) / 0.5, 0.0, 1.0)
        )
        return [self._values[int(i)] for i in order[:, 0]], clarity, dists


def _runs(dists: FloatArray, change: float) -> tuple[npt.NDArray[np.intp], FloatArray]:
    """The labelling of a chain of bands (n x chips distances, bottom first) that minimises
    the distances plus ``change`` for each change of chip between neighbours, and for each
    band how much more the best labelling with that band another chip costs."""
    n, k = dists.shape
    switch = change * (1.0 - np.eye(k))  # from chip a (row) to chip b (column)
    fwd = np.empty((n, k))
    fwd[0] = dists[0]
    for i in range(1, n):
        fwd[i] = dists[i] + (fwd[i - 1][:, None] + switch).min(axis=0)
    bwd = np.zeros((n, k))
    for i in range(n - 2, -1, -1):
        bwd[i] = (switch + (dists[i + 1] + bwd[i + 1])[None, :]).min(axis=1)
    marg = fwd + bwd  # the best total with band i as each chip
    labels = np.empty(n, np.intp)
    labels[-1] = int(np.argmin(fwd[-1]))
    for i in range(n - 2, -1, -1):
        labels[i] = int(np.argmin(fwd[i] + switch[:, labels[i + 1]]))
    own = marg[np.arange(n), labels]
    other = marg.copy()
    other[np.arange(n), labels] = np.inf
    return labels, np.asarray(other.min(axis=1) - own, np.float64)


def _cloth_beside(refl: F32Array, view: BoxView) -> FloatArray | None:
    """The colour of the cloth beside a box (the median of its reference cloth), if in view."""
    ref = refl[view.felt_ref]
    if len(ref) < 50:
        return None
    return np.median(ref[:: max(1, len(ref) // 1500)], axis=0).astype(np.float64)


def printed_white(frame: U8Array, fix: LayoutFix) -> FloatArray:
    """The printed white as the camera sees it now: the light modules of the fiducials."""
    samples = []
    h, w = frame.shape[:2]
    for corners in fix.corners_px.values():
        x0, y0 = np.floor(corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 - x0 < 4 or y1 - y0 < 4:
            continue
        crop = frame[y0:y1:2, x0:x1:2].reshape(-1, 3)
        grey = crop.astype(np.int32).sum(axis=1)
        cut = np.partition(grey, int(0.8 * (len(grey) - 1)))[int(0.8 * (len(grey) - 1))]
        samples.append(np.median(crop[grey >= cut], axis=0).astype(np.float64))
    if not samples:
        return np.array([235.0, 235.0, 235.0])
    return np.asarray(np.maximum(np.median(np.array(samples), axis=0), 8.0), np.float64)


def _cloth_distance(
    image: F32Array, felt: FloatArray, darkest: float = 0.0
) -> tuple[F32Array, F32Array]:
    """Per pixel: how far its colour is from the cloth's, lit more or less (a * felt, with
    a at least ``darkest``: a shadow deeper than that is no longer the cloth's colour, as a
    black chip is not), and that lightness ``a`` (a shadow: below 1)."""
    f = np.asarray(felt, np.float64)
    a = cv2.transform(image, (f / max(float(f @ f), 1e-9))[None].astype(np.float32))
    a = np.maximum(a, darkest)
    nearest = a[..., None] * f.astype(np.float32)
    diff = image - nearest
    away = np.sqrt((diff * diff).sum(axis=-1))
    return np.asarray(away, np.float32), np.asarray(a, np.float32)


def _distance(image: F32Array, colour: F32Array) -> F32Array:
    """Euclidean distance of each pixel of a 3-channel float image from ``colour``."""
    d = cv2.subtract(image, np.array([*colour.tolist(), 0.0], np.float64))
    return np.asarray(
        cv2.sqrt(cv2.transform(cv2.multiply(d, d), np.ones((1, 3), np.float32))), np.float32
    )


def _segment_distance(
    points: npt.NDArray[np.floating[Any]],
    a: npt.NDArray[np.floating[Any]],
    b: npt.NDArray[np.floating[Any]],
) -> F32Array:
    """Distance of each point (N x 3) from the segment a-b."""
    pts = np.asarray(points, np.float32).reshape(-1, 1, 3)
    if len(pts) == 0:
        return np.zeros(0, np.float32)
    ab = np.asarray(b - a, np.float64)
    length2 = max(float(ab @ ab), 1e-12)
    t = cv2.transform(pts, (ab / length2)[None]).reshape(-1) - np.float32(
        float(np.asarray(a, np.float64) @ ab) / length2
    )
    t = np.clip(t, 0.0, 1.0)
    closest = np.asarray(a, np.float32)[None, :] + t[:, None] * np.asarray(ab, np.float32)[None, :]
    d = pts.reshape(-1, 3) - closest
    return np.asarray(np.sqrt(np.einsum("ij,ij->i", d, d)), np.float32)


def _crossing(
    profile: npt.NDArray[np.floating[Any]],
    start: int,
    direction: int,
    reach: int = 20,
    quantile: float = 75,
) -> float:
    """Sub-pixel row of the edge nearest ``start`` where ``profile`` (a difference from the
    cloth) is half way between the chip's, inside, and the cloth's, beyond it in
    ``direction``."""
    n = len(profile)
    inside, outside = _edge_levels(profile, start, direction, reach, quantile)
    level = (inside + outside) / 2
    # From just beyond the edge, inwards to the first row above the level.
    y = min(max(start + 3 * direction, 0), n - 1)
    for _ in range(40):
        if profile[y] > level or not 0 <= y - direction < n:
            break
        y -= direction
    nxt = y + direction
    if not (0 <= nxt < n) or profile[y] <= level:
        return float(start)
    while 0 <= nxt + direction < n and profile[nxt] > level:
        y, nxt = nxt, nxt + direction
    a, b = float(profile[y]), float(profile[nxt])
    frac = (a - level) / max(a - b, 1e-6)
    return float(y + direction * np.clip(frac, 0.0, 1.0))


def _edge_levels(
    profile: npt.NDArray[np.floating[Any]],
    start: int,
    direction: int,
    reach: int = 20,
    quantile: float = 75,
) -> tuple[float, float]:
    """The chip's level inside an edge near ``start`` and the cloth's beyond it in
    ``direction``, far enough in and out that a soft edge does not reach: the chip's is the
    upper quantile inside (seams and spots pull the median down), the cloth's the median
    beyond. Without rows inside, the start's own; without rows beyond, 0."""
    n = len(profile)
    back = [start - direction * j for j in range(2, reach + 1) if 0 <= start - direction * j < n]
    beyond = [start + direction * j for j in range(4, 11) if 0 <= start + direction * j < n]
    inside = float(np.percentile(profile[back], quantile)) if back else float(profile[start])
    outside = float(np.median(profile[beyond])) if beyond else 0.0
    return inside, outside


def _foot_tail(
    front: npt.NDArray[np.floating[Any]], last: int, bottom: float, step: float
) -> float:
    """How far the rows within a step beyond a stack's ``bottom`` edge stand out from the
    cloth, as a share of how far the stack's lowest rows inside it do (the mask's ``last``
    row): about 0 when the cloth begins at the edge, more when a fainter band lies there."""
    n = len(front)
    tail = [y for y in range(math.ceil(bottom) + 1, math.ceil(bottom + 1 + step)) if y < n]
    if not tail or last < 2 or last + 4 >= n:
        return 0.0  # no rows inside, beyond or below to compare
    level, outside = _edge_levels(front, last, +1)
    return (float(np.mean(front[tail])) - outside) / max(level - outside, 1e-6)


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


_BLURS = (0.01, 0.8, 1.4, 2.0, 2.8)  # blur widths (rows, Gaussian sigma) tried


def _fit_bands(
    profile: FloatArray,
    rims: list[float],
    far_rim: float,
    bottom: float,
    blurs: tuple[float, ...] = _BLURS,
) -> tuple[float, FloatArray, float] | None:
    """Fit the row profile (rows x 3) of a stack as: cloth below ``bottom``, one flat colour
    per band between consecutive ``rims`` (bottom chip first), the top face above (whose
    ``far_rim`` must lie above its near one), all blurred alike. Returns the least residual
    per row over the blur widths tried, the bands' colours (bottom first, then their plain
    means) and that blur width."""
    n = len(rims) - 1
    # The window reaches a little way into the face: the whole face, with its inlay and
    # spots, would be a part no flat colour fits, and more bands would fit it better.
    y0, y1 = math.floor(rims[-1] - 6.0), math.ceil(bottom + 6.0)
    if y0 < 0 or y1 >= len(profile) or n < 1 or not far_rim < rims[-1] < bottom:
        return None
    ys = np.arange(y0, y1 + 1, dtype=np.float64)
    # Descending edges: cloth | band 0 | ... | band n-1 | face.
    edges = [math.inf, bottom, *rims[1:], -math.inf]
    lo = np.array(edges[1:])[None, :]
    hi = np.array(edges[:-1])[None, :]
    # Exact overlap of each pixel row [y - 0.5, y + 0.5] with each part.
    overlap = np.clip(np.minimum(ys[:, None] + 0.5, hi) - np.maximum(ys[:, None] - 0.5, lo), 0, 1)
    target = profile[y0 : y1 + 1]
    # Each part's plain mean colour is the fit's prior: a band the blur hides almost wholly
    # keeps its own mean rather than taking any value that balances its neighbours.
    weight = overlap.sum(axis=0)
    prior = (overlap.T @ target) / np.maximum(weight, 1e-6)[:, None]
    lam = 0.02 * np.eye(overlap.shape[1])
    best: tuple[float, FloatArray, float] | None = None
    for sigma in blurs:
        radius = max(1, math.ceil(3 * sigma))
        a = np.asarray(
            cv2.GaussianBlur(
                overlap,
                (1, 2 * radius + 1),
                sigmaX=0,
                sigmaY=sigma,
                borderType=cv2.BORDER_REPLICATE,
            ),
            np.float64,
        )
        coef = np.linalg.solve(a.T @ a + lam, a.T @ target + lam @ prior)
        resid = float(((a @ coef - target) ** 2).sum()) / len(ys)
        if best is None or resid < best[0]:
            best = (resid, np.clip(coef[1 : n + 1], 0.0, 1.5), sigma)
    if best is None:
        return None
    # The bands' plain means ride along as a fourth item for a cross-check.
    return best[0], np.vstack([best[1], prior[1 : n + 1]]), best[2]


def _seam_count(
    profile: FloatArray, near_top: float, bottom: float, step: float
) -> tuple[float | None, float]:
    """The chips counted by the seams along a stack's side: the period of the side's
    lightness between the top face's near rim and the foot (searched from 0.7 to 1.4 of the
    pose's step), as a count, and how clear that period is against noise (1: clearer than
    noise alone would be, 99 times in 100)."""
    lum = profile @ np.array([0.114, 0.587, 0.299])
    ys = np.arange(math.ceil(near_top) + 1, math.floor(bottom))
    ys = ys[(ys >= 0) & (ys < len(lum))]
    if len(ys) < 8:
        return None, 0.0
    v = lum[ys].astype(np.float64)
    basis = np.vstack([np.ones(len(ys)), ys, ys**2]).T.astype(np.float64)
    v = v - basis @ np.linalg.lstsq(basis, v, rcond=None)[0]
    w = np.hanning(len(ys) + 2)[1:-1] * v
    pitches = np.linspace(0.7 * step, 1.4 * step, 141)
    mag = np.abs(np.exp(2j * np.pi * ys[None, :] / pitches[:, None]) @ w)
    best = int(np.argmax(mag))
    # The peak against what noise alone gives over this many rows (its 99th percentile,
    # measured: 2.7 / sqrt(rows) of the normalised peak): 1 or more, a period noise would
    # show once in a hundred stacks at most.
    peak = float(mag[best] / (np.linalg.norm(w) * math.sqrt(len(ys)) + 1e-9))
    return (bottom - near_top) / float(pitches[best]), peak * math.sqrt(len(ys)) / _SEAM_NOISE


def _face_step(profile: FloatArray, rim: float, step: float) -> float:
    """How much lighter the profile is just above ``rim`` (the top face) than just below
    it (the top chip's shaded side)."""
    lum = profile @ np.array([0.114, 0.587, 0.299])
    span = max(1, round(0.8 * step))
    r = round(rim)
    above = lum[max(0, r - span - 1) : max(0, r - 1)]
    below = lum[r + 1 : r + span + 1]
    if not len(above) or not len(below):
        return 0.0
    return float(above.mean() - below.mean())


def _straight(image: F32Array, uc: float, half: int, r_px: float, side: int) -> F32Array:
    """Columns ``uc - half .. uc + half`` of ``image`` shifted so a chip rim of radius
    ``r_px`` lies level: its near rim (``side`` +1) rises off the centre, its far rim falls."""
    du = np.arange(-half, half + 1, dtype=np.float32)
    lift = r_px - np.sqrt(np.maximum(r_px**2 - du**2, 0.0))
    h = image.shape[0]
    map_x = np.broadcast_to((round(uc) + du)[None, :], (h, du.size)).astype(np.float32)
    map_y = (np.arange(h, dtype=np.float32)[:, None] - side * lift[None, :]).astype(np.float32)
    out = cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(out, np.float32)


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
