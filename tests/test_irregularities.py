"""Section 16 and the other flags: each raised at the moment RULES.md gives, play going on."""

from __future__ import annotations

from decimal import Decimal

import pytest
from engine_dsl import feed, last_round, nets, new_table, outcomes, rules_of, run

D = Decimal

# Two boxes dealt: box 1 9S 7S (16), box 2 9H 8C (17), dealer 6H.
DEALT = (
    "bet 1 ann 10",
    "bet 2 ben 10",
    "nmb",
    "card 9S",
    "card 9H",
    "card 6H",
    "card 7S",
    "card 8C",
)


def test_16_1_face_up_card_goes_to_the_discards_and_is_not_dealt() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 8S face_up",
        "card 9S",
        "card 7H",
        "card 7S",
        "offer_surrender 1",
        "card 2D",
        "stand 1",
        "card KD",
    )
    assert rules_of(flags) == ["16.1"]
    assert "8S" in table.discards
    assert last_round(table).hands[0]["cards"] == ["9S", "7S", "2D"]


def test_16_2_unexposed_error_card_is_used_as_the_next_card() -> None:
    table, flags = run(
        *DEALT,
        "offer_surrender 1",
        "card 3D unexposed",
        "stand 1",
        "offer_surrender 2",
        "stand 2",
        "card KD",
        "card 2C",
    )
    assert rules_of(flags) == ["16.2"]
    assert last_round(table).hands[0]["cards"] == ["9S", "7S", "3D"]


def test_16_3_a_card_after_the_dealers_hand_is_complete_changes_nothing() -> None:
    table, flags = run(
        *DEALT, "offer_surrender 1", "stand 1", "offer_surrender 2", "stand 2", "card AS", "card KD"
    )
    r = last_round(table)
    assert rules_of(flags) == ["16.3"]
    assert r.dealer == ["6H", "AS"]  # soft 17 stands
    assert outcomes(r) == ["lose", "push"]


def test_16_3_exposed_card_after_the_round_is_discarded_and_belongs_to_that_round() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 7H",
        "card KS",
        "offer_surrender 1",
        "stand 1",
        "card QD",
        "card 5C",
    )
    r = last_round(table)
    assert rules_of(flags) == ["16.3"]
    assert r.dealer == ["7H", "QD"]
    assert [f.rule for f in r.flags] == ["16.3"]
    assert nets(r)[("ann", 1, 0, "hand")] == D(10)
    assert table.discards[-1] == "5C"


def test_16_4_exposed_error_card_is_offered_in_turn_refused_by_all_goes_to_the_dealer() -> None:
    table, flags = run(
        *DEALT,
        "offer_surrender 1",
        "card 5C exposed",
        "refuse 1",
        "offer_surrender 2",
        "refuse 2",
        "card 2D",
        "card 5S",
    )
    r = last_round(table)
    assert rules_of(flags) == ["16.4"]
    assert flags[0].box == 1
    assert r.dealer == ["6H", "5C", "2D", "5S"]
    assert [h["cards"] for h in r.hands] == [["9S", "7S"], ["9H", "8C"]]


def test_16_4_a_player_may_take_the_exposed_card() -> None:
    table, flags = run(
        *DEALT,
        "offer_surrender 1",
        "card 4C exposed",
        "stand 1",
        "offer_surrender 2",
        "hit 2",
        "card KD",
        "card 2C",
    )
    r = last_round(table)
    assert rules_of(flags) == ["16.4"]
    assert [h["cards"] for h in r.hands] == [["9S", "7S"], ["9H", "8C", "4C"]]
    assert r.dealer == ["6H", "KD", "2C"]
    assert outcomes(r) == ["lose", "win"]


def test_16_4_the_player_who_refuses_gets_no_more_cards() -> None:
    table, _ = run(
        *DEALT,
        "offer_surrender 1",
        "card 5C exposed",
        "refuse 1",
        "offer_surrender 2",
        "card 2S",
        "card KS",
    )
    # box 2 took the 5C by drawing on (a card arrived): 9H 8C 5C = 22
    r = last_round(table)
    assert [h["cards"] for h in r.hands] == [["9S", "7S"], ["9H", "8C", "5C"]]
    assert r.dealer == ["6H", "2S", "KS"]


