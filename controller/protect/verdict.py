"""Clear, watch or alert, with the false-alarm rate each stands for.

Each test gives a z-score whose null distribution is known in theory (standard normal) but, for
the tests on bets and play against the count, only approximately: bets and counts drift
through a shoe, and a few shoes make the cluster-robust error rough. So the thresholds are
calibrated by simulating honest players (flat and bet-varying) of every session length
(``benchmarks/bench_protect.py --calibrate`` writes ``config/protect-calibration.toml``): a
test's ``scale`` is the spread of its z among honest sessions of that length, and a test
watches at ``scale x 2.326`` (1% of honest sessions for that test alone) and alerts at
``scale x 3.090`` (0.1%). The rates stated with a verdict are those measured for all the tests
together on the calibration's honest sessions, by session length, with how many sessions they
rest on; without a calibration file the nominal rates are stated and said to be nominal.

Luck alone (a winner without a sign of skill or knowledge) never alerts: at most it watches.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from controller.rules import CONFIG_DIR

CALIBRATION_FILE: Final = "protect-calibration.toml"
WATCH_Z: Final = 2.326  # one test alone: 1% of honest sessions
ALERT_Z: Final = 3.090  # one test alone: 0.1%
LENGTHS: Final = (500, 1000, 2000, 5000)  # session lengths calibrated (rounds)
TESTS: Final = ("bet_count", "wonging", "index_plays", "knew_next", "knew_hole", "luck")
SKILL_TESTS: Final = ("bet_count", "wonging", "index_plays", "knew_next", "knew_hole")
CLEAR, WATCH, ALERT = "clear", "watch", "alert"


class CalibrationError(ValueError):
    """The calibration file cannot be used: the message names the file and the key."""


def length_bucket(rounds: int) -> int:
    """The calibrated session length nearest to ``rounds`` on a log scale."""
    return min(LENGTHS, key=lambda n: abs(math.log(max(rounds, 1) / n)))


@dataclass(frozen=True)
class Calibration:
    source: str  # "calibrated" or "nominal"
    scale: dict[str, dict[int, float]]  # test -> session length -> spread of honest z
    watch_rate: dict[int, float]  # all tests together, honest sessions of that length
    alert_rate: dict[int, float]
    sessions: dict[int, int]  # honest sessions the rates rest on

    def thresholds(self, test: str, rounds: int) -> tuple[float, float]:
        s = self.scale.get(test, {}).get(length_bucket(rounds), 1.0)
        return WATCH_Z * s, ALERT_Z * s

    def rates(self, rounds: int) -> dict[str, Any]:
        n = length_bucket(rounds)
        if self.source != "calibrated" or n not in self.watch_rate:
            return {
                "session_length": n,
                "watch": 0.01 * len(SKILL_TESTS),
                "alert": 0.001 * len(SKILL_TESTS),
                "basis": "nominal: the tests' theoretical tails added up (not calibrated)",
            }
        return {
            "session_length": n,
            "watch": self.watch_rate[n],
            "alert": self.alert_rate[n],
            "basis": f"measured on {self.sessions[n]:,} simulated honest sessions of {n:,} rounds",
        }


NOMINAL: Final = Calibration("nominal", {}, {}, {}, {})


@cache
def load_calibration(path: str | None = None) -> Calibration:
    path = path or str(CONFIG_DIR / CALIBRATION_FILE)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return NOMINAL
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"{path}: not valid TOML ({exc})") from None
    scale: dict[str, dict[int, float]] = {}
    for test, rows in (data.get("scale") or {}).items():
        if test not in TESTS or not isinstance(rows, dict):
            raise CalibrationError(f"{path}: [scale.{test}]: not a test ({', '.join(TESTS)})")
        scale[test] = {}
        for length, value in rows.items():
            if not length.isdigit() or not isinstance(value, int | float) or value <= 0:
                raise CalibrationError(f"{path}: [scale.{test}] {length} = {value!r}")
            scale[test][int(length)] = float(value)
    rates = data.get("rates") or {}
    watch: dict[int, float] = {}
    alert: dict[int, float] = {}
    sessions: dict[int, int] = {}
    for length, row in rates.items():
        try:
            n = int(length)
            watch[n] = float(row["watch"])
            alert[n] = float(row["alert"])
            sessions[n] = int(row["sessions"])
        except (KeyError, TypeError, ValueError):
            raise CalibrationError(
                f"{path}: [rates.{length}]: needs watch, alert and sessions"
            ) from None
    return Calibration("calibrated", scale, watch, alert, sessions)


def judge(zs: dict[str, float | None], rounds: int, calibration: Calibration) -> dict[str, Any]:
    """The verdict on one session (or dealer) from its tests' z-scores (None: too few data)."""
    level = CLEAR
    reasons: list[str] = []
    for test, z in zs.items():
        if z is None:
            continue
        watch_at, alert_at = calibration.thresholds(test, rounds)
        if z >= alert_at and test in SKILL_TESTS:
            level = ALERT
            reasons.append(f"{test}: z {z:.2f} >= alert {alert_at:.2f}")
        elif z >= watch_at or (z >= alert_at and test == "luck"):
            if level == CLEAR:
                level = WATCH
            reasons.append(f"{test}: z {z:.2f} >= watch {watch_at:.2f}")
    rates = calibration.rates(rounds)
    false_alarm = {CLEAR: None, WATCH: rates["watch"], ALERT: rates["alert"]}[level]
    return {
        "level": level,
        "reasons": reasons,
        "false_alarm_rate": false_alarm,
        "rates": rates,
    }
