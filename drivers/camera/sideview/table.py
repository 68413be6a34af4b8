"""The table the side view draws: its arc of boxes, its rail, its cameras and its chips.

Coordinates are millimetres on the cloth, seen from the dealer: x to the dealer's right, y away
from the dealer towards the players, z up from the cloth. The chip tray's front edge runs along
y = 0; the boxes stand on an arc in front of it and the padded rail closes the table beyond
them. A camera sits on the dealer's side (at the tray's edge or its corners), 3-12 cm above the
cloth, and covers the boxes the table assigns it.

The built-in table (:func:`default_table`) has seven boxes on an arc of 750 mm about a point
100 mm behind the tray, the rail at 1,150 mm from that point, and two camera rigs: ``single``
(three cameras, every box seen by one) and ``pair`` (six cameras, three at each tray corner,
every box seen from the left corner and from the right). A TOML file can describe another
table (:func:`load_table`); a bad key or value is refused naming the file, the key and the
value.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHIP_DIAMETER_MM = 39.0
CHIP_THICKNESS_MM = 3.3
MIN_BAND_PX = 5.0  # DEVICES.md: one chip's edge at least this tall at the farthest box


class TableError(ValueError):
    """A side-view table description that cannot be used; the message says where and why."""


@dataclass(frozen=True)
class ChipDesign:
    """One denomination as it is made: the edge's base colour and what is moulded into it."""

    value: int  # whole dollars
    name: str
    base: tuple[int, int, int]  # sRGB of the clay
    marks: tuple[tuple[int, int, int], ...]  # the colours of the edge inserts, in order
    style: str  # "inserts" (blocks across the edge), "stripes" (thin bars), "spots"
    repeats: int  # how many times the mark comes round the edge
    inlay: tuple[int, int, int] = (235, 232, 222)  # the face's printed centre


STYLES = ("inserts", "stripes", "spots")


def _hex(c: str) -> tuple[int, int, int]:
    return (int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16))


# The usual house colours; marks chosen as casinos do, so each chip's edge differs from its
# neighbours' in more than its base.
STANDARD_CHIPS: tuple[ChipDesign, ...] = (
    ChipDesign(1, "white", _hex("#eeeee8"), (_hex("#2458b0"),), "stripes", 6),
    ChipDesign(5, "red", _hex("#c41e2a"), (_hex("#f2f2ec"),), "inserts", 6),
    ChipDesign(25, "green", _hex("#1c8c3e"), (_hex("#f2f2ec"), _hex("#f0c419")), "spots", 8),
    ChipDesign(100, "black", _hex("#1b1b1d"), (_hex("#f2f2ec"),), "inserts", 8),
    ChipDesign(500, "purple", _hex("#6c2a94"), (_hex("#f3d23a"),), "inserts", 6),
    ChipDesign(1000, "orange", _hex("#f08a12"), (_hex("#1b1b1d"), _hex("#f2f2ec")), "stripes", 4),
)

# The standard set with three denominations whose bases come close to another's: $2 (a grey
# white beside the $1), $10 (a brick red beside the $5) and $20 (a teal beside the $25). A reader
# must tell them by their marks, or say it is unsure.
NEAR_CHIPS: tuple[ChipDesign, ...] = tuple(
    sorted(
        (
            *STANDARD_CHIPS,
            ChipDesign(2, "grey", _hex("#d2d0c8"), (_hex("#c41e2a"),), "stripes", 6),
            ChipDesign(10, "brick", _hex("#a8342a"), (_hex("#2458b0"),), "inserts", 8),
            ChipDesign(20, "teal", _hex("#1f8a6a"), (_hex("#f2f2ec"),), "inserts", 6),
        ),
        key=lambda c: c.value,
    )
)

CHIP_SETS: dict[str, tuple[ChipDesign, ...]] = {"standard": STANDARD_CHIPS, "near": NEAR_CHIPS}


@dataclass(frozen=True)
class Box:
    box: int
    center_mm: tuple[float, float]
    radius_mm: float  # the printed outline (a circle) on the cloth


