"""``floorctl chips render-side``: write a side-view evaluation set with its truth files."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from controller import argtypes

# Only the tier names and sizes are needed to parse; the renderer (numpy, OpenCV) is imported
# when the command runs, so `floorctl chips --help` starts without them.
TIER_NAMES = ("mild", "medium", "hard", "pair")
SIZE_NAMES = ("1920x1080", "3840x2160")
CHIP_SET_NAMES = ("standard", "near")


def add_parser(chips: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = chips.add_parser(
        "render-side",
        help="render the counting camera's side view (tiers mild to hard, one or two cameras "
        "a box) with a truth file beside each frame",
        description="Render side-view frames of the table's boxes from cameras at chip height "
        "on the dealer's side, each with a JSON truth file. Every session starts with "
        "calibration frames (a target in each box) and known-stack frames. Tune on seeds "
        "1-99; report on seeds 300 and up.",
    )
    p.add_argument("--tier", choices=TIER_NAMES, default="mild", help="conditions")
    p.add_argument(
        "--seed", type=int, default=1, help="random seed: the same seed, the same frames"
    )
    p.add_argument("--out", required=True, type=Path, help="folder to write into")
    p.add_argument(
        "--frames",
        type=argtypes.count,
        default=20,
        help="moments of play to render (each seen by every camera); 0 with --rounds for "
        "sequences only",
    )
    p.add_argument("--start", type=argtypes.count, default=0, help="index of the first moment")
    p.add_argument(
        "--size", choices=SIZE_NAMES, default="1920x1080", help="the cameras' resolution"
    )
    p.add_argument(
        "--chips",
        choices=CHIP_SET_NAMES,
        default=None,
        help="chip set: standard, or near (with near-colour pairs); default: the --table's "
        "[[chips]] if it lists any, else standard",
    )
    p.add_argument(
        "--table",
        type=Path,
        metavar="FILE",
        help="a table description (TOML) instead of the built-in table",
    )
    p.add_argument(
        "--rounds",
        type=argtypes.count,
        default=0,
        metavar="N",
        help="also render N rounds as sequences of frames (sequences/round_NNN/): bets placed "
        "under a hand, no more bets, a hand passing, and in every other round a stack changed",
    )
    p.set_defaults(func=_render_side)


def _render_side(args: argparse.Namespace) -> int:
    from drivers.camera.sideview.dataset import render_set
    from drivers.camera.sideview.sampling import RigError
    from drivers.camera.sideview.table import CHIP_SETS, TableError, default_table, load_table

    try:
        table = load_table(args.table) if args.table else default_table()
    except TableError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.chips is not None:
        from dataclasses import replace

        table = replace(table, chips=CHIP_SETS[args.chips])
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(f"error: {args.out}: cannot make the folder: {err.strerror}", file=sys.stderr)
        return 2
    w, h = (int(x) for x in args.size.split("x"))
    start = time.process_time()
    try:
        n = render_set(
            table, args.tier, args.seed, (w, h), args.out, args.frames, args.start, args.rounds
        )
    except RigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: {args.out}: cannot write a frame: {err.strerror}", file=sys.stderr)
        return 1
    took = time.process_time() - start
    print(
        f"wrote {n} frames ({args.tier}, seed {args.seed}, {args.size}) with their truths to "
        f"{args.out} in {took:.1f} CPU s ({n / max(took, 1e-9):.2f} frames per CPU-second)"
    )
    return 0
