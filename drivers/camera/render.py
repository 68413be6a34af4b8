"""A synthetic Pontoon layout as the chip camera would see it, with the true wagers beside it.

The layout (felt, betting circles, QR fiducials) is drawn from the table config in layout
millimetres, chip stacks are added as a pinhole camera over the dealer's side sees them (each
chip's disc drawn where that camera's ray meets the cloth, so a stack leans away from the
camera by its height, each edge showing as a flat band with edge inserts and the top chip's
face on top), optionally a hand partly over a box, and the whole is photographed: the
camera's projection, lighting, blur and noise. Chips are flat-coloured bands here, not shaded
cylinders; ``drivers/camera/scene/`` is the independent renderer written from camera physics.

The renderer shares nothing with the detector except the table config.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.config import BoxArea, CameraConfig
from drivers.camera.fiducials import qr_modules

U8Array = npt.NDArray[np.uint8]
F32Array = npt.NDArray[np.float32]

_CHIP_WEIGHTS = {1: 0.15, 5: 0.3, 25: 0.25, 100: 0.15, 500: 0.08, 1000: 0.07}
_SKIN_TONES_RGB = [(236, 188, 160), (214, 160, 122), (170, 110, 75), (120, 76, 50), (90, 58, 40)]
_RAIL_BGR = (40, 60, 85)


def _bgr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return (rgb[2], rgb[1], rgb[0])


def _shade(colour: npt.NDArray[np.float64], k: float) -> tuple[int, int, int]:
    return (int(colour[0] * k), int(colour[1] * k), int(colour[2] * k))


@dataclass(frozen=True)
class Hand:
    """A hand over the layout: palm centre (mm), the direction the fingers point, skin tone."""

    center_mm: tuple[float, float]
    angle_deg: float
    skin_rgb: tuple[int, int, int]
    scale: float = 1.0


@dataclass(frozen=True)
class Stack:
    base_mm: tuple[float, float]  # centre of the bottom chip on the layout
    chips: tuple[int, ...]  # values, bottom chip first
    jitter_mm: tuple[float, ...] = ()  # per-chip sideways offset (stacks are never quite straight)


@dataclass(frozen=True)
class Scene:
    stacks: dict[int, tuple[Stack, ...]]  # box -> stacks in it
    hand: Hand | None = None

    def wagers(self) -> dict[int, tuple[Decimal, dict[int, int]]]:
        out: dict[int, tuple[Decimal, dict[int, int]]] = {}
        for box, stacks in self.stacks.items():
            chips: dict[int, int] = {}
            for stack in stacks:
                for value in stack.chips:
                    chips[value] = chips.get(value, 0) + 1
            total = sum((Decimal(v) * n for v, n in chips.items()), Decimal(0))
            out[box] = (total, dict(sorted(chips.items())))
        return out


@dataclass(frozen=True)
class Shot:
    """The renderer's pinhole camera: aimed at ``target_mm`` on the layout from
    ``distance_mm`` away, ``tilt_deg`` from the vertical, from the dealer's side (``yaw_deg``
    turns it round the vertical, ``roll_deg`` round its own axis: 180 is upside down)."""

    target_mm: tuple[float, float]
    tilt_deg: float
    yaw_deg: float
    roll_deg: float
    distance_mm: float
    focal_px: float
    size: tuple[int, int]

    def _frame(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        # World axes: layout x, layout y (towards the dealer), z down into the table.
        t, psi = math.radians(self.tilt_deg), math.radians(self.yaw_deg)
        forward = np.array([math.sin(t) * math.sin(psi), -math.sin(t) * math.cos(psi), math.cos(t)])
        right = np.cross([0.0, 0.0, 1.0], forward)
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        r = math.radians(self.roll_deg)
        right, down = (
            math.cos(r) * right + math.sin(r) * down,
            -math.sin(r) * right + math.cos(r) * down,
        )
        rot = np.stack([right, down, forward])
        target = np.array([self.target_mm[0], self.target_mm[1], 0.0])
        return rot, target - self.distance_mm * forward

    @property
    def position_mm(self) -> tuple[float, float, float]:
        """Layout x, y under the camera, and its height above the cloth."""
        _, c = self._frame()
        return (float(c[0]), float(c[1]), float(-c[2]))

    def project(self, points: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Frame pixels of layout points ``(x, y, height)`` (N x 3, mm)."""
        rot, c = self._frame()
        world = np.asarray(points, np.float64).reshape(-1, 3) * [1.0, 1.0, -1.0]
        cam = (world - c) @ rot.T
        w, h = self.size
        return np.stack(
            [
                self.focal_px * cam[:, 0] / cam[:, 2] + (w - 1) / 2,
                self.focal_px * cam[:, 1] / cam[:, 2] + (h - 1) / 2,
            ],
            axis=1,
        )

    def on_cloth(self, x: float, y: float, height: float) -> tuple[float, float]:
        """The point of the cloth behind ``(x, y, height)`` as the camera sees it."""
        cx, cy, ch = self.position_mm
        k = ch / (ch - height)
        return (cx + (x - cx) * k, cy + (y - cy) * k)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target_mm": [round(v, 2) for v in self.target_mm],
            "tilt_deg": round(self.tilt_deg, 3),
            "yaw_deg": round(self.yaw_deg, 3),
            "roll_deg": round(self.roll_deg, 3),
            "distance_mm": round(self.distance_mm, 2),
            "focal_px": round(self.focal_px, 2),
            "position_mm": [round(v, 2) for v in self.position_mm],
        }