@dataclass(frozen=True)
class CameraMount:
    """A camera as installed: where on the dealer's side, its sensor and the boxes it covers."""

    name: str
    position_mm: tuple[float, float]  # on the cloth plane, at the tray's edge or a corner
    boxes: tuple[int, ...]


@dataclass(frozen=True)
class RailMark:
    text: str  # "RAIL"
    azimuth_deg: float  # where on the rail, seen from the arc's centre (0 = straight ahead)
    size_mm: float  # the code's side without its quiet zone


@dataclass(frozen=True)
class Table:
    boxes: tuple[Box, ...]
    arc_center_mm: tuple[float, float]
    rail_radius_mm: float  # the rail's inner face, from the arc's centre
    rail_height_mm: float
    dealer_edge_mm: float  # the cloth ends here on the dealer's side (y)
    rigs: dict[str, tuple[CameraMount, ...]]
    rail_marks: tuple[RailMark, ...]
    chips: tuple[ChipDesign, ...] = STANDARD_CHIPS
    chip_diameter_mm: float = CHIP_DIAMETER_MM
    chip_thickness_mm: float = CHIP_THICKNESS_MM
    felt: tuple[int, int, int] = (27, 92, 58)
    print_colour: tuple[int, int, int] = (226, 214, 170)
    target_mm: tuple[float, float] = (110.0, 80.0)  # calibration card, width x height
    target_qr_mm: float = 56.0
    extra: dict[str, Any] = field(default_factory=dict)

    def box(self, n: int) -> Box:
        for b in self.boxes:
            if b.box == n:
                return b
        raise KeyError(n)

    def chip(self, value: int) -> ChipDesign:
        for c in self.chips:
            if c.value == value:
                return c
        raise KeyError(value)

    def behind(self, box: Box, mm: float) -> tuple[float, float]:
        """A point ``mm`` beyond the box's centre, towards the rail (a player's own chips)."""
        cx, cy = self.arc_center_mm
        dx, dy = box.center_mm[0] - cx, box.center_mm[1] - cy
        n = math.hypot(dx, dy)
        return (box.center_mm[0] + dx / n * mm, box.center_mm[1] + dy / n * mm)

    def describe(self) -> dict[str, Any]:
        """What a table's configuration knows (no camera pose: the reader calibrates that)."""
        return {
            "units": "mm; x to the dealer's right, y away from the dealer, z up from the cloth",
            "boxes": [
                {"box": b.box, "center_mm": list(b.center_mm), "radius_mm": b.radius_mm}
                for b in self.boxes
            ],
            "rail": {
                "arc_center_mm": list(self.arc_center_mm),
                "radius_mm": self.rail_radius_mm,
                "height_mm": self.rail_height_mm,
                "marks": [
                    {"text": m.text, "azimuth_deg": m.azimuth_deg, "size_mm": m.size_mm}
                    for m in self.rail_marks
                ],
            },
            "chip": {"diameter_mm": self.chip_diameter_mm, "thickness_mm": self.chip_thickness_mm},
            "chips": [
                {"value": c.value, "name": c.name, "colour": "#{:02x}{:02x}{:02x}".format(*c.base)}
                for c in self.chips
            ],
            "target": {"card_mm": list(self.target_mm), "qr_mm": self.target_qr_mm},
        }


def _arc_boxes(n: int, radius: float, center: tuple[float, float], spread_deg: float) -> list[Box]:
    out = []
    for i in range(n):
        a = math.radians(-spread_deg / 2 + spread_deg * i / max(1, n - 1))
        out.append(
            Box(
                i + 1,
                (
                    round(center[0] + radius * math.sin(a), 1),
                    round(center[1] + radius * math.cos(a), 1),
                ),
                48.0,
            )
        )
    return out


