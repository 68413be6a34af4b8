"""The side cameras' live stand-in: the wagers the demo places are the chips each camera draws."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from drivers.camera.sideview.live import SideViewTable, chips_for
from drivers.camera.sideview.table import default_table


def test_chips_for_a_wager_are_the_fewest_largest_first() -> None:
    t = default_table()
    assert chips_for(t, Decimal(1631)) == [1000, 500, 100, 25, 5, 1]
    assert sum(chips_for(t, 130)) == 130
    with pytest.raises(ValueError, match="whole dollars"):
        chips_for(t, Decimal("2.50"))


def _region(live: SideViewTable, cam: int, box: int, frame: np.ndarray) -> np.ndarray:
    """The picture around a box: from the cloth at its centre up to a tall stack's height."""
    c = live.renderer.base[cam]
    b = live.table.box(box)
    pts = np.array([[b.center_mm[0], b.center_mm[1], z] for z in (0.0, 60.0)])
    (u0, v0), (_, v1) = c.project(pts)
    half = int(c.k.fx * 30 / np.linalg.norm(np.array([*b.center_mm, 0.0]) - c.C))
    return frame[int(v1) : int(v0) + 5, int(u0) - half : int(u0) + half].astype(np.int16)


def _changed(a: np.ndarray, b: np.ndarray) -> float:
    """Share of pixels that differ by more than the sensor's noise could make them."""
    return float((np.abs(a - b).max(axis=2) > 30).mean())


def test_placed_wagers_appear_in_their_boxes_only() -> None:
    live = SideViewTable(seed=3)
    sources = live.sources()
    assert [s.mount.name for s in sources] == ["left", "centre", "right"]
    centre = sources[1]
    empty = centre.read()
    assert empty is not None and empty.shape == (1080, 1920, 3)
    live.place({4: Decimal(130)})
    full = centre.read()
    assert full is not None
    changed = _changed(_region(live, 1, 4, full), _region(live, 1, 4, empty))
    still = _changed(_region(live, 1, 3, full), _region(live, 1, 3, empty))
    assert changed > 0.1 and still < 0.005, (changed, still)
    assert live.placed == {4: Decimal(130)}
    # the chips drawn are the wager's
    _, moment = live.moment()
    assert sum(v for s in moment.stacks for v in s.values) == 130
    # frames after a change differ only by the sensor's noise until the table changes again
    again = centre.read()
    assert again is not None and np.abs(again.astype(np.int16) - full).mean() < 4
    live.place({})
    cleared = centre.read()
    assert cleared is not None
    assert _changed(_region(live, 1, 4, cleared), _region(live, 1, 4, empty)) < 0.005


def test_bad_wagers_are_refused_before_anything_changes() -> None:
    live = SideViewTable(seed=1)
    live.place({2: 25})
    with pytest.raises(ValueError, match="box 9 is not on the table"):
        live.place({9: 5})
    with pytest.raises(ValueError, match="more than two stacks"):
        live.place({2: 51_000})  # 51 chips of $1,000: three stacks of at most 25
    assert live.placed == {2: Decimal(25)}


def test_a_closed_source_gives_no_frames() -> None:
    live = SideViewTable(seed=2)
    src = live.sources()[0]
    src.close()
    assert src.read() is None
