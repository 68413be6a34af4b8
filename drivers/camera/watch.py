"""The overhead camera as the layout's watcher: chips in a box, a hand over it, a stack changed.

The overhead camera does not count a box that a counting camera covers; it watches. For each
box, frame after frame, it compares the box's image (the detector's: the cloth round the box,
turned so the camera is "down" in it, its colours balanced against the layout's printed white)
with the image before:

- **covered**: something reaches over the box from beyond where its chips can show (a hand, a
  sleeve, a paddle: the detector's own test), or the box's image moves from one frame to the
  next. A covered box is not compared with anything.
- **settled**: the box has looked the same, uncovered, for ``k`` frames in a row; its image
  then is how the box stands.
- **present**: the box holds chips (the detector found a stack in it, or it could not read
  it surely for the stacks it saw).

When armed (at "no more bets": :meth:`Watcher.arm`), each box's settled image is its
*baseline*. Each time a box settles again its image is compared with the baseline: where the
two differ by more than the cloth's own noise, over more than ``min_area_mm2`` of the box
once thin slivers (an edge moved by a pixel) are taken away, the stack changed. A change is
reported once (:class:`Change`, with the box's picture from the frame the baseline came from
and from the frame that showed the change), and the new image becomes the baseline. Whether
the round explains it (a double, a split, insurance, a payout, a collection) is not the
camera's to say: the service decides, and a change explained moves the baseline
(:meth:`Watcher.rebase`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.detector import PAPER_WHITE, BoxReading, F32Array, FrameReading, U8Array
from drivers.camera.geometry import BoxView

# A box image's pixel differs when its colours (reflectance, summed over B, G, R) differ by
# more than this, or by four times the cloth's own frame-to-frame noise where that is more.
DIFF_LEVEL = 0.12
# A change smaller than this (square millimetres of the box, after thin slivers are taken
# away) is no change of stack: one chip added or taken shows over some 100-250 mm².
MIN_AREA_MM2 = 100.0
# Between two frames in a row, a box whose image moves over more than this is covered
# (something passing over it), whatever the detector said.
MOVING_AREA_MM2 = 40.0
SLIVER_MM = 2.5  # differences thinner than this are an edge moved, not a chip
# What the detector says of a box with something over it (a hand, a sleeve reaching in from
# beyond the box). Its other doubts (a stack it cannot count, a shade) are the count's, not a
# hand's: the box is still compared with how it stood.
COVERED_NOTES = (
    "something over the box besides chips",
    "cloth beside the box is covered",
)


@dataclass(frozen=True)
class Change:
    """A box's stack changed since its baseline (reported once, when it settled again)."""

    box: int
    area_mm2: float  # how much of the box changed
    before: U8Array  # the box as the baseline frame showed it (BGR)
    after: U8Array  # the box as it stands now (BGR)


Picture = tuple[U8Array, Any]  # a frame and its printed white


@dataclass
class _Box:
    last: F32Array | None = None  # the last frame's image (reduced, smoothed)
    still: int = 0  # frames in a row the box looked the same and was uncovered
    settled: F32Array | None = None  # the image once settled
    settled_crop: U8Array | None = None  # its picture from the frame
    covered: bool = False
    present: bool | None = None  # chips in the box (None: never seen settled)
    baseline: F32Array | None = None
    baseline_crop: U8Array | None = None
    differs: int = 0  # still frames in a row that differ from the baseline
    outside_ref: F32Array | None = None  # the cloth beyond the box as it stood (armed)
    away: int = 0  # frames in a row that differ beyond the box, not moving
    why: str = ""  # why the box is covered now (for the benchmark's and a technician's eyes)
    # The frames the settled image, the baseline and the cloth beyond came from: sampled
    # again through a new view when the layout is placed anew (a camera nudged, a fix
    # refitted after a hand hid the codes), so they stay comparable with what follows.
    settled_from: Picture | None = None
    baseline_from: Picture | None = None
    outside_from: Picture | None = None

    def resample(self, view: BoxView) -> None:
        self.last = None
        self.settled = _again(self.settled_from, view, self.settled)
        self.baseline = _again(self.baseline_from, view, self.baseline)
        self.outside_ref = _again(self.outside_from, view, self.outside_ref)


