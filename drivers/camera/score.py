"""``floorctl chips score``: the detector against frames whose true wagers are written beside
them (by ``floorctl chips render`` or ``floorctl chips scene``).

A folder holds frames (PNG, JPEG, ...) each with a JSON truth file of the same name, or video
files each with a ``.jsonl`` of truths (one line a frame). A truth gives each box's ``amount``
(and ``chips``), the boxes a hand covers (``occluded``) and, from the evaluation renderer, the
``tier`` of its conditions. The frames are read in name order as a camera would give them: the
layout is searched for in each frame unless the previous fix still holds (its codes are where
it put them), as the table service does (``fiducials.LayoutTracker``).

Per tier, and overall:
- exact: boxes clear of hands whose total was read right with at least the operating
  confidence (``min_confidence``); and apart, of the boxes clear of hands with chips in them
  (an empty box is most of the exact ones on most tables: so the boxes with a wager);
- misread: boxes (any, covered or not) read wrong with at least that confidence — the readings
  that would reach the round engine;
- unsure: boxes clear of hands read below it (the table falls back to the dealer's entry);
- fiducial failures: frames in which the layout was not found;
- fps: frames a second through fiducials and detector, on this machine as it is.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from drivers.camera.config import CameraConfig
from drivers.camera.detector import ChipDetector, U8Array
from drivers.camera.fiducials import LayoutTracker
from drivers.camera.sources import IMAGE_SUFFIXES

UNNAMED_TIER = "untiered"


class TruthError(ValueError):
    """A truth file that cannot be used; the message names it and what is wrong."""


@dataclass
class TierScore:
    frames: int = 0
    boxes: int = 0  # clear of hands
    exact: int = 0
    with_chips: int = 0  # clear of hands, with chips in them
    exact_with_chips: int = 0
    misread: int = 0  # confident and wrong, clear boxes
    misread_covered: int = 0  # confident and wrong, under a hand
    unsure: int = 0
    covered: int = 0
    fiducial_failures: int = 0
    seconds: float = 0.0
    sizes: set[tuple[int, int]] = field(default_factory=set)
    examples: list[str] = field(default_factory=list)  # the first few misreads, for a human

    def add(self, other: TierScore) -> None:
        self.frames += other.frames
        self.boxes += other.boxes
        self.exact += other.exact
        self.with_chips += other.with_chips
        self.exact_with_chips += other.exact_with_chips
        self.misread += other.misread
        self.misread_covered += other.misread_covered
        self.unsure += other.unsure
        self.covered += other.covered
        self.fiducial_failures += other.fiducial_failures
        self.seconds += other.seconds
        self.sizes |= other.sizes
        self.examples.extend(other.examples[: max(0, 5 - len(self.examples))])

    def to_dict(self) -> dict[str, Any]:
        return {
            "frames": self.frames,
            "boxes": self.boxes,
            "exact": self.exact,
            "exact_share": self.exact / self.boxes if self.boxes else None,
            "with_chips": self.with_chips,
            "exact_with_chips": self.exact_with_chips,
            "exact_with_chips_share": (
                self.exact_with_chips / self.with_chips if self.with_chips else None
            ),
            "misread": self.misread,
            "misread_covered": self.misread_covered,
            "unsure": self.unsure,
            "covered": self.covered,
            "fiducial_failures": self.fiducial_failures,
            "fps": self.frames / self.seconds if self.seconds else None,
            "sizes": [f"{w}x{h}" for w, h in sorted(self.sizes)],
            "misread_examples": self.examples,
        }


@dataclass(frozen=True)
class Truth:
    label: str
    tier: str
    amounts: dict[int, Decimal]
    occluded: frozenset[int]


def _truth(data: Any, where: str, boxes: set[int]) -> Truth:
    if not isinstance(data, dict) or not isinstance(data.get("boxes"), dict):
        raise TruthError(f"{where}: not a truth (a JSON object with a 'boxes' object)")
    amounts: dict[int, Decimal] = {}
    for key, box in data["boxes"].items():
        try:
            number = int(key)
            amounts[number] = Decimal(str(box["amount"]))
        except (ValueError, TypeError, KeyError, InvalidOperation):
            raise TruthError(f"{where}: boxes[{key!r}] has no usable 'amount'") from None
        if number not in boxes:
            raise TruthError(f"{where}: box {number} is not on this config's layout")
    occluded = data.get("occluded", [])
    if not isinstance(occluded, list) or not all(isinstance(b, int) for b in occluded):
        raise TruthError(f"{where}: 'occluded' must be a list of box numbers")
    tier = data.get("tier", UNNAMED_TIER)
    return Truth(where, str(tier), amounts, frozenset(occluded))


def _frames(folder: Path, boxes: set[int]) -> Iterator[tuple[Truth, U8Array | None]]:
    """(truth, frame) for every frame under ``folder`` that has a truth, in name order."""
    entries = sorted(folder.iterdir())
    for path in entries:
        suffix = path.suffix.lower()
        if suffix in IMAGE_SUFFIXES:
            truth_path = path.with_suffix(".json")
            if not truth_path.exists():
                continue
            try:
                data = json.loads(truth_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                raise TruthError(f"{truth_path}: cannot read it as JSON: {err}") from None
            frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
            yield (
                _truth(data, str(path), boxes),
                (None if frame is None else np.asarray(frame, np.uint8)),
            )
        elif path.suffix == ".jsonl" and not path.with_suffix(".json").exists():
            videos = [p for p in entries if p.stem == path.stem and p.suffix.lower() in _VIDEO]
            if not videos:
                continue
            lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
            cap = cv2.VideoCapture(str(videos[0]))
            try:
                for i, line in enumerate(lines):
                    where = f"{path}:{i + 1}"
                    try:
                        data = json.loads(line)
                    except ValueError as err:
                        raise TruthError(f"{where}: not JSON: {err}") from None
                    ok, frame = cap.read()
                    yield (
                        _truth(data, f"{videos[0]}#{i}", boxes),
                        (np.asarray(frame, np.uint8) if ok else None),
                    )
            finally:
                cap.release()


_VIDEO = {".avi", ".mp4", ".mkv", ".mov"}


def score_folder(folder: Path, cfg: CameraConfig) -> dict[str, TierScore]:
    """The detector's scores on every frame with a truth under ``folder``, by tier."""
    detector = ChipDetector(cfg)
    boxes = {b.box for b in cfg.boxes}
    tiers: dict[str, TierScore] = {}
    layout = LayoutTracker(cfg)
    for truth, frame in _frames(folder, boxes):
        score = tiers.setdefault(truth.tier, TierScore())
        score.frames += 1
        if frame is None:
            score.fiducial_failures += 1
            clear = boxes - truth.occluded
            score.boxes += len(clear)
            score.with_chips += sum(truth.amounts.get(b, Decimal(0)) > 0 for b in clear)
            score.unsure += len(clear)
            continue
        t0 = time.perf_counter()
        frame_size = (frame.shape[1], frame.shape[0])
        score.sizes.add(frame_size)
        fix = layout.update(frame)
        reading = detector.read(frame, fix) if fix is not None else None
        score.seconds += time.perf_counter() - t0
        if reading is None:
            score.fiducial_failures += 1
        for box in sorted(boxes):
            true_amount = truth.amounts.get(box, Decimal(0))
            r = reading.boxes.get(box) if reading is not None else None
            sure = r is not None and r.confidence >= cfg.min_confidence
            right = r is not None and r.amount == true_amount
            if box in truth.occluded:
                score.covered += 1
                if sure and not right:
                    score.misread_covered += 1
                continue
            score.boxes += 1
            score.with_chips += true_amount > 0
            if sure and right:
                score.exact += 1
                score.exact_with_chips += true_amount > 0
            elif sure:
                score.misread += 1
                if len(score.examples) < 5 and r is not None:
                    score.examples.append(
                        f"{truth.label} box {box}: read ${r.amount} "
                        f"(confidence {r.confidence:.2f}), truth ${true_amount}"
                    )
            else:
                score.unsure += 1
    return tiers


