"""Drawing a seed's mounts, a session's lights and a moment's chips from the tier's ranges."""

from __future__ import annotations

import math

import numpy as np

from drivers.camera.sideview.camera import Camera, Intrinsics, Pose, focal_for, required_focal
from drivers.camera.sideview.lighting import Lamp, Lighting
from drivers.camera.sideview.optics import Optics
from drivers.camera.sideview.scene import Hand, Moment, Stack, Target, build_hand, build_stack
from drivers.camera.sideview.table import CameraMount, Table
from drivers.camera.sideview.tiers import Tier

MAX_STACK = 25
KNOWN_STACK = 10  # chips in each known stack
MIN_FOV_DEG = 30.0  # the narrowest lens fitted


class RigError(ValueError):
    """A camera that cannot cover its boxes at the chosen size under DEVICES.md's rule."""


def _u(rng: np.random.Generator, r: tuple[float, float]) -> float:
    return float(rng.uniform(r[0], r[1])) if r[1] > r[0] else float(r[0])


def bearing(frm: tuple[float, float], to: tuple[float, float]) -> float:
    """Azimuth (deg, from +y towards +x) of ``to`` seen from ``frm``."""
    return math.degrees(math.atan2(to[0] - frm[0], to[1] - frm[1]))


def _cover_points(table: Table, mount: CameraMount) -> np.ndarray:
    """Points that must be in the picture: each covered box's outline, up to a full stack."""
    top = MAX_STACK * table.chip_thickness_mm + 6
    pts = []
    for n in mount.boxes:
        b = table.box(n)
        for k in range(12):
            a = 2 * math.pi * k / 12
            x = b.center_mm[0] + (b.radius_mm + 6) * math.cos(a)
            y = b.center_mm[1] + (b.radius_mm + 6) * math.sin(a)
            pts += [[x, y, 0.0], [x, y, top]]
    return np.array(pts)


def mount_camera(
    table: Table, tier: Tier, mount: CameraMount, size: tuple[int, int], rng: np.random.Generator
) -> Camera:
    """The camera as installed for a seed: height, aim at its boxes, the longest focal length
    that keeps them in the picture, checked against DEVICES.md's 5 px a chip rule."""
    h = _u(rng, tier.height_mm)
    x, y = mount.position_mm
    boxes = [table.box(n) for n in mount.boxes]
    cx = sum(b.center_mm[0] for b in boxes) / len(boxes)
    cy = sum(b.center_mm[1] for b in boxes) / len(boxes)
    dist = math.hypot(cx - x, cy - y)
    yaw = bearing((x, y), (cx, cy)) + float(rng.uniform(-1, 1)) * tier.aim_jitter_deg
    tilt = (
        math.degrees(math.atan2(h - 35.0, dist)) + float(rng.uniform(-1, 1)) * tier.aim_jitter_deg
    )
    tilt = min(max(tilt, 0.0), 15.0)
    roll = float(rng.uniform(-1, 1)) * tier.roll_deg
    pose = Pose((x, y, h), yaw, tilt, roll)
    # the longest lens that keeps the boxes in the picture, but no narrower than 30 deg
    longest = size[0] / 2 / math.tan(math.radians(MIN_FOV_DEG / 2))
    f = min(focal_for(pose, size, _cover_points(table, mount)), longest)
    f *= float(rng.uniform(0.96, 1.0))
    far = max(math.hypot(b.center_mm[0] - x, b.center_mm[1] - y) + b.radius_mm for b in boxes)
    need = required_focal(far, table.chip_thickness_mm)
    if f < need:
        fov = 2 * math.degrees(math.atan(size[0] / 2 / f))
        px_chip = f * table.chip_thickness_mm / far
        raise RigError(
            f"camera {mount.name!r}: boxes {list(mount.boxes)} need a {fov:.0f} deg field of "
            f"view at {size[0]}x{size[1]}, which gives {px_chip:.1f} px a chip at {far:.0f} mm "
            "(at least 5 needed): cover fewer boxes or use 3840x2160"
        )
    w, hh = size
    k = Intrinsics(
        width=w,
        height=hh,
        fx=f,
        fy=f,
        cx=w / 2 - 0.5 + float(rng.uniform(-0.01, 0.01)) * w,
        cy=hh / 2 - 0.5 + float(rng.uniform(-0.01, 0.01)) * hh,
        k1=_u(rng, tier.k1),
        k2=_u(rng, tier.k2),
    )
    return Camera(mount.name, pose, k)


