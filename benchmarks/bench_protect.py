"""Game protection measured on a simulated population of players (issue 29).

    .venv/bin/python benchmarks/bench_protect.py [--sessions 20] [--honest-sessions 40]
        [--games pontoon-nz-2000,blackjack] [--jobs 2] [--calibrate] [--speed]

For each game and player type of :mod:`benchmarks.protect_population`, plays sessions of 5,000
rounds and judges the studied player on the first 500, 1,000, 2,000 and 5,000 rounds, printing
per type and length the share of sessions alerted and watched; per dealer, the share of
favouring dealers (D2 at a ``favoured`` table) and of honest dealers alerted; and the share of
honest 8-hour shifts (480 rounds) whose result lies in its 95% hold band.

Seeds: ``--calibrate`` plays the honest types on the calibration seeds ("cal-<k>") and writes
``config/protect-calibration.toml`` (each test's spread among honest sessions of each length,
and the rates of watch and alert that result); the report is always on other seeds
("report-<k>"), so the thresholds are judged on sessions they were not fitted to.

``--speed``: the analysis of one table's day (500 rounds, from its events through the engine)
in CPU seconds, against the engine replaying the same events alone in the same run.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.protect_population import (  # noqa: E402
    DEALERS,
    HONEST,
    PLAYER,
    TYPES,
    play_session,
)
from controller.protect.analysis import (  # noqa: E402
    analyse_dealer,
    analyse_session,
    dealer_verdict,
    hold,
    sessions,
)
from controller.protect.record import TableRecord  # noqa: E402
from controller.protect.verdict import (  # noqa: E402
    ALERT_Z,
    LENGTHS,
    NOMINAL,
    TESTS,
    WATCH_Z,
    Calibration,
    judge,
    load_calibration,
)
from controller.rules import CONFIG_DIR  # noqa: E402

SHIFT_ROUNDS = 480


def prefix(rec: TableRecord, n: int) -> TableRecord:
    """The table's first ``n`` rounds, with the shuffles of the shoes they finished."""
    rounds = rec.rounds[:n]
    last_shoe = rounds[-1].shoe if rounds else 0
    return rec.restricted(rounds, shuffles=[s for s in rec.shuffles if s.shoe < last_shoe])


def session_zs(doc: dict[str, Any]) -> dict[str, float | None]:
    zs = {
        "bet_count": doc["bet_against_count"]["z"],
        "wonging": doc["play_against_count"]["z"],
        "index_plays": doc["index_plays"]["z"],
        "knew_next": doc["knew_next_card"]["z"],
        "luck": doc["luck"]["z"],
    }
    if "knew_hole_card" in doc:
        zs["knew_hole"] = doc["knew_hole_card"]["z"]
    return zs


def run_one(task: tuple[str, str, str, int]) -> dict[str, Any]:
    """One session: the studied player's z-scores (and rounds) at each length, the dealers'."""
    game, kind, seed, longest = task
    rec, _ = play_session(game, kind, longest, seed)
    out: dict[str, Any] = {"game": game, "kind": kind, "seed": seed, "lengths": {}, "shifts": []}
    for n in LENGTHS:
        if n > longest:
            continue
        part = prefix(rec, n)
        mine = [s for s in sessions(part, split=False) if s.player == PLAYER]
        entry: dict[str, Any] = {}
        if mine:
            doc = analyse_session(mine[0], NOMINAL)
            entry["zs"] = session_zs(doc)
            entry["rounds"] = doc["rounds"]
        dealers = {}
        for d in DEALERS if n >= 2000 else ():
            dd = analyse_dealer([part], d, NOMINAL)
            dealers[d] = {
                "zs": {},  # several dealers: the contrast between them decides
                "pair_z": dd["worst_player_z_corrected"],
                "players": dd["contrast_tests"],
                "rounds": dd["scorecard"]["rounds"],
            }
        entry["dealers"] = dealers
        out["lengths"][n] = entry
    if kind in HONEST:
        for start in range(0, len(rec.rounds) - SHIFT_ROUNDS + 1, SHIFT_ROUNDS):
            h = hold(((rec, r) for r in rec.rounds[start : start + SHIFT_ROUNDS]), {})
            out["shifts"].append(not h["outside_band"])
    return out


