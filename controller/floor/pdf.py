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
    from controller.floor.pit import money

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
        [
            "rounds",
            f"{doc['rounds']} ({doc['rounds_settled']} settled, {doc['rounds_void']} void)"
            + (f"; {doc['rounds_in_play']} in play, not counted" if doc["rounds_in_play"] else ""),
        ],
        ["play", f"{_t(doc['first_round'])} to {_t(doc['last_round_ended'])}"],
        ["rounds per hour", doc["rounds_per_hour"] if doc["rounds_per_hour"] is not None else "-"],
        ["hands", doc["hands"]],
        ["total wagered", money(doc["wagered"])],
        ["table result (house)", money(doc["result"])],
        ["result ÷ wagered", doc["result_pct_of_wagered"] or "-"],
        ["flags", doc["flags"]],
    ]
    tray = doc.get("tray")
    if tray is not None:
        figures += [
            ["drop", money(tray["drop"]) + ("" if tray["drop_counted"] else " (not counted yet)")],
            ["fills, credits", f"{money(tray['fills'])}, {money(tray['credits'])}"],
            ["win", f"{money(tray['win'])} (closing − opening + credits − fills + drop)"],
            ["hold % (win ÷ drop)", tray["hold_pct"] or "-"],
            ["difference", f"{money(tray['difference'])} (win − the rounds' house net)"],
        ]
    story.append(_table(["figure", "value"], figures, [45 * mm, 125 * mm]))
    story.append(_p("Flags by rule", H2))
    story.append(
        _table(
            ["rule", "count", "acknowledged", "the rule"],
            [[f["rule"], f["count"], f["acknowledged"], f["words"]] for f in doc["flags_by_rule"]]
            or [["-", 0, 0, "no flags"]],
            [16 * mm, 16 * mm, 28 * mm, 110 * mm],  # "acknowledged" on one line
        )
    )
    story.append(_p("Dealers on duty", H2))
    story.append(
        _table(
            ["dealer", "rounds ended", "in play", "from", "to"],
            [
                [d["dealer"], d["rounds"], d["in_play"], d["from"]["local"], d["to"]["local"]]
                for d in doc["dealers"]
            ]
            or [["(none recorded)", "", "", "", ""]],
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
                [
                    [h["hour"], h["rounds"], money(h["wagered"]), money(h["result"])]
                    for h in doc["by_hour"]
                ],
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


def pit_story(doc: dict[str, Any]) -> list[Flowable]:
    from controller.floor.pit import money

    w = doc["window"]
    story: list[Flowable] = [
        _p(f"Pit report — {w['label']}", H1),
        _p(
            f"{w['from']['local']} to {w['to']['local']} ({w['time_zone']}); month to date from "
            f"{doc['month_from']['local']}, year to date from {doc['year_from']['local']}.",
            BODY,
        ),
        _p(
            "Win = closing count − opening count + credits − fills + drop. Hold % = win ÷ drop. "
            "House net: the rounds' net to the house as the tables settled them. Difference: "
            "win − house net, the money no record explains. * the drop is not counted yet: the "
            "buy-ins recorded stand for it.",
            SMALL,
        ),
        Spacer(1, 3 * mm),
    ]
    head = ["table", "drop", "fills", "credits", "win", "hold %", "house net", "difference"]
    for span, title in (
        ("window", w["label"]),
        ("month_to_date", "Month to date"),
        ("year_to_date", "Year to date"),
    ):
        story.append(_p(title, H2))
        rows = []
        for t in [*doc["tables"], {"table": "pit", **doc["totals"]}]:
            f = t[span]
            rows.append(
                [
                    t["table"],
                    money(f["drop"]) + ("" if f["drop_counted"] else " *"),
                    money(f["fills"]),
                    money(f["credits"]),
                    money(f["win"]),
                    f["hold_pct"] or "–",
                    money(f["house_net"]),
                    money(f["difference"]),
                ]
            )
        story.append(_table(head, rows))
    story.append(_p("Dealers", H2))
    story.append(
        _table(
            ["dealer", "rounds ended", "house net", "tray differences at counts", "counts"],
            [
                [
                    d["dealer"],
                    d["rounds"],
                    money(d["house_net"]),
                    money(d["tray_difference"]),
                    d["counts"],
                ]
                for d in doc["dealers"]
            ]
            or [["(none)", "", "", "", ""]],
        )
    )
    reg = doc["slip_register"]
    story.append(_p("Slip register", H2))
    story.append(
        _table(
            ["table", "slip", "kind", "amount", "signed by", "time", "problems"],
            [
                [
                    s["table"],
                    s["slip"],
                    s["kind"],
                    money(s["amount"]),
                    ", ".join(s["by"]),
                    s["at"]["local"],
                    "; ".join(s["problems"]) or "–",
                ]
                for s in reg["slips"]
            ]
            or [["–", "", "", "", "", "", "no slips"]],
        )
    )
    if reg["gaps"]:
        story.append(
            _p(
                "Gaps in the slips' numbers: "
                + "; ".join(
                    f"{g['table']} between {g['after']} and {g['before']} "
                    f"({', '.join(g['missing'])})"
                    for g in reg["gaps"]
                ),
                SMALL,
            )
        )
    story.append(_p("The records and who answers for them", H2))
    verified = []
    for h in doc["verified_against"]:
        hd = h["head"]
        if hd is None:
            verified.append([h["table"], "–", "–", "–", h["signature"]])
        else:
            verified.append([h["table"], hd["seq"], hd["root"], hd["signed_at"], h["signature"]])
    story.append(
        _p(
            "The figures rest on each table's shipped events. Each table's newest signed head "
            "(its Merkle root over the events up to that event, signed with the table's key) "
            "was checked against the table's registered key; `floorctl verify` checks the events "
            "against these heads.",
            SMALL,
        )
    )
    story.append(
        _table(["table", "head (event)", "root", "signed at", "signature"], verified or [["–"] * 5])
    )
    story.append(Spacer(1, 6 * mm))
    story.append(
        _table(
            ["", "name", "signature", "date"],
            [
                ["prepared by", doc["prepared_by"], "", doc["prepared_at"]["local"]],
                ["reviewed by", "", "", ""],
            ],
            [28 * mm, 60 * mm, 50 * mm, 32 * mm],
        )
    )
    return story


def pit_pdf(doc: dict[str, Any], path: Path) -> None:
    _build(pit_story(doc), path, f"floorctl floor — pit report — {doc['window']['label']}")


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
