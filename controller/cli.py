"""The `floorctl` command line.

Each command family lives in its own module with a ``register(subparsers)`` function that
adds its subcommands; this module only assembles them. A subcommand's handler is stored as
``func`` on its parser and returns the process exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from controller import logs

# Modules that contribute subcommands, in the order they appear in `floorctl --help`.
COMMAND_MODULES: tuple[str, ...] = (
    "controller.replay",
    "drivers.shoe.cli",
    "controller.service.cli",
    "controller.store.cli",
    "controller.sim.command",
    "drivers.camera.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="floorctl",
        description="Live-table controller for NZ Pontoon and Blackjack.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Device and store faults are logged as JSON lines on standard error, never mixed into a
    # command's output; `run` and `demo` set their own level from their config and options.
    logs.configure("warning")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
