"""Where the chip detector's box readings go wrong, per tier: a profile for tuning.

    .venv/bin/python benchmarks/camera_errors.py DIR [DIR ...] --config FILE [--list N]
        [--brief] [--thresholds]

Each DIR holds ``floorctl chips scene`` frames with their truth files (use tuning seeds only,
below 100). Every box clear of a hand is put in one class: exact; read wrong with confidence
(count wrong, or the count right and a colour wrong); or unsure, split by the detector's
note (a hand or something taken for one, a count in doubt, a colour in doubt, ...) and by
whether the reading, sure or not, was right. Frames whose layout was not found are counted
apart. Boxes with a hand over them count only if read wrong with confidence.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import structlog

from drivers.camera.config import load_camera_config
from drivers.camera.detector import BoxReading, ChipDetector
from drivers.camera.fiducials import locate_layout


def _note_class(note: str) -> str:
    n = note.split(";")[0].strip()
    if n in ("something over the box besides chips", "cloth beside the box is covered"):
        return "hand?"
    if "other than chips" in n or "small thing" in n or "flat thing" in n:
        return "shape"
    if "height between" in n or "edges are unclear" in n or "taller than" in n:
        return "count"
    if "colour" in n or "disagree" in n or "nudged" in n or "blur" in n:
        return "colour"
    return n or "?"


def classify(r: BoxReading | None, truth: dict[str, Any], min_conf: float) -> str:
    if r is None:
        return "fiducial"
    true_amount = Decimal(truth["amount"])
    true_n = sum(truth["chips"].values())
    got_n = sum(r.chips.values())
    right = r.amount == true_amount
    if r.confidence >= min_conf:
        if right:
            return "exact"
        return "WRONG-count" if got_n != true_n else "WRONG-colour"
    cls = _note_class(r.note)
    if got_n != true_n:
        how = "count-off"
    elif right:
        how = "right"
    else:
        how = "colour-off"
    return f"unsure:{cls}:{how}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="+", type=Path)
    p.add_argument("--config", required=True, type=Path)
    p.add_argument("--list", type=int, default=0, help="print this many wrong boxes")
    p.add_argument("--brief", action="store_true", help="one line a tier")
    p.add_argument(
        "--thresholds",
        action="store_true",
        help="also the clear boxes read right and wrong at each operating confidence, and the "
        "most confident wrong reading (to set min_confidence on tuning seeds)",
    )
    args = p.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    cfg = load_camera_config(args.config)
    per_tier: dict[str, Counter[str]] = defaultdict(Counter)
    wrong: list[str] = []
    readings: list[tuple[float, bool]] = []  # clear boxes: confidence, read right
    for folder in args.dirs:
        det = ChipDetector(cfg)
        for tp in sorted(folder.glob("*.json")):
            truth = json.loads(tp.read_text())
            tier = truth["tier"]
            image = cv2.imread(str(folder / truth["frame"]))
            if image is None:
                continue
            frame = np.asarray(image, np.uint8)
            grey = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), np.uint8)
            fix = locate_layout(grey, cfg).fix
            reading = det.read(frame, fix) if fix is not None else None
            c = per_tier[tier]
            if reading is None:
                c["frames-fid-fail"] += 1
            for key, t in truth["boxes"].items():
                box = int(key)
                r = reading.boxes.get(box) if reading is not None else None
                if box in truth["occluded"]:
                    sure_wrong = (
                        r is not None
                        and r.confidence >= cfg.min_confidence
                        and r.amount != Decimal(t["amount"])
                    )
                    c["covered"] += 1
                    c["covered-WRONG"] += sure_wrong
                    continue
                cls = classify(r, t, cfg.min_confidence)
                if r is not None:
                    readings.append((r.confidence, r.amount == Decimal(t["amount"])))
                c["boxes"] += 1
                c[cls] += 1
                if "chip_not_visible" in t["reasons"]:
                    c["(chip_not_visible)"] += 1
                    c[f"(cnv){cls.split(':')[0]}"] += 1
                if cls.startswith("WRONG") and r is not None:
                    wrong.append(
                        f"{tier} {folder.name}/{truth['frame']} box {box}: {cls} read "
                        f"{list(r.stacks)} conf {r.confidence:.2f}, truth {t['stacks']}"
                    )
    if args.thresholds:
        worst = max((conf for conf, right in readings if not right), default=0.0)
        print(f"{len(readings)} clear boxes read; the most confident wrong reading: {worst:.3f}")
        for at in (0.5, 0.6, 0.7, 0.8, 0.9):
            right_n = sum(1 for conf, right in readings if right and conf >= at)
            wrong_n = sum(1 for conf, right in readings if not right and conf >= at)
            print(f"  at {at:.1f}: {right_n} read right, {wrong_n} read wrong")
    if args.brief:
        for tier, c in sorted(per_tier.items()):
            wrong_n = c["WRONG-count"] + c["WRONG-colour"] + c["covered-WRONG"]
            print(
                f"{tier:<9} exact {c['exact']:4d}/{c['boxes']:4d} "
                f"{100 * c['exact'] / c['boxes']:5.1f}%  wrong {wrong_n} "
                f"(count {c['WRONG-count']}, colour {c['WRONG-colour']}, "
                f"covered {c['covered-WRONG']})  fid.fail {c['frames-fid-fail']}"
            )
        for line in wrong[: args.list]:
            print(line)
        return
    for tier, c in sorted(per_tier.items()):
        n = c["boxes"]
        print(f"\n== {tier}: {n} clear boxes, exact {c['exact']} ({100 * c['exact'] / n:.1f}%)")
        for k, v in sorted(c.items(), key=lambda kv: -kv[1]):
            if k not in ("boxes",):
                print(f"  {k:<34} {v:5d}  {100 * v / n:5.1f}%")
    for line in wrong[: args.list]:
        print(line)


if __name__ == "__main__":
    main()
