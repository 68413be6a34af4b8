"""The [camera] section of the table config: the example loads, bad keys and values are refused
with the file, key and value named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drivers.camera.config import CameraConfigError, load_camera_config

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"


def test_example_config_loads_with_the_tables_chips_boxes_and_fiducials() -> None:
    cfg = load_camera_config(EXAMPLE)
    assert [c.value for c in cfg.chips] == [1, 5, 25, 100, 500, 1000]
    assert cfg.chip_by_value(5).colour == (0xC8, 0x10, 0x2E)
    assert [b.box for b in cfg.boxes] == [1, 2, 3, 4, 5, 6, 7]
    assert len(cfg.fiducials) == 4
    assert cfg.stable_frames >= 2
    assert cfg.resolution == (1280, 720)


def test_the_old_fixed_chip_step_is_refused_saying_what_replaces_it(tmp_path: Path) -> None:
    path = _with(
        tmp_path,
        "box = 7\ncenter_mm = [890, 300]\n",
        "box = 7\ncenter_mm = [890, 300]\nchip_step_mm = 6.5\n",
    )
    with pytest.raises(CameraConfigError) as err:
        load_camera_config(path)
    message = str(err.value)
    assert "camera.boxes[6].chip_step_mm = 6.5" in message
    assert "camera's pose and chip_height_mm" in message and "calibrate --learn" in message


LEARNED = """
[camera.learned]
focal_px = 1180.5
k1 = -0.08
width = 1280
chip_height_mm = 3.25
white = "#f0ece4"

[[camera.learned.chips]]
value = 5
face = "#c01530"
side = "#8a1020"

[[camera.learned.boxes]]
box = 3
step_mm = 4.4
direction_deg = -95.0
"""


def test_a_learned_section_loads_and_names_its_bad_values(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text(EXAMPLE.read_text() + LEARNED)
    learned = load_camera_config(path).learned
    assert learned is not None
    assert (learned.focal_px, learned.k1, learned.width) == (1180.5, -0.08, 1280)
    assert learned.chips[0].value == 5 and learned.chips[0].side == (0x8A, 0x10, 0x20)
    assert learned.boxes[0].box == 3
    assert load_camera_config(EXAMPLE).learned is None
    path.write_text(EXAMPLE.read_text() + LEARNED.replace("value = 5", "value = 2"))
    with pytest.raises(CameraConfigError, match=r"camera\.learned\.chips\[0\]\.value = 2"):
        load_camera_config(path)
    path.write_text(EXAMPLE.read_text() + LEARNED.replace("box = 3", "box = 9"))
    with pytest.raises(CameraConfigError, match=r"camera\.learned\.boxes\[0\]\.box = 9"):
        load_camera_config(path)


def test_other_sections_are_not_the_camera_loaders_business(tmp_path: Path) -> None:
    text = EXAMPLE.read_text() + '\n[jackpot]\nurl = "loop://"\nwhatever = 3\n'
    path = tmp_path / "t.toml"
    path.write_text(text)
    assert load_camera_config(path).stable_frames == load_camera_config(EXAMPLE).stable_frames


def _with(tmp_path: Path, old: str, new: str) -> Path:
    text = EXAMPLE.read_text()
    assert old in text, old
    path = tmp_path / "table.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("stable_frames = 8", "stable_frames = 0", ["camera.stable_frames", "0", "at least 1"]),
        ("stable_frames = 8", "stable_frames = 8\nstabel = 3", ["camera.stabel", "unknown key"]),
        ('colour = "#c8102e"', 'colour = "red"', ["camera.chips[1].colour", "'red'", "#RRGGBB"]),
        ('colour = "#c8102e"', 'colour = "#f0f0ef"', ["camera.chips[1].colour", "$1 chip"]),
        ("value = 25", "value = 5", ["camera.chips[2].value", "5", "two chips"]),
        ("value = 25", "value = 2.5", ["camera.chips[2].value", "2.5", "whole number"]),
        ("center_mm = [55, 55]", "center_mm = [55]", ["camera.fiducials[0].center_mm"]),
        (
            "center_mm = [110, 300]",
            "center_mm = [1110, 300]",
            ["camera.boxes[0].center_mm", "outside"],
        ),
        ("box = 2\n", "box = 1\n", ["camera.boxes[1].box", "listed twice"]),
        ("min_fiducials = 2", "min_fiducials = 5", ["camera.min_fiducials", "only 4"]),
        ("resolution = [1280, 720]", "resolution = [1280.5, 720]", ["camera.resolution"]),
        ('felt = "#1b4a8c"', "", ["camera.layout.felt", "missing"]),
        (
            "chip_height_mm = 3.3",
            'chip_height_mm = "3.3"',
            ["camera.layout.chip_height_mm", "number"],
        ),
        ("max_stack = 20", "max_stack = 0", ["camera.layout.max_stack", "at least 1"]),
        (
            "stack_lean_mm = 0.25",
            "stack_lean_mm = -0.1",
            ["camera.layout.stack_lean_mm", "at least 0"],
        ),
        (
            "stack_lean_mm = 0.25",
            "stack_lean_mm = 5",
            ["camera.layout.stack_lean_mm", "at most 2"],
        ),
    ],
)
def test_bad_values_are_refused_naming_file_key_and_value(
    tmp_path: Path, old: str, new: str, names: list[str]
) -> None:
    path = _with(tmp_path, old, new)
    with pytest.raises(CameraConfigError) as err:
        load_camera_config(path)
    message = str(err.value)
    assert message.startswith(str(path)), message
    for part in names:
        assert part in message, (part, message)


def test_a_config_without_a_camera_section_or_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[table]\ntable_id = "T07"\n')
    with pytest.raises(CameraConfigError, match=re.escape(f"{path}: has no [camera] section")):
        load_camera_config(path)
    with pytest.raises(CameraConfigError, match="no such file"):
        load_camera_config(tmp_path / "missing.toml")
    path.write_text("[camera\n")
    with pytest.raises(CameraConfigError, match="not valid TOML"):
        load_camera_config(path)
