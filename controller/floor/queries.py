"""The floor's answers: the same functions for the web pages and the command line.

Each takes the floor, who is asking (:class:`~controller.floor.audit.Who`) and what they ask;
each logs the lookup (:func:`~controller.floor.audit.log_lookup`) with its outcome, and
returns plain JSON-able data. A question the floor cannot answer (an unknown table, a time
with no round, a malformed date) raises :class:`~controller.floor.settings.InputError` with the
words the person is shown; it is logged too.

- :func:`floor_view` — every table: game, status, last event, round in play, devices at
  fault, open flags;
- :func:`find_round` — a round by table and local time, or by number, rebuilt from its events;
- :func:`rounds_in` — the rounds of a table in a time range;
- :func:`flags` — flags by rule, table, dealer and shift, each with its round;
- :func:`report` — the shift or day of a table: rounds, rounds per hour, hands, wagered, the
  table's result and hold, flags by rule, dealers on duty, shoes and their reconciliation.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from sqlalchemy.engine import Connection

from controller.floor.audit import Who, log_lookup
from controller.floor.rebuild import compare_with_store, money_of, rebuild, times
from controller.floor.schema import Floor, known_table
from controller.floor.settings import FloorSettings, InputError, NotFound, Window

T = TypeVar("T")
ROUND_COLUMNS = (
    "round, started_at, ended_at, status, first_seq, open_seq, closed_seq, last_seq, shoe_seq, "
    "dealers, boxes, hands, wagered, result, flags, rules"
)


def logged(floor: Floor, who: Who, what: str, params: dict[str, Any], answer: Callable[[], T]) -> T:
    """Answer, and log the lookup with its outcome (the error's words when it fails)."""
    try:
        out = answer()
    except InputError as exc:
        log_lookup(floor, who, what, params, f"refused: {exc}")
        raise
    log_lookup(floor, who, what, params, "ok")
    return out


def _round_row(settings: FloorSettings, r: Any) -> dict[str, Any]:
    wagered = Decimal(r[12])
    result = Decimal(r[13])
    return {
        "round": int(r[0]),
        "started": times(settings, r[1]),
        "ended": times(settings, r[2]),
        "status": r[3],
        "events": {"first": r[4], "opened": r[5], "closed": r[6], "last": r[7]},
        "shoe": r[8],
        "dealers": list(r[9] or []),
        "boxes_in_play": int(r[10]),
        "hands": int(r[11]),
        "wagered": str(wagered),
        "result": str(result),
        "flags": int(r[14]),
        "rules": list(r[15] or []),
    }


def _money(d: Decimal) -> str:
    return str(d.quantize(Decimal("0.01")))


# ----- the floor --------------------------------------------------------------------------------


def _stale_after() -> int:
    text = os.environ.get("FLOORCTL_FLOOR_STALE", "120")
    try:
        return max(5, int(text))
    except ValueError:
        return 120


# Seconds of silence after which a table's status on the floor page is marked stale
# (FLOORCTL_FLOOR_STALE; a dealing table sends an event every few seconds).
STALE_AFTER = _stale_after()


def floor_view(floor: Floor, who: Who, *, log: bool = True) -> dict[str, Any]:
    """Every table on the floor, as the floor's page lists them."""

    def answer() -> dict[str, Any]:
        settings = floor.settings
        with floor.engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT table_id, game, boxes, indexed_seq, last_event_at, last_event_type, "
                "status, round_in_play, round_started_at, rounds_played, dealer, devices, "
                "day_started_at FROM floor_tables ORDER BY table_id"
            ).all()
            since: dict[str, datetime] = {}
            for r in rows:
                start = r[12]
                if r[4] is not None:
                    day = settings.gaming_day(settings.shift_of(r[4])[0]).start
                    start = max(start, day) if start is not None else day
                if start is not None:
                    since[str(r[0])] = start
            open_flags = _open_flags(conn, since)
            from controller.floor.ingest import refused_inboxes

            refused = [{**r, "since": times(settings, r["since"])} for r in refused_inboxes(conn)]
        tables = []
        now = datetime.now(UTC)
        today = settings.today(now)
        for r in rows:
            devices = r[11] if isinstance(r[11], dict) else json.loads(str(r[11] or "{}"))
            silent = int((now - r[4]).total_seconds()) if r[4] is not None else None
            by_rule, newest = open_flags.get(str(r[0]), ({}, []))
            tables.append(
                {
                    "table": r[0],
                    "game": r[1],
                    "boxes": r[2],
                    "events": r[3],
                    "last_event": times(settings, r[4]),
                    "last_event_type": r[5],
                    "status": r[6],
                    "round_in_play": r[7],
                    "round_started": times(settings, r[8]),
                    "rounds_played": r[9],
                    "dealer": r[10],
                    "devices": [{"device": k, **v} for k, v in sorted(devices.items())],
                    "open_flags": sum(by_rule.values()),
                    "open_flag_rules": dict(sorted(by_rule.items(), key=lambda kv: -kv[1])),
                    "newest_flags": newest,
                    # Heard from last this many seconds ago; stale when a table not closed has
                    # been silent longer than the floor allows (its status is then not current).
                    "silent_for": silent,
                    "stale": silent is not None and silent > STALE_AFTER and r[6] != "closed",
                    "today": today.isoformat(),
                }
            )
        return {
            "tables": tables,
            "refused": refused,
            "at": times(settings, now),
            "today": today.isoformat(),
            "stale_after": STALE_AFTER,
        }

    if not log:
        return answer()
    return logged(floor, who, "floor", {}, answer)


