"""Argument types shared by every `floorctl` command: a bad value is refused by argparse with
a message naming it, before the command starts."""

from __future__ import annotations

import argparse
import math
from decimal import Decimal, InvalidOperation


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def count(text: str) -> int:
    """A whole number, 0 or more."""
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def positive_int(text: str) -> int:
    """A whole number, 1 or more."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def positive_float(text: str) -> float:
    """A number above 0."""
    value = _real(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not positive")
    return value


def non_negative_float(text: str) -> float:
    """A number, 0 or more."""
    value = _real(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def money(text: str) -> Decimal:
    """An amount of money above 0, in dollars and cents (``25``, ``12.50``)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount") from None
    if not value.is_finite() or value <= 0 or value > 10**9:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount (above 0, up to 1e9)")
    if value != value.quantize(Decimal("0.01")):
        raise argparse.ArgumentTypeError(f"{text!r} has more than cents")
    return value
