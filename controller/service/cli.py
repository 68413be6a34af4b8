"""`floorctl run`, `floorctl demo` and `floorctl pin-hash`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from controller import argtypes, logs
from controller.service.config import DEFAULT_CONFIG, ConfigError, ServiceConfig, load_config
from controller.service.pin import MIN_PIN_LENGTH, hash_pin

if TYPE_CHECKING:
    from drivers.shoe.transport import Transport


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser(
        "run",
        help="run the table: shoe reader, chip camera, engine, audit store, dealer's screen",
        description="Run one table as configured. A bad config refuses to start, naming the "
        "file, key and value. Logs are JSON lines on standard error.",
    )
    run.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_CONFIG,
        help=f"table config (default {DEFAULT_CONFIG})",
    )
    run.add_argument(
        "--check", action="store_true", help="check the config and exit (0 if it is good)"
    )
    run.add_argument(
        "--devices",
        action="store_true",
        help="with --check: also open the shoe reader's port, the camera and the audit store "
        "and say what was found (exit 1 naming the device that failed)",
    )
    run.set_defaults(func=_run)

    demo = subparsers.add_parser(
        "demo",
        help="the whole table on stand-ins, with the dealer's screen on http://127.0.0.1:8080",
        description="A simulated shoe on a pseudo-terminal, synthetic chip-camera frames and a "
        "dealer bot play rounds into a SQLite audit store while the dealer's screen shows them.",
    )
    demo.add_argument(
        "--rounds",
        type=argtypes.count,
        default=0,
        help="stop after N rounds (default: until interrupted)",
    )
    demo.add_argument(
        "--table-id",
        default="DEMO",
        help="the demo table's id (default DEMO): two demo tables with their own ids can share "
        "a floor",
    )
    demo.add_argument(
        "--db",
        type=Path,
        default=None,
        help="SQLite audit store (default ./floorctl-demo/TABLE_ID.db; an older one is kept as "
        ".previous); the spool, the key pair and the overhead camera's stills go beside it",
    )
    demo.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    demo.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any free)")
    demo.add_argument(
        "--pace",
        type=argtypes.non_negative_float,
        default=0.6,
        help="seconds between the dealer's actions (default 0.6)",
    )
    demo.add_argument("--seed", type=int, default=None, help="random seed (a seed replays a demo)")
    demo.add_argument(
        "--faults",
        default="",
        help="shoe faults, e.g. misread=0.05,faceup@12; deck faults short-deck, ten-in-deck, "
        "doubled-card, foreign-card (KIND or KIND@DECK); camera faults past-post@ROUND, "
        "pinch@ROUND (a chip added to or taken off a wager after no more bets)",
    )
    demo.add_argument(
        "--game",
        default="pontoon-nz-2000",
        choices=["pontoon-nz-2000", "blackjack-nz-1994", "blackjack"],
    )
    demo.add_argument(
        "--decks",
        type=argtypes.positive_int,
        default=None,
        help="decks in the shoe (default: the game's)",
    )
    demo.add_argument(
        "--mispay",
        type=argtypes.money,
        default=None,
        metavar="AMOUNT",
        help="a fault: the dealer pays AMOUNT too much in round 2; the next tray count finds it",
    )
    demo.add_argument(
        "--no-camera",
        action="store_true",
        help="no camera stand-in: the demo's supervisor enters the wagers by hand",
    )
    demo.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"]
    )
    demo.set_defaults(func=_demo)

    pin = subparsers.add_parser(
        "pin-hash",
        help="hash a supervisor PIN for the [supervisors] section of the table config",
    )
    pin.add_argument("--stdin", action="store_true", help="read the PIN from standard input")
    pin.set_defaults(func=_pin_hash)


def _run(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        print(f"floorctl run: {exc}", file=sys.stderr)
        return 2
    if cfg.store.signing_key is not None:
        from controller.service.startup import key_problem

        problem = key_problem(cfg.store.signing_key)
        if problem is None:
            problem = _key_unusable(cfg.store.signing_key)
        if problem is not None:
            print(f"floorctl run: {cfg.path}: [store] signing_key: {problem}", file=sys.stderr)
            return 2
    if args.check:
        print(f"{cfg.path}: good (table {cfg.setup.table_id}, {cfg.setup.game})")
        if not args.devices:
            return 0
        from controller.service.check import check_devices

        results = check_devices(cfg)
        for result in results:
            print(result.line())
        return 0 if all(r.ok for r in results) else 1
    if args.devices:
        print("floorctl run: --devices goes with --check", file=sys.stderr)
        return 2
    # The reader's port opens before the heavy imports below (the web server, the store, the
    # camera's vision code): from then on the kernel holds what the reader sends, so a card
    # drawn while the service starts is read, not lost.
    shoe_port = _open_shoe_port(cfg)
    from controller.service.app import StartError, build_from_config, serve

    logs.configure(cfg.log.level)
    try:
        table = build_from_config(cfg, shoe_port=shoe_port)
    except StartError as exc:
        print(f"floorctl run: {exc}", file=sys.stderr)
        return exc.exit_code
    try:
        return asyncio.run(serve(table, cfg.ui.host, cfg.ui.port))
    except StartError as exc:
        print(f"floorctl run: {exc}", file=sys.stderr)
        return exc.exit_code
    finally:
        table.close()


def _key_unusable(path: str) -> str | None:
    """Why the signing key file, safe as a file, does not hold a usable key (or None)."""
    from controller.service.startup import StartRefused, load_table_key

    try:
        load_table_key(path)
    except StartRefused as exc:
        return str(exc).removeprefix("[store] signing_key: ")
    return None


def _open_shoe_port(cfg: ServiceConfig) -> Transport | None:
    """The shoe reader's port, opened now when it can be (else the reader keeps trying)."""
    if cfg.shoe.url is None:
        return None
    from drivers.shoe.transport import SerialSettings, SerialTransport, TransportError

    port = SerialTransport(cfg.shoe.url, SerialSettings(baudrate=cfg.shoe.baudrate))
    with contextlib.suppress(TransportError):  # reported by the reader as a device fault
        port.open()
    return port


