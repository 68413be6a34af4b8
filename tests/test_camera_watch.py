"""The overhead camera as the layout's watcher, and "no more bets" waiting for the cameras.

- The watcher (``drivers.camera.watch``) on frames of the layout renderer through the real
  monitor: a hand passing over the boxes after "no more bets" is no change; a chip added or a
  stack taken is one change of that box, with its pictures before and after.
- The live stand-in (the demo's camera, through the real feed and service) slowed down: a wager
  placed just before the call is waited for and becomes the box's wager, not a 5.5; with the
  wait taken away the same wager is a change after the call, flagged 5.5 with its stills kept
  beside the record (so the test can fail).
- The round explains a change: a box whose hand went bust (collected) is not flagged; another
  box that changed with nothing in the round is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from engine_dsl import run

from controller.service.app import Table, open_table
from controller.service.core import TableService
from drivers.camera import load_camera_config
from drivers.camera.config import CameraConfig
from drivers.camera.monitor import CameraMonitor
from drivers.camera.render import Hand, SyntheticSource

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "config" / "table.example.toml"
TABLE = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "W1",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}


@pytest.fixture(scope="module")
def cfg() -> CameraConfig:
    return load_camera_config(EXAMPLE)


def _settle(monitor: CameraMonitor, n: int) -> list[Any]:
    changes = []
    for _ in range(n):
        monitor.step()
        assert monitor.status.ok, monitor.status.reason
        changes.extend(monitor.changes)
    return changes


def _passing_hand(cfg: CameraConfig, t: float) -> Hand:
    """A hand sweeping across the layout from the first box to the last (t from 0 to 1)."""
    boxes = sorted(cfg.boxes, key=lambda b: b.center_mm[0])
    (x0, y0), (x1, y1) = boxes[0].center_mm, boxes[-1].center_mm
    return Hand((x0 + (x1 - x0) * t, y0 + (y1 - y0) * t), 90.0, (200, 160, 130), 1.0)


@pytest.mark.parametrize("seed", [3, 6])
def test_hands_are_no_change_and_a_chip_added_or_a_stack_taken_is(
    cfg: CameraConfig, seed: int
) -> None:
    source = SyntheticSource(cfg, seed=seed)
    monitor = CameraMonitor(cfg, source)
    source.set_wagers({1: 25, 3: 15, 5: 5})
    assert _settle(monitor, 10) == []  # not armed: nothing is compared
    assert monitor.watcher.settled()
    monitor.watcher.arm()  # "no more bets"
    changes = []
    for i in range(8):  # the dealer's hand passes over every box
        source.set_hand(_passing_hand(cfg, i / 7))
        changes.extend(_settle(monitor, 1))
        covered = [b for b, st in monitor.watcher.state.items() if st.covered]
        assert covered, f"frame {i}: the hand over the layout covers no box"
    source.set_hand(None)
    changes.extend(_settle(monitor, 6))
    assert changes == [], [(c.box, c.area_mm2) for c in changes]
    source.set_wagers({1: 25, 3: 16, 5: 5})  # a white $1 chip added to box 3
    added = _settle(monitor, 9)
    assert [c.box for c in added] == [3]
    source.set_wagers({1: 25, 3: 16})  # box 5's stack taken
    taken = _settle(monitor, 9)
    assert [c.box for c in taken] == [5]
    for change in (*added, *taken):
        (hb, wb), (ha, wa) = change.before.shape[:2], change.after.shape[:2]
        # The same part of the frame (a pixel more or less when the layout was placed again).
        assert abs(hb - ha) <= 3 and abs(wb - wa) <= 3 and hb * wb > 5000
        after = cv2.resize(change.after, (wb, hb))
        # The pictures differ where the stack changed.
        assert np.abs(change.before.astype(int) - after.astype(int)).max() > 60


# ----- the live stand-in, slowed --------------------------------------------------------------


def _opened(tmp_path: Path) -> Table:
    return open_table(TABLE, f"sqlite:///{tmp_path / 'w1.db'}", {}, spool=False)


def _wait(what: Callable[[], bool], seconds: float, why: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if what():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out: {why}")


def _camera_flags(service: TableService) -> list[Any]:
    rnd = service.view().round
    return [f for f in (rnd.flags if rnd is not None else ()) if f.rule == "5.5"]


@pytest.fixture
def slow_table(tmp_path: Path) -> Iterator[tuple[Table, Any]]:
    from controller.service.camera import SyntheticCamera

    table = _opened(tmp_path)
    service = table.service
    service.submit({"type": "shuffle", "decks": 4, "cut_card": 150}, source="shoe-loader")
    camera = SyntheticCamera.start(service, seed=5)
    source = camera.source
    read = source.read

    def slow() -> Any:  # a camera that delivers about three frames a second
        time.sleep(0.3)
        return read()

    source.read = slow  # type: ignore[method-assign]
    try:
        yield table, camera
    finally:
        camera.stop()
        table.close()


def _boxes(service: TableService) -> list[int]:
    rnd = service.view().round
    return [b.number for b in rnd.boxes] if rnd is not None else []


def _call_just_after_a_late_wager(table: Table, camera: Any) -> TableService:
    service = table.service
    camera.place({2: Decimal(25)})
    _wait(
        lambda: 2 in _boxes(service),
        120,
        "the camera's wager for box 2",
    )
    camera.place({2: Decimal(25), 5: Decimal(10)})  # a wager placed just before the call
    service.close_betting()
    assert service.submit({"type": "no_more_bets"}, source="dealer").ok
    return service


def test_no_more_bets_waits_for_a_slow_camera_to_see_a_late_wager(
    slow_table: tuple[Table, Any],
) -> None:
    table, camera = slow_table
    service = _call_just_after_a_late_wager(table, camera)
    # The late wager is the box's (or, unread, the dealer's to key in): never a change.
    assert 5 in _boxes(service) or 5 in service.unsure
    time.sleep(6)  # what a late report would have flagged by now
    assert _camera_flags(service) == []


def test_without_the_wait_the_late_wager_is_a_change_after_the_call(
    slow_table: tuple[Table, Any],
) -> None:
    table, camera = slow_table
    table.service.camera_wait = table.service.camera_frames = 0  # the call waits for nothing
    service = _call_just_after_a_late_wager(table, camera)
    _wait(lambda: bool(_camera_flags(service)), 90, "a 5.5 flag for box 5")
    [flag] = _camera_flags(service)
    assert flag.box == 5 and "changed after no more bets" in flag.message
    stills = service.watch.stills_dir
    assert stills is not None and stills.name == "w1.db.stills"  # beside the record
    names = [p.name for p in stills.iterdir()]
    assert len(names) == 2 and all(n in flag.message for n in names)
    for path in stills.iterdir():
        picture = cv2.imread(str(path))
        assert picture is not None and picture.size > 1000


# ----- what the round explains ------------------------------------------------------------------


def test_a_change_the_round_explains_is_not_flagged_another_is(tmp_path: Path) -> None:
    table = _opened(tmp_path)
    service = table.service
    service.watch.grace = 0.4
    try:
        service.submit({"type": "shuffle", "decks": 4, "cut_card": 150}, source="shoe-loader")
        for box, player in ((2, "bob"), (3, "cat")):
            bet = {"type": "bet", "box": box, "player": player, "amount": "20"}
            assert service.submit(bet, source="camera").ok
        assert service.submit({"type": "no_more_bets"}, source="dealer").ok
        for card in ("9S", "8D", "6H", "7D", "9C"):  # box 2: 9 7; box 3: 8 9; dealer 6
            assert service.submit({"type": "card", "card": card}, source="shoe").ok
        time.sleep(0.5)  # the deal moves no chips; a while later box 2 draws
        assert service.submit({"type": "card", "card": "KD"}, source="shoe").ok  # box 2 busts
        service.watch.changed(2, b"before", b"after", 300.0)  # its chips collected
        service.watch.changed(3, b"before", b"after", 300.0)  # nothing explains this
        time.sleep(0.5)
        service.watch.review()
        flags = _camera_flags(service)
        assert [f.box for f in flags] == [3]
        assert service.watch.explained == 1
    finally:
        table.close()


def test_the_engine_flags_a_changed_stack_only_after_no_more_bets() -> None:
    changed = {"type": "stack_changed", "box": 2, "note": "stills x-before.jpg, x-after.jpg"}
    _table, before = run("bet 2 bob 20", changed)
    assert before == []
    _table, after = run("bet 2 bob 20", "nmb", changed)
    assert [(f.rule, f.box) for f in after] == [("5.5", 2)]
    assert "x-before.jpg" in after[0].message