def play_all(tasks: list[tuple[str, str, str, int]], jobs: int) -> list[dict[str, Any]]:
    if jobs <= 1:
        return [run_one(t) for t in tasks]
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return list(pool.map(run_one, tasks, chunksize=2))


def calibrate(results: list[dict[str, Any]]) -> Calibration:
    """Each test's spread among honest sessions, by length; then the union rates."""
    by: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in results:
        for n, entry in r["lengths"].items():
            for test, z in (entry.get("zs") or {}).items():
                if z is not None:
                    by[(test, n)].append(z)
    scale: dict[str, dict[int, float]] = defaultdict(dict)
    for (test, n), zs in by.items():
        zs.sort()
        q99 = zs[min(len(zs) - 1, math.ceil(0.99 * len(zs)) - 1)]
        q95 = zs[min(len(zs) - 1, math.ceil(0.95 * len(zs)) - 1)]
        # The spread of the upper tail, never below the theory's.
        scale[test][n] = round(max(1.0, q99 / WATCH_Z, q95 / 1.645), 3)
    draft = Calibration("calibrated", dict(scale), {}, {}, {})
    watch: dict[int, float] = {}
    alert: dict[int, float] = {}
    count: dict[int, int] = {}
    for n in LENGTHS:
        levels = [
            judge(e["zs"], n, draft)["level"]
            for r in results
            if (e := r["lengths"].get(n)) and e.get("zs")
        ]
        count[n] = len(levels)
        watch[n] = round(sum(1 for v in levels if v != "clear") / max(len(levels), 1), 4)
        alert[n] = round(sum(1 for v in levels if v == "alert") / max(len(levels), 1), 4)
    return Calibration("calibrated", dict(scale), watch, alert, count)


def write_calibration(cal: Calibration, path: Path, note: str) -> None:
    out = [
        "# Thresholds of game protection, calibrated on simulated honest players by",
        f"# benchmarks/bench_protect.py --calibrate ({note}).",
        "# scale: the spread of each test's z among honest sessions of each length (1 = the",
        f"# theory's); a test watches at scale x {WATCH_Z} and alerts at scale x {ALERT_Z}.",
        "# rates: the share of those honest sessions watched or alerted by all tests together.",
        "",
    ]
    for test in TESTS:
        rows = cal.scale.get(test)
        if not rows:
            continue
        out.append(f"[scale.{test}]")
        out.extend(f'"{n}" = {rows[n]}' for n in sorted(rows))
        out.append("")
    for n in sorted(cal.watch_rate):
        out.append(f'[rates."{n}"]')
        out.append(f"watch = {cal.watch_rate[n]}")
        out.append(f"alert = {cal.alert_rate[n]}")
        out.append(f"sessions = {cal.sessions[n]}")
        out.append("")
    path.write_text("\n".join(out), encoding="utf-8")