@dataclass(frozen=True)
class Look:
    """How the camera sees the layout this frame."""

    camera: Shot
    gain: float = 1.0
    cast: tuple[float, float, float] = (1.0, 1.0, 1.0)  # BGR multipliers (colour temperature)
    gradient: tuple[float, float] = (0.0, 0.0)  # brightness slope across x and y
    vignette: float = 0.0
    blur_sigma: float = 0.0
    noise_sigma: float = 0.0

    @property
    def size(self) -> tuple[int, int]:
        return self.camera.size

    def corners_px(self, width_mm: float, height_mm: float) -> npt.NDArray[np.float64]:
        """The layout's TL, TR, BR, BL corners in the frame."""
        pts = np.array(
            [[0, 0, 0], [width_mm, 0, 0], [width_mm, height_mm, 0], [0, height_mm, 0]], float
        )
        return self.camera.project(pts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "camera": self.camera.to_dict(),
            "gain": round(self.gain, 4),
            "cast": [round(c, 4) for c in self.cast],
            "gradient": [round(g, 4) for g in self.gradient],
            "vignette": round(self.vignette, 4),
            "blur_sigma": round(self.blur_sigma, 4),
            "noise_sigma": round(self.noise_sigma, 4),
            "size": list(self.size),
        }


@dataclass
class LayoutRenderer:
    cfg: CameraConfig
    px_per_mm: float = 2.0
    # The printer of the QR codes: text -> modules (0 dark, 255 light, no quiet zone).
    modules: Callable[[str], U8Array] = qr_modules
    _base: U8Array | None = field(default=None, init=False, repr=False)

    @property
    def canvas_size(self) -> tuple[int, int]:
        lay = self.cfg.layout
        return (round(lay.width_mm * self.px_per_mm), round(lay.height_mm * self.px_per_mm))

    def _p(self, x_mm: float, y_mm: float) -> tuple[int, int]:
        return (round(x_mm * self.px_per_mm), round(y_mm * self.px_per_mm))

    def _l(self, mm: float) -> int:
        return max(1, round(mm * self.px_per_mm))

    def base(self) -> U8Array:
        """The empty layout: felt, printed lines and text, fiducials."""
        if self._base is not None:
            return self._base
        cfg, lay = self.cfg, self.cfg.layout
        w, h = self.canvas_size
        img = np.empty((h, w, 3), np.uint8)
        img[:] = _bgr(lay.felt)
        grain = np.random.default_rng(7).normal(0, 3.0, (h, w, 1)).astype(np.float32)
        img = np.clip(img.astype(np.float32) + grain, 0, 255).astype(np.uint8)
        ink = _bgr(lay.print_colour)
        for area in cfg.boxes:
            cx, cy = area.center_mm
            cv2.circle(
                img, self._p(cx, cy), self._l(area.radius_mm), ink, self._l(2.0), cv2.LINE_AA
            )
            label = str(area.box)
            scale = 1.2 * self.px_per_mm / 2
            (tw, _), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
            org = self._p(cx, cy + area.radius_mm + 22)
            org = (org[0] - tw // 2, org[1])
            cv2.putText(img, label, org, cv2.FONT_HERSHEY_SIMPLEX, scale, ink, 2, cv2.LINE_AA)
        for text, y in (
            ("PONTOON PAYS 3 TO 2", lay.height_mm * 0.80),  # natural_pays, 11.1
            ("DEALER MUST DRAW TO 16 AND STAND ON 17", lay.height_mm * 0.88),
        ):
            scale = 0.9 * self.px_per_mm / 2
            (tw, _), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
            org = self._p(lay.width_mm / 2, y)
            org = (org[0] - tw // 2, org[1])
            cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, ink, 2, cv2.LINE_AA)
        for fid in cfg.fiducials:
            modules = self.modules(fid.code)
            n = modules.shape[0]
            side = self._l(fid.size_mm)
            quiet = self._l(fid.size_mm * 2 / n)
            x0, y0 = self._p(fid.center_mm[0] - fid.size_mm / 2, fid.center_mm[1] - fid.size_mm / 2)
            cv2.rectangle(
                img,
                (x0 - quiet, y0 - quiet),
                (x0 + side + quiet, y0 + side + quiet),
                (245,) * 3,
                -1,
            )
            code = cv2.resize(modules, (side, side), interpolation=cv2.INTER_NEAREST)
            code_bgr = np.where(code[..., None] < 128, 20, 245).astype(np.uint8)
            img[y0 : y0 + side, x0 : x0 + side] = code_bgr
        self._base = img
        return np.asarray(img, np.uint8)

    def draw_scene(self, scene: Scene, look: Look) -> tuple[U8Array, U8Array]:
        """The layout with the scene on it (in layout pixels), and the hand's mask. Each chip
        is drawn where the camera of ``look`` sees it: a disc at height z shows on the cloth
        pushed away from the camera and enlarged by h / (h - z), h the camera's height."""
        img = self.base().copy()
        shot = look.camera
        cx, cy, _ = shot.position_mm
        for box in sorted(scene.stacks):
            # Stacks nearer the camera are drawn last: they hide what is behind.
            for stack in sorted(
                scene.stacks[box], key=lambda s: -math.hypot(s.base_mm[0] - cx, s.base_mm[1] - cy)
            ):
                self._draw_stack(img, stack, shot)
        hand_mask = np.zeros(img.shape[:2], np.uint8)
        if scene.hand is not None:
            self._draw_hand(img, hand_mask, scene.hand)
        return img, hand_mask

    def _disc(
        self,
        img: U8Array,
        shot: Shot,
        centre: tuple[float, float],
        z: float,
        r_mm: float,
        colour: tuple[int, int, int],
    ) -> tuple[float, float, float]:
        x, y = shot.on_cloth(centre[0], centre[1], z)
        k = shot.position_mm[2] / (shot.position_mm[2] - z)
        cv2.circle(img, self._p(x, y), self._l(r_mm * k), colour, -1, cv2.LINE_AA)
        return x, y, k

    def _draw_stack(self, img: U8Array, stack: Stack, shot: Shot) -> None:
        lay = self.cfg.layout
        r_mm = lay.chip_diameter_mm / 2
        h = lay.chip_height_mm
        bx, by = stack.base_mm
        n = len(stack.chips)
        jit = stack.jitter_mm or (0.0,) * n
        fx, fy, _ = shot.position_mm
        toward = math.atan2(fy - by, fx - bx)  # the side of the stack facing the camera
        for i, value in enumerate(stack.chips):
            rgb = self.cfg.chip_by_value(value).colour
            face = np.array(_bgr(rgb), np.float64)
            side = _shade(face, 0.82)
            seam = _shade(face, 0.45)
            insert = (235, 235, 235) if sum(rgb) < 600 else (70, 70, 150)
            centre = (bx + jit[i], by)
            self._disc(img, shot, centre, i * h, r_mm, seam)
            self._disc(img, shot, centre, i * h + 0.15, r_mm - 0.4, side)
            # Edge inserts on the visible band: short marks every 13 mm along the rim.
            phase = (i * 5.3 + value) % 13
            u = -r_mm + 3 + phase
            while u < r_mm - 3:
                a = toward + math.asin(u / r_mm)
                quad = []
                for du, z in (
                    (-1.25, i * h + 0.3),
                    (1.25, i * h + 0.3),
                    (1.25, (i + 1) * h - 0.3),
                    (-1.25, (i + 1) * h - 0.3),
                ):
                    ang = a + du / r_mm
                    px, py = shot.on_cloth(
                        centre[0] + r_mm * math.cos(ang), centre[1] + r_mm * math.sin(ang), z
                    )
                    quad.append([px * self.px_per_mm, py * self.px_per_mm])
                cv2.fillConvexPoly(img, np.round(np.array(quad)).astype(np.int32), insert)
                u += 13
        # The top chip's face.
        top_value = stack.chips[-1]
        rgb = self.cfg.chip_by_value(top_value).colour
        face_t = _bgr(rgb)
        seam_t = _shade(np.array(face_t, np.float64), 0.45)
        ring = _shade(np.array(face_t, np.float64), 0.8)
        insert = (235, 235, 235) if sum(rgb) < 600 else (70, 70, 150)
        centre = (bx + jit[-1], by)
        self._disc(img, shot, centre, n * h, r_mm, seam_t)
        x, y, k = self._disc(img, shot, centre, n * h, r_mm - 0.4, face_t)
        cv2.circle(img, self._p(x, y), self._l(r_mm * 0.62 * k), ring, self._l(0.8), cv2.LINE_AA)
        for j in range(6):
            a = math.radians(60 * j + 15 + 7 * n)
            px, py = x + 0.84 * r_mm * k * math.cos(a), y + 0.84 * r_mm * k * math.sin(a)
            box_pts = cv2.boxPoints(
                (self._p(px, py), (self._l(4.0 * k), self._l(2.5 * k)), math.degrees(a) + 90)
            )
            cv2.fillConvexPoly(img, np.round(box_pts).astype(np.int32), insert, cv2.LINE_AA)

    def _draw_hand(self, img: U8Array, mask: U8Array, hand: Hand) -> None:
        s = hand.scale
        a = math.radians(hand.angle_deg)
        fwd = np.array([math.cos(a), math.sin(a)])
        side = np.array([-fwd[1], fwd[0]])
        c = np.array(hand.center_mm)
        shapes = np.zeros_like(mask)
        cv2.ellipse(
            shapes, self._p(*c), (self._l(48 * s), self._l(42 * s)), hand.angle_deg, 0, 360, 255, -1
        )
        for k, length in zip((-1.5, -0.5, 0.5, 1.5), (62, 72, 70, 58), strict=True):
            root = c + fwd * 30 * s + side * k * 19 * s
            tip = root + fwd * length * s
            cv2.line(shapes, self._p(*root), self._p(*tip), 255, self._l(16 * s))
            cv2.circle(shapes, self._p(*tip), self._l(8 * s), 255, -1)
        thumb_root = c + side * 38 * s
        thumb_tip = thumb_root + (fwd * 0.6 + side * 0.8) * 45 * s
        cv2.line(shapes, self._p(*thumb_root), self._p(*thumb_tip), 255, self._l(19 * s))
        shade = np.linspace(0.8, 1.1, img.shape[1], dtype=np.float32)[None, :, None]
        skin = np.array(_bgr(hand.skin_rgb), np.float32)[None, None, :] * shade
        skin_img = np.clip(np.broadcast_to(skin, img.shape), 0, 255).astype(np.uint8)
        sel = shapes > 0
        img[sel] = skin_img[sel]
        mask[sel] = 255

    def box_region_mm(self, area: BoxArea, shot: Shot) -> tuple[float, float, float, float]:
        """x0, y0, x1, y1 of the layout that chips in this box can cover."""
        lay = self.cfg.layout
        cx, cy = area.center_mm
        top = lay.max_stack * lay.chip_height_mm
        r = area.radius_mm
        xs, ys = [cx - r, cx + r], [cy - r, cy + r]
        for dx, dy in ((-r, -r), (r, -r), (-r, r), (r, r)):
            tx, ty = shot.on_cloth(cx + dx, cy + dy, top)
            xs.append(tx)
            ys.append(ty)
        return (min(xs), min(ys), max(xs), max(ys))

    def occluded_boxes(self, hand_mask: U8Array, shot: Shot) -> list[int]:
        out = []
        for area in self.cfg.boxes:
            x0, y0, x1, y1 = (round(v * self.px_per_mm) for v in self.box_region_mm(area, shot))
            h, w = hand_mask.shape
            region = hand_mask[max(y0, 0) : min(y1, h), max(x0, 0) : min(x1, w)]
            if region.size and int(np.count_nonzero(region)) > 0:
                out.append(area.box)
        return out

    def to_frame(self, layout_img: U8Array, look: Look, rng: np.random.Generator) -> U8Array:
        """Photograph the layout: perspective, lighting, blur and noise."""
        w, h = look.size
        lw, lh = self.canvas_size
        lay = self.cfg.layout
        # Layout pixel centres sit at (i + 0.5) / px_per_mm mm.
        src = np.array([[0, 0], [lw, 0], [lw, lh], [0, lh]], np.float32) - 0.5
        dst = look.corners_px(lay.width_mm, lay.height_mm).astype(np.float32)
        m = cv2.getPerspectiveTransform(src, dst)
        smooth = cv2.GaussianBlur(layout_img, (0, 0), 0.45 * self.px_per_mm)
        frame = cv2.warpPerspective(
            smooth, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=_RAIL_BGR
        ).astype(np.float32)
        ys, xs = np.mgrid[0:9, 0:16].astype(np.float32)
        xs, ys = xs / 15 - 0.5, ys / 8 - 0.5
        field_small = (
            1 + look.gradient[0] * xs + look.gradient[1] * ys - look.vignette * (xs**2 + ys**2)
        )
        light = cv2.resize(field_small, (w, h), interpolation=cv2.INTER_LINEAR)
        frame *= light[..., None] * look.gain
        frame *= np.array(look.cast, np.float32)[None, None, :]
        if look.blur_sigma > 0.05:
            frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), look.blur_sigma), np.float32)
        if look.noise_sigma > 0:
            frame += rng.standard_normal(frame.shape, dtype=np.float32) * look.noise_sigma
        return np.clip(frame, 0, 255).astype(np.uint8)


