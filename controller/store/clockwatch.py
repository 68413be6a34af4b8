"""The table's wall clock, watched against a clock that cannot be set.

An event's ``recorded_at`` is the wall clock's reading, which a person (or a bad NTP server)
can step back or forward. The recorder keeps the events' true order in their sequence
numbers; this module makes sure a step of the wall clock is never silent. Between two events
the wall clock must move as the machine's monotonic clock (``CLOCK_BOOTTIME``, which counts a
suspend too) does. When it has moved back by more than :data:`BACK_TOLERANCE`, or forward by
more than the configured bound beyond it, :meth:`ClockWatch.check` returns a :class:`Step`:
the recorder then records a ``clock`` event before the event it was recording (the engine
raises a ``clock`` flag on it for the dealer's screen) and logs it.

A step back smaller than the tolerance (an NTP correction) is not flagged; the recorder
writes the previous event's time instead, so ``recorded_at`` never runs backwards unless a
``clock`` event says so. After a restart nothing measured the time between the last stored
event and the first new one: only a wall clock behind the last stored event is a step then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

BACK_TOLERANCE = 1.0  # seconds a wall clock may fall back unflagged (kept in order instead)
FORWARD_BOUND = 120.0  # default: seconds a wall clock may run ahead of the monotonic clock


def boottime() -> float:
    """Seconds on a clock nobody can set, that counts a suspend (Linux); else monotonic."""
    try:
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return time.monotonic()


@dataclass(frozen=True)
class Step:
    """The wall clock moved ``step`` seconds beyond what the monotonic clock measured
    (negative: back) between the last event (``was``) and now (``now``)."""

    was: str
    now: str
    elapsed: float | None  # monotonic seconds between them (None: not measured, a restart)
    step: float

    def event(self) -> dict[str, object]:
        body: dict[str, object] = {"type": "clock", "was": self.was, "now": self.now}
        if self.elapsed is not None:
            body["elapsed"] = str(Decimal(repr(round(self.elapsed, 3))))
        return body

    @property
    def back(self) -> bool:
        return self.step < 0


class ClockWatch:
    """The last event's wall time and monotonic time; :meth:`check` compares the next."""

    def __init__(
        self,
        *,
        forward_bound: float = FORWARD_BOUND,
        back_tolerance: float = BACK_TOLERANCE,
        monotonic: Callable[[], float] = boottime,
    ) -> None:
        self.forward_bound = forward_bound
        self.back_tolerance = back_tolerance
        self.monotonic = monotonic
        self.last_wall: str | None = None
        self.last_mono: float | None = None

    def restored(self, recorded_at: str | None) -> None:
        """The newest stored event's time, at a restart (nothing measured since)."""
        self.last_wall, self.last_mono = recorded_at, None

    def check(self, now: str) -> tuple[Step | None, str, float]:
        """What the wall clock's reading ``now`` means: a :class:`Step` to record (or None),
        the time to record the event at (``now``, or the last event's time after a small
        step back), and the monotonic reading taken with it (for :meth:`seen`)."""
        mono = self.monotonic()
        if self.last_wall is None:
            return None, now, mono
        try:
            gap = (_parse(now) - _parse(self.last_wall)).total_seconds()
        except ValueError:
            return None, now, mono
        elapsed = None if self.last_mono is None else max(0.0, mono - self.last_mono)
        step = gap - (elapsed if elapsed is not None else max(gap, 0.0))
        if step < -self.back_tolerance or (elapsed is not None and step > self.forward_bound):
            return Step(self.last_wall, now, elapsed, step), now, mono
        if gap < 0:
            return None, self.last_wall, mono  # a small step back: kept in order, unflagged
        return None, now, mono

    def seen(self, recorded_at: str, mono: float) -> None:
        """An event was recorded at ``recorded_at`` with the monotonic clock at ``mono``."""
        self.last_wall, self.last_mono = recorded_at, mono


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text)
