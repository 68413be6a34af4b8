"""Game protection on the floor: the analysis of ``controller.protect`` over the floor database.

- :func:`records` — each table's record for a window, read from the store's events: from the
  floor's checkpoint just before the shoe the window begins in (the count starts at a shuffle,
  so nothing before it is needed), to the window's last round, with each event's recorded time;
- :func:`protect_view` — the window's analysis (players, dealers, tables, shuffles) and the hold
  of each table and game for the day, month to date and year to date from the read model;
- :func:`player_view` — one player's sessions at a table with the points of their charts;
- :func:`alerts_now` — the players and dealers at alert or watch, for the live feed.

Each answer is logged as a lookup (who asked what), like every other question to the floor.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from controller.engine import SnapshotError
from controller.floor.audit import Who
from controller.floor.indexer import fold_at
from controller.floor.queries import logged
from controller.floor.schema import Floor, known_table
from controller.floor.settings import InputError, NotFound, Window, parse_recorded
from controller.protect.analysis import Z95, analyse, analyse_session, sessions
from controller.protect.record import TableRecord, read_from
from controller.protect.tags import CountError, count_system
from controller.protect.verdict import load_calibration


def _table_ids(floor: Floor, window: Window) -> list[str]:
    with floor.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT DISTINCT table_id FROM floor_rounds WHERE started_at >= %(a)s "
            "AND started_at < %(b)s ORDER BY 1",
            {"a": window.start, "b": window.end},
        )
        return [str(r[0]) for r in rows]


def table_record(floor: Floor, table_id: str, window: Window) -> TableRecord | None:
    """The table's record over the rounds that began in ``window`` (None: no round)."""
    with floor.engine.connect() as conn:
        known_table(floor, conn, table_id)
        span = conn.exec_driver_sql(
            "SELECT min(first_seq), max(last_seq) FROM floor_rounds WHERE table_id = %(t)s "
            "AND started_at >= %(a)s AND started_at < %(b)s",
            {"t": table_id, "a": window.start, "b": window.end},
        ).first()
        if span is None or span[0] is None:
            return None
        first, last = int(span[0]), int(span[1])
        setup_body = conn.exec_driver_sql(
            "SELECT setup FROM tables WHERE table_id = %(t)s", {"t": table_id}
        ).scalar()
        checkpoint = conn.exec_driver_sql(
            "SELECT seq, snapshot, state FROM floor_checkpoints WHERE table_id = %(t)s "
            "AND seq < %(s)s ORDER BY seq DESC LIMIT 1",
            {"t": table_id, "s": first},
        ).first()
    setup: Mapping[str, Any] = json.loads(str(setup_body))
    start = 0 if checkpoint is None else int(checkpoint[0])
    dealer: str | None = None
    try:
        fold = fold_at(table_id, setup, None if checkpoint is None else str(checkpoint[1]), start)
        if checkpoint is not None:
            state = checkpoint[2] if isinstance(checkpoint[2], dict) else json.loads(checkpoint[2])
            dealer = state.get("dealer")
    except (SnapshotError, ValueError):  # a damaged cache: from the table line instead
        start = 0
        fold = fold_at(table_id, setup, None, 0)
    events: list[tuple[int, Mapping[str, Any], datetime | None]] = []
    if dealer:
        events.append((start, {"type": "dealer", "dealer": dealer}, None))
    # The checkpoint holds the table after its own event: the walk starts after it.
    for record in floor.store.iter_records(table_id, after=start, upto=last):
        events.append((record.seq, record.event(), parse_recorded(record.recorded_at)))
    rec = read_from(setup, fold.table, events, table_id=table_id)
    return clip(rec, window)


def clip(rec: TableRecord, window: Window) -> TableRecord:
    """Only what began in the window (the rounds before it only set the count)."""

    def inside(at: datetime | None) -> bool:
        return at is not None and window.start <= at < window.end

    return rec.restricted(
        [r for r in rec.rounds if inside(r.start)],
        shuffles=[s for s in rec.shuffles if inside(s.at)],
        flags=[f for f in rec.flags if inside(f.at)],
    )