def random_shot(
    rng: np.random.Generator, cfg: CameraConfig, *, size: tuple[int, int] | None = None
) -> Shot:
    """A camera over the dealer's side, 48-60 degrees from the vertical, a little turned, as
    close as it can be with every fiducial in view."""
    w, h = size or cfg.resolution
    lay = cfg.layout
    fid_pts = []
    for fid in cfg.fiducials:
        half = fid.size_mm / 2 + 8
        for dx in (-half, half):
            for dy in (-half, half):
                fid_pts.append([fid.center_mm[0] + dx, fid.center_mm[1] + dy, 0.0])
    pts = np.array(fid_pts, np.float64)
    shot = Shot((lay.width_mm / 2, lay.height_mm / 2), 54.0, 0.0, 0.0, 1500.0, 0.95 * w, (w, h))
    for _ in range(100):
        focal = float(rng.uniform(0.8, 1.05)) * w
        shot = Shot(
            (
                lay.width_mm / 2 + float(rng.uniform(-25, 25)),
                lay.height_mm / 2 + float(rng.uniform(-20, 20)),
            ),
            float(rng.uniform(48, 60)),
            float(rng.uniform(-4, 4)),
            float(rng.uniform(-3, 3)),
            1500.0,
            focal,
            (w, h),
        )
        # Move in until a fiducial would leave the frame (with a margin), then back off.
        lo, hi = 300.0, 4000.0
        for _ in range(30):
            mid = (lo + hi) / 2
            proj = replace(shot, distance_mm=mid).project(pts)
            inside = (proj[:, 0] > 4).all() and (proj[:, 0] < w - 5).all()
            if inside and (proj[:, 1] > 4).all() and (proj[:, 1] < h - 5).all():
                hi = mid
            else:
                lo = mid
        shot = replace(shot, distance_mm=hi * float(rng.uniform(1.0, 1.08)))
        proj = shot.project(pts)
        inside = (proj > 2).all() and (proj[:, 0] < w - 2).all() and (proj[:, 1] < h - 2).all()
        if inside:
            break
    return shot


