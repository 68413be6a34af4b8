"""The side view's truth files: totals, seeds, and what each camera can see.

Occlusion is checked on constructed cases whose answer follows from the geometry alone (a
stack set straight behind another on the camera's line of sight is hidden from it and seen by
the camera at the other corner), not from the renderer's own bookkeeping.
"""

from __future__ import annotations

import math
from collections import Counter
from decimal import Decimal

import numpy as np
import pytest

from drivers.camera.sideview.frames import SideRenderer
from drivers.camera.sideview.sampling import build_hand, draw_moment
from drivers.camera.sideview.scene import Moment, build_stack
from drivers.camera.sideview.table import NEAR_CHIPS, default_table
from drivers.camera.sideview.tiers import MILD, PAIR, TIERS

T = 3.3


@pytest.mark.parametrize("tier", list(TIERS))
def test_drawn_moments_keep_to_the_tier(tier: str) -> None:
    table = default_table(NEAR_CHIPS)
    viewers = {b.box: (0.0, 0.0) for b in table.boxes}
    values = {c.value for c in table.chips}
    for i in range(60):
        m = draw_moment(table, TIERS[tier], viewers, np.random.default_rng(i))
        for s in m.stacks:
            assert 1 <= len(s.chips) <= 25
            assert set(s.values) <= values
            assert [c.z for c in s.chips] == pytest.approx([k * T for k in range(len(s.chips))])
        if tier == "mild":
            assert not m.hands and all(not s.own for s in m.stacks)
            assert all(s.role == "wager" for s in m.stacks)


def _check_totals(truth: dict) -> None:  # type: ignore[type-arg]
    for box, b in truth["boxes"].items():
        chips = [v for s in b["stacks"] for v in s["chips"]]
        assert Decimal(b["total"]) == sum(chips), box
        assert {int(k): n for k, n in b["chips"].items()} == dict(Counter(chips)), box
        for s in b["stacks"]:
            assert Decimal(s["total"]) == sum(s["chips"])
        # a player's own chips stand behind the box and are never part of its wager
        assert b["player_chips_present"] == bool(b["player_chips"])


def test_truth_totals_are_the_sums_of_the_chips() -> None:
    r = SideRenderer(default_table(), TIERS["hard"], 7, (1920, 1080))
    seen_player = False
    for i in range(3):
        for f in r.shoot(
            0,
            draw_moment(r.table, r.tier, r.viewer, np.random.default_rng(40 + i)),
            "play",
            i,
            "p",
            only=[0],
        ):
            _check_totals(f.truth)
            seen_player |= any(b["player_chips_present"] for b in f.truth["boxes"].values())
    assert seen_player


def _one(tier_seed: int, seed: int) -> list[bytes]:
    r = SideRenderer(default_table(), MILD, seed, (1920, 1080))
    r.session(0)
    moment = draw_moment(r.table, r.tier, r.viewer, np.random.default_rng(tier_seed))
    return [f.data for f in r.shoot(0, moment, "play", 0, "p", only=[1])]


def test_the_same_seed_gives_the_same_frame_bit_for_bit() -> None:
    a = _one(3, 11)
    b = _one(3, 11)
    assert a == b
    assert _one(3, 12) != a  # another seed: another mount, another picture


def _along(frm: tuple[float, float], to: tuple[float, float], mm: float) -> tuple[float, float]:
    d = math.dist(frm, to)
    return (to[0] + (to[0] - frm[0]) / d * mm, to[1] + (to[1] - frm[1]) / d * mm)