def default_table(chips: tuple[ChipDesign, ...] = STANDARD_CHIPS) -> Table:
    center = (0.0, -100.0)
    boxes = _arc_boxes(7, 750.0, center, 120.0)
    single = (
        CameraMount("left", (-240.0, 0.0), (1, 2)),
        CameraMount("centre", (0.0, 0.0), (3, 4, 5)),
        CameraMount("right", (240.0, 0.0), (6, 7)),
    )
    pair = (
        CameraMount("L1", (-260.0, 0.0), (1, 2)),
        CameraMount("L2", (-260.0, 0.0), (3, 4)),
        CameraMount("L3", (-260.0, 0.0), (5, 6, 7)),
        CameraMount("R1", (260.0, 0.0), (1, 2, 3)),
        CameraMount("R2", (260.0, 0.0), (4, 5)),
        CameraMount("R3", (260.0, 0.0), (6, 7)),
    )
    # between the boxes as the single rig's cameras see them, so no box hides them
    marks = tuple(RailMark("RAIL", a, 60.0) for a in (-45.0, -11.0, 11.0, 45.0))
    return Table(
        boxes=tuple(boxes),
        arc_center_mm=center,
        rail_radius_mm=1150.0,
        rail_height_mm=95.0,
        dealer_edge_mm=-60.0,
        rigs={"single": single, "pair": pair},
        rail_marks=marks,
        chips=chips,
    )


# --- a table from TOML ---------------------------------------------------------------------


class _Keys:
    def __init__(self, path: Path, table: Mapping[str, Any], where: str) -> None:
        self.path, self.table, self.where, self.used = path, table, where, set[str]()

    def fail(self, key: str, why: str) -> TableError:
        value = self.table.get(key, "(missing)")
        return TableError(f"{self.path}: {self.where}{key} = {value!r}: {why}")

    def get(self, key: str, default: Any = ...) -> Any:
        self.used.add(key)
        if key not in self.table:
            if default is ...:
                raise TableError(f"{self.path}: {self.where}{key} is missing")
            return default
        return self.table[key]

    def number(self, key: str, default: Any = ..., low: float = -1e9, high: float = 1e9) -> float:
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int | float) or not low <= v <= high:
            raise self.fail(key, f"must be a number from {low:g} to {high:g}")
        return float(v)

    def pair(self, key: str) -> tuple[float, float]:
        v = self.get(key)
        if not (
            isinstance(v, list)
            and len(v) == 2
            and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
        ):
            raise self.fail(key, "must be a pair of numbers [x, y]")
        return (float(v[0]), float(v[1]))

    def colour(self, key: str, default: Any = ...) -> tuple[int, int, int]:
        v = self.get(key, default)
        if isinstance(v, tuple):
            return v  # the default
        ok = isinstance(v, str) and len(v) == 7 and v[0] == "#"
        try:
            return _hex(v) if ok else self.fail_colour(key)
        except ValueError:
            return self.fail_colour(key)

    def fail_colour(self, key: str) -> tuple[int, int, int]:
        raise self.fail(key, 'must be a colour "#rrggbb"')

    def list_of(self, key: str) -> list[_Keys]:
        v = self.get(key)
        if not isinstance(v, list) or not v or not all(isinstance(x, dict) for x in v):
            raise self.fail(key, f"must be one or more [[{self.where}{key}]] tables")
        return [_Keys(self.path, x, f"{self.where}{key}[{i}].") for i, x in enumerate(v)]

    def finish(self) -> None:
        for key in sorted(set(self.table) - self.used):
            raise self.fail(key, "unknown key")