def knocked(cam: Camera, tier: Tier, rng: np.random.Generator) -> Camera:
    """The camera after a knock between sessions: a small change of pose, the same lens."""
    p = cam.pose
    d = rng.uniform(-1, 1, 3) * tier.knock_deg
    m = rng.uniform(-1, 1, 3) * tier.knock_mm
    pose = Pose(
        (
            p.position[0] + float(m[0]),
            p.position[1] + float(m[1]),
            max(25.0, p.position[2] + float(m[2]) * 0.5),
        ),
        p.yaw_deg + float(d[0]),
        p.tilt_deg + float(d[1]),
        p.roll_deg + float(d[2]) * 0.5,
    )
    return Camera(cam.name, pose, cam.k)


def draw_lighting(tier: Tier, rng: np.random.Generator) -> Lighting:
    kelvin = _u(rng, tier.kelvin)
    key = Lamp(
        azimuth_deg=float(rng.uniform(-180, 180)),
        elevation_deg=_u(rng, tier.elevation_deg),
        kelvin=kelvin,
        intensity=_u(rng, tier.intensity),
        spread_deg=float(rng.uniform(2.0, 6.0)),
    )
    fill = None
    if rng.random() < tier.fill_chance:
        fk = _u(rng, tier.kelvin) if tier.mixed else kelvin
        fill = Lamp(
            azimuth_deg=float(rng.uniform(-180, 180)),
            elevation_deg=_u(rng, tier.elevation_deg),
            kelvin=fk,
            intensity=key.intensity * float(rng.uniform(0.3, 0.7)),
            spread_deg=5.0,
        )
    drift = 1 + rng.uniform(-1, 1, 2) * tier.wb_drift
    return Lighting(
        key=key,
        fill=fill,
        ambient=_u(rng, tier.ambient),
        ambient_kelvin=kelvin,
        uneven=tier.uneven,
        wb_correction=_u(rng, tier.wb_correction),
        wb_drift=(float(drift[0]), float(drift[1])),
    )


def draw_optics(tier: Tier, rng: np.random.Generator) -> Optics:
    motion = rng.random() < tier.motion_chance
    q = int(rng.integers(tier.jpeg[0], tier.jpeg[1] + 1)) if tier.jpeg[1] else 0
    return Optics(
        exposure=_u(rng, tier.exposure),
        defocus_px=_u(rng, tier.defocus_px),
        motion_px=_u(rng, tier.motion_px) if motion else 0.0,
        motion_deg=float(rng.uniform(0, 180)),
        vignette=_u(rng, tier.vignette),
        gain=_u(rng, tier.gain),
        full_well=12000.0,
        read_noise=_u(rng, tier.read_noise),
        jpeg_quality=q,
    )


def _values(rng: np.random.Generator, table: Table, n: int, unsorted: bool) -> list[int]:
    """``n`` chips of one to three denominations, the larger at the bottom as dealers build."""
    kinds = int(rng.choice([1, 1, 2, 2, 3]))
    chosen = sorted(rng.choice([c.value for c in table.chips], size=kinds, replace=False).tolist())
    if kinds == 1:
        values = [chosen[0]] * n
    else:
        cuts = (
            sorted(rng.choice(np.arange(1, n), size=min(kinds - 1, n - 1), replace=False).tolist())
            if n > 1
            else []
        )
        parts = np.split(np.arange(n), cuts)
        values = []
        for part, v in zip(parts, sorted(chosen, reverse=True), strict=False):
            values += [int(v)] * len(part)
        values += [int(chosen[0])] * (n - len(values))
    if unsorted:
        rng.shuffle(values)
    return [int(v) for v in values]


def _height(rng: np.random.Generator) -> int:
    # as bets come: many short stacks, some tall ones, up to 25
    return int(min(MAX_STACK, max(1, round(rng.triangular(1, 3, MAX_STACK + 0.49)))))


