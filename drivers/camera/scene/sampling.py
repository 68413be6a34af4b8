"""Drawing scenes from a seed: the mount, the lamps, each session's knock, each frame's bets.

Every draw comes from a generator seeded by ``(seed, tier, what, which)``, so a frame depends
only on the seed, the tier and its index: the same seed always gives the same frames, and the
first frames of a long run are the frames of a short one. Frames come in sessions of
:data:`SESSION_FRAMES`; the camera is knocked between sessions and keeps still within one.

What is bet is drawn the same way in every tier, as at a real table: a quarter of the boxes
empty; a stack of 1 to 20 chips, or two stacks in a box; one to three denominations in a stack,
the larger chips at the bottom (the house rule that lets the dealer see them).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from drivers.camera.config import CameraConfig
from drivers.camera.scene.camera import Camera, Lens, Pose, bumped, fit_focal, look_at, outline
from drivers.camera.scene.chips import Chip, ChipModel, chip_frame
from drivers.camera.scene.hand import Hand, make_hand
from drivers.camera.scene.layout import Card, srgb_to_linear
from drivers.camera.scene.lighting import Lamp, Lighting, lamp_colour, luminance
from drivers.camera.scene.tiers import Tier

SESSION_FRAMES = 10
MAX_STACK = 20
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def rng_for(seed: int, tier: Tier, what: str, *which: int) -> np.random.Generator:
    key = [seed & 0xFFFFFFFF, zlib.crc32(tier.name.encode()), zlib.crc32(what.encode()), *which]
    return np.random.default_rng(np.random.SeedSequence(key))


def _u(rng: np.random.Generator, r: tuple[float, float]) -> float:
    return float(rng.uniform(r[0], r[1])) if r[1] > r[0] else float(r[0])


@dataclass(frozen=True)
class Uneven:
    """Slow light and dark patches over the table, and the dealer's body shading their edge."""

    blobs: tuple[tuple[float, float, float, float], ...]  # x, y, radius, +/- strength
    body: tuple[float, float, float, float] | None  # x, y, radius, share of light taken

    def factor(
        self, x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        f = np.ones(np.shape(x))
        for bx, by, r, s in self.blobs:
            f += s * np.exp(-((x - bx) ** 2 + (y - by) ** 2) / (2 * r * r))
        if self.body is not None:
            bx, by, r, s = self.body
            d2 = ((x - bx) / (1.6 * r)) ** 2 + ((y - by) / r) ** 2
            f *= 1 - s * np.exp(-d2 / 2)
        return np.clip(f, 0.2, None)


@dataclass(frozen=True)
class Setup:
    """What stays the same for one seed: the mount, the lens, the lamps, their unevenness."""

    mount: Pose
    lens: Lens
    lighting: Lighting
    uneven: Uneven
    target: tuple[float, float]
    distance_mm: float


def setup(cfg: CameraConfig, tier: Tier, seed: int) -> Setup:
    rng = rng_for(seed, tier, "setup")
    lay = cfg.layout
    target = (
        lay.width_mm / 2 + float(rng.normal(0, 15)),
        lay.height_mm / 2 + float(rng.normal(0, 15)),
    )
    distance = _u(rng, tier.distance_mm)
    mount = look_at(
        target,
        distance,
        _u(rng, tier.tilt_deg),
        float(rng.uniform(-tier.yaw_deg, tier.yaw_deg)),
        float(rng.uniform(-tier.roll_deg, tier.roll_deg)),
    )
    k1 = _u(rng, tier.k1)
    lens = Lens(1.0, 0.5 + float(rng.normal(0, 0.006)), 0.5 + float(rng.normal(0, 0.006)), k1, 0.0)
    lens = Lens(lens.focal, lens.cx, lens.cy, k1, float(rng.uniform(0.0, 0.15)) * k1 * k1)
    focal = fit_focal(
        mount, lens, 16 / 9, outline(lay.width_mm, lay.height_mm, 5.0), _u(rng, tier.margin)
    )
    lens = Lens(focal, lens.cx, lens.cy, lens.k1, lens.k2)
    lighting = _lamps(cfg, tier, rng)
    blobs = tuple(
        (
            float(rng.uniform(-100, lay.width_mm + 100)),
            float(rng.uniform(-100, lay.height_mm + 100)),
            float(rng.uniform(120, 400)),
            float(rng.uniform(-tier.uneven, tier.uneven)),
        )
        for _ in range(5)
    )
    body = None
    if rng.random() < tier.body_shadow:
        body = (
            float(rng.uniform(0.25, 0.75) * lay.width_mm),
            lay.height_mm + float(rng.uniform(20, 120)),
            float(rng.uniform(150, 260)),
            float(rng.uniform(0.25, 0.5)),
        )
    return Setup(mount, lens, lighting, Uneven(blobs, body), target, distance)


def _lamps(cfg: CameraConfig, tier: Tier, rng: np.random.Generator) -> Lighting:
    lay = cfg.layout
    count = int(rng.integers(tier.lamps[0], tier.lamps[1] + 1))
    kelvin = _u(rng, tier.kelvin)
    raw: list[tuple[tuple[float, float, float], float, float, float]] = []
    for i in range(count):
        if i == 0:
            x = lay.width_mm / 2 + float(rng.uniform(-tier.lamp_offset_mm, tier.lamp_offset_mm))
            y = lay.height_mm / 2 + float(rng.uniform(-0.5, 0.5) * tier.lamp_offset_mm)
            k = kelvin
            power = 1.0
        else:
            x = lay.width_mm / 2 + float(rng.choice([-1, 1]) * rng.uniform(250, 600))
            y = lay.height_mm / 2 + float(rng.uniform(-200, 200))
            lo, hi = tier.kelvin
            k = (hi + lo - kelvin + float(rng.uniform(-300, 300))) if tier.mixed_kelvin else kelvin
            k = min(max(k, 2500.0), 7000.0)
            power = float(rng.uniform(0.4, 1.0))
        height = _u(rng, tier.lamp_height_mm)
        raw.append(((x, y, -height), power, k, _u(rng, tier.lamp_radius_mm)))
    # scale so that a face looking up at the layout's centre gets unit luminance
    centre = np.array([lay.width_mm / 2, lay.height_mm / 2, 0.0])
    direct_rgb = np.zeros(3)
    for pos, power, k, _ in raw:
        d = np.array(pos) - centre
        r = float(np.linalg.norm(d))
        direct_rgb += power * (-d[2] / r) / (r * r) * np.array(lamp_colour(k))
    share = _u(rng, tier.ambient)
    scale = (1 - share) / float(luminance(direct_rgb))
    mix = direct_rgb / float(luminance(direct_rgb))
    lamps = tuple(
        Lamp(pos, power * scale, lamp_colour(k), k, radius) for pos, power, k, radius in raw
    )
    ambient = share * mix
    felt = srgb_to_linear(lay.felt)
    bounce = felt * mix  # the felt, lit at about 1, seen from below
    return Lighting(
        lamps,
        (float(ambient[0]), float(ambient[1]), float(ambient[2])),
        (float(bounce[0]), float(bounce[1]), float(bounce[2])),
    )


def session_pose(base: Setup, tier: Tier, seed: int, session: int) -> Pose:
    rng = rng_for(seed, tier, "session", session)
    return bumped(base.mount, rng, tier.bump_deg, tier.bump_mm)


def camera_for(base: Setup, pose: Pose, width: int, height: int) -> Camera:
    return Camera(pose, base.lens, width, height)


@dataclass(frozen=True)
class Optics:
    focus_mm: float
    defocus_px: float  # at 1280 px wide; scaled with the picture
    depth_blur_px: float
    motion_px: float
    motion_deg: float
    vignette: float
    chromatic: float
    exposure: float
    gain: float
    read_noise: float
    full_well: float
    wb_error: tuple[float, float, float]
    sharpen: float
    jpeg_quality: int


@dataclass(frozen=True)
class Stack:
    box: int
    chips: tuple[Chip, ...]  # bottom to top
    base_mm: tuple[float, float]
    lean_mm: tuple[float, float]  # per chip


@dataclass(frozen=True)
class FrameScene:
    index: int
    session: int
    stacks: tuple[Stack, ...]
    hand: Hand | None
    cards: tuple[Card, ...]
    optics: Optics


def _stack_size(rng: np.random.Generator) -> int:
    band = rng.random()
    if band < 0.5:
        return int(rng.integers(1, 6))
    if band < 0.8:
        return int(rng.integers(6, 13))
    return int(rng.integers(13, MAX_STACK + 1))


def _values(rng: np.random.Generator, cfg: CameraConfig, n: int) -> list[int]:
    """``n`` chips of one to three denominations, the larger at the bottom."""
    values = [c.value for c in cfg.chips]
    weights = np.array([1.0 / (i + 1) ** 0.6 for i in range(len(values))])
    kinds = min(n, len(values), int(rng.choice([1, 2, 3], p=[0.55, 0.3, 0.15])))
    chosen = sorted(
        rng.choice(len(values), size=kinds, replace=False, p=weights / weights.sum()),
        key=lambda i: -values[int(i)],
    )
    cuts = sorted(rng.choice(np.arange(1, n), size=kinds - 1, replace=False)) if kinds > 1 else []
    counts = np.diff([0, *cuts, n])
    out: list[int] = []
    for i, k in zip(chosen, counts, strict=True):
        out.extend([values[int(i)]] * int(k))
    return out


def _stack(
    rng: np.random.Generator,
    cfg: CameraConfig,
    tier: Tier,
    model: ChipModel,
    box: int,
    base: tuple[float, float],
) -> Stack:
    values = _values(rng, cfg, _stack_size(rng))
    design_of = {c.value: i for i, c in enumerate(cfg.chips)}
    lean_dir = float(rng.uniform(0, 2 * math.pi))
    lean = float(rng.uniform(0, tier.lean_mm))
    lean_v = (lean * math.cos(lean_dir), lean * math.sin(lean_dir))
    x, y = base
    z = 0.0
    chips: list[Chip] = []
    for k, value in enumerate(values):
        if k:
            step = rng.normal(0, tier.jitter_mm, 2)
            step = np.clip(step, -2.5, 2.5)
            x += lean_v[0] + float(step[0])
            y += lean_v[1] + float(step[1])
            z -= model.thickness_mm + float(rng.uniform(0, 0.05))
        tilt = math.radians(float(rng.uniform(0, tier.chip_tilt_deg)))
        tint = 1 + rng.normal(0, 0.02, 3) + float(rng.normal(0, 0.025))
        chips.append(
            Chip(
                value=value,
                design=design_of[value],
                bottom=(x, y, z),
                frame=chip_frame(tilt, float(rng.uniform(0, 2 * math.pi))),
                turn=float(rng.uniform(0, 2 * math.pi)),
                tint=(float(tint[0]), float(tint[1]), float(tint[2])),
            )
        )
    return Stack(box, tuple(chips), base, lean_v)


def _within(v: npt.NDArray[np.float64], reach: float) -> tuple[float, float]:
    """``v`` shortened to at most ``reach`` mm."""
    n = float(np.hypot(v[0], v[1]))
    k = min(1.0, reach / n) if n > 0 else 0.0
    return float(v[0]) * k, float(v[1]) * k


def _settle(
    stacks: list[Stack], centre: tuple[float, float], radius: float, model: ChipModel
) -> list[Stack]:
    """Players keep their chips inside the circle and two stacks cannot pass through each
    other: straighten each stack's lean and offsets (about its base) until both hold."""
    r = model.radius_mm

    def shaped(stack: Stack, f: float) -> Stack:
        bx, by = stack.chips[0].bottom[:2]
        chips = tuple(
            replace(
                c, bottom=(bx + f * (c.bottom[0] - bx), by + f * (c.bottom[1] - by), c.bottom[2])
            )
            for c in stack.chips
        )
        return replace(stack, chips=chips, lean_mm=(stack.lean_mm[0] * f, stack.lean_mm[1] * f))

    def fits(group: list[Stack]) -> bool:
        for st in group:
            if any(math.dist(c.bottom[:2], centre) + r > radius for c in st.chips):
                return False
        if len(group) == 2:
            for a, b in zip(group[0].chips, group[1].chips, strict=False):
                if math.dist(a.bottom[:2], b.bottom[:2]) < 2 * r + 0.2:
                    return False
        return True

    for f in (1.0, 0.8, 0.6, 0.4, 0.2, 0.0):
        group = [shaped(st, f) for st in stacks]
        if fits(group):
            return group
    return group


def frame_scene(
    cfg: CameraConfig, tier: Tier, seed: int, index: int, model: ChipModel, base: Setup
) -> FrameScene:
    rng = rng_for(seed, tier, "frame", index)
    r_chip = model.radius_mm
    stacks: list[Stack] = []
    for box in cfg.boxes:
        if rng.random() < 0.25:
            continue
        cx, cy = box.center_mm
        room = box.radius_mm - r_chip - 3.0
        if rng.random() < 0.28 and room >= 8.0:
            a = float(rng.uniform(0, 2 * math.pi))
            half = float(rng.uniform(20.5, 23.0))
            slack = max(room - half, 0.0)
            ox, oy = _within(rng.normal(0, slack / 2, 2), slack)
            pair = []
            for sgn in (-1, 1):
                pos = (cx + ox + sgn * half * math.cos(a), cy + oy + sgn * half * math.sin(a))
                pair.append(_stack(rng, cfg, tier, model, box.box, pos))
            stacks.extend(_settle(pair, box.center_mm, box.radius_mm, model))
        else:
            ox, oy = _within(rng.normal(0, 9.0, 2), max(room, 0.0))
            one = _stack(rng, cfg, tier, model, box.box, (cx + ox, cy + oy))
            stacks.extend(_settle([one], box.center_mm, box.radius_mm, model))
    hand = None
    if cfg.boxes and rng.random() < tier.hand_chance:
        box = cfg.boxes[int(rng.integers(len(cfg.boxes)))]
        over = (
            box.center_mm[0] + float(rng.normal(0, 22)),
            box.center_mm[1] + float(rng.normal(0, 22)),
        )
        tops = [
            -s.chips[-1].bottom[2] + model.thickness_mm
            for s in stacks
            if math.dist(s.base_mm, over) < 260
        ]
        # a dealer's hand works close to the felt: just clear of the chips under it
        height = max([35.0, *(t + 42 for t in tops)]) + float(rng.uniform(0, 50))
        moving = float(rng.uniform(*tier.hand_motion_px)) if rng.random() < 0.6 else 0.0
        ang = float(rng.uniform(0, 2 * math.pi))
        dealer = (
            cfg.layout.width_mm / 2 + float(rng.normal(0, 120)),
            cfg.layout.height_mm + float(rng.uniform(250, 320)),
        )
        hand = make_hand(
            rng, over, height, box.box, (moving * math.cos(ang), moving * math.sin(ang)), dealer
        )
        # the hand and arm pass over every stack (the picture lays them on top of the chips)
        lift = max(
            [0.0]
            + [
                hand.clearance(
                    s.base_mm[0],
                    s.base_mm[1],
                    r_chip + math.hypot(*np.subtract(s.chips[-1].bottom[:2], s.base_mm)),
                    -s.chips[-1].bottom[2] + model.thickness_mm + 1.0,
                )
                for s in stacks
            ]
        )
        if lift > 0:
            hand = hand.raised(lift)
    cards: list[Card] = []
    if rng.random() < tier.card_chance:
        xs = [b.center_mm[0] for b in cfg.boxes]
        dealer = ((min(xs) + max(xs)) / 2, cfg.layout.height_mm * 1.85)
        for box in cfg.boxes:
            if not any(s.box == box.box for s in stacks) or rng.random() < 0.4:
                continue
            dx, dy = dealer[0] - box.center_mm[0], dealer[1] - box.center_mm[1]
            d = math.hypot(dx, dy)
            ux, uy = dx / d, dy / d
            along = box.radius_mm + 62.0
            base_angle = math.degrees(math.atan2(ux, -uy))
            for k in range(int(rng.integers(2, 4))):
                cx = box.center_mm[0] + ux * along + uy * 0 + (k - 0.5) * 16 * -uy
                cy = box.center_mm[1] + uy * along + (k - 0.5) * 16 * ux
                cards.append(
                    Card(
                        (cx, cy),
                        base_angle + float(rng.uniform(-8, 8)),
                        RANKS[int(rng.integers(len(RANKS)))],
                        bool(rng.random() < 0.5),
                    )
                )
    optics = Optics(
        focus_mm=base.distance_mm * float(rng.uniform(0.9, 1.1)),
        defocus_px=_u(rng, tier.defocus_px),
        depth_blur_px=_u(rng, tier.depth_blur_px),
        motion_px=_u(rng, tier.motion_px) if rng.random() < tier.motion_chance else 0.0,
        motion_deg=float(rng.uniform(0, 180)),
        vignette=_u(rng, tier.vignette),
        chromatic=_u(rng, tier.chromatic),
        exposure=_u(rng, tier.exposure),
        gain=_u(rng, tier.gain),
        read_noise=_u(rng, tier.read_noise),
        full_well=9000.0,
        wb_error=(
            1 + float(rng.uniform(-tier.wb_drift, tier.wb_drift)),
            1.0,
            1 + float(rng.uniform(-tier.wb_drift, tier.wb_drift)),
        ),
        sharpen=_u(rng, tier.sharpen),
        jpeg_quality=int(rng.integers(tier.jpeg_quality[0], tier.jpeg_quality[1] + 1))
        if tier.jpeg_quality[1]
        else 0,
    )
    return FrameScene(index, index // SESSION_FRAMES, tuple(stacks), hand, tuple(cards), optics)
