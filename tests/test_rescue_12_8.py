"""12.8 rescue, settled as the rule says in every case: only the doubled part comes back.

12.8: "the player may elect to withdraw the doubled portion of the wager, thus forfeiting
his/her original wager"; the rule book: "net loss = the original wager". Each case below is worked
by hand from the cards: a $10 wager doubled for $10 and rescued stakes 20 and gets 10 back,
net -10, whether the dealer then ties it, beats it, busts or makes pontoon.
"""

from __future__ import annotations

from decimal import Decimal

from engine_dsl import last_round, nets, outcomes, rules_of, run

D = Decimal


def _hand_row(table, player, hand=0):  # type: ignore[no-untyped-def]
    rows = [
        s
        for s in last_round(table).settlements
        if s.player == player and s.hand == hand and s.kind == "hand"
    ]
    assert len(rows) == 1
    return rows[0]


def test_12_8_a_rescued_hand_that_ties_the_dealer_loses_its_original_wager() -> None:
    # 6-5 against a dealer's ace; double 10; the double card 6 makes 17; rescue. The dealer's
    # second card 6 makes soft 17, which stands: 17 against 17.
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 6S",
        "card AD",
        "card 5H",
        "offer_insurance",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 6C",
        "rescue 1 ann",
        "card 6D",
    )
    assert flags == []
    r = last_round(table)
    assert r.dealer == ["AD", "6D"] and r.dealer_total == 17
    assert outcomes(r) == [
        "push"
    ]  # the hand against the dealer, by its total (docs/reference/events.md)
    row = _hand_row(table, "ann")
    assert (row.staked, row.returned, row.net) == (D(20), D(10), D(-10))


def test_12_8_the_dealer_stops_on_his_second_card_when_no_hand_depends_on_him() -> None:
    # 7-2 against a 9; double 10; the double card 5 makes 14; rescue. Nothing depends on the
    # dealer now, so he stops on his second card: 9-5 = 14, a tie the rescue does not share in.
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 7S",
        "card 9D",
        "card 2H",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 5C",
        "rescue 1 ann",
        "card 5D",
    )
    assert flags == []
    r = last_round(table)
    assert r.dealer == ["9D", "5D"] and r.status == "settled"
    assert nets(r) == {("ann", 1, 0, "hand"): D(-10)}


def test_12_8_two_rescued_boxes_against_a_higher_dealer() -> None:
    # Two boxes, both 5-6 against a 9, both doubled for 10 and rescued on 16 (double cards 5).
    # Nothing depends on the dealer after two rescues: he stops on his second card, 9-K = 19.
    # Each rescued hand loses its original wager only.
    table, flags = run(
        "bet 1 ann 10",
        "bet 2 bob 10",
        "nmb",
        "card 5S",
        "card 5H",
        "card 9D",
        "card 6C",
        "card 6D",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 5C",
        "rescue 1 ann",
        "offer_surrender 2",
        "double 2 bob 10",
        "card 5D",
        "rescue 2 bob",
        "card KD",
    )
    assert flags == []
    assert nets(last_round(table)) == {("ann", 1, 0, "hand"): D(-10), ("bob", 2, 0, "hand"): D(-10)}


def test_12_8_a_rescued_split_hand() -> None:
    # 8-8 against a 6, split. Hand 0: 8-3 doubled for 10, the double card 6 makes 17, rescued.
    # Hand 1: 8-9 = 17, stands. The dealer 6-K = 16 draws (hand 1 depends on him): A = 17.
    # Hand 0: 17 v 17, rescued: staked 20, back 10. Hand 1: 17 v 17 stands off: staked 10, back 10.
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 8S",
        "card 6D",
        "card 8H",
        "offer_surrender 1",
        "split 1",
        "card 3C",
        "double 1 ann 10",
        "card 6C",
        "rescue 1 ann",
        "card 9S",
        "stand 1",
        "card KD",
        "card AS",
    )
    assert flags == []
    r = last_round(table)
    assert r.dealer_total == 17
    assert outcomes(r) == ["push", "push"]
    assert nets(r) == {("ann", 1, 0, "hand"): D(-10), ("ann", 1, 1, "hand"): D(0)}
    row = _hand_row(table, "ann", 0)
    assert (row.staked, row.returned) == (D(20), D(10))