def records(floor: Floor, window: Window, table_id: str | None = None) -> list[TableRecord]:
    ids = [table_id] if table_id else _table_ids(floor, window)
    out = []
    for t in ids:
        rec = table_record(floor, t, window)
        if rec is not None:
            out.append(rec)
    return out


def _window_doc(floor: Floor, window: Window) -> dict[str, Any]:
    s = floor.settings
    return {
        "label": window.label,
        "start": s.local(window.start),
        "end": s.local(window.end),
        "start_utc": s.utc(window.start),
        "end_utc": s.utc(window.end),
    }


def hold_to_date(floor: Floor, window: Window) -> list[dict[str, Any]]:
    """Each table's hold for the window's day, month to date and year to date, against its
    game's house edge with a 95% band from the rounds' own variance (read model sums)."""
    end = window.end
    local_end = (end - timedelta(microseconds=1)).astimezone(floor.settings.tz)
    day = floor.settings.gaming_day(
        local_end.date()
        if local_end.time() >= floor.settings.shifts[0][1]
        else local_end.date() - timedelta(days=1)
    )
    month = floor.settings.gaming_day(day.start.astimezone(floor.settings.tz).date().replace(day=1))
    year = floor.settings.gaming_day(
        day.start.astimezone(floor.settings.tz).date().replace(month=1, day=1)
    )
    spans = {"day": day.start, "month to date": month.start, "year to date": year.start}
    out: list[dict[str, Any]] = []
    with floor.engine.connect() as conn:
        games = {
            str(r[0]): str(r[1]) for r in conn.exec_driver_sql("SELECT table_id, game FROM tables")
        }
        for label, start in spans.items():
            rows = conn.exec_driver_sql(
                "SELECT table_id, count(*), sum(wagered), sum(result), sum(result * result), "
                "sum(result * wagered), sum(wagered * wagered) FROM floor_rounds "
                "WHERE started_at >= %(a)s AND started_at < %(b)s AND status = 'settled' "
                "GROUP BY table_id ORDER BY table_id",
                {"a": start, "b": day.end},
            )
            for table_id, n, w, r, rr, rw, ww in rows:
                game = games.get(str(table_id), "")
                try:
                    edge = count_system(game, "T" if game.startswith("pontoon") else "").house_edge
                except CountError:
                    continue
                w, r = Decimal(w or 0), Decimal(r or 0)
                expected = float(w) * edge
                sq = float(rr or 0) - 2 * edge * float(rw or 0) + edge * edge * float(ww or 0)
                half = Z95 * math.sqrt(max(sq, 0.0))
                inside = expected - half <= float(r) <= expected + half
                out.append(
                    {
                        "table_id": str(table_id),
                        "game": game,
                        "span": label,
                        "rounds": int(n),
                        "wagered": str(w),
                        "result": str(r),
                        "expected": round(expected, 2),
                        "band_95": [round(expected - half, 2), round(expected + half, 2)],
                        "hold": float(r / w) if w else None,
                        "expected_hold": edge,
                        "outside_band": not inside and int(n) > 1,
                    }
                )
    return out


def protect_view(
    floor: Floor, who: Who, window: Window, table_id: str | None = None
) -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        doc = analyse(
            records(floor, window, table_id),
            load_calibration(),
            shift=lambda at: floor.settings.shift_of(at)[1],
        )
        doc["window"] = _window_doc(floor, window)
        doc["hold_to_date"] = hold_to_date(floor, window)
        return doc

    return logged(floor, who, "protect", {"window": window.label, "table": table_id}, answer)


