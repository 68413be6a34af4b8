"""Casino chips as a camera sees them: 39 x 3.3 mm cylinders of coloured clay.

Each denomination has the config's colour (its face under the table's lights) and a design
made the way real clay chips are: edge spots (inserts of a contrasting clay, through the whole
chip, so they show on the face's rim and on the side), a moulded ring, and a printed inlay in
the middle of the face carrying the value. The side is the same clay as the face; it looks
darker only because it faces sideways under lamps that hang above (see :mod:`lighting`). The
edges are rounded (``edge_mm``), which is what draws the light and dark seams between the
chips of a stack. Each chip varies a little in colour, sits at its own turn about its axis, and
may be tilted a little on the chip below.

Chips are ray-traced: :func:`intersect` finds, for each ray, the first chip it meets and where;
:func:`shade` turns the hits into radiance.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.scene.layout import srgb_to_linear
from drivers.camera.scene.lighting import F32, F64, Lighting, direct, remap_points, sky
from drivers.camera.scene.tiers import CHIP_THICKNESS_MM

I64 = npt.NDArray[np.int64]

FACE_TEXELS = 256
SIDE_COLUMNS = 720
SIDE_ROWS = 16


@dataclass(frozen=True)
class ChipModel:
    """The physical chip: the sizes are settings (a real casino chip is 39 x 3.3 mm)."""

    diameter_mm: float = 39.0
    thickness_mm: float = CHIP_THICKNESS_MM
    edge_mm: float = 0.6  # radius of the rounded edges
    inlay_mm: float = 25.0  # diameter of the printed inlay
    face_gloss: float = 0.035  # specular strength of the clay and of the laminate inlay
    inlay_gloss: float = 0.12

    @property
    def radius_mm(self) -> float:
        return self.diameter_mm / 2


@dataclass
class ChipDesign:
    value: int
    face: F32  # (FACE_TEXELS, FACE_TEXELS, 3) linear albedo, x/y across the face
    gloss: F32  # (FACE_TEXELS, FACE_TEXELS) specular strength
    side: F32  # (SIDE_ROWS, SIDE_COLUMNS, 3): rows bottom to top, columns round the edge
    spots: int
    spot_colours: list[str] = field(default_factory=list)


def _hexs(rgb: tuple[float, float, float]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(round(c) for c in rgb))


def _accents(colour: tuple[int, int, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The spot clay and the stripe in each spot: light on dark chips, dark on light ones."""
    r, g, b = (c / 255 for c in colour)
    hue, _, sat = colorsys.rgb_to_hls(r, g, b)
    luma = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2]
    other = (hue + 0.5) % 1.0
    if luma > 165:  # white or yellow chips: navy spots with a stripe of the opposite hue
        spot = (30, 52, 140)
        stripe = colorsys.hls_to_rgb(other if sat > 0.2 else 0.98, 0.42, 0.8)
    else:
        spot = (240, 236, 226)
        stripe = colorsys.hls_to_rgb(other if sat > 0.2 else 0.0, 0.62, 0.75)
    return spot, (round(stripe[0] * 255), round(stripe[1] * 255), round(stripe[2] * 255))


