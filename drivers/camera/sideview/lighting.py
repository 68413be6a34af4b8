"""The table's lights: lamps as colour temperatures, and the camera's white balance.

A lamp's colour is the black body's at its temperature, taken through the CIE 1931 standard
observer (the analytic multi-lobe fit of the colour-matching functions by Wyman, Sloan and
Shirley, 2013) into linear sRGB, scaled to unit luminance. A camera's automatic white balance
corrects most of a lamp's cast, not all of it: warm light stays a little warm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

_XYZ_TO_SRGB = np.array(
    [[3.2406, -1.5372, -0.4986], [-0.9689, 1.8758, 0.0415], [0.0557, -0.2040, 1.0570]]
)


def _lobe(lam: F64, mu: float, s1: float, s2: float) -> F64:
    s = np.where(lam < mu, s1, s2)
    return np.asarray(np.exp(-0.5 * ((lam - mu) / s) ** 2), np.float64)


@lru_cache(maxsize=256)
def kelvin_rgb(kelvin: float) -> tuple[float, float, float]:
    """Linear sRGB of a black body at ``kelvin``, at unit luminance (Y = 1)."""
    lam = np.arange(380.0, 781.0, 5.0)
    x = 1.056 * _lobe(lam, 599.8, 37.9, 31.0) + 0.362 * _lobe(lam, 442.0, 16.0, 26.7)
    x -= 0.065 * _lobe(lam, 501.1, 20.4, 26.2)
    y = 0.821 * _lobe(lam, 568.8, 46.9, 40.5) + 0.286 * _lobe(lam, 530.9, 16.3, 31.1)
    z = 1.217 * _lobe(lam, 437.0, 11.8, 36.0) + 0.681 * _lobe(lam, 459.0, 26.0, 13.8)
    m = lam * 1e-9
    planck = 1.0 / (m**5 * (np.exp(0.014388 / (m * kelvin)) - 1.0))
    xyz = np.array([np.sum(planck * x), np.sum(planck * y), np.sum(planck * z)])
    xyz /= xyz[1]
    rgb = np.maximum(_XYZ_TO_SRGB @ xyz, 0.02)
    lum = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    rgb = rgb / lum
    return (float(rgb[0]), float(rgb[1]), float(rgb[2]))


@dataclass(frozen=True)
class Lamp:
    azimuth_deg: float  # where the light comes from, seen from the table (0 = from the players)
    elevation_deg: float  # above the cloth
    kelvin: float
    intensity: float  # irradiance on a surface facing it, relative
    spread_deg: float  # the lamp's angular radius (soft shadows)

    def direction(self) -> F64:
        """Unit vector from the table towards the lamp."""
        a, e = math.radians(self.azimuth_deg), math.radians(self.elevation_deg)
        return np.array([math.sin(a) * math.cos(e), math.cos(a) * math.cos(e), math.sin(e)])

    def colour(self) -> F32:
        return np.asarray(kelvin_rgb(self.kelvin), np.float32) * np.float32(self.intensity)


@dataclass(frozen=True)
class Lighting:
    key: Lamp  # casts the shadows
    fill: Lamp | None  # a second lamp (its own colour), no shadows
    ambient: float  # light from the room, relative
    ambient_kelvin: float
    uneven: float  # slow bright and dark patches on the cloth (reflectors, fittings)
    wb_correction: float  # share of the lamps' cast the camera's white balance removes
    wb_drift: tuple[float, float]  # red and blue gains off by this factor

    def ambient_colour(self) -> F32:
        return np.asarray(kelvin_rgb(self.ambient_kelvin), np.float32) * np.float32(self.ambient)

    def white_balance(self) -> F32:
        """Per-channel gains the camera applies."""
        k = np.asarray(kelvin_rgb(self.key.kelvin), np.float64)
        if self.fill is not None:
            k = 0.6 * k + 0.4 * np.asarray(kelvin_rgb(self.fill.kelvin))
        gains = (1.0 / k) ** self.wb_correction
        gains = gains / (0.2126 * gains[0] + 0.7152 * gains[1] + 0.0722 * gains[2])
        gains[0] *= self.wb_drift[0]
        gains[2] *= self.wb_drift[1]
        return np.asarray(gains, np.float32)

    def to_dict(self) -> dict[str, object]:
        def lamp(x: Lamp) -> dict[str, float]:
            return {
                "azimuth_deg": round(x.azimuth_deg, 2),
                "elevation_deg": round(x.elevation_deg, 2),
                "kelvin": round(x.kelvin),
                "intensity": round(x.intensity, 3),
                "spread_deg": round(x.spread_deg, 2),
            }

        return {
            "key": lamp(self.key),
            "fill": None if self.fill is None else lamp(self.fill),
            "ambient": round(self.ambient, 3),
            "uneven": round(self.uneven, 3),
            "wb_correction": round(self.wb_correction, 3),
            "wb_drift": [round(v, 4) for v in self.wb_drift],
        }
