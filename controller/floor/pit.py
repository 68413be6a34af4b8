"""The pit report: every table's money over a shift or gaming day, month to date and year to
date, from the floor's record of each table's tray (``floor_tray``, the engine's own records).

For each table and span, between the first and the last count in it:

- fills, credits, the buy-ins recorded, and the drop (the count room's, for every gaming day
  opened in the span; until each is counted, the buy-ins recorded stand for it and the report
  says so);
- **win** by the standard formula: last count - first count + credits - fills + drop;
- **hold %** = win / drop;
- the rounds' **house net** (the engine's, reported at each count) and the **difference**
  win - house net: the money nothing recorded explains (the counts' `tray` differences, and the
  drop against the buy-ins).

Per dealer: the rounds begun in the window, each counted for the dealer on duty when it
ended, their house net, and the tray's
differences found at counts while they dealt. The slip register lists each fill and credit with
what is wrong with it: a number used twice, fewer than two signatures, a gap in a table's
sequence of slip numbers. The report names who prepared it and the signed heads its records are
covered by (each checked against the table's registered key).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Connection

from controller.engine.tray import dollars
from controller.floor.audit import Who
from controller.floor.rebuild import times
from controller.floor.schema import Floor
from controller.floor.settings import FloorSettings, Window

ZERO = Decimal(0)
COUNTS = ("opener", "check", "closer")
MAX_GAPS = 50  # slip numbers listed per gap before "... and N more"


@dataclass
class Row:
    table_id: str
    seq: int
    at: datetime
    kind: str
    detail: str | None
    slip: str | None
    amount: Decimal
    expected: Decimal | None
    difference: Decimal | None
    house_net: Decimal | None
    buy_ins: Decimal | None
    by: list[str]
    dealer: str | None
    day_seq: int | None


@dataclass
class Figures:
    """One table's (or the pit's) money over one span."""

    opening: Decimal | None = None
    closing: Decimal | None = None
    fills: Decimal = ZERO
    credits: Decimal = ZERO
    buy_ins: Decimal = ZERO
    drop: Decimal = ZERO
    drop_counted: bool = True
    house_net: Decimal = ZERO
    tray_difference: Decimal = ZERO
    counts: int = 0
    days: set[tuple[str, int]] = field(default_factory=set)

    @property
    def win(self) -> Decimal | None:
        if self.opening is None or self.closing is None:
            return None
        return self.closing - self.opening + self.credits - self.fills + self.drop

    def add(self, other: Figures) -> None:
        """The pit's totals: each table's figures summed (win sums as its parts do)."""
        for name in ("fills", "credits", "buy_ins", "drop", "house_net", "tray_difference"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.opening is not None and other.closing is not None:
            self.opening = (self.opening or ZERO) + other.opening
            self.closing = (self.closing or ZERO) + other.closing
        self.drop_counted = self.drop_counted and other.drop_counted
        self.counts += other.counts
        self.days |= other.days

    def to_dict(self) -> dict[str, Any]:
        win = self.win
        hold = None
        if win is not None and self.drop:
            hold = f"{(win / self.drop * 100).quantize(Decimal('0.01'))}%"
        return {
            "opening_count": _m(self.opening),
            "closing_count": _m(self.closing),
            "fills": _m(self.fills),
            "credits": _m(self.credits),
            "buy_ins": _m(self.buy_ins),
            "drop": _m(self.drop),
            "drop_counted": self.drop_counted,
            "win": _m(win),
            "hold_pct": hold,
            "house_net": _m(self.house_net),
            "difference": _m(None if win is None else win - self.house_net),
            "tray_difference": _m(self.tray_difference),
            "counts": self.counts,
            "gaming_days": len(self.days),
        }


def _m(d: Decimal | None) -> str | None:
    return None if d is None else str(d.quantize(Decimal("0.01")))


def figures(rows: list[Row], drops: dict[tuple[str, int], Decimal]) -> Figures:
    """One table's figures over the rows of one span (in event order)."""
    out = Figures()
    counts = [r for r in rows if r.kind in COUNTS]
    if not counts:
        return out
    first, last = counts[0], counts[-1]
    out.opening, out.closing = first.amount, last.amount
    out.counts = len(counts)
    for r in rows:
        if r.seq == first.seq and r.kind == "opener" and first.seq < last.seq:
            out.days.add((r.table_id, r.seq))
        if not first.seq < r.seq <= last.seq:
            continue
        if r.kind == "fill":
            out.fills += r.amount
        elif r.kind == "credit":
            out.credits += r.amount
        elif r.kind == "buy_in":
            out.buy_ins += r.amount
        elif r.kind in COUNTS:
            out.house_net += r.house_net or ZERO
            out.tray_difference += r.difference or ZERO
            if r.kind == "opener" and r.seq < last.seq:
                out.days.add((r.table_id, r.seq))
    counted = [drops.get(day) for day in out.days]
    out.drop_counted = bool(counted) and all(d is not None for d in counted)
    out.drop = sum((d for d in counted if d is not None), ZERO) if out.drop_counted else out.buy_ins
    return out


