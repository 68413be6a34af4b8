"""How many boxes any reading of stack heights could count right, per tier of the evaluation
renderer: a ceiling that does not depend on the detector.

    .venv/bin/python benchmarks/camera_ceiling.py [--seed 300] [--count 40] [--tiers ...]

One view cannot tell a stack leaning towards (or away from) the camera from a taller (or
shorter) one: the top face lands where a taller stack's would. This takes the evaluation
renderer's own stacks (``drivers/camera/scene/sampling.py``: each stack's lean, each chip's
offset and thickness, as drawn for that seed, tier and frame) and the camera's pose for the
frame's session, and works out for every stack how far its top face's height, as one view sees
it, is from its true count of chips:

    error (chips) = (top chip's offset from the bottom chip, along the camera's view on the
                     layout) / (chip thickness x tan(view angle at the stack))
                    + (the stack's true height - count x thickness) / thickness

A reader that measured every height perfectly, with no noise, blur or colour to get wrong,
and picked the nearest count, would count a stack right only where that error is under half a
chip; a box only where all its stacks are. Nothing is rendered: the figures are geometry
alone, the same at any resolution. What can count a leaning stack is its seams (the chips
counted along its side), or a second view.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from drivers.camera.config import load_camera_config
from drivers.camera.scene.frames import SceneRenderer
from drivers.camera.scene.sampling import camera_for, frame_scene, session_pose

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config" / "table.example.toml"
BANDS = ((1, 5), (6, 10), (11, 15), (16, 20))


def stack_errors(tier: str, seed: int, count: int) -> tuple[list[tuple[int, float]], list[bool]]:
    """Every stack's (count, apparent height's error in chips), and per box with chips
    whether all its stacks are within half a chip, over ``count`` frames."""
    cfg = load_camera_config(CONFIG)
    renderer = SceneRenderer(cfg, tier, seed)
    thickness = renderer.model.thickness_mm
    stacks: list[tuple[int, float]] = []
    boxes: list[bool] = []
    for index in range(count):
        scene = frame_scene(cfg, renderer.tier, seed, index, renderer.model, renderer.base)
        pose = session_pose(renderer.base, renderer.tier, seed, scene.session)
        camera = camera_for(renderer.base, pose, 1280, 720)
        eye = np.array(camera.pose.position[:2])
        height = camera.pose.height_mm
        per_box: dict[int, list[float]] = {}
        for stack in scene.stacks:
            foot = np.array(stack.chips[0].bottom[:2])
            top = np.array(stack.chips[-1].bottom[:2])
            away = foot - eye
            reach = float(np.linalg.norm(away))
            tan_view = reach / height
            n = len(stack.chips)
            true_height = -stack.chips[-1].bottom[2] + thickness
            lean = float((top - foot) @ (away / reach)) / (thickness * tan_view)
            error = lean + (true_height - n * thickness) / thickness
            stacks.append((n, error))
            per_box.setdefault(stack.box, []).append(error)
        boxes.extend(all(abs(e) < 0.5 for e in errs) for errs in per_box.values())
    return stacks, boxes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=300)
    p.add_argument("--count", type=int, default=40, help="frames a tier")
    p.add_argument("--tiers", nargs="+", default=["mild", "medium", "hard", "overhead"])
    args = p.parse_args()
    print(
        f"seed {args.seed}, {args.count} frames a tier; a stack counts right by its height "
        "alone where the lean along the view moves it less than half a chip"
    )
    for tier in args.tiers:
        stacks, boxes = stack_errors(tier, args.seed, args.count)
        parts = []
        for lo, hi in BANDS:
            errs = [abs(e) for n, e in stacks if lo <= n <= hi]
            if errs:
                share = 100 * sum(e < 0.5 for e in errs) / len(errs)
                parts.append(f"{lo}-{hi} chips {share:3.0f}% of {len(errs)}")
        worst = max((abs(e) for _, e in stacks), default=math.nan)
        print(
            f"  {tier:<9} boxes with chips countable by height: {sum(boxes)}/{len(boxes)} = "
            f"{100 * sum(boxes) / max(len(boxes), 1):.1f}%;  stacks: {'; '.join(parts)}; "
            f"largest error {worst:.2f} chip"
        )


if __name__ == "__main__":
    main()
