"""``floorctl export``: a surveillance package, and ``verify DIR`` on one.

Layout of ``--out DIR``::

    manifest.json               format, source, window, per table: events, head hash, and
                                the SHA-256 of every other file in the package
    <table>/scenario.jsonl      the table's events from its table line, one per line, exactly
                                as stored: a scenario ``floorctl replay`` runs
    <table>/chain.csv           seq, type, recorded_at, corrects, prev_hash, hash of each line
    <table>/rounds.csv          the rounds that ended within the window
    <table>/settlements.csv     their settlements
    <table>/flags.csv           the flags raised within the window
    <table>/shoes.csv           the shoes loaded within the window
    <table>/timelines/round-NNNN.txt   each such round's timeline, event by event
    <table>/heads.json          the table's signed heads over these events (and a consistency
                                proof to the next head), see :mod:`controller.store.signed`
    manifest.sig                with ``--signing-key``: Ed25519 signature over manifest.json

The scenario always starts at the table line, so the chain can be re-verified from its
start and a replay gives the table's state exactly; ``--since``/``--until`` (ISO 8601, on
the time each event was recorded) choose which rounds, flags and settlements are listed and
where the scenario ends.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.events import jsonl_lines
from controller.roundtext import round_lines
from controller.store.canonical import ChainRecord
from controller.store.chain import Problem
from controller.store.db import StoreError
from controller.store.fold import Fold
from controller.store.repository import Derived, Store
from controller.store.verify import TableReport, VerifyReport, compare_derived, replay_chain

FORMAT = "floorctl-export/1"

CHAIN_COLUMNS = ("seq", "type", "recorded_at", "corrects", "prev_hash", "hash")
# (column, type) per derived table; "int?" and "str?" may be empty (NULL).
DERIVED_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "rounds": (
        ("round", "int"),
        ("status", "str"),
        ("closed_seq", "int"),
        ("dealer", "str"),
        ("hands", "str"),
    ),
    "settlements": (
        ("round", "int"),
        ("idx", "int"),
        ("seq", "int"),
        ("player", "str"),
        ("box", "int"),
        ("hand", "int"),
        ("kind", "str"),
        ("staked", "str"),
        ("returned", "str"),
        ("net", "str"),
    ),
    "flags": (
        ("seq", "int"),
        ("idx", "int"),
        ("round", "int?"),
        ("rule", "str"),
        ("box", "int?"),
        ("message", "str"),
    ),
    "shoes": (
        ("seq", "int"),
        ("kind", "str"),
        ("decks", "int?"),
        ("cut_card", "int?"),
        ("deck_serials", "str?"),
    ),
}


@dataclass
class ExportSummary:
    out: Path
    tables: dict[str, dict[str, Any]]
    verified: VerifyReport


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_csv(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row[c] for c in columns])


def _describe_event(event: dict[str, Any]) -> str:
    kind = event.get("type", "?")
    rest = " ".join(
        f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
        for k, v in event.items()
        if k not in ("type", "time", "checkpoint")  # the store's field, not the table's
    )
    return f"{kind} {rest}".rstrip()


def _in_window(seq: int, first: int, last: int) -> bool:
    return first <= seq <= last


def export(
    store: Store,
    out: Path,
    *,
    table_id: str | None = None,
    since: str | None = None,
    until: str | None = None,
    rounds: set[int] | None = None,
) -> ExportSummary:
    """Write a surveillance package of ``store`` into ``out`` (created if need be), all read
    in one snapshot of the store (a table still recording is exported as it stood)."""
    with store.snapshot() as snap:
        return _export(snap, out, table_id=table_id, since=since, until=until, rounds=rounds)


def _export(
    store: Store,
    out: Path,
    *,
    table_id: str | None,
    since: str | None,
    until: str | None,
    rounds: set[int] | None,
) -> ExportSummary:
    ids = [table_id] if table_id is not None else store.table_ids()
    if table_id is not None and store.head(table_id) is None:
        raise StoreError(f"{store.name}: no table {table_id!r} in the store")
    out.mkdir(parents=True, exist_ok=True)
    from controller.store.verify import verify_store

    verified = verify_store(store, ids)
    files: dict[str, str] = {}
    tables: dict[str, dict[str, Any]] = {}
    for tid in ids:
        window = store.seq_range(tid, since, until)
        if window is None:
            continue
        first, last = window
        records = store.records(tid, upto=last)
        tdir = out / _safe(tid)
        (tdir / "timelines").mkdir(parents=True, exist_ok=True)
        with open(tdir / "scenario.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for record in records:
                fh.write(record.body + "\n")
        _write_csv(tdir / "chain.csv", CHAIN_COLUMNS, [r.to_row() for r in records])
        stored = store.derived(tid, first=first, last=last)
        for name, cols in DERIVED_COLUMNS.items():
            _write_csv(tdir / f"{name}.csv", tuple(c for c, _ in cols), getattr(stored, name))
        written_rounds = _write_timelines(tdir / "timelines", records, first, last, rounds)
        from controller.store.signed import write_heads

        write_heads(store, tdir, tid, records)  # the signed heads over them (issue 12)
        for path in sorted(tdir.rglob("*")):
            if path.is_file():
                files[path.relative_to(out).as_posix()] = _sha256(path)
        tables[tid] = {
            "dir": _safe(tid),
            "events": len(records),
            "head_seq": records[-1].seq,
            "head_hash": records[-1].hash,
            "window": {"first_seq": first, "last_seq": last},
            "rounds": written_rounds,
        }
    manifest = {
        "format": FORMAT,
        "source": store.name,
        "window": {"since": since, "until": until},
        "verified": verified.ok,
        "problem": None if verified.problem is None else str(verified.problem),
        "tables": tables,
        "files": files,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return ExportSummary(out, tables, verified)


def _safe(table_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in table_id) or "_"


def timelines(records: list[ChainRecord]) -> Iterator[tuple[int, str]]:
    """(round, text) for each round of a table's records, in order.

    An event belongs to the round it was applied in; between rounds, to the round its flags
    name (a card after the dealer finished belongs to that round), else to the next round
    (the shuffle and the bets before it).
    """
    if not records:
        return
    fold = Fold.from_record(records[0])
    setup = fold.setup
    lines: dict[int, list[str]] = {}
    for record in records[1:]:
        before = fold.table.in_play()
        event = record.event()
        _ev, applied, _derived = fold.apply(record.seq, event)
        number = fold.round_of(before, applied)
        text = f"{record.seq:>6}  {record.recorded_at:<27}  {_describe_event(event)}"
        if record.corrects is not None:
            text += f"  (corrects event {record.corrects})"
        out = lines.setdefault(number, [])
        out.append(text)
        for flag in applied.flags:
            box = f" box {flag.box}" if flag.box is not None else ""
            out.append(f"{'':>6}  {'':<27}    FLAG {flag.rule}{box}: {flag.message}")
    for number in sorted(lines):
        head = [
            f"table {setup.table_id}  game {setup.game}  round {number}",
            "",
            f"{'seq':>6}  {'recorded at':<27}  event",
        ]
        yield number, _finish(head + lines[number], fold, number)


def _finish(lines: list[str], fold: Fold, number: int) -> str:
    result = fold.table.round_result(number)
    out = list(lines)
    out.append("")
    if result is None:
        out.append("status: in progress when the log ends")
        return "\n".join(out) + "\n"
    doc = result.to_dict()
    out.append(f"status: {doc['status']}")
    out.extend(round_lines({**doc, "flags": []}))  # the flags stand at their events above
    return "\n".join(out) + "\n"


def _write_timelines(
    directory: Path,
    records: list[ChainRecord],
    first: int,
    last: int,
    only: set[int] | None,
) -> list[int]:
    written: list[int] = []
    for number, text in timelines(records):
        # The event lines start with their sequence number, right-aligned in six columns
        # (ASCII digits only: "²" is a digit to str.isdigit, not to int).
        heads = (line[:6].strip() for line in text.splitlines()[3:])
        seqs = [int(h) for h in heads if h.isascii() and h.isdigit()]
        lo, hi = (min(seqs), max(seqs)) if seqs else (0, 0)
        if hi < first or lo > last or (only is not None and number not in only):
            continue
        (directory / f"round-{number:04d}.txt").write_text(text, encoding="utf-8")
        written.append(number)
    return written


# ----- reading a package back (``floorctl verify DIR``) --------------------------------------


def _read_csv(path: Path, cols: tuple[tuple[str, str], ...], table_id: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header != [c for c, _ in cols]:
            raise StoreError(f"{path}: header {header} is not {[c for c, _ in cols]}")
        for number, values in enumerate(reader, start=2):
            if len(values) != len(cols):
                raise StoreError(f"{path} line {number}: {len(values)} fields, not {len(cols)}")
            row: dict[str, Any] = {"table_id": table_id}
            for (name, kind), text in zip(cols, values, strict=True):
                if kind.endswith("?") and text == "":
                    row[name] = None
                elif kind.startswith("int"):
                    try:
                        row[name] = int(text)
                    except ValueError:
                        raise StoreError(
                            f"{path} line {number}: {name} {text!r} is not a whole number"
                        ) from None
                else:
                    row[name] = text
            rows.append(row)
    return rows


def read_records(tdir: Path, table_id: str) -> list[ChainRecord]:
    """A table's chain from an export: scenario lines plus chain.csv."""
    bodies = jsonl_lines((tdir / "scenario.jsonl").read_text(encoding="utf-8"))
    cols = tuple(
        (c, "int?" if c == "corrects" else "int" if c == "seq" else "str") for c in CHAIN_COLUMNS
    )
    chain = _read_csv(tdir / "chain.csv", cols, table_id)
    # Lines and rows are paired as far as both go: the chain check names where they part,
    # and verify_export compares the counts.
    records = []
    for row, body in zip(chain, bodies, strict=False):
        records.append(
            ChainRecord(
                table_id,
                row["seq"],
                row["type"],
                body,
                row["recorded_at"],
                row["corrects"],
                row["prev_hash"],
                row["hash"],
            )
        )
    return records


