"""Section 16 and the other flags: each raised at the moment the rule book gives, play going on."""

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


def test_16_1_a_face_up_card_is_not_dealt_so_it_closes_no_window() -> None:
    # Insurance (10.3) is open "before any further cards are dealt", rescue (12.8) "before any
    # further cards are drawn": a card found face up in the shoe is neither, so both stay open.
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 5S",
        "card AD",
        "card 6H",
        "offer_insurance",
        "card 9C face_up",
        "insurance 1 ann 5",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 6C",
        "card 8C face_up",
        "rescue 1 ann",
        "card 7D",
    )
    assert rules_of(flags) == ["16.1", "16.1"]
    r = last_round(table)
    assert r.hands[0]["cards"] == ["5S", "6H", "6C"] and r.dealer == ["AD", "7D"]
    n = nets(r)
    assert n[("ann", 1, 0, "insurance")] == D(-5)  # taken, and lost to the 7
    assert n[("ann", 1, 0, "hand")] == D(-10)  # rescued: the original wager forfeit
    assert table.discards[:2] == ["9C", "8C"]


def test_16_1_then_16_11_at_the_first_card_dealt_not_at_the_face_up_card() -> None:
    # Insurance not offered: 16.11 is noticed at the first card drawn after the initial deal.
    # A card face up in the shoe is not drawn for anyone, so the flag waits for the next card.
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card AD",
        "card 5H",
        "offer_surrender 1",
        "card 8C face_up",
    )
    assert rules_of(flags) == ["16.1"]
    flags = feed(table, "card 2C")
    assert rules_of(flags) == ["16.11"]
    assert "insurance" in {d["action"] for d in table.due().decisions}  # still open (16.11)


def test_16_1_a_face_up_card_leaves_a_back_bettors_split_open() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 8S",
        "card 7D",
        "card 8H",
        "offer_surrender 1",
        "split 1",
        "card 2C face_up",
        "split 1 bob",
    )
    assert rules_of(flags) == ["16.1"]
    hands = table.hand(1, 1)
    assert [w.player for w in hands.wagers] == ["ann", "bob"]


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


def test_16_4_an_exposed_card_drawn_in_error_for_the_dealer_is_flagged_and_dealt_to_him() -> None:
    # 16.4 names "a player or the dealer": the dealer's second card, drawn in error and exposed,
    # is dealt to him as though it were the next card, and flagged at that card.
    table, flags = run(*DEALT, "offer_surrender 1", "stand 1", "offer_surrender 2", "stand 2")
    assert flags == []
    flags = feed(table, "card KD exposed")
    assert rules_of(flags) == ["16.4"]
    assert table.current_round is not None and table.current_round.dealer == ["6H", "KD"]
    flags = feed(table, "card 2C exposed")  # 16 draws: the third card, exposed in error too
    assert rules_of(flags) == ["16.4"]
    r = last_round(table)
    assert r.dealer == ["6H", "KD", "2C"] and r.dealer_total == 18
    assert nets(r) == {("ann", 1, 0, "hand"): D(-10), ("ben", 2, 0, "hand"): D(-10)}


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


# Box 1 9S 9C (18) stands; the dealer 6H 8D = 14 must draw (16.5 / "dealer").
DEALER_ON_14 = (
    "bet 1 ann 10",
    "nmb",
    "card 9S",
    "card 6H",
    "card 9C",
    "offer_surrender 1",
    "stand 1",
    "card 8D",
)


