"""The floor's answers as readable text, for a person at a terminal (``floorctl floor ...``
without ``--json``). They print what :mod:`controller.floor.queries` returns, nothing more."""

from __future__ import annotations

from typing import Any

from controller.roundtext import round_lines


def _t(times: dict[str, str] | None) -> str:
    if not times or not times.get("local"):
        return "-"
    return f"{times['local']} ({times['utc']})"


def _to(card: dict[str, Any]) -> str:
    dest = card.get("to")
    if dest:
        return str(dest["text"])
    return f"NOT DEALT: {card.get('not_dealt') or 'not dealt'}"


def _who(who: dict[str, Any]) -> str:
    role = str(who.get("role") or "")
    name = who.get("name")
    text = f"{role} {name}" if name else role
    if who.get("source") and who.get("source") not in ("dealer", "shoe", "camera"):
        text += f" [{who['source']}]"
    return text


def format_round(doc: dict[str, Any]) -> str:
    out = [
        f"table {doc['table']}  {doc['game']}  round {doc['round']}  {doc['status']}",
        f"began  {_t(doc['started'])}",
        f"ended  {_t(doc['ended'])}",
        f"shoe   loaded at event {doc['shoe']}   events {doc['events']['first']}"
        f"-{doc['events']['last']}   dealers: {', '.join(doc['dealers']) or 'not recorded'}",
        "",
        "cards, in shoe order:",
    ]
    for c in doc["cards"]:
        out.append(f"  #{c['seq']:<7} {c['local']:<26} {c['card']:<3} -> {_to(c)}")
    out.append("")
    out.append("decisions:")
    for d in doc["decisions"]:
        where = f" box {d['box']}" if d.get("box") is not None else ""
        amount = f" {d['amount']}" if d.get("amount") is not None else ""
        refused = "  (refused)" if d.get("refused") else ""
        out.append(
            f"  #{d['seq']:<7} {d['local']:<26} {d['type']}{where}{amount}  by {_who(d['who'])}"
            f"{refused}"
        )
    if doc["wagers"]:
        out.append("")
        out.append("wagers recorded / seen by the camera:")
        for w in doc["wagers"]:
            rec = ", ".join(
                f"{b['player']} {b['amount']}{'' if b['accepted'] else ' (refused)'}"
                for b in w["recorded"]
            )
            seen = ", ".join(s["amount"] for s in w["seen"])
            out.append(f"  box {w['box']}: recorded {rec or '-'}; camera {seen or '-'}")
    if doc["dealer"]:
        out.append("")
        # The round's hands and settlements as every text of a round prints them; the flags
        # follow below with the rule's words.
        out.extend(round_lines({**doc, "flags": [], "dealers": []}))
    if doc["settlements"]:
        out.append(f"  wagered {doc['wagered']}; the house won {doc['result']}")
    if doc["flags"]:
        out.append("")
        out.append("flags:")
        for f in doc["flags"]:
            box = f" box {f['box']}" if f.get("box") is not None else ""
            out.append(f"  {f['rule']}{box} at event {f['seq']}, {_t(f['at'])}")
            if f.get("words"):
                out.append(f"      the rule: {f['words']}")
            if f.get("direction"):
                out.append(f"      what the rule directs: {f['direction']}")
            out.append(f"      what happened: {f['message']}")
    checks = doc["checks"]
    out.append("")
    out.append(
        "checks: hash chain of these events "
        + ("intact" if checks["chain"] else f"BROKEN ({checks['chain_problem']})")
        + "; the table's own record "
        + (
            "matches"
            if checks["matches_table_record"]
            else "DIFFERS: " + "; ".join(checks["differences"])
        )
    )
    if checks.get("checkpoint"):
        out.append(f"note: {checks['checkpoint']}; the round was rebuilt from the table line")
    return "\n".join(out)


def format_rounds(doc: dict[str, Any]) -> str:
    w = doc["window"]
    out = [f"table {doc['table']}: rounds from {w['from']['local']} to {w['to']['local']}"]
    out.append(
        f"{'round':>6}  {'began':<24} {'ended':<24} {'status':<8} {'wagered':>9} "
        f"{'result':>9} flags"
    )
    for r in doc["rounds"]:
        out.append(
            f"{r['round']:>6}  {r['started']['local']:<24} {r['ended']['local'] or '-':<24} "
            f"{r['status']:<8} {r['wagered']:>9} {r['result']:>9} {' '.join(r['rules'])}"
        )
    out.append(f"{len(doc['rounds'])} round(s)")
    return "\n".join(out)


