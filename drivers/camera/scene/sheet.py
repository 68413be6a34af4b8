"""Contact sheets for looking at the evaluation renderer's frames with one's own eyes.

    python -m drivers.camera.scene.sheet --config config/table.example.toml --out artifacts

writes ``scene_<tier>.png`` for each tier: six frames side by side at half size, each labelled
with its index and what its truth says (amounts, occluded boxes, fiducials in view), and
``scene_<tier>_zoom.png``: the boxes of the first frame at full resolution, enlarged twice.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from drivers.camera.config import CameraConfigError, load_camera_config
from drivers.camera.scene.frames import SIZES, SceneRenderer
from drivers.camera.scene.layout import U8
from drivers.camera.scene.tiers import TIERS


def sheet(frames: list[tuple[U8, str]], columns: int = 3) -> U8:
    tiles = []
    for image, label in frames:
        tile = cv2.resize(
            image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA
        )
        cv2.rectangle(tile, (0, 0), (tile.shape[1], 22), (0, 0, 0), -1)
        cv2.putText(
            tile, label, (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA
        )
        tiles.append(tile)
    while len(tiles) % columns:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i : i + columns]) for i in range(0, len(tiles), columns)]
    return np.asarray(np.vstack(rows), np.uint8)


def zoom(image: U8, centres: list[list[float]]) -> U8:
    xs = [c[0] for c in centres]
    ys = [c[1] for c in centres]
    x0, x1 = max(0, int(min(xs)) - 70), min(image.shape[1], int(max(xs)) + 70)
    y0, y1 = max(0, int(min(ys)) - 110), min(image.shape[0], int(max(ys)) + 50)
    crop = image[y0:y1, x0:x1]
    return np.asarray(cv2.resize(crop, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST), np.uint8)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=Path("config/table.example.toml"))
    parser.add_argument("--out", type=Path, default=Path("artifacts"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--size", choices=sorted(SIZES), default="1280x720")
    parser.add_argument("--tier", action="append", choices=sorted(TIERS))
    args = parser.parse_args(argv)
    try:
        cfg = load_camera_config(args.config)
    except CameraConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.tier or list(TIERS):
        renderer = SceneRenderer(cfg, name, args.seed, SIZES[args.size])
        shown = []
        start = time.perf_counter()
        first = None
        for frame in renderer.frames(args.count, args.start):
            t = frame.truth
            amounts = " ".join(b["amount"] for b in t["boxes"].values())
            label = (
                f"{name} #{frame.index} s{t['session']}  ${amounts}  occl {t['occluded']}  "
                f"fid {len(t['fiducials_visible'])}"
            )
            shown.append((frame.image, label))
            if first is None:
                first = frame
        took = time.perf_counter() - start
        path = args.out / f"scene_{name}.png"
        cv2.imwrite(str(path), sheet(shown))
        if first is not None:
            centres = [b["center_px"] for b in first.truth["boxes"].values()]
            cv2.imwrite(str(args.out / f"scene_{name}_zoom.png"), zoom(first.image, centres))
        print(f"{path}: {args.count} frames in {took:.1f} s ({args.count / took:.2f} frames/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