def verify_export(directory: Path) -> VerifyReport:
    """Verify a package: file sums, each table's chain and head, derived rows by replay."""
    report = VerifyReport()
    manifest_path = directory / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{manifest_path}: cannot read the manifest: {exc}") from exc
    if manifest.get("format") != FORMAT:
        raise StoreError(f"{manifest_path}: format {manifest.get('format')!r} is not {FORMAT}")
    listed: dict[str, str] = manifest.get("files", {})
    resealed: Problem | None = None  # a file whose sum differs: reported with what it hides
    for rel, digest in sorted(listed.items()):
        path = directory / rel
        table_id = rel.split("/", 1)[0]
        if not path.is_file():
            report.problem = Problem(table_id, 0, "missing", f"{rel} is listed but absent")
            return report
        if resealed is None and _sha256(path) != digest:
            resealed = Problem(
                table_id, 0, "edited", f"{rel} does not match its SHA-256 in the manifest"
            )
    for table_id, info in sorted(manifest.get("tables", {}).items()):
        tdir = directory / info["dir"]
        records = read_records(tdir, table_id)
        table, expected, problem = replay_chain(table_id, records)
        n_lines = len(jsonl_lines((tdir / "scenario.jsonl").read_text(encoding="utf-8")))
        if problem is None and (table.head_hash != info["head_hash"] or n_lines != len(records)):
            seq = table.head_seq + 1
            problem = Problem(
                table_id,
                seq,
                "deleted" if table.head_seq < info["head_seq"] else "inserted",
                f"the chain ends at event {table.head_seq} ({table.head_hash[:16]}…) but the "
                f"manifest's head is event {info['head_seq']} ({info['head_hash'][:16]}…)",
            )
        if problem is None:
            first = info["window"]["first_seq"]
            last = info["window"]["last_seq"]
            stored = Derived()
            for name, cols in DERIVED_COLUMNS.items():
                getattr(stored, name).extend(_read_csv(tdir / f"{name}.csv", cols, table_id))
            window_expected = Derived()
            for name, (_cols, seq_col) in {
                "shoes": ((), "seq"),
                "rounds": ((), "closed_seq"),
                "flags": ((), "seq"),
                "settlements": ((), "seq"),
            }.items():
                getattr(window_expected, name).extend(
                    r for r in getattr(expected, name) if _in_window(int(r[seq_col]), first, last)
                )
            problem = compare_derived(table_id, window_expected, stored, table.head_seq)
        report.tables.append(TableReport(table_id, table.events, table.head_seq, table.head_hash))
        if problem is not None:
            if resealed is not None:
                problem = Problem(
                    problem.table_id,
                    problem.seq,
                    problem.kind,
                    f"{problem.message} ({resealed.message})",
                )
            report.problem = problem
            return report
    report.problem = resealed
    return report
