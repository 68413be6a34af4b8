"""Line noise: misreads counted, collapsed and judged, with no clock of its own.

A damaged barcode gives one misread now and then. A noisy line (a loose cable, interference,
a wrong baud rate) gives a flood of them, and each would be an audited event and a flag. The
:class:`NoiseGate` sits between the framer and the reader's consumer:

- **Runs.** Misreads with no valid line between them are one *run*, reported as a single
  :class:`~drivers.shoe.events.Misread` carrying the run's ``count`` (the first line's raw
  bytes and reason, since the first is the one most likely to be a card). A run ends at the
  next valid line, after ``run_gap`` seconds without another misread, at most every
  ``run_max`` seconds while it lasts, and when the stream ends.
- **Nothing real is dropped.** Every valid line passes straight through, in order: a run
  that came before it is reported first, and a card read amid the noise is still a card.
- **The rate.** More than ``limit`` misreads within ``window`` seconds is *line noise*, a
  device fault (:meth:`NoiseGate.noise` gives the reason); it clears once ``window`` seconds
  pass without a misread.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .events import Misread, ShoeEvent

DEFAULT_LIMIT = 5
DEFAULT_WINDOW = 10.0


@dataclass
class _Run:
    first: Misread
    started: float
    last: float
    count: int = 1

    def event(self) -> Misread:
        if self.count == 1:
            return self.first
        return Misread(
            self.first.raw,
            f"{self.count} misreads in a row; the first: {self.first.reason}",
            self.count,
        )


class NoiseGate:
    """Collapses runs of misreads and tells line noise. Feed it events with the time."""

    def __init__(
        self,
        limit: int = DEFAULT_LIMIT,
        window: float = DEFAULT_WINDOW,
        *,
        run_gap: float = 0.3,
        run_max: float = 5.0,
    ) -> None:
        if limit < 1:
            raise ValueError(f"noise limit {limit} is not a positive number of misreads")
        if window <= 0:
            raise ValueError(f"noise window {window} s is not positive")
        self.limit = limit
        self.window = window
        self.run_gap = run_gap
        self.run_max = run_max
        self._run: _Run | None = None
        self._times: deque[float] = deque(maxlen=limit + 1)  # the latest misreads' times
        self._noisy_since: float | None = None
        self.misreads = 0  # misread lines seen, all told

    def feed(self, event: ShoeEvent, now: float) -> list[ShoeEvent]:
        """What to pass on, in order, now that ``event`` was read."""
        if not isinstance(event, Misread):
            out = self.flush()
            out.append(event)
            return out
        self.misreads += event.count
        for _ in range(min(event.count, self.limit + 1)):
            self._times.append(now)
        noisy = len(self._times) > self.limit and now - self._times[0] <= self.window
        if noisy and self._noisy_since is None:
            self._noisy_since = now
        run = self._run
        if run is None:
            self._run = _Run(event, now, now, event.count)
            return []
        run.count += event.count
        run.last = now
        if now - run.started >= self.run_max:
            return self.flush()
        return []

    def feed_all(self, events: list[ShoeEvent], now: float) -> list[ShoeEvent]:
        out: list[ShoeEvent] = []
        for event in events:
            out.extend(self.feed(event, now))
        return out

    def tick(self, now: float) -> list[ShoeEvent]:
        """What to pass on now that time has passed with nothing read (a run may end)."""
        run = self._run
        if run is not None and (
            now - run.last >= self.run_gap or now - run.started >= self.run_max
        ):
            return self.flush()
        return []

    def flush(self) -> list[ShoeEvent]:
        """End the run in progress (the stream ended, or a valid line came)."""
        run, self._run = self._run, None
        return [] if run is None else [run.event()]

    def noise(self, now: float) -> str | None:
        """Why the line counts as noisy now, or None."""
        if self._noisy_since is None:
            return None
        last = self._times[-1] if self._times else self._noisy_since
        if now - last >= self.window:
            self._noisy_since = None
            self._times.clear()
            return None
        return f"line noise: more than {self.limit} misreads within {self.window:g} s"
