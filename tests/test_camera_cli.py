"""`floorctl chips render|detect` and `floorctl calibrate` as the technician uses them."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cli import main as floorctl

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
    rendered: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    status = floorctl(["chips", "detect", str(rendered), "--config", str(EXAMPLE), "--json"])
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
    assert sure >= 16  # of 21 boxes; hands cover some


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


def test_calibrate_draws_the_overlay_and_says_what_it_found(
    rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = tmp_path / "overlay.png"
    source = str(rendered / "frame_00000.png")
    status = floorctl(
        ["calibrate", "--config", str(EXAMPLE), "--source", source, "--out", str(overlay)]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "fiducials read: 4 of 4" in out
    assert "box 1:" in out and f"overlay written to {overlay}" in out
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
    assert "black frame" in capsys.readouterr().err


def test_a_bad_config_refuses_to_start_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("stable_frames = 8", "stable_frames = -1"))
    status = floorctl(["chips", "detect", str(tmp_path), "--config", str(bad)])
    assert status == 2
    err = capsys.readouterr().err
    assert f"{bad}: camera.stable_frames = -1: must be at least 1" in err