def random_look(
    rng: np.random.Generator, cfg: CameraConfig, *, size: tuple[int, int] | None = None
) -> Look:
    """A camera pose and lighting drawn at random within what a table camera would see."""
    return Look(
        camera=random_shot(rng, cfg, size=size),
        gain=float(rng.uniform(0.6, 1.2)),
        cast=(
            float(rng.uniform(0.88, 1.12)),
            float(rng.uniform(0.94, 1.06)),
            float(rng.uniform(0.88, 1.12)),
        ),
        gradient=(float(rng.uniform(-0.3, 0.3)), float(rng.uniform(-0.3, 0.3))),
        vignette=float(rng.uniform(0.0, 0.5)),
        blur_sigma=float(rng.choice([0.0, rng.uniform(0.3, 1.4)])),
        noise_sigma=float(rng.uniform(0.5, 6.0)),
    )


def _random_stack_values(rng: np.random.Generator, cfg: CameraConfig, n: int) -> tuple[int, ...]:
    values = [c.value for c in cfg.chips]
    weights = np.array([_CHIP_WEIGHTS.get(v, 0.1) for v in values], np.float64)
    weights /= weights.sum()
    if rng.random() < 0.6:
        return (int(rng.choice(values, p=weights)),) * n
    chosen = [int(v) for v in rng.choice(values, size=n, p=weights)]
    if rng.random() < 0.7:
        chosen.sort(reverse=True)  # the usual way: big chips at the bottom
    return tuple(chosen)


