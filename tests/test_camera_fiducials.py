"""The fiducials: zbar's corner order read from the symbol itself, codes from any conforming
printer (segno's here, not OpenCV's), the camera's pose, and a fix kept through blur but
dropped when the camera moves."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
import segno

from drivers.camera.config import CameraConfig, load_camera_config
from drivers.camera.fiducials import fiducial_corners_mm, locate_layout, verify_fix
from drivers.camera.qr import read_qr
from drivers.camera.render import LayoutRenderer, Look, Scene, random_look

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"


def segno_modules(text: str) -> np.ndarray:
    """The code as segno prints it: 0 dark, 255 light, without the quiet zone."""
    matrix = np.array(segno.make_qr(text, error="q").matrix, np.uint8)
    return np.where(matrix == 1, 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def cfg() -> CameraConfig:
    return load_camera_config(EXAMPLE)


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_zbar_gives_the_symbols_own_corners_whichever_way_round_it_lies(turns: int) -> None:
    modules = segno_modules("FLOORCTL T07 NW")
    n, cell, margin = modules.shape[0], 6, 40
    side = n * cell + 2 * margin
    image = np.full((side, side), 255, np.uint8)
    image[margin : margin + n * cell, margin : margin + n * cell] = cv2.resize(
        modules, (n * cell, n * cell), interpolation=cv2.INTER_NEAREST
    )
    # The symbol's own corners, on pixel boundaries, before turning: TL, BL, BR, TR.
    a, b = margin, margin + n * cell
    own = [(a, a), (a, b), (b, b), (b, a)]
    for _ in range(turns):  # np.rot90 turns a quarter anticlockwise: (x, y) -> (y, side - x)
        own = [(y, side - x) for x, y in own]
    symbols = read_qr(np.ascontiguousarray(np.rot90(image, turns)))
    assert [s.text for s in symbols] == ["FLOORCTL T07 NW"]
    np.testing.assert_allclose(symbols[0].corners, np.array(own, float), atol=1.5)


def _frame(cfg: CameraConfig, look: Look, modules: object = None) -> np.ndarray:
    renderer = LayoutRenderer(cfg) if modules is None else LayoutRenderer(cfg, modules=modules)  # type: ignore[arg-type]
    img, _ = renderer.draw_scene(Scene({b.box: () for b in cfg.boxes}), look)
    return renderer.to_frame(img, look, np.random.default_rng(0))


def _plain_look(cfg: CameraConfig, seed: int) -> Look:
    look = random_look(np.random.default_rng(seed), cfg)
    return replace(look, gain=1.0, blur_sigma=0.4, noise_sigma=1.5, vignette=0.1)


@pytest.mark.parametrize("roll", [0.0, 180.0])
def test_codes_from_another_printer_place_the_layout_and_the_camera(
    cfg: CameraConfig, roll: float
) -> None:
    look = _plain_look(cfg, 3)
    look = replace(look, camera=replace(look.camera, roll_deg=look.camera.roll_deg + roll))
    frame = _frame(cfg, look, segno_modules)
    search = locate_layout(frame, cfg)
    assert search.fix is not None, search.reason
    assert len(search.found) >= 3
    assert search.fix.error_mm < 3.0
    # Oracle: the renderer's own camera puts each fiducial's corners and each box's centre.
    for code in search.found:
        fid = next(f for f in cfg.fiducials if f.code == code)
        truth = look.camera.project(np.column_stack([fiducial_corners_mm(fid), np.zeros(4)]))
        np.testing.assert_allclose(search.fix.corners_px[code], truth, atol=2.0)
    centres = np.array([b.center_mm for b in cfg.boxes], float)
    truth = look.camera.project(np.column_stack([centres, np.zeros(len(centres))]))
    np.testing.assert_allclose(search.fix.to_image(centres), truth, atol=2.0)
    camera = search.fix.camera
    assert camera is not None
    x, y, h = camera.centre
    tx, ty, th = look.camera.position_mm
    distance = float(np.hypot(np.hypot(tx - 500, ty - 250), th))
    assert np.hypot(np.hypot(x - tx, y - ty), h - th) < 0.03 * distance
    assert abs(camera.tilt_deg - look.camera.tilt_deg) < 2.0


def test_the_fix_is_kept_through_a_blurred_frame_and_dropped_when_the_camera_moves(
    cfg: CameraConfig,
) -> None:
    look = _plain_look(cfg, 4)
    frame = _frame(cfg, look, segno_modules)
    fix = locate_layout(frame, cfg).fix
    assert fix is not None
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    assert verify_fix(grey, fix, cfg) == len(fix.templates) >= cfg.min_fiducials
    # A fast pan: 15 px of motion blur, more than zbar reads through.
    kernel = np.zeros((15, 15), np.float32)
    kernel[7, :] = 1 / 15
    smeared = cv2.filter2D(grey, -1, kernel)
    assert verify_fix(smeared, fix, cfg) >= cfg.min_fiducials
    # The camera knocked: the picture shifted by 12 px (about a centimetre on the layout).
    moved = np.roll(grey, (12, 9), axis=(0, 1))
    assert verify_fix(moved, fix, cfg) < cfg.min_fiducials
    # Covered codes are not "still there" either.
    covered = np.full_like(grey, 120)
    assert verify_fix(covered, fix, cfg) == 0
