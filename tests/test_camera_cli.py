"""`floorctl chips render|detect` and `floorctl calibrate` as the technician uses them."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import cv2
import numpy as np
import pytest
from camera_tables import upright_table

from controller.cli import main as floorctl
from drivers.camera.config import load_camera_config
from drivers.camera.fiducials import fiducial_corners_mm, locate_layout
from drivers.camera.render import LayoutRenderer, random_look, scene_for_wagers

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stills")
    args = ["chips", "render", "--config", str(EXAMPLE), "--out", str(out)]
    assert floorctl([*args, "--count", "3", "--seed", "303", "--hands", "0.5"]) == 0
    return out


def test_render_writes_each_frame_with_its_true_wagers_beside_it(rendered: Path) -> None:
    frames = sorted(rendered.glob("frame_*.png"))
    assert [f.stem for f in frames] == ["frame_00000", "frame_00001", "frame_00002"]
    for frame in frames:
        image = cv2.imread(str(frame))
        assert image is not None and image.shape == (720, 1280, 3)
        truth = json.loads(frame.with_suffix(".json").read_text())
        assert sorted(truth["boxes"], key=int) == [str(b) for b in range(1, 8)]
        for box in truth["boxes"].values():
            chips_total = sum(int(v) * n for v, n in box["chips"].items())
            assert chips_total == int(box["amount"])


def test_detect_reports_each_boxs_amount_chips_and_confidence(
    rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    table = upright_table(tmp_path)  # chips render stands its stacks upright
    status = floorctl(["chips", "detect", str(rendered), "--config", str(table), "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 0
    assert len(lines) == 3
    sure = 0
    for result in lines:
        truth = json.loads(Path(result["image"]).with_suffix(".json").read_text())
        assert sorted(result["boxes"], key=int) == [str(b) for b in range(1, 8)]
        for box, seen in result["boxes"].items():
            expected = truth["boxes"][box]
            if seen["confidence"] >= 0.8:
                sure += 1
                assert (seen["amount"], seen["chips"]) == (expected["amount"], expected["chips"])
    # Of 21 boxes: hands cover some, mixed stacks in blur are unsure, and so is a stack of five
    # or more white chips (the overhead camera cannot tell 9 of them from 8): three boxes here.
    assert sure >= 9


def test_detect_prints_a_readable_table_and_fails_on_an_unreadable_image(
    rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((720, 1280, 3), 120, np.uint8))
    capsys.readouterr()
    status = floorctl(
        ["chips", "detect", str(rendered / "frame_00000.png"), str(blank), "--config", str(EXAMPLE)]
    )
    out = capsys.readouterr().out
    assert status == 1
    assert "box 7:" in out and "confidence" in out
    assert f"{blank}: fiducials not found: read 0 of 4 (need 2)" in out


@pytest.fixture(scope="module")
def clear_view(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frame in which all four codes are readable: a camera 48 degrees from the vertical."""
    cfg = load_camera_config(EXAMPLE)
    look = random_look(np.random.default_rng(3), cfg)
    look = replace(
        look,
        camera=replace(look.camera, tilt_deg=48.0),
        gain=1.0,
        blur_sigma=0.4,
        noise_sigma=1.5,
    )
    renderer = LayoutRenderer(cfg)
    img, _ = renderer.draw_scene(scene_for_wagers(cfg, {1: 25, 3: 110, 5: 7}), look)
    path = tmp_path_factory.mktemp("clear") / "clear.png"
    cv2.imwrite(str(path), renderer.to_frame(img, look, np.random.default_rng(0)))
    return path


