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
    bilinear,
    blurred,
    direct,
    felt_point,
    penumbra_mm,
    sky,
)
from drivers.camera.scene.sampling import FrameScene, Setup, Uneven

_LAMP_SAMPLES = ((0.0, 0.0), (0.7, 0.0), (-0.35, 0.6), (-0.35, -0.6))
MISS_RADIANCE = 0.004  # rays that leave the table: a dark room
_SHADOW_SHIFT = 3


@dataclass
class Region:
    """A rectangle of the supersampled picture and a mask within it."""

    rows: slice
    cols: slice
    mask: npt.NDArray[np.bool_]

    @property
    def count(self) -> int:
        return int(self.mask.sum())


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
class Measured:
    """What the tracing saw, for the truth file."""

    chip_px: F64  # visible pixels of each chip (frame order)
    chip_width_px: F64  # its projected diameter
    circle_cover: dict[int, float]  # share of each betting circle under the hand
    hand_over_chips: dict[int, int]  # supersampled rays that would meet a box's chips
    circle_in_view: dict[int, bool]
    circle_px: dict[int, tuple[float, float]]
    fiducial_cover: dict[str, float]
    fiducial_corners: dict[str, list[tuple[float, float]]]
    fiducial_in_view: dict[str, bool]
    fiducial_module_px: dict[str, float]  # the smallest side of a module in the picture


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
        lay = cfg.layout
        self.light_grid = Grid.covering(
            art.inner_grid.x0,
            art.inner_grid.y0,
            art.inner_grid.x0 + art.inner_grid.w / art.inner_grid.ppm,
            art.inner_grid.y0 + art.inner_grid.h / art.inner_grid.ppm,
            1.0,
        )
        og = art.outer_grid
        self.light_outer = Grid(og.x0, og.y0, og.ppm, og.w, og.h)
        self.lighting: Lighting = base.lighting
        self.uneven: Uneven = base.uneven
        self._direct_inner = [
            self._lamp_map(self.light_grid, i) for i in range(len(self.lighting.lamps))
        ]
        outer = np.zeros((og.h, og.w, 3), np.float32)
        for i, lamp in enumerate(self.lighting.lamps):
            outer += self._lamp_map(self.light_outer, i)[..., None] * np.array(
                lamp.colour, np.float32
            )
        outer += np.array(self.lighting.ambient, np.float32)
        self._outer_e = outer
        self._session_key: tuple[object, ...] | None = None
        self._view: SessionView | None = None
        self._lay = lay

    # -- lighting on the felt --------------------------------------------------------------

    def _lamp_map(self, grid: Grid, i: int) -> F32:
        gx, gy = grid.centres()
        pts = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)])
        up = np.tile(np.array([0.0, 0.0, -1.0]), (len(pts), 1))
        e, _, _ = direct(pts, up, self.lighting.lamps[i])
        e = e.reshape(gx.shape) * self.uneven.factor(gx, gy)
        return np.asarray(e, np.float32)

    def _shadow_maps(
        self, chips: list[Chip], hand: handmod.Hand | None
    ) -> tuple[list[F32], list[F32], F32]:
        """Per lamp: the share of it the chips block and the share the hand blocks, on the felt
        (light grid); and how much of the room's ambient still reaches the felt."""
        g = self.light_grid
        k = 1 << _SHADOW_SHIFT
        r = self.model.radius_mm
        chip_maps: list[F32] = []
        hand_maps: list[F32] = []
        for lamp in self.lighting.lamps:
            bands: dict[int, npt.NDArray[np.float32]] = {}
            for chip in chips:
                top = np.array(chip.bottom) + np.array(chip.frame[2]) * self.model.thickness_mm
                height = -float(top[2])
                band = min(int(height // 20), 3)
                canvas = bands.setdefault(band, np.zeros((g.h, g.w), np.float32))
                fx, fy = felt_point(top[None, :], lamp)[0]
                u, v = g.px(fx, fy)
                cv2.circle(
                    canvas,
                    (round(float(u) * k), round(float(v) * k)),
                    round(r * g.ppm * k),
                    1.0,
                    -1,
                    cv2.LINE_AA,
                    _SHADOW_SHIFT,
                )
            total = np.zeros((g.h, g.w), np.float32)
            for band, canvas in bands.items():
                soft = blurred(canvas, penumbra_mm(band * 20 + 10, lamp) * g.ppm / 2 + 0.6)
                total = np.maximum(total, np.clip(soft, 0, 1))
            chip_maps.append(total)
            hand_maps.append(self._hand_shadow(hand, lamp) if hand else np.zeros_like(total))
        ao = np.zeros((g.h, g.w), np.float32)
        bases = [c for c in chips if c.bottom[2] > -0.5]
        for chip in bases:
            u, v = g.px(chip.bottom[0], chip.bottom[1])
            cv2.circle(
                ao,
                (round(float(u) * k), round(float(v) * k)),
                round((r + 1.0) * g.ppm * k),
                1.0,
                -1,
                cv2.LINE_AA,
                _SHADOW_SHIFT,
            )
        ao = np.clip(blurred(ao, 4.0 * g.ppm), 0, 1) * 0.55
        if hand is not None:
            ha = np.zeros_like(ao)
            self._draw_hand(ha, hand, None)
            ha = blurred(ha, -hand.palm.centre[2] * 0.5 * g.ppm) * 0.45
            ao = np.maximum(ao, np.clip(ha, 0, 1))
        return chip_maps, hand_maps, 1 - ao

    def _draw_hand(self, canvas: F32, hand: handmod.Hand, lamp: object) -> None:
        """Rasterise the hand's outline as cast onto the felt (straight down if no lamp)."""
        g = self.light_grid
        k = 1 << _SHADOW_SHIFT

        def onto(p: tuple[float, float, float]) -> tuple[int, int]:
            if lamp is None:
                x, y = p[0], p[1]
            else:
                x, y = felt_point(np.array([p]), lamp)[0]  # type: ignore[arg-type]
            u, v = g.px(x, y)
            return round(float(u) * k), round(float(v) * k)

        for cap in hand.capsules:
            thick = max(1, round(2 * cap.radius * g.ppm))
            cv2.line(canvas, onto(cap.a), onto(cap.b), 1.0, thick, cv2.LINE_AA, _SHADOW_SHIFT)
        palm = hand.palm
        centre = onto(palm.centre)
        ang = math.degrees(math.atan2(palm.axes[0][1], palm.axes[0][0]))
        axes = (round(palm.semi[0] * g.ppm * k), round(palm.semi[1] * g.ppm * k))
        cv2.ellipse(canvas, centre, axes, ang, 0, 360, 1.0, -1, cv2.LINE_AA, _SHADOW_SHIFT)

    def _hand_shadow(self, hand: handmod.Hand, lamp: object) -> F32:
        g = self.light_grid
        canvas = np.zeros((g.h, g.w), np.float32)
        self._draw_hand(canvas, hand, lamp)
        height = -hand.palm.centre[2]
        return np.clip(blurred(canvas, penumbra_mm(height, lamp) * g.ppm / 2 + 1.0), 0, 1)  # type: ignore[arg-type]

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
        lg = self.light_grid
        lu, lv = (a.astype(np.float32) for a in lg.px(x, y))
        lou, lov = (a.astype(np.float32) for a in self.light_outer.px(x, y))
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
        chip_maps, hand_maps, ambient_left = self._shadow_maps(all_chips, scene.hand)
        felt = self._felt(v, scene, chip_maps, hand_maps, ambient_left)
        layer = _Layer(camera, self.ss)
        hit_regions = self._trace_chips(layer, camera, scene, all_chips, hand_maps)
        hand_layer = _Layer(camera, 1)  # the hand is traced a ray per pixel: it is large
        if scene.hand is not None:
            self._trace_hand(hand_layer, camera, scene.hand)
        measured = self._measure(v, camera, all_chips, layer, hand_layer, hit_regions)
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

    def _felt(
        self,
        v: SessionView,
        scene: FrameScene,
        chip_maps: list[F32],
        hand_maps: list[F32],
        ambient_left: F32,
    ) -> F32:
        """The felt and all printed on it, lit, with this frame's shadows and cards."""
        inner_tex, half_tex = self.art.with_cards(list(scene.cards))
        fine = self._remap(inner_tex, v.maps0)
        coarse = self._remap(half_tex, v.maps1)
        fine += v.mip[..., None] * (coarse - fine)
        albedo = np.where(v.inner[..., None], fine, self._remap(self.art.outer, v.maps_outer))
        lg = self.light_grid
        e_inner = np.zeros((lg.h, lg.w, 3), np.float32)
        for lamp, base_map, cs, hs in zip(
            self.lighting.lamps, self._direct_inner, chip_maps, hand_maps, strict=True
        ):
            lit = base_map * (1 - cs) * (1 - hs)
            e_inner += lit[..., None] * np.array(lamp.colour, np.float32)
        e_inner += ambient_left[..., None] * np.array(self.lighting.ambient, np.float32)
        e_img = np.where(
            v.light_in[..., None],
            self._remap(e_inner, v.light_maps),
            self._remap(self._outer_e, v.light_maps_outer),
        )
        rad = np.asarray(albedo * e_img, np.float32)
        rad[~np.isfinite(v.plane_t)] = MISS_RADIANCE
        return rad

    def _trace_chips(
        self,
        layer: _Layer,
        camera: Camera,
        scene: FrameScene,
        all_chips: list[Chip],
        hand_maps: list[F32],
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
            vis = self._lamp_visibility(surf.point, hand_maps)
            if len(stacks) == 2:  # each stack shades the other
                on = stack_of[hits.chip[front]]
                for k in range(2):
                    other = list(stacks[1 - k].chips)
                    sel = on == k
                    for lamp_vis, lamp in zip(vis, self.lighting.lamps, strict=True):
                        lamp_vis[sel] *= self._chip_light(surf, sel, other, lamp)
            col = chipmod.radiance(surf, -sub[front], self.lighting, vis)
            col *= self._uneven_on(surf.point)[:, None]
            global_ids = np.array([index_of[id(c)] for c in chips])
            layer.put(rows, cols, front, hits.t[front], col, global_ids[hits.chip[front]])
        return regions

    def _trace_hand(self, layer: _Layer, camera: Camera, hand: handmod.Hand) -> None:
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

    def _lamp_visibility(self, points: F64, hand_maps: list[F32]) -> list[F64]:
        out = []
        for lamp, hm in zip(self.lighting.lamps, hand_maps, strict=True):
            if not hm.any():
                out.append(np.ones(len(points)))
                continue
            fp = felt_point(points, lamp)
            out.append(1.0 - bilinear(hm, self.light_grid, fp[:, 0], fp[:, 1]).astype(np.float64))
        return out

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

    def _uneven_on(self, points: F64) -> F64:
        # the lamps' patches fall on the chips as on the felt (the room's ambient is even)
        return np.asarray(self.uneven.factor(points[:, 0], points[:, 1]), np.float64) ** 0.8

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
        return np.asarray(albedo * light * self._uneven_on(points)[:, None] + spec, np.float64)

    def _measure(
        self,
        v: SessionView,
        camera: Camera,
        chips: list[Chip],
        layer: _Layer,
        hand_layer: _Layer,
        hit_regions: dict[int, Region],
    ) -> Measured:
        s2 = self.ss * self.ss
        chip_px = self._unique_counts(layer, hand_layer, len(chips)) / s2
        if chips:
            centres = np.array(
                [
                    np.array(c.bottom) + np.array(c.frame[2]) * self.model.thickness_mm / 2
                    for c in chips
                ]
            )
            _, depth = camera.project(centres)
            width = 2 * self.model.radius_mm * camera.fpx / np.maximum(depth, 1.0)
        else:
            width = np.zeros(0)
        hand_native = hand_layer.coverage()
        cover: dict[int, float] = {}
        over: dict[int, int] = {}
        in_view: dict[int, bool] = {}
        where: dict[int, tuple[float, float]] = {}
        for box in self.cfg.boxes:
            reg = v.circles[box.box]
            under = hand_native[reg.rows, reg.cols]
            cover[box.box] = float((under * reg.mask).sum() / max(reg.count, 1))
            hr = hit_regions.get(box.box)
            over[box.box] = (
                int((hand_layer.fine(hr.rows, hr.cols, self.ss) != 0)[hr.mask].sum()) if hr else 0
            )
            ring = np.array(
                [
                    (
                        box.center_mm[0] + box.radius_mm * math.cos(a),
                        box.center_mm[1] + box.radius_mm * math.sin(a),
                        0.0,
                    )
                    for a in np.linspace(0, 2 * math.pi, 36, endpoint=False)
                ]
            )
            in_view[box.box] = _inside(camera, ring)
            c, _ = camera.project(np.array([[box.center_mm[0], box.center_mm[1], 0.0]]))
            where[box.box] = (float(c[0, 0]), float(c[0, 1]))
        fid_cover: dict[str, float] = {}
        corners: dict[str, list[tuple[float, float]]] = {}
        fid_view: dict[str, bool] = {}
        module: dict[str, float] = {}
        for fid in self.cfg.fiducials:
            reg = v.fiducials[fid.code]
            under = hand_native[reg.rows, reg.cols]
            fid_cover[fid.code] = float((under * reg.mask).sum() / max(reg.count, 1))
            n = self.art.qr[fid.code].shape[0]
            hs = fid.size_mm / 2
            hq = hs + QUIET_MODULES * fid.size_mm / n
            uv, _ = camera.project(_square(fid.center_mm, hs))
            corners[fid.code] = [(round(float(a), 2), round(float(b), 2)) for a, b in uv]
            sides = np.linalg.norm(uv - np.roll(uv, -1, axis=0), axis=1)
            module[fid.code] = float(sides.min()) / n
            fid_view[fid.code] = _inside(camera, _square(fid.center_mm, hq))
        return Measured(
            chip_px, width, cover, over, in_view, where, fid_cover, corners, fid_view, module
        )

    def _unique_counts(self, layer: _Layer, hand_layer: _Layer, n: int) -> F64:
        counts = np.zeros(n)
        if not n or not layer.regions:
            return counts
        r0 = min(r.start for r, _ in layer.regions)
        r1 = max(r.stop for r, _ in layer.regions)
        c0 = min(c.start for _, c in layer.regions)
        c1 = max(c.stop for _, c in layer.regions)
        ids = layer.ids[r0:r1, c0:c1]
        covered = hand_layer.fine(slice(r0, r1), slice(c0, c1), self.ss) != 0
        seen = ids[(ids > 0) & ~covered] - 1
        return np.bincount(seen, minlength=n)[:n].astype(np.float64)

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


def _square(centre: tuple[float, float], half: float) -> F64:
    cx, cy = centre
    return np.array(
        [
            [cx - half, cy - half, 0],
            [cx + half, cy - half, 0],
            [cx + half, cy + half, 0],
            [cx - half, cy + half, 0],
        ],
        np.float64,
    )


def _inside(camera: Camera, points: F64) -> bool:
    uv, depth = camera.project(points)
    return bool(
        np.all(depth > 0)
        and np.all((uv[:, 0] >= 0) & (uv[:, 0] <= camera.width - 1))
        and np.all((uv[:, 1] >= 0) & (uv[:, 1] <= camera.height - 1))
    )


class _Layer:
    """Supersampled radiance of traced objects, touched only in the rectangles traced.

    ``ids`` holds 1 + the object's id (a chip's index; 0 for the hand) and 0 where nothing
    was met; all arrays start as zeros, which costs nothing until a rectangle is written."""

    def __init__(self, camera: Camera, scale: int) -> None:
        self.s = scale
        self.w, self.h = camera.width, camera.height
        shape = (self.h * scale, self.w * scale)
        self.rgb = np.zeros((*shape, 3), np.float32)
        self.t = np.zeros(shape, np.float64)
        self.ids = np.zeros(shape, np.int32)
        self.regions: list[tuple[slice, slice]] = []

    def nearer(self, rows: slice, cols: slice, t: F64) -> npt.NDArray[np.bool_]:
        ids = self.ids[rows, cols].reshape(-1)
        return np.asarray((ids == 0) | (t < self.t[rows, cols].reshape(-1)), bool)

    def put(
        self,
        rows: slice,
        cols: slice,
        front: npt.NDArray[np.bool_],
        t: F64,
        rgb: F64,
        ids: npt.NDArray[np.int64],
    ) -> None:
        shape = (rows.stop - rows.start, cols.stop - cols.start)
        where = front.reshape(shape)
        self.rgb[rows, cols][where] = rgb
        self.t[rows, cols][where] = t
        self.ids[rows, cols][where] = ids + 1
        self.regions.append((rows, cols))

    def down(self) -> tuple[F32, F32]:
        """Premultiplied radiance and coverage at the picture's resolution."""
        rgb = np.zeros((self.h, self.w, 3), np.float32)
        alpha = np.zeros((self.h, self.w), np.float32)
        s = self.s
        for rows, cols in self.regions:
            nr = slice(rows.start // s, rows.stop // s)
            nc = slice(cols.start // s, cols.stop // s)
            block = self.rgb[rows, cols]
            mask = (self.ids[rows, cols] != 0).astype(np.float32)
            size = (nc.stop - nc.start, nr.stop - nr.start)
            rgb[nr, nc] = cv2.resize(block, size, interpolation=cv2.INTER_AREA)
            alpha[nr, nc] = cv2.resize(mask, size, interpolation=cv2.INTER_AREA)
        return rgb, alpha

    def coverage(self) -> F32:
        return self.down()[1]

    def fine(self, rows: slice, cols: slice, scale: int) -> npt.NDArray[np.int32]:
        """``ids`` of a rectangle of the ``scale``-times grid (this layer is at one ray a
        pixel: each pixel's id stands for all its sub-pixels)."""
        r0, r1 = rows.start // scale, -(-rows.stop // scale)
        c0, c1 = cols.start // scale, -(-cols.stop // scale)
        block = np.repeat(np.repeat(self.ids[r0:r1, c0:c1], scale, 0), scale, 1)
        return block[
            rows.start - r0 * scale : rows.stop - r0 * scale,
            cols.start - c0 * scale : cols.stop - c0 * scale,
        ]
