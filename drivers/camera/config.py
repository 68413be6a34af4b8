"""The ``[camera]`` section of the table config: a typed, validated, frozen view of it.

Only ``[camera]`` is read; the other top-level sections of the table config belong to other
parts of floorctl and are ignored here. A bad key or value refuses to load with a
:class:`CameraConfigError` naming the file, the key and the value.

Layout coordinates are millimetres on the printed layout: x to the right, y down, as the
layout is seen from the camera over the dealer's side (the dealer is at the bottom, largest y).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The stack of each denomination a technician places to learn the table (calibrate --learn).
LEARNING_STACK = 5

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


class CameraConfigError(ValueError):
    """A ``[camera]`` key or value that cannot be used; the message names file, key and value."""


@dataclass(frozen=True)
class ChipSpec:
    value: int  # whole dollars
    colour: tuple[int, int, int]  # RGB as the chip looks under the table's lights
    name: str


@dataclass(frozen=True)
class FiducialSpec:
    code: str  # the text encoded in the QR code
    center_mm: tuple[float, float]
    size_mm: float  # side of the code's module area (the quiet zone is outside it)


@dataclass(frozen=True)
class BoxArea:
    box: int
    center_mm: tuple[float, float]  # centre of the betting circle
    radius_mm: float


@dataclass(frozen=True)
class LayoutSpec:
    width_mm: float
    height_mm: float
    felt: tuple[int, int, int]
    print_colour: tuple[int, int, int]
    chip_diameter_mm: float
    chip_height_mm: float  # one chip's thickness: with the camera's pose it sets each box's step
    max_stack: int
    # How far a stack may lean, per chip, on this table (mm): along the camera's view a lean
    # looks like height, so a count such a lean could change is reported unsure.
    stack_lean_mm: float = 0.25


@dataclass(frozen=True)
class LearnedChip:
    value: int
    # The chip's face and edge band as measured: white-balanced against the printed white
    # and scaled to the cloth's configured ``felt``, so in the same terms as ``colour``.
    face: tuple[int, int, int]
    side: tuple[int, int, int]
    runs: int = 1  # learning runs these colours are the mean of


@dataclass(frozen=True)
class LearnedBox:
    box: int
    step_mm: float  # measured: how far each further chip showed, along the parallax
    direction_deg: float  # the parallax direction on the layout (0 = +x, 90 = +y)


@dataclass(frozen=True)
class LearnedSpec:
    """What ``floorctl calibrate --learn`` measured on this table (``[camera.learned]``)."""

    focal_px: float | None  # the camera's focal length at ``width`` pixels across (None:
    k1: float  # its radial distortion                  not learned, fitted frame by frame)
    width: int
    chip_height_mm: float
    white: tuple[int, int, int]  # the layout's printed white as the camera saw it, unbalanced
    chips: tuple[LearnedChip, ...]
    boxes: tuple[LearnedBox, ...]
    runs: int = 1  # learning runs the chip height is the mean of


@dataclass(frozen=True)
class CameraConfig:
    path: Path
    source: str
    resolution: tuple[int, int]
    stable_frames: int
    min_confidence: float
    relocate_every: int
    min_fiducials: int
    black_level: float
    work_px_per_mm: float
    layout: LayoutSpec
    chips: tuple[ChipSpec, ...]
    fiducials: tuple[FiducialSpec, ...]
    boxes: tuple[BoxArea, ...]
    learned: LearnedSpec | None = None

    def chip_by_value(self, value: int) -> ChipSpec:
        for chip in self.chips:
            if chip.value == value:
                return chip
        raise KeyError(value)


class _Reader:
    """Reads typed values from one table, naming file and dotted key in every error."""

    def __init__(self, path: Path, table: Mapping[str, Any], where: str) -> None:
        self.path = path
        self.table = table
        self.where = where
        self.used: set[str] = set()

    def fail(self, key: str, value: object, why: str) -> CameraConfigError:
        return CameraConfigError(f"{self.path}: {self.where}.{key} = {value!r}: {why}")

    def _get(self, key: str, default: object) -> object:
        self.used.add(key)
        if key in self.table:
            return self.table[key]
        if default is _REQUIRED:
            raise CameraConfigError(f"{self.path}: {self.where}.{key} is missing")
        return default

    def number(
        self,
        key: str,
        default: object = None,
        *,
        low: float | None = None,
        high: float | None = None,
        integer: bool = False,
    ) -> float:
        value = self._get(key, _REQUIRED if default is None else default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, value, "must be a number")
        if integer and not isinstance(value, int):
            raise self.fail(key, value, "must be a whole number")
        if low is not None and value < low:
            raise self.fail(key, value, f"must be at least {low:g}")
        if high is not None and value > high:
            raise self.fail(key, value, f"must be at most {high:g}")
        return float(value)

    def integer(
        self, key: str, default: object = None, *, low: int | None = None, high: int | None = None
    ) -> int:
        return int(self.number(key, default, low=low, high=high, integer=True))

    def string(self, key: str, default: object = None) -> str:
        value = self._get(key, _REQUIRED if default is None else default)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, value, "must be a non-empty string")
        return value

    def colour(self, key: str, default: object = None) -> tuple[int, int, int]:
        value = self._get(key, _REQUIRED if default is None else default)
        if not isinstance(value, str) or not _HEX.match(value):
            raise self.fail(key, value, 'must be a colour "#RRGGBB"')
        return (int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16))

    def pair(self, key: str, default: object = None) -> tuple[float, float]:
        value = self._get(key, _REQUIRED if default is None else default)
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            raise self.fail(key, value, "must be a pair of numbers [x, y]")
        return (float(value[0]), float(value[1]))

    def tables(self, key: str) -> list[_Reader]:
        value = self._get(key, _REQUIRED)
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            raise self.fail(key, value, f"must be one or more [[{self.where}.{key}]] tables")
        return [_Reader(self.path, v, f"{self.where}.{key}[{i}]") for i, v in enumerate(value)]

    def sub(self, key: str) -> _Reader:
        value = self._get(key, _REQUIRED)
        if not isinstance(value, dict):
            raise self.fail(key, value, f"must be a [{self.where}.{key}] table")
        return _Reader(self.path, value, f"{self.where}.{key}")

    def finish(self) -> None:
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            key = unknown[0]
            raise self.fail(key, self.table[key], "unknown key")


_REQUIRED = object()


def load_camera_config(path: str | Path) -> CameraConfig:
    """Load and check the ``[camera]`` section of the TOML table config at ``path``."""
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CameraConfigError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as err:
        raise CameraConfigError(f"{path}: not valid TOML: {err}") from None
    if "camera" not in document:
        raise CameraConfigError(f"{path}: has no [camera] section")
    if not isinstance(document["camera"], dict):
        raise CameraConfigError(f"{path}: camera = {document['camera']!r}: must be a table")
    return camera_config_from_dict(document["camera"], path)


def camera_config_from_dict(table: Mapping[str, Any], path: Path) -> CameraConfig:
    r = _Reader(path, table, "camera")
    source = r.string("source", "0")
    resolution_raw = r.pair("resolution", [1280, 720])
    if not all(v.is_integer() and 64 <= v <= 8192 for v in resolution_raw):
        raise r.fail("resolution", list(resolution_raw), "must be two whole numbers 64..8192")
    resolution = (int(resolution_raw[0]), int(resolution_raw[1]))
    stable_frames = r.integer("stable_frames", 8, low=1, high=1000)
    min_confidence = r.number("min_confidence", 0.8, low=0.0, high=1.0)
    relocate_every = r.integer("relocate_every", 30, low=1, high=100000)
    min_fiducials = r.integer("min_fiducials", 2, low=1)
    black_level = r.number("black_level", 12, low=0, high=255)
    work_px_per_mm = r.number("work_px_per_mm", 1.0, low=0.25, high=8)

    lr = r.sub("layout")
    layout = LayoutSpec(
        width_mm=lr.number("width_mm", low=10),
        height_mm=lr.number("height_mm", low=10),
        felt=lr.colour("felt"),
        print_colour=lr.colour("print", "#9cc3e6"),
        chip_diameter_mm=lr.number("chip_diameter_mm", 39, low=10, high=100),
        chip_height_mm=lr.number("chip_height_mm", 3.3, low=1, high=10),
        max_stack=lr.integer("max_stack", 20, low=1, high=40),
        stack_lean_mm=lr.number("stack_lean_mm", 0.25, low=0, high=2),
    )
    _no_fixed_step(lr)
    lr.finish()

    chips: list[ChipSpec] = []
    for cr in r.tables("chips"):
        value = cr.integer("value", low=1)
        chip = ChipSpec(
            value=value, colour=cr.colour("colour"), name=cr.string("name", f"${value}")
        )
        cr.finish()
        for other in chips:
            if other.value == chip.value:
                raise cr.fail("value", value, "is given to two chips")
            if _colour_distance(other.colour, chip.colour) < 40:
                raise cr.fail(
                    "colour",
                    "#{:02x}{:02x}{:02x}".format(*chip.colour),
                    f"too close to the ${other.value} chip's colour to tell apart",
                )
        if _colour_distance(layout.felt, chip.colour) < 40:
            raise cr.fail("colour", "#{:02x}{:02x}{:02x}".format(*chip.colour), "too close to felt")
        chips.append(chip)

    fiducials: list[FiducialSpec] = []
    for fr in r.tables("fiducials"):
        fid = FiducialSpec(
            code=fr.string("code"),
            center_mm=fr.pair("center_mm"),
            size_mm=fr.number("size_mm", low=10, high=1000),
        )
        fr.finish()
        if any(f.code == fid.code for f in fiducials):
            raise fr.fail("code", fid.code, "is used by two fiducials")
        _check_inside(fr, "center_mm", fid.center_mm, layout)
        fiducials.append(fid)
    if min_fiducials > len(fiducials):
        raise r.fail("min_fiducials", min_fiducials, f"only {len(fiducials)} fiducials are listed")

    boxes: list[BoxArea] = []
    for br in r.tables("boxes"):
        area = BoxArea(
            box=br.integer("box", low=1, high=99),
            center_mm=br.pair("center_mm"),
            radius_mm=br.number("radius_mm", low=layout.chip_diameter_mm / 2, high=1000),
        )
        _no_fixed_step(br)
        br.finish()
        if any(b.box == area.box for b in boxes):
            raise br.fail("box", area.box, "is listed twice")
        _check_inside(br, "center_mm", area.center_mm, layout)
        boxes.append(area)
    learned = None
    if "learned" in table:
        learned = _learned(r.sub("learned"), chips, boxes)
    else:
        r.used.add("learned")
    r.finish()
    return CameraConfig(
        path=path,
        source=source,
        resolution=resolution,
        stable_frames=stable_frames,
        min_confidence=min_confidence,
        relocate_every=relocate_every,
        min_fiducials=min_fiducials,
        black_level=black_level,
        work_px_per_mm=work_px_per_mm,
        layout=layout,
        chips=tuple(sorted(chips, key=lambda c: c.value)),
        fiducials=tuple(fiducials),
        boxes=tuple(sorted(boxes, key=lambda b: b.box)),
        learned=learned,
    )


def _no_fixed_step(r: _Reader) -> None:
    if "chip_step_mm" in r.table:
        raise r.fail(
            "chip_step_mm",
            r.table["chip_step_mm"],
            "is no longer used: each box's step follows from the camera's pose and "
            "chip_height_mm (measure it with floorctl calibrate --learn)",
        )


def _learned(r: _Reader, chips: list[ChipSpec], boxes: list[BoxArea]) -> LearnedSpec:
    lens = [k for k in ("focal_px", "k1", "width") if k in r.table]
    if lens and len(lens) < 3:
        missing = sorted({"focal_px", "k1", "width"} - set(lens))
        raise CameraConfigError(
            f"{r.path}: {r.where}.{missing[0]} is missing (the lens is focal_px, k1 and width)"
        )
    width = r.integer("width", 0, low=64, high=8192) if lens else 0
    learned_chips: list[LearnedChip] = []
    for cr in r.tables("chips"):
        chip = LearnedChip(
            cr.integer("value", low=1),
            cr.colour("face"),
            cr.colour("side"),
            cr.integer("runs", 1, low=1, high=10000),
        )
        cr.finish()
        if not any(c.value == chip.value for c in chips):
            raise cr.fail("value", chip.value, "is not one of the [[camera.chips]]")
        if any(c.value == chip.value for c in learned_chips):
            raise cr.fail("value", chip.value, "is learned twice")
        learned_chips.append(chip)
    learned_boxes: list[LearnedBox] = []
    for br in r.tables("boxes"):
        box = LearnedBox(
            br.integer("box", low=1, high=99),
            br.number("step_mm", low=0, high=100),
            br.number("direction_deg", low=-360, high=360),
        )
        br.finish()
        if not any(b.box == box.box for b in boxes):
            raise br.fail("box", box.box, "is not one of the [[camera.boxes]]")
        learned_boxes.append(box)
    spec = LearnedSpec(
        focal_px=r.number("focal_px", low=10, high=100000) if lens else None,
        k1=r.number("k1", low=-2, high=2) if lens else 0.0,
        width=width,
        chip_height_mm=r.number("chip_height_mm", low=1, high=10),
        white=r.colour("white"),
        chips=tuple(sorted(learned_chips, key=lambda c: c.value)),
        boxes=tuple(sorted(learned_boxes, key=lambda b: b.box)),
        runs=r.integer("runs", 1, low=1, high=10000),
    )
    r.finish()
    return spec


def _check_inside(r: _Reader, key: str, point: tuple[float, float], layout: LayoutSpec) -> None:
    x, y = point
    if not (0 <= x <= layout.width_mm and 0 <= y <= layout.height_mm):
        raise r.fail(
            key,
            [x, y],
            f"is outside the layout ({layout.width_mm:g} x {layout.height_mm:g} mm)",
        )


def _colour_distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return float(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) ** 0.5)
