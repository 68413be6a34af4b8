"""The dealer's hand and sleeve over a box: capsules and a flattened ellipsoid, ray-traced.

A right or left hand, palm down, reaching in from the dealer's side (+y) with the fingers
close together and bent down at the middle joint; a bare wrist; a shirt sleeve with its cuff;
the arm bends at the elbow and goes back to the dealer's shoulder beyond the dealer's edge and
out of the picture (the dealer leans in to reach a far box). Skin tones run from light to
dark; sleeves are white, black or a dealer's waistcoat colour. The hand hovers over a box
(above the tallest stack near it) and may be moving: its motion blur is its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from drivers.camera.scene.layout import hex_rgb, srgb_to_linear
from drivers.camera.scene.lighting import F64

SKINS = ("#f1c7a8", "#e0ac89", "#c68a62", "#a26a45", "#7a4a2e", "#553320")
SLEEVES = ("#dcdcd6", "#16161a", "#1c2a48", "#5a1e2a", "#2a2a2e")

SKIN, SLEEVE, CUFF = 0, 1, 2


@dataclass(frozen=True)
class Capsule:
    a: tuple[float, float, float]
    b: tuple[float, float, float]
    radius: float
    material: int


@dataclass(frozen=True)
class Ellipsoid:
    centre: tuple[float, float, float]
    axes: tuple[tuple[float, float, float], ...]  # rows: unit axes
    semi: tuple[float, float, float]
    material: int


@dataclass(frozen=True)
class Hand:
    capsules: tuple[Capsule, ...]
    palm: Ellipsoid
    skin: str
    sleeve: str
    over_box: int
    motion_px: tuple[float, float]  # the hand's own smear in the picture during the exposure
    folds: tuple[float, float, float]  # phases of the sleeve's creases

    def albedo(self, material: int) -> F64:
        if material == SKIN:
            return srgb_to_linear(hex_rgb(self.skin))
        if material == CUFF:
            return srgb_to_linear(hex_rgb(self.sleeve)) * 0.8 + 0.02
        return srgb_to_linear(hex_rgb(self.sleeve))

    def raised(self, dz: float) -> Hand:
        """The same hand ``dz`` mm higher."""

        def up(p: tuple[float, float, float]) -> tuple[float, float, float]:
            return (p[0], p[1], p[2] - dz)

        caps = tuple(Capsule(up(c.a), up(c.b), c.radius, c.material) for c in self.capsules)
        palm = Ellipsoid(up(self.palm.centre), self.palm.axes, self.palm.semi, self.palm.material)
        return replace(self, capsules=caps, palm=palm)

    def clearance(self, x: float, y: float, reach: float, height: float) -> float:
        """How far the hand would have to rise to pass over a cylinder of radius ``reach`` and
        ``height`` standing at ``(x, y)`` (0: it already does)."""
        need = 0.0
        for c in self.capsules:
            a, b = np.array(c.a), np.array(c.b)
            for t in np.linspace(0.0, 1.0, 24):
                p = a + t * (b - a)
                if math.hypot(p[0] - x, p[1] - y) < reach + c.radius:
                    need = max(need, height + c.radius + 3.0 - (-p[2]))
        cx, cy, cz = self.palm.centre
        if math.hypot(cx - x, cy - y) < reach + max(self.palm.semi):
            need = max(need, height + self.palm.semi[2] + 3.0 - (-cz))
        return need

    def bounds(self) -> F64:
        """Points whose hull holds the whole hand and arm (for the picture's bounding box)."""
        return np.concatenate([pts for _, pts in parts(self)])


def make_hand(
    rng: np.random.Generator,
    over: tuple[float, float],
    height_mm: float,
    box: int,
    motion_px: tuple[float, float],
    dealer: tuple[float, float],
) -> Hand:
    """A hand whose palm centre hovers ``height_mm`` above the felt point ``over``, on the arm
    of a dealer standing at ``dealer`` (felt coordinates, beyond the dealer's edge)."""
    right = bool(rng.random() < 0.7)
    size = float(rng.uniform(0.9, 1.1))
    up = np.array([0.0, 0.0, -1.0])
    palm_c = np.array([over[0], over[1], -height_mm])
    # the shoulder: 180 mm to the hand's side of the dealer's middle, low enough that the arm
    # comes into the picture from its bottom edge (a camera behind the dealer looks over them)
    shoulder = np.array([dealer[0] + (180.0 if right else -180.0), dealer[1], -260.0])
    upper, fore = 300.0 * size, 270.0 * size
    # the fingers point along the forearm, give or take
    reach = palm_c[:2] - shoulder[:2]
    heading = math.atan2(reach[0], -reach[1]) + math.radians(float(rng.uniform(-15, 15)))
    fwd = np.array([math.sin(heading), -math.cos(heading), 0.0])
    side = np.array([math.cos(heading), math.sin(heading), 0.0])  # to +x when pointing at -y
    wrist = palm_c - fwd * 48 * size + up * 4
    # a dealer leans in to reach a far box: the shoulder comes no further than the arm allows
    span = float(np.linalg.norm(wrist - shoulder))
    if span > 0.96 * (upper + fore):
        shoulder = wrist + (shoulder - wrist) * (0.96 * (upper + fore) / span)
        span = 0.96 * (upper + fore)
    elbow = _elbow(shoulder, wrist, upper, fore, side * (1.0 if right else -1.0) + 0.3 * up)
    if elbow[2] > -80.0:  # the elbow stays clear of the felt
        elbow = _elbow(shoulder, wrist, upper, fore, up)
    palm = Ellipsoid(
        centre=_t(palm_c),
        axes=(_t(fwd), _t(side), _t(up)),
        semi=(50 * size, 42 * size, 13 * size),
        material=SKIN,
    )
    caps: list[Capsule] = []
    thumb_side = -1.0 if right else 1.0  # palm down, a right hand's thumb is on its left (-x)
    spread = [-5.0, -1.5, 2.0, 6.0]
    lengths = [74.0, 82.0, 78.0, 62.0]
    radii = [8.5, 8.8, 8.3, 7.4]
    offsets = [-0.75, -0.25, 0.25, 0.75]
    curl = float(rng.uniform(0.15, 0.5))
    for k in range(4):
        # index finger next to the thumb
        j = k if thumb_side < 0 else 3 - k
        ang = math.radians(spread[j] * -thumb_side)
        d = math.cos(ang) * fwd + math.sin(ang) * side
        base = palm_c + fwd * 44 * size + side * offsets[k] * 34 * size * -thumb_side
        length = lengths[j] * size
        knuckle = base + d * length * 0.5 - up * 2
        tip = knuckle + (d * math.cos(curl) - up * math.sin(curl)) * length * 0.5
        caps.append(Capsule(_t(base), _t(knuckle), radii[j] * size, SKIN))
        caps.append(Capsule(_t(knuckle), _t(tip), radii[j] * size * 0.92, SKIN))
    thumb_base = palm_c + side * thumb_side * 30 * size - fwd * 8 * size
    thumb_dir = (fwd * 0.7 + side * thumb_side * 0.7) / math.sqrt(0.98)
    thumb_tip = thumb_base + thumb_dir * 58 * size + up * -6
    caps.append(Capsule(_t(thumb_base), _t(thumb_tip), 10.5 * size, SKIN))
    # the bare wrist, the cuff, the sleeve to the elbow and on up to the shoulder
    along = (elbow - wrist) / np.linalg.norm(elbow - wrist)
    cuff_at = wrist + along * float(rng.uniform(30, 70))
    caps.append(Capsule(_t(wrist), _t(cuff_at), 27 * size, SKIN))
    caps.append(Capsule(_t(cuff_at), _t(cuff_at + along * 20), 35 * size, CUFF))
    caps.append(Capsule(_t(cuff_at + along * 18), _t(elbow), 39 * size, SLEEVE))
    # the upper arm, and on from the shoulder towards the dealer: the body is out of the picture
    beyond = shoulder + np.array([0.0, 400.0, -120.0])
    caps.append(Capsule(_t(elbow), _t(shoulder), 45 * size, SLEEVE))
    caps.append(Capsule(_t(shoulder), _t(beyond), 52 * size, SLEEVE))
    return Hand(
        capsules=tuple(caps),
        palm=palm,
        skin=SKINS[int(rng.integers(len(SKINS)))],
        sleeve=SLEEVES[int(rng.integers(len(SLEEVES)))],
        over_box=box,
        motion_px=motion_px,
        folds=(
            float(rng.uniform(0, 6.3)),
            float(rng.uniform(0, 6.3)),
            float(rng.uniform(0, 6.3)),
        ),
    )


def _elbow(shoulder: F64, wrist: F64, upper: float, fore: float, bend: F64) -> F64:
    """Where the elbow is, the arm's two bones spanning shoulder to wrist, bent towards
    ``bend`` (outwards and down, as an arm hangs)."""
    axis = wrist - shoulder
    d = float(np.linalg.norm(axis))
    u = axis / d
    a = (upper * upper - fore * fore + d * d) / (2 * d)
    h = math.sqrt(max(upper * upper - a * a, 0.0))
    n = bend - (bend @ u) * u
    n /= max(float(np.linalg.norm(n)), 1e-9)
    return np.asarray(shoulder + a * u + h * n, np.float64)


def _t(v: F64) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))


