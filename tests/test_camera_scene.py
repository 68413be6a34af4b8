"""The evaluation renderer (drivers/camera/scene): geometry by hand and against OpenCV's own
projection, seeds, truth files, printed fiducials read back by zbar, every tier at both sizes,
and the `floorctl chips scene` command."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest
from pyzbar import pyzbar

from controller.cli import main as floorctl
from drivers.camera import scene as scene_pkg
from drivers.camera.config import CameraConfig, load_camera_config
from drivers.camera.scene.camera import Camera, Lens, Pose, look_at
from drivers.camera.scene.chips import ChipModel, Surface, chip_frame, intersect, radiance
from drivers.camera.scene.frames import SIZES, SceneRenderer
from drivers.camera.scene.hand import hit as hand_hit
from drivers.camera.scene.hand import parts as hand_parts
from drivers.camera.scene.lighting import Lamp, Lighting, lamp_colour
from drivers.camera.scene.sampling import frame_scene, session_pose, setup
from drivers.camera.scene.tiers import MEDIUM, MILD, OVERHEAD, TIERS, Tier

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"


@pytest.fixture(scope="module")
def cfg() -> CameraConfig:
    return load_camera_config(EXAMPLE)


def clean(tier: Tier) -> Tier:
    """The tier's camera and lamps with nothing to spoil the picture: no noise to speak of, no
    blur, no sharpening, no hand, no cards, no knocks, PNG."""
    return dataclasses.replace(
        tier,
        name=f"clean-{tier.name}",
        hand_chance=0.0,
        card_chance=0.0,
        motion_chance=0.0,
        defocus_px=(0.0, 0.0),
        depth_blur_px=(0.0, 0.0),
        gain=(1.0, 1.0),
        read_noise=(0.0005, 0.0005),
        sharpen=(0.0, 0.0),
        jpeg_quality=(0, 0),
        bump_deg=0.0,
        bump_mm=0.0,
    )


# -- geometry -------------------------------------------------------------------------------


def test_a_point_projects_where_the_pinhole_worked_by_hand_says() -> None:
    # Camera 1000 mm above the felt, 1000 mm behind (towards the dealer) the point (500, 250),
    # tilted 45 deg, f = 1000 px, principal point at the centre of 1280 x 720, no distortion.
    # Its axes: right (1, 0, 0), down (0, s, s), forward (0, -s, s), s = 1/sqrt 2.
    # (500, 0, 0): P - C = (0, -1250, 1000); x = 0, y = s(-250), z = s(2250): v = 360 - 1000/9.
    # (600, 250, 0): P - C = (100, -1000, 1000); y = 0, z = s 2000: u = 640 + 1000 * 100/1414.2.
    pose = Pose((500.0, 1250.0, -1000.0), 45.0, 0.0, 0.0)
    cam = Camera(pose, Lens(1000 / 1280, 0.5, 0.5, 0.0, 0.0), 1280, 720)
    pts = np.array([[500.0, 250.0, 0.0], [500.0, 0.0, 0.0], [600.0, 250.0, 0.0]])
    uv, depth = cam.project(pts)
    assert uv[0] == pytest.approx([640.0, 360.0], abs=1e-9)
    assert uv[1] == pytest.approx([640.0, 360.0 - 1000.0 / 9.0], abs=1e-9)
    assert uv[2] == pytest.approx([640.0 + 1000.0 * 100.0 / (2000.0 / math.sqrt(2)), 360.0])
    assert depth[0] == pytest.approx(1000.0 * math.sqrt(2))
    # a chip 3.3 mm up shows higher in the picture than its foot (smaller v)
    foot, top = cam.project(np.array([[500.0, 250.0, 0.0], [500.0, 250.0, -3.3]]))[0]
    assert top[1] < foot[1]


def test_barrel_distortion_pulls_an_off_axis_point_in_by_k1_r_squared() -> None:
    # straight down from 1000 mm, (1000, 250) is at x = 500/1000 = 0.5 on the unit plane; with
    # k1 = -0.1 it lands at 0.5 (1 - 0.1 * 0.25) = 0.4875, i.e. 487.5 px right of centre.
    pose = Pose((500.0, 250.0, -1000.0), 0.0, 0.0, 0.0)
    cam = Camera(pose, Lens(1000 / 1280, 0.5, 0.5, -0.1, 0.0), 1280, 720)
    uv, _ = cam.project(np.array([[1000.0, 250.0, 0.0]]))
    assert uv[0] == pytest.approx([640.0 + 1000.0 * 0.4875, 360.0])


def test_projection_agrees_with_opencvs_own_for_tilted_turned_rolled_distorted_cameras() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        pose = look_at(
            (float(rng.uniform(300, 700)), float(rng.uniform(150, 350))),
            float(rng.uniform(800, 1800)),
            float(rng.uniform(5, 60)),
            float(rng.uniform(-10, 10)),
            float(rng.uniform(-5, 5)),
        )
        lens = Lens(float(rng.uniform(0.5, 1.2)), 0.5, 0.5, float(rng.uniform(-0.3, 0)), 0.01)
        cam = Camera(pose, lens, 1280, 720)
        pts = np.column_stack(
            [rng.uniform(0, 1000, 50), rng.uniform(0, 500, 50), -rng.uniform(0, 80, 50)]
        )
        ours, _ = cam.project(pts)
        rot = pose.rotation()
        rvec, _ = cv2.Rodrigues(rot)
        tvec = -rot @ np.array(pose.position)
        k = np.array([[cam.fpx, 0, 640.0], [0, cam.fpx, 360.0], [0, 0, 1]])
        theirs, _ = cv2.projectPoints(pts, rvec, tvec, k, np.array([lens.k1, lens.k2, 0, 0]))
        assert np.abs(ours - theirs.reshape(-1, 2)).max() < 1e-6


def test_a_pixels_ray_leads_back_to_that_pixel_through_the_distortion() -> None:
    pose = look_at((500.0, 250.0), 1500.0, 55.0, 3.0, -1.0)
    cam = Camera(pose, Lens(0.8, 0.51, 0.49, -0.25, 0.02), 1280, 720)
    rays = cam.rays(1)
    v, u = np.mgrid[0:720:37, 0:1280:53]
    d = rays[v, u].reshape(-1, 3).astype(np.float64)
    back, _ = cam.project(np.array(pose.position) + 900.0 * d)
    assert np.abs(back - np.column_stack([u.ravel(), v.ravel()])).max() < 1e-3
    # the mount's target is on the optical axis: it lands on the principal point
    target, _ = cam.project(np.array([[500.0, 250.0, 0.0]]))
    assert target[0] == pytest.approx([0.51 * 1280, 0.49 * 720], abs=1e-6)


def test_a_chip_side_is_lit_less_than_its_face_under_a_lamp_overhead() -> None:
    lamp = Lamp((500.0, 250.0, -1400.0), 1400.0**2, lamp_colour(4500), 4500, 80)
    light = Lighting((lamp,), (0.2, 0.2, 0.2), (0.01, 0.05, 0.2))
    frame = chip_frame(0.0, 0.0)
    up = np.array(frame[2])
    point = np.array([[520.0, 250.0, -3.3], [500.0, 269.5, -1.6]])
    normals = np.array([up, [0.0, 1.0, 0.0]])
    surf = Surface(point, normals, np.full((2, 3), 0.5), np.zeros(2), np.full(2, 20.0))
    view = np.array([[0.0, 0.8, -0.6], [0.0, 0.8, -0.6]])
    face, side = radiance(surf, view, light, [np.ones(2)])
    assert side.sum() < 0.4 * face.sum()


# -- seeds and truth ------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_frames_and_a_frame_does_not_depend_on_the_run(
    cfg: CameraConfig,
) -> None:
    a = SceneRenderer(cfg, "medium", 11)
    b = SceneRenderer(cfg, "medium", 11)
    first, again = a.frame(3), b.frame(3)
    assert first.data == again.data
    assert first.truth == again.truth
    # the fourth frame of a run is the first of a run started there
    run = list(SceneRenderer(cfg, "medium", 11).frames(2, start=2))
    assert run[1].data == first.data
    other = SceneRenderer(cfg, "medium", 12).frame(3)
    assert other.data != first.data


def test_truth_totals_are_the_chips_placed_with_the_large_chips_at_the_bottom(
    cfg: CameraConfig,
) -> None:
    values = {c.value for c in cfg.chips}
    model = ChipModel()
    for tier in TIERS.values():
        base = setup(cfg, tier, 21)
        renderer = SceneRenderer(cfg, tier, 21)
        for i in range(40):
            placed = frame_scene(cfg, tier, 21, i, model, base)
            by_box: dict[int, list[list[int]]] = {}
            for stack in placed.stacks:
                assert 1 <= len(stack.chips) <= 20
                heights = [-c.bottom[2] for c in stack.chips]
                assert heights == sorted(heights)  # each chip on the one below
                by_box.setdefault(stack.box, []).append([c.value for c in stack.chips])
            boxes = {b.box for b in cfg.boxes}
            assert set(by_box) <= boxes
            for box in cfg.boxes:
                stacks = by_box.get(box.box, [])
                for stack_values in stacks:
                    assert set(stack_values) <= values
                    assert stack_values == sorted(stack_values, reverse=True)
                mine = [st for st in placed.stacks if st.box == box.box]
                for stack in mine:  # every chip inside its circle
                    for c in stack.chips:
                        d = math.dist(c.bottom[:2], box.center_mm)
                        assert d + model.radius_mm <= box.radius_mm + 1e-9
                if len(mine) == 2:  # two stacks do not pass through each other
                    for a, b in zip(mine[0].chips, mine[1].chips, strict=False):
                        assert math.dist(a.bottom[:2], b.bottom[:2]) >= 2 * model.radius_mm
        truth = renderer.frame(0).truth
        placed = frame_scene(cfg, tier, 21, 0, model, base)
        for box in cfg.boxes:
            entry = truth["boxes"][str(box.box)]
            chips = Counter(c.value for s in placed.stacks if s.box == box.box for c in s.chips)
            assert entry["chips"] == {str(v): chips[v] for v in sorted(chips)}
            assert int(entry["amount"]) == sum(v * n for v, n in chips.items())
            assert sum(len(s) for s in entry["stacks"]) == sum(chips.values())
            assert entry["occluded"] == (box.box in truth["occluded"])
            assert entry["unsure_ok"] == bool(entry["reasons"])


def test_a_chips_face_shows_the_configs_colour_under_the_tables_lights(cfg: CameraConfig) -> None:
    # The config gives each chip's colour as the camera sees its face under the table's lights.
    # Read the top chip's face of every lone stack, between its edge spots (16.5 mm out, where
    # the design is plain clay), in clean frames.
    tier = clean(MILD)
    renderer = SceneRenderer(cfg, tier, 9)
    gaps = []
    for i in range(4):
        frame = renderer.frame(i)
        placed = frame_scene(cfg, tier, 9, i, renderer.model, renderer.base)
        pose = session_pose(renderer.base, tier, 9, placed.session)
        cam = Camera(pose, renderer.base.lens, 1280, 720)
        for stack in placed.stacks:
            if sum(st.box == stack.box for st in placed.stacks) != 1:
                continue
            top = stack.chips[-1]
            period = 2 * math.pi / renderer.designs[top.design].spots
            ex, ey, axis = (np.array(v) for v in top.frame)
            face = np.array(top.bottom) + axis * renderer.model.thickness_mm
            angles = [(k + 0.5) * period + top.turn for k in range(round(2 * math.pi / period))]
            pts = [face + 16.5 * (math.cos(a) * ex + math.sin(a) * ey) for a in angles]
            uv, _ = cam.project(np.array(pts))
            seen = np.median([frame.image[round(v), round(u)][::-1] for u, v in uv], axis=0)
            gaps.append(float(np.linalg.norm(seen - cfg.chip_by_value(top.value).colour)))
    assert len(gaps) >= 10
    assert float(np.median(gaps)) < 15
    assert sum(g < 25 for g in gaps) >= 0.8 * len(gaps)


def test_the_hand_is_in_front_of_every_chip_along_every_ray(cfg: CameraConfig) -> None:
    # the picture lays the hand over the chips; check that by tracing both for whole frames
    tier = TIERS["hard"]
    base = setup(cfg, tier, 31)
    model = ChipModel()
    seen = 0
    for i in range(40):
        placed = frame_scene(cfg, tier, 31, i, model, base)
        if placed.hand is None or not placed.stacks:
            continue
        seen += 1
        cam = Camera(session_pose(base, tier, 31, placed.session), base.lens, 256, 144)
        origin = np.array(cam.pose.position)
        rays = cam.rays(1).reshape(-1, 3).astype(np.float64)
        chip_t = np.full(len(rays), np.inf)
        for stack in placed.stacks:
            chip_t = np.minimum(chip_t, intersect(origin, rays, list(stack.chips), model).t)
        hand_t = np.full(len(rays), np.inf)
        for part, _ in hand_parts(placed.hand):
            hand_t = np.minimum(hand_t, hand_hit(origin, rays, part)[0])
        both = np.isfinite(chip_t) & np.isfinite(hand_t)
        assert np.all(hand_t[both] < chip_t[both])
    assert seen >= 4


def test_the_fiducials_printed_are_read_back_by_zbar_where_the_truth_says(
    cfg: CameraConfig,
) -> None:
    # overhead: all four codes are large enough for zbar to read in the whole 1280 x 720 frame
    frame = SceneRenderer(cfg, clean(OVERHEAD), 5).frame(0)
    grey = cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY)
    read = {d.data.decode(): d for d in pyzbar.decode(grey, symbols=[pyzbar.ZBarSymbol.QRCODE])}
    assert sorted(read) == sorted(f.code for f in cfg.fiducials)
    assert sorted(frame.truth["fiducials_visible"]) == sorted(read)
    for code, found in read.items():
        truth = np.array(frame.truth["fiducials"][code]["corners_px"])
        polygon = np.array([(p.x, p.y) for p in found.polygon], np.float64)
        # zbar's corners are the truth's corners (in some order), to a pixel or so
        gap = np.linalg.norm(truth[:, None, :] - polygon[None, :, :], axis=2).min(axis=1)
        assert gap.max() < 2.5
    # at 50 deg and 1920 x 1080 each code, cut out where the truth places it, reads back too
    frame = SceneRenderer(cfg, clean(MEDIUM), 5, SIZES["1920x1080"]).frame(0)
    for fid in cfg.fiducials:
        corners = np.array(frame.truth["fiducials"][fid.code]["corners_px"])
        (x0, y0), (x1, y1) = corners.min(0).astype(int) - 25, corners.max(0).astype(int) + 25
        crop = cv2.cvtColor(frame.image[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
        assert [d.data.decode() for d in pyzbar.decode(crop)] == [fid.code]


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("tier", list(TIERS))
def test_every_tier_renders_at_both_sizes(cfg: CameraConfig, tier: str, size: str) -> None:
    frame = SceneRenderer(cfg, tier, 100, SIZES[size]).frame(7)
    w, h = SIZES[size]
    assert frame.image.shape == (h, w, 3) and frame.image.dtype == np.uint8
    decoded = cv2.imdecode(np.frombuffer(frame.data, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(decoded, frame.image)
    t = frame.truth
    assert t["tier"] == tier and t["size"] == [w, h] and t["conditions"]["name"] == tier
    assert frame.name.endswith(".jpg" if TIERS[tier].jpeg_quality[1] else ".png")
    assert sorted(t["boxes"], key=int) == [str(b.box) for b in cfg.boxes]
    # a picture, not a flat field: the felt is the config's blue, give or take the light
    felt = np.array(cfg.layout.felt[::-1], np.float64)
    centre = frame.image[h // 2 - 20 : h // 2 + 20, w // 2 - 20 : w // 2 + 20].reshape(-1, 3)
    assert np.linalg.norm(np.median(centre, axis=0) - felt) < 60
    assert frame.image.std() > 20
    lo, hi = TIERS[tier].tilt_deg
    assert lo - TIERS[tier].bump_deg <= t["camera"]["tilt_deg"] <= hi + TIERS[tier].bump_deg


def test_the_docstring_states_each_tiers_conditions() -> None:
    doc = scene_pkg.__doc__ or ""
    rows = {line.split()[0]: line for line in doc.splitlines() if line and line.split()[0] in TIERS}
    for name, tier in TIERS.items():
        row = rows[name]
        assert f"{tier.tilt_deg[0]:g}-{tier.tilt_deg[1]:g}" in row
        q = tier.jpeg_quality
        assert (f"{q[0]}-{q[1]}" if q[1] else "PNG") in row
        assert f"{tier.hand_chance:.0%} / {tier.card_chance:.0%}" in row
        assert f"+-{tier.wb_drift:.0%}" in row


# -- the command ----------------------------------------------------------------------------


def test_chips_scene_writes_frames_and_truths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "set"
    args = ["chips", "scene", "--config", str(EXAMPLE), "--tier", "hard", "--seed", "3"]
    assert floorctl([*args, "--count", "2", "--out", str(out), "--chip-thickness", "3.1"]) == 0
    assert "wrote 2 hard frames" in capsys.readouterr().out
    frames = sorted(out.glob("frame_*.jpg"))
    assert [f.name for f in frames] == ["frame_00000.jpg", "frame_00001.jpg"]
    for f in frames:
        truth = json.loads(f.with_suffix(".json").read_text())
        assert truth["frame"] == f.name and truth["seed"] == 3
        assert 60 <= truth["optics"]["jpeg_quality"] <= 80
        assert truth["chip_model"] == {"diameter_mm": 39.0, "thickness_mm": 3.1}
        for box in truth["boxes"].values():
            assert int(box["amount"]) == sum(int(v) * n for v, n in box["chips"].items())


def test_chips_scene_refuses_bad_input_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.toml"
    status = floorctl(["chips", "scene", "--config", str(missing), "--out", str(tmp_path)])
    assert status == 2
    assert f"{missing}: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        floorctl(
            ["chips", "scene", "--config", str(EXAMPLE), "--out", str(tmp_path), "--tier", "x"]
        )
    assert stop.value.code == 2
    assert "invalid choice: 'x'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        floorctl(
            ["chips", "scene", "--config", str(EXAMPLE), "--out", str(tmp_path), "--count", "0"]
        )
    assert "--count" in capsys.readouterr().err
    thick = ["--chip-thickness", "0.2"]
    assert (
        floorctl(["chips", "scene", "--config", str(EXAMPLE), "--out", str(tmp_path), *thick]) == 2
    )
    assert "--chip-thickness 0.2: must be 1 to 10 mm" in capsys.readouterr().err


def test_sampling_more_points_than_opencv_maps_hold() -> None:
    """cv2.remap refuses maps of 32,767 rows or more; large lighting grids at 1080p have more
    points than that (frames crashed there). Sampled in slices, every point is still exact."""
    import cv2

    from drivers.camera.scene.lighting import remap_points

    image = np.arange(50 * 80, dtype=np.float32).reshape(50, 80)
    rng = np.random.default_rng(3)
    u = rng.integers(0, 80, size=(300, 250)).astype(np.float64)
    v = rng.integers(0, 50, size=(300, 250)).astype(np.float64)
    out = remap_points(image, u, v, cv2.BORDER_REPLICATE)
    assert out.shape == (300 * 250,)
    assert np.array_equal(out, image[v.astype(int), u.astype(int)].reshape(-1))
