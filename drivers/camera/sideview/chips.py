"""How a chip looks: its edge pattern (rolled out flat) and its face, as linear-light albedo.

A chip's edge is ``repeats`` copies of its denomination's mark round the circumference, on the
base colour: *inserts* (blocks across the whole edge, one colour or split between several),
*stripes* (three thin bars) or *spots* (rounded blocks on the middle of the edge). Where two
chips meet, each chip's edge is rounded off over a quarter of a millimetre, so a stack shows a
thin dark seam between chips. The face carries the printed inlay, a ring of the mark's first
colour and the edge marks carried over the rim.

Textures are made once per design and thickness (:func:`edge_texture` is cached).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from drivers.camera.sideview.table import ChipDesign

F32 = npt.NDArray[np.float32]

EDGE_ANGLES = 1440  # texels round the edge
EDGE_ROWS = 64  # texels across the thickness
SEAM_MM = 0.28  # the rounded-off rim at each face


def to_linear(rgb: tuple[int, int, int]) -> F32:
    c = np.asarray(rgb, np.float32) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)


def to_srgb8(lin: F32) -> npt.NDArray[np.uint8]:
    c = np.clip(lin, 0.0, 1.0)
    s = np.where(c <= 0.0031308, c * 12.92, 1.055 * np.power(c, 1 / 2.4) - 0.055)
    return np.asarray(np.clip(s * 255.0 + 0.5, 0, 255), np.uint8)


@lru_cache(maxsize=64)
def edge_texture(design: ChipDesign, thickness_mm: float) -> F32:
    """The edge rolled out: (EDGE_ANGLES, EDGE_ROWS, 3) linear albedo, row 0 at the bottom."""
    base = to_linear(design.base)
    marks = [to_linear(m) for m in design.marks]
    tex = np.empty((EDGE_ANGLES, EDGE_ROWS, 3), np.float32)
    tex[:] = base
    period = EDGE_ANGLES / design.repeats
    a = np.arange(EDGE_ANGLES, dtype=np.float32)
    phase = (a % period) / period  # 0..1 within each repeat
    rep = (a // period).astype(int)
    s = (np.arange(EDGE_ROWS, dtype=np.float32) + 0.5) / EDGE_ROWS  # across the edge
    if design.style == "inserts":
        width = 0.34
        inside = phase < width
        part = np.minimum((phase / width * len(marks)).astype(int), len(marks) - 1)
        for i, m in enumerate(marks):
            tex[inside & (part == i), :, :] = m
    elif design.style == "stripes":
        bar = 0.075
        for j in range(3):
            inside = (phase >= j * 2 * bar) & (phase < j * 2 * bar + bar)
            colour = marks[j % len(marks)]
            tex[inside, :, :] = colour
    else:  # spots
        width = 0.26
        centre = 0.5
        du = np.abs(phase - centre) / (width / 2)  # 0 at the spot's middle, 1 at its side
        dv = np.abs(s - 0.5) / 0.36
        # a rounded rectangle: the corners cut as a superellipse
        inside = (du[:, None] ** 4 + dv[None, :] ** 4) <= 1.0
        colour = np.stack([marks[r % len(marks)] for r in rep])  # alternating colours
        tex = np.where(inside[:, :, None], colour[:, None, :], tex).astype(np.float32)
    # the rounded rims: darker, as they face away from the light and into the next chip
    rim = np.minimum(s, 1 - s) * thickness_mm / SEAM_MM  # 0 at the face, 1 where the rim ends
    shade = 0.22 + 0.78 * np.clip(rim, 0, 1) ** 0.7
    tex *= shade[None, :, None].astype(np.float32)
    return tex


@lru_cache(maxsize=64)
def face_colours(design: ChipDesign) -> tuple[F32, F32, F32]:
    """(base, inlay, ring) linear albedo of the face."""
    return (to_linear(design.base), to_linear(design.inlay), to_linear(design.marks[0]))