def _again(picture: Picture | None, view: BoxView, image: F32Array | None) -> F32Array | None:
    """A box image sampled again from the frame it came from, through ``view``."""
    if picture is None or picture[1] is None:
        return image
    return _reduce(_sample(picture[0], view, picture[1]))


@dataclass
class Watcher:
    """Per box: covered, settled, present; armed, a change of stack against the baseline."""

    boxes: tuple[int, ...]
    k: int = 3
    min_area_mm2: float = MIN_AREA_MM2
    diff_level: float = DIFF_LEVEL
    armed: bool = False
    state: dict[int, _Box] = field(default_factory=dict)
    _crops: dict[int, tuple[int, int, int, int]] = field(default_factory=dict, repr=False)
    _views: dict[int, BoxView] = field(default_factory=dict, repr=False)
    _views_of: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.state = {b: _Box() for b in self.boxes}

    # ----- per frame ----------------------------------------------------------------------

    def update(
        self,
        frame: U8Array,
        reading: FrameReading,
        patches: dict[int, tuple[F32Array, BoxView]],
        white: Any = None,
    ) -> list[Change]:
        """One frame: the detector's reading, its box images and the frame's printed white.
        Returns the changes seen.

        Each box is sampled through the view it was first watched with, kept while the
        detector's views of it (refined from frame to frame as the fiducials are read again)
        put the box within ``KEEP_VIEW_PX`` of where it was: the box images of a still camera
        are then the same pixels of the frame, frame after frame."""
        if self._views_of != id(reading.fix):  # the layout was placed again
            self._views_of = id(reading.fix)
            for box, (_refl, view) in patches.items():
                kept = self._views.get(box)
                if kept is None or _moved_px(kept, view) > KEEP_VIEW_PX:
                    self._views[box] = view
                    self._crops[box] = _crop_of(view, frame.shape)
                    self.state[box].resample(view)
        out: list[Change] = []
        picture: Picture = (frame, white)
        for box in self.boxes:
            st = self.state[box]
            got = patches.get(box)
            box_reading = reading.boxes.get(box)
            kept = self._views.get(box)
            if got is None or box_reading is None or kept is None:
                st.last, st.still, st.covered = None, 0, True
                continue
            view = kept
            refl = got[0] if white is None or view is got[1] else _sample(frame, view, white)
            image = _reduce(refl)
            covered = _covered(box_reading)
            st.why = "hand" if covered else ""
            moved = 0.0
            if st.last is not None and not covered:
                moved = _changed_area(st.last, image, view, self.diff_level)
                covered = moved > MOVING_AREA_MM2
                st.why = "moving" if covered else ""
            if self.armed and st.outside_ref is not None and not covered:
                # Different beyond where this box's chips can show: a hand, not a stack. A
                # difference there that stays put (cards dealt beside the box, a glass put
                # down) becomes the reference once it has held still for a while.
                away = _changed_area(st.outside_ref, image, view, self.diff_level, "outside")
                st.away = st.away + 1 if away > MOVING_AREA_MM2 else 0
                if st.away >= 3 * self.k:
                    st.outside_ref, st.outside_from, st.away = image, picture, 0
                covered = st.away > 0
                st.why = "beside" if covered else ""
            st.last = image
            st.covered = covered
            if covered:
                st.still = st.differs = 0
                continue
            st.still += 1
            if st.still < self.k:
                continue
            if st.still == self.k:  # settled now: how the box stands
                st.settled, st.settled_from = image, picture
                st.settled_crop = self._crop(frame, box)
                st.present = bool(box_reading.stacks) or box_reading.confidence == 0.0
            if not self.armed:
                continue
            if st.baseline is None:
                st.baseline, st.baseline_crop = st.settled, st.settled_crop
                st.baseline_from = st.outside_from = st.settled_from
                st.outside_ref = st.settled
                continue
            # Against the baseline, every still frame: a change (even one too small to break
            # the stillness from one frame to the next) that holds for k frames is reported.
            area = _changed_area(st.baseline, image, view, self.diff_level)
            st.differs = st.differs + 1 if area > self.min_area_mm2 else 0
            if st.differs >= self.k:
                after = self._crop(frame, box)
                before = st.baseline_crop if st.baseline_crop is not None else after
                out.append(Change(box, area, before, after))
                st.baseline, st.baseline_crop, st.baseline_from = image, after, picture
                st.settled, st.settled_crop, st.settled_from = image, after, picture
                st.differs = 0
        return out

    def settled(self) -> bool:
        """Every box stands still and uncovered (its image is how it stands)."""
        return all(st.still >= self.k for st in self.state.values())

    # ----- the round ----------------------------------------------------------------------

    def arm(self) -> None:
        """ "No more bets": each box's last settled image is its baseline from now on. A box
        that moved since it settled (chips put down after the cameras last reported it) is
        compared with how it stood before: that is a change after the call."""
        self.armed = True
        for st in self.state.values():
            st.baseline, st.baseline_crop = st.settled, st.settled_crop
            st.outside_ref = st.settled
            st.baseline_from = st.outside_from = st.settled_from
            st.differs = st.away = 0

    def rebase(self, box: int) -> None:
        """The round explains a change in ``box``: the next image it settles on is its
        baseline (and the one it stands on now, if settled)."""
        st = self.state.get(box)
        if st is None:
            return
        if st.still >= self.k:
            st.baseline, st.baseline_crop = st.settled, st.settled_crop
            st.baseline_from = st.settled_from
        else:
            st.baseline = st.baseline_crop = st.baseline_from = None

    def disarm(self) -> None:
        """The round is over: nothing is compared until the next "no more bets"."""
        self.armed = False
        for st in self.state.values():
            st.baseline = st.baseline_crop = st.outside_ref = None
            st.baseline_from = st.outside_from = None
            st.differs = st.away = 0
            # How a box stood during the last round is no baseline for the next: it must
            # settle again (the chips are paid, collected and placed anew in between).
            st.settled = st.settled_crop = st.settled_from = None
            st.still = 0

    def _crop(self, frame: U8Array, box: int) -> U8Array:
        x0, y0, x1, y1 = self._crops[box]
        return np.ascontiguousarray(frame[y0:y1, x0:x1])


