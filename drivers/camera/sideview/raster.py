"""Tracing one camera's view of the table onto its undistorted canvas, in linear light.

Every surface is found by intersecting the pixel's ray with it, exactly: the cloth (a plane)
and the rail (the inside of a cylinder) once per camera and lighting (:class:`Background`), then
per frame each chip (a vertical cylinder with its two faces), each finger and sleeve (capsules)
and each calibration card (a rectangle), only inside the object's own box on the canvas, with a
depth buffer between them. The ray parameter of a pixel is its depth along the optical axis, so
depths compare across objects.

Shading: Lambert for a key lamp (with soft shadows: four rays towards the lamp's disc, cast by
the stacks and the hands) and an unshadowed fill lamp, ambient light from the room, Blinn-Phong
highlights on the chips' faces. The cloth carries the box outlines, printed, with their width
taken over each pixel's footprint so they fade instead of shimmering where they are far.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt
import segno

from drivers.camera.sideview.camera import Camera
from drivers.camera.sideview.chips import (
    EDGE_ANGLES,
    EDGE_ROWS,
    edge_texture,
    face_colours,
    to_linear,
)
from drivers.camera.sideview.lighting import Lighting
from drivers.camera.sideview.scene import Capsule, Moment, Target
from drivers.camera.sideview.table import Table

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]
Mask = npt.NDArray[np.bool_]

# What each pixel of the identity buffer shows (the object's index is added to the kind).
ID_NONE = -1
ID_CHIP = 0  # + chip's global index * 4 + face (0 side, 1 top, 2 bottom)
ID_HAND = 10_000_000  # + capsule index
ID_TARGET = 20_000_000  # + target index

_SHADOW_OFFSETS = ((0.0, 0.0), (0.7, 0.0), (-0.35, 0.6), (-0.35, -0.6))


@lru_cache(maxsize=32)
def qr_texture(text: str, px_per_module: int, quiet: int = 4) -> F32:
    """The code's linear albedo (1 white, 0.03 black), ``quiet`` modules of white round it."""
    qr = segno.make(text, error="m", micro=False)
    m = np.array([list(row) for row in qr.matrix], dtype=np.float32)
    m = np.pad(m, quiet)
    img = np.where(m > 0, 0.03, 0.86).astype(np.float32)
    return np.kron(img, np.ones((px_per_module, px_per_module), np.float32))


def qr_modules(text: str) -> int:
    return len(segno.make(text, error="m", micro=False).matrix)


@lru_cache(maxsize=4)
def _noise(seed: int, size: int) -> F32:
    rng = np.random.default_rng(seed)
    n = rng.standard_normal((size, size)).astype(np.float32)
    return np.asarray(cv2.GaussianBlur(n, (0, 0), 1.2) * 1.6, np.float32)


def _sample(tex: F32, u: F32, v: F32) -> F32:
    """Bilinear, wrapping: ``tex`` at texel coordinates ``u`` (columns) and ``v`` (rows)."""
    return np.asarray(
        cv2.remap(tex, u, v, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP),
        np.float32,
    )


@dataclass
class Background:
    """The cloth, the rail and the room as one camera sees them under one lighting."""

    ambient: F32  # (H, W, 3) radiance from the room's light
    direct: F32  # (H, W, 3) radiance from the lamps (the key lamp's part is shadowed later)
    key_part: F32  # (H, W) share of ``direct`` that is the key lamp's
    cloth: Mask
    px: F32  # cloth point of each pixel (mm), NaN elsewhere
    py: F32
    depth: F32


def _smooth(x: F32) -> F32:
    x = np.clip(x, 0.0, 1.0)
    return np.asarray(x * x * (3 - 2 * x), np.float32)


