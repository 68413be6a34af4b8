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
from drivers.camera.fiducials import (
    LayoutFix,
    LayoutTracker,
    fiducial_corners_mm,
    locate_layout,
    verify_fix,
)
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


# The evaluation renderer's hard tier: QR modules of 2.3-3.5 px and camera shake of 5-8 px.
@pytest.fixture(scope="module")
def still(cfg: CameraConfig) -> tuple[Look, np.ndarray, LayoutFix]:
    """A frame with codes of the hard tier's module size, and the fix found in it."""
    look = _plain_look(cfg, 4)
    grey = cv2.cvtColor(_frame(cfg, look, segno_modules), cv2.COLOR_BGR2GRAY)
    fix = locate_layout(grey, cfg).fix
    assert fix is not None and len(fix.templates) == len(cfg.fiducials)
    modules = [
        float(np.linalg.norm(np.diff(fix.corners_px[c], axis=0), axis=1).min())
        / segno_modules(c).shape[0]
        for c in fix.templates
    ]
    assert 2.0 < min(modules) < 2.5 and 3.0 < max(modules) < 3.5  # px a module, as on the tier
    return look, grey, fix


def _shaken(grey: np.ndarray, length: float, angle_deg: float) -> np.ndarray:
    """The frame with the camera shaking during the exposure: ``length`` px of motion blur."""
    c = int(np.ceil(length / 2)) + 1
    n = 2 * c + 1  # odd, so that the kernel's centre is a pixel's and nothing is shifted
    kernel = np.zeros((n, n), np.float32)
    a = np.radians(angle_deg)
    for t in np.linspace(-length / 2, length / 2, 8 * n):
        x, y = c + t * np.cos(a), c + t * np.sin(a)
        x0, y0 = int(np.floor(x)), int(np.floor(y))
        fx, fy = x - x0, y - y0  # spread over the four pixels around the point
        kernel[y0, x0] += (1 - fx) * (1 - fy)
        kernel[y0, x0 + 1] += fx * (1 - fy)
        kernel[y0 + 1, x0] += (1 - fx) * fy
        kernel[y0 + 1, x0 + 1] += fx * fy
    return np.asarray(cv2.filter2D(grey, -1, kernel / kernel.sum()), np.uint8)


def _moved(grey: np.ndarray, fix: LayoutFix, mm: float, angle_deg: float) -> np.ndarray:
    """The frame shifted by ``mm`` on the layout (at the codes' mean scale), sub-pixel."""
    sides = [np.linalg.norm(np.diff(c, axis=0), axis=1).mean() for c in fix.corners_px.values()]
    size_mm = load_camera_config(EXAMPLE).fiducials[0].size_mm
    px_per_mm = float(np.mean(sides)) / size_mm
    d = mm * px_per_mm
    a = np.radians(angle_deg)
    m = np.array([[1, 0, d * np.cos(a)], [0, 1, d * np.sin(a)]], np.float64)
    h, w = grey.shape
    return np.asarray(
        cv2.warpAffine(grey, m, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE),
        np.uint8,
    )


def test_checking_a_fix_leaves_it_as_it_was_so_a_still_camera_keeps_it(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix]
) -> None:
    _, grey, fix = still
    before = {c: t.copy() for c, t in fix.templates.items()}
    blurred = _shaken(grey, 6, 30)
    # a camera's frames: many checks of one fix (each once faded its stored pictures)
    for frame in [grey, blurred] * 15:
        assert verify_fix(frame, fix, cfg) == len(fix.templates)
    for code, template in fix.templates.items():
        np.testing.assert_array_equal(template, before[code])


@pytest.mark.parametrize("length", [5.0, 6.5, 8.0])
@pytest.mark.parametrize("angle", [0.0, 50.0, 100.0, 160.0])
def test_camera_shake_of_the_hard_tier_keeps_the_fix(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix], length: float, angle: float
) -> None:
    _, grey, fix = still
    shaken = _shaken(grey, length, angle)
    assert verify_fix(shaken, fix, cfg) == len(fix.templates)


@pytest.mark.parametrize("mm", [2.5, 4.0])
@pytest.mark.parametrize("angle", [0.0, 75.0, 210.0])
@pytest.mark.parametrize("shake", [0.0, 8.0])
def test_a_camera_moved_a_few_millimetres_loses_the_fix_blurred_or_not(
    cfg: CameraConfig,
    still: tuple[Look, np.ndarray, LayoutFix],
    mm: float,
    angle: float,
    shake: float,
) -> None:
    _, grey, fix = still
    moved = _moved(grey, fix, mm, angle)
    if shake:
        moved = _shaken(moved, shake, angle + 40)
    assert verify_fix(moved, fix, cfg) < cfg.min_fiducials


def test_a_camera_turned_half_a_degree_and_shaken_loses_the_fix(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix]
) -> None:
    look, _, fix = still
    turned = replace(look, camera=replace(look.camera, yaw_deg=look.camera.yaw_deg + 0.5))
    grey = cv2.cvtColor(_frame(cfg, turned, segno_modules), cv2.COLOR_BGR2GRAY)
    assert verify_fix(_shaken(grey, 7, 20), fix, cfg) < cfg.min_fiducials