KEEP_VIEW_PX = 3.0  # a box whose view moved less than this (frame pixels) keeps its view


def _moved_px(a: BoxView, b: BoxView) -> float:
    """How far (frame pixels) two views of a box put its centre, and its image's corners."""
    worst = 0.0
    for view_a, view_b in ((a, b),):
        ha, wa = view_a.maps[0].shape[:2]
        hb, wb = view_b.maps[0].shape[:2]
        for fy, fx in ((0.5, 0.5), (0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)):
            pa = view_a.maps[0][min(ha - 1, int(fy * ha)), min(wa - 1, int(fx * wa))]
            pb = view_b.maps[0][min(hb - 1, int(fy * hb)), min(wb - 1, int(fx * wb))]
            worst = max(worst, float(np.hypot(*(pa.astype(float) - pb.astype(float)))))
    return worst


def _sample(frame: U8Array, view: BoxView, white: Any) -> F32Array:
    """The box's image through ``view``, balanced against the printed white (as the detector
    samples it)."""
    patch = cv2.remap(frame, view.maps[0], view.maps[1], cv2.INTER_LINEAR)
    scale = np.float32(PAPER_WHITE) / np.asarray(white, np.float32)
    return np.asarray(np.asarray(patch, np.float32) * scale, np.float32)


def _covered(reading: BoxReading) -> bool:
    return reading.confidence == 0.0 and any(n in reading.note for n in COVERED_NOTES)


def _reduce(refl: F32Array) -> F32Array:
    """A box image halved and smoothed: the sensor's noise averaged, a chip's edge kept."""
    small = cv2.resize(refl, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.GaussianBlur(small, (3, 3), 0), np.float32)