def test_16_5_void_the_round_returns_every_wager() -> None:
    table, flags = run(*DEALT, "void")
    r = last_round(table)
    assert rules_of(flags) == ["16.5"]
    assert r.status == "void"
    assert all(s.net == 0 and s.staked == D(10) for s in r.settlements)
    assert {"9S", "7S", "9H", "8C", "6H"} <= set(table.discards)


def test_16_5_void_one_box_later_hands_stand_as_dealt() -> None:
    table, flags = run(*DEALT, "void 1", "offer_surrender 2", "stand 2", "card KD", "card 2C")
    r = last_round(table)
    assert rules_of(flags) == ["16.5"]
    assert outcomes(r) == ["void", "lose"]
    assert nets(r) == {("ann", 1, 0, "hand"): D(0), ("ben", 2, 0, "hand"): D(-10)}


def test_16_6_absent_player_hand_drawn_to_12_or_more() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 2S",
        "card 9H",
        "card 7H",
        "card 3S",
        "card 8C",
        "absent 1",
        "card 4D",
        "card 5D",
        "offer_surrender 2",
        "stand 2",
        "card KD",
    )
    r = last_round(table)
    assert rules_of(flags) == ["16.6"]
    assert r.hands[0]["cards"] == ["2S", "3S", "4D", "5D"]  # 14: stops at 12 or more


def test_16_7_discards_reshuffled_mid_round_and_play_completes() -> None:
    table, flags = run(
        *DEALT,
        "offer_surrender 1",
        "stand 1",
        "reshuffle_discards 40",
        "offer_surrender 2",
        "stand 2",
        "card KD",
        "card 2C",
    )
    assert rules_of(flags) == ["16.7"]
    assert last_round(table).status == "settled"


def test_16_8_damaged_card_is_dealt_and_replaced_after_the_round() -> None:
    table, flags = run(*DEALT[:-1], "card 8C damaged")
    assert rules_of(flags) == ["16.8"]
    assert "replace the damaged 8C at the end of the round" in table.due().prompts


def test_16_9_cut_card_out_and_no_reshuffle() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 7H",
        "card KS",
        "offer_surrender 1",
        "stand 1",
        "cut_card",
        "card QD",
        "bet 1 ann 10",
        "nmb",
        "card 9C",
    )
    assert rules_of(flags) == ["16.9"]
    assert [f.rule for f in table.current_round.flags] == ["16.9"]  # type: ignore[union-attr]
    assert "shuffle after this round" in table.due().prompts


def test_cut_card_mid_round_prompts_a_shuffle_after_the_round_without_a_flag() -> None:
    table, flags = run("bet 1 ann 10", "nmb", "card 9S", "card 7H", "card KS", "cut_card")
    assert flags == []
    assert "shuffle after this round" in table.due().prompts
    feed(table, "offer_surrender 1", "stand 1", "card QD", "shuffle 6 200", "bet 1 ann 10", "nmb")
    assert rules_of(feed(table, "card 2C")) == []


def test_16_10_no_cutting_card_inserted() -> None:
    table, flags = run("shuffle 6 none", "bet 1 ann 10", "nmb", "card 9S", shuffle=False)
    assert rules_of(flags) == ["16.10"]
    assert "shuffle after this round" in table.due().prompts


def test_flag_attached_to_the_round_before_the_first_is_kept() -> None:
    table, flags = run("card 9S", "bet 1 ann 10", "nmb", "card 8S", shuffle=False)
    assert rules_of(flags) == ["shoe", "16.3"]
    assert table.current_round is not None
    assert [f.rule for f in table.current_round.flags] == ["shoe", "16.3"]


# --- flags beyond section 16 ---


def test_shoe_more_copies_than_its_decks_hold() -> None:
    table, flags = run(
        "bet 1 ann 10", "nmb", "card 9S", "card 9S", "card 9S", rules={"decks": 2}, shuffle=False
    )
    assert rules_of(flags) == ["shoe", "shoe"]  # no load on record; a third 9S in two decks
    assert table.removed == ["9S"]