def test_a_stack_behind_another_is_hidden_from_one_camera_and_seen_by_the_other() -> None:
    r = SideRenderer(default_table(), PAIR, 5, (1920, 1080))
    names = [m.name for m in r.mounts]
    left = names.index("L2")  # boxes 3, 4 from the tray's left corner
    right = names.index("R2")  # boxes 4, 5 from the right corner
    cams, _ = r.session(0)
    box = r.table.box(4)
    eye = (float(cams[left].C[0]), float(cams[left].C[1]))
    rng = np.random.default_rng(0)
    # 60 mm apart on the left camera's line of sight: from the right corner, 44 deg round,
    # they stand 42 mm apart across the view, more than a chip's width
    front = build_stack(rng, 4, _along(eye, box.center_mm, -30.0), [5] * 6, T)
    back = build_stack(rng, 4, _along(eye, box.center_mm, 30.0), [25] * 4, T, role="behind")
    player = build_stack(rng, 4, r.table.behind(box, 130.0), [100] * 7, T, own=True, role="player")
    frames = {
        f.camera: f.truth
        for f in r.shoot(0, Moment((front, back, player)), "play", 0, "p", only=[left, right])
    }
    t = frames["L2"]["boxes"]["4"]
    assert t["total"] == "130" and t["player_chips_present"]
    f_view, b_view = (s["views"] for s in t["stacks"])
    assert f_view["L2"]["state"] == "visible" and f_view["R2"]["state"] == "visible"
    assert b_view["L2"]["state"] == "occluded" and b_view["L2"]["hidden_by"] == ["stack"]
    assert b_view["L2"]["hidden_chips"] == [0, 1, 2, 3]  # shorter, wholly behind
    assert b_view["R2"]["state"] == "visible"
    # the right camera sees both whole: the box can be read, so unsure is not excused
    assert t["unsure_ok"] is False and t["reasons"] == ["L2:occluded"]
    # both frames tell the same box the same way
    assert frames["R2"]["boxes"]["4"]["stacks"] == [
        {**s, "foot_px": s2["foot_px"], "top_px": s2["top_px"], "distance_mm": s2["distance_mm"]}
        for s, s2 in zip(t["stacks"], frames["R2"]["boxes"]["4"]["stacks"], strict=True)
    ]


def test_a_taller_stack_behind_shows_its_top_but_is_still_occluded() -> None:
    r = SideRenderer(default_table(), MILD, 5, (1920, 1080))
    cams, _ = r.session(0)
    i = [m.name for m in r.mounts].index("centre")
    box = r.table.box(4)
    eye = (float(cams[i].C[0]), float(cams[i].C[1]))
    rng = np.random.default_rng(1)
    front = build_stack(rng, 4, _along(eye, box.center_mm, -21.0), [5] * 5, T)
    back = build_stack(rng, 4, _along(eye, box.center_mm, 21.0), [1] * 18, T)
    (f,) = r.shoot(0, Moment((front, back)), "play", 0, "p", only=[i])
    views = [s["views"]["centre"] for s in f.truth["boxes"]["4"]["stacks"]]
    assert views[0]["state"] == "visible"
    assert views[1]["state"] == "occluded"
    hidden = views[1]["hidden_chips"]
    # the lowest chips are behind the front stack, the top ones stand clear above it
    assert hidden[0] == 0 and 17 not in hidden and len(hidden) >= 4
    assert f.truth["boxes"]["4"]["unsure_ok"] is True  # the only camera cannot see it whole


def test_a_hand_in_front_of_a_stack_is_said_to_hide_it() -> None:
    r = SideRenderer(default_table(), MILD, 5, (1920, 1080))
    cams, _ = r.session(0)
    i = [m.name for m in r.mounts].index("centre")
    box = r.table.box(4)
    eye = (float(cams[i].C[0]), float(cams[i].C[1]))
    rng = np.random.default_rng(2)
    stack = build_stack(rng, 4, box.center_mm, [25] * 10, T)
    wrist = _along(eye, box.center_mm, -120.0)
    hand = build_hand(rng, 4, "front", (wrist[0] - 60, wrist[1], 26.0), 90.0, droop_deg=8)
    (f,) = r.shoot(0, Moment((stack,), (hand,)), "play", 0, "p", only=[i])
    b = f.truth["boxes"]["4"]
    view = b["stacks"][0]["views"]["centre"]
    assert b["hand"] and b["unsure_ok"] and "hand" in b["reasons"]
    assert view["state"] == "occluded" and "hand" in view["hidden_by"]
    # without the hand the same stack is seen whole
    (g,) = r.shoot(0, Moment((stack,)), "play", 1, "p", only=[i])
    assert g.truth["boxes"]["4"]["stacks"][0]["views"]["centre"]["state"] == "visible"
