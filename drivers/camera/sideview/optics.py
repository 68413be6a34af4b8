"""From light on the canvas to the bytes a camera sends: lens, blur, sensor, encoder.

In order: the lens resamples the undistorted canvas into the distorted picture and loses light
towards the corners (vignetting); defocus (a Gaussian of the circle of confusion) and motion
blur (a line); the exposure and the white balance; the sensor's shot noise (growing with the
signal) and read noise (growing with the gain); the sRGB tone curve; PNG, or JPEG at the
frame's quality. OpenCV's arrays are BGR; the canvas is RGB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.sideview.camera import Camera

F32 = npt.NDArray[np.float32]
U8 = npt.NDArray[np.uint8]

_LEVELS = 4096


@lru_cache(maxsize=1)
def _tone_lut() -> U8:
    c = np.arange(_LEVELS, dtype=np.float64) / (_LEVELS - 1)
    s = np.where(c <= 0.0031308, c * 12.92, 1.055 * np.power(c, 1 / 2.4) - 0.055)
    return np.asarray(np.clip(s * 255 + 0.5, 0, 255), np.uint8)


@dataclass(frozen=True)
class Optics:
    exposure: float  # scale from radiance to the sensor's full scale
    defocus_px: float  # sigma of the defocus blur (px)
    motion_px: float  # length of the motion streak (px), 0 for none
    motion_deg: float
    vignette: float  # light lost at the picture's corners (share)
    gain: float  # analogue gain: the noise grows with it
    full_well: float  # electrons at full scale at unit gain (shot noise)
    read_noise: float  # of full scale, at unit gain
    jpeg_quality: int  # 0: PNG

    def to_dict(self) -> dict[str, object]:
        return {
            "exposure": round(self.exposure, 4),
            "defocus_px": round(self.defocus_px, 3),
            "motion_px": round(self.motion_px, 3),
            "motion_deg": round(self.motion_deg, 2),
            "vignette": round(self.vignette, 3),
            "gain": round(self.gain, 3),
            "read_noise": round(self.read_noise, 5),
            "format": "png" if self.jpeg_quality == 0 else f"jpeg q{self.jpeg_quality}",
        }


@lru_cache(maxsize=16)
def _maps(cam: Camera) -> tuple[F32, F32, F32]:
    mx, my = cam.lens_maps()
    k = cam.k
    yy, xx = np.mgrid[0 : k.height, 0 : k.width].astype(np.float32)
    r2 = ((xx - k.cx) ** 2 + (yy - k.cy) ** 2) / (k.fx * k.fx)
    falloff = (1.0 / (1.0 + r2)) ** 2  # cos^4 of the angle off the axis
    return mx, my, np.asarray(falloff, np.float32)


def expose(cam: Camera, radiance: F32, optics: Optics, wb: F32, rng: np.random.Generator) -> U8:
    """The BGR picture the camera delivers."""
    mx, my, falloff = _maps(cam)
    img: F32 = np.asarray(
        cv2.remap(
            radiance, mx, my, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ),
        np.float32,
    )
    if optics.defocus_px > 0.05:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), optics.defocus_px), np.float32)
    if optics.motion_px >= 1.0:
        n = math.ceil(optics.motion_px) | 1
        kern = np.zeros((n, n), np.float32)
        c = n // 2
        a = math.radians(optics.motion_deg)
        for s in np.linspace(-optics.motion_px / 2, optics.motion_px / 2, 4 * n):
            kern[round(c + s * math.sin(a)), round(c + s * math.cos(a))] += 1
        img = np.asarray(cv2.filter2D(img, -1, kern / kern.sum()), np.float32)
    vign = (1 - optics.vignette) + optics.vignette * falloff
    scale = wb * np.float32(optics.exposure)
    gains = cv2.merge([vign * scale[0], vign * scale[1], vign * scale[2]])
    img = np.asarray(cv2.multiply(img, gains), np.float32)
    # the sensor: shot noise ~ sqrt(signal), read noise, both in full-scale units
    sigma = img * np.float32(optics.gain / optics.full_well)
    sigma += np.float32((optics.read_noise * optics.gain) ** 2)
    np.sqrt(sigma, out=sigma)
    noise = rng.standard_normal(img.shape, dtype=np.float32)
    noise *= sigma
    img += noise
    img *= np.float32(_LEVELS - 1)
    np.clip(img, 0, _LEVELS - 1, out=img)
    rgb = np.take(_tone_lut(), img.astype(np.uint16))
    return np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), np.uint8)


def encode(bgr: U8, optics: Optics) -> tuple[bytes, str]:
    """The frame's file bytes and suffix."""
    if optics.jpeg_quality:
        ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, optics.jpeg_quality])
        suffix = ".jpg"
    else:
        ok, buf = cv2.imencode(".png", bgr, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        suffix = ".png"
    if not ok:
        raise RuntimeError("OpenCV could not encode the frame")
    return buf.tobytes(), suffix
