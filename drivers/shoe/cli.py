"""``floorctl shoe listen`` (the technician's view of a reader) and ``floorctl shoe simulate``."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import random
import sys
import threading
from datetime import UTC, datetime
from typing import Any, TextIO

import structlog

from controller import argtypes

from .events import CardRead, CutCard, DeviceStatus, Heartbeat, Misread, ReaderError, ShoeEvent
from .reader import ShoeReader
from .simulator import (
    DECK_FAULT_KINDS,
    FAULT_KINDS,
    FaultPlan,
    SimulatedShoe,
    Written,
    load_shoe,
)
from .simulator import parse_faults as _parse_faults
from .transport import SerialSettings, SerialTransport, TransportError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    shoe = subparsers.add_parser("shoe", help="the card-shoe reader: listen to it, or simulate one")
    commands = shoe.add_subparsers(dest="shoe_command", metavar="SUBCOMMAND")
    commands.required = True

    listen = commands.add_parser(
        "listen",
        help="print the reader's decoded events as they arrive",
        description="Open the reader's port and print each decoded event (and each change of "
        "device status) as it arrives, until interrupted.",
    )
    _port_arguments(listen)
    listen.add_argument("--json", action="store_true", help="one JSON object per line")
    listen.add_argument(
        "--silence",
        type=argtypes.positive_float,
        default=3.0,
        metavar="SECONDS",
        help="report a fault after this long without a heartbeat or card (default 3)",
    )
    listen.add_argument(
        "--no-heartbeat",
        action="store_true",
        help="the reader sends no heartbeat (a plain barcode scanner): no silence fault",
    )
    listen.add_argument(
        "--count", type=argtypes.positive_int, metavar="N", help="stop after N events"
    )
    listen.add_argument(
        "--seconds", type=argtypes.positive_float, metavar="S", help="stop after S seconds"
    )
    listen.set_defaults(func=_listen)

    simulate = commands.add_parser(
        "simulate",
        help="write a shuffled, barcoded shoe to a port at dealing pace",
        description="Shuffle DECKS barcoded decks with a cut card and write them to the port as "
        "a reader would, with a heartbeat every second. The load record (the `shuffle` event "
        "with the deck serials) is printed on standard output before the first card is dealt. "
        "With --inspect each deck is first read through for inspection, and with --read-out the "
        "cards left are read out after the dealing: the reader has no line for either, so the "
        "dealer's taps that mark them (`inspect`, `inspect_end`, `shoe_end` events) are printed "
        "on standard output, each before the cards it governs are written.",
    )
    _port_arguments(simulate)
    simulate.add_argument(
        "--decks", type=argtypes.positive_int, required=True, metavar="N", help="decks in the shoe"
    )
    simulate.add_argument(
        "--faults",
        type=_fault_plan,
        default=FaultPlan(),
        metavar="SPEC",
        help="comma-separated KIND (default rate), KIND=RATE (per card) or KIND@CARD (that "
        f"card number), KIND one of {', '.join(FAULT_KINDS)}; e.g. misread=0.05,drop@40; or a "
        f"fault of a deck itself, KIND (a deck at random) or KIND@DECK, KIND one of "
        f"{', '.join(DECK_FAULT_KINDS)}",
    )
    simulate.add_argument("--seed", type=int, help="seed for the shuffle, serials and faults")
    simulate.add_argument(
        "--interval",
        type=argtypes.non_negative_float,
        default=1.5,
        metavar="SECONDS",
        help="seconds between cards (default 1.5)",
    )
    simulate.add_argument(
        "--cards",
        type=argtypes.positive_int,
        metavar="N",
        help="stop after N cards (default: the shoe)",
    )
    simulate.add_argument("--pontoon", action="store_true", help="Pontoon decks (no tens)")
    simulate.add_argument(
        "--cut-card",
        type=_cut_card,
        default="auto",
        metavar="N|none",
        help="cards before the cut card (default: 70-80%% into the shoe)",
    )
    simulate.add_argument(
        "--inspect",
        action="store_true",
        help="first read each deck through for inspection (its faults included)",
    )
    simulate.add_argument(
        "--read-out",
        action="store_true",
        help="after the dealing (--cards), read out the cards left in the shoe",
    )
    simulate.add_argument(
        "--read-interval",
        type=argtypes.non_negative_float,
        default=0.05,
        metavar="SECONDS",
        help="seconds between cards read for inspection or read out (default 0.05)",
    )
    simulate.add_argument("--checksum", action="store_true", help="end every line with *HH")
    simulate.add_argument(
        "--no-heartbeat", action="store_true", help="send no heartbeat (a plain scanner)"
    )
    simulate.add_argument(
        "--fault-seconds",
        type=argtypes.non_negative_float,
        default=5.0,
        metavar="S",
        help="how long a drop or a silence lasts (default 5)",
    )
    simulate.add_argument(
        "--echo", action="store_true", help="print each line written (JSON) on standard output"
    )
    simulate.set_defaults(func=_simulate)


def _port_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        required=True,
        help="pyserial URL: /dev/ttyUSB0, a pty path, loop://, socket://HOST:PORT",
    )
    parser.add_argument(
        "--baud", type=argtypes.positive_int, default=9600, help="default 9600 (8N1)"
    )


# -- listen --------------------------------------------------------------------------------------


def _listen(args: argparse.Namespace) -> int:
    _configure_logging()
    out: TextIO = sys.stdout
    reader = ShoeReader(
        SerialTransport(args.url, SerialSettings(baudrate=args.baud)),
        silence_timeout=None if args.no_heartbeat else args.silence,
        on_status=lambda status: _print(out, _status_line(status, args.json)),
    )
    if args.seconds is not None:
        timer = threading.Timer(args.seconds, reader.stop)
        timer.daemon = True
        timer.start()
    with contextlib.closing(reader.events()) as events:
        for seen, event in enumerate(events, start=1):
            now = datetime.now(UTC)
            _print(out, _event_json(event, now) if args.json else _event_text(event))
            if args.count is not None and seen >= args.count:
                break
    return 0


def _print(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()


def _event_json(event: ShoeEvent, now: datetime) -> str:
    obj = event.to_dict()
    obj["time"] = now.isoformat()
    return json.dumps(obj)


def _event_text(event: ShoeEvent) -> str:
    if isinstance(event, CardRead):
        return f"card {event.card}  deck {event.deck}" + ("  FACE UP" if event.face_up else "")
    if isinstance(event, CutCard):
        return "cut card"
    if isinstance(event, Heartbeat):
        return f"heartbeat {event.counter}"
    if isinstance(event, ReaderError):
        return f"reader error: {event.text}"
    if isinstance(event, Misread):
        return f"MISREAD {event.text!r}: {event.reason}"
    raise TypeError(f"not a shoe event: {event!r}")  # pragma: no cover - exhaustive


def _status_line(status: DeviceStatus, as_json: bool) -> str:
    if as_json:
        obj: dict[str, Any] = status.to_dict()
        obj["time"] = datetime.now(UTC).isoformat()
        return json.dumps(obj)
    if status.state == "fault":
        return f"-- FAULT: {status.reason}"
    return f"-- {status.state} ({status.url})"


# -- simulate ------------------------------------------------------------------------------------


def _simulate(args: argparse.Namespace) -> int:
    _configure_logging()
    rng = random.Random(args.seed)
    plan: FaultPlan = args.faults
    try:
        load = load_shoe(
            args.decks, rng, pontoon=args.pontoon, cut_card=args.cut_card, deck_faults=plan.decks
        )
    except ValueError as exc:
        what = "--faults" if str(exc).startswith("fault") else "--cut-card"
        print(f"floorctl shoe simulate: {what}: {exc}", file=sys.stderr)
        return 2
    transport = SerialTransport(args.url, SerialSettings(baudrate=args.baud))
    try:
        transport.open()
    except TransportError as exc:
        print(f"floorctl shoe simulate: {exc}", file=sys.stderr)
        return 1
    for fault in load.injected:
        print(f"floorctl shoe simulate: put in {fault.describe()}", file=sys.stderr)

    def echo(item: Written) -> None:
        line = {"kind": item.kind, "line": item.data.decode("latin-1")}
        _print(sys.stdout, json.dumps(line))

    shoe = SimulatedShoe(
        transport,
        load,
        rng,
        interval=args.interval,
        heartbeat_interval=None if args.no_heartbeat else 1.0,
        faults=args.faults,
        with_checksum=args.checksum,
        drop_seconds=args.fault_seconds,
        silence_seconds=args.fault_seconds,
        on_write=echo if args.echo else None,
    )
    try:
        if args.inspect:
            for deck in load.decks:
                _print(sys.stdout, json.dumps({"type": "inspect", "deck": deck.serial}))
                shoe.inspect(deck, args.read_interval)
                _print(sys.stdout, json.dumps({"type": "inspect_end"}))
        _print(sys.stdout, json.dumps(load.shuffle_event()))
        shoe.run(args.cards)
        if args.read_out:
            _print(sys.stdout, json.dumps({"type": "shoe_end"}))
            shoe.read_out(args.read_interval)
        written = shoe.written
    finally:
        transport.close()
    counts: dict[str, int] = {}
    for item in written:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    summary = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))
    print(f"floorctl shoe simulate: wrote {len(written)} lines ({summary})", file=sys.stderr)
    return 0


# -- argument types and logging ------------------------------------------------------------------


def _cut_card(text: str) -> int | str | None:
    if text == "none":
        return None
    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number, 'auto' or 'none'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _fault_plan(text: str) -> FaultPlan:
    try:
        return _parse_faults(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _configure_logging() -> None:
    """JSON log lines on standard error, unless the application configured structlog already."""
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
    )
