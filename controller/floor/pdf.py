"""The floor's answers as printable PDF (reportlab): a shift or day report, a round, or both in
one evidence report. Each page carries the table, the time zone and the page number."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import (
    Flowable,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from controller.roundtext import SETTLEMENT_HEAD, hand_rows, settlement_rows

_styles = getSampleStyleSheet()
H1 = ParagraphStyle("h1", parent=_styles["Heading1"])
H2 = ParagraphStyle("h2", parent=_styles["Heading2"])
BODY = ParagraphStyle("body", parent=_styles["BodyText"])
SMALL = ParagraphStyle("small", parent=BODY, fontSize=8, leading=10)
GRID = TableStyle(
    [
        ("FONT", (0, 0), (-1, -1), "Helvetica", 8),
        ("FONT", (0, 0), (-1, 0), "Helvetica-Bold", 8),
        ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#dde8e2")),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]
)


def _p(text: Any, style: ParagraphStyle = SMALL) -> Paragraph:
    safe = str(text if text is not None else "").replace("&", "&amp;").replace("<", "&lt;")
    return Paragraph(safe, style)


def _table(
    header: list[str], rows: Iterable[list[Any]], widths: list[float] | None = None
) -> Table:
    data = [[_p(h) for h in header]] + [[_p(c) for c in row] for row in rows]
    t = Table(data, colWidths=widths, repeatRows=1)
    t.setStyle(GRID)
    return t


def _t(times: dict[str, str] | None) -> str:
    if not times or not times.get("local"):
        return "-"
    return f"{times['local']} / {times['utc']}"


def report_story(doc: dict[str, Any]) -> list[Flowable]:
    w = doc["window"]
    story: list[Flowable] = [
        _p(f"Table {doc['table']} — {w['label']}", H1),
        _p(
            f"{w['from']['local']} to {w['to']['local']} ({w['time_zone']}); "
            f"{w['from']['utc']} to {w['to']['utc']}",
            BODY,
        ),
        Spacer(1, 4 * mm),
    ]
    figures = [
        ["rounds", f"{doc['rounds']} ({doc['rounds_settled']} settled, {doc['rounds_void']} void)"],
        ["play", f"{_t(doc['first_round'])} to {_t(doc['last_round_ended'])}"],
        ["rounds per hour", doc["rounds_per_hour"] if doc["rounds_per_hour"] is not None else "-"],
        ["hands", doc["hands"]],
        ["total wagered", doc["wagered"]],
        ["table result (house)", doc["result"]],
        ["hold", doc["hold"] or "-"],
        ["flags", doc["flags"]],
    ]
    story.append(_table(["figure", "value"], figures, [45 * mm, 125 * mm]))
    story.append(_p("Flags by rule", H2))
    story.append(
        _table(
            ["rule", "count", "acknowledged", "the rule"],
            [[f["rule"], f["count"], f["acknowledged"], f["words"]] for f in doc["flags_by_rule"]]
            or [["-", 0, 0, "no flags"]],
            [18 * mm, 16 * mm, 22 * mm, 114 * mm],
        )
    )
    story.append(_p("Dealers on duty", H2))
    story.append(
        _table(
            ["dealer", "rounds", "from", "to"],
            [
                [d["dealer"], d["rounds"], d["from"]["local"], d["to"]["local"]]
                for d in doc["dealers"]
            ]
            or [["(none recorded)", "", "", ""]],
        )
    )
    story.append(_p("Shoes", H2))
    state = {True: "reconciled", False: "NOT RECONCILED", None: "not reconciled yet"}
    story.append(
        _table(
            ["shoe (event)", "loaded", "decks", "reconciliation", "missing", "extra"],
            [
                [
                    s["shoe"],
                    s["loaded"]["local"],
                    s["decks"],
                    state[s["reconciled"]],
                    ", ".join(s["missing"]),
                    ", ".join(s["extra"]),
                ]
                for s in doc["shoes"]
            ]
            or [["-", "", "", "no shoe loaded", "", ""]],
        )
    )
    if doc["by_hour"]:
        story.append(_p("By hour", H2))
        story.append(
            _table(
                ["hour", "rounds", "wagered", "result"],
                [[h["hour"], h["rounds"], h["wagered"], h["result"]] for h in doc["by_hour"]],
            )
        )
    return story


def round_story(doc: dict[str, Any]) -> list[Flowable]:
    story: list[Flowable] = [
        _p(f"Table {doc['table']} — round {doc['round']} ({doc['status']})", H1),
        _p(
            f"Began {_t(doc['started'])}; ended {_t(doc['ended'])}. Time zone "
            f"{doc['time_zone']}. Events {doc['events']['first']}–{doc['events']['last']}; shoe "
            f"loaded at event {doc['shoe']}; dealers: "
            f"{', '.join(doc['dealers']) or 'not recorded'}.",
            BODY,
        ),
        _p("Cards in shoe order", H2),
        _table(
            ["event", "time (local / UTC)", "card", "went to"],
            [
                [
                    c["seq"],
                    f"{c['local']} / {c['utc']}",
                    c["card"],
                    c["to"]["text"] if c.get("to") else f"not dealt: {c.get('not_dealt')}",
                ]
                for c in doc["cards"]
            ],
            [14 * mm, 70 * mm, 12 * mm, 74 * mm],
        ),
        _p("Decisions", H2),
        _table(
            ["event", "time (local)", "decision", "by"],
            [
                [
                    d["seq"],
                    d["local"],
                    f"{d['type']}{' box ' + str(d['box']) if d.get('box') else ''}"
                    f"{' ' + str(d['amount']) if d.get('amount') is not None else ''}"
                    f"{' (refused)' if d.get('refused') else ''}",
                    f"{d['who']['role']} {d['who']['name'] or ''}",
                ]
                for d in doc["decisions"]
            ],
            [14 * mm, 45 * mm, 60 * mm, 51 * mm],
        ),
    ]
    if doc["wagers"]:
        story.append(_p("Wagers recorded and seen by the camera", H2))
        story.append(
            _table(
                ["box", "recorded", "camera"],
                [
                    [
                        w["box"],
                        ", ".join(f"{b['player']} {b['amount']}" for b in w["recorded"]),
                        ", ".join(s["amount"] for s in w["seen"]),
                    ]
                    for w in doc["wagers"]
                ],
            )
        )
    if doc["dealer"]:
        story.append(_p("Hands", H2))
        rows: list[list[Any]] = [
            ["dealer", " ".join(doc["dealer"]["cards"]), doc["dealer"]["total"], ""]
        ]
        rows += [list(row) for row in hand_rows(doc)]
        story.append(_table(["hand", "cards", "total", "outcome"], rows))
    if doc["settlements"]:
        story.append(_p("Settlements", H2))
        story.append(_table(list(SETTLEMENT_HEAD), [list(row) for row in settlement_rows(doc)]))
        story.append(_p(f"Wagered {doc['wagered']}; the house won {doc['result']}.", BODY))
    story.append(_p("Flags", H2))
    story.append(
        _table(
            ["rule", "event", "the rule's words", "what happened", "what the rule directs"],
            [
                [f["rule"], f["seq"], f["words"], f["message"], f.get("direction", "")]
                for f in doc["flags"]
            ]
            or [["-", "", "", "no flags", ""]],
            [14 * mm, 14 * mm, 52 * mm, 52 * mm, 48 * mm],
        )
    )
    checks = doc["checks"]
    story.append(
        _p(
            "Checks: hash chain of these events "
            + ("intact" if checks["chain"] else f"BROKEN ({checks['chain_problem']})")
            + "; the table's own record "
            + (
                "matches."
                if checks["matches_table_record"]
                else "DIFFERS: " + "; ".join(checks["differences"])
            ),
            BODY,
        )
    )
    return story


def _build(story: list[Flowable], path: Path, title: str) -> None:
    def page(canvas: Any, document: Any) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 7)
        canvas.drawString(15 * mm, 8 * mm, title)
        canvas.drawRightString(195 * mm, 8 * mm, f"page {document.page}")
        canvas.restoreState()

    document = SimpleDocTemplate(
        str(path),
        pagesize=A4,
        leftMargin=15 * mm,
        rightMargin=15 * mm,
        topMargin=15 * mm,
        bottomMargin=15 * mm,
        title=title,
        author="floorctl floor",
    )
    document.build(story, onFirstPage=page, onLaterPages=page)


def report_pdf(doc: dict[str, Any], path: Path) -> None:
    _build(
        report_story(doc), path, f"floorctl floor — table {doc['table']} — {doc['window']['label']}"
    )


def round_pdf(doc: dict[str, Any], path: Path) -> None:
    _build(round_story(doc), path, f"floorctl floor — table {doc['table']} round {doc['round']}")


def evidence_pdf(
    title: str,
    intro: list[str],
    report: dict[str, Any] | None,
    rounds: list[dict[str, Any]],
    manifest: dict[str, Any],
    path: Path,
) -> None:
    story: list[Flowable] = [_p(title, H1), *(_p(line, BODY) for line in intro)]
    if report is not None:
        story += [PageBreak(), *report_story(report)]
    for doc in rounds:
        story += [PageBreak(), *round_story(doc)]
    story += [PageBreak(), _p("The export's manifest", H1)]
    heads = [
        [tid, info.get("head_seq"), info.get("head_hash")]
        for tid, info in sorted(manifest.get("tables", {}).items())
    ]
    story.append(_table(["table", "head event", "head hash"], heads, [20 * mm, 20 * mm, 130 * mm]))
    story.append(Spacer(1, 3 * mm))
    story.append(
        _table(
            ["file", "SHA-256"],
            [[name, digest] for name, digest in sorted(manifest.get("files", {}).items())],
            [60 * mm, 110 * mm],
        )
    )
    _build(story, path, title)