def _changed_area(
    a: F32Array, b: F32Array, view: BoxView, level: float, region: str = "inside"
) -> float:
    """Square millimetres of the box (``region``: where its chips can show, or the cloth
    beyond) where ``a`` and ``b`` differ, slivers taken away."""
    if a.shape != b.shape:  # the layout placed again: the box image a pixel larger or less
        b = np.asarray(cv2.resize(b, (a.shape[1], a.shape[0]), interpolation=cv2.INTER_AREA))
    felt = _mask(view.felt_ref, a.shape)
    b = _aligned(a, b, felt | _mask(view.outside, a.shape))
    diff = np.abs(a - b).sum(axis=2)
    ppm = view.ppm * 0.5  # the reduced image's pixels a millimetre
    inside = _mask(view.inside if region == "inside" else view.outside, diff.shape)
    noise = float(np.median(diff[felt])) if felt.any() else 0.0
    changed = ((diff > max(level, 4.0 * noise)) & inside).astype(np.uint8)
    k = max(3, round(SLIVER_MM * ppm) | 1)
    changed = cv2.morphologyEx(
        changed, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    )
    return float(cv2.countNonZero(changed)) / (ppm * ppm)


SHIFT = 4  # pixels of the reduced image a box image may move when the layout is placed again


def _aligned(a: F32Array, b: F32Array, cloth: npt.NDArray[np.bool_]) -> F32Array:
    """``b`` moved by the whole pixels (up to ``SHIFT``) that best lay its cloth on ``a``'s:
    the layout placed again from the fiducials lands a pixel or two away."""
    if not cloth.any():
        return b
    h, w = a.shape[:2]
    s = SHIFT
    pa = a[s : h - s, s : w - s][cloth[s : h - s, s : w - s]]
    best, best_cost = (0, 0), float("inf")
    for dy in range(-s, s + 1):
        for dx in range(-s, s + 1):
            pb = b[s + dy : h - s + dy, s + dx : w - s + dx][cloth[s : h - s, s : w - s]]
            cost = float(np.abs(pa - pb).mean())
            if cost < best_cost - 1e-9 or (cost <= best_cost + 1e-9 and dx == dy == 0):
                best, best_cost = (dx, dy), cost
    if best == (0, 0):
        return b
    matrix = np.array([[1, 0, best[0]], [0, 1, best[1]]], np.float32)
    moved = cv2.warpAffine(
        b,
        matrix,
        (w, h),
        flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return np.asarray(moved, np.float32)


_MASKS: dict[tuple[int, tuple[int, int]], tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]] = {}


def _mask(full: npt.NDArray[np.bool_], shape: tuple[int, ...]) -> npt.NDArray[np.bool_]:
    """A box view's mask at the reduced image's size (kept with the mask it came from, so an
    id reused by a later view's mask is not taken for it)."""
    key = (id(full), (shape[0], shape[1]))
    got = _MASKS.get(key)
    if got is not None and got[0] is full:
        return got[1]
    small = (
        cv2.resize(full.astype(np.uint8), (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST) > 0
    )
    if len(_MASKS) > 256:
        _MASKS.clear()
    _MASKS[key] = (full, small)
    return small


def _crop_of(view: BoxView, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The frame rectangle (x0, y0, x1, y1) that the box's image is sampled from."""
    xy = view.maps[0].reshape(-1, 2)
    inside = view.visible.reshape(-1)
    pts = xy[inside] if inside.any() else xy
    h, w = shape[0], shape[1]
    x0, y0 = (int(max(0, v)) for v in pts.min(axis=0))
    x1, y1 = (int(min(m, v + 1)) for v, m in zip(pts.max(axis=0), (w, h), strict=True))
    return x0, y0, max(x1, x0 + 1), max(y1, y0 + 1)


def encode_still(image: U8Array) -> bytes:
    """A still as JPEG bytes (quality 90): what surveillance keeps beside the record."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    if not ok:
        raise ValueError("the still could not be encoded")
    return bytes(buf)


__all__ = ["Change", "Watcher", "encode_still"]
