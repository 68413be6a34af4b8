"""``floorctl verify``, ``floorctl export`` and ``floorctl ship``: the audit store's commands.

Exit status: 0 done (verify: the log is intact); 1 verify found a problem, or ship refused;
2 the command could not run (bad arguments, database unreachable, unreadable export).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller import argtypes

if TYPE_CHECKING:  # the store's modules import SQLAlchemy: only the command that runs loads them
    from controller.store.repository import Store
    from controller.store.verify import VerifyReport


def _error(command: str, message: str) -> int:
    print(f"floorctl {command}: {message}", file=sys.stderr)
    return 2


def iso_instant(text: str) -> str:
    """An ISO 8601 time as the store writes it (UTC, microseconds, ``Z``)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _print_report(report: VerifyReport, where: str, as_json: bool) -> None:
    if as_json:
        doc: dict[str, Any] = {
            "ok": report.ok,
            "source": where,
            "events": report.events,
            "tables": [
                {
                    "table": t.table_id,
                    "events": t.events,
                    "head_seq": t.head_seq,
                    "head_hash": t.head_hash,
                }
                for t in report.tables
            ],
            "problem": None
            if report.problem is None
            else {
                "table": report.problem.table_id,
                "event": report.problem.seq,
                "kind": report.problem.kind,
                "message": report.problem.message,
            },
        }
        print(json.dumps(doc, indent=2))
        return
    if report.problem is None:
        for t in report.tables:
            print(f"table {t.table_id}: {t.events} events, head event {t.head_seq} {t.head_hash}")
        print(f"OK: {where}: {len(report.tables)} table(s), {report.events} events verified")
    else:
        print(f"FAILED: {where}: {report.problem}")


