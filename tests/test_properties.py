"""Properties over random event streams, legal and illegal (hypothesis)."""

from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal
from typing import Any

from engine_dsl import new_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cards import ALL_CODES, deck
from controller.engine import Table
from controller.events import parse_event
from controller.replay import replay_dicts

PLAYERS = ["ann", "bob", "cy"]
GAMES = ["pontoon-nz-2000", "blackjack-nz-1994", "blackjack"]

box = st.integers(1, 4)
player = st.sampled_from(PLAYERS)
amount = st.sampled_from([0, 1, 2, 5, 10, 12.5, 25, 2000])
SERIALS = ["AAAA1", "BBBB2", "CCCC3"]
serial = st.sampled_from(SERIALS)
card_event = st.fixed_dictionaries(
    {"type": st.just("card"), "card": st.sampled_from(ALL_CODES)},
    optional={
        "face_up": st.booleans(),
        "in_error": st.sampled_from(["exposed", "unexposed"]),
        "damaged": st.booleans(),
        "deck": serial,
    },
)
ids = st.lists(st.sampled_from(["dee", "sam", "sue"]), min_size=1, max_size=2)
# The opening and the shoe's end (docs/reference/events.md, 6.1-6.3).
opening_event = st.one_of(
    st.fixed_dictionaries({"type": st.just("inspect")}, optional={"deck": serial, "by": ids}),
    st.just({"type": "inspect_end"}),
    st.just({"type": "shoe_end"}),
    st.fixed_dictionaries({"type": st.just("open_table")}, optional={"by": ids}),
    st.builds(
        lambda s, a: {"type": "opening_step", "step": s, "actor": a},
        st.sampled_from(["spread", "chemmy", "stack", "riffle", "cut"]),
        st.sampled_from(["dee", "sam"]),
    ),
    st.just({"type": "close_table"}),
    st.builds(lambda d: {"type": "dealer", "dealer": d}, st.sampled_from(["dee", "dan"])),
    st.builds(
        lambda d, on: {"type": "manual_mode", "device": d, "on": on},
        st.sampled_from(["shoe", "camera"]),
        st.booleans(),
    ),
    st.builds(
        lambda n, r: {"type": "acknowledge", "flag_event": n, "rule": r},
        st.integers(1, 90),
        st.sampled_from(["shoe", "6.1", "16.3"]),
    ),
    st.builds(
        lambda d: {"type": "shuffle", "decks": 2, "cut_card": 60, "deck_serials": d},
        st.lists(serial, min_size=1, max_size=3),
    ),
)
event = st.one_of(
    card_event,
    card_event,
    card_event,
    card_event,
    st.builds(
        lambda b, p, a: {"type": "bet", "box": b, "player": p, "amount": a}, box, player, amount
    ),
    st.just({"type": "no_more_bets"}),
    st.builds(
        lambda t, b: {"type": t, "box": b},
        st.sampled_from(
            ["stand", "hit", "surrender", "offer_surrender", "refuse", "absent", "split", "void"]
        ),
        box,
    ),
    st.builds(
        lambda t, b, p, a: {"type": t, "box": b, "player": p, "amount": a},
        st.sampled_from(["double", "insurance"]),
        box,
        player,
        amount,
    ),
    st.builds(lambda b, p: {"type": "rescue", "box": b, "player": p}, box, player),
    st.builds(lambda b, p: {"type": "split", "box": b, "player": p}, box, player),
    st.sampled_from(
        [
            {"type": "offer_insurance"},
            {"type": "cut_card"},
            {"type": "peek"},
            {"type": "void"},
            {"type": "shuffle", "decks": 6, "cut_card": 200},
            {"type": "reshuffle_discards", "cut_card": 50},
            {"type": "misread", "raw": "??"},
        ]
    ),
    st.builds(lambda b, a: {"type": "wager_seen", "box": b, "amount": a}, box, amount),
    opening_event,
)


def cards_accounted(table: Table) -> Counter[str]:
    """The cards somewhere on the table now: the discard rack and the cards removed from play
    (both the current shoe's), the hands, the dealer, a card on offer (16.4)."""
    here = Counter(table.discards) + Counter(table.removed)
    rnd = table.current_round
    if rnd is not None:
        here.update(rnd.dealer)
        for hand in rnd.all_hands():
            here.update(hand.cards)
        if rnd.pending_card is not None:
            here[rnd.pending_card] += 1
    return here


def left_with_the_shoe(table: Table, event: dict[str, Any]) -> Counter[str]:
    """The cards an event takes off the table, applied to ``table`` as it is before it: a new
    shoe takes the discard rack and the removed cards, and so does the end of an ended shoe's
    readout (an inspection or the table's close); 16.7 shuffles the discard rack back into the
    shoe; a card read into an inspection is not on the table (nor is one read out of an ended
    shoe, unless the shoe's checks removed it from play: see :func:`read_out`)."""
    kind = event["type"]
    ended = table.shoe is not None and table.shoe.ended
    if kind == "shuffle" or (kind in ("inspect", "close_table") and ended):
        return Counter(table.discards) + Counter(table.removed)
    if kind == "reshuffle_discards":
        return Counter(table.discards)
    if kind == "card" and table.inspection is not None:
        return Counter([event["card"]])
    return Counter()


def read_out(table: Table, event: dict[str, Any]) -> bool:
    """Whether ``event`` is a card read out of an ended shoe (``table`` as before it)."""
    return (
        event["type"] == "card"
        and table.inspection is None
        and table.shoe is not None
        and table.shoe.ended
    )


