"""``floorctl chips scene``: write an evaluation set of frames with their truth files."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from controller import argtypes
from drivers.camera.config import CameraConfigError, load_camera_config
from drivers.camera.scene.tiers import CHIP_THICKNESS_MM, SIZES, TIERS

# The renderer (chips, frames, writer) imports OpenCV and numpy: `_scene` imports it when it runs,
# never to parse.


def add_parser(chips: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``scene`` to the ``floorctl chips`` subcommands."""
    scene = chips.add_parser(
        "scene",
        help="render an evaluation set from camera physics, independent of the detector",
        description="Render frames of the table from a physical camera model (tiers from mild "
        "to hard), each with a JSON truth file beside it. Tune on one seed, report on others.",
    )
    scene.add_argument("--config", required=True, type=Path, help="table config (TOML)")
    scene.add_argument("--tier", choices=list(TIERS), default="mild", help="conditions")
    scene.add_argument("--seed", type=int, default=0, help="random seed (the same frames)")
    scene.add_argument("--count", type=argtypes.positive_int, default=20, help="frames")
    scene.add_argument("--start", type=argtypes.count, default=0, help="index of the first")
    scene.add_argument("--out", required=True, type=Path, help="folder to write into")
    scene.add_argument("--size", choices=list(SIZES), default="1280x720", help="resolution")
    scene.add_argument(
        "--chip-thickness",
        type=argtypes.positive_float,
        default=CHIP_THICKNESS_MM,
        metavar="MM",
        help="thickness of a chip (default %(default)s mm; the diameter is the config's)",
    )
    scene.set_defaults(func=_scene)


def _scene(args: argparse.Namespace) -> int:
    from drivers.camera.scene.chips import ChipModel
    from drivers.camera.scene.frames import SIZES, SceneRenderer
    from drivers.camera.scene.writer import write_frames

    try:
        cfg = load_camera_config(args.config)
    except CameraConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(f"error: {args.out}: cannot make the folder: {err.strerror}", file=sys.stderr)
        return 2
    if not 1.0 <= args.chip_thickness <= 10.0:
        print(
            f"error: --chip-thickness {args.chip_thickness:g}: must be 1 to 10 mm", file=sys.stderr
        )
        return 2
    model = ChipModel(diameter_mm=cfg.layout.chip_diameter_mm, thickness_mm=args.chip_thickness)
    renderer = SceneRenderer(cfg, args.tier, args.seed, SIZES[args.size], model=model)
    start = time.perf_counter()
    try:
        n = write_frames(renderer.frames(args.count, args.start), args.out)
    except OSError as err:
        print(f"error: {args.out}: cannot write a frame: {err.strerror}", file=sys.stderr)
        return 1
    took = time.perf_counter() - start
    print(
        f"wrote {n} {args.tier} frames (seed {args.seed}, {args.size}) with their truths to "
        f"{args.out} in {took:.1f} s ({n / took:.2f} frames/s)"
    )
    return 0