def test_12_8_a_back_bettor_rescues_on_his_own_and_the_controller_plays_on() -> None:
    # Box 1: ann (controller) 10, bob 10. 5-6 against a 7; ann doubles 10, bob doubles in line
    # 10; the double card 6 makes 17. Bob rescues, ann does not. The dealer 7-K = 17 stands.
    # ann: 17 v 17 stands off, staked 20 back 20. bob: rescued, staked 20 back 10.
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 5H",
        "card 7D",
        "card 6D",
        "offer_surrender 1",
        "double 1 ann 10",
        "double 1 bob 10",
        "card 6C",
        "rescue 1 bob",
        "card KC",
    )
    assert flags == []
    r = last_round(table)
    assert r.dealer_total == 17
    assert nets(r) == {("ann", 1, 0, "hand"): D(0), ("bob", 1, 0, "hand"): D(-10)}
    assert (_hand_row(table, "bob").staked, _hand_row(table, "bob").returned) == (D(20), D(10))


def test_12_8_a_back_bettor_rescues_and_the_dealer_busts() -> None:
    # As above, the dealer 7-5-K busts: ann's doubled 17 wins 1:1 on 20 (back 40); bob rescued:
    # back 10 only.
    table, flags = run(
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 5H",
        "card 7D",
        "card 6D",
        "offer_surrender 1",
        "double 1 ann 10",
        "double 1 bob 10",
        "card 6C",
        "rescue 1 bob",
        "card 5C",
        "card KH",
    )
    assert flags == []
    r = last_round(table)
    assert r.dealer_total == 22
    assert nets(r) == {("ann", 1, 0, "hand"): D(20), ("bob", 1, 0, "hand"): D(-10)}


def test_12_8_and_12_7_a_dealer_pontoon_does_not_change_a_rescue() -> None:
    # 5-6 against an ace; double 10 (at most the original, 12.3); the double card 5 makes 16;
    # rescue; the dealer's K makes pontoon. Rescued: the double (10) comes back, the original is
    # forfeit: net -10. (12.7 alone would give the same sum: the original lost, the double back.)
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 5S",
        "card AD",
        "card 6H",
        "offer_insurance",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 5C",
        "rescue 1 ann",
        "card KD",
    )
    assert flags == []
    r = last_round(table)
    assert r.dealer == ["AD", "KD"]
    row = _hand_row(table, "ann")
    assert (row.staked, row.returned, row.net) == (D(20), D(10), D(-10))


def test_12_8_a_smaller_double_rescued_returns_only_that_double() -> None:
    # 12.3: a double of 4 on a 10 wager; rescued and tied (9-8 v 17... the dealer 8-9 = 17):
    # staked 14, back 4, net -10: the original wager, whatever the size of the double.
    table, flags = run(
        "bet 1 ann 10",
        "nmb",
        "card 6S",
        "card 8D",
        "card 5H",
        "offer_surrender 1",
        "double 1 ann 4",
        "card 6C",
        "rescue 1 ann",
        "card 9D",
    )
    assert flags == []
    row = _hand_row(table, "ann")
    assert (row.staked, row.returned, row.net) == (D(14), D(4), D(-10))
    assert last_round(table).dealer_total == 17


def test_12_8_a_void_round_returns_a_rescued_wager_whole() -> None:
    # 16.5 comes before 12.8: a void hand's wagers are returned, the double and the original.
    table, flags = run(
        "bet 1 ann 10",
        "bet 2 bob 10",
        "nmb",
        "card 6S",
        "card 9H",
        "card 8D",
        "card 5H",
        "card 8C",
        "offer_surrender 1",
        "double 1 ann 10",
        "card 6C",
        "rescue 1 ann",
        "void",
    )
    assert rules_of(flags) == ["16.5"]
    assert nets(last_round(table))[("ann", 1, 0, "hand")] == D(0)
