"""The calibration picture's labels never cover each other (they did: each box's three lines
ran into the next box's)."""

from __future__ import annotations

import itertools

import numpy as np

from drivers.camera.overlay import Labels, _text


def test_labels_asked_for_the_same_place_are_moved_apart() -> None:
    labels = Labels(640, 360)
    for i in range(12):
        # Every label asked at nearly the same spot, long enough to reach the next ones.
        labels.place(f"$1250  5x$100 10x$25 4x$5  box {i}", (100 + 8 * i, 100))
    assert len(labels.placed) == 12
    for a, b in itertools.combinations(labels.placed, 2):
        overlap = a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
        assert not overlap, (a, b)
    for left, top, right, bottom in labels.placed:
        assert 0 <= left and right <= 640 and 0 <= top and bottom <= 360


def test_a_label_is_drawn_where_it_was_placed() -> None:
    img = np.zeros((200, 300, 3), np.uint8)
    labels = Labels(300, 200)
    _text(img, "box 1", (10, 40), (255, 255, 255), labels)
    _text(img, "box 2", (12, 40), (255, 255, 255), labels)
    first, second = labels.placed
    assert second[1] >= first[3]  # the second moved below the first
    assert img[first[1] + 1 : first[3], first[0] : first[2]].any()
    assert img[second[1] + 1 : second[3], second[0] : second[2]].any()
