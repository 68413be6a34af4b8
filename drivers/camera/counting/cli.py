"""``floorctl chips calibrate-side`` and ``floorctl chips read-side``: the counting camera.

``calibrate-side`` places a camera's boxes from a picture with a target standing in each box,
learns the chips' edge colours from pictures of known stacks, and writes the calibration; or,
with ``--check``, tells whether the camera is still where it was calibrated. Every run ends
with a PASS or FAIL line and the reason (exit 0 or 1; bad arguments exit 2).
``read-side`` reads the boxes in pictures with a calibration and prints each box's wager or
``unsure`` with the reason.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

_PLACED = re.compile(r"^(\d+):(\d+)$")


def add_parsers(chips: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cal = chips.add_parser(
        "calibrate-side",
        help="calibrate a counting camera from its targets and known stacks (PASS or FAIL)",
        description="Place a counting camera's boxes from a picture with the BOX n target "
        "card standing in each box, learn the chips' colours from pictures of known stacks, "
        "and write the calibration. With --check, tell whether the camera has moved since.",
    )
    cal.add_argument("--table", required=True, type=Path, help="the table's description (JSON)")
    cal.add_argument("--camera", required=True, help="the camera's name in the table")
    cal.add_argument("--targets", type=Path, help="picture with a target card in each box")
    cal.add_argument(
        "--known",
        action="append",
        default=[],
        metavar="IMAGE=BOX:VALUE,...",
        help="a picture of known stacks of 10 chips and which denomination stands in which "
        "box (repeatable), e.g. known.png=3:25,4:100",
    )
    cal.add_argument("--out", type=Path, help="the calibration to write (JSON)")
    cal.add_argument(
        "--palette-from",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="also take the chip colours another camera's calibration learned (repeatable)",
    )
    cal.add_argument("--check", type=Path, metavar="IMAGE", help="check the fix on this picture")
    cal.add_argument("--calibration", type=Path, help="with --check: the calibration to check")
    cal.set_defaults(func=_calibrate)

    read = chips.add_parser(
        "read-side", help="read the boxes in counting-camera pictures with a calibration"
    )
    read.add_argument("--calibration", required=True, type=Path, help="from calibrate-side")
    read.add_argument("images", nargs="+", type=Path, help="pictures to read")
    read.add_argument("--json", action="store_true", help="one JSON object a picture")
    read.set_defaults(func=_read)


def _table(path: Path) -> dict[str, Any]:
    try:
        table = json.loads(path.read_text())
        table["boxes"], table["chips"]  # both must be there
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a table description ({err})") from err
    return table  # type: ignore[no-any-return]


def _image(path: Path) -> Any:
    import cv2

    img = cv2.imread(str(path))
    if img is None:
        raise ValueError(f"{path}: not a picture OpenCV can read")
    return img


def _placed(spec: str) -> tuple[Path, dict[int, int]]:
    path, _, rest = spec.rpartition("=")
    if not path or not rest:
        raise ValueError(f"--known {spec!r}: write IMAGE=BOX:VALUE,...")
    placed = {}
    for item in rest.split(","):
        m = _PLACED.match(item.strip())
        if not m:
            raise ValueError(f"--known {spec!r}: {item!r} is not BOX:VALUE")
        placed[int(m.group(1))] = int(m.group(2))
    return Path(path), placed


def _calibrate(args: argparse.Namespace) -> int:
    try:
        passed, reason = _calibration(args)
    except (OSError, ValueError) as err:
        passed, reason = False, str(err)
    print(f"{'PASS' if passed else 'FAIL'}: {reason}")
    return 0 if passed else 1


def _calibration(args: argparse.Namespace) -> tuple[bool, str]:
    from drivers.camera.counting.calibration import Calibration, calibrate, check_fix
    from drivers.camera.counting.reader import Palette, learn_palette, missing_denominations

    if args.check:
        if not args.calibration:
            raise ValueError("--check needs --calibration FILE")
        cal = Calibration.load(args.calibration)
        return check_fix(cal, _image(args.check))
    table = _table(args.table)
    cams = {c["name"]: c["boxes"] for c in table.get("cameras", [])}
    if args.camera not in cams:
        raise ValueError(f"{args.table}: no camera {args.camera!r} (cameras: {', '.join(cams)})")
    if not args.targets or not args.out:
        raise ValueError("calibrating needs --targets IMAGE and --out FILE")
    result = calibrate(args.camera, _image(args.targets), list(cams[args.camera]), table)
    if not result.passed or result.calibration is None:
        return False, result.reason
    cal = result.calibration
    known = [(_image(p), cal, placed) for p, placed in map(_placed, args.known)]
    palette = learn_palette(known)[0]
    for other in args.palette_from:  # what this camera learned itself comes first
        theirs = Palette.from_json(Calibration.load(other).palette)
        for v in theirs.means:
            if v not in palette.means:
                palette.means[v], palette.spreads[v] = theirs.means[v], theirs.spreads[v]
    values = [int(c["value"]) for c in table["chips"]]
    cal.palette, cal.values = palette.to_json(), values
    cal.save(args.out)
    missing = missing_denominations(palette, values)
    if missing:
        names = ", ".join(f"${v}" for v in missing)
        return False, (
            f"camera {args.camera}: placed, but the colours of {names} not learned; it reads "
            f"nothing until they are (stand a stack of 10 of each in its boxes, or give "
            f"--palette-from another camera's calibration); written to {args.out}"
        )
    return True, f"{result.reason}; {len(values)} chip colours learned; written to {args.out}"


def _read(args: argparse.Namespace) -> int:
    from drivers.camera.counting.calibration import Calibration, CalibrationError
    from drivers.camera.counting.reader import BoxRead, Palette, read_boxes

    try:
        cal = Calibration.load(args.calibration)
    except CalibrationError as err:
        print(f"error: {err}")
        return 2
    palette = Palette.from_json(cal.palette)
    missing = [v for v in cal.values if v not in palette.means]
    status = 0
    for path in args.images:
        try:
            image = _image(path)
        except ValueError as err:
            print(f"error: {err}")
            status = 2
            continue
        reads = read_boxes(image, cal, palette)
        if missing:  # a chip it has not learned would be read as the nearest it has
            why = "chip colours not all learned (" + ", ".join(f"${v}" for v in missing) + ")"
            reads = {b: BoxRead(b, cal.camera, None, (), why) for b in reads}
        if args.json:
            print(
                json.dumps(
                    {
                        "image": str(path),
                        "boxes": {
                            str(b): {"total": r.total, "reason": r.reason} for b, r in reads.items()
                        },
                    }
                )
            )
            continue
        for b, r in reads.items():
            said = f"${r.total}" if not r.unsure else f"unsure: {r.reason}"
            print(f"{path.name} box {b}: {said}")
    return status