def random_scene(rng: np.random.Generator, cfg: CameraConfig, *, empty_prob: float = 0.3) -> Scene:
    lay = cfg.layout
    d = lay.chip_diameter_mm
    stacks: dict[int, tuple[Stack, ...]] = {}
    for area in cfg.boxes:
        if rng.random() < empty_prob:
            stacks[area.box] = ()
            continue
        cx, cy = area.center_mm
        count = 1 if rng.random() < 0.65 else 2
        gap = rng.uniform(5, 10)
        shift = rng.uniform(-3, 3) if count == 2 else rng.uniform(-8, 8)
        room = area.radius_mm - d / 2
        out: list[Stack] = []
        for j in range(count):
            x = cx + shift + (j - (count - 1) / 2) * (d + gap)
            y = cy + rng.uniform(-6, 8)
            # keep the bottom chip inside the betting circle
            dx, dy = x - cx, y - cy
            dist = math.hypot(dx, dy)
            if dist > room:
                x, y = cx + dx * room / dist, cy + dy * room / dist
            n = int(rng.integers(1, lay.max_stack + 1))
            chips = _random_stack_values(rng, cfg, n)
            jitter = tuple(float(v) for v in rng.uniform(-0.7, 0.7, n))
            out.append(Stack((float(x), float(y)), chips, jitter))
        stacks[area.box] = tuple(out)
    return Scene(stacks)