def player_view(
    floor: Floor, who: Who, table_id: str, player: str, window: Window
) -> dict[str, Any]:
    """One player's sessions at a table in the window, with their chart points and rounds."""

    def answer() -> dict[str, Any]:
        rec = table_record(floor, table_id, window)
        if rec is None:
            raise NotFound(f"table {table_id} has no round in {window.label}")
        mine = [s for s in sessions(rec) if s.player == player]
        if not mine:
            raise NotFound(f"{player!r} played no round at table {table_id} in {window.label}")
        cal = load_calibration()
        out = []
        for s in mine:
            doc = analyse_session(s, cal)
            expected = 0.0
            result = 0.0
            curve = []
            for rnd, pr in s.rounds:
                result += float(pr.net)
                expected += float(pr.wager) * s.table.count.advantage(rnd.true_count)
                curve.append(
                    {"round": rnd.round, "result": round(result, 2), "expected": round(expected, 2)}
                )
            doc["points"] = {
                "bets": [
                    {
                        "round": rnd.round,
                        "true_count": round(rnd.true_count, 2),
                        "bet": str(pr.wager),
                        "net": str(pr.net),
                        "at": floor.settings.local(rnd.start),
                        "seq_first": rnd.seq_first,
                        "seq_last": rnd.seq_last,
                    }
                    for rnd, pr in s.rounds
                ],
                "departures": [
                    {
                        "round": d.round,
                        "event": d.seq,
                        "hand": " ".join(d.cards),
                        "up": d.up,
                        "advised": d.advised,
                        "did": d.action,
                        "true_count": round(d.true_count, 2),
                        "next_card": d.next_card,
                        "hole": d.hole,
                    }
                    for d in s.decisions
                    if d.action != d.advised
                ],
                "curve": curve,
            }
            out.append(doc)
        return {
            "table_id": table_id,
            "player": player,
            "game": rec.game,
            "window": _window_doc(floor, window),
            "sessions": out,
        }

    return logged(
        floor,
        who,
        "protect player",
        {"table": table_id, "player": player, "window": window.label},
        answer,
    )


def alerts_now(floor: Floor, window: Window) -> list[dict[str, Any]]:
    """Players and dealers at watch or alert in the window (not logged: the feed's refresh)."""
    doc = analyse(records(floor, window), load_calibration())
    out: list[dict[str, Any]] = []
    for p in doc["players"]:
        v = p["verdict"]
        if v["level"] != "clear":
            out.append(
                {
                    "kind": "player",
                    "level": v["level"],
                    "table_id": p["table_id"],
                    "player": p["player"],
                    "round": p["last_round"],
                    "reasons": v["reasons"],
                    "false_alarm_rate": v["false_alarm_rate"],
                }
            )
    for d in doc["dealers"]:
        v = d["verdict"]
        if v["level"] != "clear":
            out.append(
                {
                    "kind": "dealer",
                    "level": v["level"],
                    "dealer": d["dealer"],
                    "tables": d["tables"],
                    "reasons": v["reasons"],
                    "false_alarm_rate": v["false_alarm_rate"],
                }
            )
    return out


def flags_since(floor: Floor, since: datetime, acked_since: datetime) -> list[dict[str, Any]]:
    """Flags raised after ``since`` and acknowledgements after ``acked_since`` (the feed)."""
    s = floor.settings
    with floor.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT table_id, seq, at, round, rule, box, message, dealer, acknowledged_at, "
            "acknowledged_by FROM floor_flags WHERE at > %(a)s OR acknowledged_at > %(k)s "
            "ORDER BY at, seq LIMIT 500",
            {"a": since, "k": acked_since},
        ).all()
    return [
        {
            "kind": "flag",
            "table_id": r[0],
            "event": int(r[1]),
            "at": s.local(r[2]),
            "at_utc": r[2].astimezone(UTC).isoformat(),
            "round": int(r[3]),
            "rule": r[4],
            "box": r[5],
            "message": r[6],
            "dealer": r[7],
            "acknowledged_at": s.local(r[8]) if r[8] else None,
            "acknowledged_at_utc": r[8].astimezone(UTC).isoformat() if r[8] else None,
            "acknowledged_by": r[9],
        }
        for r in rows
    ]


def parse_window_day(floor: Floor, date: str | None) -> Window:
    if not date:
        raise InputError("give a gaming day (date)")
    return floor.settings.gaming_day(floor.settings.parse_date(date))
