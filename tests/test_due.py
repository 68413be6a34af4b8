"""What is due next: the dealer's screen shows exactly this after every event."""

from __future__ import annotations

from engine_dsl import feed, new_table


def actions(due: dict) -> set[tuple]:  # type: ignore[type-arg]
    return {(d["action"], d.get("box"), d.get("player")) for d in due["decisions"]}


def test_between_rounds_and_betting() -> None:
    table = new_table()
    assert table.due().to_dict()["prompts"][0].startswith("load a shoe")
    feed(table, "shuffle 6 200")
    assert table.due().to_dict()["prompts"] == ["place your bets"]
    feed(table, "bet 3 ann 10")
    due = table.due().to_dict()
    assert due["phase"] == "betting" and due["prompts"] == ["call no more bets"]
    feed(table, "nmb")
    assert table.due().to_dict()["next_card"] == {"to": "box", "box": 3, "hand": 0}


def test_initial_deal_says_who_gets_the_next_card() -> None:
    table = new_table()
    feed(table, "shuffle 6 200", "bet 1 ann 10", "bet 3 ben 10", "nmb", "card 9S", "card 9H")
    assert table.due().to_dict()["next_card"] == {"to": "dealer"}
    feed(table, "card AD")
    assert table.due().to_dict()["next_card"] == {"to": "box", "box": 1, "hand": 0}


def test_offer_insurance_then_surrender_then_the_decisions_of_the_box() -> None:
    table = new_table()
    feed(
        table,
        "shuffle 6 200",
        "bet 1 ann 10",
        "bet 1 bob 10",
        "bet 3 cy 10",
        "nmb",
        "card 9S",
        "card 8H",
        "card AD",
        "card 7S",
        "card 8C",
    )
    due = table.due().to_dict()
    assert due["prompts"][:2] == ["offer insurance", "offer surrender to box 1"]
    assert due["next_card"] == {"to": "box", "box": 1, "hand": 0}
    acts = actions(due)
    assert {("insurance", 1, "ann"), ("insurance", 1, "bob"), ("insurance", 3, "cy")} <= acts
    assert {
        ("stand", 1, "ann"),
        ("hit", 1, "ann"),
        ("double", 1, "ann"),
        ("surrender", 1, "ann"),
        ("absent", 1, None),
    } <= acts
    assert ("split", 1, "ann") not in acts
    assert not any(a[1] == 3 and a[0] != "insurance" for a in acts)
    feed(table, "offer_insurance", "offer_surrender 1", "stand 1")
    due = table.due().to_dict()
    assert "offer surrender to box 3" in due["prompts"]
    assert ("split", 3, "cy") in actions(due)  # 8H 8C


def test_back_bettors_follow_a_double_in_line_then_rescue_is_open_to_each() -> None:
    table = new_table()
    feed(
        table,
        "shuffle 6 200",
        "bet 1 ann 10",
        "bet 1 bob 10",
        "nmb",
        "card 5S",
        "card 9D",
        "card 6H",
        "offer_surrender 1",
        "double 1 ann 10",
    )
    due = table.due().to_dict()
    assert ("double", 1, "bob") in actions(due)
    assert "deal the double card to box 1, sideways" in due["prompts"]
    feed(table, "double 1 bob 5", "card 4C")
    assert {("rescue", 1, "ann"), ("rescue", 1, "bob")} <= actions(table.due().to_dict())


def test_draw_for_the_dealer_and_shuffle_after_this_round() -> None:
    table = new_table()
    feed(
        table,
        "shuffle 6 200",
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card 6D",
        "card 8S",
        "cut_card",
        "offer_surrender 1",
        "stand 1",
    )
    due = table.due().to_dict()
    assert due["prompts"][0] == "draw the dealer's second card"
    assert "shuffle after this round" in due["prompts"]
    feed(table, "card 5C")
    assert table.due().to_dict()["prompts"][0] == "draw for the dealer (dealer has 11)"
    feed(table, "card 7C")
    assert table.due().to_dict()["prompts"] == ["shuffle before the next round"]


def test_error_card_on_offer() -> None:
    table = new_table()
    feed(
        table,
        "shuffle 6 200",
        "bet 1 ann 10",
        "bet 2 ben 10",
        "nmb",
        "card 9S",
        "card 9H",
        "card 6H",
        "card 7S",
        "card 8C",
        "offer_surrender 1",
        "card 5C exposed",
    )
    due = table.due().to_dict()
    assert due["prompts"][-1] == "offer the exposed 5C to box 1: take it or refuse it"
    assert ("refuse", 1, "ann") in actions(due)  # the box's controller takes or refuses it
    assert due["next_card"] is None
    feed(table, "refuse 1")
    assert table.due().to_dict()["prompts"][-1].startswith("offer the exposed 5C to box 2")


def test_absent_box_is_drawn_for() -> None:
    table = new_table()
    feed(table, "shuffle 6 200", "bet 1 ann 10", "nmb", "card 2S", "card 6H", "card 3S", "absent 1")
    assert "draw for box 1 until 12 or more (absent)" in table.due().to_dict()["prompts"]


def test_no_insurance_to_offer_when_every_box_holds_pontoon() -> None:
    table = new_table()
    flags = feed(table, "shuffle 6 200", "bet 1 ann 10", "nmb", "card AS", "card AD", "card KS")
    due = table.due().to_dict()
    assert due["phase"] == "dealer" and "offer insurance" not in due["prompts"]
    flags += feed(table, "card 9C")
    assert flags == []  # nobody could insure: no 16.11


def test_insurance_still_prompted_when_play_ends_before_any_card() -> None:
    table = new_table()
    feed(
        table,
        "shuffle 6 200",
        "bet 1 ann 10",
        "nmb",
        "card 9S",
        "card AD",
        "card KS",
        "offer_surrender 1",
        "stand 1",
    )
    due = table.due().to_dict()
    assert due["prompts"][0] == "offer insurance"
    assert ("insurance", 1, "ann") in actions(due)
