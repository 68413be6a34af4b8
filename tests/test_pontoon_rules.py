"""pontoon-nz-2000: each rule of the rule book by its number.

Deal order in every scenario: box 1, box 2, ..., the dealer's first card, box 1, box 2, ...;
the dealer's second card comes after every box has played.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from engine_dsl import feed, last_round, nets, outcomes, rules_of, run

D = Decimal


def test_6_1_a_ten_is_a_foreign_card_removed_from_play() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card TS",
        "card 9S",
        "card 7D",
        "card 9C",
        "offer_surrender 1",
        "stand 1",
        "card KD",
    )
    assert rules_of(flags) == ["6.1"]
    assert table.removed == ["TS"]
    r = last_round(table)
    assert r.hands[0]["cards"] == ["9S", "9C"]
    assert r.dealer == ["7D", "KD"]


def test_deal_is_one_card_each_then_dealer_then_second_cards_no_hole_card() -> None:
    table, _ = run(
        "bet 1 ann 10", "bet 3 ben 10", "nmb", "card 2S", "card 3S", "card 4S", "card 5S", "card 6S"
    )
    due = table.due().to_dict()
    boxes = {b["box"]: b["hands"][0]["cards"] for b in due["boxes"]}
    assert boxes == {1: ["2S", "5S"], 3: ["3S", "6S"]}
    assert due["dealer"]["cards"] == ["4S"]  # the second dealer card waits for the boxes
    assert due["phase"] == "play"
    assert due["next_card"] == {"to": "box", "box": 1, "hand": 0}


def test_pontoon_is_ace_and_picture_and_needs_no_decision() -> None:
    table, flags = run("bet 1 ann 10", "nmb", "card AS", "card 7D", "card QH", "card 8C")
    r = last_round(table)  # the dealer's 15 needs no further card: pontoon wins regardless
    assert flags == []
    assert r.hands[0]["total"] == 21 and outcomes(r) == ["win"]
    assert nets(r)[("ann", 1, 0, "hand")] == D(15)


def test_dealer_draws_to_16_and_stands_on_17() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 6D",
        "card 9C",
        "offer_surrender 1",
        "stand 1",
        "card 5H",
        "card 4C",
        "card 2S",
    )
    r = last_round(table)
    assert r.dealer == ["6D", "5H", "4C", "2S"] and r.dealer_total == 17
    assert outcomes(r) == ["win"]


@pytest.mark.parametrize(
    ("hits_soft_17", "dealer", "net"),
    [
        (False, ["AS", "6D"], D(10)),  # stands on soft 17: 18 wins
        (True, ["AS", "6D", "2C"], D(-10)),  # hits soft 17 (a setting): 19 beats 18
    ],
)
def test_dealer_soft_17_is_a_setting(hits_soft_17: bool, dealer: list[str], net: Decimal) -> None:
    steps = [
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card AS",
        "card 9C",
        "offer_insurance",
        "offer_surrender 1",
        "stand 1",
        "card 6D",
        *(["card 2C"] if hits_soft_17 else []),
    ]
    table, flags = run(*steps, rules={"dealer_hits_soft_17": hits_soft_17})
    r = last_round(table)
    assert flags == []
    assert r.dealer == dealer
    assert nets(r)[("ann", 1, 0, "hand")] == net


def test_dealer_second_card_always_drawn_but_no_more_when_nothing_depends_on_it() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 5D",
        "card 7C",
        "offer_surrender 1",
        "card KH",
        "card 8H",
        "card 3C",
    )
    r = last_round(table)
    assert r.dealer == ["5D", "8H"]  # 13, but every hand is bust
    assert outcomes(r) == ["lose"]
    assert rules_of(flags) == ["16.3"]  # the 3C came when no one was due a card


def test_5_1_f_a_bust_player_loses_even_when_the_dealer_busts() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 9S",
        "card 9H",
        "card 6D",
        "card 5C",
        "card 8C",
        "offer_surrender 1",
        "card KH",
        "offer_surrender 2",
        "stand 2",
        "card 8D",
        "card KS",
    )
    r = last_round(table)
    assert r.dealer_total == 24
    assert nets(r) == {("ann", 1, 0, "hand"): D(-10), ("ben", 2, 0, "hand"): D(10)}


def test_5_1_d_player_21_beats_dealer_21() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 9S",
        "card 9H",
        "card 5D",
        "card 5H",
        "card 9C",
        "offer_surrender 1",
        "card 7C",
        "offer_surrender 2",
        "stand 2",
        "card 6C",
        "card KD",
    )
    r = last_round(table)
    assert r.dealer_total == 21 and r.hands[0]["total"] == 21
    assert nets(r) == {("ann", 1, 0, "hand"): D(10), ("ben", 2, 0, "hand"): D(-10)}


def test_a_21_does_not_wait_on_the_dealer() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 5D",
        "card 5H",
        "offer_surrender 1",
        "card 7C",
        "card 6C",
        "card KD",
    )
    r = last_round(table)
    assert r.dealer == ["5D", "6C"]  # the second card is always drawn; no more was needed
    assert rules_of(flags) == ["16.3"]


def test_5_1_player_21_loses_to_dealer_pontoon_unless_the_setting_says_otherwise() -> None:
    steps = (
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card AD",
        "card 5H",
        "offer_insurance",
        "offer_surrender 1",
        "card 7C",
        "card KD",
    )
    table, _ = run(*steps)
    assert nets(last_round(table))[("ann", 1, 0, "hand")] == D(-10)
    table, _ = run(*steps, rules={"player_21_beats_dealer_pontoon": True})
    assert nets(last_round(table))[("ann", 1, 0, "hand")] == D(10)


def test_5_1_c_player_pontoon_beats_dealer_pontoon() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card AS",
        "card 9H",
        "card AD",
        "card KS",
        "card 9C",
        "offer_insurance",
        "offer_surrender 2",
        "stand 2",
        "card QD",
    )
    r = last_round(table)
    assert r.dealer == ["AD", "QD"]
    assert nets(r) == {("ann", 1, 0, "hand"): D(15), ("ben", 2, 0, "hand"): D(-10)}


def test_5_1_e_equal_totals_stand_off_and_g_dealer_higher_wins() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 9S",
        "card 9H",
        "card 8D",
        "card 8S",
        "card 9C",
        "offer_surrender 1",
        "stand 1",
        "offer_surrender 2",
        "stand 2",
        "card JD",
    )
    r = last_round(table)
    assert r.dealer_total == 18
    assert outcomes(r) == ["lose", "push"]


# 11.1: the hand is built with hits against a dealer 5 or 6 that ends below it.
@pytest.mark.parametrize(
    ("first", "hits", "net"),
    [
        (["2S", "3H"], ["4C", "5D", "7H"], D(15)),  # 5 cards totalling 21: 3:2
        (["2S", "3H"], ["2C", "3D", "4C", "7D"], D(20)),  # 6 cards: 2:1
        (["AS", "2H"], ["2C", "3D", "4C", "2D", "7H"], D(30)),  # 7 cards: 3:1
        (["6S", "7H"], ["8C"], D(15)),  # 6-7-8 mixed suits: 3:2
        (["6H", "7H"], ["8H"], D(20)),  # 6-7-8 same suit: 2:1
        (["6S", "7S"], ["8S"], D(30)),  # 6-7-8 spades: 3:1
        (["7S", "7H"], ["7D"], D(15)),  # 7-7-7 mixed: 3:2
        (["7H", "7H"], ["7H"], D(20)),  # 7-7-7 same suit: 2:1 (no Super Bonus: dealer not a 7)
        (["7S", "7S"], ["7S"], D(30)),  # 7-7-7 spades: 3:1
        (["9S", "3H"], ["8C", "stand"], D(10)),  # any other winning hand: 1:1
    ],
)
def test_11_1_payout_odds(first: list[str], hits: list[str], net: Decimal) -> None:
    steps = [
        "bet 1 ann 10",
        "nmb",
        f"card {first[0]}",
        "card 5D",
        f"card {first[1]}",
        "offer_surrender 1",
        *["stand 1" if c == "stand" else f"card {c}" for c in hits],
    ]
    dealer = ["5D", "KC"] if hits[-1] != "stand" else ["5D", "KC", "3C"]
    table, flags = run(*steps, *[f"card {c}" for c in dealer[1:]])
    r = last_round(table)
    assert flags == []
    assert r.dealer == dealer
    assert nets(r)[("ann", 1, 0, "hand")] == net


def test_12_5_doubled_wager_gets_1_to_1_and_12_6_back_bettor_who_did_not_double_gets_odds() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 2S",
        "card 6D",
        "card 3H",
        "offer_surrender 1",
        "card 4C",
        "card 5D",
        "double 1 ann 10",
        "card 7H",
        "card KC",
    )
    r = last_round(table)
    assert flags == []
    assert r.hands[0]["total"] == 21 and len(r.hands[0]["cards"]) == 5
    assert nets(r) == {("ann", 1, 0, "hand"): D(20), ("bob", 1, 0, "hand"): D(15)}


@pytest.mark.parametrize(("wager", "bonus"), [(10, D(1000)), (24, D(1000)), (25, D(5000))])
def test_11_2_super_bonus_by_wager_size(wager: int, bonus: Decimal) -> None:
    table, _ = run(
        f"bet 1 ann {wager}",
        "nmb",
        "card 7H",
        "card 7S",
        "card 7H",
        "offer_surrender 1",
        "card 7H",
        "card 9D",
    )
    n = nets(last_round(table))
    assert n[("ann", 1, 0, "super_bonus")] == bonus
    assert n[("ann", 1, 0, "hand")] == D(wager) * 2  # 11.4: in addition to the 2:1 odds


def test_11_2_super_bonus_needs_the_dealers_first_card_a_seven() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "nmb",
        "card 7H",
        "card 8S",
        "card 7H",
        "offer_surrender 1",
        "card 7H",
        "card 9D",
    )
    assert ("ann", 1, 0, "super_bonus") not in nets(last_round(table))


def test_12_5_no_super_bonus_on_a_doubled_wager_but_12_6_for_the_back_bettor_and_11_3() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "bet 2 cat 10",
        "bet 3 dan 10",
        "nmb",
        "card 7H",
        "card 9C",
        "card 5C",
        "card 7S",
        "card 7H",
        "card 8C",
        "card 5S",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 7H",
        "offer_surrender 2",
        "card 8D",  # box 2 busts: 25
        "offer_surrender 3",
        "surrender 3",
        "card 9D",
    )
    n = nets(last_round(table))
    assert n[("ann", 1, 0, "hand")] == D(20)  # doubled: 1:1, no Super Bonus
    assert ("ann", 1, 0, "super_bonus") not in n
    assert n[("bob", 1, 0, "hand")] == D(20)  # did not double: 2:1 odds ...
    assert n[("bob", 1, 0, "super_bonus")] == D(1000)  # ... and the Super Bonus
    # 11.3: every other wager, winning, losing or forfeited, gets $50; the winner does not.
    assert n[("ann", 1, 0, "bonus_50")] == D(50)
    assert n[("cat", 2, 0, "bonus_50")] == D(50)  # lost
    assert n[("dan", 3, 0, "bonus_50")] == D(50)  # surrendered
    assert n[("dan", 3, 0, "hand")] == D(-5)
    assert ("bob", 1, 0, "bonus_50") not in n


def test_11_3_one_bonus_per_player_per_box() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 7H",
        "card 8S",
        "card 7C",
        "card 7H",
        "card 8C",
        "offer_surrender 1",
        "card 7H",
        "offer_surrender 2",
        "split 2",
        "card 9H",
        "stand 2",
        "card 9S",
        "stand 2",
        "card KD",
    )
    r = last_round(table)
    rows = [s for s in r.settlements if s.kind == "bonus_50"]
    assert [(s.player, s.box, s.hand) for s in rows] == [("ben", 2, 0)]


# --- insurance (10) ---


def _ace_up(*after: str) -> tuple[str, ...]:
    return (
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 9S",
        "card 5H",
        "card AD",
        "card 8S",
        "card 6H",
        *after,
    )


def test_10_1_insurance_wins_2_to_1_on_a_picture_and_10_5() -> None:
    table, flags = run(
        *_ace_up(
            "offer_insurance",
            "insurance 1 ann 5",
            "offer_surrender 1",
            "stand 1",
            "offer_surrender 2",
            "stand 2",
            "card KD",
        )
    )
    n = nets(last_round(table))
    assert flags == []
    assert n[("ann", 1, 0, "insurance")] == D(10)
    assert n[("ann", 1, 0, "hand")] == D(-10)


def test_10_1_insurance_loses_on_an_ace_or_2_to_9() -> None:
    table, _ = run(
        *_ace_up(
            "offer_insurance",
            "insurance 1 ann 5",
            "offer_surrender 1",
            "stand 1",
            "offer_surrender 2",
            "stand 2",
            "card 9D",
        )
    )
    n = nets(last_round(table))
    assert n[("ann", 1, 0, "insurance")] == D(-5)


def test_10_2_no_insurance_on_pontoon() -> None:
    _table, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card AS",
        "card 9H",
        "card AD",
        "card KS",
        "card 8H",
        "offer_insurance",
        "insurance 1 ann 5",
    )
    assert rules_of(flags) == ["10.2"]


def test_10_4_insurance_at_most_half_the_wager() -> None:
    _, flags = run(*_ace_up("offer_insurance", "insurance 1 ann 6", "insurance 2 ben 5"))
    assert rules_of(flags) == ["10.4"]


def test_10_3_insurance_after_play_has_begun_is_refused() -> None:
    _, flags = run(*_ace_up("offer_insurance", "offer_surrender 1", "card 2C", "insurance 2 ben 5"))
    assert rules_of(flags) == ["10.3"]


def test_10_3_insurance_before_the_initial_deal_is_complete_is_refused() -> None:
    _, flags = run("bet 1 ann 10", "nmb", "card 9S", "card AD", "insurance 1 ann 5")
    assert rules_of(flags) == ["10.3"]


def test_10_7_a_void_hand_voids_its_insurance() -> None:
    table, flags = run(
        *_ace_up(
            "offer_insurance",
            "insurance 1 ann 5",
            "void 1",
            "offer_surrender 2",
            "stand 2",
            "card KD",
        )
    )
    n = nets(last_round(table))
    assert rules_of(flags) == ["16.5"]
    assert n[("ann", 1, 0, "insurance")] == 0 and n[("ann", 1, 0, "hand")] == 0
    assert outcomes(last_round(table)) == ["void", "lose"]


def test_16_11_insurance_not_offered_may_still_be_taken_until_the_dealers_second_card() -> None:
    table, flags = run(
        *_ace_up(
            "offer_surrender 1",
            "card 2C",
            "insurance 1 ann 5",
            "stand 1",
            "offer_surrender 2",
            "stand 2",
            "insurance 2 ben 5",
            "card KD",
            "insurance 2 ben 5",
        )
    )
    assert rules_of(flags) == ["16.11", "10.3"]
    assert nets(last_round(table))[("ann", 1, 0, "insurance")] == D(10)
    assert nets(last_round(table))[("ben", 2, 0, "insurance")] == D(10)


# --- surrender (9) ---


def test_9_5_surrender_forfeits_half_and_9_6_binds_every_wager_on_the_box() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 20",
        "nmb",
        "card 9S",
        "card 6H",
        "card 7S",
        "offer_surrender 1",
        "surrender 1",
        "card 8D",
    )
    r = last_round(table)
    assert flags == []
    assert outcomes(r) == ["surrender"]
    assert nets(r) == {("ann", 1, 0, "hand"): D(-5), ("bob", 1, 0, "hand"): D(-10)}


def test_9_5_surrender_loses_the_whole_wager_to_a_dealer_pontoon() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card AH",
        "card 7S",
        "offer_insurance",
        "offer_surrender 1",
        "surrender 1",
        "card KD",
    )
    assert nets(last_round(table))[("ann", 1, 0, "hand")] == D(-10)


def test_surrender_not_on_pontoon_nor_after_drawing() -> None:
    _, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card AS",
        "card 2H",
        "card 6H",
        "card KS",
        "card 3C",
        "surrender 1",
        "offer_surrender 2",
        "card 4D",
        "surrender 2",
    )
    assert rules_of(flags) == ["9", "9"]


def test_16_12_surrender_not_offered_is_flagged_at_the_first_decision_and_still_open() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 9S",
        "card 9H",
        "card 6H",
        "card 7S",
        "card 8C",
        "stand 1",
        "offer_surrender 2",
        "stand 2",
        "surrender 1",
        "card KD",
        "card 5C",
    )
    assert rules_of(flags) == ["16.12"]
    assert flags[0].box == 1
    assert outcomes(last_round(table)) == ["surrender", "lose"]


def test_16_12_window_closes_at_the_dealers_second_card() -> None:
    _, flags = run(
        "bet 1 ann 10", "nmb", "card 9S", "card 6H", "card 7S", "stand 1", "card 5D", "surrender 1"
    )
    assert rules_of(flags) == ["16.12", "9"]


def test_16_12_a_late_surrender_after_a_split_undoes_the_split() -> None:
    # 8-8 against a 9, surrender not offered; the controller splits (16.12 flagged: the box
    # could have surrendered) and bob follows the split. Before the first split hand's next
    # card, the controller surrenders: the split is undone (bob's matching wager goes back),
    # and 9.5 (9.6: for every wager on the box) forfeits half of each original wager.
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 8S",
        "card 9D",
        "card 8H",
        "split 1",
        "split 1 bob",
    )
    assert rules_of(flags) == ["16.12"]
    assert ("surrender", 1, "ann") in {
        (d["action"], d.get("box"), d.get("player")) for d in table.due().decisions
    }
    flags = feed(table, "surrender 1", "card 5C")
    assert flags == []
    r = last_round(table)
    assert r.dealer == ["9D", "5C"]  # nothing depends on the dealer: his second card only
    assert r.hands == [
        {
            "box": 1,
            "hand": 0,
            "cards": ["8S", "8H"],
            "total": 16,
            "doubled": False,
            "outcome": "surrender",
        }
    ]
    assert [(s.player, s.staked, s.returned) for s in r.settlements] == [
        ("ann", D(10), D(5)),
        ("bob", D(10), D(5)),
    ]


def test_16_12_after_a_split_the_window_closes_at_the_boxs_next_card() -> None:
    table, flags = run(
        "bet 1 ann 10", "nmb", "card 8S", "card 9D", "card 8H", "split 1", "card 3C", "surrender 1"
    )
    assert rules_of(flags) == ["16.12", "9"]
    assert [h.cards for h in table.current_round.boxes[1].hands] == [["8S", "3C"], ["8H"]]  # type: ignore[union-attr]


def test_16_12_no_late_surrender_after_a_split_that_declined_an_offer() -> None:
    _, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 8S",
        "card 9D",
        "card 8H",
        "offer_surrender 1",
        "split 1",
        "surrender 1",
    )
    assert rules_of(flags) == ["9"]


def test_16_12_no_offer_needed_where_no_decision_is() -> None:
    _, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card AS",
        "card 9H",
        "card 6H",
        "card KS",
        "card 8C",
        "absent 2",
        "card 9D",
    )
    assert rules_of(flags) == ["16.6"]


# --- doubling down (12) ---


def test_12_1_double_after_a_third_card_under_21() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 2S",
        "card 9D",
        "card 3S",
        "offer_surrender 1",
        "card 4D",
        "double 1 ann 10",
        "card 9C",
        "card 8D",
    )
    r = last_round(table)
    assert flags == []
    assert r.hands[0] == {
        "box": 1,
        "hand": 0,
        "cards": ["2S", "3S", "4D", "9C"],
        "total": 18,
        "doubled": True,
        "outcome": "win",
    }


def test_12_1_no_double_on_split_aces() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card AS",
        "card 9D",
        "card AC",
        "offer_surrender 1",
        "split 1",
        "card 5C",
        "double 1 ann 10",
        "card 6C",
        "card 8D",
    )
    assert rules_of(flags) == ["12.1"]
    assert [h["cards"] for h in last_round(table).hands] == [["AS", "5C"], ["AC", "6C"]]


def test_12_2_an_initial_ace_counts_one_once_doubled() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "nmb",
        "card AS",
        "card 6D",
        "card 5D",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 5C",
        "card KC",
        "card 9H",
    )
    r = last_round(table)
    assert r.hands[0]["total"] == 11  # not a soft 21
    assert r.dealer == ["6D", "KC", "9H"]  # the 11 still depended on the dealer: drew to 25
    assert nets(r)[("ann", 1, 0, "hand")] == D(20)


@pytest.mark.parametrize("amount", ["15", "0.50"])
def test_12_3_double_at_most_the_original_and_at_least_the_increment(amount: str) -> None:
    _, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 5S",
        "card 9D",
        "card 6S",
        "offer_surrender 1",
        f"double 1 ann {amount}",
    )
    assert rules_of(flags) == ["12.3"]


def test_12_3_a_smaller_double_is_allowed() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 5S",
        "card 9D",
        "card 6S",
        "offer_surrender 1",
        "double 1 ann 4",
        "card 9C",
        "card 8D",
    )
    assert flags == []
    assert nets(last_round(table))[("ann", 1, 0, "hand")] == D(14)


def test_12_4_exactly_one_card_no_redouble() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 5S",
        "card 9H",
        "card 9D",
        "card 6S",
        "card 8H",
        "offer_surrender 1",
        "double 1 ann 10",
        "double 1 ann 10",
        "card 2C",
        "offer_surrender 2",
        "card 3C",
        "stand 2",
        "card 8D",
    )
    assert rules_of(flags) == ["12.4"]
    r = last_round(table)
    assert r.hands[0]["cards"] == ["5S", "6S", "2C"]  # 13 and done
    assert r.hands[1]["cards"] == ["9H", "8H", "3C"]


def test_12_7_dealer_pontoon_takes_only_the_original_wager() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 5H",
        "card AD",
        "card 6D",
        "offer_insurance",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 9S",
        "card KC",
    )
    n = nets(last_round(table))
    assert n == {("ann", 1, 0, "hand"): D(-10), ("bob", 1, 0, "hand"): D(-10)}
    staked = {s.player: s.staked for s in last_round(table).settlements}
    assert staked == {"ann": D(20), "bob": D(10)}


def test_12_8_rescue_each_player_decides_for_their_own_wager() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 5H",
        "card 9D",
        "card 6D",
        "offer_surrender 1",
        "double 1 ann 10",
        "double 1 bob 10",
        "card 3C",
        "rescue 1 bob",
        "card KC",
    )
    n = nets(last_round(table))
    assert flags == []
    assert n == {("ann", 1, 0, "hand"): D(-20), ("bob", 1, 0, "hand"): D(-10)}


def test_12_8_no_rescue_after_a_further_card_or_without_a_double_or_on_a_bust() -> None:
    _, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "bet 2 cat 10",
        "nmb",
        "card 5H",
        "card 9C",
        "card 9D",
        "card 6D",
        "card 2C",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 3C",
        "rescue 1 bob",
        "offer_surrender 2",
        "card 6S",
        "rescue 1 ann",
        "double 2 cat 5",
        "card KS",
        "rescue 2 cat",
    )
    assert rules_of(flags) == ["12.8", "12.8", "12.8"]


# --- splitting pairs (13) ---


def test_13_1_any_two_ten_value_cards_are_a_pair_in_pontoon() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card JS",
        "card 8D",
        "card QH",
        "offer_surrender 1",
        "split 1",
        "card 9C",
        "stand 1",
        "card 8C",
        "stand 1",
        "card 9H",
    )
    r = last_round(table)
    assert flags == []
    assert [h["cards"] for h in r.hands] == [["JS", "9C"], ["QH", "8C"]]
    assert nets(r) == {("ann", 1, 0, "hand"): D(10), ("ann", 1, 1, "hand"): D(10)}


def test_13_1_a_non_pair_may_not_split() -> None:
    _, flags = run(
        "bet 1 ann 10", "nmb", "card 9S", "card 8D", "card 8H", "offer_surrender 1", "split 1"
    )
    assert rules_of(flags) == ["13.1"]


def test_13_2_13_3_new_hand_carries_an_equal_wager_first_hand_played_out_first() -> None:
    table, _ = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 8S",
        "card 9H",
        "card 7D",
        "card 8H",
        "card 9C",
        "offer_surrender 1",
        "split 1",
        "card 3C",
        "card 5D",
        "card 2D",
        "stand 1",
        "card KS",
        "stand 1",
        "offer_surrender 2",
        "stand 2",
        "card QD",
    )
    r = last_round(table)
    assert [(h["box"], h["hand"], h["cards"]) for h in r.hands] == [
        (1, 0, ["8S", "3C", "5D", "2D"]),
        (1, 1, ["8H", "KS"]),
        (2, 0, ["9H", "9C"]),
    ]
    assert [s.staked for s in r.settlements if s.player == "ann"] == [D(10), D(10)]


def test_13_4_a_resplit_up_to_three_hands_a_fourth_is_refused() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "offer_surrender 1",
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
    r = last_round(table)
    assert rules_of(flags) == ["13.4"]
    # a hand split again puts its new hand right after itself
    assert [h["cards"] for h in r.hands] == [["8S", "8D"], ["8C", "2S"], ["8H", "3S"]]


def test_13_4_a_a_split_hand_splits_again_only_on_a_pair_flagged_13_4_not_13_1() -> None:
    # 13.4(a): a split hand may split again if its card from the original hand and the next
    # card dealt to it are of the same value; 8 and 9 are not, and that refusal is 13.4's.
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "offer_surrender 1",
        "split 1",
        "card 9C",
        "split 1",
    )
    assert rules_of(flags) == ["13.4"]
    assert "not a pair" in flags[0].message
    assert len(table.current_round.boxes[1].hands) == 2  # type: ignore[union-attr]


def test_13_4_b_aces_split_once_one_card_each_and_13_4_c_no_pontoon() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card AS",
        "card 9D",
        "card AH",
        "offer_surrender 1",
        "split 1",
        "card AC",
        "split 1",
        "card KC",
        "card 8D",
    )
    r = last_round(table)
    assert rules_of(flags) == ["13.4"]
    assert [h["cards"] for h in r.hands] == [["AS", "AC"], ["AH", "KC"]]
    n = nets(r)
    assert n[("ann", 1, 1, "hand")] == D(10)  # a 21, paid 1:1: not a pontoon
    assert n[("ann", 1, 0, "hand")] == D(-10)  # soft 12 against 17


# --- box control (9.6, 12.6, 12.8, 15.3-15.6) ---


def test_15_3_back_bettors_double_and_split_only_in_line() -> None:
    _, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "offer_surrender 1",
        "double 1 bob 10",
        "split 1 bob",
    )
    assert rules_of(flags) == ["15.3", "15.3"]


def test_15_3_a_back_bettor_who_does_not_follow_a_split_stays_on_the_first_hand() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "bet 1 cy 20",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "offer_surrender 1",
        "split 1",
        "split 1 cy",
        "card 2C",
        "stand 1",
        "card KS",
        "stand 1",
        "card QD",
    )
    r = last_round(table)
    assert flags == []
    rows = [(s.player, s.hand, s.staked, s.net) for s in r.settlements]
    assert rows == [
        ("ann", 0, D(10), D(-10)),
        ("ann", 1, D(10), D(10)),
        ("bob", 0, D(10), D(-10)),
        ("cy", 0, D(20), D(-20)),
        ("cy", 1, D(20), D(20)),
    ]


def test_controls_marks_who_decides_for_the_box() -> None:
    _, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10 controls",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "offer_surrender 1",
        "double 1 ann 10",
    )
    assert rules_of(flags) == ["15.3"]


def test_15_6_a_player_on_several_boxes_wagers_at_least_the_minimum_on_each() -> None:
    table, flags = run("bet 1 ann 10", "bet 2 ann 4", "bet 3 ann 2000")
    assert rules_of(flags) == ["limits", "limits"]
    assert table.current_round is not None and list(table.current_round.boxes) == [1]


def test_a_bet_of_zero_withdraws_and_control_passes_on() -> None:
    _table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "bet 1 ann 0",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "offer_surrender 1",
        "double 1 bob 10",
    )
    assert flags == []


# --- wager handling (5.5) ---


def test_5_5_no_wager_after_no_more_bets_and_the_first_card() -> None:
    table, flags = run(
        "bet 1 ann 10", "nmb", "bet 2 ben 10", "card 9S", "bet 3 cy 10", "bet 1 ann 20"
    )
    assert rules_of(flags) == ["5.5", "5.5"]
    assert table.current_round is not None
    assert sorted(table.current_round.boxes) == [1, 2]
    assert table.current_round.boxes[1].bets == {"ann": D(10)}
