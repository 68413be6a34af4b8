"""Light over the table: lamps as small area lights, the room's ambient, the felt's bounce.

Irradiance is computed from the physics of a point-like lamp (power times the cosine of the
angle of incidence over the square of the distance), so a lamp off the layout's centre lights it
unevenly by itself, and a chip's side (whose normal is horizontal) gets far less light than its
face (whose normal points at the lamps): ``cos`` of the lamp's angle above the horizon against
``sin``. The room's ambient comes from above (a vertical side sees half of it); the blue felt
bounces a little of its light up onto the chips' sides and the underside of a hand.

A lamp's colour is its colour temperature seen through the camera's own colour filters: Planck's
law integrated against three Gaussian sensitivity curves, normalised so that a 6500 K source is
neutral and every lamp has unit luminance. All quantities are linear camera RGB.

Shadows are soft: each lamp has a radius, and an occluder ``h`` mm above the felt casts a
penumbra of about ``radius * h / (lamp height - h)``. Shadow maps live on a :class:`Grid` in
layout millimetres; :func:`felt_point` finds where a lamp's ray through a point meets the felt,
which is where that point's shadow is looked up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]

_SENSOR = ((600.0, 38.0), (540.0, 40.0), (455.0, 30.0))  # camera R, G, B: peak nm, width nm
_LUMA = np.array([0.2126, 0.7152, 0.0722])


def _planck(wavelength_nm: F64, kelvin: float) -> F64:
    lam = wavelength_nm * 1e-9
    h, c, k = 6.62607015e-34, 2.99792458e8, 1.380649e-23
    return (2 * h * c * c / lam**5) / np.expm1(h * c / (lam * k * kelvin))


def _sensor_rgb(kelvin: float) -> F64:
    lam = np.linspace(380.0, 720.0, 341)
    spectrum = _planck(lam, kelvin)
    return np.array([np.sum(spectrum * np.exp(-0.5 * ((lam - p) / w) ** 2)) for p, w in _SENSOR])


def lamp_colour(kelvin: float) -> tuple[float, float, float]:
    """Linear camera RGB of a ``kelvin`` black body, neutral at 6500 K, unit luminance."""
    rgb = _sensor_rgb(kelvin) / _sensor_rgb(6500.0)
    rgb /= float(rgb @ _LUMA)
    return (float(rgb[0]), float(rgb[1]), float(rgb[2]))


def luminance(rgb: F64 | F32) -> F64:
    return np.asarray(np.asarray(rgb, np.float64) @ _LUMA, np.float64)


@dataclass(frozen=True)
class Lamp:
    position: tuple[float, float, float]  # world mm (z = -height above the felt)
    power: float  # irradiance x distance^2 (unit: makes the layout's centre about 1)
    colour: tuple[float, float, float]  # linear camera RGB, unit luminance
    kelvin: float
    radius_mm: float  # size of the lamp's face: sets the penumbra of its shadows


@dataclass(frozen=True)
class Lighting:
    lamps: tuple[Lamp, ...]
    ambient: tuple[float, float, float]  # irradiance from the room, on a face looking up
    bounce: tuple[float, float, float]  # irradiance a face looking down gets from the felt


@dataclass(frozen=True)
class Grid:
    """A raster over the felt: pixel ``(j, i)`` covers ``x0 + j/ppm ... x0 + (j+1)/ppm`` mm."""

    x0: float
    y0: float
    ppm: float  # pixels per millimetre
    w: int
    h: int

    @staticmethod
    def covering(x0: float, y0: float, x1: float, y1: float, ppm: float) -> Grid:
        return Grid(x0, y0, ppm, math.ceil((x1 - x0) * ppm), math.ceil((y1 - y0) * ppm))

    def px(self, x: F64 | F32 | float, y: F64 | F32 | float) -> tuple[F64, F64]:
        """Fractional pixel coordinates (centre convention) of world millimetres."""
        return (
            np.asarray((np.asarray(x) - self.x0) * self.ppm - 0.5, np.float64),
            np.asarray((np.asarray(y) - self.y0) * self.ppm - 0.5, np.float64),
        )

    def centres(self) -> tuple[F64, F64]:
        xs = self.x0 + (np.arange(self.w) + 0.5) / self.ppm
        ys = self.y0 + (np.arange(self.h) + 0.5) / self.ppm
        gx, gy = np.meshgrid(xs, ys)
        return gx, gy

    def contains(self, x: F64, y: F64) -> npt.NDArray[np.bool_]:
        return (
            (x >= self.x0)
            & (y >= self.y0)
            & (x < self.x0 + self.w / self.ppm)
            & (y < self.y0 + self.h / self.ppm)
        )


def felt_point(points: F64, lamp: Lamp) -> F64:
    """Where the ray from ``lamp`` through each point ``(N, 3)`` reaches the felt: ``(N, 2)``."""
    lamp_pos = np.array(lamp.position)
    d = points - lamp_pos
    s = -lamp_pos[2] / np.where(np.abs(d[:, 2]) > 1e-9, d[:, 2], 1e-9)
    return np.asarray(lamp_pos[:2] + s[:, None] * d[:, :2], np.float64)


def penumbra_mm(height_mm: float, lamp: Lamp) -> float:
    lamp_height = -lamp.position[2]
    return lamp.radius_mm * max(height_mm, 0.0) / max(lamp_height - height_mm, 1.0)


def direct(points: F64, normals: F64, lamp: Lamp) -> tuple[F64, F64, F64]:
    """Per point: the lamp's irradiance scale (power cos / r^2, no colour), the unit direction
    to the lamp ``(N, 3)`` and the distance."""
    to_lamp = np.array(lamp.position) - points
    dist = np.linalg.norm(to_lamp, axis=1)
    omega = to_lamp / dist[:, None]
    cos = np.clip(np.einsum("nk,nk->n", normals, omega), 0.0, None)
    return lamp.power * cos / (dist * dist), omega, dist


def sky(normals: F64, lighting: Lighting) -> F64:
    """Ambient and felt bounce on surfaces of these normals ``(N, 3)``: ``(N, 3)`` RGB."""
    up = -normals[:, 2]
    return np.outer((1 + up) / 2, lighting.ambient) + np.outer((1 - up) / 2, lighting.bounce)


def blurred(mask: F32, sigma_px: float) -> F32:
    """Gaussian blur; a wide one is done on a reduced copy (the result is smooth anyway)."""
    if sigma_px < 0.3:
        return mask
    if sigma_px <= 4.0:
        return np.asarray(cv2.GaussianBlur(mask, (0, 0), sigma_px), np.float32)
    f = int(sigma_px // 2)
    h, w = mask.shape[:2]
    small = cv2.resize(mask, (max(1, w // f), max(1, h // f)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma_px / f)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)


# cv2.remap takes maps of fewer than 32,767 rows: longer lists of points go in slices.
_REMAP_ROWS = 32_000


def remap_points(image: F32, u: F64, v: F64, border: int, value: float = 0.0) -> F32:
    """``image`` sampled bilinearly at pixel points ``u``, ``v`` (any shape), flattened."""
    us = u.reshape(-1).astype(np.float32)
    vs = v.reshape(-1).astype(np.float32)
    parts = [
        cv2.remap(
            image,
            us[i : i + _REMAP_ROWS, None],
            vs[i : i + _REMAP_ROWS, None],
            cv2.INTER_LINEAR,
            borderMode=border,
            borderValue=value,
        ).reshape(-1, *image.shape[2:])
        for i in range(0, max(len(us), 1), _REMAP_ROWS)
    ]
    return np.asarray(np.concatenate(parts)[: len(us)], np.float32)


def bilinear(image: F32, grid: Grid, x: F64, y: F64, outside: float = 0.0) -> F32:
    """``image`` (on ``grid``, one or more channels) at world points, bilinearly."""
    u, v = grid.px(x, y)
    out = remap_points(image, u, v, cv2.BORDER_CONSTANT, outside)
    return out.reshape(*u.shape, *image.shape[2:])
