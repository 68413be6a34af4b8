"""From the light reaching the lens to the bytes of a frame: optics, sensor, processing, codec.

In order, as in a camera:

1. **Vignetting**: the natural ``cos^4`` fall-off away from the axis, partly corrected.
2. **Defocus**: a pillbox blur whose radius (the circle of confusion) grows with the distance
   from the focused depth, ``c = c0 + k |1 - z_focus / z|`` pixels, blended per pixel between a
   few precomputed radii.
3. **Motion blur**: the camera shaking during the exposure, a line kernel of some length and
   angle over the whole frame (a moving hand has a blur of its own, applied before this).
4. **Lateral chromatic aberration**: red and blue imaged at slightly different scales.
5. **Sensor**: an RGGB Bayer mosaic, photon (shot) noise and read noise scaled by the analogue
   gain, clipping at full well, demosaicing by OpenCV.
6. **Processing**: white-balance gains (the camera's estimate of the lamps' colour, with its
   drift), the sRGB tone curve, unsharp-mask sharpening, 8 bits.
7. **Codec**: PNG, or JPEG at the tier's quality (with its 4:2:0 chroma subsampling).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from drivers.camera.scene.layout import U8, linear_to_srgb
from drivers.camera.scene.lighting import F32

_LEVELS = (0.0, 0.8, 1.6, 2.8, 4.5, 7.0)  # pillbox radii (px) blended between


def pillbox(radius: float) -> F32:
    """A disk kernel of ``radius`` pixels with exact area coverage at its rim."""
    if radius < 0.5:
        k = np.zeros((3, 3), np.float32)
        k[1, 1] = 1.0
        if radius > 0:  # a sub-pixel circle spreads a little into the neighbours
            w = radius * radius
            k[:] = w / 8
            k[1, 1] = 1.0 - w
        return k
    half = math.ceil(radius)
    sub = 8
    c = (np.arange((2 * half + 1) * sub) + 0.5) / sub - (half + 0.5)
    x, y = np.meshgrid(c, c)
    inside = (x * x + y * y <= radius * radius).astype(np.float32)
    n = 2 * half + 1
    k = inside.reshape(n, sub, n, sub).mean(axis=(1, 3))
    return np.asarray(k / k.sum(), np.float32)


def line_kernel(length: float, angle_deg: float) -> F32:
    """Uniform motion over ``length`` pixels at ``angle_deg`` (antialiased)."""
    if length < 0.5:
        k = np.zeros((1, 1), np.float32)
        k[0, 0] = 1
        return k
    half = math.ceil(length / 2) + 1
    sub = 8
    n = 2 * half + 1
    canvas = np.zeros((n * sub, n * sub), np.float32)
    a = math.radians(angle_deg)
    dx, dy = math.cos(a) * length / 2 * sub, math.sin(a) * length / 2 * sub
    c = n * sub / 2
    p0 = (round((c - dx) * 16), round((c - dy) * 16))
    p1 = (round((c + dx) * 16), round((c + dy) * 16))
    cv2.line(canvas, p0, p1, 1.0, max(1, sub // 2), cv2.LINE_AA, 4)
    k = canvas.reshape(n, sub, n, sub).mean(axis=(1, 3))
    return np.asarray(k / k.sum(), np.float32)


def vignette(img: F32, cos_axis: F32, strength: float) -> F32:
    return np.asarray(img * (cos_axis ** (4 * strength))[..., None], np.float32)


def defocus(img: F32, coc_px: F32) -> F32:
    """Blur each pixel by its own circle of confusion (linear blend of pillbox levels)."""
    top = float(coc_px.max())
    levels = [r for r in _LEVELS if r <= top] or [0.0]
    if len(levels) < len(_LEVELS) and top > levels[-1]:
        levels.append(_LEVELS[len(levels)])
    if len(levels) == 1:
        return img
    blurred = [
        img if r == 0 else np.asarray(cv2.filter2D(img, -1, pillbox(r)), np.float32) for r in levels
    ]
    c = np.clip(coc_px, 0.0, levels[-1]).ravel()
    out = np.zeros_like(img)
    for j, level in enumerate(blurred):
        onehot = np.zeros(len(levels))
        onehot[j] = 1.0
        w = np.interp(c, levels, onehot).reshape(coc_px.shape).astype(np.float32)
        if w.any():
            out += w[..., None] * level
    return out


def motion(img: F32, length: float, angle_deg: float) -> F32:
    if length < 0.5:
        return img
    return np.asarray(cv2.filter2D(img, -1, line_kernel(length, angle_deg)), np.float32)


def chromatic(img: F32, amount: float, cx: float, cy: float) -> F32:
    """Scale red by ``1 + amount`` and blue by ``1 - amount`` about the principal point."""
    if amount == 0:
        return img
    h, w = img.shape[:2]
    u, v = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    out = img.copy()
    for ch, s in ((0, 1 + amount), (2, 1 - amount)):
        mu = (cx + (u - cx) / s).astype(np.float32)
        mv = (cy + (v - cy) / s).astype(np.float32)
        out[..., ch] = cv2.remap(
            img[..., ch], mu, mv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
        )
    return out


def lens_blur(img: F32, scale: float) -> F32:
    """The lens's own blur and the sensor's anti-aliasing filter: no camera images a sharper
    edge than about a pixel (this is also what keeps the Bayer mosaic from aliasing)."""
    return np.asarray(cv2.GaussianBlur(img, (0, 0), 0.5 * max(scale, 1.0)), np.float32)


def sensor(
    img: F32,
    rng: np.random.Generator,
    gain: float,
    full_well: float,
    read_noise: float,
    bayer: bool,
) -> F32:
    """Raw capture: mosaic, shot and read noise (in units of full scale), clip, demosaic."""
    raw = np.clip(img, 0.0, None)
    h, w = raw.shape[:2]
    if bayer:
        mosaic = np.empty((h, w), np.float32)
        mosaic[0::2, 0::2] = raw[0::2, 0::2, 0]  # R
        mosaic[0::2, 1::2] = raw[0::2, 1::2, 1]  # G
        mosaic[1::2, 0::2] = raw[1::2, 0::2, 1]  # G
        mosaic[1::2, 1::2] = raw[1::2, 1::2, 2]  # B
        plane = mosaic
    else:
        plane = raw
    sigma = np.sqrt(plane * gain / full_well + (read_noise * gain) ** 2)
    noisy = plane + sigma * rng.standard_normal(plane.shape, dtype=np.float32)
    noisy = np.clip(noisy, 0.0, 1.0)
    if not bayer:
        return np.asarray(noisy, np.float32)
    raw16 = np.round(noisy * 65535).astype(np.uint16)
    # OpenCV names Bayer patterns by the second row's first two pixels: RGGB is "BayerBG"
    rgb = cv2.cvtColor(raw16, cv2.COLOR_BayerBG2BGR_EA)
    return np.asarray(rgb[..., ::-1], np.float32) / 65535.0


def process(img: F32, wb: tuple[float, float, float], sharpen: float) -> U8:
    """White balance, tone curve, sharpening and quantisation: an RGB uint8 picture."""
    balanced = np.clip(img * np.array(wb, np.float32), 0.0, 1.0)
    srgb = linear_to_srgb(balanced)
    if sharpen > 0:
        soft = cv2.GaussianBlur(srgb, (0, 0), 1.0)
        srgb = srgb + sharpen * (srgb - soft)
    return np.clip(np.round(srgb), 0, 255).astype(np.uint8)


def encode(rgb: U8, jpeg_quality: int) -> tuple[bytes, str, U8]:
    """The frame as a file's bytes, its suffix and the BGR picture those bytes decode to."""
    bgr = np.ascontiguousarray(rgb[..., ::-1])
    if jpeg_quality:
        ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])
        ext = ".jpg"
    else:
        ok, buf = cv2.imencode(".png", bgr, [cv2.IMWRITE_PNG_COMPRESSION, 3])
        ext = ".png"
    if not ok:
        raise RuntimeError("OpenCV could not encode the frame")
    data = bytes(buf)
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    return data, ext, np.asarray(decoded, np.uint8)
