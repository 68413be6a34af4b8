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

# Modules that contribute subcommands, in the order they appear in `floorctl --help`.
COMMAND_MODULES: tuple[str, ...] = ("controller.replay", "drivers.shoe.cli")


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