def test_dealer_a_round_with_the_dealers_hand_incomplete_is_not_settled() -> None:
    # The next round's bet arrives while the dealer, on 14, must still draw. The round is not
    # settled against a dealer short of 17: the bet is refused and flagged, the screen keeps
    # asking for the dealer's card, and the round settles when the dealer's hand is complete.
    table, flags = run(*DEALER_ON_14, "bet 1 ann 10", "bet 2 bob 25")
    assert rules_of(flags) == ["dealer", "dealer"]
    assert [f.box for f in flags] == [1, 2]
    assert table.rounds == []
    rnd = table.current_round
    assert rnd is not None and rnd.number == 1 and rnd.phase == "dealer"
    due = table.due()
    assert due.next_card == {"to": "dealer"}
    assert due.prompts[0] == "draw for the dealer (dealer has 14)"
    more = feed(table, "card 3C", "bet 1 ann 10")  # 17: the dealer stands; then the next bet
    assert more == []
    r = table.rounds[0]
    assert r.dealer == ["6H", "8D", "3C"] and r.status == "settled"
    assert nets(r) == {("ann", 1, 0, "hand"): D(10)}  # 18 beats 17
    assert rules_of(r.flags) == ["dealer", "dealer"]  # the refused bets stay on round 1
    assert table.current_round is not None and table.current_round.number == 2


def test_dealer_a_players_16_is_not_paid_against_a_dealer_stopped_on_14() -> None:
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 6H",
        "card 7C",
        "offer_surrender 1",
        "stand 1",
        "card 8D",
        "bet 1 ann 10",
        "card KC",  # the dealer's third card: 24
    )
    assert rules_of(flags) == ["dealer"]
    r = last_round(table)
    assert r.dealer_total == 24 and nets(r) == {("ann", 1, 0, "hand"): D(10)}


def test_16_5_a_supervisor_voids_a_round_whose_dealer_hand_cannot_be_completed() -> None:
    table, flags = run(*DEALER_ON_14, "bet 1 ann 10", "void", "bet 1 ann 10")
    assert rules_of(flags) == ["dealer", "16.5"]
    r = table.rounds[0]
    assert r.status == "void"
    assert nets(r) == {("ann", 1, 0, "hand"): D(0)}  # the wager returned
    assert table.current_round is not None and table.current_round.number == 2
    assert table.current_round.boxes[1].bets == {"ann": D(10)}


def test_16_5_voiding_the_last_box_due_a_card_of_the_initial_deal_ends_the_deal() -> None:
    # Boxes 1 and 2, no hole card: 1, 2, dealer, 1, then box 2's second card is due. Box 2 is
    # voided: the deal is over (box 1 has its two cards), and the next card is box 1's to play.
    table, flags = run(
        "bet 1 ann 10",
        "bet 2 bob 10",
        "nmb",
        "card 9S",
        "card 5H",
        "card 6D",
        "card 7S",
        "void 2",
    )
    assert rules_of(flags) == ["16.5"]
    due = table.due()
    assert due.phase == "play" and due.next_card == {"to": "box", "box": 1, "hand": 0}
    flags = feed(table, "offer_surrender 1", "card 2C", "stand 1", "card AC")  # 18; dealer 17
    assert flags == []
    r = last_round(table)
    assert [h["cards"] for h in r.hands] == [["9S", "7S", "2C"], ["5H"]]
    assert nets(r) == {("ann", 1, 0, "hand"): D(10), ("bob", 2, 0, "hand"): D(0)}


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


def test_16_1_and_16_8_a_card_found_face_up_and_damaged_raises_both() -> None:
    # RULES.md, when each is raised: "A card that carries two conditions (found face up and
    # damaged) raises both flags", at that card. Worked by hand: box 1 is dealt 9S 7S (16),
    # the dealer 5D; after the surrender offer the next card, 8S, is found face up in the shoe
    # and damaged: 16.1 (not dealt, to the discard rack) and 16.8 (replace it at the end of the
    # round), in that order. The hand is still 16; 4C, drawn next, is its card (20).
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 5D",
        "card 7S",
        "offer_surrender 1",
        "card 8S face_up damaged",
        "card 4C",
    )
    assert rules_of(flags) == ["16.1", "16.8"]
    assert "8S" in table.discards
    rnd = table.current_round
    assert rnd is not None and rnd.boxes[1].hands[0].cards == ["9S", "7S", "4C"]
    assert any("replace the damaged 8S" in p for p in table.due().prompts)


def test_16_1_and_16_8_between_rounds_the_card_is_replaced_before_the_next() -> None:
    _table, flags = run("card 8S face_up damaged")
    assert rules_of(flags) == ["16.1", "16.8"]
    assert "before the next round" in flags[1].message
