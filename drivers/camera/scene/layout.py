"""The printed layout and the table around it, as albedo (linear RGB) rasters in millimetres.

What the camera looks at when no chip is in the way:

- the felt (the config's ``felt`` colour) with the texture of real baize: fine fibre noise, a
  nap that runs along the table, slow blotches, lighter wear where chips are pushed about;
- the screen-printed layout in the config's ``print`` colour: each betting circle at its
  ``center_mm`` and ``radius_mm``, its box number, two arcs and the table's texts; ink on felt
  takes the fibre texture too;
- the four QR fiducials, encoded by ``segno`` (not OpenCV's encoder: a detector must accept any
  conforming printer's symbols) and printed in black ink on a printed white square that holds
  the four-module quiet zone, upright as the camera sees the layout, at the config's centre and
  size (the size of the module area);
- around the layout: more felt, the padded rail on the players' side, the casino carpet beyond,
  and on the dealer's side the wooden edge and the dealer's chip float (chips standing on edge);
- per frame, playing cards dealt in front of some boxes (white, and they are not chips).

Colours in the config are as the camera sees them under the table's lights, so they are used
as albedo under the lighting that :mod:`lighting` normalises to 1 at the layout's centre.
Everything is drawn twice from the same description: finely (``INNER_PPM``) over the layout and
its margins, coarsely over the whole room, with a half-resolution copy of the fine raster for
pixels that cover more than one of its texels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt
import segno

from drivers.camera.config import CameraConfig
from drivers.camera.scene.lighting import F32, F64, Grid

U8 = npt.NDArray[np.uint8]

INNER_PPM = 2.0  # texels per mm over the layout
OUTER_PPM = 0.25
QUIET_MODULES = 4  # the QR standard's quiet zone
_SHIFT = 4  # sub-pixel bits for OpenCV drawing
_RNG_CLOTH = 0x5EED


def srgb_to_linear(rgb: tuple[int, int, int] | F64) -> F64:
    c: F64 = np.asarray(rgb, np.float64) / 255.0
    return np.asarray(np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4), np.float64)


def linear_to_srgb(lin: F32 | F64) -> F32:
    c = np.clip(np.asarray(lin, np.float32), 0.0, 1.0)
    out = np.where(c <= 0.0031308, c * 12.92, np.power(c, 1 / 2.4) * 1.055 - 0.055)
    return np.asarray(out * 255.0, np.float32)


def hex_rgb(text: str) -> tuple[int, int, int]:
    return (int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16))


_QR_WHITE = srgb_to_linear(hex_rgb("#eeeee8"))
_QR_BLACK = srgb_to_linear(hex_rgb("#151517"))
_RAIL = srgb_to_linear(hex_rgb("#2b1d17"))
_RAIL_SHINE = srgb_to_linear(hex_rgb("#5a4336"))
_WOOD = srgb_to_linear(hex_rgb("#5b3621"))
_CARPET = (srgb_to_linear(hex_rgb("#3a1430")), srgb_to_linear(hex_rgb("#6a4a26")))
_TRAY = srgb_to_linear(hex_rgb("#2c2c30"))
_CARD_SRGB = (243, 241, 234)
_CARD_RED_SRGB = (196, 30, 42)
_CARD_BLACK_SRGB = (24, 24, 26)

CARD_MM = (63.0, 88.0)


@dataclass(frozen=True)
class Card:
    centre: tuple[float, float]
    angle_deg: float
    rank: str  # "A", "2".."10", "J", "Q", "K"
    red: bool


@dataclass(frozen=True)
class TableShape:
    """Where the felt ends: an arc on the players' side, a straight edge on the dealer's."""

    cx: float
    dealer_y: float  # the dealer's edge of the felt
    ax: float  # semi-axes of the felt's arc
    ay: float
    rail_mm: float

    @staticmethod
    def around(width_mm: float, height_mm: float) -> TableShape:
        return TableShape(width_mm / 2, height_mm + 70, width_mm / 2 + 320, height_mm + 300, 120)


def qr_matrix(code: str) -> npt.NDArray[np.bool_]:
    """The QR symbol for ``code`` as segno encodes it (True: dark module), without quiet zone."""
    qr = segno.make_qr(code)
    return np.array([[bool(m) for m in row] for row in qr.matrix], dtype=bool)


class TableArt:
    """The albedo rasters of one table (built once per config; the cloth is seeded)."""

    def __init__(self, cfg: CameraConfig, cloth_seed: int = 0) -> None:
        self.cfg = cfg
        lay = cfg.layout
        self.shape = TableShape.around(lay.width_mm, lay.height_mm)
        self.felt = srgb_to_linear(lay.felt)
        self.ink = srgb_to_linear(lay.print_colour)
        self.qr = {f.code: qr_matrix(f.code) for f in cfg.fiducials}
        self.inner_grid = Grid.covering(
            -160.0, -160.0, lay.width_mm + 160.0, lay.height_mm + 340.0, INNER_PPM
        )
        self.outer_grid = Grid.covering(
            -2200.0, -2200.0, lay.width_mm + 2200.0, lay.height_mm + 1600.0, OUTER_PPM
        )
        rng = np.random.default_rng([_RNG_CLOTH, cloth_seed])
        self.inner = self._draw(self.inner_grid, rng)
        self.outer = self._draw(self.outer_grid, rng)
        self.inner_half = np.asarray(
            cv2.resize(self.inner, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA), np.float32
        )

    # -- drawing ---------------------------------------------------------------------------

    def _draw(self, grid: Grid, rng: np.random.Generator) -> F32:
        gx, gy = (a.astype(np.float32) for a in grid.centres())
        s = self.shape
        # the room: a patterned carpet far below, seen past the rail
        pattern = np.sin(gx / 70 + np.sin(gy / 110)) * np.sin(gy / 70 + np.sin(gx / 130))
        mix = np.clip(0.5 + 0.8 * pattern, 0, 1)[..., None]
        carpet = _CARPET[0].astype(np.float32) * 0.35
        albedo = carpet + mix * (_CARPET[1].astype(np.float32) * 0.35 - carpet)
        ex = (gx - s.cx) / s.ax
        ey = (gy - s.dealer_y) / s.ay
        radius = np.sqrt(ex * ex + ey * ey)  # 1 on the felt's edge
        across = (radius - 1) / (s.rail_mm / s.ay)  # 0 at the felt's edge, 1 at the rail's
        above_edge = gy <= s.dealer_y
        rail = (above_edge & (across > 0) & (across <= 1))[..., None]
        felt = (above_edge & (radius <= 1))[..., None]
        # the rail's padded leather: rounded, so lighter along its crown
        crown = (np.clip(1 - np.abs(across - 0.45) / 0.55, 0, 1) ** 2)[..., None]
        leather = _RAIL + crown * (_RAIL_SHINE - _RAIL)
        albedo = np.where(rail, leather, albedo)
        dealer_side = ((gy > s.dealer_y) & (np.abs(gx - s.cx) < s.ax + s.rail_mm))[..., None]
        wood = _WOOD * (1 + 0.08 * np.sin(gx / 3.0 + 0.7))[..., None]
        albedo = np.where(dealer_side, wood, albedo)
        cloth = self._cloth(grid, rng)
        out: F32 = np.asarray(np.where(felt, self.felt * cloth[..., None], albedo), np.float32)
        self._draw_tray(out, grid, gx, gy)
        ink = self._print_mask(grid)
        fibre = 1.0 + 0.5 * (cloth - 1.0)
        out = np.asarray(
            out * (1 - ink[..., None]) + self.ink * (ink * fibre)[..., None], np.float32
        )
        for fid in self.cfg.fiducials:
            self._draw_qr(out, grid, fid.center_mm, fid.size_mm, self.qr[fid.code])
        return out

    def _cloth(self, grid: Grid, rng: np.random.Generator) -> F32:
        """Multiplicative baize texture, about 1 on average."""
        h, w = grid.h, grid.w
        texel_mm = 1.0 / grid.ppm
        fine = cv2.GaussianBlur(
            rng.normal(0.0, 1.0, (h, w)).astype(np.float32), (0, 0), max(0.35 / texel_mm, 0.3)
        )
        nap = cv2.GaussianBlur(
            rng.normal(0.0, 1.0, (h, w)).astype(np.float32),
            (0, 0),
            sigmaX=max(6.0 / texel_mm, 0.3),
            sigmaY=0.4,
        )
        coarse = rng.normal(0.0, 1.0, (max(2, h // 40 + 2), max(2, w // 40 + 2)))
        blotch = cv2.resize(coarse.astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
        detail = 1.0 if texel_mm <= 1.0 else 0.3  # a coarse texel averages the fibres out
        out = 1.0 + detail * (0.07 * fine + 0.5 * nap) + 0.035 * blotch
        # chips pushed about wear the felt a little lighter inside the boxes
        for box in self.cfg.boxes:
            reach = 1.6 * box.radius_mm
            j0, i0 = (
                max(0, int(a)) for a in grid.px(box.center_mm[0] - reach, box.center_mm[1] - reach)
            )
            j1, i1 = (
                int(a) + 1 for a in grid.px(box.center_mm[0] + reach, box.center_mm[1] + reach)
            )
            j1, i1 = min(j1, w), min(i1, h)
            if j1 <= j0 or i1 <= i0:
                continue
            xs = grid.x0 + (np.arange(j0, j1) + 0.5) / grid.ppm - box.center_mm[0]
            ys = grid.y0 + (np.arange(i0, i1) + 0.5) / grid.ppm - box.center_mm[1]
            d2 = ys[:, None] ** 2 + xs[None, :] ** 2
            out[i0:i1, j0:j1] += 0.05 * np.exp(-d2 / (2 * (0.45 * box.radius_mm) ** 2))
        return np.asarray(out, np.float32)

    def _fixed(self, grid: Grid, x: float, y: float) -> tuple[int, int]:
        u, v = grid.px(x, y)
        k = 1 << _SHIFT
        return round(float(u) * k), round(float(v) * k)

    def _print_mask(self, grid: Grid) -> F32:
        mask = np.zeros((grid.h, grid.w), np.uint8)
        k = 1 << _SHIFT
        lay = self.cfg.layout
        for box in self.cfg.boxes:
            centre = self._fixed(grid, *box.center_mm)
            for radius, width in ((box.radius_mm, 3.5), (box.radius_mm - 6.0, 1.2)):
                thick = max(1, round(width * grid.ppm))
                cv2.circle(
                    mask, centre, round(radius * grid.ppm * k), 255, thick, cv2.LINE_AA, _SHIFT
                )
            below = (box.center_mm[0], box.center_mm[1] + box.radius_mm + 22)
            self._text(mask, grid, str(box.box), below, 16.0, 2.2)
        # two arcs about the dealer, between the boxes and the dealer's edge
        if self.cfg.boxes:
            xs = [b.center_mm[0] for b in self.cfg.boxes]
            cx = (min(xs) + max(xs)) / 2
            cy = lay.height_mm * 1.85
            top = min(b.center_mm[1] for b in self.cfg.boxes)
            base = cy - top
            for dr, width in ((-118.0, 2.0), (-128.0, 1.0)):
                r = base + dr
                thick = max(1, round(width * grid.ppm))
                cv2.ellipse(
                    mask,
                    self._fixed(grid, cx, cy),
                    (round(r * grid.ppm * k), round(r * grid.ppm * k)),
                    0,
                    -150,
                    -30,
                    255,
                    thick,
                    cv2.LINE_AA,
                    _SHIFT,
                )
        mid = lay.width_mm / 2
        self._text(mask, grid, "PONTOON", (mid, lay.height_mm * 0.13), 34.0, 3.2)
        self._text(
            mask, grid, "FIVE CARD TRICK PAYS 2 TO 1", (mid, lay.height_mm * 0.82), 13.0, 1.6
        )
        self._text(
            mask, grid, "DEALER DRAWS TO 16 - STANDS ON 17", (mid, lay.height_mm * 0.9), 11.0, 1.4
        )
        return mask.astype(np.float32) / 255.0

    def _text(
        self,
        mask: U8,
        grid: Grid,
        text: str,
        centre: tuple[float, float],
        height_mm: float,
        stroke_mm: float,
    ) -> None:
        font = cv2.FONT_HERSHEY_DUPLEX
        (tw, th), _ = cv2.getTextSize(text, font, 1.0, 1)
        scale = height_mm * grid.ppm / th
        thick = max(1, round(stroke_mm * grid.ppm))
        u, v = grid.px(centre[0], centre[1])
        origin = (round(float(u) - tw * scale / 2), round(float(v) + th * scale / 2))
        cv2.putText(mask, text, origin, font, scale, 255, thick, cv2.LINE_AA)

    def _draw_qr(
        self,
        albedo: F32,
        grid: Grid,
        centre: tuple[float, float],
        size_mm: float,
        matrix: npt.NDArray[np.bool_],
    ) -> None:
        """Print the symbol with exact area coverage (4 x 4 samples per texel)."""
        n = matrix.shape[0]
        module = size_mm / n
        half = size_mm / 2 + QUIET_MODULES * module
        x0, y0 = centre[0] - half, centre[1] - half
        j0 = max(0, math.floor((x0 - grid.x0) * grid.ppm))
        i0 = max(0, math.floor((y0 - grid.y0) * grid.ppm))
        j1 = min(grid.w, math.ceil((x0 + 2 * half - grid.x0) * grid.ppm))
        i1 = min(grid.h, math.ceil((y0 + 2 * half - grid.y0) * grid.ppm))
        if j1 <= j0 or i1 <= i0:
            return
        sub = (np.arange(4) + 0.5) / 4
        xs = grid.x0 + (np.arange(j0, j1)[:, None] + sub).ravel() / grid.ppm
        ys = grid.y0 + (np.arange(i0, i1)[:, None] + sub).ravel() / grid.ppm
        sx, sy = np.meshgrid(xs, ys)
        # dark modules spread a little as ink does (dot gain: 4% of a module each side)
        mx = (sx - (centre[0] - size_mm / 2)) / module
        my = (sy - (centre[1] - size_mm / 2)) / module
        paper = (np.abs(sx - centre[0]) <= half) & (np.abs(sy - centre[1]) <= half)
        dark = np.zeros_like(paper)
        for dx, dy in ((0.04, 0.0), (-0.04, 0.0), (0.0, 0.04), (0.0, -0.04)):
            ix, iy = np.floor(mx + dx).astype(int), np.floor(my + dy).astype(int)
            ok = (ix >= 0) & (iy >= 0) & (ix < n) & (iy < n)
            dark |= ok & matrix[np.clip(iy, 0, n - 1), np.clip(ix, 0, n - 1)]
        h, w = i1 - i0, j1 - j0
        cover_paper = paper.reshape(h, 4, w, 4).mean(axis=(1, 3))[..., None]
        cover_dark = dark.reshape(h, 4, w, 4).mean(axis=(1, 3))[..., None]
        region = albedo[i0:i1, j0:j1]
        printed = _QR_WHITE * (1 - cover_dark) + _QR_BLACK * cover_dark
        region[:] = region * (1 - cover_paper) + printed * cover_paper

    def _draw_tray(self, albedo: F32, grid: Grid, gx: F64 | F32, gy: F64 | F32) -> None:
        """The dealer's chip float beyond the dealer's edge: chips on edge in round channels."""
        s = self.shape
        chips = self.cfg.chips
        pitch = 42.0
        width = pitch * max(len(chips), 1) * 2
        x0, y0, y1 = s.cx - width / 2, s.dealer_y + 45, s.dealer_y + 230
        j0, i0 = (max(0, int(a)) for a in grid.px(x0 - 10, y0 - 10))
        j1, i1 = (int(a) + 1 for a in grid.px(x0 + width + 10, y1 + 10))
        j1, i1 = min(j1, grid.w), min(i1, grid.h)
        if j1 <= j0 or i1 <= i0:
            return
        px, py = gx[i0:i1, j0:j1], gy[i0:i1, j0:j1]
        region = albedo[i0:i1, j0:j1]
        region[:] = _TRAY
        channel = np.floor((px - x0) / pitch).astype(int)
        across = ((px - x0) % pitch) / 39.0  # 0..1 across a channel's chips
        inside = (px >= x0) & (px < x0 + width) & (across < 1.0) & (py >= y0) & (py <= y1)
        # a chip on edge shows a band 3.3 mm deep, darker at the seams; the tube's walls shade it
        phase = ((py - y0) % 3.3) / 3.3
        seam = 0.5 + 0.5 * np.sin(np.pi * phase)
        tube = np.clip(np.sin(np.pi * np.clip(across, 0, 1)), 0, 1) ** 0.7
        for c in range(int(width // pitch)):
            chip = chips[(c // 2) % len(chips)]
            sel = inside & (channel == c)
            colour = srgb_to_linear(chip.colour).astype(np.float32) * 0.45
            region[sel] = colour * (seam * tube)[sel][:, None]

    # -- per frame -------------------------------------------------------------------------

    def with_cards(self, cards: list[Card]) -> tuple[F32, F32]:
        """The fine raster and its half-resolution copy with ``cards`` lying on the felt."""
        if not cards:
            return self.inner, self.inner_half
        inner = self.inner.copy()
        grid = self.inner_grid
        for card in cards:
            self._draw_card(inner, grid, card)
        half = cv2.resize(inner, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        return inner, np.asarray(half, np.float32)

    def _draw_card(self, albedo: F32, grid: Grid, card: Card) -> None:
        w, h = CARD_MM
        face, alpha = _card_face(card.rank, card.red, grid.ppm)
        t = math.radians(card.angle_deg)
        c, s = math.cos(t), math.sin(t)
        u0, v0 = grid.px(card.centre[0], card.centre[1])
        reach = math.hypot(w, h) / 2 * grid.ppm + 2
        j0, i0 = max(0, int(float(u0) - reach)), max(0, int(float(v0) - reach))
        j1, i1 = min(grid.w, int(float(u0) + reach) + 1), min(grid.h, int(float(v0) + reach) + 1)
        if j1 <= j0 or i1 <= i0:
            return
        fw, fh = face.shape[1] / 2, face.shape[0] / 2
        # face pixel (a, b) lands at patch pixel (centre - corner) + R (a - fw, b - fh)
        m = np.array(
            [
                [c, -s, float(u0) - j0 - (c * fw - s * fh)],
                [s, c, float(v0) - i0 - (s * fw + c * fh)],
            ]
        )
        size = (j1 - j0, i1 - i0)
        placed = cv2.warpAffine(face, m, size, flags=cv2.INTER_LINEAR)
        cover = cv2.warpAffine(alpha, m, size, flags=cv2.INTER_LINEAR)[..., None]
        patch = albedo[i0:i1, j0:j1]
        patch[:] = patch * (1 - cover) + placed * cover


@lru_cache(maxsize=64)
def _card_face(rank: str, red: bool, ppm: float) -> tuple[F32, F32]:
    """A card's face (linear albedo) and its outline at ``ppm`` texels per mm."""
    w, h = CARD_MM
    fine = 8.0  # drawn finely, then shrunk
    face8 = np.empty((round(h * fine), round(w * fine), 3), np.uint8)
    face8[:] = _CARD_SRGB
    alpha8 = np.zeros(face8.shape[:2], np.uint8)
    r = round(3.0 * fine)
    fh8, fw8 = face8.shape[:2]
    cv2.rectangle(alpha8, (r, 0), (fw8 - r, fh8), 255, -1)
    cv2.rectangle(alpha8, (0, r), (fw8, fh8 - r), 255, -1)
    for cx, cy in ((r, r), (fw8 - r, r), (r, fh8 - r), (fw8 - r, fh8 - r)):
        cv2.circle(alpha8, (cx, cy), r, 255, -1, cv2.LINE_AA)
    ink = _CARD_RED_SRGB if red else _CARD_BLACK_SRGB
    font = cv2.FONT_HERSHEY_DUPLEX
    cv2.putText(face8, rank, (round(3 * fine), round(11 * fine)), font, 2.4, ink, 5, cv2.LINE_AA)
    ch, cw = round(13 * fine), round(16 * fine)
    face8[fh8 - ch :, fw8 - cw :] = face8[:ch, :cw][::-1, ::-1]  # the index, turned, below
    pip_r = round(4.5 * fine)
    for py in (0.3, 0.5, 0.7):
        for px in (0.36, 0.64):
            cv2.circle(face8, (round(px * fw8), round(py * fh8)), pip_r, ink, -1, cv2.LINE_AA)
    linear = np.asarray(srgb_to_linear(face8.astype(np.float64)), np.float32)
    k = ppm / fine
    face = np.asarray(
        cv2.resize(linear, None, fx=k, fy=k, interpolation=cv2.INTER_AREA), np.float32
    )
    size = (face.shape[1], face.shape[0])
    alpha = cv2.resize(alpha8.astype(np.float32) / 255.0, size, interpolation=cv2.INTER_AREA)
    return face, np.asarray(alpha, np.float32)