def random_hand(rng: np.random.Generator, cfg: CameraConfig, box: int | None = None) -> Hand:
    """A hand partly over a box (chosen at random unless given)."""
    areas = {a.box: a for a in cfg.boxes}
    area = areas[box] if box is not None else areas[int(rng.choice(list(areas)))]
    ang = rng.uniform(0, 2 * math.pi)
    dist = rng.uniform(30, 75)
    cx = area.center_mm[0] + dist * math.cos(ang)
    cy = area.center_mm[1] + dist * math.sin(ang)
    tone = _SKIN_TONES_RGB[int(rng.integers(len(_SKIN_TONES_RGB)))]
    skin = tuple(int(np.clip(c * rng.uniform(0.9, 1.1), 0, 255)) for c in tone)
    return Hand(
        (float(cx), float(cy)),
        float(rng.uniform(0, 360)),
        (skin[0], skin[1], skin[2]),
        float(rng.uniform(0.85, 1.15)),
    )


def truth_dict(scene: Scene, occluded: Sequence[int]) -> dict[str, Any]:
    boxes: dict[str, Any] = {}
    for box, (amount, chips) in sorted(scene.wagers().items()):
        boxes[str(box)] = {
            "amount": str(amount),
            "chips": {str(v): n for v, n in chips.items()},
            "stacks": [list(s.chips) for s in scene.stacks[box]],
        }
    return {"boxes": boxes, "occluded": sorted(occluded)}