# Each table's first and last count in the span, with its running totals (each an index probe).
_SPAN = """
SELECT t.table_id, f.seq, f.kind, f.amount, f.cum_fills, f.cum_credits, f.cum_buy_ins,
    f.cum_house_net, f.cum_difference, f.cum_counts,
    l.seq, l.amount, l.cum_fills, l.cum_credits, l.cum_buy_ins, l.cum_house_net,
    l.cum_difference, l.cum_counts
FROM tables t
JOIN LATERAL (
    SELECT seq, kind, amount, cum_fills, cum_credits, cum_buy_ins, cum_house_net,
        cum_difference, cum_counts FROM floor_tray
    WHERE table_id = t.table_id AND kind IN ('opener', 'check', 'closer')
        AND at >= %(a)s AND at < %(b)s ORDER BY at, seq LIMIT 1
) f ON true
JOIN LATERAL (
    SELECT seq, amount, cum_fills, cum_credits, cum_buy_ins, cum_house_net, cum_difference,
        cum_counts FROM floor_tray
    WHERE table_id = t.table_id AND kind IN ('opener', 'check', 'closer')
        AND at >= %(a)s AND at < %(b)s ORDER BY at DESC, seq DESC LIMIT 1
) l ON true
"""


def openers_in(conn: Connection, start: datetime, end: datetime) -> dict[str, list[int]]:
    """Each table's openers (the events that began its gaming days) from ``start`` to ``end``."""
    out: dict[str, list[int]] = defaultdict(list)
    for table_id, seq in conn.exec_driver_sql(
        "SELECT table_id, seq FROM floor_tray WHERE kind = 'opener' AND at >= %(a)s AND at < %(b)s",
        {"a": start, "b": end},
    ).all():
        out[str(table_id)].append(int(seq))
    return out


def span_figures(
    conn: Connection,
    start: datetime,
    end: datetime,
    drops: dict[tuple[str, int], Decimal],
    openers: dict[str, list[int]],
) -> dict[str, Figures]:
    """Every table's figures from ``start`` to ``end``: the same figures as :func:`figures`,
    from the running totals of each table's first and last count in the span (``openers``:
    each table's openers since the span began, or earlier)."""
    out: dict[str, Figures] = {}
    for row in conn.exec_driver_sql(_SPAN, {"a": start, "b": end}).all():
        table_id = str(row[0])
        first_seq, last_seq = int(row[1]), int(row[10])
        f = Figures(
            opening=Decimal(row[3]),
            closing=Decimal(row[11]),
            fills=Decimal(row[12]) - Decimal(row[4]),
            credits=Decimal(row[13]) - Decimal(row[5]),
            buy_ins=Decimal(row[14]) - Decimal(row[6]),
            house_net=Decimal(row[15]) - Decimal(row[7]),
            tray_difference=Decimal(row[16]) - Decimal(row[8]),
            counts=int(row[17]) - int(row[9]) + 1,
        )
        f.days = {(table_id, s) for s in openers.get(table_id, ()) if first_seq <= s < last_seq}
        counted = [drops.get(day) for day in f.days]
        f.drop_counted = bool(counted) and all(d is not None for d in counted)
        f.drop = sum((d for d in counted if d is not None), ZERO) if f.drop_counted else f.buy_ins
        out[table_id] = f
    return out