def make_background(cam: Camera, table: Table, light: Lighting) -> Background:
    w, h, _, _ = cam.canvas
    v, u = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy, dz = cam.rays(u, v)
    cx, cy, cz = (np.float32(c) for c in cam.C)
    ax, ay = (np.float32(c) for c in table.arc_center_mm)
    R = np.float32(table.rail_radius_mm)
    down = dz < -1e-6
    with np.errstate(divide="ignore", invalid="ignore"):
        t_cloth = np.where(down, -cz / dz, np.inf).astype(np.float32)
    with np.errstate(invalid="ignore"):  # rays that never meet the cloth: NaN, masked off
        px = cx + t_cloth * dx
        py = cy + t_cloth * dy
        inside = np.hypot(px - ax, py - ay) <= R
    cloth = down & inside & (py >= table.dealer_edge_mm)
    # the rail's inner face: the far root of |O + t d| = R from inside the circle
    ox, oy = cx - ax, cy - ay
    a = dx * dx + dy * dy
    b = 2 * (ox * dx + oy * dy)
    c = ox * ox + oy * oy - R * R
    with np.errstate(divide="ignore", invalid="ignore"):
        t_wall = ((-b + np.sqrt(np.maximum(b * b - 4 * a * c, 0))) / (2 * a)).astype(np.float32)
    wz = cz + t_wall * dz
    wx, wy = cx + t_wall * dx, cy + t_wall * dy
    wall = ~cloth & (wz >= 0) & (wz <= table.rail_height_mm) & (wy >= table.dealer_edge_mm)
    pad_top = ~cloth & ~wall & (wz > table.rail_height_mm) & (wz <= table.rail_height_mm + 40)
    pad_top &= wy >= table.dealer_edge_mm
    dealer = down & ~cloth & ~wall & (py < table.dealer_edge_mm)

    amb = light.ambient_colour()
    key = light.key.colour()
    key_dir = light.key.direction().astype(np.float32)
    fill = light.fill.colour() if light.fill else np.zeros(3, np.float32)
    fill_dir = light.fill.direction().astype(np.float32) if light.fill else np.zeros(3, np.float32)

    albedo = np.zeros((h, w, 3), np.float32)
    key_cos = np.zeros((h, w), np.float32)
    fill_cos = np.zeros((h, w), np.float32)
    amb_k = np.ones((h, w), np.float32)
    # the room beyond the rail: dim, warm, darker upwards, a few far lamps
    room = np.clip(0.05 - 0.04 * (dz / np.maximum(np.hypot(dx, dy), 1e-3)), 0.0, 0.1)
    albedo[:] = np.float32(0.0)
    # (smooth: worked out on a grid eight times coarser and enlarged)
    rng = np.random.default_rng(11)
    az = np.arctan2(dx[::8, ::8], dy[::8, ::8])
    el = np.arctan2(dz[::8, ::8], np.hypot(dx[::8, ::8], dy[::8, ::8]))
    small = np.zeros(az.shape, np.float32)
    for _ in range(9):
        a0, e0, s = rng.uniform(-2.5, 2.5), rng.uniform(0.05, 0.35), rng.uniform(0.01, 0.04)
        small += np.exp(-((az - a0) ** 2 + (el - e0) ** 2) / (2 * s * s)).astype(np.float32)
    glow = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    room_rad = (room + 0.25 * glow)[:, :, None] * np.array([1.0, 0.8, 0.55], np.float32)

    # cloth: felt with a fibre texture, the printed outlines, uneven light
    fine = _noise(3, 512)
    coarse = _noise(5, 256)
    fx = np.nan_to_num(px, nan=0.0, posinf=0.0, neginf=0.0)
    fy = np.nan_to_num(py, nan=0.0, posinf=0.0, neginf=0.0)
    fibre = _sample(fine, fx / np.float32(0.8), fy / np.float32(0.8))
    patches = _sample(coarse, fx / np.float32(90.0), fy / np.float32(90.0))
    felt = to_linear(table.felt)
    cloth_alb = felt[None, None, :] * (1 + 0.07 * fibre)[:, :, None]
    # footprint of a pixel on the cloth (mm), for the printed lines' coverage
    gy, gx = np.gradient(fx), np.gradient(fy)
    foot = np.maximum(np.hypot(gy[0], gx[0]), np.hypot(gy[1], gx[1])).astype(np.float32)
    foot = np.clip(foot, 0.05, 50.0)
    ink = np.zeros((h, w), np.float32)
    half = np.float32(2.5)  # outlines 5 mm wide
    for box in table.boxes:
        bx, by, br = box.center_mm[0], box.center_mm[1], box.radius_mm + 8
        corners = np.array([[bx + ox, by + oy, 0.0] for ox in (-br, br) for oy in (-br, br)])
        bb = _bbox(cam, corners, w, h)
        if bb is None:
            continue
        v0, v1, u0, u1 = bb
        sx, sy, sf = fx[v0:v1, u0:u1], fy[v0:v1, u0:u1], foot[v0:v1, u0:u1]
        d = np.abs(np.hypot(sx - np.float32(bx), sy - np.float32(by)) - np.float32(box.radius_mm))
        line = np.clip(0.5 + (half - d) / sf, 0, 1) * np.clip(2 * half / sf, 0, 1)
        np.maximum(ink[v0:v1, u0:u1], line, out=ink[v0:v1, u0:u1])
    # the line the boxes stand behind (insurance line), an arc nearer the dealer
    d = np.abs(np.hypot(fx - ax, fy - ay) - np.float32(560.0))
    ink = np.maximum(ink, np.clip(0.5 + (1.5 - d) / foot, 0, 1) * np.clip(3.0 / foot, 0, 1))
    print_lin = to_linear(table.print_colour)
    cloth_alb = cloth_alb * (1 - ink[:, :, None]) + print_lin * ink[:, :, None]
    sel = cloth
    albedo[sel] = cloth_alb[sel]
    key_cos[sel] = max(key_dir[2], 0.0)
    fill_cos[sel] = max(fill_dir[2], 0.0)
    amb_k[sel] = (1 + light.uneven * patches)[sel] * 0.9

    # the rail: dark leather facing the table
    nx = -(wx - ax) / R
    ny = -(wy - ay) / R
    leather = np.array([0.045, 0.028, 0.018], np.float32)
    albedo[wall] = leather
    key_cos[wall] = np.maximum(nx * key_dir[0] + ny * key_dir[1], 0)[wall] * 0.6 + 0.3 * key_dir[2]
    fill_cos[wall] = np.maximum(nx * fill_dir[0] + ny * fill_dir[1], 0)[wall] * 0.6
    albedo[pad_top] = leather * 1.3
    key_cos[pad_top] = max(key_dir[2], 0.0)
    # the RAIL codes on the rail's face
    for mark in table.rail_marks:
        n = qr_modules(mark.text)
        module = mark.size_mm / n
        ppm = 6
        tex = qr_texture(mark.text, ppm)
        side_mm = module * (n + 8)
        zc = table.rail_height_mm / 2
        ends = []
        for s_mm in (-side_mm / 2, side_mm / 2):
            ang = math.radians(mark.azimuth_deg) + s_mm / R
            for z in (zc - side_mm / 2, zc + side_mm / 2):
                ends.append([ax + R * math.sin(ang), ay + R * math.cos(ang), z])
        if np.any(cam.to_camera(np.array(ends))[:, 2] <= 1.0):
            continue
        bb = _bbox(cam, np.array(ends), w, h)
        if bb is None:
            continue
        v0, v1, u0, u1 = bb
        wang = np.arctan2(wx[v0:v1, u0:u1] - ax, wy[v0:v1, u0:u1] - ay)
        s = (wang - np.float32(math.radians(mark.azimuth_deg))) * R  # along the rail, mm
        tu = ((s + side_mm / 2) / module * ppm).astype(np.float32)
        tv = ((zc + side_mm / 2 - wz[v0:v1, u0:u1]) / module * ppm).astype(np.float32)
        on = wall[v0:v1, u0:u1] & (tu >= 0) & (tu < tex.shape[1] - 1)
        on &= (tv >= 0) & (tv < tex.shape[0] - 1)
        if on.any():
            vals = cv2.remap(
                tex, tu, tv, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
            albedo[v0:v1, u0:u1][on] = vals[on][:, None] * np.ones(3, np.float32)
    albedo[dealer] = np.array([0.06, 0.04, 0.025], np.float32)
    key_cos[dealer] = max(key_dir[2], 0.0)

    surf = cloth | wall | pad_top | dealer
    ambient = albedo * amb[None, None, :] * amb_k[:, :, None]
    direct = albedo * (key_cos[:, :, None] * key + fill_cos[:, :, None] * fill) * amb_k[:, :, None]
    key_rad = (key_cos[:, :, None] * key).sum(axis=2)
    tot = key_rad + (fill_cos[:, :, None] * fill).sum(axis=2)
    key_part = np.where(tot > 0, key_rad / np.maximum(tot, 1e-6), 1.0).astype(np.float32)
    ambient[~surf] = room_rad[~surf]
    direct[~surf] = 0
    depth = np.full((h, w), np.inf, np.float32)
    depth[cloth] = t_cloth[cloth]
    depth[wall | pad_top] = t_wall[wall | pad_top]
    return Background(
        ambient=ambient.astype(np.float32),
        direct=direct.astype(np.float32),
        key_part=key_part,
        cloth=cloth,
        px=np.where(cloth, px, np.nan).astype(np.float32),
        py=np.where(cloth, py, np.nan).astype(np.float32),
        depth=depth,
    )


# --- occluders for the key lamp's shadows ----------------------------------------------------


def _cylinder_blocks(
    px: F32,
    py: F32,
    pz: F32,
    lx: float,
    ly: float,
    lz: float,
    cx: float,
    cy: float,
    r: float,
    top: float,
) -> Mask:
    """Whether the ray from each point towards the lamp passes through the solid cylinder."""
    ox, oy = px - cx, py - cy
    a = lx * lx + ly * ly
    b = 2 * (ox * lx + oy * ly)
    c = ox * ox + oy * oy - r * r
    if a < 1e-9:
        return np.asarray((c <= 0) & (pz < top), np.bool_)
    disc = b * b - 4 * a * c
    ok = disc >= 0
    sq = np.sqrt(np.maximum(disc, 0))
    s0 = (-b - sq) / (2 * a)
    s1 = (-b + sq) / (2 * a)
    # along the ray z = pz + s lz stays within [0, top] for s in [z0, z1]
    z0 = (0 - pz) / lz
    z1 = (top - pz) / lz
    lo = np.maximum(np.maximum(s0, np.minimum(z0, z1)), 1e-3)
    hi = np.minimum(s1, np.maximum(z0, z1))
    return np.asarray(ok & (hi > lo), np.bool_)


def _capsule_blocks(px: F32, py: F32, pz: F32, ld: npt.NDArray[np.float64], cap: Capsule) -> Mask:
    """Whether the ray from each point towards the lamp comes within the capsule's radius."""
    a = np.array(cap.a)
    ba = np.array(cap.b) - a
    # closest approach of the lines p + s ld (s >= 0) and a + u ba (0 <= u <= 1)
    wx, wy, wz = px - a[0], py - a[1], pz - a[2]
    bb = float(ba @ ba)
    bl = float(ba @ ld)
    ll = 1.0
    wb = wx * ba[0] + wy * ba[1] + wz * ba[2]
    wl = wx * ld[0] + wy * ld[1] + wz * ld[2]
    den = ll * bb - bl * bl
    u = np.zeros_like(px) if den < 1e-9 else np.clip((ll * wb - bl * wl) / den, 0, 1)
    s = np.maximum(u * bl - wl, 0)
    u = np.clip((wb + s * bl) / bb, 0, 1) if bb > 1e-9 else np.zeros_like(px)
    qx = wx + s * ld[0] - u * ba[0]
    qy = wy + s * ld[1] - u * ba[1]
    qz = wz + s * ld[2] - u * ba[2]
    return np.asarray(qx * qx + qy * qy + qz * qz < cap.radius**2, np.bool_)


@dataclass
class Occluders:
    stacks: list[tuple[float, float, float, float]]  # x, y, radius, top
    capsules: list[Capsule]

    def light_seen(self, px: F32, py: F32, pz: F32, light: Lighting, skip: int = -1) -> F32:
        """Share of the key lamp's disc each point sees (soft shadows), skipping stack ``skip``."""
        base = light.key.direction()
        spread = math.radians(light.key.spread_deg)
        e1 = np.cross(base, [0.0, 0.0, 1.0])
        e1 = (
            e1 / max(float(np.linalg.norm(e1)), 1e-9)
            if np.linalg.norm(e1) > 1e-6
            else np.array([1.0, 0, 0])
        )
        e2 = np.cross(base, e1)
        seen = np.zeros(px.shape, np.float32)
        if px.size == 0:
            return seen
        # only the stacks near enough to cast a shadow on these points
        flat = math.hypot(base[0], base[1])
        x0, x1, y0, y1 = float(px.min()), float(px.max()), float(py.min()), float(py.max())
        near = []
        for i, (sx, sy, r, top) in enumerate(self.stacks):
            reach = r + 2 + max(top - float(pz.min()), 0) * flat / max(base[2] - spread, 0.05)
            if i != skip and x0 - reach <= sx <= x1 + reach and y0 - reach <= sy <= y1 + reach:
                near.append((sx, sy, r, top))
        # and only the capsules whose shadow, cast down to these points' heights, reaches them
        z0, z1 = float(pz.min()), float(pz.max())
        caps = []
        lz = max(base[2] - spread, 0.05)
        for cap in self.capsules:
            top = max(cap.a[2], cap.b[2]) + cap.radius
            if top <= z0:
                continue  # wholly below the points: the lamp is above
            grow = cap.radius / lz + 2
            xs, ys = [], []
            for p in (cap.a, cap.b):
                for z in (z0, z1):
                    drop = max(p[2] - z, 0.0) / lz
                    xs += [p[0] - base[0] * drop, p[0]]
                    ys += [p[1] - base[1] * drop, p[1]]
            if (
                min(xs) - grow <= x1
                and max(xs) + grow >= x0
                and min(ys) - grow <= y1
                and max(ys) + grow >= y0
            ):
                caps.append(cap)
        if not near and not caps:
            return np.ones(px.shape, np.float32)
        for ox, oy in _SHADOW_OFFSETS:
            d = base + spread * (ox * e1 + oy * e2)
            d = d / np.linalg.norm(d)
            blocked = np.zeros(px.shape, np.bool_)
            for sx, sy, r, top in near:
                blocked |= _cylinder_blocks(px, py, pz, d[0], d[1], d[2], sx, sy, r, top)
            for cap in caps:
                blocked |= _capsule_blocks(px, py, pz, d, cap)
            seen += (~blocked).astype(np.float32)
        return seen / np.float32(len(_SHADOW_OFFSETS))


# --- the frame ---------------------------------------------------------------------------------


@dataclass
class ChipHit:
    """Where one chip's edge was found on the canvas (for what the truth says of it)."""

    bbox: tuple[int, int, int, int]  # v0, v1, u0, u1
    side: Mask  # pixels of the bbox where the ray meets the chip's edge first on the chip


@dataclass
class Traced:
    radiance: F32
    ident: I32
    depth: F32
    chips: list[ChipHit | None] = field(default_factory=list)


def _bbox(
    cam: Camera, pts: npt.NDArray[np.float64], w: int, h: int
) -> tuple[int, int, int, int] | None:
    uv = cam.canvas_project(pts)
    if not np.all(np.isfinite(uv)):
        return None
    u0, v0 = np.floor(uv.min(axis=0)).astype(int) - 2
    u1, v1 = np.ceil(uv.max(axis=0)).astype(int) + 3
    u0, v0 = max(u0, 0), max(v0, 0)
    u1, v1 = min(u1, w), min(v1, h)
    if u1 <= u0 or v1 <= v0:
        return None
    return (int(v0), int(v1), int(u0), int(u1))


def _grid(b: tuple[int, int, int, int]) -> tuple[F32, F32]:
    v0, v1, u0, u1 = b
    v, u = np.mgrid[v0:v1, u0:u1].astype(np.float32)
    return u, v


def _shade(
    alb: F32,
    nx: F32,
    ny: F32,
    nz: F32,
    vis: F32,
    light: Lighting,
    spec: float = 0.0,
    shininess: float = 30.0,
    view: tuple[F32, F32, F32] | None = None,
) -> F32:
    kd = light.key.direction().astype(np.float32)
    kc = light.key.colour()
    amb = light.ambient_colour()
    cos_k = np.maximum(nx * kd[0] + ny * kd[1] + nz * kd[2], 0) * vis
    rad = alb * (amb[None, :] * (0.65 + 0.35 * nz)[:, None] + cos_k[:, None] * kc[None, :])
    if light.fill is not None:
        fd = light.fill.direction().astype(np.float32)
        cos_f = np.maximum(nx * fd[0] + ny * fd[1] + nz * fd[2], 0)
        rad += alb * cos_f[:, None] * light.fill.colour()[None, :]
    if spec > 0 and view is not None:
        vx, vy, vz = view
        hx, hy, hz = kd[0] + vx, kd[1] + vy, kd[2] + vz
        n = np.sqrt(hx * hx + hy * hy + hz * hz) + 1e-6
        ndh = np.maximum((nx * hx + ny * hy + nz * hz) / n, 0)
        rad += (spec * ndh**shininess * vis)[:, None] * kc[None, :]
    return np.asarray(rad, np.float32)


def trace(cam: Camera, table: Table, light: Lighting, bg: Background, moment: Moment) -> Traced:
    h, w = bg.depth.shape
    T = table.chip_thickness_mm
    r = table.chip_diameter_mm / 2
    occ = Occluders(
        [(s.chips[0].x, s.chips[0].y, r, s.height(T)) for s in moment.stacks if s.chips],
        [c for hand in moment.hands for c in hand.capsules],
    )
    # the cloth: the key lamp's share shadowed, the foot of every stack darkened
    shadow = np.ones((h, w), np.float32)
    ao = np.ones((h, w), np.float32)
    ldir = light.key.direction()
    flat = max(math.hypot(ldir[0], ldir[1]), 1e-6)
    ex, ey = -ldir[0] / flat, -ldir[1] / flat
    for i, (sx, sy, rr, top) in enumerate(occ.stacks):
        reach = top * flat / max(ldir[2], 0.15) + rr + 10
        pts = np.array(
            [[sx + ox, sy + oy, 0.0] for ox in (-rr - 14, rr + 14) for oy in (-rr - 14, rr + 14)]
            + [
                [sx + ex * reach + ox, sy + ey * reach + oy, 0.0]
                for ox in (-rr, rr)
                for oy in (-rr, rr)
            ]
        )
        b = _bbox(cam, pts, w, h)
        if b is None:
            continue
        v0, v1, u0, u1 = b
        px, py = bg.px[v0:v1, u0:u1], bg.py[v0:v1, u0:u1]
        on = np.isfinite(px)
        if not on.any():
            continue
        qx, qy = px[on], py[on]
        seen = Occluders([occ.stacks[i]], []).light_seen(qx, qy, np.zeros_like(qx), light)
        gap = np.maximum(np.hypot(qx - sx, qy - sy) - rr, 0)
        contact = 1 - 0.6 * np.exp(-gap / 2.5) - 0.15 * np.exp(-gap / 10.0)
        shadow[v0:v1, u0:u1][on] *= seen
        ao[v0:v1, u0:u1][on] *= contact.astype(np.float32)
    for cap in occ.capsules:
        # the hand's shadow on the cloth, around the capsule's foot along the lamp
        feet: list[list[float]] = []
        for p in (cap.a, cap.b):
            s = max(p[2], 0.0) / max(ldir[2], 0.15)
            for ox in (-cap.radius, cap.radius):
                for oy in (-cap.radius, cap.radius):
                    feet.append([p[0] - ldir[0] * s + ox, p[1] - ldir[1] * s + oy, 0.0])
        b = _bbox(cam, np.array(feet), w, h)
        if b is None:
            continue
        v0, v1, u0, u1 = b
        px, py = bg.px[v0:v1, u0:u1], bg.py[v0:v1, u0:u1]
        on = np.isfinite(px)
        if on.any():
            qx, qy = px[on], py[on]
            seen = Occluders([], [cap]).light_seen(qx, qy, np.zeros_like(qx), light)
            shadow[v0:v1, u0:u1][on] *= seen
    kp = bg.key_part
    radiance = (bg.ambient + bg.direct * (1 - kp + kp * shadow)[:, :, None]) * ao[:, :, None]
    depth = bg.depth.copy()
    ident = np.full((h, w), ID_NONE, np.int32)
    out = Traced(radiance, ident, depth)
    _trace_chips(cam, table, light, moment, occ, out)
    _trace_targets(cam, table, light, moment.targets, out)
    _trace_hands(cam, light, occ.capsules, occ, out)
    return out


def _trace_chips(
    cam: Camera, table: Table, light: Lighting, moment: Moment, occ: Occluders, out: Traced
) -> None:
    h, w = out.depth.shape
    T = np.float32(table.chip_thickness_mm)
    r = np.float32(table.chip_diameter_mm / 2)
    C = cam.C.astype(np.float32)
    gid = 0
    for si, stack in enumerate(moment.stacks):
        for chip in stack.chips:
            design = table.chip(chip.value)
            corners = np.array(
                [
                    [chip.x + ox, chip.y + oy, chip.z + oz]
                    for ox in (-r, r)
                    for oy in (-r, r)
                    for oz in (0, T)
                ],
                np.float64,
            )
            b = _bbox(cam, corners, w, h)
            if b is None:
                out.chips.append(None)
                gid += 1
                continue
            v0, v1, u0, u1 = b
            u, v = _grid(b)
            dx, dy, dz = cam.rays(u, v)
            ox, oy = C[0] - np.float32(chip.x), C[1] - np.float32(chip.y)
            a = dx * dx + dy * dy
            bq = 2 * (ox * dx + oy * dy)
            c = ox * ox + oy * oy - r * r
            disc = bq * bq - 4 * a * c
            with np.errstate(invalid="ignore", divide="ignore"):
                t_side = (-bq - np.sqrt(np.maximum(disc, 0))) / (2 * a)
            z_side = C[2] + t_side * dz
            side = (disc >= 0) & (t_side > 0) & (z_side >= chip.z) & (z_side <= chip.z + T)
            t = np.where(side, t_side, np.inf).astype(np.float32)
            face = np.zeros(t.shape, np.int8)
            for k, zf in ((1, chip.z + T), (2, chip.z)):
                with np.errstate(invalid="ignore", divide="ignore"):
                    tf = (np.float32(zf) - C[2]) / dz
                fx_, fy_ = C[0] + tf * dx, C[1] + tf * dy
                hit = (tf > 0) & ((fx_ - chip.x) ** 2 + (fy_ - chip.y) ** 2 <= r * r) & (tf < t)
                if k == 2:
                    hit &= C[2] < zf  # a bottom face shows only from below it
                t = np.where(hit, tf, t)
                face = np.where(hit, np.int8(k), face)
            own_side = face == 0
            own_side &= np.isfinite(t)
            sub_depth = out.depth[v0:v1, u0:u1]
            win = np.isfinite(t) & (t < sub_depth)
            out.chips.append(ChipHit(b, own_side))
            if win.any():
                tt = t[win]
                hx, hy, hz = C[0] + tt * dx[win], C[1] + tt * dy[win], C[2] + tt * dz[win]
                fc = face[win]
                is_side = fc == 0
                ang = np.arctan2(hy - chip.y, hx - chip.x)
                nx = np.where(is_side, (hx - chip.x) / r, 0).astype(np.float32)
                ny = np.where(is_side, (hy - chip.y) / r, 0).astype(np.float32)
                nz = np.where(is_side, 0, np.where(fc == 1, 1, -1)).astype(np.float32)
                tex = edge_texture(design, float(T))
                ia = (((ang + chip.turn) / (2 * np.pi)) % 1.0 * EDGE_ANGLES).astype(
                    np.int32
                ) % EDGE_ANGLES
                s_frac = np.clip((hz - chip.z) / T, 0, 0.9999)
                ir = (s_frac * EDGE_ROWS).astype(np.int32)
                alb = tex[ia, ir].copy()
                if (~is_side).any():
                    base, inlay, ring = face_colours(design)
                    rho = np.hypot(hx - chip.x, hy - chip.y) / r
                    fa = ~is_side
                    fal = np.empty((int(fa.sum()), 3), np.float32)
                    rr = rho[fa]
                    fal[:] = base
                    fal[rr < 0.62] = ring
                    fal[rr < 0.56] = inlay
                    rim = rr > 0.84
                    fal[rim] = tex[ia[fa][rim], EDGE_ROWS // 2]
                    alb[fa] = fal
                alb *= np.float32(chip.tint)
                vis = occ.light_seen(hx, hy, hz, light, skip=si)
                vlen = np.sqrt(dx[win] ** 2 + dy[win] ** 2 + dz[win] ** 2)
                view = (-dx[win] / vlen, -dy[win] / vlen, -dz[win] / vlen)
                rad = _shade(alb, nx, ny, nz, vis, light, spec=0.06, shininess=12.0, view=view)
                fspec = _shade(
                    alb * 0, nx, ny, nz, vis, light, spec=0.22, shininess=40.0, view=view
                )
                rad += np.where((~is_side)[:, None], fspec, 0)
                sub_rad = out.radiance[v0:v1, u0:u1]
                sub_rad[win] = rad
                sub_depth[win] = tt
                out.ident[v0:v1, u0:u1][win] = ID_CHIP + gid * 4 + fc.astype(np.int32)
            gid += 1


def _trace_targets(
    cam: Camera, table: Table, light: Lighting, targets: tuple[Target, ...], out: Traced
) -> None:
    h, w = out.depth.shape
    cw, ch = table.target_mm
    C = cam.C
    for ti, tg in enumerate(targets):
        a = math.radians(tg.facing_deg)
        lean = math.radians(tg.lean_deg)
        n_h = np.array([math.sin(a), math.cos(a), 0.0])
        eu = np.array([math.cos(a), -math.sin(a), 0.0])  # along the card, to the viewer's left
        ev = np.array([0, 0, 1.0]) * math.cos(lean) - n_h * math.sin(lean)
        n = np.cross(eu, ev)
        if n @ n_h < 0:
            n = -n
        base = np.array([tg.center[0], tg.center[1], 0.0])
        corners = np.array(
            [base + eu * su * cw / 2 + ev * sv * ch for su in (-1, 1) for sv in (0, 1)]
        )
        b = _bbox(cam, corners, w, h)
        if b is None:
            continue
        v0, v1, u0, u1 = b
        u, v = _grid(b)
        dx, dy, dz = cam.rays(u, v)
        den = dx * n[0] + dy * n[1] + dz * n[2]
        with np.errstate(invalid="ignore", divide="ignore"):
            t = ((base - C) @ n / den).astype(np.float32)
        qx, qy, qz = C[0] + t * dx - base[0], C[1] + t * dy - base[1], C[2] + t * dz - base[2]
        lu = qx * eu[0] + qy * eu[1] + qz * eu[2]
        lv = qx * ev[0] + qy * ev[1] + qz * ev[2]
        hit = (t > 0) & (np.abs(lu) <= cw / 2) & (lv >= 0) & (lv <= ch)
        win = hit & (t < out.depth[v0:v1, u0:u1])
        if not win.any():
            continue
        text = f"BOX {tg.box}"
        nmod = qr_modules(text)
        module = table.target_qr_mm / nmod
        dist = float(np.linalg.norm(base - C))
        module_px = module * cam.k.fx / dist
        ppm = int(min(16, max(3, 2 ** math.ceil(math.log2(max(module_px, 1.0))))))
        tex = qr_texture(text, ppm)
        span = module * (nmod + 8)
        # the card's white, and the code (with its quiet zone) in the middle of it
        tu = ((-lu + span / 2) / module * ppm).astype(np.float32)  # the card's left is +eu
        tv = ((ch / 2 + span / 2 - lv) / module * ppm).astype(np.float32)
        val = cv2.remap(
            tex,
            tu,
            tv,
            interpolation=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=0.86,
        )
        front = den < 0  # the ray meets the printed face
        alb1 = np.where(front, val, 0.6)[win]
        alb = alb1[:, None] * np.ones(3, np.float32)
        sgn = np.where(front[win], 1.0, -1.0).astype(np.float32)
        vis = np.ones(alb.shape[0], np.float32)
        rad = _shade(
            alb, sgn * np.float32(n[0]), sgn * np.float32(n[1]), sgn * np.float32(n[2]), vis, light
        )
        out.radiance[v0:v1, u0:u1][win] = rad
        out.depth[v0:v1, u0:u1][win] = t[win]
        out.ident[v0:v1, u0:u1][win] = ID_TARGET + ti


def _trace_hands(
    cam: Camera, light: Lighting, caps: list[Capsule], occ: Occluders, out: Traced
) -> None:
    h, w = out.depth.shape
    C = cam.C
    for ci, cap in enumerate(caps):
        pa, pb = np.array(cap.a), np.array(cap.b)
        rr = cap.radius
        corners = np.array(
            [
                p + np.array([ox, oy, oz])
                for p in (pa, pb)
                for ox in (-rr, rr)
                for oy in (-rr, rr)
                for oz in (-rr, rr)
            ]
        )
        if np.any(cam.to_camera(corners)[:, 2] < 5):
            continue  # a sleeve reaching behind the lens is not drawn (the camera is clear of it)
        b = _bbox(cam, corners, w, h)
        if b is None:
            continue
        v0, v1, u0, u1 = b
        u, v = _grid(b)
        dx, dy, dz = cam.rays(u, v)
        ln = np.sqrt(dx * dx + dy * dy + dz * dz)
        ux, uy, uz = dx / ln, dy / ln, dz / ln
        ba = pb - pa
        oa = C - pa
        baba = float(ba @ ba)
        bard = ba[0] * ux + ba[1] * uy + ba[2] * uz
        baoa = float(ba @ oa)
        rdoa = oa[0] * ux + oa[1] * uy + oa[2] * uz
        oaoa = float(oa @ oa)
        qa = baba - bard * bard
        qb = baba * rdoa - baoa * bard
        qc = baba * oaoa - baoa * baoa - rr * rr * baba
        hh = qb * qb - qa * qc
        with np.errstate(invalid="ignore", divide="ignore"):
            t = (-qb - np.sqrt(np.maximum(hh, 0))) / qa
        y = baoa + t * bard
        body = (hh >= 0) & (y > 0) & (y < baba) & (baba > 1e-9)
        tt = np.where(body, t, np.inf)
        # the rounded ends
        for end in (pa, pb):
            oc = C - end
            bb = oc[0] * ux + oc[1] * uy + oc[2] * uz
            cc = float(oc @ oc) - rr * rr
            h2 = bb * bb - cc
            te = -bb - np.sqrt(np.maximum(h2, 0))
            ok = (h2 >= 0) & (te > 0) & (te < tt)
            tt = np.where(ok, te, tt)
        hit = np.isfinite(tt) & (tt > 0)
        depth_t = (tt / ln).astype(np.float32)  # back to depth along the axis
        win = hit & (depth_t < out.depth[v0:v1, u0:u1])
        if not win.any():
            continue
        tw = tt[win]
        hx, hy, hz = C[0] + tw * ux[win], C[1] + tw * uy[win], C[2] + tw * uz[win]
        along = (hx - pa[0]) * ba[0] + (hy - pa[1]) * ba[1] + (hz - pa[2]) * ba[2]
        k = np.clip(along / baba, 0, 1) if baba > 1e-9 else np.zeros_like(hx)
        nx = ((hx - pa[0] - k * ba[0]) / rr).astype(np.float32)
        ny = ((hy - pa[1] - k * ba[1]) / rr).astype(np.float32)
        nz = ((hz - pa[2] - k * ba[2]) / rr).astype(np.float32)
        alb = np.ones((nx.size, 3), np.float32) * to_linear(cap.colour)
        others = Occluders(occ.stacks, [])
        vis = others.light_seen(
            hx.astype(np.float32), hy.astype(np.float32), hz.astype(np.float32), light
        )
        view = (
            -ux[win].astype(np.float32),
            -uy[win].astype(np.float32),
            -uz[win].astype(np.float32),
        )
        rad = _shade(
            alb,
            nx,
            ny,
            nz,
            vis,
            light,
            spec=0.05 if cap.part == "hand" else 0.02,
            shininess=10.0,
            view=view,
        )
        out.radiance[v0:v1, u0:u1][win] = rad
        out.depth[v0:v1, u0:u1][win] = depth_t[win]
        out.ident[v0:v1, u0:u1][win] = ID_HAND + ci