def test_calibrate_draws_the_overlay_and_says_what_it_found(
    clear_view: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = tmp_path / "overlay.png"
    source = str(clear_view)
    status = floorctl(
        ["calibrate", "--config", str(EXAMPLE), "--source", source, "--out", str(overlay)]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "fiducials read: 4 of 4" in out
    assert "box 1:" in out and f"overlay written to {overlay}" in out
    assert "degrees from the vertical" in out
    assert out.splitlines()[-1].startswith("PASS: layout found, fit error ")
    drawn, original = cv2.imread(str(overlay)), cv2.imread(source)
    assert drawn is not None and original is not None and drawn.shape == original.shape
    assert np.count_nonzero(np.any(drawn != original, axis=2)) > 5000  # outlines and labels


def test_calibrate_on_a_dark_camera_fails_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dark = tmp_path / "dark.png"
    cv2.imwrite(str(dark), np.zeros((720, 1280, 3), np.uint8))
    status = floorctl(
        [
            "calibrate",
            "--config",
            str(EXAMPLE),
            "--source",
            str(dark),
            "--out",
            str(tmp_path / "o.png"),
        ]
    )
    assert status == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("FAIL: black frame from ") and "lens cap" in last


def test_a_bad_config_refuses_to_start_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("stable_frames = 8", "stable_frames = -1"))
    status = floorctl(["chips", "detect", str(tmp_path), "--config", str(bad)])
    assert status == 2
    err = capsys.readouterr().err
    assert f"{bad}: camera.stable_frames = -1: must be at least 1" in err


def test_calibrate_fails_with_a_verdict_when_a_fiducial_is_not_read(
    clear_view: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = cv2.imread(str(clear_view))
    assert frame is not None
    cfg = load_camera_config(EXAMPLE)
    fix = locate_layout(frame, cfg).fix
    assert fix is not None and len(fix.found) == 4
    hidden = next(f for f in cfg.fiducials if f.code == fix.found[-1])
    corners = fix.to_image(fiducial_corners_mm(hidden))
    centre = corners.mean(axis=0)
    cv2.fillConvexPoly(
        frame, np.round((corners - centre) * 1.5 + centre).astype(np.int32), (140, 80, 40)
    )
    path = tmp_path / "covered.png"
    cv2.imwrite(str(path), frame)
    status = floorctl(
        [
            "calibrate",
            "--config",
            str(EXAMPLE),
            "--source",
            str(path),
            "--out",
            str(tmp_path / "o.png"),
        ]
    )
    last = capsys.readouterr().out.splitlines()[-1]
    assert status == 1
    assert last == f"FAIL: fiducials not read: {hidden.code}"


def test_a_bad_config_gives_a_verdict_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("max_stack = 20", "max_stack = 0"))
    status = floorctl(["calibrate", "--config", str(bad), "--out", str(tmp_path / "o.png")])
    captured = capsys.readouterr()
    assert status == 1
    assert "camera.layout.max_stack = 0" in captured.err
    assert captured.out.splitlines()[-1].startswith("FAIL: ")


def test_score_prints_each_tier_and_overall_from_the_truth_files(
    rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two tiers by hand: the rendered frames, one copied with its truth marked "copied".
    import shutil

    for i in range(3):
        shutil.copy(rendered / f"frame_{i:05d}.png", tmp_path / f"frame_{i:05d}.png")
        shutil.copy(rendered / f"frame_{i:05d}.json", tmp_path / f"frame_{i:05d}.json")
    shutil.copy(rendered / "frame_00000.png", tmp_path / "frame_00009.png")
    truth = json.loads((rendered / "frame_00000.json").read_text()) | {"tier": "copied"}
    (tmp_path / "frame_00009.json").write_text(json.dumps(truth))
    capsys.readouterr()
    assert floorctl(["chips", "score", str(tmp_path), "--config", str(EXAMPLE), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc["tiers"]) == ["copied", "untiered"]
    assert doc["tiers"]["untiered"]["frames"] == 3 and doc["tiers"]["copied"]["frames"] == 1
    overall = doc["overall"]
    assert overall["frames"] == 4
    assert overall["boxes"] + overall["covered"] == 4 * 7
    assert overall["exact"] + overall["misread"] + overall["unsure"] == overall["boxes"]
    assert overall["misread"] == 0 and overall["fiducial_failures"] == 0
    assert overall["fps"] > 0
    # The boxes with chips, counted from the truth files themselves.
    with_chips = 0
    for truth_file in tmp_path.glob("frame_*.json"):
        t = json.loads(truth_file.read_text())
        occluded = set(t.get("occluded", []))
        with_chips += sum(
            Decimal(b["amount"]) > 0 for k, b in t["boxes"].items() if int(k) not in occluded
        )
    assert overall["with_chips"] == with_chips > 0
    assert overall["exact_with_chips"] <= min(overall["exact"], with_chips)
    assert overall["exact"] - overall["exact_with_chips"] <= overall["boxes"] - with_chips
    # The same frame read twice, scored twice alike.
    copied = doc["tiers"]["copied"]
    assert copied["exact"] <= 7
    assert floorctl(["chips", "score", str(tmp_path), "--config", str(EXAMPLE)]) == 0
    text = capsys.readouterr().out
    assert "untiered" in text and "copied" in text and "overall" in text


def test_score_refuses_a_folder_without_truths_and_a_broken_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert floorctl(["chips", "score", str(tmp_path), "--config", str(EXAMPLE)]) == 2
    assert "no frames with truth files" in capsys.readouterr().err
    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((8, 8, 3), np.uint8))
    (tmp_path / "a.json").write_text('{"boxes": {"9": {"amount": "5"}}}')
    assert floorctl(["chips", "score", str(tmp_path), "--config", str(EXAMPLE)]) == 2
    assert "box 9 is not on this config's layout" in capsys.readouterr().err


def test_the_package_s_names_are_the_modules_own() -> None:
    import importlib

    import drivers.camera as camera

    assert sorted(camera._MODULE_OF) == sorted(camera.__all__)
    for name, module in camera._MODULE_OF.items():
        assert getattr(camera, name) is getattr(importlib.import_module(module), name)
    assert set(camera.__all__) <= set(dir(camera))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = camera.no_such_name
