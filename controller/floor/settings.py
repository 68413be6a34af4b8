"""The floor's settings: its time zone, the gaming day and the shifts; local times in and out.

Every time the floor stores is UTC (the time each event was recorded in the table's hash
chain). People give and read times in the floor's own zone (``Pacific/Auckland`` unless set):
a local time typed without an offset is read in that zone, and one that the zone's clocks
skipped (spring forward) or showed twice (fall back) is refused, naming both readings, rather
than guessed at.

The gaming day starts at the first shift's start (06:00 by default) and runs 24 hours: the
day of 2026-12-01 is 06:00 on 1 December to 06:00 on 2 December, local time. Each shift runs
from its start to the next shift's.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DEFAULT_TZ = "Pacific/Auckland"
DEFAULT_SHIFTS = "day=06:00,swing=14:00,night=22:00"


class InputError(ValueError):
    """A value a person gave the floor that it cannot use; the message says which and why."""


class NotFound(InputError):
    """What was asked for is not on the floor (an unknown table, a time with no round)."""


def _clock(text: str, what: str) -> time:
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", text.strip())
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise InputError(f"{what}: {text!r} is not a time of day (HH:MM)")
    return time(int(m.group(1)), int(m.group(2)))


def parse_shifts(text: str) -> tuple[tuple[str, time], ...]:
    """``"day=06:00,swing=14:00,night=22:00"``: each shift's name and local start, in order."""
    out: list[tuple[str, time]] = []
    for part in text.split(","):
        name, sep, start = part.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[a-z][a-z0-9_-]{0,23}", name):
            raise InputError(
                f"shifts: {part.strip()!r} is not NAME=HH:MM (a lower-case name, then its start)"
            )
        out.append((name, _clock(start, f"shift {name}")))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise InputError(f"shifts: a shift is named twice in {text!r}")
    starts = [s for _, s in out]
    if len(set(starts)) != len(starts):
        raise InputError(f"shifts: two shifts start at the same time in {text!r}")
    return tuple(out)


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(f"time zone {name!r} is not known (e.g. Pacific/Auckland)") from None


@dataclass(frozen=True)
class Window:
    """A span of time [start, end) in UTC, with the words that name it."""

    start: datetime
    end: datetime
    label: str

    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600