def _open_flags(
    conn: Connection, since: dict[str, datetime]
) -> dict[str, tuple[dict[str, int], list[dict[str, Any]]]]:
    """Per table: its open flags counted by rule, and the newest three."""
    if not since:
        return {}
    ids = list(since)
    params = {"ids": ids, "since": [since[i] for i in ids]}
    window = (
        "FROM unnest(%(ids)s::text[], %(since)s::timestamptz[]) AS w(table_id, since) "
        "JOIN LATERAL (SELECT f.seq, f.at, f.round, f.rule, f.box, f.message FROM floor_flags f "
        "WHERE f.table_id = w.table_id AND f.at >= w.since AND f.acknowledged_seq IS NULL {}) "
        "AS f ON true"
    )
    counts = conn.exec_driver_sql(
        "SELECT w.table_id, f.rule, count(*) " + window.format("") + " GROUP BY 1, 2", params
    ).all()
    newest = conn.exec_driver_sql(
        "SELECT w.table_id, f.seq, f.round, f.rule, f.box, f.message "
        + window.format("ORDER BY f.at DESC, f.seq DESC LIMIT 3"),
        params,
    ).all()
    out: dict[str, tuple[dict[str, int], list[dict[str, Any]]]] = {}
    for table_id, rule, n in counts:
        out.setdefault(str(table_id), ({}, []))[0][str(rule)] = int(n)
    for r in newest:
        out.setdefault(str(r[0]), ({}, []))[1].insert(
            0, {"seq": r[1], "round": r[2], "rule": r[3], "box": r[4], "message": r[5]}
        )
    return out


# ----- a round ----------------------------------------------------------------------------------


