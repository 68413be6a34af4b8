"""Evidence a regulator can take away: a round or a time range as one readable report beside
the machine files.

``write_evidence`` writes into an empty directory::

    export/            the audit store's own export (controller.store.export: the table's
                       scenario from its table line, chain, rounds, settlements, flags, shoes,
                       timelines and manifest.json, and whatever else the store's export
                       writes); `floorctl verify export/` checks it on its own
    report.html        the round (or the range's report and every round in it) rebuilt from
                       the events: times in local time and UTC, cards to their boxes and hands,
                       decisions with who made them, the rule words of every flag, and the
                       export's manifest (every file's SHA-256 and the table's head hash)
    report.pdf         the same, printable
    evidence.json      what was asked, by whom and when, and the SHA-256 of report.html,
                       report.pdf and export/manifest.json (and proof.json)
    proof.json         for a round whose end a signed head the floor holds covers: the round's
                       events with their inclusion proofs under that head (controller.store.
                       proof); `floorctl verify-proof proof.json --key table.pub` checks it
                       with the table's public key alone

The machine files are the store's: this package adds readable reports and never a second
format of the record.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.floor import queries
from controller.floor.audit import Who
from controller.floor.schema import Floor, known_table
from controller.floor.settings import InputError, Window
from controller.store.export import export

FORMAT = "floorctl-floor-evidence/1"
MAX_ROUNDS = 2000  # rounds rebuilt into one report (a gaming day is some 800 at a busy table)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_evidence(
    floor: Floor,
    who: Who,
    table_id: str,
    out: Path,
    *,
    number: int | None = None,
    at: str | None = None,
    window: Window | None = None,
) -> list[str]:
    """Write the evidence package; returns lines saying what was written."""
    params = {
        "table": table_id,
        "round": number,
        "at": at,
        "from": window.start if window else None,
        "to": window.end if window else None,
    }

    def answer() -> list[str]:
        return _write(floor, who, table_id, out, number=number, at=at, window=window)

    return queries.logged(floor, who, "evidence", params, answer)


def _write(
    floor: Floor,
    who: Who,
    table_id: str,
    out: Path,
    *,
    number: int | None,
    at: str | None,
    window: Window | None,
) -> list[str]:
    settings = floor.settings
    report: dict[str, Any] | None = None
    with floor.engine.connect() as conn:
        if number is not None or at is not None:
            row = queries.locate_round(floor, conn, table_id, at=at, number=number)
            rounds = [queries.round_document(floor, conn, table_id, row, steps=False)]
            since = _recorded_at(conn, table_id, int(row[4]))
            until = _recorded_at(conn, table_id, int(row[7]))
            title = f"Evidence: table {table_id}, round {rounds[0]['round']}"
        elif window is not None:
            known_table(floor, conn, table_id)
            game = conn.exec_driver_sql(
                "SELECT game FROM tables WHERE table_id = %(t)s", {"t": table_id}
            ).scalar()
            rows, flag_rows, shoe_rows, words = queries.report_rows(conn, table_id, window)
            report = queries.summarise(
                settings, table_id, str(game), window, rows, flag_rows, shoe_rows, words
            )
            if not rows:
                raise InputError(f"table {table_id}: no round began in {window.label}")
            if len(rows) > MAX_ROUNDS:
                raise InputError(
                    f"{len(rows)} rounds in that range: at most {MAX_ROUNDS} in one package"
                )
            rounds = [queries.round_document(floor, conn, table_id, r, steps=False) for r in rows]
            since, until = _iso(window.start), _iso(window.end)
            title = f"Evidence: table {table_id}, {window.label}"
        else:
            raise InputError("give a round (number or time) or a time range")
    out.mkdir(parents=True, exist_ok=True)
    machine = out / "export"
    summary = export(
        floor.store,
        machine,
        table_id=table_id,
        since=since,
        until=until,
        rounds={r["round"] for r in rounds},
    )
    manifest_path = machine / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    made = datetime.now(UTC)
    intro = [
        f"Made {settings.local(made)} ({settings.utc(made)}) by {who.name} ({who.role}, "
        f"{who.via}), from {floor.name}.",
        f"Times are shown in {settings.tz_name} and in UTC (the time each event was recorded "
        "in the table's hash chain).",
        "Every round here was rebuilt from its events by the rules engine the table uses; the "
        "machine files in export/ are the audit store's own export of the same events "
        "(floorctl verify export/ checks them, and floorctl replay export/"
        f"{manifest['tables'][table_id]['dir']}/scenario.jsonl replays them).",
        "The export "
        + ("verifies." if summary.verified.ok else f"does NOT verify: {summary.verified.problem}"),
    ]
    from controller.floor.pdf import evidence_pdf
    from controller.floor.web import templates

    html = templates.get_template("evidence.html").render(
        title=title,
        intro=intro,
        report=report,
        rounds=rounds,
        manifest=manifest,
        tz=settings.tz_name,
        css=(Path(__file__).with_name("static") / "floor.css").read_text(),
    )
    (out / "report.html").write_text(html, encoding="utf-8")
    evidence_pdf(title, intro, report, rounds, manifest, out / "report.pdf")
    proved = _write_proof(floor, table_id, rounds, out) if report is None else None
    record = {
        "format": FORMAT,
        "table": table_id,
        "asked": {
            "round": number,
            "at": at,
            "from": _iso(window.start) if window else None,
            "to": _iso(window.end) if window else None,
        },
        "rounds": [r["round"] for r in rounds],
        "made_at": _iso(made),
        "made_by": {"name": who.name, "role": who.role, "via": who.via},
        "time_zone": settings.tz_name,
        "export_verified": summary.verified.ok,
        "files": {
            name: _sha256(out / name)
            for name in ("report.html", "report.pdf", "export/manifest.json")
            + (("proof.json",) if proved else ())
        },
        "proof": proved,
    }
    (out / "evidence.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return [
        f"table {table_id}: {len(rounds)} round(s) rebuilt into {out / 'report.html'} and "
        f"{out / 'report.pdf'}",
        f"the store's export in {machine} ({len(manifest.get('files', {}))} files; head event "
        f"{manifest['tables'][table_id]['head_seq']} {manifest['tables'][table_id]['head_hash']})",
        f"{out / 'evidence.json'} lists the SHA-256 of the reports and of the export's manifest",
        f"{out / 'proof.json'}: the round's events proved under the table's signed head "
        f"({proved}); floorctl verify-proof checks it with the table's public key"
        if proved
        else "no proof: no signed head the floor holds covers this round's end yet",
    ]


def _write_proof(
    floor: Floor, table_id: str, rounds: list[dict[str, Any]], out: Path
) -> str | None:
    """proof.json for one round, when a signed head covers it; what it proves, or None."""
    from controller.store.db import StoreError
    from controller.store.proof import prove_round

    try:
        doc = prove_round(floor.store, table_id, int(rounds[0]["round"]))
    except StoreError:
        return None
    (out / "proof.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    head = doc["head"]
    return f"events {doc['events'][0]['seq']} to {doc['events'][-1]['seq']}, head {head['seq']}"


def _recorded_at(conn: Any, table_id: str, seq: int) -> str:
    value = conn.exec_driver_sql(
        "SELECT recorded_at FROM events WHERE table_id = %(t)s AND seq = %(s)s",
        {"t": table_id, "s": seq},
    ).scalar()
    return str(value)
