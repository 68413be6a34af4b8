"""Score the counting reader on a rendered side-view set (``floorctl chips render-side``).

Per session and camera the reader is calibrated from the session's target frame (PASS or
FAIL), learns the chip colours from the known stacks (the truth says only which denomination
the technician stood in which box, as the instructions do), and reads every play moment.
Where two cameras cover a box, their readings are combined (agree -> read, else unsure).
The truth files are used for scoring and for the known stacks' denominations only.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2

from drivers.camera.counting.calibration import Calibration, calibrate
from drivers.camera.counting.reader import BoxRead, Palette, combine, learn_palette, read_box


@dataclass
class Score:
    boxes_with_chips: int = 0
    exact: int = 0  # boxes with chips read to the right total
    misreads: int = 0  # any box read (sure) to a wrong total
    unsure: int = 0  # boxes with chips the dealer keys in
    empty_right: int = 0
    empty_boxes: int = 0
    calibrations: int = 0
    calibration_failures: int = 0
    frames: int = 0
    read_seconds: float = 0.0
    wrong: list[dict[str, Any]] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, other: Score) -> None:
        for k in (
            "boxes_with_chips",
            "exact",
            "misreads",
            "unsure",
            "empty_right",
            "empty_boxes",
            "calibrations",
            "calibration_failures",
            "frames",
            "read_seconds",
        ):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.wrong.extend(other.wrong)
        for k, v in other.reasons.items():
            self.reasons[k] += v


def _image(json_path: Path) -> Any:
    for suffix in (".png", ".jpg"):
        p = json_path.with_suffix(suffix)
        if p.exists():
            return cv2.imread(str(p))
    return None


def evaluate_set(folder: Path) -> Score:
    table = json.loads((folder / "table.json").read_text())
    centres = {
        int(b["box"]): (float(b["center_mm"][0]), float(b["center_mm"][1])) for b in table["boxes"]
    }
    score = Score()
    for session in sorted(folder.glob("session_*")):
        cals: dict[str, Calibration] = {}
        for tj in sorted((session / "calibration").glob("*.json")):
            truth = json.loads(tj.read_text())
            result = calibrate(truth["camera"], _image(tj), truth["boxes_in_view"], centres)
            score.calibrations += 1
            if result.passed and result.calibration is not None:
                cals[truth["camera"]] = result.calibration
            else:
                score.calibration_failures += 1
        known = []
        for tj in sorted((session / "known").glob("*.json")):
            truth = json.loads(tj.read_text())
            cal = cals.get(truth["camera"])
            if cal is None:
                continue
            placed = {
                int(b): v["stacks"][0]["chips"][0]
                for b, v in truth["boxes"].items()
                if v["stacks"] and int(b) in cal.boxes
            }
            known.append((_image(tj), cal, placed))
        palettes: dict[str, Palette] = {}
        for cam in cals:  # each camera its own colours (its own view of the lights)
            own = [k for k in known if k[1].camera == cam]
            palettes[cam] = learn_palette(own or known)[0]
        moments: dict[int, dict[int, list[BoxRead]]] = defaultdict(lambda: defaultdict(list))
        truths: dict[tuple[int, int], dict[str, Any]] = {}
        for tj in sorted((session / "play").glob("*.json")):
            truth = json.loads(tj.read_text())
            cal = cals.get(truth["camera"])
            for b in truth["boxes_in_view"]:
                truths[(truth["index"], b)] = truth["boxes"][str(b)]
                if cal is None or b not in cal.boxes:
                    moments[truth["index"]][b].append(
                        BoxRead(b, truth["camera"], None, (), "camera not calibrated")
                    )
            if cal is None:
                continue
            image = _image(tj)
            t0 = time.process_time()
            for b in truth["boxes_in_view"]:
                if b in cal.boxes:
                    moments[truth["index"]][b].append(read_box(image, cal, palettes[cal.camera], b))
            score.read_seconds += time.process_time() - t0
            score.frames += 1
        for index, boxes in moments.items():
            for b, reads in boxes.items():
                r = combine(reads)
                t = truths[(index, b)]
                total = int(t["total"])
                if total == 0:
                    score.empty_boxes += 1
                    score.empty_right += int(r.total == 0)
                else:
                    score.boxes_with_chips += 1
                if r.unsure:
                    if total:
                        score.unsure += 1
                        score.reasons[r.reason.split("(")[0].strip()[:60]] += 1
                elif r.total == total:
                    score.exact += int(total > 0)
                else:
                    score.misreads += 1
                    score.wrong.append(
                        {
                            "session": session.name,
                            "index": index,
                            "box": b,
                            "truth": total,
                            "read": r.total,
                        }
                    )
    return score
