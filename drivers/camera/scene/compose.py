"""One frame: trace the rays, light what they meet, then pass the light through the camera.

The felt is seen a ray per pixel (its raster is filtered, from a finer and a coarser copy by
how much felt a pixel covers): albedo from :mod:`layout`, irradiance from the lamps with this
frame's soft shadows of chips and hand. The chips are traced at ``supersample`` x
``supersample`` rays a pixel, a box at a time (two stacks in a box hide and shade each other:
shadow rays go to four points of each lamp's face), and averaged into pixels with their
coverage; the hand and arm, which are above every chip, are traced a ray a pixel and laid on
top, smeared along their own motion. The result goes through :mod:`optics`.

The tracing also measures what the truth file reports: how many pixels of each chip the camera
sees (a chip hidden behind another stack or a hand, or seen so edge-on that its band is under a
pixel, cannot be counted), how much of each betting circle and fiducial the hand covers, which
of them are in the picture at all, and how large a fiducial's modules are in the picture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import CameraConfig
from drivers.camera.scene import chips as chipmod
from drivers.camera.scene import hand as handmod
from drivers.camera.scene import optics
from drivers.camera.scene.camera import Camera
from drivers.camera.scene.chips import Chip, ChipDesign, ChipModel
from drivers.camera.scene.layout import QUIET_MODULES, U8, TableArt
from drivers.camera.scene.lighting import (
    F32,
    F64,
    Grid,
    Lamp,
    Lighting,
    direct,
    sky,
)
from drivers.camera.scene.measure import Layer, Measured, Region, measure
from drivers.camera.scene.sampling import FrameScene, Setup
from drivers.camera.scene.shadows import FeltLight, FrameLight

_LAMP_SAMPLES = ((0.0, 0.0), (0.7, 0.0), (-0.35, 0.6), (-0.35, -0.6))
MISS_RADIANCE = 0.004  # rays that leave the table: a dark room
_SHADOW_SHIFT = 3


@dataclass
class SessionView:
    """What depends only on the camera: rays, where they meet the felt, texture lookups."""

    camera: Camera
    dirs: F32  # (H, W, 3): a ray through each pixel's centre
    plane_t: F32
    plane_x: F32
    plane_y: F32
    inner: npt.NDArray[np.bool_]
    maps0: tuple[F32, F32]
    maps1: tuple[F32, F32]
    mip: F32  # weight of the half-resolution texture
    maps_outer: tuple[F32, F32]
    light_in: npt.NDArray[np.bool_]
    light_maps: tuple[F32, F32]
    light_maps_outer: tuple[F32, F32]
    cos_axis: F32  # native resolution
    circles: dict[int, Region] = field(default_factory=dict)
    fiducials: dict[str, Region] = field(default_factory=dict)


@dataclass
class Rendered:
    rgb: U8
    measured: Measured
    wb_gains: tuple[float, float, float]


class Compositor:
    """Renders frames of one table for one seed's lamps, at one size."""

    def __init__(
        self,
        cfg: CameraConfig,
        art: TableArt,
        designs: list[ChipDesign],
        model: ChipModel,
        base: Setup,
        supersample: int,
    ) -> None:
        self.cfg = cfg
        self.art = art
        self.designs = designs
        self.model = model
        self.base = base
        self.ss = supersample
        ig, og = art.inner_grid, art.outer_grid
        fine = Grid.covering(ig.x0, ig.y0, ig.x0 + ig.w / ig.ppm, ig.y0 + ig.h / ig.ppm, 1.0)
        self.lighting: Lighting = base.lighting
        self.light = FeltLight(base.lighting, base.uneven, model, fine, og)
        self._session_key: tuple[object, ...] | None = None
        self._view: SessionView | None = None
        self._lay = cfg.layout

    # -- the camera's view of the felt ------------------------------------------------------

    def view(self, camera: Camera, key: tuple[object, ...]) -> SessionView:
        """Rays through the pixel centres and where they meet the felt (cached per session)."""
        if self._view is not None and self._session_key == key:
            return self._view
        dirs = camera.rays(1)
        o = np.array(camera.pose.position, np.float32)
        dz = dirs[..., 2]
        hits = dz > 1e-4
        t = np.where(hits, -o[2] / np.where(hits, dz, 1.0), np.inf).astype(np.float32)
        tt = np.where(hits, t, 0.0)
        x = (o[0] + tt * dirs[..., 0]).astype(np.float32)
        y = (o[1] + tt * dirs[..., 1]).astype(np.float32)
        ig = self.art.inner_grid
        inner = hits & ig.contains(x, y)
        u0, v0 = (a.astype(np.float32) for a in ig.px(x, y))
        hh, hw = self.art.inner_half.shape[:2]
        half = Grid(ig.x0, ig.y0, ig.ppm / 2, hw, hh)
        u1, v1 = (a.astype(np.float32) for a in half.px(x, y))
        # texels of the fine raster per pixel: above 1, blend towards the half-resolution copy
        du = np.hypot(*np.gradient(u0, axis=(0, 1)))
        dv = np.hypot(*np.gradient(v0, axis=(0, 1)))
        foot = np.nan_to_num(np.maximum(du, dv), nan=8.0, posinf=8.0)
        mip = np.clip(np.log2(np.maximum(foot, 1e-6)), 0, 1).astype(np.float32)
        uo, vo = (a.astype(np.float32) for a in self.art.outer_grid.px(x, y))
        lg = self.light.grid
        lu, lv = (a.astype(np.float32) for a in lg.px(x, y))
        lou, lov = (a.astype(np.float32) for a in self.light.coarse.px(x, y))
        forward = camera.pose.rotation()[2].astype(np.float32)
        cos_axis = np.clip(dirs @ forward, 0.05, 1.0).astype(np.float32)
        v = SessionView(
            camera=camera,
            dirs=dirs,
            plane_t=t,
            plane_x=x,
            plane_y=y,
            inner=inner,
            maps0=(u0, v0),
            maps1=(u1, v1),
            mip=mip,
            maps_outer=(uo, vo),
            light_in=hits & lg.contains(x, y),
            light_maps=(lu, lv),
            light_maps_outer=(lou, lov),
            cos_axis=cos_axis,
        )
        for box in self.cfg.boxes:
            v.circles[box.box] = self._felt_region(v, camera, box.center_mm, box.radius_mm, False)
        for fid in self.cfg.fiducials:
            n = self.art.qr[fid.code].shape[0]
            half_mm = fid.size_mm / 2 + QUIET_MODULES * fid.size_mm / n
            v.fiducials[fid.code] = self._felt_region(v, camera, fid.center_mm, half_mm, True)
        self._view, self._session_key = v, key
        return v

    def _felt_region(
        self, v: SessionView, camera: Camera, centre: tuple[float, float], half: float, square: bool
    ) -> Region:
        """The pixels whose ray meets the felt inside a circle (or square) of the layout."""
        ring = np.array(
            [
                (centre[0] + 1.45 * half * math.cos(a), centre[1] + 1.45 * half * math.sin(a), 0.0)
                for a in np.linspace(0, 2 * math.pi, 24, endpoint=False)
            ]
        )
        rows, cols = self._bbox(camera, ring, 1)
        x = v.plane_x[rows, cols]
        y = v.plane_y[rows, cols]
        if square:
            mask = (np.abs(x - centre[0]) <= half) & (np.abs(y - centre[1]) <= half)
        else:
            mask = (x - centre[0]) ** 2 + (y - centre[1]) ** 2 <= half * half
        return Region(rows, cols, mask & np.isfinite(v.plane_t[rows, cols]))

    def _bbox(self, camera: Camera, points: F64, scale: int, pad: int = 2) -> tuple[slice, slice]:
        """The rectangle of the ``scale``-times grid holding the points, aligned to whole
        pixels, padded by ``pad`` pixels and clipped to the picture."""
        uv, depth = camera.project(points)
        w, h = camera.width, camera.height
        if np.any(depth <= 0):
            u0, u1, v0, v1 = 0, w, 0, h
        else:
            u0 = max(0, math.floor(uv[:, 0].min()) - pad)
            u1 = min(w, math.ceil(uv[:, 0].max()) + 1 + pad)
            v0 = max(0, math.floor(uv[:, 1].min()) - pad)
            v1 = min(h, math.ceil(uv[:, 1].max()) + 1 + pad)
        u1, v1 = max(u0, u1), max(v0, v1)
        return slice(v0 * scale, v1 * scale), slice(u0 * scale, u1 * scale)

    # -- a frame ---------------------------------------------------------------------------

    def render(
        self, scene: FrameScene, camera: Camera, key: tuple[object, ...], rng: np.random.Generator
    ) -> Rendered:
        v = self.view(camera, key)
        all_chips = [c for st in scene.stacks for c in st.chips]
        light = self.light.frame(all_chips, scene.hand)
        felt = self._felt(v, scene, light)
        layer = Layer(camera, self.ss)
        hit_regions = self._trace_chips(layer, camera, scene, all_chips, light)
        hand_layer = Layer(camera, 1)  # the hand is traced a ray per pixel: it is large
        if scene.hand is not None:
            self._trace_hand(hand_layer, camera, scene.hand)
        qr = {code: m.shape[0] for code, m in self.art.qr.items()}
        measured = measure(
            self.cfg,
            qr,
            self.model,
            camera,
            all_chips,
            layer,
            hand_layer,
            hit_regions,
            v.circles,
            v.fiducials,
        )
        chips_rgb, chips_a = layer.down()
        img = chips_rgb + (1 - chips_a[..., None]) * felt
        if scene.hand is not None:
            hand_rgb, hand_a = hand_layer.down()
            dx, dy = scene.hand.motion_px
            length = math.hypot(dx, dy) * camera.width / 1280
            if length >= 0.5:
                kernel = optics.line_kernel(length, math.degrees(math.atan2(dy, dx)))
                hand_rgb = np.asarray(cv2.filter2D(hand_rgb, -1, kernel), np.float32)
                hand_a = np.asarray(cv2.filter2D(hand_a, -1, kernel), np.float32)
            img = hand_rgb + (1 - hand_a[..., None]) * img
        depth = np.where(np.isfinite(v.plane_t), v.plane_t, 5000.0).astype(np.float32)
        return self._camera(img.astype(np.float32), depth, v, scene, camera, rng, measured)

    def _felt(self, v: SessionView, scene: FrameScene, light: FrameLight) -> F32:
        """The felt and all printed on it, lit, with this frame's shadows and cards."""
        inner_tex, half_tex = self.art.with_cards(list(scene.cards))
        fine = self._remap(inner_tex, v.maps0)
        coarse = self._remap(half_tex, v.maps1)
        fine += v.mip[..., None] * (coarse - fine)
        albedo = np.where(v.inner[..., None], fine, self._remap(self.art.outer, v.maps_outer))
        e_img = np.where(
            v.light_in[..., None],
            self._remap(light.irradiance, v.light_maps),
            self._remap(self.light.room, v.light_maps_outer),
        )
        rad = np.asarray(albedo * e_img, np.float32)
        rad[~np.isfinite(v.plane_t)] = MISS_RADIANCE
        return rad

    def _trace_chips(
        self,
        layer: Layer,
        camera: Camera,
        scene: FrameScene,
        all_chips: list[Chip],
        light: FrameLight,
    ) -> dict[int, Region]:
        """Trace each box's chips (both its stacks at once) into ``layer``; return, per box,
        the supersampled rays that meet its chips (for the hand-over-chips test)."""
        origin = np.array(camera.pose.position)
        index_of = {id(c): i for i, c in enumerate(all_chips)}
        regions: dict[int, Region] = {}
        for box in sorted({st.box for st in scene.stacks}):
            stacks = [st for st in scene.stacks if st.box == box]
            chips = [c for st in stacks for c in st.chips]
            stack_of = np.concatenate([np.full(len(st.chips), k) for k, st in enumerate(stacks)])
            rows, cols = self._bbox(camera, self._chip_bounds(chips), self.ss)
            if rows.stop <= rows.start or cols.stop <= cols.start:
                continue
            sub = camera.rays_in(rows, cols, self.ss).reshape(-1, 3).astype(np.float64)
            hits = chipmod.intersect(origin, sub, chips, self.model)
            shape = (rows.stop - rows.start, cols.stop - cols.start)
            met = hits.chip >= 0
            regions[box] = Region(rows, cols, met.reshape(shape))
            front = met & layer.nearer(rows, cols, hits.t)
            if not front.any():
                continue
            hits.chip = np.where(front, hits.chip, -1)
            surf = chipmod.surface(hits, origin, sub, chips, self.designs, self.model)
            vis = self.light.visibility(surf.point, light)
            if len(stacks) == 2:  # each stack shades the other
                on = stack_of[hits.chip[front]]
                for k in range(2):
                    other = list(stacks[1 - k].chips)
                    sel = on == k
                    for lamp_vis, lamp in zip(vis, self.lighting.lamps, strict=True):
                        lamp_vis[sel] *= self._chip_light(surf, sel, other, lamp)
            col = chipmod.radiance(surf, -sub[front], self.lighting, vis)
            col *= self.light.uneven_on(surf.point)[:, None]
            global_ids = np.array([index_of[id(c)] for c in chips])
            layer.put(rows, cols, front, hits.t[front], col, global_ids[hits.chip[front]])
        return regions

    def _trace_hand(self, layer: Layer, camera: Camera, hand: handmod.Hand) -> None:
        """Trace every part of the hand and arm, then shade each pixel's nearest part once."""
        origin = np.array(camera.pose.position)
        parts = handmod.parts(hand)
        best_t = np.full((camera.height, camera.width), np.inf)
        best_part = np.full((camera.height, camera.width), -1, np.int32)
        best_n = np.zeros((camera.height, camera.width, 3))
        for k, (part, bounds) in enumerate(parts):
            rows, cols = self._bbox(camera, bounds, 1, pad=1)
            if rows.stop <= rows.start or cols.stop <= cols.start:
                continue
            sub = camera.rays_in(rows, cols, 1).reshape(-1, 3).astype(np.float64)
            t, nrm = handmod.hit(origin, sub, part)
            shape = (rows.stop - rows.start, cols.stop - cols.start)
            t = t.reshape(shape)
            nearer = t < best_t[rows, cols]
            best_t[rows, cols][nearer] = t[nearer]
            best_part[rows, cols][nearer] = k
            best_n[rows, cols][nearer] = nrm.reshape(*shape, 3)[nearer]
        met = best_part >= 0
        if not met.any():
            return
        iy, ix = np.nonzero(met)
        rows = slice(int(iy.min()), int(iy.max()) + 1)
        cols = slice(int(ix.min()), int(ix.max()) + 1)
        dirs = camera.rays_in(rows, cols, 1).reshape(-1, 3).astype(np.float64)
        front = met[rows, cols].reshape(-1)
        which = best_part[rows, cols].reshape(-1)[front]
        t = best_t[rows, cols].reshape(-1)[front]
        nrm = best_n[rows, cols].reshape(-1, 3)[front]
        view = -dirs[front]
        pts = origin + t[:, None] * dirs[front]
        col = np.zeros((len(t), 3))
        for k, (part, _) in enumerate(parts):
            sel = which == k
            if sel.any():
                alb = np.tile(hand.albedo(part.material), (int(sel.sum()), 1))
                col[sel] = self._skin(pts[sel], nrm[sel], alb, view[sel], part, hand)
        layer.put(rows, cols, front, t, col, np.zeros(len(t), np.int64))

    def _remap(self, tex: F32, maps: tuple[F32, F32]) -> F32:
        return np.asarray(
            cv2.remap(tex, maps[0], maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE),
            np.float32,
        )

    def _chip_bounds(self, chips: list[Chip]) -> F64:
        r = self.model.radius_mm + 1.0
        ring = [
            (r * math.cos(a), r * math.sin(a))
            for a in np.linspace(0, 2 * math.pi, 12, endpoint=False)
        ]
        pts = [
            (c.bottom[0] + dx, c.bottom[1] + dy, c.bottom[2] + dz)
            for c in chips
            for dz in (0.0, -self.model.thickness_mm - 0.5)
            for dx, dy in ring
        ]
        return np.array(pts)

    def _chip_light(
        self, surf: chipmod.Surface, sel: npt.NDArray[np.bool_], chips: list[Chip], lamp: Lamp
    ) -> F64:
        """The share of a lamp that reaches the points ``sel`` past ``chips`` (the other stack
        in the box): shadow rays to a few points of the lamp's face, so the shadows are soft."""
        points, normals = surf.point[sel], surf.normal[sel]
        lit = np.zeros(len(points))
        centre = np.array(lamp.position)
        for dx, dy in _LAMP_SAMPLES:
            target = centre + lamp.radius_mm * np.array([dx, dy, 0.0])
            to = target - points
            to /= np.linalg.norm(to, axis=1, keepdims=True)
            facing = np.einsum("nk,nk->n", normals, to) > 0
            free = np.ones(len(points), bool)
            free[facing] = ~chipmod.blocked(points[facing], to[facing], chips, self.model)
            lit += free
        return lit / len(_LAMP_SAMPLES)

    def _skin(
        self,
        points: F64,
        normals: F64,
        albedo: F64,
        view: F64,
        part: handmod.Primitive,
        hand: handmod.Hand,
    ) -> F64:
        """Skin scatters light under its surface (wrapped diffuse, a little sheen); a sleeve is
        matte cloth with creases round the arm."""
        skin = part.material == handmod.SKIN
        light = sky(normals, self.lighting)
        spec = np.zeros_like(light)
        wrap = 0.35 if skin else 0.1
        for lamp in self.lighting.lamps:
            to = np.array(lamp.position) - points
            dist = np.linalg.norm(to, axis=1)
            omega = to / dist[:, None]
            cos = np.einsum("nk,nk->n", normals, omega)
            e = lamp.power * np.clip((cos + wrap) / (1 + wrap), 0, None) / (dist * dist)
            light += np.outer(e, lamp.colour)
            if skin:
                half = omega + view
                half /= np.linalg.norm(half, axis=1, keepdims=True)
                nh = np.clip(np.einsum("nk,nk->n", normals, half), 0, 1)
                spec += np.outer(0.04 * nh**14 * e, lamp.colour)
        if not skin and isinstance(part, handmod.Capsule):
            a, b = np.array(part.a), np.array(part.b)
            u = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
            along = (points - a) @ u
            p1, p2, p3 = hand.folds
            around = np.arctan2(normals @ np.cross(u, [0.0, 0.0, 1.0]), -normals[:, 2])
            crease = (
                0.5 * np.sin(along / 23.0 + p1 + 0.8 * np.sin(around * 2 + p2))
                + 0.35 * np.sin(along / 9.0 + 1.7 * around + p3)
                + 0.15 * np.sin(along / 4.1 - around + p1 * 2)
            )
            albedo = albedo * (1 + 0.1 * crease)[:, None]
        return np.asarray(albedo * light * self.light.uneven_on(points)[:, None] + spec, np.float64)

    def _camera(
        self,
        img: F32,
        depth: F32,
        v: SessionView,
        scene: FrameScene,
        camera: Camera,
        rng: np.random.Generator,
        measured: Measured,
    ) -> Rendered:
        o = scene.optics
        scale = camera.width / 1280
        img = optics.vignette(img, v.cos_axis, o.vignette)
        coc = (
            o.defocus_px + o.depth_blur_px * np.abs(1 - o.focus_mm / np.maximum(depth, 1.0))
        ) * scale
        img = optics.defocus(img, coc.astype(np.float32))
        img = optics.motion(img, o.motion_px * scale, o.motion_deg)
        img = optics.chromatic(
            img, o.chromatic, camera.lens.cx * camera.width, camera.lens.cy * camera.height
        )
        img = optics.lens_blur(img, scale)
        img = img * o.exposure
        img = optics.sensor(img, rng, o.gain, o.full_well, o.read_noise, bayer=True)
        # the camera's white balance: its estimate of the lamps at the layout's centre, drifting
        mix = self._centre_colour()
        wb = tuple(float(o.wb_error[i] / mix[i]) for i in range(3))
        rgb = optics.process(img, (wb[0], wb[1], wb[2]), o.sharpen)
        return Rendered(rgb, measured, (wb[0], wb[1], wb[2]))

    def _centre_colour(self) -> F64:
        lay = self._lay
        centre = np.array([[lay.width_mm / 2, lay.height_mm / 2, 0.0]])
        up = np.array([[0.0, 0.0, -1.0]])
        e = np.array(self.lighting.ambient, np.float64)
        for lamp in self.lighting.lamps:
            d, _, _ = direct(centre, up, lamp)
            e = e + d[0] * np.array(lamp.colour)
        return np.asarray(e / float(e @ np.array([0.2126, 0.7152, 0.0722])), np.float64)