def _demo(args: argparse.Namespace) -> int:
    from controller.events import ScenarioError, parse_setup
    from controller.service.app import StartError
    from controller.service.demo import DEMO_DIR, DEMO_TABLE, Demo, DemoOptions

    # A human's log on a terminal, JSON lines otherwise (piped, or under a supervisor).
    logs.configure(args.log_level, human=sys.stderr.isatty())
    logs.quiet_opencv()
    try:
        parse_setup(dict(DEMO_TABLE, table_id=args.table_id))
    except ScenarioError as exc:
        print(f"floorctl demo: --table-id: {exc}", file=sys.stderr)
        return 2
    options = DemoOptions(
        rounds=args.rounds,
        db=args.db if args.db is not None else DEMO_DIR / f"{args.table_id}.db",
        table_id=args.table_id,
        host=args.host,
        port=args.port,
        pace=max(0.0, args.pace),
        seed=args.seed,
        faults=args.faults,
        game=args.game,
        decks=args.decks,
        camera=not args.no_camera,
        mispay=args.mispay,
    )
    demo = Demo(options)
    try:
        demo.open()
        status = asyncio.run(demo.run())
    except StartError as exc:
        print(f"floorctl demo: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        status = 130
    finally:
        line = demo.progress() if demo.table is not None else ""
        demo.close()
    if line:
        print(f"\n{line}")
    return status


def _pin_hash(args: argparse.Namespace) -> int:
    if args.stdin:
        pin = sys.stdin.readline().strip()
    else:
        pin = getpass.getpass("supervisor PIN: ")
        if getpass.getpass("again: ") != pin:
            print("floorctl pin-hash: the two PINs differ", file=sys.stderr)
            return 2
    try:
        print(hash_pin(pin))
    except ValueError as exc:
        print(f"floorctl pin-hash: {exc} (at least {MIN_PIN_LENGTH} digits)", file=sys.stderr)
        return 2
    return 0
