"""Light on the felt for one frame: the lamps' irradiance with the frame's soft shadows.

Computed on a 1 px/mm :class:`Grid` over the layout and its margins (and coarsely, unshadowed,
over the room): each lamp's ``power cos / r^2`` times the slow light patches, less the shadows
cast by the chips (each chip's top disc projected from the lamp onto the felt, blurred by its
penumbra, a band of heights at a time) and by the hand and arm; the room's ambient, less what
the stacks' feet and a hovering hand take from it. A point above the felt (a chip's surface)
is in the hand's shadow if the lamp's ray through it meets the felt inside that shadow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.scene import hand as handmod
from drivers.camera.scene.chips import Chip, ChipModel
from drivers.camera.scene.lighting import (
    F32,
    F64,
    Grid,
    Lighting,
    bilinear,
    blurred,
    direct,
    felt_point,
    penumbra_mm,
)
from drivers.camera.scene.sampling import Uneven

_SHIFT = 3  # sub-pixel bits for OpenCV drawing


@dataclass
class FrameLight:
    """One frame's light on the felt."""

    irradiance: F32  # (h, w, 3) on the fine grid
    hand_shadow: list[F32]  # per lamp: the share of it the hand blocks, on the felt


class FeltLight:
    def __init__(
        self, lighting: Lighting, uneven: Uneven, model: ChipModel, fine: Grid, coarse: Grid
    ) -> None:
        self.lighting = lighting
        self.uneven = uneven
        self.model = model
        self.grid = fine
        self.coarse = coarse
        self._direct = [self._lamp_map(fine, i) for i in range(len(lighting.lamps))]
        room = np.zeros((coarse.h, coarse.w, 3), np.float32)
        for i, lamp in enumerate(lighting.lamps):
            room += self._lamp_map(coarse, i)[..., None] * np.array(lamp.colour, np.float32)
        self.room: F32 = room + np.array(lighting.ambient, np.float32)

    def frame(self, chips: list[Chip], hand: handmod.Hand | None) -> FrameLight:
        chip_maps, hand_maps, ambient_left = self._shadow_maps(chips, hand)
        g = self.grid
        e = np.zeros((g.h, g.w, 3), np.float32)
        for lamp, base_map, cs, hs in zip(
            self.lighting.lamps, self._direct, chip_maps, hand_maps, strict=True
        ):
            e += (base_map * (1 - cs) * (1 - hs))[..., None] * np.array(lamp.colour, np.float32)
        e += ambient_left[..., None] * np.array(self.lighting.ambient, np.float32)
        return FrameLight(e, hand_maps)

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
        g = self.grid
        k = 1 << _SHIFT
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
                    _SHIFT,
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
                _SHIFT,
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
        g = self.grid
        k = 1 << _SHIFT

        def onto(p: tuple[float, float, float]) -> tuple[int, int]:
            if lamp is None:
                x, y = p[0], p[1]
            else:
                x, y = felt_point(np.array([p]), lamp)[0]  # type: ignore[arg-type]
            u, v = g.px(x, y)
            return round(float(u) * k), round(float(v) * k)

        for cap in hand.capsules:
            thick = max(1, round(2 * cap.radius * g.ppm))
            cv2.line(canvas, onto(cap.a), onto(cap.b), 1.0, thick, cv2.LINE_AA, _SHIFT)
        palm = hand.palm
        centre = onto(palm.centre)
        ang = math.degrees(math.atan2(palm.axes[0][1], palm.axes[0][0]))
        axes = (round(palm.semi[0] * g.ppm * k), round(palm.semi[1] * g.ppm * k))
        cv2.ellipse(canvas, centre, axes, ang, 0, 360, 1.0, -1, cv2.LINE_AA, _SHIFT)

    def _hand_shadow(self, hand: handmod.Hand, lamp: object) -> F32:
        g = self.grid
        canvas = np.zeros((g.h, g.w), np.float32)
        self._draw_hand(canvas, hand, lamp)
        height = -hand.palm.centre[2]
        return np.clip(blurred(canvas, penumbra_mm(height, lamp) * g.ppm / 2 + 1.0), 0, 1)  # type: ignore[arg-type]

    def visibility(self, points: F64, light: FrameLight) -> list[F64]:
        """Per lamp, the share of it that reaches each point past the hand (1: all of it)."""
        out = []
        for lamp, hm in zip(self.lighting.lamps, light.hand_shadow, strict=True):
            if not hm.any():
                out.append(np.ones(len(points)))
                continue
            fp = felt_point(points, lamp)
            out.append(1.0 - bilinear(hm, self.grid, fp[:, 0], fp[:, 1]).astype(np.float64))
        return out

    def uneven_on(self, points: F64) -> F64:
        # the lamps' patches fall on the chips as on the felt (the room's ambient is even)
        return np.asarray(self.uneven.factor(points[:, 0], points[:, 1]), np.float64) ** 0.8