def locate_round(
    floor: Floor, conn: Connection, table_id: str, *, at: str | None, number: int | None
) -> Any:
    """The ``floor_rounds`` row asked for, or an :class:`InputError` saying why there is none."""
    settings = floor.settings
    known_table(floor, conn, table_id)
    if number is not None:
        row = conn.exec_driver_sql(
            f"SELECT {ROUND_COLUMNS} FROM floor_rounds WHERE table_id = %(t)s AND round = %(n)s",
            {"t": table_id, "n": number},
        ).first()
        if row is None:
            last = conn.exec_driver_sql(
                "SELECT max(round) FROM floor_rounds WHERE table_id = %(t)s", {"t": table_id}
            ).scalar()
            raise NotFound(
                f"table {table_id} has no round {number} on the floor"
                + (f" (its rounds are 1 to {last})" if last else " (no rounds yet)")
            )
        return row
    if at is None:
        raise InputError("give a time (--at) or a round number (--round)")
    moment, minute_only = settings.local_instant(at)
    params = {"t": table_id, "at": moment}
    # In play at that moment by the table's clock: one round, or (after its clock was set back)
    # more, each named with its events; their order is their events' numbers, never the clock.
    during = conn.exec_driver_sql(
        f"SELECT {ROUND_COLUMNS} FROM floor_rounds WHERE table_id = %(t)s "
        "AND started_at <= %(at)s AND (ended_at IS NULL OR ended_at >= %(at)s) "
        "ORDER BY first_seq",
        params,
    ).all()
    if len(during) == 1:
        return during[0]
    if len(during) > 1:
        raise InputError(_overlapping(conn, table_id, during, settings.local(moment)))
    row = conn.exec_driver_sql(
        f"SELECT {ROUND_COLUMNS} FROM floor_rounds WHERE table_id = %(t)s "
        "AND started_at <= %(at)s ORDER BY started_at DESC LIMIT 1",
        params,
    ).first()
    if row is not None and row[2] is None:
        # Begun and not ended: in play only while the table was still heard from. A table gone
        # silent (past the floor's stale limit) was not playing it at a later time.
        heard = conn.exec_driver_sql(
            "SELECT last_event_at FROM floor_tables WHERE table_id = %(t)s", params
        ).scalar()
        if heard is not None and moment > heard + timedelta(seconds=STALE_AFTER):
            raise NotFound(
                f"no round was in play at table {table_id} at {settings.local(moment)} "
                f"({settings.utc(moment)}); round {row[0]} began at {settings.local(row[1])} "
                f"and has not ended: the table was last heard at {settings.local(heard)}, "
                f"silent since (see it with --round {row[0]})"
            )
        return row
    if row is not None and row[2] >= moment:
        return row
    nxt = conn.exec_driver_sql(
        f"SELECT {ROUND_COLUMNS} FROM floor_rounds WHERE table_id = %(t)s "
        "AND started_at > %(at)s ORDER BY started_at LIMIT 1",
        params,
    ).first()
    if minute_only and nxt is not None and nxt[1] < moment + timedelta(minutes=1):
        return nxt
    shown = f"{settings.local(moment)} ({settings.utc(moment)})"
    parts = [f"no round was in play at table {table_id} at {shown}"]
    if row is not None:
        parts.append(f"round {row[0]} ended at {settings.local(row[2])}")
    if nxt is not None:
        parts.append(f"round {nxt[0]} began at {settings.local(nxt[1])}")
    if row is None and nxt is None:
        parts.append("the table has no rounds on the floor")
    elif row is None:
        parts.append("that is before the table's first round on the floor")
    elif nxt is None:
        parts.append("no later round on the floor")
    raise NotFound("; ".join(parts))


def _overlapping(conn: Connection, table_id: str, rows: Sequence[Any], shown: str) -> str:
    """Why a time names more than one round: the rounds, in the order they were played, and
    the ``clock`` events that set the table's clock back between them."""
    rounds = [f"round {r[0]} (events {r[4]} to {r[7] if r[7] is not None else '…'})" for r in rows]
    clocks = [
        int(seq)
        for (seq,) in conn.exec_driver_sql(
            "SELECT seq FROM events WHERE table_id = %(t)s AND type = 'clock' "
            "AND seq > %(a)s AND seq < %(b)s ORDER BY seq",
            {"t": table_id, "a": int(rows[0][4]), "b": int(rows[-1][4])},
        )
    ]
    why = (
        f"the table's clock was set back in between (clock event {', '.join(map(str, clocks))})"
        if clocks
        else "their recorded times overlap"
    )
    return (
        f"{len(rows)} rounds were in play at table {table_id} at {shown} by its clock: "
        f"{' and '.join(rounds)}, played in that order; {why}. Ask for one by --round N"
    )


def find_round(
    floor: Floor,
    who: Who,
    table_id: str,
    *,
    at: str | None = None,
    number: int | None = None,
    steps: bool = False,
) -> dict[str, Any]:
    """The round in play at table ``table_id`` at local time ``at`` (or round ``number``),
    rebuilt from its events: cards in shoe order to their boxes and hands, decisions with who
    made them and when, the camera's wagers beside the recorded ones, settlements, flags with
    the rule's words. ``steps``: also the dealer's screen after each event."""
    params: dict[str, Any] = {"table": table_id, "at": at, "round": number}

    def answer() -> dict[str, Any]:
        with floor.engine.connect() as conn:
            row = locate_round(floor, conn, table_id, at=at, number=number)
            return round_document(floor, conn, table_id, row, steps=steps)

    return logged(floor, who, "round", params, answer)