def check_money(doc: dict[str, Any]) -> None:
    for rnd in doc["rounds"]:
        for s in rnd["settlements"]:
            staked, returned, net = (Decimal(s[k]) for k in ("staked", "returned", "net"))
            assert staked + net == returned
            assert staked >= 0 and returned >= 0
            if s["kind"] == "insurance":
                assert returned in (0, staked, 3 * staked)
            if s["kind"] == "hand":
                assert returned <= 4 * staked
            if rnd["status"] == "void":
                assert net == 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), events=st.lists(event, max_size=80))
def test_random_streams_never_break_the_engine(game: str, events: list[dict[str, Any]]) -> None:
    table = new_table(game, rules={"decks": 2} if game != "blackjack" else None)
    read: Counter[str] = Counter()
    gone: Counter[str] = Counter()
    for obj in events:
        gone += left_with_the_shoe(table, obj)
        out, removed = read_out(table, obj), len(table.removed)
        applied = table.apply(parse_event(obj))  # no exception escapes
        if out and len(table.removed) == removed:
            gone[obj["card"]] += 1  # read out, back with the shoe's cards
        if obj["type"] == "card":
            read[obj["card"]] += 1
        for flag in applied.flags:
            assert flag.rule and flag.message
        table.due()  # always answerable
    assert cards_accounted(table) + gone == read  # every card read is somewhere
    doc = table.result()
    check_money(doc)
    setup = {
        "type": "table",
        "game": game,
        "table_id": "T",
        "boxes": 7,
        "min_bet": 5,
        "max_bet": 1000,
        "rules": {"decks": 2} if game != "blackjack" else {},
    }
    assert replay_dicts([setup, *events]) == doc  # the same events give the same result


def bot_shift(game: str, seed: int, rounds: int) -> tuple[Table, list[dict[str, Any]]]:
    """Legal play: random wagers, cards from a shuffled shoe, decisions picked from due()."""
    rng = random.Random(seed)
    table = new_table(game)
    shoe = deck(table.rules.excluded_ranks) * table.rules.decks
    rng.shuffle(shoe)
    log: list[dict[str, Any]] = [
        {"type": "shuffle", "decks": table.rules.decks, "cut_card": len(shoe) - 40}
    ]

    def do(obj: dict[str, Any]) -> None:
        log.append(obj)
        gone.update(left_with_the_shoe(table, obj))
        table.apply(parse_event(obj))

    gone: Counter[str] = Counter()

    do(log.pop())
    for _ in range(rounds):
        if len(shoe) < 60:
            shoe = deck(table.rules.excluded_ranks) * table.rules.decks
            rng.shuffle(shoe)
            do({"type": "shuffle", "decks": table.rules.decks, "cut_card": len(shoe) - 40})
        for b in rng.sample(range(1, 8), rng.randint(1, 4)):
            for p in rng.sample(PLAYERS, rng.randint(1, 2)):
                do({"type": "bet", "box": b, "player": p, "amount": rng.choice([5, 10, 25])})
        do({"type": "no_more_bets"})
        number = table.current_round.number  # type: ignore[union-attr]
        for _step in range(200):
            if table.current_round is None or table.current_round.number != number:
                break
            due = table.due()
            options = [d for d in due.decisions if d["action"] not in ("absent", "refuse")]
            if options and (due.next_card is None or rng.random() < 0.5):
                d = rng.choice(options)
                obj: dict[str, Any] = {"type": d["action"]}
                for key in ("box", "player"):
                    if key in d:
                        obj[key] = d[key]
                if d["action"] in ("double", "insurance"):
                    obj["amount"] = d["max"]
                if (
                    d["action"] == "split"
                    and d.get("player") == table.current_round.boxes[d["box"]].controller
                ):
                    obj.pop("player")
                do(obj)
            elif due.next_card is not None:
                do({"type": "card", "card": shoe.pop()})
        else:
            raise AssertionError(f"round {number} did not end: {table.due().to_dict()}")
    return table, log


@settings(max_examples=60, deadline=None)
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 2**32))
def test_legal_play_settles_every_round_and_replays_identically(game: str, seed: int) -> None:
    table, log = bot_shift(game, seed, rounds=5)
    gone: Counter[str] = Counter()
    replayed = new_table(game)
    for obj in log:
        gone += left_with_the_shoe(replayed, obj)
        replayed.apply(parse_event(obj))
    doc = table.result()
    assert len(doc["rounds"]) == 5
    assert all(r["status"] == "settled" for r in doc["rounds"])
    check_money(doc)
    for rnd in doc["rounds"]:
        assert {h["outcome"] for h in rnd["hands"]} <= {"win", "lose", "push", "surrender"}
        hands = {(h["box"], h["hand"]) for h in rnd["hands"]}
        assert {(s["box"], s["hand"]) for s in rnd["settlements"]} <= hands
    read = Counter(e["card"] for e in log if e["type"] == "card")
    assert cards_accounted(table) + gone == read
    setup = {
        "type": "table",
        "game": game,
        "table_id": "T",
        "boxes": 7,
        "min_bet": 5,
        "max_bet": 1000,
        "rules": {},
    }
    assert replay_dicts([setup, *log]) == doc


def test_every_event_type_has_the_room_that_owns_it() -> None:
    from controller.engine.table import HANDLERS
    from controller.events import EVENT_TYPES

    assert set(HANDLERS) == set(EVENT_TYPES)