def report(results: list[dict[str, Any]], cal: Calibration) -> None:
    print(f"\nthresholds: {cal.source}")
    print(f"{'game':<17}{'type':<20}" + "".join(f"{n:>16,}" for n in LENGTHS))
    print(f"{'':<37}" + "".join(f"{'alert / watch':>16}" for _ in LENGTHS))
    table: dict[tuple[str, str], dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    dealer_rows: dict[tuple[str, str], dict[int, list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    shifts: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        for n, e in r["lengths"].items():
            if e.get("zs"):
                table[(r["game"], r["kind"])][n].append(judge(e["zs"], e["rounds"], cal)["level"])
            for d, dd in e["dealers"].items():
                who = "favouring" if (r["kind"] == "favoured" and d == "D2") else "honest"
                if who == "honest" and r["kind"] == "favoured":
                    who = "honest (favoured's table)"
                elif who == "honest":
                    who = (
                        "honest ("
                        + ("knower's table" if r["kind"].startswith("knower") else "other tables")
                        + ")"
                    )
                v = dealer_verdict(dd["zs"], dd["pair_z"], dd["players"], dd["rounds"], cal)
                dealer_rows[(r["game"], who)][n].append(v["level"])
        shifts[r["game"]].extend(r["shifts"])
    for (game, kind), rows in sorted(
        table.items(), key=lambda kv: (kv[0][0], TYPES.index(kv[0][1]))
    ):
        cells = []
        for n in LENGTHS:
            v = rows.get(n, [])
            if not v:
                cells.append(f"{'-':>16}")
                continue
            a = sum(1 for x in v if x == "alert") / len(v)
            w = sum(1 for x in v if x == "watch") / len(v)
            cells.append(f"{a:>8.1%} /{w:>6.1%}")
        print(
            f"{game:<17}{kind:<20}"
            + "".join(cells)
            + f"   ({len(rows.get(LENGTHS[0], []))} sessions)"
        )
    print("\ndealers (per dealer, over the rounds they dealt in the session)")
    for (game, who), rows in sorted(dealer_rows.items()):
        cells = []
        for n in LENGTHS:
            v = rows.get(n, [])
            a = sum(1 for x in v if x == "alert") / len(v) if v else math.nan
            w = sum(1 for x in v if x == "watch") / len(v) if v else math.nan
            cells.append(f"{a:>8.1%} /{w:>6.1%}")
        print(
            f"{game:<17}{who + ' dealer':<20}"
            + "".join(cells)
            + f"   ({len(rows.get(LENGTHS[-1], []))} dealer-sessions)"
        )
    print(f"\nhold: honest {SHIFT_ROUNDS}-round shifts within their 95% band")
    for game, inside in sorted(shifts.items()):
        if inside:
            share = sum(inside) / len(inside)
            se = math.sqrt(share * (1 - share) / len(inside))
            print(f"  {game:<17} {share:.1%} ± {se:.1%} of {len(inside)} shifts")


def speed() -> None:
    """CPU seconds to analyse a 500-round day from its events, beside the engine alone."""
    from controller.engine import Table
    from controller.events import parse_event, parse_setup
    from controller.protect.analysis import analyse
    from controller.protect.record import read_table

    for game in ("pontoon-nz-2000", "blackjack"):
        _, events = play_session(game, "counter-1-8-index", 500, "speed", events=True)
        runs = []
        peers = []
        for _ in range(5):
            t0 = time.process_time()
            table = Table(parse_setup(events[0]))
            for i, e in enumerate(events[1:], start=2):
                table.apply(parse_event(e, i))
            peers.append(time.process_time() - t0)
            t0 = time.process_time()
            analyse([read_table(events)])
            runs.append(time.process_time() - t0)
        runs.sort()
        peers.sort()
        print(
            f"speed {game}: 500 rounds ({len(events):,} events) analysed in {runs[2]:.3f} CPU s "
            f"(median of 5; limit 1 s: {runs[2] / 1.0:.2f} of it); the engine alone "
            f"{peers[2]:.3f} s (analysis / engine {runs[2] / peers[2]:.1f})"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default="pontoon-nz-2000,blackjack")
    p.add_argument("--types", default=",".join(TYPES))
    p.add_argument("--sessions", type=int, default=20, help="report sessions per type")
    p.add_argument("--honest-sessions", type=int, default=40, help="per honest type and seed set")
    p.add_argument("--rounds", type=int, default=max(LENGTHS))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--calibrate", action="store_true")
    p.add_argument("--speed", action="store_true", help="only the speed figure")
    args = p.parse_args(argv)
    if args.speed:
        speed()
        return 0
    games = args.games.split(",")
    kinds = args.types.split(",")
    t0 = time.perf_counter()
    cal = load_calibration()
    if args.calibrate:
        tasks = [
            (g, k, f"cal-{i}", args.rounds)
            for g in games
            for k in HONEST
            for i in range(args.honest_sessions)
        ]
        results = play_all(tasks, args.jobs)
        cal = calibrate(results)
        note = f"{len(tasks)} honest sessions of {args.rounds} rounds, {', '.join(games)}"
        write_calibration(cal, CONFIG_DIR / "protect-calibration.toml", note)
        print(f"calibrated on {note} ({time.perf_counter() - t0:.0f} s)")
        load_calibration.cache_clear()
    tasks = [
        (g, k, f"report-{i}", args.rounds)
        for g in games
        for k in kinds
        for i in range(args.honest_sessions if k in HONEST else args.sessions)
    ]
    results = play_all(tasks, args.jobs)
    report(results, cal)
    print(f"\n{len(tasks)} report sessions in {time.perf_counter() - t0:.0f} s wall")
    speed()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
