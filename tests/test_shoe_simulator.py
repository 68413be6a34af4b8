"""The simulated shoe: a real shoe's contents, reproducible by seed, faults where asked."""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import pytest

from controller.cards import ALL_CODES
from drivers.shoe.events import CardRead, CutCard, Heartbeat, Misread
from drivers.shoe.framing import is_deck_serial, parse_stream
from drivers.shoe.simulator import (
    FaultPlan,
    SimulatedShoe,
    Written,
    load_shoe,
    make_deck_serials,
    make_decks,
    parse_faults,
    shuffle_decks,
)
from drivers.shoe.transport import SerialTransport


def test_deck_serials_are_valid_distinct_and_follow_the_seed() -> None:
    serials = make_deck_serials(50, random.Random(1))
    assert len(set(serials)) == 50
    assert all(is_deck_serial(s) and len(s) == 6 for s in serials)
    assert make_deck_serials(50, random.Random(1)) == serials
    assert make_deck_serials(50, random.Random(2)) != serials
    assert all(is_deck_serial(s) for s in make_deck_serials(5, random.Random(1), length=12))
    with pytest.raises(ValueError, match=r"length 3 is outside 4\.\.12"):
        make_deck_serials(1, random.Random(1), length=3)


@pytest.mark.parametrize(("pontoon", "per_deck"), [(False, 52), (True, 48)])
def test_a_shoe_holds_each_card_of_each_deck_exactly_once(pontoon: bool, per_deck: int) -> None:
    load = load_shoe(6, random.Random(5), pontoon=pontoon)
    assert len(load.cards) == 6 * per_deck
    counts = Counter((c.deck, c.card) for c in load.cards)
    assert set(counts.values()) == {1}
    assert {deck for deck, _ in counts} == set(load.deck_serials)
    assert {card for _, card in counts} == {c for c in ALL_CODES if not (pontoon and c[0] == "T")}
    assert load.cut_card is not None and 0.70 * len(load.cards) <= load.cut_card <= 0.80 * len(
        load.cards
    )
    assert load.shuffle_event() == {
        "type": "shuffle",
        "decks": 6,
        "cut_card": load.cut_card,
        "deck_serials": list(load.deck_serials),
    }


def test_a_seed_replays_the_same_shoe_and_another_seed_shuffles_differently() -> None:
    assert load_shoe(2, random.Random(8)) == load_shoe(2, random.Random(8))
    assert load_shoe(2, random.Random(8)).cards != load_shoe(2, random.Random(9)).cards
    assert load_shoe(1, random.Random(8), cut_card=None).cut_card is None
    with pytest.raises(ValueError, match=r"cut card position 53 is outside 0\.\.52"):
        load_shoe(1, random.Random(8), cut_card=53)