def test_shoe_foreign_deck_and_a_card_read_twice() -> None:
    load = {"type": "shuffle", "decks": 2, "cut_card": 60, "deck_serials": ["AAAA1", "BBBB2"]}
    table = new_table(rules={"decks": 2})
    flags = feed(
        table,
        load,
        "bet 1 ann 10",
        "nmb",
        "card 9S deck=AAAA1",
        "card 9S deck=CCCC3",
        "card 8D deck=BBBB2",
        "card 9S deck=AAAA1",
        "card 9S deck=BBBB2",
    )
    assert rules_of(flags) == ["shoe", "shoe"]
    assert "CCCC3" in flags[0].message and "second time" in flags[1].message
    assert table.due().boxes[0]["hands"][0]["cards"] == ["9S", "9S"]


def test_shoe_misread_is_flagged_and_nothing_is_dealt() -> None:
    table, flags = run("bet 1 ann 10", "nmb", {"type": "misread", "raw": "K7Q2M9-7?"})
    assert rules_of(flags) == ["shoe"]
    assert table.due().phase == "closed"


def test_dealer_stopping_short_of_the_drawing_rule() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 6H",
        "card 9C",
        "offer_surrender 1",
        "stand 1",
        "card 8D",
        "bet 1 ann 10",
    )
    assert rules_of(flags) == ["dealer"]
    assert table.rounds[0].dealer == ["6H", "8D"]
    assert table.current_round is not None and table.current_round.number == 2


def test_5_2_and_5_5_from_the_chip_camera() -> None:
    _table, flags = run(
        "bet 1 ann 10",
        "bet 2 ben 10",
        {"type": "wager_seen", "box": 1, "amount": 10},
        {"type": "wager_seen", "box": 2, "amount": 0},
        {"type": "wager_seen", "box": 3, "amount": 25},
        "nmb",
        "card 9S",
        "card 9H",
        "card 6H",
        {"type": "wager_seen", "box": 1, "amount": 15},
        "card 7S",
        "card 8C",
        "offer_surrender 1",
        "stand 1",
        "offer_surrender 2",
        "stand 2",
        "card KD",
        "card 2C",
    )
    assert rules_of(flags) == ["5.2", "5.2", "5.5", "5.5", "5.5"]
    assert [f.box for f in flags] == [2, 3, 1, 1, 2]  # change; then settled against seen


@pytest.mark.parametrize(
    ("steps", "rule"),
    [
        (("bet 8 ann 10",), "limits"),
        (("bet 1 ann 1",), "limits"),
        (("bet 1 ann 1001",), "limits"),
        ((*DEALT, "stand 2"), "turn"),
        ((*DEALT, "split 1"), "13.1"),
        ((*DEALT, "refuse 1"), "16.4"),
        ((*DEALT, "offer_insurance"), "10.1"),
        ((*DEALT, "insurance 1 ann 5"), "10.1"),
    ],
)
def test_refused_events(steps: tuple[str, ...], rule: str) -> None:
    _, flags = run(*steps)
    assert rules_of(flags) == [rule]


REQUIRED = [
    "16.1",
    "16.2",
    "16.3",
    "16.4",
    "16.5",
    "16.6",
    "16.7",
    "16.8",
    "16.9",
    "16.10",
    "16.11",
    "16.12",
    "5.5",
    "6.1",
    "10.2",
    "10.3",
    "10.4",
    "12.1",
    "12.3",
    "13.1",
    "13.4",
    "15.3",
    "limits",
    "shoe",
    "dealer",
]


def test_every_flag_rules_md_lists_has_words_for_the_dealer_screen() -> None:
    table = new_table()
    for rule in REQUIRED:
        assert table.rules.words(rule), rule


def test_5_5_a_change_seen_between_no_more_bets_and_the_first_card() -> None:
    _, flags = run(
        "bet 1 ann 10",
        {"type": "wager_seen", "box": 1, "amount": 10},
        "nmb",
        {"type": "wager_seen", "box": 1, "amount": 5},
    )
    assert rules_of(flags) == ["5.5"]
