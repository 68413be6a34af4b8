"""The reader's line protocol (docs/reference/devices.md): each kind of line; misreads."""

from __future__ import annotations

import pytest

from drivers.shoe.events import CardRead, CutCard, Heartbeat, Misread, ReaderError
from drivers.shoe.framing import (
    MAX_LINE,
    LineFramer,
    checksum,
    encode,
    is_deck_serial,
    parse_line,
    parse_stream,
)


@pytest.mark.parametrize(
    ("line", "event"),
    [
        (b"K7Q2M9-7S", CardRead("7S", "K7Q2M9")),
        (b"ABCD-AS", CardRead("AS", "ABCD")),
        (b"ABCDEFGHJK12-TD", CardRead("TD", "ABCDEFGHJK12")),
        (b"CUT", CutCard()),
        (b"#FACEUP K7Q2M9-QH", CardRead("QH", "K7Q2M9", face_up=True)),
        (b"#HB 1042", Heartbeat(1042)),
        (b"#ERR lamp failure", ReaderError("lamp failure")),
        (b"#ERR", ReaderError("")),
        (b"K7Q2M9-7S*22", CardRead("7S", "K7Q2M9")),  # 0x22 is the XOR of "K7Q2M9-7S"
        (b"CUT*%02x" % checksum(b"CUT"), CutCard()),  # lower-case hex is accepted
    ],
)
def test_valid_lines(line: bytes, event: object) -> None:
    assert parse_line(line) == event


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"", "empty line"),
        (b"K7Q2M9-7S*23", "checksum *23 does not match *22"),
        (b"K7Q-7S", "not a card barcode"),  # serial too short
        (b"ABCDEFGHJK123-7S", "not a card barcode"),  # serial too long
        (b"k7q2m9-7S", "not a card barcode"),  # lower case serial
        (b"K7Q2M9-1S", "not a card barcode"),
        (b"K7Q2M9-7X", "not a card barcode"),
        (b"K7Q2M9 7S", "not a card barcode"),
        (b" K7Q2M9-7S", "not a card barcode"),
        (b"K7Q2M9-7S ", "not a card barcode"),
        (b"CUT CUT", "not a card barcode"),
        (b"#FACEUP CUT", "face-up card is not"),
        (b"#HB", "heartbeat is not"),
        (b"#HB -1", "heartbeat is not"),
        (b"#HELLO", "unknown reader message"),
        (b"K7Q2M9-7\xd3", "byte 0xd3 at column 9 is not printable ASCII"),
        (b"K7Q2\x00M9-7S", "byte 0x00 at column 5 is not printable ASCII"),
        (b"A" * (MAX_LINE + 1), f"line too long: {MAX_LINE + 1} bytes"),
    ],
)
def test_misreads_keep_their_raw_bytes_and_say_why(line: bytes, why: str) -> None:
    event = parse_line(line)
    assert isinstance(event, Misread)
    assert why in event.reason
    assert event.raw == line[:MAX_LINE]


def test_misread_text_escapes_what_is_not_printable() -> None:
    event = parse_line(b"K7\\Q2\xff-7S")
    assert isinstance(event, Misread)
    assert event.text == "K7\\x5cQ2\\xff-7S"
    assert event.to_dict() == {"type": "misread", "raw": event.text, "reason": event.reason}


def test_cr_lf_and_crlf_all_end_a_line_and_crlf_counts_once() -> None:
    stream = b"AAAA-2S\r\nBBBB-3S\rCCCC-4S\nCUT\r\n"
    assert parse_stream(stream) == [
        CardRead("2S", "AAAA"),
        CardRead("3S", "BBBB"),
        CardRead("4S", "CCCC"),
        CutCard(),
    ]


def test_a_blank_line_between_lines_is_a_misread() -> None:
    events = parse_stream(b"AAAA-2S\r\n\r\nBBBB-3S\n\n")
    assert [type(e) for e in events] == [CardRead, Misread, CardRead, Misread]


def test_crlf_split_across_reads_is_one_line_end() -> None:
    framer = LineFramer()
    assert framer.feed(b"AAAA-2S\r") == [CardRead("2S", "AAAA")]
    assert framer.feed(b"\nBBBB") == []
    assert framer.pending == b"BBBB"
    assert framer.feed(b"-3S\r") == [CardRead("3S", "BBBB")]
    assert framer.feed(b"") == []
    assert framer.feed(b"\n") == []  # still the same CR LF, even after an empty read


def test_a_line_cut_off_is_flushed_as_a_misread_with_its_bytes() -> None:
    framer = LineFramer()
    assert framer.feed(b"CUT\r\nK7Q2") == [CutCard()]
    [event] = framer.flush("port lost")
    assert isinstance(event, Misread)
    assert event.raw == b"K7Q2"
    assert "port lost" in event.reason
    assert framer.flush("again") == []


def test_noise_without_line_ends_does_not_grow_memory_and_is_one_misread() -> None:
    framer = LineFramer()
    for _ in range(1000):
        assert framer.feed(b"x" * 1000) == []
    assert len(framer.pending) <= MAX_LINE + 1
    [event, after] = framer.feed(b"\r\nAAAA-2S\r\n")
    assert isinstance(event, Misread)
    assert "1000000 bytes" in event.reason
    assert after == CardRead("2S", "AAAA")


@pytest.mark.parametrize(
    "event",
    [
        CardRead("7S", "K7Q2M9"),
        CardRead("AH", "ZZZZ", face_up=True),
        CutCard(),
        Heartbeat(0),
        ReaderError("motor stalled"),
    ],
)
@pytest.mark.parametrize("with_checksum", [False, True])
def test_encoded_lines_read_back_as_the_same_event(
    event: CardRead | CutCard | Heartbeat | ReaderError, with_checksum: bool
) -> None:
    data = encode(event, with_checksum=with_checksum)
    assert data.endswith(b"\r\n")
    assert (b"*" in data) == with_checksum
    assert parse_stream(data) == [event]


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (CardRead("7S", "k7"), "'k7-7S' is not a card barcode"),
        (CardRead("1S", "K7Q2M9"), "is not a card barcode"),
        (Heartbeat(-1), "heartbeat counter -1"),
        (ReaderError("bad\r\nline"), "is not printable ASCII"),
    ],
)
def test_encoding_refuses_what_a_reader_could_not_send(
    event: CardRead | Heartbeat | ReaderError, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("*", r"\*")):
        encode(event)


def test_deck_serials_are_4_to_12_upper_case_letters_and_digits() -> None:
    assert is_deck_serial("K7Q2M9")
    assert is_deck_serial("ABCD")
    assert is_deck_serial("ABCDEFGHJK12")
    assert not is_deck_serial("ABC")
    assert not is_deck_serial("ABCDEFGHJK123")
    assert not is_deck_serial("abcd")
    assert not is_deck_serial("AB-CD")
