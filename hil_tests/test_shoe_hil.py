"""The shoe reader's contract against a real reader (run by a technician at the table).

The same ``ReaderContract``/``UnplugContract`` classes CI runs over a socat pty pair and
loop:// (tests/test_shoe_contract.py) run here against the physical reader named by SHOE_PORT;
the technician draws the test cards and, if asked, unplugs and replugs the reader. Without
SHOE_PORT every test here is skipped with that reason.

Environment:
    SHOE_PORT          pyserial URL of the reader, e.g. /dev/ttyUSB0 (required)
    SHOE_BAUD          baud rate (default 9600, 8N1)
    SHOE_TEST_CARDS    the test cards' barcodes in the order they will be drawn, comma-separated,
                       e.g. "K7Q2M9-AS,K7Q2M9-7H,CUT,K7Q2M9-QD" (the card test needs it)
    SHOE_NO_HEARTBEAT  1 for a plain barcode scanner that sends no #HB lines
    SHOE_HIL_UNPLUG    1 to run the unplug test (the technician pulls the USB cable)
    SHOE_HIL_TIMEOUT   seconds to wait for the technician (default 60)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_shoe_contract import Dealt, ReaderContract, UnplugContract

from drivers.shoe.events import CardRead, CutCard, Misread
from drivers.shoe.framing import parse_line
from drivers.shoe.transport import SerialSettings, SerialTransport, Transport

SHOE_PORT = os.environ.get("SHOE_PORT", "")

pytestmark = pytest.mark.skipif(
    not SHOE_PORT,
    reason="SHOE_PORT is not set: no card-shoe reader attached (e.g. SHOE_PORT=/dev/ttyUSB0)",
)


def tell(message: str) -> None:
    """Speak to the technician past pytest's output capture (on the terminal if there is one)."""
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(f"\n>>> {message}\n")
    except OSError:
        print(f"\n>>> {message}", file=sys.__stderr__)  # run with pytest -s to see this


def cards_from_env() -> list[Dealt]:
    text = os.environ.get("SHOE_TEST_CARDS", "")
    if not text.strip():
        pytest.skip("SHOE_TEST_CARDS is not set: list the test cards' barcodes in draw order")
    cards: list[Dealt] = []
    for item in text.split(","):
        event = parse_line(item.strip().encode("ascii", "replace"))
        if not isinstance(event, CardRead | CutCard):
            reason = event.reason if isinstance(event, Misread) else "not a card or CUT"
            raise pytest.UsageError(f"SHOE_TEST_CARDS: {item.strip()!r}: {reason}")
        cards.append(event)
    return cards


class RealReaderRig:
    heartbeat_period = 1.0

    def __init__(self) -> None:
        self.silence_timeout: float | None = (
            None if os.environ.get("SHOE_NO_HEARTBEAT") == "1" else 3.0
        )
        self.timeout = float(os.environ.get("SHOE_HIL_TIMEOUT", "60"))
        self.baud = int(os.environ.get("SHOE_BAUD", "9600"))

    def reader_port(self) -> Transport | str:
        return SerialTransport(SHOE_PORT, SerialSettings(baudrate=self.baud))

    def test_cards(self) -> list[Dealt]:
        return cards_from_env()

    def deal(self, cards: Sequence[Dealt]) -> None:
        names = ", ".join("CUT" if isinstance(c, CutCard) else f"{c.deck}-{c.card}" for c in cards)
        tell(f"Draw these {len(cards)} cards through the reader, in this order: {names}")

    def unplug(self) -> None:
        if os.environ.get("SHOE_HIL_UNPLUG") != "1":
            pytest.skip("SHOE_HIL_UNPLUG is not 1: the unplug test needs the technician")
        tell("Unplug the reader's USB cable now.")

    def replug(self) -> None:
        tell("Plug the reader's USB cable back in.")


class TestRealReader(ReaderContract, UnplugContract):
    @pytest.fixture
    def rig(self) -> RealReaderRig:
        return RealReaderRig()