def _verify(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError
    from controller.store.repository import Store

    if (args.db is None) == (args.dir is None):
        return _error("verify", "give either --db URL or an export DIR")
    if (args.witness or args.unsigned_tail_ok) and not args.key:
        return _error("verify", "--witness and --unsigned-tail-ok go with --key table.pub")
    if (args.tail_seconds or args.tail_events) and not args.unsigned_tail_ok:
        return _error("verify", "--tail-seconds and --tail-events go with --unsigned-tail-ok")
    if args.witness and args.dir is not None:
        return _error("verify", "--witness checks a store: give --db URL")
    key = None
    signed: list[str] = []
    try:
        if args.key:
            from controller.store.keys import load_public_key

            key = load_public_key(args.key)
        if args.dir is not None:
            from controller.store.export import verify_export

            where = str(args.dir)
            if not Path(args.dir).is_dir():
                return _error("verify", f"{args.dir}: not a directory")
            report = verify_export(Path(args.dir))
            if report.ok and key is not None:
                from controller.store.signed import check_export_signed

                report.problem = check_export_signed(Path(args.dir), key)
                if (Path(args.dir) / "manifest.sig").exists():
                    signed.append(f"manifest and heads signed by key {key.key_id[:16]}…")
                else:
                    signed.append(
                        f"events under heads signed by key {key.key_id[:16]}…; every other "
                        "file made again from them (the manifest itself is not signed)"
                    )
        else:
            from controller.store.verify import verify_store

            with contextlib.ExitStack() as stack:
                floor = None
                if args.witness:
                    # The floor's snapshot first: all it holds was in the table's store before
                    # it was shipped, so the table's snapshot, taken after, holds it too.
                    witness = stack.enter_context(Store.open(args.witness, create=False))
                    floor = stack.enter_context(witness.snapshot())
                opened = stack.enter_context(Store.open(args.db, create=False))
                store = stack.enter_context(opened.snapshot())
                where = store.name
                tables = [args.table] if args.table else None
                report = verify_store(store, tables, full=args.full)
                if report.ok and key is not None:
                    signed = _verify_signed(store, report, key, floor, args)
    except StoreError as exc:
        return _error("verify", str(exc))
    _print_report(report, where, args.json)
    if report.ok and not args.json:
        for line in signed:
            print(line)
    return 0 if report.ok else 1


def _verify_signed(
    store: Store, report: VerifyReport, key: Any, floor: Store | None, args: argparse.Namespace
) -> list[str]:
    """``verify --db --key [--witness]``: sets the report's problem; lines to print if OK.
    ``floor``: the witness's snapshot, taken before the table's (see ``_verify``)."""
    from controller.store.signed import TailBound, heads_summary, verify_signed

    ids = [t.table_id for t in report.tables]
    bound = TailBound()
    if args.tail_seconds is not None:
        bound = replace(bound, seconds=args.tail_seconds)
    if args.tail_events is not None:
        bound = replace(bound, events=args.tail_events)
    lines = [f"table {t}: {heads_summary(store, t)}, key {key.key_id[:16]}…" for t in ids]
    lines.append("insert-only triggers: all in force")
    report.problem = verify_signed(
        store, ids, key, witness=floor, tail_ok=args.unsigned_tail_ok, tail=bound
    )
    if floor is not None:
        lines.append(f"witness {floor.name}: the log holds all it witnessed")
    return lines


def _export(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError
    from controller.store.export import export
    from controller.store.repository import Store

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return _error("export", f"{out} already exists and is not an empty directory")
    try:
        with Store.open(args.db, create=False) as store:
            summary = export(
                store,
                Path(args.out),
                table_id=args.table,
                since=args.since,
                until=args.until,
                rounds={args.round} if args.round is not None else None,
            )
        if args.signing_key and summary.tables:
            from controller.store.keys import load_signing_key
            from controller.store.signed import sign_manifest

            sign_manifest(Path(args.out), load_signing_key(args.signing_key))
    except (StoreError, OSError) as exc:
        return _error("export", str(exc))
    if not summary.tables:
        return _error("export", "no events recorded in that window")
    for table_id, info in summary.tables.items():
        print(
            f"table {table_id}: {info['events']} events to head {info['head_seq']} "
            f"{info['head_hash']}; {len(info['rounds'])} round timeline(s)"
        )
    if args.round is not None:
        for table_id, info in summary.tables.items():
            path = Path(args.out) / info["dir"] / "timelines" / f"round-{args.round:04d}.txt"
            if path.is_file():
                print()
                print(path.read_text(encoding="utf-8"), end="")
            else:
                print(f"table {table_id}: no round {args.round} in the export", file=sys.stderr)
    print(f"written to {args.out} (manifest.json lists each file's SHA-256)")
    if not summary.verified.ok:
        print(f"WARNING: the store does not verify: {summary.verified.problem}", file=sys.stderr)
        return 1
    return 0


def _ship(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import DBAPIError

    from controller.store.db import StoreError, describe
    from controller.store.repository import Store
    from controller.store.ship import ShipRefused, ship

    try:
        with Store.open(args.db, create=False) as src, Store.open(args.to) as dst:
            report = ship(
                src,
                dst,
                table_ids=[args.table] if args.table else None,
                batch_size=args.batch,
            )
            inbox = False
            if dst.dialect == "postgresql":
                from controller.store.roles import in_inbox

                with dst.engine.connect() as conn:
                    inbox = in_inbox(conn)
    except ShipRefused as exc:
        print(f"floorctl ship: refused: {exc}", file=sys.stderr)
        return 1
    except StoreError as exc:
        return _error("ship", str(exc))
    except DBAPIError as exc:  # the floor's own guards (floorctl floor init) refused a row
        print(f"floorctl ship: refused by the floor: {describe(exc)}", file=sys.stderr)
        return 1
    for table_id, copied in report.copied.items():
        seq, digest = report.heads[table_id]
        print(
            f"table {table_id}: {copied} events copied (and {report.signed.get(table_id, 0)} "
            f"signed heads); floor head event {seq} {digest}"
        )
    if inbox and report.copied:
        print(
            "shipped into the floor's inbox: the floor takes into its record what the table's "
            "registered key signed (floorctl floor ingest)"
        )
    for table_id in report.unchecked:
        print(
            f"table {table_id}: no key registered on the floor: its signatures were not checked",
            file=sys.stderr,
        )
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check an audit store (or an export) has not been changed",
        description="Check each table's hash chain, its checkpoints against the chain, and "
        "that every stored settlement and flag is what a replay of the events gives. Exit 0 "
        "if intact; 1 naming the first event edited, deleted, inserted or reordered, whose "
        "settlement does not match, or whose checkpoint was altered.",
    )
    p.add_argument("dir", nargs="?", help="an export directory (from floorctl export)")
    p.add_argument("--db", metavar="URL", help="the store: sqlite:///FILE or postgresql://...")
    p.add_argument("--table", help="only this table")
    p.add_argument(
        "--full",
        action="store_true",
        help="also check every checkpoint's state against a replay from the table line "
        "(by default each checkpoint is checked against the chain)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--key",
        metavar="FILE",
        help="the table's public key (table.pub): every event must be under a head it signed, "
        "each head must extend the one before, the triggers must be in force; an export's "
        "manifest must be signed by it",
    )
    p.add_argument(
        "--witness",
        metavar="URL",
        help="with --key: the floor database; fail if the table's log lacks or differs from "
        "anything the floor witnessed",
    )
    p.add_argument(
        "--unsigned-tail-ok",
        action="store_true",
        help="with --key: accept events after the last signed head (a table still playing), "
        "at most --tail-events of them, the first recorded at most --tail-seconds ago",
    )
    p.add_argument(
        "--tail-seconds",
        type=argtypes.positive_float,
        default=None,
        metavar="S",
        help="with --unsigned-tail-ok: the oldest unsigned event's age (default 60; 15 s more "
        "are allowed for the signing timer)",
    )
    p.add_argument(
        "--tail-events",
        type=argtypes.positive_int,
        default=None,
        metavar="N",
        help="with --unsigned-tail-ok: the most unsigned events (default 200)",
    )
    p.set_defaults(func=_verify)

    p = subparsers.add_parser(
        "export",
        help="write a surveillance package of an audit store",
        description="Write the events as replayable scenario JSONL, rounds, settlements and "
        "flags as CSV, each round's timeline as text, and a manifest of SHA-256 sums with "
        "each table's head hash.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the store to export")
    p.add_argument("--out", metavar="DIR", required=True, help="the directory to write")
    p.add_argument("--table", help="only this table")
    p.add_argument("--since", type=iso_instant, metavar="ISO", help="from this time (recorded)")
    p.add_argument("--until", type=iso_instant, metavar="ISO", help="up to this time")
    p.add_argument(
        "--round", type=argtypes.positive_int, metavar="N", help="also print round N's timeline"
    )
    p.add_argument(
        "--signing-key",
        metavar="FILE",
        help="sign the manifest with this key (the table's table.key): manifest.sig",
    )
    p.set_defaults(func=_export)

    p = subparsers.add_parser(
        "ship",
        help="copy tables' events to the floor database",
        description="Copy each table's events (and derived rows) to the floor database in "
        "order, idempotent by (table, sequence), resumable after a cut. Refuses a source "
        "whose chain does not verify.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the table's store (SQLite)")
    p.add_argument("--to", metavar="URL", required=True, help="the floor store (PostgreSQL)")
    p.add_argument("--table", help="only this table")
    p.add_argument(
        "--batch", type=argtypes.positive_int, default=1000, help="events per transaction"
    )
    p.set_defaults(func=_ship)
