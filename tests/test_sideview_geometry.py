"""The side-view renderer's geometry, checked against OpenCV's camera model and the pictures.

What is drawn must land where the camera model says: a bright bead at a known point is found
in the rendered picture where ``cv2.projectPoints`` (another implementation of the same lens
model) puts it; each chip's edge is as tall in the picture as f x 3.3 mm / distance; the
calibration cards' codes are read by pyzbar at every box distance from 0.35 to 1.3 m.
"""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest
from pyzbar import pyzbar

from drivers.camera.sideview.camera import Camera, Intrinsics, Pose
from drivers.camera.sideview.frames import SideRenderer
from drivers.camera.sideview.lighting import Lamp, Lighting
from drivers.camera.sideview.optics import Optics, expose
from drivers.camera.sideview.raster import make_background, trace
from drivers.camera.sideview.sampling import bearing, calibration_moment
from drivers.camera.sideview.scene import Capsule, Hand, Moment, Stack, build_stack
from drivers.camera.sideview.table import Box, CameraMount, ChipDesign, default_table
from drivers.camera.sideview.tiers import MILD

CLEAN = Optics(
    exposure=0.32,
    defocus_px=0.0,
    motion_px=0.0,
    motion_deg=0.0,
    vignette=0.0,
    gain=1e-6,
    full_well=1e9,
    read_noise=0.0,
    jpeg_quality=0,
)
LIGHT = Lighting(
    key=Lamp(30.0, 65.0, 5000.0, 2.8, 3.0),
    fill=None,
    ambient=0.4,
    ambient_kelvin=5000.0,
    uneven=0.0,
    wb_correction=0.9,
    wb_drift=(1.0, 1.0),
)


def _camera(k1: float = -0.1, k2: float = 0.02) -> Camera:
    pose = Pose((-200.0, 0.0, 70.0), yaw_deg=12.0, tilt_deg=5.0, roll_deg=1.5)
    k = Intrinsics(1920, 1080, 1700.0, 1700.0, 950.2, 545.7, k1, k2)
    return Camera("test", pose, k)


# room light only: no shadows, and a sphere looks the same all round
FLAT = replace(LIGHT, key=replace(LIGHT.key, intensity=0.0), ambient=2.0)


_BACKGROUNDS: dict[tuple[int, int, Lighting], object] = {}


def _render(cam: Camera, moment: Moment, table=None, light: Lighting = LIGHT) -> np.ndarray:  # type: ignore[no-untyped-def]
    table = table or TABLE
    key = (id(cam), id(table), light)
    if key not in _BACKGROUNDS:  # the cloth and rail, once per camera and light
        _BACKGROUNDS[key] = make_background(cam, table, light)
    t = trace(cam, table, light, _BACKGROUNDS[key], moment)  # type: ignore[arg-type]
    return expose(cam, t.radiance, CLEAN, light.white_balance(), np.random.default_rng(0))


def test_projection_is_opencv_s_lens_model() -> None:
    cam = _camera()
    rng = np.random.default_rng(4)
    pts = np.column_stack(
        [rng.uniform(-600, 700, 50), rng.uniform(300, 1100, 50), rng.uniform(0, 90, 50)]
    )
    ours = cam.project(pts)
    rvec, _ = cv2.Rodrigues(cam.R)
    tvec = -cam.R @ cam.C
    kmat = np.array([[cam.k.fx, 0, cam.k.cx], [0, cam.k.fy, cam.k.cy], [0, 0, 1]])
    dist = np.array([cam.k.k1, cam.k.k2, 0.0, 0.0, 0.0])
    theirs, _ = cv2.projectPoints(pts.reshape(-1, 1, 3), rvec, tvec, kmat, dist)
    assert np.max(np.abs(ours - theirs.reshape(-1, 2))) < 1e-6


def test_pose_axes_are_as_documented() -> None:
    # yaw 0, tilt 0: looking along +y, the picture's right is +x, its down is -z
    rot = Pose((0, 0, 50), 0.0, 0.0, 0.0).rotation()
    assert np.allclose(rot, [[1, 0, 0], [0, 0, -1], [0, 1, 0]])
    # tilted down 10 deg: a point straight ahead on the axis is at the picture's centre,
    # and a point on the cloth farther off is higher in the picture than a nearer one
    cam = Camera(
        "c",
        Pose((0, 0, 80), 0.0, 10.0, 0.0),
        Intrinsics(1920, 1080, 1500, 1500, 959.5, 539.5, 0, 0),
    )
    ahead = np.array([[0.0, 80 / math.tan(math.radians(10)), 0.0]])
    assert np.allclose(cam.project(ahead), [[959.5, 539.5]], atol=1e-6)
    near, far = cam.project(np.array([[0, 300.0, 0], [0, 900.0, 0]]))
    assert far[1] < near[1]