def round_document(
    floor: Floor, conn: Connection, table_id: str, row: Any, *, steps: bool
) -> dict[str, Any]:
    settings = floor.settings
    info = _round_row(settings, row)
    setup_row = conn.exec_driver_sql(
        "SELECT setup FROM tables WHERE table_id = %(t)s", {"t": table_id}
    ).scalar()
    setup = json.loads(str(setup_row))
    number = info["round"]
    first, last = int(row[4]), int(row[7])
    built = rebuild(floor, conn, table_id, setup, first, last, number)
    result = built.result.to_dict() if built.result is not None else None
    round_flags = [f for f in built.flags if f.get("round") in (number, None)]
    problems = compare_with_store(conn, table_id, built.result, built.flags, first, last)
    if built.result is not None and built.result.round != number:
        problems.append(f"the rebuilt events ended round {built.result.round}, not {number}")
    wagers = []
    for box in sorted(set(built.bets) | set(built.camera)):
        wagers.append(
            {"box": box, "recorded": built.bets.get(box, []), "seen": built.camera.get(box, [])}
        )
    rules = _rules_of(setup)
    doc: dict[str, Any] = {
        "table": table_id,
        "game": setup.get("game"),
        "boxes": setup.get("boxes"),
        **info,
        "time_zone": settings.tz_name,
        "dealer": result["dealer"] if result else None,
        "hands": result["hands"] if result else [],
        "settlements": result["settlements"] if result else [],
        "cards": built.cards,
        "decisions": built.decisions,
        "wagers": wagers,
        "flags": [
            {
                "seq": f["seq"],
                "round": f["round"],
                "rule": f["rule"],
                "box": f["box"],
                "words": f["words"] or rules.get(f["rule"], ""),
                "message": f["message"],
                "direction": f.get("direction", ""),
                "needs": f.get("needs"),
                "at": times(settings, _parse(f["at"])),
            }
            for f in round_flags
        ],
        **money_of(built.result),
        "checks": {
            "chain": built.chain_ok,
            "chain_problem": built.chain_problem or None,
            "matches_table_record": not problems,
            "differences": problems,
            "checkpoint": built.checkpoint_problem or None,
        },
    }
    if result is not None and "dealers" in result:
        doc["dealers"] = result["dealers"]
    if steps:
        doc["steps"] = built.steps
    return doc


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _rules_of(setup: dict[str, Any]) -> dict[str, str]:
    from controller.events import parse_setup

    return dict(parse_setup(setup, 1).rules.rule_words)


def rounds_in(floor: Floor, who: Who, table_id: str, window: Window) -> dict[str, Any]:
    """The rounds of a table that began within the window, oldest first."""
    params = {"table": table_id, "from": window.start, "to": window.end}

    def answer() -> dict[str, Any]:
        with floor.engine.connect() as conn:
            known_table(floor, conn, table_id)
            rows = conn.exec_driver_sql(
                f"SELECT {ROUND_COLUMNS} FROM floor_rounds WHERE table_id = %(t)s "
                "AND started_at >= %(a)s AND started_at < %(b)s ORDER BY first_seq",
                {"t": table_id, "a": window.start, "b": window.end},
            ).all()
        return {
            "table": table_id,
            "window": _window(floor.settings, window),
            "rounds": [_round_row(floor.settings, r) for r in rows],
        }

    return logged(floor, who, "rounds", params, answer)


def _window(settings: FloorSettings, window: Window) -> dict[str, Any]:
    return {
        "label": window.label,
        "from": times(settings, window.start),
        "to": times(settings, window.end),
        "time_zone": settings.tz_name,
    }


# ----- flags ------------------------------------------------------------------------------------


