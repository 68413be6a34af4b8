"""The camera as the table runs it: wager_seen events from the real detector on synthetic
frames and on a rendered video file, device faults with their reasons, and the round engine's
checks on what the camera saw."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from camera_tables import upright_table
from structlog.testing import capture_logs

from controller.cli import main as floorctl
from controller.engine import Table
from controller.events import parse_event, parse_setup
from drivers.camera.config import CameraConfig, load_camera_config
from drivers.camera.detector import U8Array
from drivers.camera.monitor import CameraMonitor
from drivers.camera.render import SyntheticSource
from drivers.camera.sources import open_source

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"


@pytest.fixture(scope="module")
def cfg(tmp_path_factory: pytest.TempPathFactory) -> CameraConfig:
    # chips render stands its stacks upright (tests/camera_tables.py)
    return load_camera_config(upright_table(tmp_path_factory.mktemp("table")))


def _steps(monitor: CameraMonitor, n: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for _ in range(n):
        events.extend(monitor.step())
    return events


def test_the_rendered_video_gives_one_event_per_real_change_and_none_for_hands(
    cfg: CameraConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        floorctl(
            [
                "chips",
                "render",
                "--config",
                str(EXAMPLE),
                "--out",
                str(tmp_path),
                "--count",
                "64",
                "--seed",
                "202",
                "--video",
                "table.avi",
            ]
        )
        == 0
    )
    assert "wrote 64 frames" in capsys.readouterr().out
    truths = [json.loads(line) for line in (tmp_path / "table.jsonl").read_text().splitlines()]
    monitor = CameraMonitor(cfg, open_source(str(tmp_path / "table.avi")))
    seen: dict[int, list[str]] = {b.box: [] for b in cfg.boxes}
    for _ in range(len(truths)):
        for event in monitor.step():
            seen[event["box"]].append(event["amount"])
        assert monitor.status.ok, monitor.status.reason
    # What should have been reported: each box's wager after it first held for K frames
    # (K=8) with no hand near it.
    expected: dict[int, list[str]] = {b.box: [] for b in cfg.boxes}
    for box in expected:
        run, last = 0, None
        for i, truth in enumerate(truths):
            amount = truth["boxes"][str(box)]["amount"]
            occluded = box in truth["occluded"]
            run = 0 if occluded else (run + 1 if i and amount == last and run else 1)
            last = amount
            if run == cfg.stable_frames and (not expected[box] or expected[box][-1] != amount):
                expected[box].append(amount)
    changes = sum(len(v) - 1 for v in expected.values())
    hands = sum(1 for t in truths if t["occluded"])
    assert changes >= 1 and hands >= 5  # the video does exercise both
    assert seen == expected
    # the end of the file is the end of frames: a fault, not a crash
    assert monitor.step() == []
    assert monitor.status.kind == "no frames"


class Scripted:
    """A frame source whose frames the test hands it one by one."""

    name = "scripted"

    def __init__(self, frames: list[U8Array | None]) -> None:
        self.frames = frames

    def read(self) -> U8Array | None:
        return self.frames.pop(0) if self.frames else None

    def close(self) -> None:
        self.frames = []


def test_camera_loss_is_a_logged_fault_with_its_reason_and_recovery_is_logged(
    cfg: CameraConfig,
) -> None:
    synthetic = SyntheticSource(cfg, seed=5)
    synthetic.set_wagers({2: 25})
    good = synthetic.read()
    assert good is not None
    hidden = good.copy()
    hidden[:, :] = (40, 80, 140)  # the layout out of view: only felt-coloured nothing
    black = np.zeros_like(good)
    source = Scripted([good, None, black, hidden] + [good] * cfg.stable_frames)
    monitor = CameraMonitor(cfg, source)
    with capture_logs() as logs:
        assert monitor.step() == [] and monitor.status.ok
        kinds = []
        for _ in range(3):
            assert monitor.step() == []
            kinds.append((monitor.status.kind, monitor.status.reason, monitor.status.ok))
        events = _steps(monitor, cfg.stable_frames)
    assert kinds == [
        ("no frames", "no frames from scripted", False),
        ("black frame", "black frame from scripted", False),
        ("fiducials not found", "fiducials not found: read 0 of 4 (need 2)", False),
    ]
    faults = [e for e in logs if e["event"] == "camera_fault"]
    assert [f["fault"] for f in faults] == ["no frames", "black frame", "fiducials not found"]
    assert all(f["log_level"] == "error" and f["manual_entry"] for f in faults)
    assert [e["event"] for e in logs if e["event"] == "camera_ok"] == ["camera_ok", "camera_ok"]
    # back up: the wager is reported once it has held for K good frames after the faults
    assert {e["box"]: e["amount"] for e in events}[2] == "25"
    status = monitor.status.to_dict()
    assert status["ok"] is True and status["faults"] == 3 and status["reason"] == ""


def test_the_engine_flags_chips_without_a_wager_and_a_change_after_dealing_starts(
    cfg: CameraConfig,
) -> None:
    table = Table(
        parse_setup(
            {
                "type": "table",
                "game": "pontoon-nz-2000",
                "table_id": "T07",
                "boxes": 7,
                "decks": 6,
                "min_bet": 5,
                "max_bet": 1000,
                "rules": {},
            },
            line=1,
        )
    )
    line = 1

    def apply(obj: dict[str, Any]) -> list[Any]:
        nonlocal line
        line += 1
        return list(table.apply(parse_event(obj, line=line)).flags)

    synthetic = SyntheticSource(cfg, seed=9)
    monitor = CameraMonitor(cfg, synthetic)
    apply({"type": "shuffle", "decks": 6, "cut_card": 200})
    apply({"type": "bet", "box": 1, "player": "ann", "amount": 25})
    apply({"type": "bet", "box": 4, "player": "ben", "amount": 10})
    # chips left in box 6, where nobody has bet
    synthetic.set_wagers({1: 25, 4: 10, 6: 25})
    flags = [f for e in _steps(monitor, cfg.stable_frames + 1) for f in apply(e)]
    flags += apply({"type": "no_more_bets"})
    assert [(f.rule, f.box) for f in flags] == [("5.2", 6)]
    synthetic.set_wagers({1: 25, 4: 10})
    assert [f for e in _steps(monitor, cfg.stable_frames + 1) for f in apply(e)] == []
    apply({"type": "card", "card": "9S"})  # dealing has begun
    # past-posting: a $25 chip slipped under box 4's stack after no more bets
    synthetic.set_wagers({1: 25, 4: 35})
    events = _steps(monitor, cfg.stable_frames + 1)
    assert [(e["box"], e["amount"]) for e in events] == [(4, "35")]
    flags = [f for e in events for f in apply(e)]
    assert [(f.rule, f.box) for f in flags] == [("5.5", 4)]
    assert Decimal("35") == Decimal(events[0]["amount"])


def test_a_camera_bumped_mid_shift_finds_the_layout_again_without_a_false_change(
    cfg: CameraConfig,
) -> None:
    synthetic = SyntheticSource(cfg, seed=21)
    synthetic.set_wagers({3: 75, 5: 40})
    monitor = CameraMonitor(cfg, synthetic)
    first = _steps(monitor, cfg.stable_frames)
    assert {e["box"]: e["amount"] for e in first}[3] == "75"
    before = monitor.fix
    assert before is not None
    # bumped: the camera turns by two degrees and its aim moves 3-4 cm along the layout
    shot = synthetic.look.camera
    synthetic.look = replace(
        synthetic.look,
        camera=replace(
            shot,
            target_mm=(shot.target_mm[0] + 30, shot.target_mm[1] + 20),
            yaw_deg=shot.yaw_deg + 2,
            tilt_deg=shot.tilt_deg - 1,
        ),
    )
    later = _steps(monitor, 2 * cfg.stable_frames)
    assert later == []  # same chips, so nothing to report
    assert monitor.status.ok
    assert monitor.fix is not None and monitor.fix is not before
    reading = monitor.last_reading
    assert reading is not None
    assert (reading.boxes[3].amount, reading.boxes[5].amount) == (75, 40)
