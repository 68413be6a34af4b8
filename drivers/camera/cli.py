"""``floorctl chips render|detect`` and ``floorctl calibrate``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller import argtypes
from drivers.camera.config import (
    LEARNING_STACK,
    CameraConfig,
    CameraConfigError,
    load_camera_config,
)

# OpenCV, numpy and the modules built on them are imported by the functions that run the
# commands, never to parse them: `floorctl chips --help` and `calibrate --help` start without
# them (tests/test_cli.py checks).
if TYPE_CHECKING:
    from drivers.camera.detector import BoxReading, U8Array


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chips = subparsers.add_parser(
        "chips", help="the chip camera: render test frames, detect wagers"
    )
    sub = chips.add_subparsers(dest="chips_command", metavar="SUBCOMMAND")
    sub.required = True

    render = sub.add_parser(
        "render", help="render synthetic layout frames with the true wagers beside each"
    )
    render.add_argument("--config", required=True, type=Path, help="table config (TOML)")
    render.add_argument("--out", required=True, type=Path, help="folder to write into")
    render.add_argument("--count", type=argtypes.positive_int, default=20, help="frames to render")
    render.add_argument("--seed", type=int, default=0, help="random seed")
    render.add_argument(
        "--video",
        metavar="NAME",
        help="render one fixed camera's sequence into the video file DIR/NAME (.avi, MJPG) "
        "with the truths in DIR/NAME.jsonl, instead of independent stills",
    )
    render.add_argument("--hands", type=float, default=0.2, help="share of stills with a hand")
    render.set_defaults(func=_render)

    detect = sub.add_parser("detect", help="read the wagers in images, folders or video files")
    detect.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    detect.add_argument("--config", required=True, type=Path, help="table config (TOML)")
    detect.add_argument("--json", action="store_true", help="one JSON object per image")
    detect.set_defaults(func=_detect)

    score = sub.add_parser("score", help="read folders of frames and score against their truths")
    score.add_argument("folder", type=Path, metavar="DIR")
    score.add_argument("--config", required=True, type=Path, help="table config (TOML)")
    score.add_argument("--json", action="store_true", help="the scores as one JSON object")
    score.set_defaults(func=_score)

    # the independent evaluation renderer (drivers/camera/scene) adds `chips scene` itself
    from drivers.camera.scene.cli import add_parser as add_scene_parser

    add_scene_parser(sub)

    # the counting camera's side-view renderer (drivers/camera/sideview) adds `chips render-side`
    from drivers.camera.sideview.cli import add_parser as add_side_parser

    add_side_parser(sub)

    # the counting camera: calibration and reading (drivers/camera/counting)
    from drivers.camera.counting.cli import add_parsers as add_counting_parsers

    add_counting_parsers(sub)

    cal = subparsers.add_parser(
        "calibrate",
        help="check the camera over the layout (or, with --learn, learn the table's chips); "
        "ends with a PASS or FAIL verdict",
    )
    cal.add_argument("--config", required=True, type=Path, help="table config (TOML)")
    cal.add_argument(
        "--source", help="camera index, URL, video file, folder or image (default: [camera].source)"
    )
    cal.add_argument("--out", required=True, type=Path, help="the overlay image to write (PNG)")
    cal.add_argument(
        "--frames", type=argtypes.positive_int, default=30, help="frames to try before giving up"
    )
    cal.add_argument(
        "--learn",
        action="store_true",
        help="learn the table from stacks placed as the instructions say (printed first)",
    )
    cal.add_argument(
        "--stack",
        type=argtypes.positive_int,
        default=LEARNING_STACK,
        help=f"chips in each learning stack (default {LEARNING_STACK})",
    )
    cal.add_argument(
        "--write",
        type=Path,
        metavar="FILE",
        help="with --learn: the new config to write (default: TABLE.learned.toml beside the "
        "config); never the config itself",
    )
    cal.add_argument("--force", action="store_true", help="with --learn: replace FILE if it exists")
    cal.add_argument(
        "--place",
        metavar="BOX:VALUExCOUNT,...",
        help="with --learn: the stacks placed, when not the standard placement (e.g. "
        "1:25x10,3:1x5); chips learned before and not placed now are kept",
    )
    cal.add_argument(
        "--no-lens",
        action="store_true",
        help="with --learn: do not learn the lens (a zoom lens, or codes out of view)",
    )
    cal.set_defaults(func=_calibrate)


def _load(path: Path) -> CameraConfig | None:
    try:
        return load_camera_config(path)
    except CameraConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return None


def _render(args: argparse.Namespace) -> int:
    from drivers.camera.render import render_frames, render_sequence, write_rendered

    cfg = _load(args.config)
    if cfg is None:
        return 2
    if args.count < 1:
        print(f"error: --count {args.count}: must be at least 1", file=sys.stderr)
        return 2
    if args.video:
        frames = render_sequence(cfg, args.count, args.seed)
        video = args.out / args.video
        n = write_rendered(frames, args.out, seed=args.seed, video=video)
        print(f"wrote {n} frames to {video} (truths in {video.with_suffix('.jsonl')})")
    else:
        frames = render_frames(cfg, args.count, args.seed, hand_prob=args.hands)
        n = write_rendered(frames, args.out, seed=args.seed)
        print(f"wrote {n} frames with their truths to {args.out}")
    return 0


def _frames(path: Path) -> Iterator[tuple[str, U8Array | None, bool]]:
    """(label, frame, same camera as the previous frame) for every frame under ``path``."""
    from drivers.camera.sources import IMAGE_SUFFIXES, open_source

    if path.is_dir():
        for p in sorted(q for q in path.iterdir() if q.suffix.lower() in IMAGE_SUFFIXES):
            yield str(p), _imread(p), False
        return
    if path.suffix.lower() in IMAGE_SUFFIXES:
        yield str(path), _imread(path), False
        return
    source = open_source(str(path))
    i = 0
    try:
        while (frame := source.read()) is not None:
            yield f"{path}#{i}", frame, i > 0
            i += 1
    finally:
        source.close()


def _imread(path: Path) -> U8Array | None:
    import cv2
    import numpy as np

    frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
    return None if frame is None else np.asarray(frame, np.uint8)


def _box_dict(r: BoxReading) -> dict[str, Any]:
    out: dict[str, Any] = {
        "amount": str(r.amount),
        "chips": {str(v): n for v, n in r.chips.items()},
        "confidence": float(r.confidence),
    }
    if r.note:
        out["note"] = r.note
    return out


def _detect(args: argparse.Namespace) -> int:
    try:
        return _detect_all(args)
    except BrokenPipeError:  # the reader (head, less) has gone: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _detect_all(args: argparse.Namespace) -> int:
    from drivers.camera.detector import ChipDetector
    from drivers.camera.fiducials import LayoutTracker
    from drivers.camera.monitor import is_black
    from drivers.camera.sources import SourceError

    cfg = _load(args.config)
    if cfg is None:
        return 2
    detector = ChipDetector(cfg)
    status = 0
    for path in args.paths:
        if not path.exists():
            print(f"error: {path}: no such file or folder", file=sys.stderr)
            status = 1
            continue
        layout = LayoutTracker(cfg)
        try:
            for label, frame, same_camera in _frames(path):
                result: dict[str, Any] = {"image": label}
                if frame is None:
                    result["error"] = "cannot read the image"
                elif is_black(frame, cfg.black_level):
                    result["error"] = "black frame"
                else:
                    if not same_camera:
                        layout.drop()
                    fix = layout.update(frame)
                    if fix is None:
                        result["error"] = layout.reason
                    else:
                        reading = detector.read(frame, fix)
                        result["boxes"] = {
                            str(b): _box_dict(r) for b, r in sorted(reading.boxes.items())
                        }
                if "error" in result:
                    status = 1
                _print_result(result, args.json)
        except SourceError as err:
            print(f"error: {err}", file=sys.stderr)
            status = 1
    return status


def _score(args: argparse.Namespace) -> int:
    from drivers.camera.score import TruthError, format_scores, overall, score_folder

    cfg = _load(args.config)
    if cfg is None:
        return 2
    if not args.folder.is_dir():
        print(f"error: {args.folder}: not a folder", file=sys.stderr)
        return 2
    try:
        tiers = score_folder(args.folder, cfg)
    except (TruthError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not tiers:
        print(f"error: {args.folder}: no frames with truth files beside them", file=sys.stderr)
        return 2
    if args.json:
        doc = {
            "folder": str(args.folder),
            "min_confidence": cfg.min_confidence,
            "tiers": {name: t.to_dict() for name, t in sorted(tiers.items())},
            "overall": overall(tiers).to_dict(),
        }
        print(json.dumps(doc, indent=2))
    else:
        print(format_scores(tiers, cfg.min_confidence))
    return 0


def _print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result), flush=True)
        return
    if "error" in result:
        print(f"{result['image']}: {result['error']}", flush=True)
        return
    print(f"{result['image']}:")
    for box, r in result["boxes"].items():
        chips = ", ".join(f"{n} x ${v}" for v, n in r["chips"].items()) or "no chips"
        note = f"  ({r['note']})" if "note" in r else ""
        print(f"  box {box}: ${r['amount']:>6}  {chips:<40} confidence {r['confidence']:.2f}{note}")
    sys.stdout.flush()


def _calibrate(args: argparse.Namespace) -> int:
    """Every run ends with a verdict line, PASS or FAIL with the reason."""
    try:
        passed, reason = _calibration(args)
    except (OSError, ValueError) as err:
        passed, reason = False, str(err)
    print(f"{'PASS' if passed else 'FAIL'}: {reason}")
    return 0 if passed else 1


def _calibration(args: argparse.Namespace) -> tuple[bool, str]:
    from drivers.camera.detector import ChipDetector
    from drivers.camera.fiducials import locate_layout
    from drivers.camera.learn import (
        instructions,
        learned_section,
        measure,
        parse_placement,
        plan,
        verdict,
        write_learned,
    )
    from drivers.camera.monitor import is_black
    from drivers.camera.overlay import draw_overlay
    from drivers.camera.sources import SourceError, open_source

    cfg = _load(args.config)
    if cfg is None:
        return False, f"{args.config}: the config cannot be used (see above)"
    out_config: Path | None = None
    standard = args.place is None
    placement = plan(cfg, args.stack) if standard else parse_placement(args.place, cfg)
    if args.learn:
        print(instructions(cfg, placement, standard=standard))
        out_config = args.write or args.config.with_suffix(".learned.toml")
        if out_config.resolve() == args.config.resolve():
            return False, f"{out_config}: would overwrite the technician's config; name another"
        if out_config.exists() and not args.force:
            return False, f"{out_config} exists: remove it, name another, or add --force"
    spec = args.source or cfg.source
    try:
        source = open_source(spec, cfg.resolution)
    except SourceError as err:
        return False, str(err)
    frames: list[U8Array] = []
    search = None
    problem = f"no frames from {spec}"
    last_frame: U8Array | None = None
    try:
        for _ in range(max(1, args.frames)):
            frame = source.read()
            if frame is None:
                break
            last_frame = frame
            if is_black(frame, cfg.black_level):
                problem = f"black frame from {spec}: check the lens cap and the lights"
                continue
            search = locate_layout(frame, cfg)
            if search.fix is None:
                problem = search.reason
                continue
            frames.append(frame)
            if not args.learn or len(frames) >= min(args.frames, 5):
                break
    finally:
        source.close()
    if last_frame is None:
        return False, problem
    if not frames or search is None or search.fix is None:
        blank = search or locate_layout(last_frame, cfg)
        _write(args.out, draw_overlay(last_frame, cfg, blank, None))
        return False, f"{problem}; the last frame is in {args.out}"
    frame = frames[-1]
    fix = search.fix
    reading = ChipDetector(cfg).read(frame, fix)
    _write(args.out, draw_overlay(frame, cfg, search, reading))
    missing = [f.code for f in cfg.fiducials if f.code not in fix.found]
    h, w = frame.shape[:2]
    print(f"source {spec}: frame {w}x{h}")
    print(f"fiducials read: {len(fix.found)} of {len(cfg.fiducials)}", end="")
    print(f" (not read: {', '.join(missing)})" if missing else "")
    if search.unknown:
        print(f"other QR codes in view: {', '.join(search.unknown)}")
    print(f"layout fit error: {fix.error_mm:.2f} mm")
    if fix.camera is not None:
        x, y, height = fix.camera.centre
        print(
            f"camera: {height:.0f} mm over the cloth above layout point ({x:.0f}, {y:.0f}) mm, "
            f"{fix.camera.tilt_deg:.1f} degrees from the vertical"
        )
    if args.learn:
        lens = not args.no_lens
        learned = measure(cfg, frames, placement, standard=standard)
        passed, reason = verdict(cfg, learned, placement, standard=standard, lens=lens)
        print(f"overlay written to {args.out}")
        if not passed:
            return False, reason
        assert out_config is not None
        section = learned_section(cfg, learned, placement, lens=lens)
        write_learned(args.config, out_config, section)
        return True, f"{reason}; written to {out_config} (use it as the table's config)"
    for box, r in sorted(reading.boxes.items()):
        chips = ", ".join(f"{n} x ${v}" for v, n in r.chips.items()) or "no chips"
        note = f" ({r.note})" if r.note else ""
        print(f"box {box}: ${r.amount} {chips}, confidence {r.confidence:.2f}{note}")
    print(f"overlay written to {args.out}")
    if missing:
        return False, f"fiducials not read: {', '.join(missing)}"
    if fix.error_mm >= 5:
        return False, f"layout fit error {fix.error_mm:.1f} mm (5 mm at most)"
    if fix.camera is None:
        return False, "the camera's pose could not be fitted from the fiducials"
    return True, f"layout found, fit error {fix.error_mm:.2f} mm"


def _write(path: Path, img: U8Array) -> None:
    import cv2

    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), img):
        raise OSError(f"{path}: cannot write the overlay image")