def flags(
    floor: Floor,
    who: Who,
    window: Window,
    *,
    rule: str | None = None,
    table_id: str | None = None,
    dealer: str | None = None,
    shift: str | None = None,
    limit: int = 2000,
) -> dict[str, Any]:
    """The flags raised within the window, filtered; with counts by rule, table, dealer and
    shift. Each names its round (the page links it)."""
    params = {
        "from": window.start,
        "to": window.end,
        "rule": rule,
        "table": table_id,
        "dealer": dealer,
        "shift": shift,
    }

    def answer() -> dict[str, Any]:
        settings = floor.settings
        if shift is not None and shift not in [n for n, _ in settings.shifts]:
            raise InputError(
                f"no shift {shift!r}: the shifts are {', '.join(n for n, _ in settings.shifts)}"
            )
        sql = (
            "SELECT table_id, seq, idx, at, round, rule, box, message, dealer, acknowledged_at, "
            "acknowledged_by FROM floor_flags WHERE at >= %(a)s AND at < %(b)s"
        )
        q: dict[str, Any] = {"a": window.start, "b": window.end, "n": limit}
        with floor.engine.connect() as conn:
            if table_id is not None:
                known_table(floor, conn, table_id)
                sql += " AND table_id = %(t)s"
                q["t"] = table_id
            if rule is not None:
                sql += " AND rule = %(r)s"
                q["r"] = rule
            if dealer is not None:
                sql += " AND dealer = %(d)s"
                q["d"] = dealer
            sql += " ORDER BY at, table_id, seq, idx LIMIT %(n)s"
            rows = conn.exec_driver_sql(sql, q).all()
            words = _words_by_table(conn, {str(r[0]) for r in rows})
        out = []
        for r in rows:
            day, name = settings.shift_of(r[3])
            if shift is not None and name != shift:
                continue
            out.append(
                {
                    "table": r[0],
                    "seq": r[1],
                    "at": times(settings, r[3]),
                    "round": r[4],
                    "rule": r[5],
                    "words": words.get(str(r[0]), {}).get(str(r[5]), ""),
                    "box": r[6],
                    "message": r[7],
                    "dealer": r[8],
                    "shift": f"{day.isoformat()} {name}",
                    "acknowledged": times(settings, r[9]) if r[9] is not None else None,
                    "acknowledged_by": r[10],
                }
            )
        return {
            "window": _window(settings, window),
            "filters": {"rule": rule, "table": table_id, "dealer": dealer, "shift": shift},
            "flags": out,
            "by_rule": dict(Counter(f["rule"] for f in out).most_common()),
            "by_table": dict(Counter(f["table"] for f in out).most_common()),
            "by_dealer": dict(Counter(f["dealer"] or "(not recorded)" for f in out).most_common()),
            "by_shift": dict(Counter(f["shift"] for f in out).most_common()),
            "truncated": len(rows) >= limit,
        }

    return logged(floor, who, "flags", params, answer)


