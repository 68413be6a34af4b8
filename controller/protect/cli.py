"""``floorctl protect FILE.jsonl... [--json]``: game protection over recorded scenarios.

Each file is one table's events (a scenario, or ``scenario.jsonl`` of an export), the table line
first. The same analysis the floor runs over its database (:func:`controller.protect.analysis.
analyse`) is printed per player session, dealer and table: the statistics and the verdicts,
each with the false-alarm rate it stands for. Malformed input exits 2 with the file, the line
and the field, as ``floorctl replay`` does; a count or calibration file that cannot be used
exits 2 naming its key.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from controller.events import ScenarioError, jsonl_lines
from controller.protect.analysis import analyse
from controller.protect.record import TableRecord, read_table
from controller.protect.tags import CountError
from controller.protect.verdict import CalibrationError, load_calibration


def read_file(path: Path) -> TableRecord:
    """One table's record from a JSON Lines file; ScenarioError names the line and field."""
    text = path.read_text(encoding="utf-8")
    objs: list[Any] = []
    for number, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            objs.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ScenarioError(number, "", f"not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise ScenarioError(number, "", "not valid JSON (nested too deeply)") from None
    # Blank lines were skipped: number the events as the file does for the messages.
    numbers = [n for n, text_line in enumerate(jsonl_lines(text), start=1) if text_line.strip()]
    try:
        return read_table(objs)
    except ScenarioError as exc:
        at = numbers[exc.line - 1] if 0 < exc.line <= len(numbers) else exc.line
        raise ScenarioError(at, exc.field, exc.detail) from None


def format_text(doc: dict[str, Any]) -> str:
    out: list[str] = []
    for t in doc["tables"]:
        h = t["hold"]
        sa = t["shuffle_audit"]
        low, high = h["hold_band_95"] or [None, None]
        out.append(
            f"table {t['table_id'] or '-'}  {t['game']}  {t['rounds']} rounds  hold "
            f"{_pct(h['hold'])} (expected {_pct(h['expected_hold'])}, 95% band "
            f"{_pct(low)} to {_pct(high)})"
            f"{'  OUTSIDE THE BAND' if h['outside_band'] else ''}"
        )
        out.append(
            f"  shuffles {sa['shuffles']}, early {sa['early']} (mean count at early shuffles "
            f"{sa['mean_true_count_at_early_shuffles']}; when possible "
            f"{sa['mean_true_count_when_shuffling_was_possible']}): {sa['verdict']['level']}"
        )
    out.append("")
    out.append(
        f"{'player':<14}{'table':<8}{'rounds':>7}{'net':>11}  {'bet~count':>9}{'wong':>7}"
        f"{'index':>7}{'knew':>7}{'hole':>7}{'luck':>7}  verdict"
    )
    for p in doc["players"]:
        v = p["verdict"]
        rate = v["false_alarm_rate"]
        stated = (
            f" (honest: {rate:.2%} of {v['rates']['session_length']:,}-round sessions)"
            if rate is not None
            else ""
        )
        out.append(
            f"{p['player'][:13]:<14}{(p['table_id'] or '-')[:7]:<8}{p['rounds']:>7}{p['net']:>11}  "
            f"{_z(p['bet_against_count']['z']):>9}{_z(p['play_against_count']['z']):>7}"
            f"{_z(p['index_plays']['z']):>7}{_z(p['knew_next_card']['z']):>7}"
            f"{_z(p.get('knew_hole_card', {}).get('z')):>7}{_z(p['luck']['z']):>7}  "
            f"{v['level'].upper()}{stated}"
        )
        for reason in v["reasons"]:
            out.append(f"{'':<16}{reason}")
    if doc["dealers"]:
        out.append("")
        out.append(f"{'dealer':<14}{'rounds':>7}{'r/hour':>8}{'flags':>7}{'knew':>7}  verdict")
        for d in doc["dealers"]:
            sc = d["scorecard"]
            out.append(
                f"{d['dealer'][:13]:<14}{sc['rounds']:>7}{sc['rounds_per_hour'] or '-':>8}"
                f"{sc['flags']:>7}{_z(d['knew_next_card']['z']):>7}  "
                f"{d['verdict']['level'].upper()}"
            )
            for reason in d["verdict"]["reasons"]:
                out.append(f"{'':<16}{reason}")
    outside = [h for h in doc["hold"] if h["outside_band"]]
    if outside:
        out.append("")
        out.append("hold outside its 95% band")
        for h in outside:
            label = ", ".join(
                f"{k} {h[k]}"
                for k in ("table_id", "game", "dealer", "shift", "day", "month", "year")
                if k in h
            )
            out.append(
                f"  {label}: result {h['result']} expected {h['expected']} band {h['band_95']}"
            )
            for c in h.get("largest_contributors", []):
                out.append(f"    {c['player']} at {c['table_id']}: {c['won_beyond_expectation']:+}")
    return "\n".join(out)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:+.2f}%"


def _z(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}"


def _run(args: argparse.Namespace) -> int:
    tables: list[TableRecord] = []
    try:
        calibration = load_calibration()
    except CalibrationError as exc:
        print(f"floorctl protect: {exc}", file=sys.stderr)
        return 2
    for name in args.files:
        path = Path(name)
        try:
            tables.append(read_file(path))
        except (OSError, UnicodeDecodeError) as exc:
            print(f"floorctl protect: cannot read {path}: {exc}", file=sys.stderr)
            return 2
        except ScenarioError as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            return 2
        except CountError as exc:
            print(f"floorctl protect: {exc}", file=sys.stderr)
            return 2
    doc = analyse(tables, calibration)
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_text(doc))
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "protect",
        help="game protection: counters, players who knew the cards, hold, dealers, shuffles",
        description=(
            "Analyse recorded tables for advantage play and cheating: the true count before "
            "each round, bets and play against it, index plays, decisions right given the next "
            "or hole card, luck, hold against expectation, dealer scorecards and the shuffle "
            "audit, with a verdict (clear, watch, alert) and the false-alarm rate it stands for."
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE.jsonl", help="one table's events each")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=_run)