def overall(tiers: dict[str, TierScore]) -> TierScore:
    total = TierScore()
    for score in tiers.values():
        total.add(score)
    return total


def format_scores(tiers: dict[str, TierScore], min_confidence: float) -> str:
    head = (
        f"{'tier':<12} {'frames':>6} {'size':>10} {'boxes':>6} {'exact':>15} "
        f"{'with chips: exact':>24} "
        f"{'misread':>8} {'unsure':>7} {'covered(misread)':>17} {'fid.fail':>8} {'fps':>7}"
    )
    lines = [f"operating confidence {min_confidence:g}", head]
    rows = [*sorted(tiers.items()), ("overall", overall(tiers))]
    for name, s in rows:
        share = f"{100 * s.exact / s.boxes:6.2f}%" if s.boxes else "     -"
        fps = f"{s.frames / s.seconds:7.1f}" if s.seconds else "      -"
        sizes = ",".join(f"{w}x{h}" for w, h in sorted(s.sizes)) or "-"
        chips = f"{s.exact_with_chips}/{s.with_chips}"
        chips_share = (
            f"{100 * s.exact_with_chips / s.with_chips:6.2f}%" if s.with_chips else "     -"
        )
        lines.append(
            f"{name:<12} {s.frames:>6} {sizes:>10} {s.boxes:>6} {s.exact:>6} {share:>8} "
            f"{chips:>15} {chips_share:>8} "
            f"{s.misread:>8} {s.unsure:>7} {s.covered:>8}({s.misread_covered:>3}) "
            f"{s.fiducial_failures:>12} {fps}"
        )
    for name, s in rows[:-1]:
        for example in s.examples:
            lines.append(f"  misread ({name}): {example}")
    return "\n".join(lines)
