"""A wager is reported once it has held for K frames; a hand over the box is not a change."""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from controller.events import parse_event
from drivers.camera.detector import BoxReading, FrameReading
from drivers.camera.fiducials import LayoutFix
from drivers.camera.stability import StabilityTracker, wager_seen_event

FIX = LayoutFix(np.eye(3), (), {}, 0.0)


def frame(**boxes: tuple[int, dict[int, int], float]) -> FrameReading:
    out = {}
    for name, (amount, chips, conf) in boxes.items():
        box = int(name[1:])
        out[box] = BoxReading(box, Decimal(amount), chips, conf)
    return FrameReading(out, FIX)


Seen = tuple[int, dict[int, int], float]
TWENTY_FIVE: Seen = (25, {25: 1}, 0.95)
THIRTY: Seen = (30, {25: 1, 5: 1}, 0.95)
HAND: Seen = (0, {}, 0.0)  # a hand over the box: the detector is unsure


def test_nothing_is_reported_until_k_frames_agree() -> None:
    tracker = StabilityTracker((1, 2), k=4, min_confidence=0.8)
    for _ in range(3):
        assert tracker.update(frame(b1=TWENTY_FIVE, b2=(0, {}, 1.0))) == []
    reports = tracker.update(frame(b1=TWENTY_FIVE, b2=(0, {}, 1.0)))
    assert [(r.box, r.amount, r.previous) for r in reports] == [
        (1, Decimal(25), None),
        (2, Decimal(0), None),
    ]
    # Holding the same wager reports nothing more.
    for _ in range(10):
        assert tracker.update(frame(b1=TWENTY_FIVE, b2=(0, {}, 1.0))) == []


def test_a_hand_passing_over_the_box_is_not_a_change_of_wager() -> None:
    tracker = StabilityTracker((1,), k=4, min_confidence=0.8)
    for _ in range(4):
        tracker.update(frame(b1=TWENTY_FIVE))
    # the hand: unsure frames, and a couple of odd readings at its edge
    sequence = [HAND, HAND, (5, {5: 1}, 0.9), HAND, (5, {5: 1}, 0.9), (5, {5: 1}, 0.9), HAND]
    for reading in sequence + [TWENTY_FIVE] * 6:
        assert tracker.update(frame(b1=reading)) == []
    assert tracker.stable[1].amount == Decimal(25)


def test_a_real_change_is_reported_with_the_wager_before_it() -> None:
    tracker = StabilityTracker((1,), k=3, min_confidence=0.8)
    for _ in range(3):
        tracker.update(frame(b1=TWENTY_FIVE))
    out = [tracker.update(frame(b1=THIRTY)) for _ in range(3)]
    assert out[0] == out[1] == []
    (report,) = out[2]
    assert (report.amount, report.chips, report.previous) == (
        Decimal(30),
        {25: 1, 5: 1},
        Decimal(25),
    )


def test_low_confidence_readings_never_become_stable() -> None:
    tracker = StabilityTracker((1,), k=2, min_confidence=0.8)
    for _ in range(20):
        assert tracker.update(frame(b1=(30, {25: 1, 5: 1}, 0.79))) == []
    assert 1 not in tracker.stable


def test_a_box_read_unsurely_for_k_frames_is_unsure_until_read_surely_for_k() -> None:
    tracker = StabilityTracker((1, 2), k=3, min_confidence=0.8)
    tall = BoxReading(1, Decimal(250), {25: 10}, 0.4, note="stack height between two counts")
    sure = BoxReading(2, Decimal(25), {25: 1}, 0.95)
    for i in range(3):
        tracker.update(FrameReading({1: tall, 2: sure}, FIX))
        assert tracker.unsure == ({} if i < 2 else {1: "stack height between two counts"})
    # A hand passing over box 2 (a frame at a time) leaves it sure; two sure frames of box 1
    # among its unsure ones leave it unsure.
    once = BoxReading(1, Decimal(250), {25: 10}, 0.9)
    for one, (amount, chips, conf) in zip(
        (tall, once, once, tall), (HAND, TWENTY_FIVE, TWENTY_FIVE, HAND), strict=True
    ):
        tracker.update(FrameReading({1: one, 2: BoxReading(2, Decimal(amount), chips, conf)}, FIX))
        assert tracker.unsure == {1: "stack height between two counts"}
    for i in range(3):
        tracker.update(frame(b1=(250, {25: 10}, 0.9), b2=TWENTY_FIVE))
        assert (1 in tracker.unsure) == (i < 2)
    assert tracker.stable[1].amount == Decimal(250)
    # Nothing read at all (no reading for the box) is unsure too, saying so.
    for _ in range(3):
        tracker.update(FrameReading({2: sure}, FIX))
    assert tracker.unsure == {1: "not read surely"}


def test_an_interruption_restarts_the_count() -> None:
    tracker = StabilityTracker((1,), k=3, min_confidence=0.8)
    tracker.update(frame(b1=TWENTY_FIVE))
    tracker.update(frame(b1=TWENTY_FIVE))
    tracker.interrupt()  # the camera dropped out
    assert tracker.update(frame(b1=TWENTY_FIVE)) == []
    tracker.update(frame(b1=TWENTY_FIVE))
    assert [r.amount for r in tracker.update(frame(b1=TWENTY_FIVE))] == [Decimal(25)]


def test_reports_become_wager_seen_events_the_engine_accepts() -> None:
    tracker = StabilityTracker((3,), k=1, min_confidence=0.8)
    (report,) = tracker.update(frame(b3=(30, {25: 1, 5: 1}, 0.9712)))
    event = wager_seen_event(report)
    assert event == {
        "type": "wager_seen",
        "box": 3,
        "amount": "30",
        "chips": {"5": 1, "25": 1},
        "confidence": 0.9712,
        "source": "camera",
    }
    parsed = parse_event(event, line=1)
    assert parsed.to_dict()["amount"] in ("30", 30)
    assert parsed.box == 3


def test_a_box_read_surely_but_never_alike_becomes_unsure_and_settled() -> None:
    # Two counts the detector flips between, each with full confidence: never K frames
    # alike, so no wager is reported; after a while the box is unsure (the dealer keys it
    # in) and "no more bets" no longer waits for it.
    t = StabilityTracker((1,), k=3, min_confidence=0.8)
    t.update(frame(b1=(0, {}, 1.0)))
    for _ in range(3):
        t.update(frame(b1=(0, {}, 1.0)))
    assert t.settled() and 1 not in t.unsure
    for i in range(11):
        t.update(frame(b1=(5, {5: 1}, 1.0)) if i % 2 else frame(b1=(10, {10: 1}, 1.0)))
        assert not t.settled() and 1 not in t.unsure
    t.update(frame(b1=(5, {5: 1}, 1.0)))
    assert t.unsure[1] == "the reading of the box keeps changing"
    assert t.settled()
    for _ in range(3):  # read alike again: sure again
        t.update(frame(b1=(10, {10: 1}, 1.0)))
    assert 1 not in t.unsure and t.stable[1].amount == 10