@dataclass(frozen=True)
class RenderedFrame:
    image: U8Array
    scene: Scene
    occluded: tuple[int, ...]
    look: Look

    def truth(self) -> dict[str, Any]:
        return truth_dict(self.scene, self.occluded) | {"look": self.look.to_dict()}


def render_frames(
    cfg: CameraConfig,
    count: int,
    seed: int,
    *,
    hand_prob: float = 0.2,
    size: tuple[int, int] | None = None,
) -> Iterator[RenderedFrame]:
    """Independent still frames: each its own scene, camera pose and lighting."""
    rng = np.random.default_rng(seed)
    renderer = LayoutRenderer(cfg)
    for _ in range(count):
        scene = random_scene(rng, cfg)
        if rng.random() < hand_prob:
            scene = Scene(scene.stacks, random_hand(rng, cfg))
        look = random_look(rng, cfg, size=size)
        layout_img, hand_mask = renderer.draw_scene(scene, look)
        occluded = tuple(renderer.occluded_boxes(hand_mask, look.camera))
        yield RenderedFrame(renderer.to_frame(layout_img, look, rng), scene, occluded, look)


def render_sequence(
    cfg: CameraConfig,
    count: int,
    seed: int,
    *,
    change_every: int = 40,
    hand_every: int = 25,
    hand_frames: int = 10,
    size: tuple[int, int] | None = None,
) -> Iterator[RenderedFrame]:
    """Frames from one fixed camera: the wagers change every ``change_every`` frames (one box's
    stacks are redrawn), and a hand sweeps across a box for ``hand_frames`` frames every
    ``hand_every`` frames. Noise is fresh in every frame."""
    rng = np.random.default_rng(seed)
    renderer = LayoutRenderer(cfg)
    look = random_look(rng, cfg, size=size)
    scene = random_scene(rng, cfg)
    hand_path: tuple[Hand, Hand] | None = None
    hand_start = 0
    for i in range(count):
        if i > 0 and i % change_every == 0:
            fresh = random_scene(rng, cfg, empty_prob=0.2)
            box = int(rng.choice([a.box for a in cfg.boxes]))
            stacks = dict(scene.stacks)
            stacks[box] = fresh.stacks[box]
            scene = Scene(stacks)
        if hand_every and i % hand_every == hand_every // 2:
            start = random_hand(rng, cfg)
            end = random_hand(rng, cfg)
            end = Hand(end.center_mm, end.angle_deg, start.skin_rgb, start.scale)
            hand_path, hand_start = (start, end), i
        hand = None
        if hand_path is not None:
            t = (i - hand_start) / max(hand_frames - 1, 1)
            if t > 1:
                hand_path = None
            else:
                a, b = hand_path
                hand = Hand(
                    (
                        a.center_mm[0] + (b.center_mm[0] - a.center_mm[0]) * t,
                        a.center_mm[1] + (b.center_mm[1] - a.center_mm[1]) * t,
                    ),
                    a.angle_deg + (b.angle_deg - a.angle_deg) * t,
                    a.skin_rgb,
                    a.scale,
                )
        framed = Scene(scene.stacks, hand)
        layout_img, hand_mask = renderer.draw_scene(framed, look)
        occluded = tuple(renderer.occluded_boxes(hand_mask, look.camera))
        # Light flickers a little and noise is fresh, pose and scene stay put.
        jittered = replace(look, gain=look.gain * float(rng.uniform(0.98, 1.02)))
        yield RenderedFrame(renderer.to_frame(layout_img, jittered, rng), framed, occluded, look)


