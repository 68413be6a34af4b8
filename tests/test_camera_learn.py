"""`floorctl calibrate --learn`: the technician's calibration that learns the table, from a
frame with known stacks placed as instructed. The renderer is the oracle: it draws each chip's
side at 0.82 of its face colour and chips 3.3 mm thick."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cli import main as floorctl
from drivers.camera.config import CameraConfig, load_camera_config
from drivers.camera.learn import parse_placement, plan
from drivers.camera.render import LayoutRenderer, Scene, Stack, random_look

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"


@pytest.fixture(scope="module")
def cfg() -> CameraConfig:
    return load_camera_config(EXAMPLE)


def _placed(cfg: CameraConfig, placement: dict[int, tuple[int, int]], path: Path) -> Path:
    look = random_look(np.random.default_rng(3), cfg)
    look = replace(
        look, camera=replace(look.camera, tilt_deg=48.0), gain=1.0, blur_sigma=0.4, noise_sigma=1.5
    )
    areas = {a.box: a for a in cfg.boxes}
    stacks: dict[int, tuple[Stack, ...]] = {b: () for b in areas}
    for box, (value, count) in placement.items():
        stacks[box] = (Stack(areas[box].center_mm, (value,) * count),)
    renderer = LayoutRenderer(cfg)
    img, _ = renderer.draw_scene(Scene(stacks), look)
    cv2.imwrite(str(path), renderer.to_frame(img, look, np.random.default_rng(1)))
    return path


def test_learning_from_the_standard_placement_writes_a_new_config_the_detector_uses(
    cfg: CameraConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = _placed(cfg, plan(cfg, 5), tmp_path / "placed.png")
    table = tmp_path / "table.toml"
    table.write_text(EXAMPLE.read_text())
    before = table.read_text()
    args = ["calibrate", "--learn", "--config", str(table), "--source", str(frame)]
    status = floorctl([*args, "--out", str(tmp_path / "o.png")])
    out = capsys.readouterr().out
    assert "box 1: one stack of 5 white chips ($1)" in out and "box 7: nothing" in out
    learned_path = tmp_path / "table.learned.toml"
    assert status == 0, out
    assert out.splitlines()[-1] == (
        f"PASS: learned from 1 frame(s); written to {learned_path} (use it as the table's config)"
    )
    assert table.read_text() == before  # the technician's config is never overwritten
    learned = load_camera_config(learned_path)
    assert learned.learned is not None
    assert abs(learned.learned.chip_height_mm - 3.3) < 0.15
    assert learned.learned.focal_px is not None
    for chip in learned.learned.chips:
        face = np.array(cfg.chip_by_value(chip.value).colour, float)
        side = np.array(chip.side, float)
        # The renderer's side is 0.82 of the face; white-balanced and scaled to the cloth.
        assert np.abs(side - 0.82 * face).max() < 40, (chip.value, chip.side, face)
    # Everything else is the technician's config, as written.
    assert learned_path.read_text().startswith(before.rstrip("\n"))
    # A second run would overwrite the learned file: refused without --force.
    assert floorctl([*args, "--out", str(tmp_path / "o.png")]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"FAIL: {learned_path} exists")


def test_learning_refuses_to_overwrite_the_config_and_names_a_wrong_stack(
    cfg: CameraConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "table.toml"
    table.write_text(EXAMPLE.read_text())
    base = ["calibrate", "--learn", "--config", str(table), "--out", str(tmp_path / "o.png")]
    assert floorctl([*base, "--source", str(tmp_path), "--write", str(table)]) == 1
    assert "would overwrite the technician's config" in capsys.readouterr().out.splitlines()[-1]
    # Box 3 holds 9 chips where the instructions asked for 5.
    placement = plan(cfg, 5)
    placement[3] = (placement[3][0], 9)
    frame = _placed(cfg, placement, tmp_path / "wrong.png")
    assert floorctl([*base, "--source", str(frame)]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("FAIL: box 3: the stack shows ") and "not 5" in last
    assert not (tmp_path / "table.learned.toml").exists()


def test_chosen_placements_are_parsed_and_bad_ones_named(cfg: CameraConfig) -> None:
    assert parse_placement("1:25x10, 3:1x5", cfg) == {1: (25, 10), 3: (1, 5)}
    for text, words in [
        ("1:25", "BOX:VALUExCOUNT"),
        ("9:25x3", "box 9 is not on the layout"),
        ("1:7x3", "no $7 chip"),
        ("1:25x30", "1..20 chips"),
        ("1:25x3,1:5x2", "placed twice"),
        ("", "no stacks"),
    ]:
        with pytest.raises(ValueError, match=words.replace("$", r"\$")):
            parse_placement(text, cfg)


def test_a_chosen_placement_learns_those_chips_and_keeps_the_others(
    cfg: CameraConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "table.toml"
    table.write_text(EXAMPLE.read_text())
    first = _placed(cfg, {2: (5, 6), 5: (100, 4)}, tmp_path / "first.png")
    second = _placed(cfg, {4: (1000, 8)}, tmp_path / "second.png")
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    common = ["calibrate", "--learn", "--no-lens", "--out", str(tmp_path / "o.png")]
    assert floorctl([*common, "--config", str(table), "--source", str(first), "--place",
                     "2:5x6,5:100x4", "--write", str(one)]) == 0  # fmt: skip
    assert floorctl([*common, "--config", str(one), "--source", str(second), "--place",
                     "4:1000x8", "--write", str(two)]) == 0  # fmt: skip
    capsys.readouterr()
    learned = load_camera_config(two).learned
    assert learned is not None
    assert [c.value for c in learned.chips] == [5, 100, 1000]
    assert learned.focal_px is None  # --no-lens
    assert learned.runs == 2