def load_table(path: Path) -> Table:
    """A table from TOML: ``[[boxes]]`` (box, center_mm, radius_mm), ``[[cameras]]`` (name,
    position_mm, boxes, rig), optional ``[[chips]]`` (value, name, base, marks, style, repeats)
    and ``[rail]`` (arc_center_mm, radius_mm, height_mm, marks_deg)."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TableError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as err:
        raise TableError(f"{path}: not valid TOML: {err}") from None
    base = default_table()
    top = _Keys(path, doc, "")
    boxes: list[Box] = []
    for k in top.list_of("boxes"):
        b = Box(
            int(k.number("box", low=1, high=99)),
            k.pair("center_mm"),
            k.number("radius_mm", 48.0, 20, 300),
        )
        k.finish()
        if any(o.box == b.box for o in boxes):
            raise k.fail("box", "is listed twice")
        if b.center_mm[1] <= 0:
            raise k.fail("center_mm", "must lie in front of the tray (y > 0)")
        boxes.append(b)
    rigs: dict[str, list[CameraMount]] = {}
    for k in top.list_of("cameras"):
        covered = k.get("boxes")
        if (
            not isinstance(covered, list)
            or not covered
            or not all(isinstance(x, int) for x in covered)
        ):
            raise k.fail("boxes", "must be a list of box numbers")
        for n in covered:
            if not any(b.box == n for b in boxes):
                raise k.fail("boxes", f"box {n} is not one of the [[boxes]]")
        name = k.get("name")
        if not isinstance(name, str) or not name.isidentifier():
            raise k.fail("name", "must be a short name of letters and digits")
        rig = k.get("rig", "single")
        if rig not in ("single", "pair"):
            raise k.fail("rig", 'must be "single" or "pair"')
        rigs.setdefault(rig, []).append(CameraMount(name, k.pair("position_mm"), tuple(covered)))
        k.finish()
    chips = base.chips
    if "chips" in doc:
        designs: list[ChipDesign] = []
        for k in top.list_of("chips"):
            marks_raw = k.get("marks")
            if not isinstance(marks_raw, list) or not marks_raw:
                raise k.fail("marks", 'must be a list of colours ["#rrggbb", ...]')
            marks = []
            for m in marks_raw:
                if not (isinstance(m, str) and len(m) == 7 and m[0] == "#"):
                    raise k.fail("marks", 'must be a list of colours ["#rrggbb", ...]')
                try:
                    marks.append(_hex(m))
                except ValueError:
                    raise k.fail("marks", 'must be a list of colours ["#rrggbb", ...]') from None
            style = k.get("style", "inserts")
            if style not in STYLES:
                raise k.fail("style", f"must be one of {', '.join(STYLES)}")
            value = int(k.number("value", low=1, high=1_000_000))
            name = k.get("name", f"${value}")
            d = ChipDesign(
                value,
                str(name),
                k.colour("base"),
                tuple(marks),
                style,
                int(k.number("repeats", 6, 2, 16)),
            )
            k.finish()
            if any(o.value == d.value for o in designs):
                raise k.fail("value", "is given to two chips")
            designs.append(d)
        chips = tuple(sorted(designs, key=lambda c: c.value))
    rail = base
    arc, radius, height, marks_deg = (
        base.arc_center_mm,
        base.rail_radius_mm,
        base.rail_height_mm,
        None,
    )
    if "rail" in doc:
        r = _Keys(path, doc["rail"], "rail.")
        arc = r.pair("arc_center_mm") if "arc_center_mm" in doc["rail"] else arc
        radius = r.number("radius_mm", radius, 300, 5000)
        height = r.number("height_mm", height, 70, 300)
        marks_deg = r.get("marks_deg", None)
        if marks_deg is not None and (
            not isinstance(marks_deg, list)
            or not all(isinstance(x, int | float) for x in marks_deg)
        ):
            raise r.fail("marks_deg", "must be a list of angles in degrees")
        r.finish()
    top.used.update({"chips", "rail"})
    top.finish()
    if "single" not in rigs:
        raise TableError(f'{path}: cameras: no camera has rig = "single" (every box seen once)')
    table = Table(
        boxes=tuple(sorted(boxes, key=lambda b: b.box)),
        arc_center_mm=arc,
        rail_radius_mm=radius,
        rail_height_mm=height,
        dealer_edge_mm=rail.dealer_edge_mm,
        rigs={k: tuple(v) for k, v in rigs.items()},
        rail_marks=rail.rail_marks
        if marks_deg is None
        else tuple(RailMark("RAIL", float(a), 60.0) for a in marks_deg),
        chips=chips,
    )
    for rig, mounts in table.rigs.items():
        for b in table.boxes:
            n = sum(b.box in m.boxes for m in mounts)
            if n == 0:
                raise TableError(f"{path}: cameras: no camera of rig {rig!r} covers box {b.box}")
    for b in table.boxes:
        if math.dist(b.center_mm, arc) + 150 > radius:
            raise TableError(f"{path}: boxes: box {b.box} is within 150 mm of the rail")
    return table