def write_rendered(
    frames: Iterator[RenderedFrame], out: Path, *, seed: int, video: Path | None = None
) -> int:
    """Write each frame as PNG with its truth as JSON beside it (or all frames to one video
    file with a ``.jsonl`` of truths beside it). Returns the number of frames written."""
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    writer: cv2.VideoWriter | None = None
    truths = []
    for i, frame in enumerate(frames):
        truth = {"index": i, "seed": seed} | frame.truth()
        if video is None:
            name = f"frame_{i:05d}.png"
            cv2.imwrite(str(out / name), frame.image)
            truth["frame"] = name
            (out / f"frame_{i:05d}.json").write_text(json.dumps(truth) + "\n")
        else:
            if writer is None:
                h, w = frame.image.shape[:2]
                fourcc = cv2.VideoWriter.fourcc(*"MJPG")
                writer = cv2.VideoWriter(str(video), fourcc, 15.0, (w, h))
                if not writer.isOpened():
                    raise OSError(f"{video}: cannot open a video writer (MJPG)")
            writer.write(frame.image)
            truths.append(json.dumps(truth))
        n += 1
    if writer is not None and video is not None:
        writer.release()
        video.with_suffix(".jsonl").write_text("\n".join(truths) + "\n")
    return n


def chips_for_amount(cfg: CameraConfig, amount: int) -> tuple[int, ...]:
    """The fewest chips that make ``amount`` (largest first, so the big chips sit at the
    bottom of the stack as dealers build them)."""
    values = sorted((c.value for c in cfg.chips), reverse=True)
    out: list[int] = []
    rest = amount
    for v in values:
        n, rest = divmod(rest, v)
        out.extend([v] * n)
    if rest:
        raise ValueError(f"{amount} cannot be made from chips of {sorted(values)}")
    return tuple(out)


def scene_for_wagers(cfg: CameraConfig, wagers: dict[int, int | Decimal]) -> Scene:
    """A scene with each box's wager stacked in its betting circle (a second stack beside the
    first when one would be taller than ``max_stack``)."""
    lay = cfg.layout
    areas = {a.box: a for a in cfg.boxes}
    stacks: dict[int, tuple[Stack, ...]] = {b: () for b in areas}
    for box, amount in wagers.items():
        if box not in areas:
            raise ValueError(f"box {box} is not on the layout (boxes {sorted(areas)})")
        chips = chips_for_amount(cfg, int(amount))
        if not chips:
            continue
        columns = [chips[i : i + lay.max_stack] for i in range(0, len(chips), lay.max_stack)]
        if len(columns) > 2:
            raise ValueError(f"box {box}: {amount} needs more than two stacks of chips")
        cx, cy = areas[box].center_mm
        pitch = lay.chip_diameter_mm + 8
        stacks[box] = tuple(
            Stack((cx + (j - (len(columns) - 1) / 2) * pitch, cy), col)
            for j, col in enumerate(columns)
        )
    return Scene(stacks)


class SyntheticSource:
    """A frame source that photographs a synthetic layout: a fixed camera pose, fresh noise in
    every frame, and whatever scene (or wagers) it is given. It stands in for the camera in
    the demo and in tests, ahead of the same detector code as a real camera."""

    def __init__(
        self, cfg: CameraConfig, *, seed: int = 0, size: tuple[int, int] | None = None
    ) -> None:
        self.name = f"synthetic:{seed}"
        self.cfg = cfg
        self._rng = np.random.default_rng(seed)
        self._renderer = LayoutRenderer(cfg)
        self.look = random_look(self._rng, cfg, size=size)
        self.scene = Scene({a.box: () for a in cfg.boxes})
        self.dark = False  # a covered lens / lights off
        self.dead = False  # no frames at all

    def set_wagers(self, wagers: dict[int, int | Decimal]) -> None:
        self.scene = Scene(scene_for_wagers(self.cfg, wagers).stacks, self.scene.hand)

    def set_hand(self, hand: Hand | None) -> None:
        self.scene = Scene(self.scene.stacks, hand)

    def read(self) -> U8Array | None:
        if self.dead:
            return None
        w, h = self.look.size
        if self.dark:
            return np.zeros((h, w, 3), np.uint8)
        layout_img, _ = self._renderer.draw_scene(self.scene, self.look)
        return self._renderer.to_frame(layout_img, self.look, self._rng)

    def close(self) -> None:
        self.dead = True