def test_fault_specs_are_parsed_and_bad_ones_named() -> None:
    plan = parse_faults("misread=0.05, faceup@3,drop@10,checksum, silence@10")
    assert plan.rates == {"misread": 0.05, "checksum": 0.02}
    assert plan.at == {3: frozenset({"faceup"}), 10: frozenset({"drop", "silence"})}
    for bad, message in [
        ("smoke", "fault 'smoke' is not KIND"),
        ("misread=2", "rate 2.0 is outside 0..1"),
        ("faceup@0", "card numbers count from 1"),
        ("misread=abc", "fault 'misread=abc' is not KIND"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_faults(bad)


def deal(faults: str, cards: int = 40) -> tuple[list[Written], list[object]]:
    port = SerialTransport("loop://")
    port.open()
    load = load_shoe(1, random.Random(12), cut_card=5)
    shoe = SimulatedShoe(
        port,
        load,
        random.Random(12),
        interval=0.0,
        faults=parse_faults(faults),
    )
    written = shoe.run(cards)
    data = b""
    while chunk := port.read():
        data += chunk
    assert data == b"".join(w.data for w in written), "the shoe wrote what it recorded"
    return written, list(parse_stream(data))


def test_without_faults_the_shoe_writes_its_cards_in_order_with_the_cut_card() -> None:
    _, events = deal("", cards=10)
    load = load_shoe(1, random.Random(12), cut_card=5)
    read = [e for e in events if not isinstance(e, Heartbeat)]
    assert read == [*load.cards[:5], CutCard(), *load.cards[5:10]]
    assert isinstance(events[0], Heartbeat)  # the reader is alive from the start


def test_each_fault_is_written_where_asked() -> None:
    written, events = deal("misread@2,checksum@3,garbage@4,faceup@6", cards=8)
    cards = [e for e in events if not isinstance(e, Heartbeat)]
    load = load_shoe(1, random.Random(12), cut_card=5)
    # card 2 and 3 become misreads, card 4 is preceded by a noise line, card 6 is face up
    assert cards[0] == load.cards[0]
    assert isinstance(cards[1], Misread) and isinstance(cards[2], Misread)
    assert "checksum" in cards[2].reason
    assert isinstance(cards[3], Misread) and cards[4] == load.cards[3]
    assert cards[5] == load.cards[4] and cards[6] == CutCard()
    six = load.cards[5]
    assert cards[7] == CardRead(six.card, six.deck, face_up=True)
    assert [w.kind for w in written if w.kind not in ("heartbeat",)][:5] == [
        "card",
        "misread",
        "checksum",
        "garbage",
        "card",
    ]


def test_a_fault_rate_faults_about_that_share_of_cards() -> None:
    _, events = deal("misread=0.25", cards=52)
    misreads = sum(isinstance(e, Misread) for e in events)
    assert 5 <= misreads <= 25  # binomial(52, 0.25): mean 13


def test_silence_stops_the_heartbeat_for_its_duration() -> None:
    port = SerialTransport("loop://")
    port.open()
    shoe = SimulatedShoe(
        port,
        load_shoe(1, random.Random(1), cut_card=None),
        random.Random(1),
        interval=0.05,
        heartbeat_interval=0.02,
        faults=FaultPlan(at={3: frozenset({"silence"})}),
        silence_seconds=0.4,
        on_write=lambda w: stamps.append((time.monotonic(), w)),
    )
    stamps: list[tuple[float, Written]] = []
    shoe.run(5)
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(stamps)]
    assert max(gaps) >= 0.4  # nothing at all, heartbeat included, for the silence
    assert sorted(gaps)[-2] < 0.3  # elsewhere a heartbeat or card every 0.02-0.05 s


# --- the physical decks, their inspection and the cards left ------------------------------------


def test_without_deck_faults_a_seed_gives_the_shoe_it_always_gave() -> None:
    # The shoe as load_shoe made it before decks became physical: serials, one deck per serial
    # in the fixed deck order, one shuffle, then the cut card.
    rng = random.Random(31)
    serials = make_deck_serials(3, rng)
    cards = [CardRead(c, s) for s in serials for c in ALL_CODES if c[0] != "T"]
    rng.shuffle(cards)
    cut = round(len(cards) * rng.uniform(0.70, 0.80))
    load = load_shoe(3, random.Random(31), pontoon=True)
    assert (load.deck_serials, load.cards, load.cut_card) == (tuple(serials), tuple(cards), cut)
    assert load.injected == ()


def whole(serial: str, pontoon: bool) -> Counter[str]:
    return Counter(f"{serial}-{c}" for c in ALL_CODES if not (pontoon and c[0] == "T"))


@pytest.mark.parametrize(
    ("spec", "pontoon"),
    [
        ("short-deck@1", True),
        ("ten-in-deck@2", True),
        ("doubled-card@2", False),
        ("foreign-card@1", False),
        ("short-deck,short-deck,doubled-card", True),
    ],
)
def test_a_deck_fault_changes_the_deck_itself_and_says_exactly_how(
    spec: str, pontoon: bool
) -> None:
    plan = parse_faults(spec)
    decks, injected = make_decks(2, random.Random(4), pontoon=pontoon, faults=plan.decks)
    assert len(injected) == len(plan.decks)
    missing: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    for physical in decks:
        held = Counter(f"{c.deck}-{c.card}" for c in physical.cards)
        missing += whole(physical.serial, pontoon) - held
        extra += held - whole(physical.serial, pontoon)
    assert missing == Counter(i.missing for i in injected if i.missing)
    assert extra == Counter(i.extra for i in injected if i.extra)
    for fault, (kind, number) in zip(injected, plan.decks, strict=True):
        assert fault.kind == kind
        if number is not None:
            assert fault.deck == decks[number - 1].serial
    load = shuffle_decks(decks, random.Random(4), injected=injected)
    assert Counter(load.cards) == Counter(c for d in decks for c in d.cards)  # the shoe is them


def test_deck_faults_that_cannot_be_are_refused_naming_why() -> None:
    with pytest.raises(ValueError, match="only a Pontoon deck holds no tens"):
        make_decks(1, random.Random(1), faults=(("ten-in-deck", None),))
    with pytest.raises(ValueError, match=r"short-deck@3: the shoe has decks 1 to 2"):
        make_decks(2, random.Random(1), faults=(("short-deck", 3),))
    for bad, message in [
        ("short-deck=0.5", "a deck fault is KIND or KIND@DECK"),
        ("short-deck@0", "decks count from 1"),
        ("long-deck", "is not KIND"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_faults(bad)
    assert parse_faults("doubled-card@2,misread@3").decks == (("doubled-card", 2),)


def test_the_shoe_reads_a_deck_for_inspection_and_the_cards_left_through_the_port() -> None:
    port = SerialTransport("loop://")
    port.open()
    load = load_shoe(
        2, random.Random(6), pontoon=True, cut_card=60, deck_faults=(("short-deck", 1),)
    )
    shoe = SimulatedShoe(port, load, random.Random(6), interval=0.0, heartbeat_interval=None)
    shoe.inspect(load.decks[0])
    shoe.run(40)
    shoe.read_out()
    data = b""
    while chunk := port.read():
        data += chunk
    events = list(parse_stream(data))
    assert events == [*load.decks[0].cards, *load.cards[:60], CutCard(), *load.cards[60:]]
    assert len(load.decks[0].cards) == 47 and shoe.dealt == len(load.cards) == 95
    assert shoe.rest() == ()