def _words_by_table(conn: Connection, table_ids: set[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for tid in sorted(table_ids):
        setup = conn.exec_driver_sql(
            "SELECT setup FROM tables WHERE table_id = %(t)s", {"t": tid}
        ).scalar()
        if setup is not None:
            out[tid] = _rules_of(json.loads(str(setup)))
    return out


# ----- the shift or day of a table --------------------------------------------------------------


def report(floor: Floor, who: Who, table_id: str, window: Window) -> dict[str, Any]:
    """The shift or day of a table: the figures a pit manager signs off."""
    params = {"table": table_id, "from": window.start, "to": window.end, "label": window.label}

    def answer() -> dict[str, Any]:
        settings = floor.settings
        with floor.engine.connect() as conn:
            known_table(floor, conn, table_id)
            game = conn.exec_driver_sql(
                "SELECT game FROM tables WHERE table_id = %(t)s", {"t": table_id}
            ).scalar()
            rows, flag_rows, shoe_rows, words = report_rows(conn, table_id, window)
            tray = table_tray(conn, table_id, window)
        doc = summarise(settings, table_id, str(game), window, rows, flag_rows, shoe_rows, words)
        doc["tray"] = tray
        return doc

    return logged(floor, who, "report", params, answer)


def table_tray(conn: Connection, table_id: str, window: Window) -> dict[str, Any] | None:
    """The table's tray over the window (:mod:`controller.floor.pit`): None when it has no
    count in it."""
    from controller.floor.pit import drops_of, figures, rows_of

    rows = rows_of(conn, window.start, window.end, table_id)
    counted = [r for r in rows if r.kind != "drop"]
    if not any(r.kind in ("opener", "check", "closer") for r in counted):
        return None
    return figures(counted, drops_of(rows)).to_dict()


def report_rows(
    conn: Connection, table_id: str, window: Window
) -> tuple[list[Any], list[Any], list[Any], dict[str, str]]:
    """What a report of a table over a window is made from: its rounds, its flags by rule, its
    shoes, its rule set's words."""
    params = {"t": table_id, "a": window.start, "b": window.end}
    rows = conn.exec_driver_sql(
        f"SELECT {ROUND_COLUMNS} FROM floor_rounds WHERE table_id = %(t)s "
        "AND started_at >= %(a)s AND started_at < %(b)s ORDER BY first_seq",
        params,
    ).all()
    flag_rows = conn.exec_driver_sql(
        "SELECT rule, count(*), count(acknowledged_seq) FROM floor_flags WHERE table_id = %(t)s "
        "AND at >= %(a)s AND at < %(b)s GROUP BY rule ORDER BY count(*) DESC, rule",
        params,
    ).all()
    shoe_rows = conn.exec_driver_sql(
        "SELECT seq, kind, loaded_at, decks, ended_at, reconciled, missing, extra FROM "
        "floor_shoes WHERE table_id = %(t)s AND loaded_at >= %(a)s AND loaded_at < %(b)s "
        "ORDER BY seq",
        params,
    ).all()
    words = _words_by_table(conn, {table_id}).get(table_id, {})
    return list(rows), list(flag_rows), list(shoe_rows), words


def summarise(
    settings: FloorSettings,
    table_id: str,
    game: str,
    window: Window,
    rows: list[Any],
    flag_rows: list[Any],
    shoe_rows: list[Any],
    words: dict[str, str],
) -> dict[str, Any]:
    ended = [r for r in rows if r[3] in ("settled", "void")]
    settled = [r for r in ended if r[3] == "settled"]
    wagered = sum((Decimal(r[12]) for r in ended), Decimal(0))
    result = sum((Decimal(r[13]) for r in ended), Decimal(0))
    hands = sum(int(r[11]) for r in settled)
    first = min((r[1] for r in rows), default=None)
    last = max((r[2] for r in ended if r[2] is not None), default=None)
    play_hours = (last - first).total_seconds() / 3600 if first and last and last > first else 0
    hourly: dict[str, dict[str, Any]] = {}
    for r in ended:
        hour = r[1].astimezone(settings.tz).strftime("%Y-%m-%d %H:00")
        h = hourly.setdefault(
            hour, {"hour": hour, "rounds": 0, "wagered": Decimal(0), "result": Decimal(0)}
        )
        h["rounds"] += 1
        h["wagered"] += Decimal(r[12])
        h["result"] += Decimal(r[13])
    dealers: dict[str, dict[str, Any]] = {}
    for r in rows:
        done = r[3] in ("settled", "void")
        for d in r[9] or []:
            e = dealers.setdefault(
                d, {"dealer": d, "rounds": 0, "in_play": 0, "from": r[1], "to": r[2] or r[1]}
            )
            # Rounds ended, as the report's own count; a round still in play apart.
            e["rounds" if done else "in_play"] += 1
            e["from"] = min(e["from"], r[1])
            e["to"] = max(e["to"], r[2] or r[1])
    shoes = [
        {
            "shoe": int(s[0]),
            "kind": s[1],
            "loaded": times(settings, s[2]),
            "decks": s[3],
            "ended": times(settings, s[4]),
            "reconciled": s[5],
            "missing": s[6] if isinstance(s[6], list) else json.loads(str(s[6] or "[]")),
            "extra": s[7] if isinstance(s[7], list) else json.loads(str(s[7] or "[]")),
        }
        for s in shoe_rows
    ]
    return {
        "table": table_id,
        "game": game,
        "window": _window(settings, window),
        "rounds": len(ended),
        "rounds_settled": len(settled),
        "rounds_void": len(ended) - len(settled),
        "rounds_in_play": len(rows) - len(ended),
        "first_round": times(settings, first),
        "last_round_ended": times(settings, last),
        "play_hours": round(play_hours, 3),
        "rounds_per_hour": round(len(ended) / play_hours, 1) if play_hours else None,
        "hands": hands,
        "wagered": _money(wagered),
        "result": _money(result),
        # The house's result as a share of what was wagered: not "hold" (the trade's hold is
        # win / drop, the tray's figure below).
        "result_pct_of_wagered": (
            f"{(result / wagered * 100).quantize(Decimal('0.01'))}%" if wagered else None
        ),
        "flags_by_rule": [
            {
                "rule": f[0],
                "words": words.get(str(f[0]), ""),
                "count": int(f[1]),
                "acknowledged": int(f[2]),
            }
            for f in flag_rows
        ],
        "flags": sum(int(f[1]) for f in flag_rows),
        "dealers": [
            {
                "dealer": d["dealer"],
                "rounds": d["rounds"],
                "in_play": d["in_play"],
                "from": times(settings, d["from"]),
                "to": times(settings, d["to"]),
            }
            for d in sorted(dealers.values(), key=lambda e: e["from"])
        ],
        "shoes": shoes,
        "shoes_reconciled": sum(1 for s in shoes if s["reconciled"] is True),
        "shoes_not_reconciled": sum(1 for s in shoes if s["reconciled"] is False),
        "shoes_open": sum(1 for s in shoes if s["reconciled"] is None),
        "by_hour": [
            {**h, "wagered": _money(h["wagered"]), "result": _money(h["result"])}
            for h in hourly.values()
        ],
        "round_list": [
            {
                "round": int(r[0]),
                "started": times(settings, r[1]),
                "status": r[3],
                "wagered": str(r[12]),
                "result": str(r[13]),
                "flags": int(r[14]),
            }
            for r in rows
        ],
    }
