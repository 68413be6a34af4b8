"""The `floorctl` command line.

Each command family lives in its own module with a ``register(subparsers)`` function that
adds its subcommands; this module only assembles them. A subcommand's handler is stored as
``func`` on its parser and returns the process exit status.

A command's module is imported only when that command runs (or its own ``--help`` is asked
for): the table below names each command, the module that registers it and the line
``floorctl --help`` shows for it, so listing the commands imports nothing. The store, the
camera and the dealer's screen pull in SQLAlchemy, OpenCV and FastAPI; a `replay` or a
`shoe listen` must not wait for them (a reader's first line arrives as soon as the port
opens). ``tests/test_cli.py`` checks that this table and the modules agree.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NamedTuple


class Command(NamedTuple):
    name: str
    module: str
    help: str


# In the order `floorctl --help` lists them.
COMMANDS: tuple[Command, ...] = (
    Command(
        "replay", "controller.replay", "replay a scenario (JSON Lines) through the rules engine"
    ),
    Command("shoe", "drivers.shoe.cli", "the card-shoe reader: listen to it, or simulate one"),
    Command(
        "run",
        "controller.service.cli",
        "run the table: shoe reader, chip camera, engine, audit store, dealer's screen",
    ),
    Command(
        "demo",
        "controller.service.cli",
        "the whole table on stand-ins, with the dealer's screen on http://127.0.0.1:8080",
    ),
    Command(
        "pin-hash",
        "controller.service.cli",
        "hash a supervisor PIN for the [supervisors] section of the table config",
    ),
    Command(
        "verify",
        "controller.store.cli",
        "check an audit store (or an export) has not been changed",
    ),
    Command("export", "controller.store.cli", "write a surveillance package of an audit store"),
    Command("ship", "controller.store.cli", "copy tables' events to the floor database"),
    Command(
        "keygen",
        "controller.store.signcli",
        "make a table's Ed25519 signing key pair (table.key, table.pub)",
    ),
    Command(
        "prove",
        "controller.store.signcli",
        "write one round's events with their proof under the table's signed head",
    ),
    Command(
        "verify-proof",
        "controller.store.signcli",
        "check a round's proof with the table's public key, without the log",
    ),
    Command(
        "floor",
        "controller.floor.cli",
        "the floor: surveillance and the pit over the floor database",
    ),
    Command(
        "simulate",
        "controller.sim.command",
        "house edge of a game by simulation through the engine",
    ),
    Command(
        "protect",
        "controller.protect.cli",
        "game protection: counters, players who knew the cards, hold, dealers, shuffles",
    ),
    Command("chips", "drivers.camera.cli", "the chip camera: render test frames, detect wagers"),
    Command(
        "calibrate",
        "drivers.camera.cli",
        "check the camera over the layout (or, with --learn, learn the table's chips); "
        "ends with a PASS or FAIL verdict",
    ),
)

COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(c.module for c in COMMANDS))


def version_line() -> str:
    """``floorctl 0.1.0 (engine: compiled (mypyc))``: the installed version and which engine
    this process runs."""
    from importlib.metadata import PackageNotFoundError, version

    from controller.engine import native

    try:
        number = version("floorctl")
    except PackageNotFoundError:
        number = "(not installed)"
    return f"floorctl {number} (engine: {native.describe()})"


class _Version(argparse.Action):
    """--version, worked out only when asked (it imports the engine)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(version_line())
        parser.exit()


def _top_parser() -> tuple[
    argparse.ArgumentParser, argparse._SubParsersAction[argparse.ArgumentParser]
]:
    parser = argparse.ArgumentParser(
        prog="floorctl",
        description="Live-table controller for NZ Pontoon and Blackjack.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print floorctl's version and which engine runs (compiled or pure Python), and exit",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    return parser, subparsers


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: the named command in full, the others by name and help only.

    With ``argv`` None every command is registered in full (for tests and documentation).
    """
    parser, subparsers = _top_parser()
    wanted = set(COMMAND_MODULES if argv is None else _modules_for(argv))
    for command in COMMANDS:  # a module's commands stand together in the table
        if command.name in subparsers.choices:
            continue
        if command.module in wanted:
            importlib.import_module(command.module).register(subparsers)
        else:
            subparsers.add_parser(command.name, help=command.help, add_help=False)
    return parser


def _modules_for(argv: Sequence[str]) -> tuple[str, ...]:
    """The module of the first word of ``argv`` that names a command (none for ``--help``)."""
    by_name = {c.name: c.module for c in COMMANDS}
    for word in argv:
        if not word.startswith("-"):
            return (by_name[word],) if word in by_name else ()
    return ()


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(args_in).parse_args(args_in)
    func = getattr(args, "func", None)
    if func is None:  # cannot happen for a registered command; never a traceback if it does
        print(f"floorctl: {args.command}: not available", file=sys.stderr)
        return 2
    # Device and store faults are logged as JSON lines on standard error, never mixed into a
    # command's output; `run` and `demo` set their own level from their config and options.
    from controller import logs

    logs.configure("warning")
    try:
        status: int = func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