def drops_since(conn: Connection, start: datetime) -> dict[tuple[str, int], Decimal]:
    """The count room's drop of each gaming day opened since ``start``."""
    return {
        (str(t), int(d)): Decimal(a)
        for t, d, a in conn.exec_driver_sql(
            "SELECT table_id, day_seq, sum(amount) FROM floor_tray WHERE kind = 'drop' "
            "AND day_seq IS NOT NULL AND at >= %(a)s GROUP BY 1, 2",
            {"a": start},
        ).all()
    }


def drops_of(rows: list[Row]) -> dict[tuple[str, int], Decimal]:
    """The count room's drop of each gaming day, by (table, the day's opener)."""
    drops: dict[tuple[str, int], Decimal] = {}
    for r in rows:
        if r.kind == "drop" and r.day_seq is not None:
            key = (r.table_id, r.day_seq)
            drops[key] = drops.get(key, ZERO) + r.amount
    return drops


def rows_of(
    conn: Connection,
    start: datetime,
    end: datetime,
    table_id: str | None = None,
    *,
    buy_ins: bool = True,
) -> list[Row]:
    """The tray's rows from ``start`` to ``end``, and every drop counted since ``start`` (the
    count room counts a day's drop after it ends); without the buy-ins if ``buy_ins`` is
    false."""
    result = conn.exec_driver_sql(
        "SELECT table_id, seq, at, kind, detail, slip, amount, expected, difference, house_net, "
        "buy_ins, by_ids, dealer, day_seq FROM floor_tray WHERE at >= %(a)s "
        "AND (at < %(b)s OR kind = 'drop') "
        + ("AND table_id = %(t)s " if table_id is not None else "")
        + ("" if buy_ins else "AND kind <> 'buy_in' ")
        + "ORDER BY table_id, seq",
        {"a": start, "b": end, "t": table_id},
    ).all()
    return [
        Row(
            str(r[0]),
            int(r[1]),
            r[2],
            str(r[3]),
            r[4],
            r[5],
            Decimal(r[6]),
            None if r[7] is None else Decimal(r[7]),
            None if r[8] is None else Decimal(r[8]),
            None if r[9] is None else Decimal(r[9]),
            None if r[10] is None else Decimal(r[10]),
            [str(x) for x in r[11] or []],
            r[12],
            None if r[13] is None else int(r[13]),
        )
        for r in result
    ]


def _dealers(conn: Connection, window: Window) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for dealer, rounds, net in conn.exec_driver_sql(
        "SELECT dealers[array_upper(dealers, 1)], count(*), sum(result) FROM floor_rounds "
        "WHERE started_at >= %(a)s AND started_at < %(b)s AND status IN ('settled', 'void') "
        "GROUP BY 1",
        {"a": window.start, "b": window.end},
    ):
        name = dealer or "(no dealer signed in)"
        out[name] = {
            "dealer": name,
            "rounds": int(rounds),
            "house_net": Decimal(net),
            "tray_difference": ZERO,
            "counts": 0,
        }
    return out


def _slips(rows: list[Row], settings: FloorSettings) -> dict[str, Any]:
    slips = [r for r in rows if r.kind in ("fill", "credit")]
    seen: dict[str, list[Row]] = defaultdict(list)
    for r in slips:
        seen[r.slip or ""].append(r)
    register: list[dict[str, Any]] = []
    for r in slips:
        problems: list[str] = []
        if len(seen[r.slip or ""]) > 1:
            others = [f"{o.table_id} event {o.seq}" for o in seen[r.slip or ""] if o is not r]
            problems.append(f"number used twice (also {', '.join(others)})")
        if len(set(r.by)) < 2:
            problems.append(f"signed by {len(set(r.by))} (two needed)")
        register.append(
            {
                "table": r.table_id,
                "event": r.seq,
                "at": times(settings, r.at),
                "kind": r.kind,
                "slip": r.slip,
                "amount": _m(r.amount),
                "by": r.by,
                "problems": problems,
            }
        )
    gaps = []
    by_table: dict[str, list[int]] = defaultdict(list)
    for r in slips:
        if r.slip is not None and r.slip.isdigit():
            by_table[r.table_id].append(int(r.slip))
    for table_id, numbers in sorted(by_table.items()):
        ordered = sorted(set(numbers))
        for a, b in itertools.pairwise(ordered):
            if b - a > 1:
                missing = [str(n) for n in range(a + 1, min(b, a + 1 + MAX_GAPS))]
                if b - a - 1 > MAX_GAPS:
                    missing.append(f"... and {b - a - 1 - MAX_GAPS} more")
                gaps.append(
                    {"table": table_id, "after": str(a), "before": str(b), "missing": missing}
                )
    return {
        "slips": register,
        "gaps": gaps,
        "used_twice": sorted(n for n, rs in seen.items() if len(rs) > 1),
        "unsigned": [s["slip"] for s in register if any("signed by" in p for p in s["problems"])],
    }


