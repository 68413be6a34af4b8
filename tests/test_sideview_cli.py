"""``floorctl chips render-side`` as a user runs it, and the rounds it renders as sequences."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

from controller.cli import main
from drivers.camera.sideview.frames import SideRenderer, round_steps
from drivers.camera.sideview.table import default_table
from drivers.camera.sideview.tiers import MEDIUM

ONE_BOX = """
[[boxes]]
box = 1
center_mm = [0, 600]

[[cameras]]
name = "solo"
position_mm = [0, 0]
boxes = [1]
"""


def test_help_starts_without_opencv() -> None:
    code = (
        "import sys\n"
        "from controller.cli import main\n"
        "try:\n"
        "    main(['chips', 'render-side', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('cv2', 'numpy', 'segno') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "--tier" in out.stdout and "300" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_small_set_on_disk(tmp_path: Path) -> None:
    table = tmp_path / "one.toml"
    table.write_text(ONE_BOX)
    out = tmp_path / "set"
    status = main(
        [
            "chips",
            "render-side",
            "--table",
            str(table),
            "--seed",
            "301",
            "--frames",
            "1",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed_use"] == "reporting" and manifest["cameras"] == [
        {"name": "solo", "boxes": [1]}
    ]
    kinds = [n.split("/")[1] for n in manifest["frames"]]
    # one box: a known stack of each of the six denominations in turn
    assert kinds == ["calibration"] + ["known"] * 6 + ["play"]
    for name in manifest["frames"]:
        img = cv2.imread(str(out / name))
        assert img is not None and img.shape == (1080, 1920, 3)
        truth = json.loads((out / name).with_suffix(".json").read_text())
        assert truth["frame"] == name and truth["camera"] == "solo"
    assert json.loads((out / "table.json").read_text())["boxes"][0]["center_mm"] == [0.0, 600.0]


def test_bad_tables_exit_2_naming_the_key(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.toml"
    bad.write_text(ONE_BOX.replace("boxes = [1]", "boxes = [1, 9]"))
    assert main(["chips", "render-side", "--table", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "cameras[0].boxes" in capsys.readouterr().err
    bad.write_text(ONE_BOX + "\nsize = 3\n")
    assert main(["chips", "render-side", "--table", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "size = 3: unknown key" in capsys.readouterr().err
    # one camera asked to cover boxes far apart at 1920x1080 cannot give 5 px a chip
    wide = tmp_path / "wide.toml"
    wide.write_text(
        "[[boxes]]\nbox = 1\ncenter_mm = [-700, 950]\n[[boxes]]\nbox = 2\ncenter_mm = [700, 950]\n"
        '[[cameras]]\nname = "one"\nposition_mm = [0, 0]\nboxes = [1, 2]\n'
        "[rail]\nradius_mm = 1500\n"
    )
    assert main(["chips", "render-side", "--table", str(wide), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "camera 'one'" in err and "at least 5 needed" in err


def test_a_round_places_bets_then_changes_one_after_the_call() -> None:
    r = SideRenderer(default_table(), MEDIUM, 9, (1920, 1080))
    for k in (0, 1):
        steps = round_steps(r, k)
        phases = [info["phase"] for _, info in steps]
        call = phases.index("no_more_bets")
        assert all(p == "betting" for p in phases[:call]) and all(
            p == "no_more_bets" for p in phases[call:]
        )
        for moment, info in steps:
            if info["event"] in ("placing", "changing", "hand_passing"):
                assert moment.hands, info
            else:
                assert not moment.hands, info
        at_call = steps[call][0]
        last = steps[-1][0]
        wagers = lambda m: sorted((s.box, s.values) for s in m.stacks if not s.own)  # noqa: E731
        if k == 1:
            change = steps[-1][1]["change"]
            assert change["before"] != change["after"]
            before = [(b, v) for b, v in wagers(at_call) if b != change["box"]]
            after = [(b, v) for b, v in wagers(last) if b != change["box"]]
            assert before == after  # only the changed box differs
            assert change["after"] in [v for b, v in wagers(last) if b == change["box"]]
        else:
            assert wagers(at_call) == wagers(last)  # nothing changed after the call
            assert "change" not in steps[-1][1]


def test_sequence_frames_carry_their_step() -> None:
    r = SideRenderer(default_table(), MEDIUM, 9, (1920, 1080))
    from drivers.camera.sideview.frames import sequence_frames

    first = next(iter(sequence_frames(r, 0)))
    assert first.truth["kind"] == "sequence" and first.truth["sequence"]["event"] == "empty"
    assert first.name.startswith("sequences/round_000/")
    assert np.asarray(first.image).shape == (1080, 1920, 3)