def format_report(doc: dict[str, Any]) -> str:
    w = doc["window"]
    rows = [
        ("table", f"{doc['table']} ({doc['game']})"),
        ("window", f"{w['label']}: {w['from']['local']} to {w['to']['local']}"),
        ("", f"{w['from']['utc']} to {w['to']['utc']} UTC"),
        (
            "rounds",
            f"{doc['rounds']} ({doc['rounds_settled']} settled, {doc['rounds_void']} void"
            + (f", {doc['rounds_in_play']} in play" if doc["rounds_in_play"] else "")
            + ")",
        ),
        (
            "play",
            f"{_t(doc['first_round'])} to {_t(doc['last_round_ended'])} ({doc['play_hours']} h)",
        ),
        (
            "rounds per hour",
            str(doc["rounds_per_hour"] if doc["rounds_per_hour"] is not None else "-"),
        ),
        ("hands", str(doc["hands"])),
        ("total wagered", _dollars(doc["wagered"])),
        ("table result", f"{_dollars(doc['result'])} (what the house won)"),
        ("result/wagered", doc["result_pct_of_wagered"] or "-"),
        ("flags", str(doc["flags"])),
    ]
    tray = doc.get("tray")
    if tray is not None:
        drop = _dollars(tray["drop"]) + ("" if tray["drop_counted"] else " (not counted yet)")
        rows += [
            ("drop", drop),
            ("fills, credits", f"{_dollars(tray['fills'])}, {_dollars(tray['credits'])}"),
            ("win", f"{_dollars(tray['win'])} (closing - opening + credits - fills + drop)"),
            ("hold %", f"{tray['hold_pct'] or '-'} (win / drop)"),
            ("difference", f"{_dollars(tray['difference'])} (win - the rounds' house net)"),
        ]
    out = [f"{k:<16} {v}" for k, v in rows]
    if doc["flags_by_rule"]:
        out.append("")
        out.append("flags by rule:")
        for f in doc["flags_by_rule"]:
            out.append(f"  {f['rule']:<7} {f['count']:>5}  {f['words']}")
    out.append("")
    out.append("dealers on duty:")
    if not doc["dealers"]:
        out.append("  (none recorded)")
    for d in doc["dealers"]:
        out.append(
            f"  {d['dealer']:<12} {d['rounds']:>5} rounds  {d['from']['local']} to "
            f"{d['to']['local']}"
            + (f"  (+{d['in_play']} in play)" if d.get("in_play") else "")
        )
    out.append("")
    out.append(
        f"shoes: {len(doc['shoes'])} loaded; {doc['shoes_reconciled']} reconciled, "
        f"{doc['shoes_not_reconciled']} NOT reconciled, {doc['shoes_open']} not reconciled yet"
    )
    for s in doc["shoes"]:
        state = {True: "reconciled", False: "NOT RECONCILED", None: "not reconciled yet"}[
            s["reconciled"]
        ]
        detail = ""
        if s["missing"]:
            detail += f"; missing {', '.join(s['missing'])}"
        if s["extra"]:
            detail += f"; extra {', '.join(s['extra'])}"
        out.append(f"  shoe {s['shoe']:<7} {s['loaded']['local']:<24} {state}{detail}")
    if doc["by_hour"]:
        out.append("")
        out.append(f"{'hour':<17} {'rounds':>6} {'wagered':>10} {'result':>10}")
        for h in doc["by_hour"]:
            out.append(
                f"{h['hour']:<17} {h['rounds']:>6} {_dollars(h['wagered']):>10} "
                f"{_dollars(h['result']):>10}"
            )
    return "\n".join(out)


def _dollars(text: str | None) -> str:
    from controller.floor.pit import money

    return money(text)


def format_flags(doc: dict[str, Any]) -> str:
    w = doc["window"]
    out = [f"flags from {w['from']['local']} to {w['to']['local']}"]
    for f in doc["flags"]:
        box = f" box {f['box']}" if f.get("box") is not None else ""
        out.append(
            f"  {f['at']['local']:<24} {f['table']:<6} round {f['round']:<6} {f['rule']:<6}{box}"
            f"  {f['message']}  [{f['dealer'] or '-'}; {f['shift']}]"
        )
    out.append("")
    for key, title in (
        ("by_rule", "by rule"),
        ("by_table", "by table"),
        ("by_dealer", "by dealer"),
        ("by_shift", "by shift"),
    ):
        counts = ", ".join(f"{k} {v}" for k, v in doc[key].items()) or "-"
        out.append(f"{title}: {counts}")
    return "\n".join(out)


def format_floor(doc: dict[str, Any]) -> str:
    out = [
        f"{'table':<8} {'game':<18} {'status':<15} {'round':>6} {'last event':<24} "
        f"{'open flags':>10}  devices at fault"
    ]
    for t in doc["tables"]:
        devices = ", ".join(f"{d['device']} ({d['reason']})" for d in t["devices"]) or "-"
        out.append(
            f"{t['table']:<8} {t['game']:<18} {t['status']:<15} "
            f"{t['round_in_play'] or '-':>6} {t['last_event']['local'] or '-':<24} "
            f"{t['open_flags']:>10}  {devices}"
        )
    for r in doc.get("refused", []):
        out.append(
            f"table {r['table']}: its inbox is refused since {r['since']['local']}, nothing "
            f"after it taken in: {r['why']}"
        )
    return "\n".join(out)


def format_lookups(rows: list[dict[str, Any]]) -> str:
    out = [f"{'when':<24} {'who':<16} {'role':<12} {'via':<4} {'what':<9} outcome / asked"]
    for r in rows:
        asked = ", ".join(f"{k}={v}" for k, v in r["params"].items() if v is not None)
        out.append(
            f"{r['at']:<24} {r['who']:<16} {r['role']:<12} {r['via']:<4} {r['what']:<9} "
            f"{r['outcome']}  {asked}"
        )
    return "\n".join(out)