BEAD_CAMERA = _camera()
TABLE = default_table()


@pytest.mark.parametrize(
    "where", [(-150.0, 700.0, 20.0), (150.0, 520.0, 5.0), (-380.0, 900.0, 60.0)]
)
def test_a_bead_is_drawn_where_the_model_projects_it(where: tuple[float, float, float]) -> None:
    """A 2.5 mm white bead (a capsule of no length) at a known point: its blob in the picture
    is centred on the projected point, distortion and all."""
    cam = BEAD_CAMERA
    bead = Capsule(where, where, 2.5, (255, 255, 255), "hand")
    img = _render(cam, Moment(hands=(Hand(1, "over", (bead,)),)), light=FLAT)
    blank = _render(cam, Moment(), light=FLAT)
    diff = np.abs(img.astype(np.int16) - blank.astype(np.int16)).sum(axis=2).astype(np.float64)
    u, v = cam.project(np.array([where]))[0]
    y0, x0 = int(v) - 25, int(u) - 25
    win = diff[y0 : y0 + 51, x0 : x0 + 51]
    assert win.sum() > 0, "the bead was not drawn near its projection"
    assert diff.sum() - win.sum() < 0.05 * diff.sum(), "the bead was drawn elsewhere"
    # the bead's outline: where it differs from the cloth by more than half its contrast
    blob = (win > 0.5 * win.max()).astype(np.float64)
    ys, xs = np.mgrid[0:51, 0:51]
    cu = x0 + float((xs * blob).sum() / blob.sum())
    cv = y0 + float((ys * blob).sum() / blob.sum())
    assert abs(cu - u) < 0.5 and abs(cv - v) < 0.5, ((cu, cv), (u, v))


PLAIN = (
    ChipDesign(1, "white", (235, 235, 230), ((235, 235, 230),), "inserts", 6),
    ChipDesign(2, "black", (25, 25, 28), ((25, 25, 28),), "inserts", 6),
)


@pytest.mark.parametrize("distance", [380.0, 800.0, 1000.0])
def test_a_chip_s_edge_is_f_times_its_thickness_over_its_distance(distance: float) -> None:
    """A squared stack of plain white and black chips in turn: the edges between them in the
    picture are f x 3.3 mm / depth apart, within a pixel."""
    table = replace(default_table(), chips=PLAIN)
    # the camera looks straight at the stack from its own height, no distortion
    stack_xy = (0.0, distance)
    cam = Camera(
        "c",
        Pose((0.0, 0.0, 30.0), 0.0, 2.0, 0.0),
        Intrinsics(1920, 1080, 2000.0, 2000.0, 959.5, 539.5, 0.0, 0.0),
    )
    values = [1, 2] * 6
    stack = build_stack(np.random.default_rng(0), 1, stack_xy, values, table.chip_thickness_mm)
    img = _render(cam, Moment(stacks=(stack,)), table)
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float64)
    front = np.array([[0.0, distance - table.chip_diameter_mm / 2, z] for z in (0.0, 12 * 3.3)])
    (u, v_bottom), (_, v_top) = cam.project(front)
    # down the stack's front, inside it (its top and foot meet the room and the cloth)
    col = grey[int(v_top) + 2 : int(v_bottom) - 1, round(u) - 2 : round(u) + 3].mean(axis=1)
    mid = (col.max() + col.min()) / 2
    crossings = []
    for i in range(len(col) - 1):
        a, b = col[i] - mid, col[i + 1] - mid
        if a * b < 0:
            crossings.append(i + a / (a - b))
    steps = np.diff(crossings)
    depth = float(cam.depth(front[:1])[0])
    expected = 2000.0 * 3.3 / depth
    inner = steps
    assert len(inner) >= 9
    assert np.all(np.abs(inner - expected) < 1.0), (inner, expected)


