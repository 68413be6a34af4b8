"""blackjack-nz-1994 (Gazette 1994 No. 112: doubling 10, splitting 11) and the generic rule set."""

from __future__ import annotations

from decimal import Decimal

import pytest
from engine_dsl import feed, last_round, nets, new_table, outcomes, rules_of, run

D = Decimal
BJ = "blackjack-nz-1994"


def bj(*steps: str, rules: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    return run(*steps, game=BJ, rules=rules)


def test_tens_are_ordinary_cards_in_blackjack() -> None:
    table, flags = bj("bet 1 ann 10", "nmb", "card TS", "card 7D", "card 9C", "stand 1", "card KD")
    assert flags == []
    assert last_round(table).hands[0]["total"] == 19


@pytest.mark.parametrize(
    ("cards", "allowed"),
    [
        (["4S", "5D"], True),  # 9
        (["4S", "6D"], True),  # 10
        (["5S", "6D"], True),  # 11
        (["6S", "6D"], False),  # 12
        (["AS", "8D"], False),  # 10.1(b): no ace, though soft 19/hard 9
        (["3S", "5D"], False),  # 8
    ],
)
def test_10_1_double_only_on_9_10_11_without_an_ace(cards: list[str], allowed: bool) -> None:
    _, flags = bj(
        "bet 1 ann 10", "nmb", f"card {cards[0]}", "card 7D", f"card {cards[1]}", "double 1 ann 10"
    )
    assert rules_of(flags) == ([] if allowed else ["10.1"])


def test_10_2_the_double_equals_the_original_and_10_3_one_card_10_4_paid_1_to_1() -> None:
    table, flags = bj(
        "bet 1 ann 10",
        "nmb",
        "card 5S",
        "card 7D",
        "card 6D",
        "double 1 ann 5",
        "double 1 ann 10",
        "card 9C",
        "card KD",
    )
    r = last_round(table)
    assert rules_of(flags) == ["10.2"]
    assert r.hands[0]["cards"] == ["5S", "6D", "9C"] and r.hands[0]["doubled"]
    assert nets(r)[("ann", 1, 0, "hand")] == D(20)


def test_10_1_double_on_the_first_two_cards_of_a_split_pair() -> None:
    table, flags = bj(
        "bet 1 ann 10",
        "nmb",
        "card 5S",
        "card 7D",
        "card 5H",
        "split 1",
        "card 6C",
        "double 1 ann 10",
        "card 9C",
        "card 4D",
        "stand 1",
        "card KD",
    )
    assert flags == []
    assert [h["cards"] for h in last_round(table).hands] == [["5S", "6C", "9C"], ["5H", "4D"]]


@pytest.mark.parametrize(
    ("pair", "allowed"),
    [
        (["AS", "AD"], True),
        (["JS", "JD"], True),
        (["QS", "QD"], True),
        (["KS", "KD"], True),
        (["TS", "TD"], True),
        (["5S", "5D"], True),
        (["JS", "QD"], False),
        (["KS", "TD"], False),
        (["5S", "6D"], False),
    ],
)
def test_11_1_which_pairs_split(pair: list[str], allowed: bool) -> None:
    _, flags = bj("bet 1 ann 10", "nmb", f"card {pair[0]}", "card 7D", f"card {pair[1]}", "split 1")
    assert rules_of(flags) == ([] if allowed else ["11.1"])


def test_11_3_first_hand_completed_first_and_11_4_a_second_split_up_to_the_limit() -> None:
    table, flags = bj(
        "bet 1 ann 10",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "split 1",
        "card 8C",
        "split 1",
        "card 8D",
        "split 1",
        "stand 1",
        "card 2S",
        "stand 1",
        "card 3S",
        "stand 1",
        "card KD",
    )
    assert rules_of(flags) == ["11.4"]
    assert [h["cards"] for h in last_round(table).hands] == [
        ["8S", "8D"],
        ["8C", "2S"],
        ["8H", "3S"],
    ]


@pytest.mark.parametrize(
    ("second", "allowed"),
    [("JH", True), ("QH", False), ("TH", False)],
)
def test_11_4_a_a_second_split_is_flagged_11_4_not_11_1(second: str, allowed: bool) -> None:
    # J-J split; the first split hand's second card: J (J-J may split again, 11.4(a)(i)), Q (a
    # jack and a queen may not) or T (a ten is no picture card: not the same as a jack).
    steps = ("bet 1 ann 10", "nmb", "card JS", "card 7D", "card JC", "split 1")
    _, flags = bj(*steps, f"card {second}", "split 1")
    assert rules_of(flags) == ([] if allowed else ["11.4"])


def test_blackjack_pays_3_to_2_beats_a_three_card_21_and_pushes_a_dealer_blackjack() -> None:
    table, _ = bj(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card AS",
        "card 9S",
        "card 5D",
        "card KS",
        "card 2S",
        "stand 2",
        "card 6C",
        "card KH",
    )
    r = last_round(table)
    assert r.dealer_total == 21 and len(r.dealer) == 3
    assert nets(r) == {("ann", 1, 0, "hand"): D(15), ("ben", 2, 0, "hand"): D(-10)}
    table, _ = bj(
        "bet 1 ann 10", "nmb", "card AS", "card AD", "card KS", "offer_insurance", "card QD"
    )
    assert outcomes(last_round(table)) == ["push"]


def test_equal_totals_stand_off_21_included() -> None:
    table, _ = bj(
        "bet 1 ann 10", "nmb", "card 9S", "card 5D", "card 5S", "card 7C", "card 6C", "card KH"
    )
    r = last_round(table)
    assert r.hands[0]["total"] == 21 and r.dealer_total == 21
    assert outcomes(r) == ["push"]


def test_a_dealer_blackjack_takes_doubles_and_splits() -> None:
    table, _ = bj(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 5S",
        "card 8S",
        "card AD",
        "card 6S",
        "card 8H",
        "offer_insurance",
        "double 1 ann 10",
        "card 9C",
        "split 2",
        "card 2C",
        "stand 2",
        "card 3C",
        "stand 2",
        "card JD",
    )
    r = last_round(table)
    assert nets(r) == {
        ("ann", 1, 0, "hand"): D(-20),
        ("ben", 2, 0, "hand"): D(-10),
        ("ben", 2, 1, "hand"): D(-10),
    }


def test_insurance_wins_on_any_ten_value_card() -> None:
    table, _ = bj(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card AD",
        "card 8S",
        "offer_insurance",
        "insurance 1 ann 5",
        "stand 1",
        "card TD",
    )
    assert nets(last_round(table))[("ann", 1, 0, "insurance")] == D(10)


def test_no_surrender_in_this_game() -> None:
    _, flags = bj(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 7D",
        "card 6S",
        "offer_surrender 1",
        "surrender 1",
        "stand 1",
    )
    assert rules_of(flags) == ["surrender", "surrender"]


# --- the generic rule set ---


def test_generic_peek_dealer_blackjack_ends_the_round_at_once() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 9S",
        "card AS",
        "card KD",
        "card 8S",
        "card KS",
        "card AH",
        game="blackjack",
    )
    r = last_round(table)
    assert flags == []
    assert r.dealer == ["KD", "AH"]
    assert nets(r) == {("ann", 1, 0, "hand"): D(-10), ("ben", 2, 0, "hand"): D(0)}