def _corners(centre: tuple[float, float, float], r: float) -> list[tuple[float, float, float]]:
    return [
        (centre[0] + dx * r, centre[1] + dy * r, centre[2] + dz * r)
        for dx in (-1, 1)
        for dy in (-1, 1)
        for dz in (-1, 1)
    ]


Primitive = Capsule | Ellipsoid


def parts(hand: Hand) -> list[tuple[Primitive, F64]]:
    """Each primitive with points whose hull holds it (for its box in the picture)."""
    out: list[tuple[Primitive, F64]] = []
    for c in hand.capsules:
        out.append((c, np.array(_corners(c.a, c.radius) + _corners(c.b, c.radius))))
    out.append((hand.palm, np.array(_corners(hand.palm.centre, max(hand.palm.semi)))))
    return out


def hit(origin: F64, dirs: F64, part: Primitive) -> tuple[F64, F64]:
    """Distance (inf: missed) and unit normal of each ray's first hit on one primitive."""
    if isinstance(part, Capsule):
        return _capsule(origin, dirs, part)
    return _ellipsoid(origin, dirs, part)


def _capsule(origin: F64, dirs: F64, cap: Capsule) -> tuple[F64, F64]:
    a, b = np.array(cap.a), np.array(cap.b)
    axis = b - a
    length = float(np.linalg.norm(axis))
    u = axis / length
    m = origin - a
    r = cap.radius
    # the side: |(m + t d) - ((m + t d) . u) u| = r
    du = dirs @ u
    mu = float(m @ u)
    dp = dirs - du[:, None] * u
    mp = m - mu * u
    qa = np.einsum("nk,nk->n", dp, dp)
    qb = 2 * (dp @ mp)
    qc = float(mp @ mp) - r * r
    disc = qb * qb - 4 * qa * qc
    qa_safe = np.where(qa > 1e-12, qa, 1e-12)
    t_side = (-qb - np.sqrt(np.clip(disc, 0, None))) / (2 * qa_safe)
    s = mu + t_side * du
    ok = (disc >= 0) & (qa > 1e-12) & (t_side > 0) & (s >= 0) & (s <= length)
    best = np.where(ok, t_side, np.inf)
    for end in (a, b):
        t_end = _sphere(origin, dirs, end, r)
        best = np.minimum(best, t_end)
    hit = origin + np.where(np.isfinite(best), best, 0.0)[:, None] * dirs
    along = np.clip((hit - a) @ u, 0, length)
    nrm = hit - (a + along[:, None] * u)
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-9)
    return best, nrm


def _sphere(origin: F64, dirs: F64, centre: F64, r: float) -> F64:
    m = origin - centre
    b = dirs @ m
    c = float(m @ m) - r * r
    disc = b * b - c
    t = -b - np.sqrt(np.clip(disc, 0, None))
    return np.where((disc >= 0) & (t > 0), t, np.inf)


def _ellipsoid(origin: F64, dirs: F64, e: Ellipsoid) -> tuple[F64, F64]:
    axes = np.array(e.axes)
    semi = np.array(e.semi)
    o = (axes @ (origin - np.array(e.centre))) / semi
    d = (dirs @ axes.T) / semi
    a = np.einsum("nk,nk->n", d, d)
    b = 2 * (d @ o)
    c = float(o @ o) - 1
    disc = b * b - 4 * a * c
    t = (-b - np.sqrt(np.clip(disc, 0, None))) / (2 * a)
    t = np.where((disc >= 0) & (t > 0), t, np.inf)
    p = o + np.where(np.isfinite(t), t, 0.0)[:, None] * d
    nrm = (p / semi) @ axes
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-9)
    return t, nrm