def draw_moment(
    table: Table, tier: Tier, viewers: dict[int, tuple[float, float]], rng: np.random.Generator
) -> Moment:
    """A moment of play. ``viewers``: for each box, where the camera stands whose line of sight
    decides which of two stacks is "behind" the other."""
    T = table.chip_thickness_mm
    stacks: list[Stack] = []
    hands: list[Hand] = []
    for box in table.boxes:
        bx, by = box.center_mm
        vx, vy = viewers[box.box]
        toward = math.atan2(bx - vx, by - vy)  # the view's bearing (rad)
        ax, ay = math.sin(toward), math.cos(toward)  # along the view, unit
        px_, py_ = ay, -ax  # across it
        lean = _u(rng, tier.lean_mm)
        if rng.random() >= tier.empty_chance:
            n_st = 2 if rng.random() < tier.two_stacks else 1
            behind = n_st == 2 and rng.random() < tier.behind_chance
            if n_st == 1:
                spots = [(bx + rng.uniform(-6, 6), by + rng.uniform(-6, 6))]
                roles = ["wager"]
            elif behind:
                front = float(rng.uniform(22, 30))
                back = float(rng.uniform(22, 30))
                off = float(rng.uniform(-8, 8))
                spots = [
                    (bx - ax * front + px_ * off, by - ay * front + py_ * off),
                    (bx + ax * back + px_ * off * 0.3, by + ay * back + py_ * off * 0.3),
                ]
                roles = ["wager", "behind"]
            else:
                half = float(rng.uniform(21.5, 24))
                s = float(rng.uniform(-4, 4))
                spots = [
                    (bx - px_ * half + ax * s, by - py_ * half + ay * s),
                    (bx + px_ * half - ax * s, by + py_ * half - ay * s),
                ]
                roles = ["wager", "wager"]
            for (sx, sy), role in zip(spots, roles, strict=True):
                n = _height(rng)
                values = _values(rng, table, n, rng.random() < tier.unsorted_chance)
                stacks.append(
                    build_stack(
                        rng,
                        box.box,
                        (float(sx), float(sy)),
                        values,
                        T,
                        lean_mm=lean,
                        jitter_mm=tier.jitter_mm,
                        role=role,
                    )
                )
        if rng.random() < tier.player_chance:
            d = float(rng.uniform(110, 160))
            qx, qy = table.behind(box, d)
            side = float(rng.uniform(-30, 30))
            n = int(rng.integers(2, 21))
            stacks.append(
                build_stack(
                    rng,
                    box.box,
                    (qx + px_ * side, qy + py_ * side),
                    _values(rng, table, n, False),
                    T,
                    lean_mm=0.3,
                    jitter_mm=tier.jitter_mm,
                    own=True,
                    role="player",
                )
            )
    if tier.hand_chance > 0:
        for box in table.boxes:
            if rng.random() < tier.hand_chance / 2:
                hands.append(draw_hand(rng, table, box.box, viewers[box.box], stacks))
    return Moment(tuple(stacks), tuple(hands), ())


def draw_hand(
    rng: np.random.Generator, table: Table, n: int, viewer: tuple[float, float], stacks: list[Stack]
) -> Hand:
    box = table.box(n)
    bx, by = box.center_mm
    T = table.chip_thickness_mm
    top = max((s.height(T) for s in stacks if s.box == n and not s.own), default=0.0)
    where = str(rng.choice(["over", "front", "front"]))
    if where == "over":
        # a player's hand from the rail side, over the box
        cx, cy = table.arc_center_mm
        to_dealer = bearing((bx, by), (cx, cy))
        rx, ry = table.behind(box, float(rng.uniform(40, 80)))
        return build_hand(
            rng,
            n,
            "over",
            (rx, ry, top + float(rng.uniform(25, 60))),
            to_dealer + float(rng.uniform(-25, 25)),
            droop_deg=float(rng.uniform(10, 30)),
        )
    # the dealer's hand on the cloth between the camera and the box, pointing across the view
    k = float(rng.uniform(0.55, 0.8))
    wx, wy = viewer[0] + (bx - viewer[0]) * k, viewer[1] + (by - viewer[1]) * k
    view = bearing(viewer, (bx, by))
    point = view + float(rng.choice([-1, 1])) * float(rng.uniform(50, 80))
    return build_hand(rng, n, "front", (wx, wy, 26.0), point, droop_deg=float(rng.uniform(5, 15)))


def calibration_moment(
    table: Table, facing: dict[int, tuple[float, float]], rng: np.random.Generator
) -> Moment:
    """A target stood in every box, facing the camera at ``facing[box]``."""
    targets = []
    for box in table.boxes:
        bx, by = box.center_mm
        cam = facing[box.box]
        targets.append(
            Target(
                box.box,
                (bx + float(rng.uniform(-5, 5)), by + float(rng.uniform(-5, 5))),
                bearing((bx, by), cam) + float(rng.uniform(-8, 8)),
                float(rng.uniform(4, 12)),  # on its stand, leaning back a little
            )
        )
    return Moment((), (), tuple(targets))


def known_moments(table: Table, rng: np.random.Generator) -> list[Moment]:
    """Stacks of ``KNOWN_STACK`` chips of one denomination each, squared, one per box, as
    many moments as the denominations need."""
    values = [c.value for c in table.chips]
    boxes = table.boxes
    out = []
    for start in range(0, len(values), len(boxes)):
        stacks = []
        for box, v in zip(boxes, values[start : start + len(boxes)], strict=False):
            stacks.append(
                build_stack(
                    rng,
                    box.box,
                    box.center_mm,
                    [v] * KNOWN_STACK,
                    table.chip_thickness_mm,
                    jitter_mm=0.1,
                )
            )
        out.append(Moment(tuple(stacks), (), ()))
    return out