@dataclass(frozen=True)
class FloorSettings:
    tz_name: str = DEFAULT_TZ
    shifts_text: str = DEFAULT_SHIFTS
    tz: ZoneInfo = field(init=False, compare=False)
    shifts: tuple[tuple[str, time], ...] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tz", _zone(self.tz_name))
        object.__setattr__(self, "shifts", parse_shifts(self.shifts_text))

    @classmethod
    def from_env(cls, tz: str | None = None, shifts: str | None = None) -> FloorSettings:
        """Given values, else ``FLOORCTL_FLOOR_TZ`` / ``FLOORCTL_FLOOR_SHIFTS``, else defaults."""
        return cls(
            tz or os.environ.get("FLOORCTL_FLOOR_TZ") or DEFAULT_TZ,
            shifts or os.environ.get("FLOORCTL_FLOOR_SHIFTS") or DEFAULT_SHIFTS,
        )

    # ----- reading times --------------------------------------------------------------------

    def local_instant(self, text: str) -> tuple[datetime, bool]:
        """A time a person typed: (the instant in UTC, whether it was given to the minute only).

        ``2026-12-01 21:14`` or ``2026-12-01T21:14:05`` is local; an explicit offset or ``Z``
        is taken as given."""
        raw = text.strip()
        m = re.fullmatch(
            r"(\d{4}-\d{2}-\d{2})[ T](\d{1,2}:\d{2})(:\d{2}(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?",
            raw,
        )
        if not m:
            raise InputError(
                f"{text!r} is not a time: give the local date and time, e.g. "
                '"2026-12-01 21:14" (or with seconds, or with an offset such as +13:00)'
            )
        try:
            moment = datetime.fromisoformat(raw.replace(" ", "T", 1).replace("Z", "+00:00"))
        except ValueError as exc:
            raise InputError(f"{text!r} is not a time: {exc}") from None
        minute_only = m.group(3) is None
        if moment.tzinfo is not None:
            return moment.astimezone(UTC), minute_only
        return self._localize(moment, text), minute_only

    def _localize(self, naive: datetime, shown: str) -> datetime:
        early = naive.replace(tzinfo=self.tz, fold=0)
        late = naive.replace(tzinfo=self.tz, fold=1)
        a, b = early.astimezone(UTC), late.astimezone(UTC)
        for candidate in {a, b}:
            if candidate.astimezone(self.tz).replace(tzinfo=None) != naive:
                raise InputError(
                    f"{shown!r} never happened in {self.tz_name}: the clocks skipped that "
                    "hour (daylight saving began)"
                )
        if a != b:
            offsets = " or ".join(
                self.offset_text(x) for x in (early.utcoffset(), late.utcoffset()) if x
            )
            raise InputError(
                f"{shown!r} happened twice in {self.tz_name} (daylight saving ended): add "
                f"the offset, {offsets}"
            )
        return a

    @staticmethod
    def offset_text(offset: timedelta) -> str:
        minutes = int(offset.total_seconds() // 60)
        sign = "+" if minutes >= 0 else "-"
        minutes = abs(minutes)
        return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"

    def parse_date(self, text: str) -> date:
        try:
            return date.fromisoformat(text.strip())
        except ValueError:
            raise InputError(f"{text!r} is not a date (YYYY-MM-DD, e.g. 2026-12-01)") from None

    # ----- windows ----------------------------------------------------------------------------

    def _at_local(self, day: date, clock: time) -> datetime:
        """The instant a local wall-clock time begins (in a skipped hour, the hour after)."""
        naive = datetime.combine(day, clock)
        moment = naive.replace(tzinfo=self.tz, fold=0).astimezone(UTC)
        return moment

    def gaming_day(self, day: date) -> Window:
        start = self._at_local(day, self.shifts[0][1])
        end = self._at_local(day + timedelta(days=1), self.shifts[0][1])
        return Window(start, end, f"gaming day {day.isoformat()}")

    def shift(self, day: date, name: str) -> Window:
        """Shift ``name`` of the gaming day ``day`` (a shift starting before the day's first
        shift's start belongs to the same gaming day, after midnight)."""
        names = [n for n, _ in self.shifts]
        if name not in names:
            raise InputError(f"no shift {name!r}: the shifts are {', '.join(names)}")
        first = self.shifts[0][1]
        bounds: list[datetime] = []
        for _n, start in self.shifts:
            d = day if start >= first else day + timedelta(days=1)
            bounds.append(self._at_local(d, start))
        bounds.append(self._at_local(day + timedelta(days=1), first))
        i = names.index(name)
        return Window(bounds[i], bounds[i + 1], f"{name} shift of gaming day {day.isoformat()}")

    def range(self, start_text: str, end_text: str) -> Window:
        start, _ = self.local_instant(start_text)
        end, _ = self.local_instant(end_text)
        if end <= start:
            raise InputError(f"{end_text!r} is not after {start_text!r}")
        return Window(start, end, f"{start_text} to {end_text}")

    def today(self, now: datetime | None = None) -> date:
        """The gaming day going on now (before the first shift starts, the day before's)."""
        return self.shift_of(now or datetime.now(UTC))[0]

    def shift_of(self, moment: datetime) -> tuple[date, str]:
        """The gaming day and shift an instant falls in."""
        local = moment.astimezone(self.tz)
        day = local.date()
        if local.time() < self.shifts[0][1]:
            day -= timedelta(days=1)
        for name, _start in self.shifts:
            w = self.shift(day, name)
            if w.start <= moment < w.end:
                return day, name
        return day, self.shifts[-1][0]

    # ----- showing times ----------------------------------------------------------------------

    def local(self, moment: datetime | None) -> str:
        """``2026-12-01 21:14:05 NZDT``."""
        if moment is None:
            return ""
        local = moment.astimezone(self.tz)
        return local.strftime("%Y-%m-%d %H:%M:%S ") + (local.tzname() or "")

    @staticmethod
    def utc(moment: datetime | None) -> str:
        if moment is None:
            return ""
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def parse_recorded(text: str) -> datetime:
    """A ``recorded_at`` of the chain (ISO 8601 UTC, ``Z``) as an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