def test_generic_peek_with_an_ace_up_insurance_then_peek() -> None:
    table = new_table("blackjack")
    feed(table, "shuffle 6 300", "bet 1 ann 10", "nmb", "card 9S", "card AD", "card 8S", "card 7C")
    due = table.due().to_dict()
    assert "offer insurance" in due["prompts"]
    assert {"action": "peek"} in due["decisions"]
    assert feed(table, "offer_insurance", "insurance 1 ann 5", "peek") == []
    assert table.current_round is not None and table.current_round.phase == "play"
    feed(table, "stand 1", "card 2D")  # A 7 = soft 18; stands
    r = last_round(table)
    assert nets(r) == {("ann", 1, 0, "hand"): D(-10), ("ann", 1, 0, "insurance"): D(-5)}


def test_generic_double_any_two_and_surrender_setting() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 6D",
        "card 3S",
        "double 1 ann 10",
        "card 9C",
        "card KD",
        "card 2C",
        game="blackjack",
        rules={"hole_card": "none"},
    )
    assert rules_of(flags) == []
    assert last_round(table).hands[0]["doubled"]
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 6D",
        "card 7S",
        "card 8C",
        "surrender 1",
        game="blackjack",
        rules={"surrender": True},
    )
    r = last_round(table)
    assert flags == [] and nets(r)[("ann", 1, 0, "hand")] == D(-5)


def test_generic_split_to_four_hands() -> None:
    _, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 8S",
        "card 6D",
        "card 8H",
        "card 9C",
        "split 1",
        "card 8C",
        "split 1",
        "card 8D",
        "split 1",
        "card 8H",
        "split 1",
        game="blackjack",
    )
    assert rules_of(flags) == ["split"]


def test_generic_peek_a_decision_checks_the_hole_card_and_16_11_if_not_offered() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card AD",
        "card 8S",
        "card KC",
        "stand 1",
        game="blackjack",
    )
    r = last_round(table)
    assert rules_of(flags) == ["16.11", "turn"]  # the stand came after the round had ended
    assert r.dealer == ["AD", "KC"]
    assert nets(r) == {("ann", 1, 0, "hand"): D(-10)}