def _heads(floor: Floor, conn: Connection, tables: dict[str, int]) -> list[dict[str, Any]]:
    """Each table's newest signed head, its signature checked against the table's key, and
    whether it covers the last of the table's records the report uses (``tables``: table ->
    that event)."""
    from controller.store.heads import Head
    from controller.store.keys import public_key_from_pem

    if not tables:
        return []
    heads = {
        str(r._mapping["table_id"]): Head.from_row(r)
        for r in conn.exec_driver_sql(
            "SELECT DISTINCT ON (table_id) table_id, seq, size, root, chain_head, signed_at, prev, "
            "key_id, signature FROM heads WHERE table_id = ANY(%(t)s) ORDER BY table_id, seq DESC",
            {"t": list(tables)},
        )
    }
    keys: dict[str, str] = dict(
        conn.exec_driver_sql(
            "SELECT table_id, public_key FROM table_keys WHERE table_id = ANY(%(t)s)",
            {"t": list(tables)},
        ).all()
    )
    out = []
    for table_id in tables:
        head = heads.get(table_id)
        pem = keys.get(table_id)
        entry: dict[str, Any] = {
            "table": table_id,
            "head": None,
            "signature": "no signed head",
            "covers": False,
        }
        if head is not None:
            entry["head"] = {
                "seq": head.seq,
                "root": head.root,
                "signed_at": head.signed_at,
                "key_id": head.key_id,
            }
            entry["covers"] = head.seq >= tables[table_id]
            if pem is None:
                entry["signature"] = "no registered key"
            else:
                good = head.signed_by(public_key_from_pem(str(pem), f"table_keys[{table_id}]"))
                entry["signature"] = "valid" if good else "INVALID"
        out.append(entry)
    return out


def pit_report(
    floor: Floor, who: Who, window: Window, *, now: datetime | None = None
) -> dict[str, Any]:
    """The pit report for ``window`` (a shift or a gaming day), month and year to date."""
    from controller.floor.queries import _window, logged

    settings = floor.settings
    params = {"from": window.start, "to": window.end, "label": window.label}

    def answer() -> dict[str, Any]:
        day = settings.shift_of(window.start)[0]
        month = settings.gaming_day(date(day.year, day.month, 1)).start
        year = settings.gaming_day(date(day.year, 1, 1)).start
        with floor.engine.connect() as conn:
            drops = drops_since(conn, year)
            spans = {"window": window.start, "month_to_date": month, "year_to_date": year}
            openers = openers_in(conn, year, window.end)
            by_span = {
                name: span_figures(conn, start, window.end, drops, openers)
                for name, start in spans.items()
            }
            # The counts and the slips (the buy-ins are summed in the running totals).
            window_rows = [
                r
                for r in rows_of(conn, window.start, window.end, buy_ins=False)
                if r.kind != "drop"
            ]
            dealers = _dealers(conn, window)
            games: dict[str, str] = dict(
                conn.exec_driver_sql("SELECT table_id, game FROM tables").all()
            )
            heads_for: dict[str, int] = {}
            for table_id, last in conn.exec_driver_sql(
                "SELECT table_id, max(seq) FROM floor_tray WHERE at >= %(a)s AND at < %(b)s "
                "GROUP BY table_id",
                {"a": window.start, "b": window.end},
            ).all():
                heads_for[str(table_id)] = int(last)
            tables = []
            totals = {name: Figures() for name in spans}
            for table_id in sorted(heads_for):
                entry: dict[str, Any] = {"table": table_id, "game": games.get(table_id)}
                for name in spans:
                    f = by_span[name].get(table_id, Figures())
                    totals[name].add(f)
                    entry[name] = f.to_dict()
                tables.append(entry)
            for r in window_rows:
                if r.kind in COUNTS and r.difference and r.seq:
                    d = dealers.setdefault(
                        r.dealer or "(no dealer signed in)",
                        {
                            "dealer": r.dealer or "(no dealer signed in)",
                            "rounds": 0,
                            "house_net": ZERO,
                            "tray_difference": ZERO,
                            "counts": 0,
                        },
                    )
                    d["tray_difference"] += r.difference
                    d["counts"] += 1
            heads = _heads(floor, conn, heads_for)
        generated = now or datetime.now(UTC)
        return {
            "report": "pit",
            "window": _window(settings, window),
            "month_from": times(settings, month),
            "year_from": times(settings, year),
            "prepared_by": who.name,
            "prepared_at": times(settings, generated),
            "tables": tables,
            "totals": {name: f.to_dict() for name, f in totals.items()},
            "dealers": [
                {
                    **d,
                    "house_net": _m(d["house_net"]),
                    "tray_difference": _m(d["tray_difference"]),
                }
                for d in sorted(dealers.values(), key=lambda d: d["dealer"])
            ],
            "slip_register": _slips(window_rows, settings),
            "verified_against": heads,
        }

    return logged(floor, who, "pit_report", params, answer)