def _table_at_distances(distances: list[float]):  # type: ignore[no-untyped-def]
    """One box at each distance straight out from its own camera on the tray."""
    boxes, mounts = [], []
    for i, d in enumerate(distances):
        x = -450.0 + 300.0 * i
        boxes.append(Box(i + 1, (x, d), 48.0))
        mounts.append(CameraMount(f"c{i + 1}", (x, 0.0), (i + 1,)))
    base = default_table()
    return replace(base, boxes=tuple(boxes), rigs={"single": tuple(mounts)}, rail_radius_mm=1600.0)


def _read_card(image: np.ndarray, target: dict) -> set[str]:  # type: ignore[type-arg]
    """pyzbar's reading of the card's region (as a reader works inside each box's region)."""
    corners = np.array(target["card_corners_px"])
    (u0, v0), (u1, v1) = corners.min(axis=0), corners.max(axis=0)
    mu, mv = (u1 - u0) * 0.25, (v1 - v0) * 0.25
    h, w = image.shape[:2]
    crop = image[
        max(int(v0 - mv), 0) : min(int(v1 + mv), h), max(int(u0 - mu), 0) : min(int(u1 + mu), w)
    ]
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    return {d.data.decode() for d in pyzbar.decode(grey, symbols=[pyzbar.ZBarSymbol.QRCODE])}


def test_calibration_codes_read_at_every_box_distance() -> None:
    """Mild calibration frames of boxes 0.35 to 1.3 m from their cameras: each camera's own
    card is read by pyzbar (a decoder the renderer does not use) with its text."""
    table = _table_at_distances([350.0, 700.0, 1000.0, 1300.0])
    r = SideRenderer(table, MILD, 1, (1920, 1080))
    frames = list(r.calibration(0))
    assert len(frames) == 4  # one moment for all four: no box is covered twice
    for f in frames:
        box = f.truth["boxes_in_view"][0]
        t = f.truth["targets"][str(box)]
        assert t["in_view"] and t["facing_camera"]
        assert f"BOX {box}" in _read_card(f.image, t), (f.camera, t)


def test_calibration_codes_read_in_the_shipped_mild_rig() -> None:
    r = SideRenderer(default_table(), MILD, 2, (1920, 1080))
    for f in r.calibration(0):
        for box in f.truth["boxes_in_view"]:
            assert f"BOX {box}" in _read_card(f.image, f.truth["targets"][str(box)]), (
                f.camera,
                box,
            )
        # the code's corners in the truth are where OpenCV's detector finds the code
        ok, texts, pts, _ = cv2.QRCodeDetector().detectAndDecodeMulti(f.image)
        assert ok
        for text, quad in zip(texts, pts, strict=True):
            if text.startswith("BOX "):
                target = f.truth["targets"][text[4:]]
                corners = np.array(target["qr_corners_px"])
                err = np.abs(quad - corners).max(axis=1)
                # three corners are finder patterns, found to within a third of a module;
                # OpenCV extrapolates the fourth (bottom right)
                assert err[[0, 1, 3]].max() < 0.35 * target["module_px"], (text, quad, corners)
                assert err[2] < 0.8 * target["module_px"], (text, quad, corners)


def test_every_box_meets_the_resolution_rule() -> None:
    """DEVICES.md: a chip's edge is at least 5 px tall at the farthest box a camera covers;
    in every tier's rig at 1920x1080 the truth's band heights say so."""
    from drivers.camera.sideview.tiers import TIERS

    for name in ("mild", "pair"):
        r = SideRenderer(default_table(), TIERS[name], 1, (1920, 1080))
        for cam, mount in zip(r.base, r.mounts, strict=True):
            for n in mount.boxes:
                b = r.table.box(n)
                d = float(np.linalg.norm(np.array([*b.center_mm, 0.0]) - cam.C)) + b.radius_mm
                assert cam.k.fx * 3.3 / d >= 5.0, (name, cam.name, n)


def test_a_calibration_card_faces_its_camera() -> None:
    table = default_table()
    mom = calibration_moment(
        table, {b.box: (0.0, 0.0) for b in table.boxes}, np.random.default_rng(1)
    )
    for t in mom.targets:
        b = table.box(t.box)
        assert abs(((t.facing_deg - bearing(b.center_mm, (0.0, 0.0))) + 180) % 360 - 180) <= 8


def test_stacks_stand_on_the_cloth_chip_on_chip() -> None:
    s: Stack = build_stack(
        np.random.default_rng(3), 1, (0.0, 500.0), [5] * 20, 3.3, lean_mm=0.5, jitter_mm=0.4
    )
    zs = [c.z for c in s.chips]
    assert zs[0] == 0.0 and np.allclose(np.diff(zs), 3.3)
