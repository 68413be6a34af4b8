"""The counting camera on the side-view renderer's report seeds: accuracy per tier, and speed.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_counting.py [--sets DIR]
        [--frames 80] [--seed 301] [--speed-frames 20] [--tiers mild,medium,hard,pair]

Per tier (mild, medium, hard: one camera a box; pair: two cameras a box, their readings
combined), on sets rendered by ``floorctl chips render-side`` from report seeds (300 and up,
never tuned on): each session calibrated from its target frame and its known stacks, then
every moment of play read. Printed: boxes with chips, exact box totals among them, confident
misreads (any box, with chips or not, read to a wrong total), the dealer's share (boxes with
chips called unsure), calibration failures (camera sessions that did not PASS), against the
aims (99.5% exact in mild and medium, 97% in hard, no misread, at most 2% keyed in).
Then frames a second on one core at 1920x1080: every box a camera covers read from one frame,
CPU time, against the aim of 30.

``--sets DIR`` reads DIR/<tier>/ rendered beforehand (same layout); without it each tier is
rendered into a temporary folder first (about 0.4 CPU-s a frame).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2

TIERS = ("mild", "medium", "hard", "pair")
AIM_EXACT = {"mild": 99.5, "medium": 99.5, "hard": 97.0, "pair": 99.5}


def render(tier: str, seed: int, frames: int, out: Path) -> None:
    cmd = [sys.executable, "-m", "controller.cli", "chips", "render-side", "--tier", tier]
    cmd += ["--seed", str(seed), "--frames", str(frames), "--out", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def speed(folder: Path, frames: int) -> tuple[float, int]:
    """CPU seconds a frame, reading every box one camera covers (the first session's fix)."""
    from drivers.camera.counting.calibration import calibrate
    from drivers.camera.counting.evaluate import _image
    from drivers.camera.counting.reader import learn_palette, read_boxes

    table = json.loads((folder / "table.json").read_text())
    session = sorted(folder.glob("session_*"))[0]
    tj = sorted((session / "calibration").glob("*.json"))[0]
    truth = json.loads(tj.read_text())
    cal = calibrate(truth["camera"], _image(tj), truth["boxes_in_view"], table).calibration
    if cal is None:
        return float("nan"), 0
    palette = learn_palette([])[0]
    plays = sorted((session / "play").glob(f"*_{truth['camera']}.json"))
    images = [_image(p) for p in plays[:frames]]
    read_boxes(images[0], cal, palette)  # warm
    t0 = time.process_time()
    for img in images:
        read_boxes(img, cal, palette)
    return (time.process_time() - t0) / len(images), len(images)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=Path, help="folder with <tier>/ sets already rendered")
    ap.add_argument("--frames", type=int, default=80, help="moments a tier when rendering")
    ap.add_argument("--seed", type=int, default=301, help="report seed (300 and up)")
    ap.add_argument("--speed-frames", type=int, default=20)
    ap.add_argument("--tiers", default=",".join(TIERS), help="which tiers (comma-separated)")
    args = ap.parse_args()
    if args.seed < 300:
        ap.error("report on seeds 300 and up only")
    cv2.setNumThreads(1)
    from drivers.camera.counting.evaluate import evaluate_set

    tmp = tempfile.TemporaryDirectory() if args.sets is None else None
    base = args.sets or Path(tmp.name)  # type: ignore[union-attr]
    print(
        f"{'tier':7} {'boxes w/ chips':>14} {'exact':>7} {'aim':>6} {'misreads':>8} "
        f"{'keyed in':>8} {'cal. fails':>10} {'read CPU-s/frame':>16}"
    )
    total_boxes = total_wrong = 0
    for tier in args.tiers.split(","):
        folder = base / tier
        if not (folder / "manifest.json").exists():
            render(tier, args.seed, args.frames, folder)
        manifest = json.loads((folder / "manifest.json").read_text())
        if manifest.get("seed_use") != "reporting":
            sys.exit(f"{folder}: seed {manifest.get('seed')} is a tuning seed; report on 300+")
        s = evaluate_set(folder)
        n = max(s.boxes_with_chips, 1)
        total_boxes += s.boxes_with_chips
        total_wrong += s.misreads
        print(
            f"{tier:7} {s.boxes_with_chips:14d} {100 * s.exact / n:6.1f}% {AIM_EXACT[tier]:5.1f}% "
            f"{s.misreads:8d} {100 * s.unsure / n:7.1f}% "
            f"{s.calibration_failures:4d} of {s.calibrations:<3d} "
            f"{s.read_seconds / max(s.frames, 1):16.3f}"
        )
        top = sorted(s.reasons.items(), key=lambda kv: -kv[1])[:4]
        print("        keyed in because: " + "; ".join(f"{k} ({v})" for k, v in top))
        for w in s.wrong[:5]:
            print(f"        MISREAD {w}")
    print(f"all tiers: {total_wrong} confident misreads in {total_boxes} boxes with chips (aim: 0)")
    per, n = speed(base / "mild", args.speed_frames)
    print(
        f"speed: {1 / per:.1f} frames/s on one core at 1920x1080 ({n} frames, every box of one "
        f"camera; {per * 1000:.1f} ms a frame; aim 30, ratio {1 / per / 30:.2f})"
    )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
