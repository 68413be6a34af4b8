"""Table.open_decisions(): every decision open, typed, with who may take it, its limits and the
rule that opens it; Due's decisions and prompts are the same list in the screen's form.

Each expectation is worked from the rule book: insurance up to half the initial wager (10.4(a)), a
Pontoon double at most the original and at least the table's increment of 1 (12.3), a 1994
Blackjack double exactly the original (10.2), back-bettors in line with the controller (15.3).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from engine_dsl import feed, new_table, run
from test_properties import GAMES, bot_shift

from controller.engine import Decision, Kind, Role, Table
from controller.engine.decisions import SCREEN_KINDS
from controller.events import parse_event

D = Decimal


def brief(table: Table) -> list[tuple[Any, ...]]:
    return [
        (str(d.kind), str(d.by), d.rule, d.box, d.hand, d.player, d.min, d.max, d.card)
        for d in table.open_decisions()
    ]


# Box 1: ann (controls) 10 and bob 10 behind her, 5S 6H = 11 against the dealer's ace.
ACE_UP = ("bet 1 ann 10", "bet 1 bob 10", "nmb", "card 5S", "card AD", "card 6H")


def test_after_the_deal_the_offers_the_hand_in_play_and_each_players_insurance() -> None:
    table, flags = run(*ACE_UP)
    assert flags == []
    assert brief(table) == [
        ("offer_insurance", "dealer", "10.3", None, None, None, None, None, None),
        ("offer_surrender", "dealer", "9", 1, None, None, None, None, None),
        ("stand", "controller", "turn", 1, 0, "ann", None, None, None),
        ("hit", "controller", "turn", 1, 0, "ann", None, None, None),
        ("double", "controller", "12.1", 1, 0, "ann", D(1), D(10), None),
        ("surrender", "controller", "9", 1, None, "ann", None, None, None),
        ("absent", "dealer", "16.6", 1, None, None, None, None, None),
        ("insurance", "player", "10.3", 1, None, "ann", None, D(5), None),
        ("insurance", "player", "10.3", 1, None, "bob", None, D(5), None),
        ("void", "supervisor", "16.5", None, None, None, None, None, None),
    ]
    assert table.next_card() is not None and table.next_card().to_dict() == {  # type: ignore[union-attr]
        "to": "box",
        "box": 1,
        "hand": 0,
    }


def test_a_back_bettor_doubles_in_line_then_each_player_may_rescue() -> None:
    table, _ = run(*ACE_UP, "offer_insurance", "offer_surrender 1", "double 1 ann 10")
    kinds = [(str(d.kind), str(d.by), d.player) for d in table.open_decisions()]
    assert kinds == [
        ("double", "back_bettor", "bob"),  # 15.3: only now that the controller has doubled
        ("insurance", "player", "ann"),  # insurance stays open until a further card (10.3)
        ("insurance", "player", "bob"),
        ("void", "supervisor", None),
    ]
    bob = table.open_decisions()[0]
    assert (bob.rule, bob.min, bob.max) == ("15.3", D(1), D(10))
    assert table.next_card() is not None  # the double card may come now: bob may not follow
    feed(table, "double 1 bob 5", "card 4C")  # 15: the double card closes insurance
    assert brief(table) == [
        ("rescue", "player", "12.8", 1, 0, "ann", None, None, None),
        ("rescue", "player", "12.8", 1, 0, "bob", None, None, None),
        ("void", "supervisor", "16.5", None, None, None, None, None, None),
    ]
    assert table.next_card().to_dict() == {"to": "dealer"}  # type: ignore[union-attr]


def test_a_split_opens_to_the_back_bettor_and_a_late_surrender_after_it() -> None:
    table, _ = run("bet 1 ann 10", "bet 1 bob 10", "nmb", "card 8S", "card 9D", "card 8H")
    assert ("split", "controller", "13.1", 1, 0, "ann") in [
        (str(d.kind), str(d.by), d.rule, d.box, d.hand, d.player) for d in table.open_decisions()
    ]
    feed(table, "split 1")  # surrender was not offered: 16.12
    found = {(str(d.kind), str(d.by), d.rule, d.hand, d.player) for d in table.open_decisions()}
    assert ("split", "back_bettor", "15.3", 0, "bob") in found
    assert ("surrender", "controller", "16.12", None, "ann") in found
    assert table.next_card().to_dict() == {"to": "box", "box": 1, "hand": 0}  # type: ignore[union-attr]


def test_a_16_4_card_on_offer_is_taken_or_refused_by_the_boxs_controller() -> None:
    table, _ = run("bet 1 ann 10", "nmb", "card 9S", "card 6H", "card 7S", "offer_surrender 1")
    feed(table, "card 5C exposed")
    assert brief(table)[:2] == [
        ("hit", "controller", "16.4", 1, 0, "ann", None, None, "5C"),
        ("refuse", "controller", "16.4", 1, 0, "ann", None, None, "5C"),
    ]
    assert table.next_card() is None  # the card on offer comes first


def test_a_1994_double_is_exactly_the_original_wager() -> None:
    table, _ = run("bet 1 ann 25", "nmb", "card 5S", "card 7D", "card 6H", game="blackjack-nz-1994")
    double = next(d for d in table.open_decisions() if d.kind is Kind.DOUBLE)
    assert (double.rule, double.min, double.max) == ("10.1", D(25), D(25))
    assert not any(d.kind is Kind.SURRENDER for d in table.open_decisions())  # no surrender


def test_between_rounds_and_betting() -> None:
    table = new_table()
    assert brief(table) == [("shuffle", "dealer", "6.3", None, None, None, None, None, None)]
    feed(table, "shuffle 6 200")
    assert table.open_decisions() == ()
    feed(table, "bet 3 ann 10")
    assert [(str(d.kind), d.rule) for d in table.open_decisions()] == [("no_more_bets", "5.5")]
    feed(table, "bet 3 ann 0")  # withdrawn: nothing to close
    assert table.open_decisions() == ()
    feed(table, "cut_card")
    assert [str(d.kind) for d in table.open_decisions()] == []  # a round is in betting
    table2, _ = run("cut_card")
    assert [(str(d.kind), d.rule) for d in table2.open_decisions()] == [("shuffle", "16.9")]


def test_each_decision_names_the_event_that_takes_it() -> None:
    table, _ = run(*ACE_UP)
    events = {str(d.kind) + "/" + str(d.player): d.event() for d in table.open_decisions()}
    assert events["double/ann"] == {"type": "double", "box": 1, "player": "ann", "amount": "10"}
    assert events["insurance/bob"] == {
        "type": "insurance",
        "box": 1,
        "player": "bob",
        "amount": "5",
    }
    assert events["stand/ann"] == {"type": "stand", "box": 1}
    assert events["offer_insurance/None"] == {"type": "offer_insurance"}
    low = Decision(Kind.DOUBLE, Role.CONTROLLER, "12.1", 1, 0, "ann", D(1), D(10))
    assert low.event(D(4))["amount"] == "4"
    # Once the dealer has made his offers, every event the decisions name is taken as is: none
    # is refused; an irregularity procedure (16.5 void, 16.6 absent) flags its own rule only.
    offered = (*ACE_UP, "offer_insurance", "offer_surrender 1")
    table, _ = run(*offered)
    for d in table.open_decisions():
        probe, _ = run(*offered)
        flags = probe.apply(parse_event(d.event())).flags
        assert [f.rule for f in flags] == ([d.rule] if d.rule in ("16.5", "16.6") else []), d


def test_due_shows_the_same_decisions_and_prompts_over_legal_play() -> None:
    for game in GAMES:
        _, log = bot_shift(game, 17, rounds=8)
        replay = new_table(game)
        for obj in log:
            replay.apply(parse_event(obj))
            due = replay.due()
            opened = replay.open_decisions()
            assert due.open == opened
            assert due.decisions == [d.to_dict() for d in opened if d.kind in SCREEN_KINDS]
            kinds = {d.kind for d in opened}
            assert ("offer insurance" in due.prompts) == (Kind.OFFER_INSURANCE in kinds)
            offers = [d.box for d in opened if d.kind is Kind.OFFER_SURRENDER]
            assert [p for p in due.prompts if p.startswith("offer surrender")] == [
                f"offer surrender to box {b}" for b in offers
            ]
            target = replay.next_card()
            assert due.next_card == (target.to_dict() if target is not None else None)