def design(colour: tuple[int, int, int], value: int, index: int, model: ChipModel) -> ChipDesign:
    """The face and side of one denomination (drawn in sRGB, returned as linear albedo)."""
    n = FACE_TEXELS
    mm = n / model.diameter_mm  # texels per mm
    big_r = model.radius_mm
    spots = (6, 8, 6, 4, 8, 6)[index % 6]
    spot, stripe = _accents(colour)
    base = np.array(colour, np.float64)
    c = (np.arange(n) + 0.5) / mm - big_r
    x, y = np.meshgrid(c, c)
    rho = np.hypot(x, y)
    phi = np.arctan2(y, x)
    face = np.empty((n, n, 3), np.float64)
    face[:] = base
    # the moulded clay: fine radial ridges between the inlay and the rim
    ridges = 1.0 + 0.05 * np.sin(phi * 72) * ((rho > model.inlay_mm / 2) & (rho < big_r - 6.5))
    face *= ridges[..., None]
    # edge spots: arcs of the rim zone, a stripe of the second colour down the middle of each
    width = 2 * math.pi / spots * 0.27
    rel = (phi + math.pi / spots) % (2 * math.pi / spots) - math.pi / spots  # 0 at a spot centre
    rim = rho > big_r - 6.0
    in_spot = rim & (np.abs(rel) < width / 2)
    face[in_spot] = spot
    face[in_spot & (np.abs(rel) < width / 8)] = stripe
    # a thin dashed ring where the rim meets the moulded clay, in the spot colour
    ring = (np.abs(rho - (big_r - 6.3)) < 0.3) & (np.sin(phi * 48) > -0.2)
    face[ring] = np.array(spot) * 0.85 + base * 0.15
    # the inlay: a laminated print, off-white with a ring and the value in the chip's colour
    light = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2] > 165
    paper = np.array((236, 232, 220), np.float64)
    ink = np.array(spot if light else colour, np.float64)
    inlay_r = model.inlay_mm / 2
    inlay = rho < inlay_r
    face[inlay] = paper
    face[(rho > inlay_r - 1.9) & (rho < inlay_r - 1.0)] = ink
    face[(rho >= inlay_r - 0.15) & (rho < inlay_r + 0.35)] = base * 0.7
    face8 = np.clip(face, 0, 255).astype(np.uint8).copy()
    text = str(value)
    font = cv2.FONT_HERSHEY_DUPLEX
    (tw, th), _ = cv2.getTextSize(text, font, 1.0, 2)
    scale = min(0.62 * model.inlay_mm * mm / tw, 0.3 * model.inlay_mm * mm / th)
    thick = max(2, round(scale * 2.2))
    org = (round(n / 2 - tw * scale / 2), round(n / 2 + th * scale / 2))
    ink_t = (int(ink[0]), int(ink[1]), int(ink[2]))
    cv2.putText(face8, text, org, font, scale, ink_t, thick, cv2.LINE_AA)
    gloss = np.where(inlay, model.inlay_gloss, model.face_gloss).astype(np.float32)
    # the side: the clay, the spots through the whole thickness at the same angles
    cols = (np.arange(SIDE_COLUMNS) + 0.5) / SIDE_COLUMNS * 2 * math.pi - math.pi
    rel_s = (cols + math.pi / spots) % (2 * math.pi / spots) - math.pi / spots
    side = np.empty((SIDE_ROWS, SIDE_COLUMNS, 3), np.float64)
    side[:] = base
    side[:, np.abs(rel_s) < width / 2] = spot
    side[:, np.abs(rel_s) < width / 8] = stripe
    return ChipDesign(
        value=value,
        face=np.asarray(srgb_to_linear(face8.astype(np.float64)), np.float32),
        gloss=gloss,
        side=np.asarray(srgb_to_linear(side), np.float32),
        spots=spots,
        spot_colours=[_hexs(tuple(float(v) for v in spot)), _hexs(stripe)],  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class Chip:
    """One chip where it lies: ``frame`` rows are its local x, y and axis (up) in the world."""

    value: int
    design: int  # index into the designs
    bottom: tuple[float, float, float]  # centre of its bottom face (world mm)
    frame: tuple[tuple[float, float, float], ...]
    turn: float  # radians about its axis (where its spots are)
    tint: tuple[float, float, float]  # this chip's colour against its denomination's


def chip_frame(tilt_rad: float, towards_rad: float) -> tuple[tuple[float, float, float], ...]:
    """Local axes of a chip tilted ``tilt_rad`` towards the direction ``towards_rad``.

    Untilted, local x is world x and local y world y (so the face print reads upright to a
    camera facing the players) and the axis is up (-z)."""
    axis = np.array(
        [
            math.sin(tilt_rad) * math.cos(towards_rad),
            math.sin(tilt_rad) * math.sin(towards_rad),
            -math.cos(tilt_rad),
        ]
    )
    ref = np.array([1.0, 0.0, 0.0])
    ex = ref - (ref @ axis) * axis
    ex /= np.linalg.norm(ex)
    ey = np.cross(ex, axis)
    return tuple((float(r[0]), float(r[1]), float(r[2])) for r in (ex, ey, axis))


@dataclass
class Hits:
    """The first chip each ray meets: -1 where none."""

    t: F64  # distance along the ray
    chip: I64  # index into the chip list
    surface: I64  # 0 top face, 1 bottom face, 2 side
    local: F64  # (N, 3) hit point in the chip's frame (origin at its bottom centre)


def intersect(origin: F64, dirs: F64, chips: list[Chip], model: ChipModel) -> Hits:
    """Ray-trace ``dirs`` (N, 3) from ``origin`` against every chip (all at once)."""
    n = len(dirs)
    if not chips:
        return Hits(np.full(n, np.inf), np.full(n, -1), np.full(n, -1), np.zeros((n, 3)))
    frames = np.array([c.frame for c in chips])  # (M, 3, 3)
    bottoms = np.array([c.bottom for c in chips])  # (M, 3)
    q0 = np.einsum("mjk,mk->mj", frames, origin[None, :] - bottoms)  # (M, 3)
    v = (dirs @ frames.reshape(len(chips) * 3, 3).T).reshape(n, len(chips), 3)  # (N, M, 3)
    r, thick = model.radius_mm, model.thickness_mm
    big = np.inf
    va = v[..., 2]
    va_safe = np.where(np.abs(va) > 1e-12, va, 1e-12)
    best = np.full(v.shape[:2], big)
    kind = np.full(v.shape[:2], -1)
    for surface, level in ((0, thick), (1, 0.0)):
        t = (level - q0[None, :, 2]) / va_safe
        px = q0[None, :, 0] + t * v[..., 0]
        py = q0[None, :, 1] + t * v[..., 1]
        ok = (t > 0) & (px * px + py * py <= r * r)
        take = ok & (t < best)
        best = np.where(take, t, best)
        kind = np.where(take, surface, kind)
    a = v[..., 0] ** 2 + v[..., 1] ** 2
    b = 2 * (q0[None, :, 0] * v[..., 0] + q0[None, :, 1] * v[..., 1])
    c = q0[None, :, 0] ** 2 + q0[None, :, 1] ** 2 - r * r
    disc = b * b - 4 * a * c
    a_safe = np.where(a > 1e-12, a, 1e-12)
    ts = (-b - np.sqrt(np.clip(disc, 0, None))) / (2 * a_safe)
    h = q0[None, :, 2] + ts * va
    ok = (disc >= 0) & (a > 1e-12) & (ts > 0) & (h >= 0) & (h <= thick)
    take = ok & (ts < best)
    best = np.where(take, ts, best)
    kind = np.where(take, 2, kind)
    chip = np.argmin(best, axis=1)
    rows = np.arange(n)
    t_best = best[rows, chip]
    hit = np.isfinite(t_best)
    local = q0[chip] + t_best[:, None] * v[rows, chip]
    return Hits(
        t=np.where(hit, t_best, np.inf),
        chip=np.where(hit, chip, -1),
        surface=np.where(hit, kind[rows, chip], -1),
        local=np.where(hit[:, None], local, 0.0),
    )


def blocked(points: F64, dirs: F64, chips: list[Chip], model: ChipModel) -> npt.NDArray[np.bool_]:
    """Whether the ray from each point ``(N, 3)`` along ``dirs`` ``(N, 3)`` meets any chip (a
    shadow ray: it starts a hair off the surface, so a chip does not shadow itself where it
    faces the lamp, which it cannot, being convex)."""
    if not chips or not len(points):
        return np.zeros(len(points), bool)
    frames = np.array([c.frame for c in chips])  # (M, 3, 3)
    bottoms = np.array([c.bottom for c in chips])
    m = len(chips)
    axes = frames.reshape(m * 3, 3).T  # (3, M*3): each chip's local axes as columns
    start = points + dirs * 0.05
    offset = np.einsum("mjk,mk->mj", frames, bottoms).reshape(m * 3)
    q0 = (start @ axes - offset).reshape(-1, m, 3)
    v = (dirs @ axes).reshape(-1, m, 3)
    r, thick = model.radius_mm, model.thickness_mm
    va = np.where(np.abs(v[..., 2]) > 1e-12, v[..., 2], 1e-12)
    hit = np.zeros(v.shape[:2], bool)
    for level in (thick, 0.0):
        t = (level - q0[..., 2]) / va
        px = q0[..., 0] + t * v[..., 0]
        py = q0[..., 1] + t * v[..., 1]
        hit |= (t > 0) & (px * px + py * py <= r * r)
    a = v[..., 0] ** 2 + v[..., 1] ** 2
    b = 2 * (q0[..., 0] * v[..., 0] + q0[..., 1] * v[..., 1])
    c = q0[..., 0] ** 2 + q0[..., 1] ** 2 - r * r
    disc = b * b - 4 * a * c
    root = np.sqrt(np.clip(disc, 0, None))
    a_safe = np.where(a > 1e-12, a, 1e-12)
    for sign in (-1.0, 1.0):
        ts = (-b + sign * root) / (2 * a_safe)
        h = q0[..., 2] + ts * v[..., 2]
        hit |= (disc >= 0) & (a > 1e-12) & (ts > 0) & (h >= 0) & (h <= thick)
    return np.asarray(hit.any(axis=1), bool)


def _sample(texture: F32, u: F64, v: F64, wrap: bool) -> F32:
    border = cv2.BORDER_WRAP if wrap else cv2.BORDER_REPLICATE
    return remap_points(texture, u, v, border).reshape(len(u), *texture.shape[2:])


@dataclass
class Surface:
    """What the shading needs at each hit point, in world terms."""

    point: F64  # (N, 3)
    normal: F64  # (N, 3)
    albedo: F64  # (N, 3) linear
    gloss: F64  # (N,)
    shininess: F64  # (N,)


def surface(
    hits: Hits,
    origin: F64,
    dirs: F64,
    chips: list[Chip],
    designs: list[ChipDesign],
    model: ChipModel,
) -> Surface:
    """Normals (with the rounded edges), albedo and gloss at the hit rays (``hits.chip >= 0``)."""
    sel = hits.chip >= 0
    idx = hits.chip[sel]
    q = hits.local[sel]
    kind = hits.surface[sel]
    frames = np.array([c.frame for c in chips])[idx]  # (K, 3, 3)
    turn = np.array([c.turn for c in chips])[idx]
    tint = np.array([c.tint for c in chips])[idx]
    which = np.array([c.design for c in chips])[idx]
    r, thick, e = model.radius_mm, model.thickness_mm, model.edge_mm
    rho = np.hypot(q[:, 0], q[:, 1])
    phi = np.arctan2(q[:, 1], q[:, 0])
    cosp, sinp = np.cos(phi), np.sin(phi)
    # local normals: flat faces and side, bent over the rounded edges
    n_local = np.zeros_like(q)
    face = kind != 2
    sign = np.where(kind == 1, -1.0, 1.0)
    alpha = np.clip((rho - (r - e)) / e, 0, 1) * (math.pi / 4)
    n_local[face, 0] = (cosp * np.sin(alpha))[face]
    n_local[face, 1] = (sinp * np.sin(alpha))[face]
    n_local[face, 2] = (sign * np.cos(alpha))[face]
    up = np.clip((q[:, 2] - (thick - e)) / e, 0, 1)
    dn = np.clip((e - q[:, 2]) / e, 0, 1)
    beta = (up - dn) * (math.pi / 4)
    side = ~face
    n_local[side, 0] = (cosp * np.cos(beta))[side]
    n_local[side, 1] = (sinp * np.cos(beta))[side]
    n_local[side, 2] = np.sin(beta)[side]
    normal = np.einsum("kj,kjl->kl", n_local, frames)
    point = origin + hits.t[sel][:, None] * dirs[sel]
    # texture coordinates in the chip's own turn
    ang = phi - turn
    ca, sa = np.cos(turn), np.sin(turn)
    tx = ca * q[:, 0] + sa * q[:, 1]
    ty = -sa * q[:, 0] + ca * q[:, 1]
    albedo = np.zeros((len(idx), 3))
    gloss = np.zeros(len(idx))
    shine = np.where(face, 24.0, 12.0)
    for d, des in enumerate(designs):
        f = face & (which == d)
        if f.any():
            # the bottom face is the top face seen through the chip: mirror x
            fx = np.where(kind[f] == 1, -tx[f], tx[f])
            u = (fx + r) / (2 * r) * FACE_TEXELS - 0.5
            v = (ty[f] + r) / (2 * r) * FACE_TEXELS - 0.5
            albedo[f] = _sample(des.face, u, v, wrap=False)
            gloss[f] = _sample(des.gloss, u, v, wrap=False)
        s = side & (which == d)
        if s.any():
            a = (ang[s] + math.pi) % (2 * math.pi)
            u = a / (2 * math.pi) * SIDE_COLUMNS - 0.5
            v = np.clip(q[s, 2] / thick, 0, 1) * SIDE_ROWS - 0.5
            albedo[s] = _sample(des.side, u, v, wrap=True)
            gloss[s] = model.face_gloss * 0.8
    shine = np.where(gloss > model.face_gloss * 1.5, 60.0, shine)
    return Surface(point, normal, albedo * tint, gloss, shine)


def radiance(
    surf: Surface,
    view: F64,
    lighting: Lighting,
    visibility: list[F64],
) -> F64:
    """Light leaving each surface point towards the camera: diffuse plus a white sheen.

    ``view`` (N, 3) points from the surface to the camera; ``visibility[l]`` (N,) is how much of
    lamp ``l`` reaches each point (1: none of it shadowed)."""
    diffuse = sky(surf.normal, lighting)
    spec = np.zeros(len(surf.point))
    spec_rgb = np.zeros((len(surf.point), 3))
    for lamp, vis in zip(lighting.lamps, visibility, strict=True):
        e, omega, _ = direct(surf.point, surf.normal, lamp)
        e = e * vis
        diffuse += np.outer(e, lamp.colour)
        half = omega + view
        half /= np.linalg.norm(half, axis=1, keepdims=True)
        nh = np.clip(np.einsum("nk,nk->n", surf.normal, half), 0, 1)
        spec = surf.gloss * nh**surf.shininess * (surf.shininess + 2) / 8 * e
        spec_rgb += np.outer(spec, lamp.colour)
    return np.asarray(surf.albedo * diffuse + spec_rgb, np.float64)
