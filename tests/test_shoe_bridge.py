"""Shoe events reach the round engine as its events; the engine's deck-serial check sees them."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_shoe_contract import SocatPair, running_socat, start_reader

from controller.engine import Table
from controller.events import parse_event, parse_setup
from drivers.shoe.bridge import shuffle_event, to_engine_event
from drivers.shoe.events import CardRead, CutCard, Heartbeat, Misread, ReaderError
from drivers.shoe.framing import encode
from drivers.shoe.simulator import load_shoe
from drivers.shoe.transport import SerialTransport

TABLE = {
    "type": "table",
    "game": "blackjack",
    "table_id": "T07",
    "boxes": 7,
    "decks": 2,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {"decks": 2},
}


@pytest.fixture
def socat_pair(tmp_path: Path) -> Iterator[SocatPair]:
    yield from running_socat(tmp_path)


def test_each_shoe_event_maps_to_the_engine_vocabulary() -> None:
    assert to_engine_event(CardRead("7S", "K7Q2M9")) == {
        "type": "card",
        "card": "7S",
        "deck": "K7Q2M9",
        "source": "shoe",
    }
    assert to_engine_event(CardRead("7S", "K7Q2M9", face_up=True)) == {
        "type": "card",
        "card": "7S",
        "deck": "K7Q2M9",
        "face_up": True,
        "source": "shoe",
    }
    assert to_engine_event(CutCard()) == {"type": "cut_card", "source": "shoe"}
    assert to_engine_event(Misread(b"K7Q2\xff-7S", "not printable")) == {
        "type": "misread",
        "raw": "K7Q2\\xff-7S",
        "source": "shoe",
    }
    assert to_engine_event(Heartbeat(3)) is None
    assert to_engine_event(ReaderError("lamp")) is None


def test_the_time_read_is_carried_as_iso_8601() -> None:
    at = datetime(2026, 11, 30, 10, 55, 1, 250000, tzinfo=UTC)
    event = to_engine_event(CutCard(), time=at)
    assert event is not None and event["time"] == "2026-11-30T10:55:01.250000+00:00"


def test_every_mapped_event_and_the_load_record_pass_the_engine_parser() -> None:
    load = load_shoe(2, random.Random(3))
    shuffle = parse_event(load.shuffle_event())
    assert shuffle.deck_serials == load.deck_serials and shuffle.decks == 2
    for shoe_event in (
        load.cards[0],
        CardRead(load.cards[1].card, load.cards[1].deck, face_up=True),
        CutCard(),
        Misread(b"\x00garbage", "not printable"),
    ):
        mapped = to_engine_event(shoe_event, time=datetime.now(UTC))
        assert mapped is not None
        event = parse_event(mapped)
        assert event.to_dict()["type"] == mapped["type"]


@pytest.mark.parametrize(
    ("serials", "cut", "message"),
    [
        ([], 10, "at least one deck serial"),
        (["K7Q2M9", "abc1"], 10, "'abc1' is not 4-12 characters"),
        (["K7Q2M9", "K7Q2M9"], 10, "loaded twice: K7Q2M9"),
        (["K7Q2M9"], -1, "cut_card -1 is negative"),
    ],
)
def test_a_bad_load_record_is_refused_naming_what_is_wrong(
    serials: list[str], cut: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        shuffle_event(serials, cut)


def test_foreign_and_twice_read_cards_misreads_and_face_up_cards_are_flagged_by_the_engine(
    socat_pair: SocatPair,
) -> None:
    load = load_shoe(2, random.Random(21))
    table = Table(parse_setup(TABLE))

    def apply(obj: dict[str, Any]) -> list[str]:
        return [flag.rule for flag in table.apply(parse_event(obj)).flags]

    assert apply(load.shuffle_event()) == []
    assert apply({"type": "bet", "box": 1, "player": "ann", "amount": "10"}) == []
    assert apply({"type": "no_more_bets"}) == []

    first, second = load.cards[0], load.cards[1]
    foreign = "ZZZZ99" if "ZZZZ99" not in load.deck_serials else "YYYY99"
    lines = [
        encode(first),  # dealt to box 1
        encode(CardRead(second.card, foreign)),  # a deck not loaded into this shoe
        encode(first),  # the same card of the same deck again
        b"K7Q2?9-7S\r\n",  # a barcode the reader could not decode
        encode(CardRead(second.card, second.deck, face_up=True)),
        encode(Heartbeat(1)),  # device status only: never reaches the engine
    ]
    harness = start_reader(socat_pair.b, silence_timeout=None)
    writer = SerialTransport(socat_pair.a)
    writer.open()
    try:
        harness.wait_for_state("connected", timeout=5)
        writer.write(b"".join(lines))
        events = harness.wait_for_events(5, timeout=5)
    finally:
        writer.close()
        harness.stop()
    flags = []
    for shoe_event in events:
        mapped = to_engine_event(shoe_event)
        assert mapped is not None
        flags.append(apply(mapped))
    assert flags == [[], ["shoe"], ["shoe"], ["shoe"], ["16.1"]]
    box = next(b for b in table.due().to_dict()["boxes"] if b["box"] == 1)
    assert box["hands"][0]["cards"] == [first.card]
