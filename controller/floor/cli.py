"""``floorctl floor``: the floor's service and its answers on the command line.

The answers come from the same functions the web pages call (:mod:`controller.floor.queries`),
after the asked table's newest shipped events are indexed. Exit status: 0 answered; 1 not
found (an unknown table, a time with no round); 2 the question or the database was unusable
(a malformed date or time, an unreachable database), each with one message naming it.

``floorctl floor init`` (the floor database's roles) is the audit store's own command: it is
registered beside these from ``controller.store.roles``.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller import argtypes

HELP = "the floor: surveillance and the pit over the floor database"
Handler = Callable[[argparse.Namespace], int]


def _error(message: str, status: int = 2) -> int:
    print(f"floorctl floor: {message}", file=sys.stderr)
    return status


def _guarded(handler: Handler) -> Handler:
    """Run a command; a refused question or an unusable database is one message, never a
    traceback."""

    def run(args: argparse.Namespace) -> int:
        from controller.floor.settings import InputError, NotFound
        from controller.store.db import StoreError

        try:
            return handler(args)
        except NotFound as exc:
            return _error(str(exc), 1)
        except InputError as exc:
            return _error(str(exc), 2)
        except StoreError as exc:
            return _error(str(exc), 2)

    return run


def _open(args: argparse.Namespace) -> Any:
    from controller.floor.schema import open_floor
    from controller.floor.settings import FloorSettings, InputError

    url = args.db or os.environ.get("FLOORCTL_FLOOR_URL")
    if not url:
        raise InputError("give the floor database: --db URL (or FLOORCTL_FLOOR_URL)")
    return open_floor(url, FloorSettings.from_env(args.tz, args.shifts))


def _catch_up(floor: Any, tables: list[str] | None) -> None:
    from controller.floor.indexer import Indexer

    Indexer(floor).run_once(tables)


def _window(floor: Any, args: argparse.Namespace) -> Any:
    from controller.floor.settings import InputError

    settings = floor.settings
    ranged = args.start is not None or args.end is not None
    if ranged and args.date is not None:
        raise InputError("give either --date (with --shift) or --from and --to, not both")
    if ranged:
        if args.start is None or args.end is None:
            raise InputError("--from and --to go together")
        return settings.range(args.start, args.end)
    if args.date is None:
        raise InputError("give --date YYYY-MM-DD (with --shift NAME) or --from and --to")
    day = settings.parse_date(args.date)
    if getattr(args, "shift", None):
        return settings.shift(day, args.shift)
    return settings.gaming_day(day)


def _print(doc: Any, as_json: bool, text: Callable[[Any], str]) -> None:
    if as_json:
        json.dump(doc, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        print(text(doc))


def _round(args: argparse.Namespace) -> int:
    from controller.floor import queries, text
    from controller.floor.audit import Who
    from controller.floor.settings import InputError

    if (args.at is None) == (args.round is None):
        raise InputError("give either --at TIME or --round N")
    with _open(args) as floor:
        _catch_up(floor, [args.table])
        doc = queries.find_round(
            floor, Who.cli(), args.table, at=args.at, number=args.round, steps=args.steps
        )
        if args.pdf:
            from controller.floor.pdf import round_pdf

            round_pdf(doc, Path(args.pdf))
    _print(doc, args.json, text.format_round)
    return 0


def _rounds(args: argparse.Namespace) -> int:
    from controller.floor import queries, text
    from controller.floor.audit import Who

    with _open(args) as floor:
        _catch_up(floor, [args.table])
        doc = queries.rounds_in(floor, Who.cli(), args.table, _window(floor, args))
    _print(doc, args.json, text.format_rounds)
    return 0


def _report(args: argparse.Namespace) -> int:
    from controller.floor import queries, text
    from controller.floor.audit import Who

    with _open(args) as floor:
        _catch_up(floor, [args.table])
        doc = queries.report(floor, Who.cli(), args.table, _window(floor, args))
    if args.pdf:
        from controller.floor.pdf import report_pdf

        report_pdf(doc, Path(args.pdf))
    _print(doc, args.json, text.format_report)
    return 0


def _pit(args: argparse.Namespace) -> int:
    from controller.floor.audit import Who
    from controller.floor.pit import format_pit, pit_report

    with _open(args) as floor:
        _catch_up(floor, None)
        who = Who.cli()
        if args.prepared_by:
            who = Who(args.prepared_by, who.role, who.via, who.client)
        doc = pit_report(floor, who, _window(floor, args))
    if args.pdf:
        from controller.floor.pdf import pit_pdf

        pit_pdf(doc, Path(args.pdf))
    _print(doc, args.json, format_pit)
    return 0


def _flags(args: argparse.Namespace) -> int:
    from controller.floor import queries, text
    from controller.floor.audit import Who

    with _open(args) as floor:
        _catch_up(floor, [args.table] if args.table else None)
        window = _window(floor, argparse.Namespace(**{**vars(args), "shift": None}))
        doc = queries.flags(
            floor,
            Who.cli(),
            window,
            rule=args.rule,
            table_id=args.table,
            dealer=args.dealer,
            shift=args.shift,
        )
    _print(doc, args.json, text.format_flags)
    return 0


def _floor(args: argparse.Namespace) -> int:
    from controller.floor import queries, text
    from controller.floor.audit import Who

    with _open(args) as floor:
        _catch_up(floor, None)
        doc = queries.floor_view(floor, Who.cli())
    _print(doc, args.json, text.format_floor)
    return 0


def _evidence(args: argparse.Namespace) -> int:
    from controller.floor.audit import Who
    from controller.floor.evidence import write_evidence
    from controller.floor.settings import InputError

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"{out} already exists and is not an empty directory")
    with _open(args) as floor:
        _catch_up(floor, [args.table])
        window = None
        if args.round is None and args.at is None:
            window = _window(floor, args)
        summary = write_evidence(
            floor, Who.cli(), args.table, out, number=args.round, at=args.at, window=window
        )
    for line in summary:
        print(line)
    return 0


def _index(args: argparse.Namespace) -> int:
    from controller.floor.indexer import Indexer
    from controller.floor.schema import drop_read_model

    with _open(args) as floor:
        if args.rebuild:
            drop_read_model(floor.engine)
        done = Indexer(floor).run_once([args.table] if args.table else None)
    for table_id, count in done.items():
        print(f"table {table_id}: {count} events indexed")
    return 0


def _ingest(args: argparse.Namespace) -> int:
    from controller.floor.ingest import follow, ingest
    from controller.floor.settings import InputError

    url = args.db or os.environ.get("FLOORCTL_FLOOR_URL")
    if not url:
        raise InputError("give the floor database: --db URL (or FLOORCTL_FLOOR_URL)")
    tables = [args.table] if args.table else None
    if args.every is not None:
        follow(url, args.every, tables)
    report = ingest(url, tables)
    for table_id, (count, head) in report.taken.items():
        print(f"table {table_id}: {count} events taken in; the floor's log ends at event {head}")
    for table_id, why in report.refused.items():
        print(f"table {table_id}: refused, its inbox left as it is: {why}", file=sys.stderr)
    return 1 if report.refused else 0


def _serve(args: argparse.Namespace) -> int:
    from controller.floor.web import serve

    with _open(args) as floor:
        return serve(
            floor, args.host, args.port, poll=args.poll, allowed_hosts=tuple(args.allow_host)
        )


def _password(args: argparse.Namespace) -> str:
    from controller.floor.settings import InputError

    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise InputError("the passwords differ")
    return first


def _user(args: argparse.Namespace) -> int:
    from controller.floor import users
    from controller.floor.audit import Who

    with _open(args) as floor:
        who = Who.cli()
        if args.action == "add":
            users.add_user(floor, who, args.name, args.role, _password(args))
            print(f"account {args.name} ({args.role}) created")
        elif args.action == "passwd":
            users.set_password(floor, who, args.name, _password(args))
            print(f"password of {args.name} changed")
        elif args.action == "disable":
            users.disable_user(floor, who, args.name)
            print(f"account {args.name} disabled")
        else:
            for u in users.list_users(floor):
                state = f"disabled {u['disabled']}" if u["disabled"] else "active"
                print(
                    f"{u['name']:<16} {u['role']:<13} {state}; created {u['created']} "
                    f"by {u['created_by']}"
                )
    return 0


def _lookups(args: argparse.Namespace) -> int:
    from controller.floor import text
    from controller.floor.audit import Who, log_lookup, lookups

    with _open(args) as floor:
        rows = lookups(floor, who=args.who, limit=args.limit)
        log_lookup(floor, Who.cli(), "lookups", {"who": args.who}, "ok")
    _print(rows, args.json, text.format_lookups)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db", metavar="URL", help="the floor database, postgresql://... (or FLOORCTL_FLOOR_URL)"
    )
    p.add_argument("--tz", help="the floor's time zone (FLOORCTL_FLOOR_TZ; Pacific/Auckland)")
    p.add_argument(
        "--shifts",
        help='the shifts, "day=06:00,swing=14:00,night=22:00" (FLOORCTL_FLOOR_SHIFTS); the '
        "gaming day starts at the first",
    )


def _when(p: argparse.ArgumentParser, shift: bool = True) -> None:
    p.add_argument("--date", help="the gaming day, YYYY-MM-DD")
    if shift:
        p.add_argument("--shift", help="one shift of that day (by name)")
    p.add_argument("--from", dest="start", metavar="TIME", help='local time, "2026-12-01 20:00"')
    p.add_argument("--to", dest="end", metavar="TIME", help="local time")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    top = subparsers.add_parser(
        "floor",
        help=HELP,
        description="Surveillance and the pit: every table on the floor, a round found by time "
        "and watched again, flags, the shift or day of a table, evidence packages. Reads the "
        "floor database that tables ship to.",
    )
    sub = top.add_subparsers(dest="floor_command", metavar="COMMAND")
    sub.required = True
    # `floorctl floor init` (the floor database's roles) and `floor register-key` (a table's
    # public key, once) are the audit store's own commands.
    from controller.store.roles import register_init

    register_init(sub)

    p = sub.add_parser("serve", help="the floor's web pages (loopback by default)")
    _common(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=argtypes.count, default=8090, help="port (8090; 0: any free)")
    p.add_argument(
        "--poll", type=argtypes.positive_float, default=1.0, help="seconds between index passes"
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the pages answer to besides the address they listen on (repeat)",
    )
    p.set_defaults(func=_guarded(_serve))

    p = sub.add_parser("round", help="a round by table and local time, or by number")
    _common(p)
    p.add_argument("--table", required=True)
    p.add_argument("--at", metavar="TIME", help='local time: "2026-12-01 21:14"')
    p.add_argument("--round", type=argtypes.positive_int, metavar="N")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.add_argument("--steps", action="store_true", help="with the screen after each event")
    p.add_argument("--pdf", metavar="FILE", help="also write the round as a PDF")
    p.set_defaults(func=_guarded(_round))

    p = sub.add_parser("rounds", help="the rounds of a table in a time range")
    _common(p)
    p.add_argument("--table", required=True)
    _when(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_guarded(_rounds))

    p = sub.add_parser("report", help="the shift or day of a table")
    _common(p)
    p.add_argument("--table", required=True)
    _when(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--pdf", metavar="FILE", help="also write a printable PDF")
    p.set_defaults(func=_guarded(_report))

    p = sub.add_parser(
        "pit-report",
        help="every table's drop, fills, credits, win and hold for a shift or gaming day, "
        "month and year to date; the slip register",
    )
    _common(p)
    _when(p)
    p.add_argument("--prepared-by", metavar="NAME", help="who prepared it (default: you)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--pdf", metavar="FILE", help="also write a printable PDF")
    p.set_defaults(func=_guarded(_pit))

    p = sub.add_parser("flags", help="flags by rule, table, dealer and shift")
    _common(p)
    _when(p)
    p.add_argument("--rule")
    p.add_argument("--table")
    p.add_argument("--dealer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_guarded(_flags))

    p = sub.add_parser("view", help="every table on the floor, as the floor page shows them")
    _common(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_guarded(_floor))

    p = sub.add_parser(
        "evidence", help="a round or a time range as a report beside the store's export"
    )
    _common(p)
    p.add_argument("--table", required=True)
    p.add_argument("--round", type=argtypes.positive_int, metavar="N")
    p.add_argument("--at", metavar="TIME")
    _when(p)
    p.add_argument("--out", required=True, metavar="DIR", help="an empty or new directory")
    p.set_defaults(func=_guarded(_evidence))

    p = sub.add_parser("index", help="bring the floor's read model up to date now")
    _common(p)
    p.add_argument("--table")
    p.add_argument(
        "--rebuild", action="store_true", help="drop the read model and build it from the events"
    )
    p.set_defaults(func=_guarded(_index))

    p = sub.add_parser(
        "ingest",
        help="take into the floor's log what each table's registered key signed",
        description="Move each table's shipped events from the floor's inbox into its log, "
        "checked as ship checks them: the chain, every derived row against a replay, and "
        "every head against the key registered for the table. Only events under a head "
        "that key signed go over; a table whose inbox does not check is refused and left "
        "out. Run as the ingest role (floorctl floor init). Exit 1 when a table is refused.",
    )
    p.add_argument(
        "--db", metavar="URL", help="the floor database, as the ingest role (or FLOORCTL_FLOOR_URL)"
    )
    p.add_argument("--table", help="only this table")
    p.add_argument(
        "--every",
        type=argtypes.positive_float,
        metavar="SECONDS",
        help="keep running, a pass every SECONDS (a service)",
    )
    p.set_defaults(func=_guarded(_ingest))

    p = sub.add_parser("user", help="the floor's accounts (surveillance, pit)")
    p.add_argument("action", choices=("add", "passwd", "disable", "list"))
    p.add_argument("name", nargs="?")
    _common(p)
    p.add_argument("--role", choices=("surveillance", "pit"))
    p.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    p.set_defaults(func=_guarded(_user_checked))

    p = sub.add_parser("lookups", help="the lookup log: who looked at what")
    _common(p)
    p.add_argument("--who")
    p.add_argument("--limit", type=argtypes.positive_int, default=200)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_guarded(_lookups))


def _user_checked(args: argparse.Namespace) -> int:
    from controller.floor.settings import InputError

    if args.action != "list" and not args.name:
        raise InputError(f"user {args.action}: give the account's name")
    if args.action == "add" and not args.role:
        raise InputError("user add: give --role surveillance or --role pit")
    return _user(args)
