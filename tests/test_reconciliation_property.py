"""A property: for random shoes with random faults injected -- a card removed, a card doubled, a
card replaced by one of another deck -- played through rounds, ended and read out, the
reconciliation names exactly the injected cards.

The faults are injected here, into the physical cards, independently of the engine: with deck
serials, a removed card is missing as ``SERIAL-CARD``, a doubled one extra, a replaced one
missing and its stand-in (of deck ``ZZZZ9``) extra. Without serials the shoe is reconciled by
counts, so only the net change per card code can be named (a 7H removed from one deck and
doubled in another cancel out): the property says exactly that. So it does when some cards are
keyed in by hand (read with no serial, as after a misread): each stands for a card of its code,
and the cards named are right by code.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from engine_dsl import new_table
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import deck
from controller.engine import Table
from controller.events import parse_event

SERIALS = ["AAAA1", "BBBB2", "CCCC3"]
FOREIGN = "ZZZZ9"

fault = st.tuples(
    st.sampled_from(["remove", "double", "replace"]), st.integers(0, 2), st.integers(0, 51)
)


def physical_decks(
    game_codes: list[str], decks: int, faults: list[tuple[str, int, int]], rng: random.Random
) -> tuple[list[tuple[str, str]], Counter[str], Counter[str]]:
    """The shoe's cards as (serial, card) after the faults, and what was injected: the cards
    that should be missing and those that should be extra, named as the reconciliation names
    them with serials."""
    cards = {s: list(game_codes) for s in SERIALS[:decks]}
    missing: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    foreign: list[tuple[str, str]] = []
    for kind, d, i in faults:
        serial = SERIALS[d % decks]
        mine = cards[serial]
        if not mine:
            continue
        card = mine[i % len(mine)]
        if kind == "double":
            mine.append(card)
            extra[f"{serial}-{card}"] += 1
            continue
        mine.remove(card)
        if f"{serial}-{card}" in extra:  # taking back a card doubled earlier
            extra[f"{serial}-{card}"] -= 1
            extra = +extra
        else:
            missing[f"{serial}-{card}"] += 1
        if kind == "replace":
            stand_in = rng.choice(game_codes)
            foreign.append((FOREIGN, stand_in))
            extra[f"{FOREIGN}-{stand_in}"] += 1
    shoe = [(s, c) for s, cs in cards.items() for c in cs] + foreign
    rng.shuffle(shoe)
    return shoe, missing, extra


def play_out(
    table: Table, shoe: list[tuple[str, str]], serials: bool, keyed: float, rng: random.Random
) -> None:
    """Rounds while the shoe holds plenty; then the shoe's end and the readout. A share
    ``keyed`` of the cards is read with no serial."""

    def apply(obj: dict[str, Any]) -> None:
        table.apply(parse_event(obj))

    def card() -> None:
        serial, code = shoe.pop()
        named = serials and rng.random() >= keyed
        apply({"type": "card", "card": code, **({"deck": serial} if named else {})})

    while len(shoe) > 30:
        for box in rng.sample(range(1, 5), rng.randint(1, 2)):
            apply({"type": "bet", "box": box, "player": "ann", "amount": 10})
        apply({"type": "no_more_bets"})
        number = table.rounds_played + 1
        for _ in range(60):
            if table.rounds_played >= number or not shoe:
                break
            due = table.due()
            stands = [d for d in due.decisions if d["action"] == "stand"]
            if due.next_card is not None and (not stands or rng.random() < 0.3):
                card()
            elif stands:
                apply({"type": "stand", "box": stands[0]["box"]})
            else:
                card()
        assert table.rounds_played >= number, table.due().to_dict()
    apply({"type": "shoe_end"})
    while shoe:
        card()


@settings(max_examples=80, deadline=None)
@given(
    game=st.sampled_from(["pontoon-nz-2000", "blackjack-nz-1994"]),
    decks=st.integers(1, 3),
    serials=st.booleans(),
    faults=st.lists(fault, max_size=4),
    keyed=st.sampled_from([0.0, 0.0, 0.1]),
    seed=st.integers(0, 2**32),
)
def test_reconciliation_names_exactly_the_injected_cards(
    game: str,
    decks: int,
    serials: bool,
    faults: list[tuple[str, int, int]],
    keyed: float,
    seed: int,
) -> None:
    rng = random.Random(seed)
    table = new_table(game, rules={"decks": decks})
    codes = deck(table.rules.excluded_ranks)
    shoe, missing, extra = physical_decks(codes, decks, faults, rng)
    load: dict[str, Any] = {"type": "shuffle", "decks": decks, "cut_card": None}
    if serials:
        load["deck_serials"] = SERIALS[:decks]
    table.apply(parse_event(load))
    play_out(table, shoe, serials, keyed, rng)
    flags = table.apply(parse_event({"type": "close_table"})).flags
    record = table.result()["shoes"][0]
    got_missing, got_extra = Counter(record["missing"]), Counter(record["extra"])
    if serials and not keyed:
        want_missing, want_extra = missing, extra
    elif serials:  # by code: a card keyed in stands for any deck's card of its code
        want_missing = Counter(n.split("-")[1] for n in missing.elements())
        want_extra = Counter(n.split("-")[1] for n in extra.elements())
        got_missing = Counter(n.split("-")[-1] for n in got_missing.elements())
        got_extra = Counter(n.split("-")[-1] for n in got_extra.elements())
        # A card keyed in fills a gap its code left anywhere: net by code, as with no serials.
        net = want_extra.copy()
        net.subtract(want_missing)
        want_missing = Counter({c: -n for c, n in net.items() if n < 0})
        want_extra = Counter({c: n for c, n in net.items() if n > 0})
        mine = got_extra.copy()
        mine.subtract(got_missing)
        assert +mine == want_extra and +Counter({c: -n for c, n in mine.items()}) == want_missing
        return
    else:  # by counts: the net change of each card code
        net: Counter[str] = Counter()
        for name, n in missing.items():
            net[name.split("-")[1]] -= n
        for name, n in extra.items():
            net[name.split("-")[1]] += n
        want_missing = Counter({c: -n for c, n in net.items() if n < 0})
        want_extra = Counter({c: n for c, n in net.items() if n > 0})
    assert got_missing == want_missing
    assert got_extra == want_extra
    summary = [f for f in flags if "does not reconcile" in f.message]
    if want_missing or want_extra:
        assert record["reconciled"] is False
        [flag] = summary
        assert flag.rule == "shoe"
        for name in (*want_missing, *want_extra):
            assert name in flag.message
    else:
        assert record["reconciled"] is True and summary == []
