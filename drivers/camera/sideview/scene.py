"""What stands on the table at one moment: stacks of chips, hands and sleeves, targets.

Each chip lies flat on the one below (a vertical cylinder), off it by a little: a stack that
leans is a staircase of such offsets, as real stacks are. A stack belongs to a box (its wager)
or is a player's own chips, standing behind the box nearer the rail (never a wager).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PlacedChip:
    value: int
    x: float  # centre (mm)
    y: float
    z: float  # its bottom face above the cloth
    turn: float  # rotation of its edge pattern (radians)
    tint: float  # its clay a little lighter or darker than the next (wear, batch)


@dataclass(frozen=True)
class Stack:
    box: int  # the box it stands in (or behind, for a player's own)
    own: bool  # a player's own chips behind the box: not a wager
    chips: tuple[PlacedChip, ...]  # bottom to top
    role: str = "wager"  # "wager", "behind" (set behind another on purpose), "player"

    @property
    def values(self) -> list[int]:
        return [c.value for c in self.chips]

    @property
    def base(self) -> tuple[float, float]:
        return (self.chips[0].x, self.chips[0].y)

    def height(self, thickness: float) -> float:
        return self.chips[-1].z + thickness if self.chips else 0.0


@dataclass(frozen=True)
class Capsule:
    a: tuple[float, float, float]
    b: tuple[float, float, float]
    radius: float
    colour: tuple[int, int, int]
    part: str  # "hand" or "sleeve"


@dataclass(frozen=True)
class Hand:
    box: int
    where: str  # "over" the stacks, "front" (between the camera and the stacks), "passing"
    capsules: tuple[Capsule, ...]


@dataclass(frozen=True)
class Target:
    """The calibration card, stood upright in a box facing a camera."""

    box: int
    center: tuple[float, float]  # the middle of its bottom edge, on the cloth
    facing_deg: float  # azimuth of the card's face normal (towards the camera)
    lean_deg: float  # leaning back from upright


@dataclass(frozen=True)
class Moment:
    stacks: tuple[Stack, ...] = ()
    hands: tuple[Hand, ...] = ()
    targets: tuple[Target, ...] = ()


def build_stack(
    rng: np.random.Generator,
    box: int,
    base: tuple[float, float],
    values: list[int],
    thickness: float,
    *,
    lean_mm: float = 0.0,
    jitter_mm: float = 0.0,
    own: bool = False,
    role: str = "wager",
) -> Stack:
    """A stack of ``values`` (bottom to top) from ``base``; it leans by up to ``lean_mm`` a chip
    in one direction and each chip sits off the one below by about ``jitter_mm``."""
    ang = rng.uniform(0, 2 * math.pi)
    lean = rng.uniform(0, lean_mm) if lean_mm > 0 else 0.0
    lx, ly = lean * math.cos(ang), lean * math.sin(ang)
    x, y = base
    chips = []
    for i, v in enumerate(values):
        if i:
            jx, jy = rng.normal(0, jitter_mm, 2) if jitter_mm > 0 else (0.0, 0.0)
            x += lx + float(np.clip(jx, -2.5 * jitter_mm, 2.5 * jitter_mm))
            y += ly + float(np.clip(jy, -2.5 * jitter_mm, 2.5 * jitter_mm))
        chips.append(
            PlacedChip(
                v,
                x,
                y,
                i * thickness,
                float(rng.uniform(0, 2 * math.pi)),
                float(rng.uniform(0.95, 1.05)),
            )
        )
    return Stack(box, own, tuple(chips), role)


SKIN = ((224, 182, 150), (198, 146, 110), (160, 108, 74), (112, 72, 48), (236, 200, 172))
SLEEVES = ((235, 235, 232), (30, 30, 34), (120, 24, 36), (40, 44, 70), (90, 90, 96))


def build_hand(
    rng: np.random.Generator,
    box: int,
    where: str,
    wrist: tuple[float, float, float],
    pointing_deg: float,
    *,
    droop_deg: float = 10.0,
) -> Hand:
    """A hand whose wrist is at ``wrist``, its fingers pointing along ``pointing_deg`` (azimuth)
    and down by ``droop_deg``, and the sleeved forearm behind it."""
    skin = SKIN[int(rng.integers(len(SKIN)))]
    sleeve = SLEEVES[int(rng.integers(len(SLEEVES)))]
    a = math.radians(pointing_deg)
    d = math.radians(droop_deg)
    fwd = np.array([math.sin(a) * math.cos(d), math.cos(a) * math.cos(d), -math.sin(d)])
    side = np.array([math.cos(a), -math.sin(a), 0.0])
    w = np.array(wrist)
    scale = float(rng.uniform(0.9, 1.1))
    parts: list[Capsule] = []

    def cap(
        p: np.ndarray, q: np.ndarray, r: float, colour: tuple[int, int, int], part: str
    ) -> None:
        parts.append(Capsule(tuple(map(float, p)), tuple(map(float, q)), r, colour, part))  # type: ignore[arg-type]

    knuckles = w + fwd * 70 * scale
    for i in (-1.5, -0.5, 0.5, 1.5):
        root = w + fwd * 20 * scale + side * i * 14 * scale
        cap(root, knuckles + side * i * 18 * scale, 17 * scale, skin, "hand")
        tip = knuckles + side * i * 19 * scale + fwd * (60 - abs(i) * 8) * scale
        tip[2] -= 18 * scale * float(rng.uniform(0.3, 1.0))
        cap(knuckles + side * i * 18 * scale, tip, 8.5 * scale, skin, "hand")
    thumb = w + fwd * 30 * scale - side * 38 * scale
    cap(w + fwd * 10 * scale - side * 18 * scale, thumb, 10 * scale, skin, "hand")
    elbow = w - fwd * 260 * scale
    elbow[2] += 60 * scale
    cap(w - fwd * 10 * scale, w - fwd * 70 * scale, 27 * scale, skin, "hand")
    cap(w - fwd * 60 * scale, elbow, 40 * scale, sleeve, "sleeve")
    return Hand(box, where, tuple(parts))