def test_the_tracker_keeps_the_fix_through_shaken_frames_and_drops_it_when_the_camera_moves(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix]
) -> None:
    _, grey, _ = still
    eager = replace(cfg, relocate_every=2)  # scheduled searches fall on shaken frames
    tracker = LayoutTracker(eager)
    fix = tracker.update(grey)
    assert fix is not None and len(fix.found) == len(cfg.fiducials)
    shaken = [_shaken(grey, 8, a) for a in (10.0, 70.0, 130.0)]
    assert all(locate_layout(f, eager).fix is None for f in shaken)  # zbar reads none of them
    for frame in shaken * 2:  # six frames: three scheduled searches fail, the fix stays
        assert tracker.update(frame) is fix
    # moved by 4 mm and shaken: the fix goes and the frame is searched (and cannot be read)
    assert tracker.update(_shaken(_moved(grey, fix, 4.0, 0.0), 8, 10)) is None
    assert tracker.fix is None and tracker.reason.startswith("fiducials not found")
    # the moved camera, still: found again where it now is
    moved = _moved(grey, fix, 4.0, 0.0)
    again = tracker.update(moved)
    assert again is not None and verify_fix(moved, again, cfg) == len(again.templates)


def test_a_fix_from_some_of_the_codes_gives_way_to_one_from_all_of_them(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix]
) -> None:
    _, grey, full = still
    covered = grey.copy()
    for code in list(full.corners_px)[:2]:  # a hand over two of the codes
        x0, y0 = np.floor(full.corners_px[code].min(axis=0)).astype(int) - 6
        x1, y1 = np.ceil(full.corners_px[code].max(axis=0)).astype(int) + 6
        covered[y0:y1, x0:x1] = 90
    tracker = LayoutTracker(cfg)
    partial = tracker.update(covered)
    assert partial is not None and len(partial.found) == 2
    assert tracker.update(_shaken(covered, 8, 45)) is partial  # nothing better to be had
    better = tracker.update(grey)  # the hand gone: the codes it hid are read too
    assert better is not None and better is not partial
    assert len(better.found) == len(cfg.fiducials)
    assert tracker.update(grey) is better  # and kept


def test_codes_in_view_but_not_read_are_watched_too(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix]
) -> None:
    _, grey, full = still
    codes = list(full.corners_px)

    def box(code: str, pad: int) -> tuple[slice, slice]:
        (x0, y0), (x1, y1) = full.corners_px[code].min(axis=0), full.corners_px[code].max(axis=0)
        return slice(int(y0) - pad, int(y1) + pad), slice(int(x0) - pad, int(x1) + pad)

    smudged = grey.copy()
    for code in codes[2:]:  # two codes smeared past reading (dew on the lens, say)
        smudged[box(code, 6)] = cv2.blur(grey, (9, 9))[box(code, 6)]
    fix = locate_layout(smudged, cfg).fix
    assert fix is not None and set(fix.found) == set(codes[:2])
    assert set(fix.templates) == set(codes)  # the smeared ones are watched where the fix puts them
    covered = smudged.copy()
    covered[box(codes[0], 6)] = 90  # then a hand over one of the two codes read
    assert verify_fix(covered, fix, cfg) == 3
    assert verify_fix(_moved(covered, fix, 3.0, 120.0), fix, cfg) < cfg.min_fiducials


def test_a_still_camera_s_fix_is_refitted_to_the_corners_of_several_searches(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix]
) -> None:
    look = still[0]
    renderer = LayoutRenderer(cfg, modules=segno_modules)  # type: ignore[arg-type]
    img, _ = renderer.draw_scene(Scene({b.box: () for b in cfg.boxes}), look)
    # the same view, with its own noise each frame
    frames = [
        cv2.cvtColor(renderer.to_frame(img, look, np.random.default_rng(s)), cv2.COLOR_BGR2GRAY)
        for s in range(5)
    ]
    tracker = LayoutTracker(cfg)
    fixes = [tracker.update(f) for f in frames]
    first = fixes[0]
    assert first is not None and all(f is not None for f in fixes)
    assert fixes[-1] is not first  # refined (searched again at the 1st, 2nd and 4th frame)
    refined = tracker.fix
    assert refined is not None
    searched = [locate_layout(frames[i], cfg).fix for i in (0, 1, 2, 4)]
    for code in first.found:
        corners = np.stack([s.corners_px[code] for s in searched if s is not None])
        np.testing.assert_allclose(refined.corners_px[code], np.median(corners, axis=0))
    fid = cfg.fiducials[0]
    truth = look.camera.project(np.column_stack([fiducial_corners_mm(fid), np.zeros(4)]))
    assert np.abs(refined.corners_px[fid.code] - truth).max() < 1.5


def test_a_code_never_read_does_not_make_the_tracker_search_every_frame(
    cfg: CameraConfig, still: tuple[Look, np.ndarray, LayoutFix], monkeypatch: pytest.MonkeyPatch
) -> None:
    import drivers.camera.fiducials as fiducials

    _, grey, full = still
    covered = grey.copy()
    code = next(iter(full.corners_px))  # a code this camera never reads (covered for good)
    x0, y0 = np.floor(full.corners_px[code].min(axis=0)).astype(int) - 6
    x1, y1 = np.ceil(full.corners_px[code].max(axis=0)).astype(int) + 6
    covered[y0:y1, x0:x1] = 90
    searches = []
    real = fiducials.locate_layout

    def counted(frame: np.ndarray, c: CameraConfig) -> fiducials.FiducialSearch:
        searches.append(1)
        return real(frame, c)

    monkeypatch.setattr(fiducials, "locate_layout", counted)
    tracker = LayoutTracker(cfg)
    for _ in range(25):
        fix = tracker.update(covered)
        assert fix is not None and code not in fix.found
    # The first frame's search, then the refinements at the 1st, 2nd, 4th, 8th and 16th
    # frame after it: not one a frame (the fix lacks that code throughout).
    assert len(searches) == 6
