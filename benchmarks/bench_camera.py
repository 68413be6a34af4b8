"""Chip camera benchmark: both renderers in one run, per tier, and speed on one core.

    .venv/bin/python benchmarks/bench_camera.py [--eval DIR] [--eval-config FILE]
        [--own-frames 60] [--sequences 4] [--speed-frames 90]

Figures printed, per renderer and tier (``floorctl chips score``'s): exact box totals (boxes
clear of hands read right with at least the operating confidence), confident misreads (any
box, under a hand or not, read wrong at or above it), unsure boxes, fiducial failures.
Then, for a fixed camera (the table as it runs: each frame checked against the last fix, a
fiducial search every ``relocate_every`` frames), frames a second at 1280x720 and 1920x1080
on one core, with the time of a fixed reference workload measured in the same run (so that
figures from a loaded machine can be judged); and false change alarms over rendered
sequences with hands passing.

- Own renderer (``floorctl chips render``): rendered here with seeds used nowhere else.
- Independent renderer (``floorctl chips scene``, written separately from camera physics):
  ``--eval DIR`` holds its frames as ``DIR/720/<tier>/`` and ``DIR/1080/<tier>/``, made with
  seeds 100 and above (never used in tuning); without it they are rendered here with
  ``floorctl chips scene`` (seed 100 at 1280x720, seed 102 at 1920x1080). ``--learn-from``
  (folders of tuning-seed frames, seeds below 100) first learns a config the way a
  technician would (``floorctl calibrate --learn``) and adds rows read with it beside the
  config as given; ``--eval-config`` names such a config instead.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import structlog

from drivers.camera.config import CameraConfig, load_camera_config
from drivers.camera.detector import ChipDetector, U8Array
from drivers.camera.fiducials import LayoutTracker
from drivers.camera.monitor import CameraMonitor
from drivers.camera.render import render_frames, render_sequence, write_rendered
from drivers.camera.score import TierScore, format_scores, score_folder

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config" / "table.example.toml"
OWN_SEED = 4_000_517  # held apart: this benchmark only
OWN_SEED_1080 = 4_000_518
SEQUENCE_SEED = 4_100_000  # + sequence number
TIERS = ("mild", "medium", "hard", "overhead")
EVAL_SEED, EVAL_SEED_1080 = 100, 102


class _Frames:
    name = "bench"

    def __init__(self, frames: list[U8Array]) -> None:
        self._frames = iter(frames)

    def read(self) -> U8Array | None:
        return next(self._frames, None)

    def close(self) -> None:
        pass


def _reference_ms(frame: U8Array) -> float:
    """A fixed workload to measure this machine by: grey conversion and a blur of a frame."""
    t0 = time.perf_counter()
    for _ in range(20):
        cv2.GaussianBlur(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (0, 0), 2.0)
    return 1000 * (time.perf_counter() - t0) / 20


def fixed_camera_fps(cfg: CameraConfig, frames: list[U8Array], count: int) -> tuple[float, float]:
    """(frames a second, ms of the reference workload) for a fixed camera showing ``frames``
    in turn, as the table runs it: per frame the layout tracker (the fix checked, refined
    while the camera is still, searched again every relocate_every) and the detector."""
    detector = ChipDetector(cfg)
    layout = LayoutTracker(cfg)
    t0 = time.perf_counter()
    for i in range(count):
        frame = frames[i % len(frames)]
        fix = layout.update(frame)
        if fix is not None:
            detector.read(frame, fix)
    seconds = time.perf_counter() - t0
    return count / seconds, _reference_ms(frames[0])


def _print_scores(title: str, tiers: dict[str, TierScore], cfg: CameraConfig) -> None:
    print(f"\n{title}")
    print(format_scores(tiers, cfg.min_confidence))


def own_renderer(cfg: CameraConfig, work: Path, args: argparse.Namespace) -> None:
    for size, seed in (((1280, 720), OWN_SEED), ((1920, 1080), OWN_SEED_1080)):
        out = work / f"own-{size[0]}"
        count = args.own_frames if size[0] == 1280 else max(10, args.own_frames // 3)
        write_rendered(render_frames(cfg, count, seed, hand_prob=0.2, size=size), out, seed=seed)
        tiers = score_folder(out, cfg)
        tiers = {f"own-{size[1]}p": t for t in tiers.values()}
        _print_scores(
            f"own renderer, {count} stills at {size[0]}x{size[1]} (seed {seed})", tiers, cfg
        )
        # That renderer stands its stacks upright; so does a table where stacks are squared.
        upright = replace(cfg, layout=replace(cfg.layout, stack_lean_mm=0.0))
        tiers = {f"own-{size[1]}p": t for t in score_folder(out, upright).values()}
        _print_scores(
            "  the same, read by a table whose stacks stand straight (stack_lean_mm = 0)",
            tiers,
            upright,
        )
        # A fixed camera's video: fresh noise every frame, a hand passing every 25 frames, a
        # box's chips changed every 40.
        video = [f.image for f in render_sequence(cfg, args.speed_frames, seed + 7, size=size)]
        fps, ref = fixed_camera_fps(cfg, video, len(video))
        print(
            f"  fixed camera video, one core: {fps:.1f} frames/s at {size[0]}x{size[1]} "
            f"(reference workload {ref:.2f} ms in this run)"
        )


def false_alarms(cfg: CameraConfig, sequences: int) -> None:
    k = cfg.stable_frames
    stable_frames = alarms = real = reported = 0
    for s in range(sequences):
        frames = list(render_sequence(cfg, 150, SEQUENCE_SEED + s, change_every=50))
        monitor = CameraMonitor(cfg, _Frames([f.image for f in frames]))
        stable: dict[int, str] = {}
        for i, frame in enumerate(frames):
            events = monitor.step()
            truth = {b: str(a) for b, (a, _) in frame.scene.wagers().items()}
            window = frames[max(0, i - k - 2) : i + 1]
            if i >= k and all(
                {b: str(a) for b, (a, _) in f.scene.wagers().items()} == truth for f in window
            ):
                stable_frames += 1
            for event in events:
                box, amount = event["box"], event["amount"]
                if amount != truth[box]:
                    alarms += 1
                elif box in stable:
                    reported += 1
                stable[box] = amount
            if i:
                before = frames[i - 1].scene.wagers()
                real += sum(1 for b, w in frame.scene.wagers().items() if before[b][0] != w[0])
    print(
        f"\nown renderer, {sequences} x 150-frame sequences (seeds {SEQUENCE_SEED}+), hands "
        f"passing every 25 frames, a box changed every 50: {alarms} false change alarms in "
        f"{stable_frames} stable frames; {reported} of {real} real changes reported"
    )


def _render_eval(cfg_path: Path, out: Path) -> bool:
    for size, seed, count in (("1280x720", EVAL_SEED, 40), ("1920x1080", EVAL_SEED_1080, 10)):
        for tier in TIERS:
            where = out / size.split("x")[1] / tier
            cmd = [
                sys.executable, "-m", "controller.cli", "chips", "scene", "--config",
                str(cfg_path), "--tier", tier, "--seed", str(seed), "--count", str(count),
                "--size", size, "--out", str(where),
            ]  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"  cannot render the independent set: {done.stderr.strip()[-300:]}")
                return False
    return True


def learn_from_tuning(folders: list[Path], work: Path, per_chip: int = 4) -> Path | None:
    """A technician's calibration on tuning-seed frames: for each denomination, a few frames
    holding a single stack of it of known height (the truth file says what was placed),
    learned with ``floorctl calibrate --learn --no-lens --place`` run after run (the lens is
    not learned: the independent set's camera changes from session to session)."""
    import json

    from controller.cli import main as floorctl

    cfg = load_camera_config(CONFIG)
    wanted = {c.value: 0 for c in cfg.chips}
    runs: list[tuple[Path, str]] = []
    for folder in folders:
        for truth_path in sorted(folder.glob("*.json")):
            truth = json.loads(truth_path.read_text())
            place: dict[int, tuple[int, int]] = {}
            for box, entry in truth["boxes"].items():
                stacks = entry["stacks"]
                if int(box) in truth.get("occluded", []) or len(stacks) != 1:
                    continue
                stack = stacks[0]
                value = stack[0]
                uniform = len(set(stack)) == 1 and 2 <= len(stack) <= 15
                taken = value in (v for v, _ in place.values())
                if uniform and wanted[value] < per_chip and not taken:
                    place[int(box)] = (value, len(stack))
            if place:
                for value, _ in place.values():
                    wanted[value] += 1
                spec = ",".join(f"{b}:{v}x{n}" for b, (v, n) in place.items())
                runs.append((folder / truth["frame"], spec))
    current = CONFIG
    for i, (image, spec) in enumerate(runs):
        out = work / f"learned-{i}.toml"
        args = ["calibrate", "--learn", "--no-lens", "--config", str(current), "--source"]
        args += [str(image), "--place", spec, "--out", str(work / "overlay.png")]
        args += ["--write", str(out), "--force"]
        if floorctl(args) == 0:
            current = out
    print(f"learned from {len(runs)} tuning frames ({wanted} stacks per chip): {current}")
    return current if current != CONFIG else None


def independent_renderer(work: Path, args: argparse.Namespace) -> None:
    root = args.eval
    if root is None:
        root = work / "eval"
        print(f"\nrendering the independent set with floorctl chips scene into {root} ...")
        if not _render_eval(CONFIG, root):
            return
    configs = [("config as given", load_camera_config(CONFIG))]
    learned = args.eval_config
    if learned is None and args.learn_from:
        print("\nthe technician's calibration, on the tuning seeds' frames:")
        learned = learn_from_tuning(args.learn_from, work)
        if learned is not None and args.keep_learned is not None:
            shutil.copyfile(learned, args.keep_learned)
            print(f"learned config kept as {args.keep_learned}")
    if learned is not None:
        configs.append(("learned config", load_camera_config(learned)))
    for name, cfg in configs:
        for size in ("720", "1080"):
            tiers: dict[str, TierScore] = {}
            for tier in TIERS:
                folder = root / size / tier
                if folder.is_dir():
                    tiers |= {f"{t}-{size}p": s for t, s in score_folder(folder, cfg).items()}
            if tiers:
                _print_scores(f"independent renderer, {size}p, {name}", tiers, cfg)
        for size in ("720", "1080"):
            folder = root / size / "mild"
            if not folder.is_dir():
                continue
            images = sorted(p for p in folder.iterdir() if p.suffix in (".png", ".jpg"))[:8]
            frames = [np.asarray(cv2.imread(str(p)), np.uint8) for p in images]
            h, w = frames[0].shape[:2]
            # Its frames are stills: one shown again and again (a table where nothing moves:
            # each box read once, then checked), and all in turn (every frame a new scene,
            # every box read afresh: the worst case).
            still, ref = fixed_camera_fps(cfg, frames[:1], args.speed_frames)
            changing, _ = fixed_camera_fps(cfg, frames, args.speed_frames)
            print(
                f"  one core, {name}, {w}x{h}: {still:.1f} frames/s on a still scene, "
                f"{changing:.1f} with every frame a new scene "
                f"(reference workload {ref:.2f} ms in this run)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, help="the independent renderer's frames")
    parser.add_argument("--eval-config", type=Path, help="also read them with this config")
    parser.add_argument(
        "--learn-from",
        type=Path,
        nargs="*",
        default=[],
        metavar="DIR",
        help="tuning-seed frames of the independent renderer to learn a config from",
    )
    parser.add_argument(
        "--keep-learned",
        type=Path,
        metavar="FILE",
        help="write the config --learn-from learned to FILE (for camera_errors.py --thresholds)",
    )
    parser.add_argument("--own-frames", type=int, default=60, help="own renderer's stills")
    parser.add_argument("--sequences", type=int, default=4, help="150-frame sequences")
    parser.add_argument("--speed-frames", type=int, default=120, help="frames timed")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    cfg = load_camera_config(CONFIG)
    print(
        f"config {CONFIG.name}: operating confidence {cfg.min_confidence}, K={cfg.stable_frames}, "
        f"{cfg.work_px_per_mm} px/mm, one core (cv2 threads 1, pinned to one CPU)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-camera-") as tmp:
        work = Path(tmp)
        own_renderer(cfg, work, args)
        false_alarms(cfg, args.sequences)
        independent_renderer(work, args)


if __name__ == "__main__":
    main()
