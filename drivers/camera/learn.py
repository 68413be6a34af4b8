"""``floorctl calibrate --learn``: a technician's calibration that learns the table.

The technician places one stack of known height of each denomination, lowest value in the
first box (``instructions()``), and points the camera at the layout. From one frame or a few,
this measures, under that table's lights:

- the camera's focal length and lens distortion (from the fiducials' corners), so that the
  pose (where the camera is, hence each box's parallax direction and chip step) is fitted
  from fewer codes, frame after frame, with the lens known;
- the chip thickness the stacks show (their measured heights against the pose's), so the
  step per chip in each box comes out right for these chips;
- each chip's face and side colour, white-balanced against the layout's printed white and
  scaled to the cloth, so a shaded side is compared with a shaded side;

and writes them as a ``[camera.learned]`` section into a new copy of the technician's config
(the config itself is never overwritten). Every run ends with a verdict line, ``PASS`` or
``FAIL: <reason>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tomlkit
import tomlkit.items

from drivers.camera.config import CameraConfig, camera_config_from_dict
from drivers.camera.detector import (
    ChipDetector,
    FrameReading,
    StackSurvey,
    U8Array,
    printed_white,
)
from drivers.camera.fiducials import LayoutFix, locate_layout

Placement = dict[int, tuple[int, int]]  # box -> (chip value, chips in its one stack)


def plan(cfg: CameraConfig, stack: int) -> Placement:
    """The standard placement: each denomination in turn, lowest value in the lowest-numbered
    box, ``stack`` chips high; the boxes after them stay empty."""
    boxes = [b.box for b in cfg.boxes]
    return {box: (chip.value, stack) for box, chip in zip(boxes, cfg.chips, strict=False)}


def parse_placement(text: str, cfg: CameraConfig) -> Placement:
    """``BOX:VALUExCOUNT,...`` (``1:25x10,3:1x5``): the stacks the technician chose to place.
    Raises ValueError naming what is wrong."""
    out: Placement = {}
    boxes = {b.box for b in cfg.boxes}
    values = {c.value for c in cfg.chips}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            box_s, rest = part.split(":")
            value_s, count_s = rest.lower().split("x")
            box, value, count = int(box_s), int(value_s), int(count_s)
        except ValueError:
            raise ValueError(f"--place {part!r}: expected BOX:VALUExCOUNT, e.g. 3:25x10") from None
        if box not in boxes:
            raise ValueError(f"--place {part!r}: box {box} is not on the layout")
        if value not in values:
            raise ValueError(f"--place {part!r}: there is no ${value} chip in [[camera.chips]]")
        if not 1 <= count <= cfg.layout.max_stack:
            raise ValueError(f"--place {part!r}: a stack of 1..{cfg.layout.max_stack} chips")
        if box in out:
            raise ValueError(f"--place {part!r}: box {box} is placed twice")
        out[box] = (value, count)
    if not out:
        raise ValueError("--place: no stacks given")
    return out


def instructions(cfg: CameraConfig, placement: Placement, *, standard: bool) -> str:
    lines = [
        "Learning the table: place, in the betting circles,",
    ]
    for box, (value, count) in placement.items():
        name = cfg.chip_by_value(value).name
        lines.append(f"  box {box}: one stack of {count} {name} chips (${value}), near the middle")
    empty = [str(b.box) for b in cfg.boxes if b.box not in placement]
    if empty and standard:
        lines.append(f"  box {', '.join(empty)}: nothing")
    lines.append(
        "Nothing else on the layout, no hands over it, all four QR codes in view; the lights "
        "as they are during play."
    )
    return "\n".join(lines)


@dataclass
class Learned:
    """What the frames measured (averaged over the frames the layout was found in)."""

    frames: int = 0
    focal: list[float] = field(default_factory=list)
    k1: list[float] = field(default_factory=list)
    white: list[np.ndarray] = field(default_factory=list)
    stacks: dict[int, list[StackSurvey]] = field(default_factory=dict)
    fit_errors: list[float] = field(default_factory=list)
    missing_codes: set[str] = field(default_factory=set)
    empty_not_empty: set[int] = field(default_factory=set)
    last: tuple[U8Array, LayoutFix, FrameReading] | None = None
    width: int = 0


def measure(
    cfg: CameraConfig, frames: list[U8Array], placement: Placement, *, standard: bool
) -> Learned:
    detector = ChipDetector(cfg)
    out = Learned()
    for frame in frames:
        search = locate_layout(frame, cfg)
        fix = search.fix
        if fix is None:
            continue
        out.frames += 1
        out.width = frame.shape[1]
        out.fit_errors.append(fix.error_mm)
        out.missing_codes |= {f.code for f in cfg.fiducials if f.code not in fix.found}
        if fix.camera is not None:
            out.focal.append(float(fix.camera.matrix[0, 0]))
            out.k1.append(float(fix.camera.dist[0]))
        out.white.append(printed_white(frame, fix))
        reading, found = detector.survey(frame, fix, {b: n for b, (_, n) in placement.items()})
        for s in found:
            out.stacks.setdefault(s.box, []).append(s)
        for box in (b.box for b in cfg.boxes if b.box not in placement):
            if not standard:
                continue  # the technician's own placement says nothing of the other boxes
            if reading.boxes[box].stacks or reading.boxes[box].confidence < cfg.min_confidence:
                out.empty_not_empty.add(box)
        out.last = (frame, fix, reading)
    return out


def verdict(
    cfg: CameraConfig, learned: Learned, placement: Placement, *, standard: bool, lens: bool
) -> tuple[bool, str]:
    """(passed, the reason): the first thing that makes these measurements unfit to use."""
    if standard and len(cfg.chips) > len(cfg.boxes):
        return False, (
            f"{len(cfg.chips)} denominations but {len(cfg.boxes)} boxes: learn them in two "
            "runs, each with --place"
        )
    if learned.frames == 0:
        return False, "the layout was not found in any frame (see the overlay)"
    if learned.missing_codes and lens:
        return False, (
            f"fiducials not read: {', '.join(sorted(learned.missing_codes))} (all are needed "
            "to learn the lens; --no-lens learns the chips alone)"
        )
    worst = max(learned.fit_errors)
    if worst >= 5.0:
        return False, f"layout fit error {worst:.1f} mm (5 mm at most): check the fiducials"
    if lens and not learned.focal:
        return False, "the camera's pose could not be fitted (is it looking straight down?)"
    for box, (value, count) in placement.items():
        surveys = learned.stacks.get(box, [])
        if len(surveys) < learned.frames:
            return False, f"box {box}: no single stack of ${value} chips found"
        exact = float(np.median([s.exact for s in surveys]))
        if abs(exact - count) > max(1.0, 0.2 * count):
            return False, (
                f"box {box}: the stack shows {exact:.1f} chips' height, not {count}: "
                f"is it {count} chips high, standing upright?"
            )
    if learned.empty_not_empty:
        boxes = ", ".join(str(b) for b in sorted(learned.empty_not_empty))
        return False, f"box {boxes}: should be empty but something is seen there"
    sides = _colours(learned, placement, face=False)
    faces = _colours(learned, placement, face=True)
    values = sorted({v for v, _ in placement.values()})
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            for what, table in (("sides", sides), ("faces", faces)):
                if _too_close(table[a], table[b]):
                    return False, (
                        f"the ${a} and ${b} chips' {what} look alike under these lights: "
                        "they cannot be told apart"
                    )
    return True, f"learned from {learned.frames} frame(s)"


def _colours(learned: Learned, placement: Placement, *, face: bool) -> dict[int, np.ndarray]:
    parts: dict[int, list[np.ndarray]] = {}
    for box, (value, _) in placement.items():
        for s in learned.stacks.get(box, []):
            if face and s.face is not None:
                parts.setdefault(value, []).append(s.face)
            elif not face:
                parts.setdefault(value, []).extend(list(s.sides))
    return {v: np.median(np.array(p), axis=0) for v, p in parts.items() if p}


def _too_close(a: np.ndarray, b: np.ndarray) -> bool:
    """Two colours the detector could confuse: near in chromaticity and lightness alike."""
    ca, cb = a / (a.sum() + 0.03), b / (b.sum() + 0.03)
    la, lb = float(a @ [0.114, 0.587, 0.299]), float(b @ [0.114, 0.587, 0.299])
    light = abs(math.log((la + 0.01) / (lb + 0.01)))
    return bool(np.linalg.norm(ca - cb) < 0.04 and light < math.log(1.6))


def _hex(bgr: np.ndarray) -> str:
    r, g, b = (int(np.clip(round(float(v) * 255), 0, 255)) for v in bgr[::-1])
    return f"#{r:02x}{g:02x}{b:02x}"


def learned_section(
    cfg: CameraConfig, learned: Learned, placement: Placement, *, lens: bool = True
) -> tomlkit.items.Table:
    """The ``[camera.learned]`` section: this run's measurements, and the chips learned in
    an earlier run (in the config given) that this run did not place."""
    heights = [
        float(np.median([s.exact for s in learned.stacks[box]])) / count
        for box, (_, count) in placement.items()
    ]
    section = tomlkit.table()
    placed = ", ".join(f"box {b}: {n} x ${v}" for b, (v, n) in placement.items())
    section.add(tomlkit.comment(f"measured by floorctl calibrate --learn ({placed})"))
    if lens:
        section["focal_px"] = round(float(np.median(learned.focal)), 2)
        section["k1"] = round(float(np.median(learned.k1)), 5)
        section["width"] = learned.width
    # The chip height is learned with the lens: without it the pose of each frame is fitted
    # afresh, and its error would be learned as the chips'.
    if lens:
        height = cfg.layout.chip_height_mm * float(np.median(heights))
    else:
        height = cfg.layout.chip_height_mm
    runs = 1
    if cfg.learned is not None:  # a further run: every run counts alike
        before = cfg.learned.runs
        if lens:
            height = (height + before * cfg.learned.chip_height_mm) / (before + 1)
        else:
            height = cfg.learned.chip_height_mm
        runs = before + 1
    section["runs"] = runs
    section["chip_height_mm"] = round(height, 3)
    section["white"] = _hex(np.median(np.array(learned.white), axis=0) / 255.0)
    chips = tomlkit.aot()
    faces = _colours(learned, placement, face=True)
    sides = _colours(learned, placement, face=False)
    earlier = {c.value: c for c in cfg.learned.chips} if cfg.learned is not None else {}
    for value in sorted(set(sides) | set(earlier)):
        chip = tomlkit.table()
        chip["value"] = value
        chip["runs"] = earlier[value].runs if value in earlier and value not in sides else 1
        if value in sides:
            face, side = faces.get(value, sides[value]), sides[value]
            if value in earlier:  # learned again: this run and the earlier ones count alike
                w = earlier[value].runs
                face = (face + w * np.array(earlier[value].face[::-1]) / 255.0) / (w + 1)
                side = (side + w * np.array(earlier[value].side[::-1]) / 255.0) / (w + 1)
                chip["runs"] = w + 1
            chip["face"] = _hex(face)
            chip["side"] = _hex(side)
        else:
            chip["face"] = "#{:02x}{:02x}{:02x}".format(*earlier[value].face)
            chip["side"] = "#{:02x}{:02x}{:02x}".format(*earlier[value].side)
        chips.append(chip)
    section["chips"] = chips
    boxes = tomlkit.aot()
    for box in placement:
        surveys = learned.stacks[box]
        entry = tomlkit.table()
        entry["box"] = box
        entry["step_mm"] = round(float(np.median([s.step_mm for s in surveys])), 3)
        entry["direction_deg"] = round(float(np.median([s.direction_deg for s in surveys])), 2)
        boxes.append(entry)
    section["boxes"] = boxes
    return section


def write_learned(config_path: Path, out: Path, section: tomlkit.items.Table) -> None:
    """Write ``out``: the technician's config as written, with ``[camera.learned]`` set to
    ``section`` (replacing one learned before). The result is checked by the loader."""
    document: Any = tomlkit.parse(config_path.read_text(encoding="utf-8"))
    camera = document["camera"]
    if "learned" in camera:
        del camera["learned"]
    text = tomlkit.dumps(document).rstrip("\n") + "\n\n"
    learned = tomlkit.document()
    learned.add("camera", tomlkit.table(is_super_table=True))
    learned["camera"]["learned"] = section
    text += tomlkit.dumps(learned)
    parsed = tomlkit.parse(text).unwrap()
    camera_config_from_dict(parsed["camera"], out)  # raises if what we wrote cannot load
    out.write_text(text, encoding="utf-8")