def money(text: str | None) -> str:
    """A report's amount for people: ``$1,234.50``; a dash when there is none."""
    return "–" if text is None else dollars(Decimal(text))


def format_pit(doc: dict[str, Any]) -> str:
    """The pit report as text."""
    w = doc["window"]
    out = [
        f"Pit report — {w['label']}",
        f"{w['from']['local']} to {w['to']['local']} ({w['time_zone']})",
        f"Prepared by {doc['prepared_by']} at {doc['prepared_at']['local']}; reviewed by: "
        "______________________",
        "",
    ]
    head = (
        f"{'table':<8} {'drop':>13} {'fills':>12} {'credits':>12} {'win':>13} {'hold %':>8} "
        f"{'house net':>13} {'difference':>12}"
    )
    for span, title in (
        ("window", w["label"]),
        ("month_to_date", "month to date"),
        ("year_to_date", "year to date"),
    ):
        out.append(
            f"{title} (win = closing count - opening count + credits - fills + drop; "
            "hold % = win / drop)"
        )
        out.append(head)
        for t in [*doc["tables"], {"table": "PIT", **doc["totals"]}]:
            f = t[span]
            drop = money(f["drop"]) + ("" if f["drop_counted"] else "*")
            out.append(
                f"{t['table']:<8} {drop:>13} {money(f['fills']):>12} {money(f['credits']):>12} "
                f"{money(f['win']):>13} {f['hold_pct'] or '–':>8} {money(f['house_net']):>13} "
                f"{money(f['difference']):>12}"
            )
        out.append("")
    if any(not t["window"]["drop_counted"] for t in doc["tables"]):
        out.append("* drop not counted yet: the buy-ins recorded stand for it")
        out.append("")
    out.append("Dealers (rounds ended on duty; differences found at counts while dealing)")
    for d in doc["dealers"]:
        out.append(
            f"  {d['dealer']:<22} {d['rounds']:>6} rounds  house net {money(d['house_net']):>12}"
            f"  tray {money(d['tray_difference']):>10} at {d['counts']} count(s)"
        )
    reg = doc["slip_register"]
    out.append("")
    out.append(f"Slip register: {len(reg['slips'])} slips")
    for s in reg["slips"]:
        if s["problems"]:
            out.append(
                f"  {s['table']} {s['kind']} slip {s['slip']} {money(s['amount'])}: "
                + "; ".join(s["problems"])
            )
    for g in reg["gaps"]:
        out.append(f"  {g['table']}: no slip between {g['after']} and {g['before']}")
    out.append("")
    out.append("Records verified against the tables' signed heads:")
    for h in doc["verified_against"]:
        if h["head"] is None:
            out.append(f"  {h['table']}: {h['signature']}")
        else:
            hd = h["head"]
            out.append(
                f"  {h['table']}: head at event {hd['seq']}, root {hd['root'][:16]}…, signed "
                f"{hd['signed_at']} by key {hd['key_id'][:16]}…: signature {h['signature']}"
            )
    return "\n".join(out) + "\n"
