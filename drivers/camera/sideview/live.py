"""The side cameras as live stand-ins: whatever wagers the demo places, each camera draws.

:class:`SideViewTable` holds the table's current chips; :meth:`SideViewTable.place` puts each
box's wager down as a dealer would build it (the fewest chips, the larger at the bottom, a
second stack beside the first past 25 chips) and clears the other boxes; :meth:`set_hand`
puts a hand over a box. :meth:`sources` gives one frame source per camera (the protocol of
``drivers.camera.sources.FrameSource``: ``name``, ``read()`` giving a BGR frame or None,
``close()``), so the demo and ``floorctl run`` on stand-ins feed the counting camera's reader
the same way a real camera would. Each source renders its picture once per change of the
table and then shows it with fresh sensor noise, frame after frame.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from drivers.camera.sideview.frames import KIND_CODES, SideRenderer, stream_rng
from drivers.camera.sideview.optics import expose
from drivers.camera.sideview.raster import trace
from drivers.camera.sideview.sampling import MAX_STACK, draw_hand, draw_optics
from drivers.camera.sideview.scene import Hand, Moment, Stack, build_stack
from drivers.camera.sideview.table import Table, default_table
from drivers.camera.sideview.tiers import TIERS

U8 = npt.NDArray[np.uint8]
STACK_GAP_MM = 4.0  # between two stacks of one wager


def chips_for(table: Table, amount: Decimal | int) -> list[int]:
    """The fewest chips that make ``amount`` whole dollars, largest first (bottom first)."""
    value = Decimal(amount)
    if value < 0 or value != value.to_integral_value():
        raise ValueError(f"wager {amount}: chips come in whole dollars")
    left = int(value)
    out: list[int] = []
    for v in sorted((c.value for c in table.chips), reverse=True):
        n, left = divmod(left, v)
        out += [v] * n
    if left:
        raise ValueError(
            f"wager {amount}: cannot be made from chips of {[c.value for c in table.chips]}"
        )
    return out


class SideViewTable:
    """The chips on the table, as the demo places them, and the cameras that watch them."""

    def __init__(
        self,
        table: Table | None = None,
        *,
        tier: str = "mild",
        seed: int = 0,
        size: tuple[int, int] = (1920, 1080),
    ) -> None:
        self.table = table or default_table()
        self.renderer = SideRenderer(self.table, TIERS[tier], seed, size)
        self.seed = seed
        self._lock = threading.Lock()
        self.render_lock = threading.Lock()  # the renderer's session is shared by the sources
        self._rng = np.random.default_rng(seed)
        self._stacks: tuple[Stack, ...] = ()
        self._hands: tuple[Hand, ...] = ()
        self.version = 0  # bumped at every change of the table
        self.placed: dict[int, Decimal] = {}

    def place(self, wagers: Mapping[int, Decimal | int]) -> None:
        """Each box's wager in chips; boxes not named are cleared. A box that is not on the
        table, or an amount the chips cannot make, is refused before anything changes."""
        stacks: list[Stack] = []
        for box, amount in sorted(wagers.items()):
            try:
                b = self.table.box(box)
            except KeyError:
                boxes = [x.box for x in self.table.boxes]
                raise ValueError(f"box {box} is not on the table (boxes {boxes})") from None
            chips = chips_for(self.table, amount)
            piles = [chips[i : i + MAX_STACK] for i in range(0, len(chips), MAX_STACK)]
            if len(piles) > 2:
                raise ValueError(f"box {box}: {amount} needs more than two stacks of chips")
            # side by side across the view of the camera that covers the box
            vx, vy = self.renderer.viewer[box]
            dx, dy = b.center_mm[0] - vx, b.center_mm[1] - vy
            n = float(np.hypot(dx, dy))
            ax, ay = dy / n, -dx / n
            step = (self.table.chip_diameter_mm + STACK_GAP_MM) / 2
            for i, pile in enumerate(piles):
                off = 0.0 if len(piles) == 1 else (-step if i == 0 else step)
                at = (b.center_mm[0] + ax * off, b.center_mm[1] + ay * off)
                stacks.append(
                    build_stack(
                        self._rng, box, at, pile, self.table.chip_thickness_mm, jitter_mm=0.1
                    )
                )
        with self._lock:
            self._stacks = tuple(stacks)
            self.placed = {b: Decimal(a) for b, a in wagers.items() if Decimal(a) > 0}
            self.version += 1

    def set_hand(self, box: int | None) -> None:
        """A player's hand over ``box`` (None: no hand)."""
        with self._lock:
            if box is None:
                self._hands = ()
            else:
                hand = draw_hand(
                    self._rng, self.table, box, self.renderer.viewer[box], list(self._stacks)
                )
                self._hands = (hand,)
            self.version += 1

    def moment(self) -> tuple[int, Moment]:
        with self._lock:
            return self.version, Moment(self._stacks, self._hands)

    def sources(self) -> list[SideViewSource]:
        return [SideViewSource(self, i) for i in range(len(self.renderer.mounts))]


class SideViewSource:
    """One side camera's frames of the live table (a FrameSource)."""

    VARIANTS = 3  # noisy frames made per picture, then shown in turn

    def __init__(self, live: SideViewTable, index: int) -> None:
        self.live = live
        self.index = index
        self.mount = live.renderer.mounts[index]
        self.name = (
            f"side stand-in {self.mount.name} (boxes {', '.join(map(str, self.mount.boxes))})"
        )
        self._version = -1
        self._frames: list[U8] = []
        self._shown = 0
        self._closed = False
        self._lock = threading.Lock()

    def read(self) -> U8 | None:
        if self._closed:
            return None
        version, moment = self.live.moment()
        with self._lock, self.live.render_lock:
            if version != self._version:
                self._version = version
                self._frames = []
                self._radiance = self._render(moment)
            if len(self._frames) < self.VARIANTS:
                self._frames.append(self._expose(len(self._frames)))
            self._shown += 1
            return self._frames[self._shown % len(self._frames)]

    def _render(self, moment: Moment) -> np.ndarray:
        r = self.live.renderer
        cams, light = r.session(0)
        bg, self._metered = r.background(0, self.index)
        return trace(cams[self.index], r.table, light, bg, moment).radiance

    def _expose(self, k: int) -> U8:
        r = self.live.renderer
        cams, light = r.session(0)
        rng = stream_rng(
            self.live.seed, r.tier.name, 6, 0, KIND_CODES["live"], self._version, self.index, k
        )
        optics = draw_optics(r.tier, rng)
        optics = replace(optics, exposure=optics.exposure * self._metered)
        return expose(cams[self.index], self._radiance, optics, light.white_balance(), rng)

    def close(self) -> None:
        self._closed = True
