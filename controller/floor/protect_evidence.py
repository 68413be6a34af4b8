"""The evidence report for one player's session: a PDF and the proofs its rounds rest on.

``write_session_evidence`` writes into an empty directory::

    report.pdf       the verdict and what it stands for; the charts (bet against the true
                     count, the departures from the strategy table by count, result against
                     expectation); the statistics; the rounds the charts rest on, each with its
                     events and, where a signed head the floor holds covers it, the proof
    proofs/          round-N.json: the round's events with their inclusion proofs under the
                     table's signed head (controller.store.proof, as ``floorctl prove`` writes
                     them); ``floorctl verify-proof round-N.json --key table.pub`` checks one
                     with the table's public key alone
    session.json     the analysis the report shows (controller.protect)
    evidence.json    who asked for what and when, and the SHA-256 of every file above

Proofs are written for the rounds that weigh most (those with a departure from the table, then
the largest bets at the highest counts), at most :data:`MAX_PROOFS`; every round of the session
is listed with its events.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reportlab.graphics.charts.lineplots import LinePlot, ScatterPlot
from reportlab.graphics.shapes import Drawing
from reportlab.lib import colors
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, PageBreak, Spacer

from controller.floor.audit import Who
from controller.floor.pdf import BODY, H1, SMALL, _build, _p, _table
from controller.floor.protect import player_view
from controller.floor.schema import Floor
from controller.floor.settings import InputError, Window

FORMAT = "floorctl-protect-evidence/1"
MAX_PROOFS = 25


def _scatter(points: list[tuple[float, float]], x_title: str, y_title: str) -> Flowable:
    if not points:
        return _p("(none)", SMALL)
    d = Drawing(170 * mm, 70 * mm)
    chart = ScatterPlot()
    chart.x, chart.y = int(15 * mm), int(12 * mm)
    chart.width, chart.height = int(150 * mm), int(52 * mm)
    chart.data = [points]
    chart.lineLabelFormat = None  # type: ignore[assignment]  # no value beside each point
    chart.lines[0].strokeColor = None
    chart.lines[0].symbol.kind = "Circle"
    chart.lines[0].symbol.size = 2.5
    chart.lines[0].symbol.fillColor = colors.HexColor("#1f5f8b")
    chart.xLabel = x_title
    chart.yLabel = y_title
    d.add(chart)
    return d


def _lines(series: list[list[tuple[float, float]]]) -> Flowable:
    if not any(series):
        return _p("(none)", SMALL)
    d = Drawing(170 * mm, 70 * mm)
    chart = LinePlot()
    chart.x, chart.y = int(15 * mm), int(12 * mm)
    chart.width, chart.height = int(150 * mm), int(52 * mm)
    chart.data = [s or [(0.0, 0.0)] for s in series]
    chart.lineLabelFormat = None
    chart.lines[0].strokeColor = colors.HexColor("#1f5f8b")
    chart.lines[1].strokeColor = colors.HexColor("#999999")
    chart.lines[1].strokeDashArray = [4, 2]
    d.add(chart)
    return d


def _d(value: Any) -> Any:
    """A figure, or a dash where there is none (a test not judged)."""
    return "–" if value is None else value


def _proof_rounds(session: dict[str, Any]) -> list[int]:
    pts = session["points"]
    chosen: list[int] = []
    for d in pts["departures"]:
        if d["round"] not in chosen:
            chosen.append(d["round"])
    ranked = sorted(pts["bets"], key=lambda b: -float(b["bet"]) * max(b["true_count"], 0.1))
    for b in ranked:
        if b["round"] not in chosen:
            chosen.append(b["round"])
    return chosen[:MAX_PROOFS]


def write_session_evidence(
    floor: Floor, who: Who, table_id: str, player: str, window: Window, index: int, out: Path
) -> dict[str, Any]:
    """Write the evidence for session ``index`` (1-based) of ``player`` at ``table_id``."""
    from controller.store.db import StoreError
    from controller.store.proof import prove_round

    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out} is not empty")
    view = player_view(floor, who, table_id, player, window)
    if not 1 <= index <= len(view["sessions"]):
        raise InputError(f"session {index}: {player} has {len(view['sessions'])} in that window")
    s = view["sessions"][index - 1]
    out.mkdir(parents=True, exist_ok=True)
    (out / "proofs").mkdir()
    proved: dict[int, str] = {}
    for number in _proof_rounds(s):
        try:
            doc = prove_round(floor.store, table_id, number)
        except StoreError as exc:
            proved[number] = f"no proof: {exc}"
            continue
        path = out / "proofs" / f"round-{number}.json"
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        head = doc["head"]
        proved[number] = (
            f"events {doc['events'][0]['seq']}-{doc['events'][-1]['seq']} under signed head "
            f"{head['seq']} (key {str(head['key_id'])[:16]}…, root {str(head['root'])[:16]}…)"
        )
    (out / "session.json").write_text(json.dumps(s, indent=1, default=str) + "\n")
    _pdf(view, s, proved, out / "report.pdf")
    files = {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }
    evidence = {
        "format": FORMAT,
        "asked_by": {"name": who.name, "role": who.role, "via": who.via, "client": who.client},
        "asked_at": datetime.now(UTC).isoformat(),
        "table": table_id,
        "player": player,
        "window": view["window"],
        "session": index,
        "files": files,
    }
    (out / "evidence.json").write_text(json.dumps(evidence, indent=1) + "\n", encoding="utf-8")
    return evidence


def _pdf(view: dict[str, Any], s: dict[str, Any], proved: dict[int, str], path: Path) -> None:
    v = s["verdict"]
    title = f"Game protection evidence — {view['player']} at {view['table_id']}"
    rate = (
        f"Honest players reach this in {v['false_alarm_rate'] * 100:.2f}% of "
        f"{v['rates']['session_length']:,}-round sessions ({v['rates']['basis']})."
        if v["false_alarm_rate"] is not None
        else "Nothing here that honest play rarely gives."
    )
    story: list[Flowable] = [
        _p(title, H1),
        _p(
            f"{view['game']} · {view['window']['label']} ({view['window']['start']} to "
            f"{view['window']['end']}; {view['window']['start_utc']} to "
            f"{view['window']['end_utc']})",
            BODY,
        ),
        _p(
            f"Session: rounds {s['first_round']} to {s['last_round']} ({s['rounds']} rounds), "
            f"wagered {s['wagered']}, net {s['net']}, bets {s['min_bet']} to {s['max_bet']}.",
            BODY,
        ),
        _p(f"Verdict: {v['level'].upper()}. {rate}", BODY),
        *(_p(f"• {r}", BODY) for r in v["reasons"]),
        Spacer(1, 3 * mm),
    ]
    b, w, ix, kn, lk = (
        s["bet_against_count"],
        s["play_against_count"],
        s["index_plays"],
        s["knew_next_card"],
        s["luck"],
    )
    rows = [
        [
            "bet against the true count",
            f"correlation {b['correlation']}, z {_d(b['z'])}, "
            f"{b['shoes']} shoes, mean bet high/low count {b['spread_high_over_low']}",
        ],
        [
            "playing against the count",
            f"played {w['rounds_played']} of {w['table_rounds']} "
            f"rounds, {w['entries_mid_shoe']} entries mid-shoe, z {_d(w['z'])}",
        ],
        [
            "index plays",
            f"{ix['departures']} departures, {ix['with_a_direction']} with a "
            f"direction, z {_d(ix['z'])}",
        ],
        [
            "right given the next card",
            f"{kn['right']} of {kn['assessed']} departures "
            f"({kn['expected_right']} by chance), probability {_d(kn['tail_probability'])}, "
            f"z {_d(kn['z'])}",
        ],
        [
            "luck",
            f"result {lk['result']} against {lk['expected_given_count']} expected, z {_d(lk['z'])}",
        ],
    ]
    if "knew_hole_card" in s:
        kh = s["knew_hole_card"]
        rows.append(
            [
                "right given the hole card",
                f"{kh['right']} of {kh['assessed']} "
                f"({kh['expected_right']} by chance), z {_d(kh['z'])}",
            ]
        )
    story.append(_table(["test", "figures"], rows, [45 * mm, 125 * mm]))
    pts = s["points"]
    story += [
        Spacer(1, 3 * mm),
        _p("Bet against the true count before each round", BODY),
        _scatter([(p["true_count"], float(p["bet"])) for p in pts["bets"]], "true count", "bet"),
        _p(
            "Departures from the strategy table by true count (+1: the way a high count "
            "points, -1: the other way)",
            BODY,
        ),
        _scatter(
            [
                (
                    d["true_count"],
                    1.0
                    if d["did"] in ("stand", "double", "split", "surrender", "insurance")
                    else -1.0,
                )
                for d in pts["departures"]
            ],
            "true count",
            "direction",
        ),
        _p("Result (solid) against expectation at the counts played (dashed), cumulative", BODY),
        _lines(
            [
                [(float(i), c["result"]) for i, c in enumerate(pts["curve"])],
                [(float(i), c["expected"]) for i, c in enumerate(pts["curve"])],
            ]
        ),
        PageBreak(),
        _p("The departures from the strategy table", H1),
        _table(
            ["round", "hand", "up", "table", "did", "count", "next", "hole"],
            [
                [
                    d["round"],
                    d["hand"],
                    d["up"],
                    d["advised"],
                    d["did"],
                    d["true_count"],
                    d["next_card"] or "-",
                    d["hole"] or "-",
                ]
                for d in pts["departures"]
            ]
            or [["-"] * 8],
            [14 * mm, 32 * mm, 12 * mm, 20 * mm, 20 * mm, 16 * mm, 14 * mm, 14 * mm],
        ),
        PageBreak(),
        _p("The rounds, their events and their proofs", H1),
        _p(
            "Each round's events are in the table's hash-chained log; where a signed head the "
            "floor holds covers a round, proofs/round-N.json carries its events with their "
            "inclusion proofs (floorctl verify-proof checks it with the table's public key).",
            SMALL,
        ),
        _table(
            ["round", "events", "count", "bet", "net", "proof"],
            [
                [
                    p["round"],
                    f"{p['seq_first']}-{p['seq_last']}",
                    p["true_count"],
                    p["bet"],
                    p["net"],
                    proved.get(p["round"], ""),
                ]
                for p in pts["bets"]
            ],
            [14 * mm, 24 * mm, 14 * mm, 16 * mm, 16 * mm, 86 * mm],
        ),
    ]
    _build(story, path, title)
