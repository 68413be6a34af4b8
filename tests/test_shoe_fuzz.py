"""Fuzzing the reader's line parser: no input escapes it, and valid lines survive any noise.

The streams are built cheaply from hypothesis-drawn material (a byte blob for noise and a
seeded ``Random`` for structure), so 100,000+ streams run in seconds; each stream is cut into
chunks at random places (between CR and LF included) and several lines may share a chunk.
"""

from __future__ import annotations

import random
import re
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cards import ALL_CODES
from drivers.shoe.events import CardRead, CutCard, Heartbeat, Misread, ReaderError, ShoeEvent
from drivers.shoe.framing import MAX_LINE, LineFramer, encode, parse_line, parse_stream

STREAMS_PER_EXAMPLE = 25
EXAMPLES = 4_200  # x 25 streams = 105,000 streams
LINE_END = re.compile(rb"\r\n|\r|\n")
TERMINATORS = (b"\r\n", b"\r", b"\n")
SERIAL_CHARS = string.ascii_uppercase + string.digits
EVENT_TYPES = (CardRead, CutCard, Heartbeat, ReaderError, Misread)


def random_event(rng: random.Random) -> CardRead | CutCard | Heartbeat | ReaderError:
    kind = rng.randrange(5)
    serial = "".join(rng.choices(SERIAL_CHARS, k=rng.randint(4, 12)))
    if kind <= 1:
        return CardRead(rng.choice(ALL_CODES), serial, face_up=kind == 1)
    if kind == 2:
        return CutCard()
    if kind == 3:
        return Heartbeat(rng.randrange(10 ** rng.randint(1, 12)))
    return ReaderError(" ".join(["jam", serial][: rng.randint(0, 2)]))


def build_stream(rng: random.Random, noise: bytes) -> tuple[bytes, list[tuple[int, ShoeEvent]]]:
    """A stream of valid lines and noise lines; each valid line with its line number."""
    parts: list[bytes] = []
    expected: list[tuple[int, ShoeEvent]] = []
    lines_before = 0
    for _ in range(rng.randint(0, 8)):
        if rng.random() < 0.5 or not noise:
            event = random_event(rng)
            data = encode(
                event, with_checksum=rng.random() < 0.5, terminator=rng.choice(TERMINATORS)
            )
            expected.append((lines_before, event))
        else:
            start = rng.randrange(len(noise))
            data = noise[start : start + rng.randint(1, 120)] + rng.choice(TERMINATORS)
        parts.append(data)
        lines_before = len(LINE_END.findall(b"".join(parts)))
    return b"".join(parts), expected


def feed_in_chunks(data: bytes, rng: random.Random) -> list[ShoeEvent]:
    framer = LineFramer()
    events: list[ShoeEvent] = []
    i = 0
    while i < len(data):
        step = rng.choice((1, 1, 2, 3, 7, 16, 64, 1000))
        events += framer.feed(data[i : i + step])
        i += step
    return events + framer.flush("end of test stream")


def check_stream(data: bytes, expected: list[tuple[int, ShoeEvent]], rng: random.Random) -> None:
    chunked = feed_in_chunks(data, rng)
    whole = parse_stream(data)
    assert chunked == whole, f"chunking changed the events of {data!r}"
    lines = len(LINE_END.findall(data)) + (0 if not data or data.endswith((b"\r", b"\n")) else 1)
    assert len(whole) == lines, f"{len(whole)} events from {lines} lines in {data!r}"
    for event in whole:
        assert isinstance(event, EVENT_TYPES)
        if isinstance(event, Misread):
            assert len(event.raw) <= MAX_LINE and event.reason
    for line_number, event in expected:
        assert whole[line_number] == event, f"line {line_number} of {data!r}: {whole[line_number]}"


streams_checked = 0


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(noise=st.binary(max_size=600), seed=st.integers(0, 2**64 - 1))
def _valid_lines_amid_noise(noise: bytes, seed: int) -> None:
    global streams_checked
    rng = random.Random(seed)  # the structure; hypothesis reports the seed of a failure
    for _ in range(STREAMS_PER_EXAMPLE):
        data, expected = build_stream(rng, noise)
        check_stream(data, expected, rng)
        streams_checked += 1


def test_every_valid_line_is_found_amid_noise_however_the_stream_is_split() -> None:
    global streams_checked
    streams_checked = 0
    _valid_lines_amid_noise()
    assert streams_checked >= 100_000


@settings(max_examples=3_000, deadline=None)
@given(data=st.binary(max_size=400), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_raw_bytes_never_escape_and_split_points_do_not_matter(
    data: bytes, cuts: list[int]
) -> None:
    framer = LineFramer()
    events: list[ShoeEvent] = []
    previous = 0
    for cut in sorted(cuts):
        events += framer.feed(data[previous:cut])
        previous = max(previous, cut)
    events += framer.feed(data[previous:]) + framer.flush("end of stream")
    assert events == parse_stream(data)
    assert all(isinstance(e, EVENT_TYPES) for e in events)


@settings(max_examples=1_000, deadline=None)
@given(
    serial=st.text(SERIAL_CHARS, min_size=4, max_size=12),
    card=st.sampled_from(ALL_CODES),
    face_up=st.booleans(),
    with_checksum=st.booleans(),
)
def test_every_card_line_parses_back_to_its_card(
    serial: str, card: str, face_up: bool, with_checksum: bool
) -> None:
    event = CardRead(card, serial, face_up)
    line = encode(event, with_checksum=with_checksum, terminator=b"")
    assert parse_line(line) == event


def test_any_changed_bit_under_a_checksum_is_a_misread() -> None:
    events: list[CardRead | CutCard | Heartbeat] = [
        CardRead("7S", "K7Q2M9"),
        CardRead("QH", "AB12", face_up=True),
        CutCard(),
        Heartbeat(1042),
    ]
    for event in events:
        good = encode(event, with_checksum=True, terminator=b"")
        assert parse_line(good) == event
        for i in range(len(good)):
            for bit in range(8):
                corrupted = bytearray(good)
                corrupted[i] ^= 1 << bit
                if corrupted[i] in b"\r\n":
                    continue  # a line end is framing, not content
                if i >= len(good) - 2 and bytes(corrupted[i : i + 1]).upper() == good[i : i + 1]:
                    continue  # the checksum's hex digits may be written in either case
                read = parse_line(bytes(corrupted))
                assert isinstance(read, Misread), f"{bytes(corrupted)!r} was read as {read}"
