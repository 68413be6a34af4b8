"""The chip tray, worked by hand: each figure below is computed on paper from the event
reference's formulas (docs/reference/events.md, "The chip tray"), not by the engine.

The rounds are one box of the generic blackjack, $10 or $25, dealt so the result is plain:
player 18 against the dealer's 17 wins the wager (house net -wager); player 16 against 17
loses it (house net +wager).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_dsl import feed, new_table

from controller.cli import main
from controller.engine import Table
from controller.events import ScenarioError, parse_event

OPENER = {"1000": 5, "100": 40, "25": 40}  # $10,000
CREW = ["runner-7", "super-2", "dealer-4"]


def house_wins(bet: int) -> list[str]:
    return [
        "shuffle 6 300",
        f"bet 1 ann {bet}",
        "nmb",
        "card 9S",
        "card 7H",
        "card 7C",
        "card KD",
        "stand 1",
    ]


def house_loses(bet: int) -> list[str]:
    return [
        "shuffle 6 300",
        f"bet 1 ann {bet}",
        "nmb",
        "card 9S",
        "card 7H",
        "card 9C",
        "card KD",
        "stand 1",
    ]


def count(kind: str, chips: dict[str, int], **more: Any) -> dict[str, Any]:
    return {
        "type": "tray_count",
        "kind": kind,
        "chips": chips,
        "by": ["dealer-4", "super-2"],
        **more,
    }


def slip(kind: str, number: Any, chips: dict[str, int], by: Any = CREW, **more: Any) -> dict:
    out = {"type": kind, "slip": number, "chips": chips, **more}
    if by is not None:
        out["by"] = by
    return out


def buy_in(amount: int, kind: str = "cash") -> dict[str, Any]:
    return {"type": "buy_in", "amount": amount, "kind": kind, "box": 1, "player": "ann"}


def drop(amount: int) -> dict[str, Any]:
    return {"type": "drop_count", "amount": amount, "by": ["count-1", "count-2"]}


def table() -> Table:
    return new_table("blackjack")


def tray_flags(flags: list) -> list:
    return [f for f in flags if f.rule in ("tray", "slip")]


# The clean day: opener $10,000; a $200 cash buy-in; the house wins $10; fill $2,000;
# the house loses $25. The check should find 10,000 + 2,000 + 10 - 25 - 200 = $11,785.
# A $1,000 credit; the closer should find $10,785. The drop: $200.
# Win = closer - opener + credits - fills + drop = 10,785 - 10,000 + 1,000 - 2,000 + 200 = -$15,
# which is the rounds' house net (+10 - 25).
CHECK_11785 = {"1000": 11, "100": 7, "25": 3, "5": 2}
CLOSER_10785 = {"1000": 10, "100": 7, "25": 3, "5": 2}


def clean_day(
    check: dict[str, int] = CHECK_11785, closer: dict[str, int] = CLOSER_10785, dropped: int = 200
) -> list:
    return [
        count("opener", OPENER),
        buy_in(200),
        *house_wins(10),
        slip("fill", 1001, {"1000": 2}),
        *house_loses(25),
        count("check", check),
        slip("credit", 1002, {"1000": 1}, by=["runner-7", "super-2"]),
        count("closer", closer),
        drop(dropped),
    ]


def test_a_clean_day_reconciles_at_every_count_and_its_win_is_the_house_net() -> None:
    t = table()
    flags = feed(t, *clean_day())
    assert tray_flags(flags) == []
    doc = t.result()["tray"]
    opener, check, closer = doc["counts"]
    assert (opener["counted"], opener["expected"]) == ("10000", None)
    assert (check["expected"], check["counted"], check["difference"]) == ("11785", "11785", "0")
    assert check["house_net"] == "-15" and check["rounds"] == [1, 2]
    assert (check["fills"], check["buy_ins"]) == ("2000", "200")
    assert (closer["expected"], closer["counted"], closer["difference"]) == ("10785", "10785", "0")
    assert closer["credits"] == "1000" and closer["rounds"] == []
    [day] = doc["days"]
    assert day["win"] == "-15" and day["house_net"] == "-15" and day["difference"] == "0"
    assert (day["fills"], day["credits"], day["drop"]) == ("2000", "1000", "200")
    assert day["buy_ins"] == {"cash": "200", "marker": "0"}
    assert [s["slip"] for s in doc["slips"]] == ["1001", "1002"]
    assert doc["drops"][0]["difference"] == "0"


def test_a_mispay_is_flagged_at_the_next_count_with_both_figures_and_the_difference() -> None:
    # The dealer paid $50 instead of $25 in round 2: the tray holds $25 less than it should.
    t = table()
    short_check = {"1000": 11, "100": 7, "25": 2, "5": 2}  # $11,760
    short_closer = {"1000": 10, "100": 7, "25": 2, "5": 2}  # $10,760
    flags = feed(t, *clean_day(short_check, short_closer))
    [flag] = tray_flags(flags)
    assert flag.rule == "tray" and flag.kind == "tray_count"
    assert "$11,760.00" in flag.message and "$11,785.00" in flag.message
    assert "$25.00 short" in flag.message and "rounds 1-2" in flag.message
    doc = t.result()["tray"]
    assert doc["counts"][1]["difference"] == "-25"
    assert doc["counts"][2]["difference"] == "0"  # the closer follows from the check
    [day] = doc["days"]
    # Win = 10,760 - 10,000 + 1,000 - 2,000 + 200 = -40; the house net says -15.
    assert (day["win"], day["house_net"], day["difference"]) == ("-40", "-15", "-25")


def test_chips_taken_after_the_check_are_found_by_the_closer_not_before() -> None:
    t = table()
    closer = {"1000": 10, "100": 6, "25": 3, "5": 2}  # $100 gone: $10,685
    steps = clean_day(closer=closer)
    flags = feed(t, *steps[:-2])
    assert tray_flags(flags) == []
    [flag] = tray_flags(feed(t, steps[-2]))
    assert flag.message.startswith("the closer count found $10,685.00")
    assert "$100.00 short" in flag.message


def test_a_buy_in_not_recorded_shows_at_the_count_and_at_the_drop() -> None:
    # A second $100 buy-in paid from the tray but never recorded: the check is $100 short and
    # the drop holds $300 against the $200 recorded.
    t = table()
    check = {"1000": 11, "100": 6, "25": 3, "5": 2}  # 11,685
    closer = {"1000": 10, "100": 6, "25": 3, "5": 2}  # 10,685
    flags = tray_flags(feed(t, *clean_day(check, closer, dropped=300)))
    assert [(f.rule, f.kind) for f in flags] == [("tray", "tray_count"), ("tray", "drop_count")]
    assert "$100.00 short" in flags[0].message
    assert "$300.00" in flags[1].message and "$200.00" in flags[1].message
    assert "$100.00 over" in flags[1].message
    [day] = t.result()["tray"]["days"]
    # Win = 10,685 - 10,000 + 1,000 - 2,000 + 300 = -15: the money balances; the records do not.
    assert (day["win"], day["difference"]) == ("-15", "0")


def test_markers_go_into_the_drop_like_cash() -> None:
    t = table()
    steps = [
        count("opener", {"100": 100}),
        buy_in(500, "marker"),
        buy_in(300),
        count("closer", {"100": 92}),
        drop(800),
    ]
    assert tray_flags(feed(t, *steps)) == []
    [day] = t.result()["tray"]["days"]
    assert day["buy_ins"] == {"cash": "300", "marker": "500"}
    assert day["win"] == "0"  # 9,200 - 10,000 + 800


def test_a_slip_number_used_twice_and_a_slip_signed_by_one_person_are_slip_flags() -> None:
    t = table()
    flags = feed(
        t,
        count("opener", OPENER),
        slip("fill", "F-17", {"100": 10}),
        slip("fill", "F-17", {"100": 10}),
        slip("credit", "C-1", {"100": 5}, by=["super-2"]),
        slip("credit", "C-2", {"100": 5}, by=["super-2", "super-2"]),
        slip("credit", "C-3", {"100": 5}, by=None),
        count("check", {"1000": 5, "100": 45, "25": 40}),  # 10,000 + 2,000 - 1,500
    )
    found = [(f.rule, f.message) for f in tray_flags(flags)]
    assert [r for r, _ in found] == ["slip"] * 4
    assert "F-17 was used already (event 2)" in found[0][1]
    assert "signed by 1 person" in found[1][1] and "C-1" in found[1][1]
    assert "signed by 1 person" in found[2][1] and "C-2" in found[2][1]
    assert "signed by 0 people" in found[3][1]
    # Each slip's chips still moved the tray: the check reconciles.
    assert t.result()["tray"]["counts"][1]["difference"] == "0"


def test_chips_that_do_not_add_to_the_amount_stated_are_a_slip_flag() -> None:
    t = table()
    flags = feed(
        t,
        count("opener", {"100": 100}, amount=10000),
        slip("fill", 9, {"1000": 2, "100": 5}, amount=2000),  # the chips are $2,500
        count("check", {"1000": 2, "100": 105}, amount=12000),  # the chips are $12,500
    )
    found = tray_flags(flags)
    assert [f.rule for f in found] == ["slip", "slip"]
    assert "$2,500.00, not the $2,000.00" in found[0].message
    assert "$12,500.00, not the $12,000.00" in found[1].message
    # The chips govern: the check is what the opener and the fill's chips explain.
    assert t.result()["tray"]["counts"][1]["difference"] == "0"


def test_an_opener_differing_from_the_last_closer_is_a_slip_flag() -> None:
    t = table()
    feed(t, count("opener", OPENER), count("closer", OPENER), drop(0))
    # The same value in other chips: four $25s became a $100.
    same_value = {"1000": 5, "100": 41, "25": 36}
    [flag] = tray_flags(feed(t, count("opener", same_value)))
    assert flag.rule == "slip"
    assert "$25.00 chips 36 (closer 40)" in flag.message and "$100.00 chips 41" in flag.message
    feed(t, count("closer", same_value))
    [flag] = tray_flags(feed(t, count("opener", {"1000": 5, "100": 40})))  # $1,000 of 25s gone
    assert flag.rule == "slip" and "($9,000.00)" in flag.message and "($10,000.00)" in flag.message
    assert len(t.result()["tray"]["days"]) == 3


def test_a_drop_counted_twice_or_with_no_day_is_flagged() -> None:
    t = table()
    [flag] = tray_flags(feed(t, drop(100)))
    assert "no gaming day" in flag.message
    feed(t, count("opener", OPENER), buy_in(100), count("closer", {"1000": 5, "100": 39, "25": 40}))
    assert tray_flags(feed(t, drop(100))) == []
    [flag] = tray_flags(feed(t, drop(100)))
    assert "counted already" in flag.message
    assert t.result()["tray"]["days"][0]["drop"] == "100"


def test_a_tray_event_inside_a_round_is_refused_and_changes_nothing() -> None:
    t = table()
    feed(t, count("opener", OPENER), "shuffle 6 300", "bet 1 ann 10", "nmb", "card 9S")
    before = t.result()["tray"]
    for event in (count("check", OPENER), slip("fill", 1, {"100": 1}), buy_in(50), drop(1)):
        [flag] = feed(t, event)
        assert flag.rule == "tray" and "between rounds" in flag.message
        assert t.check(parse_event(event)) is not None
    assert t.result()["tray"] == before


def test_the_checkpoint_carries_the_tray_mid_day() -> None:
    steps = clean_day()
    whole = table()
    feed(whole, *steps)
    first = table()
    feed(first, *steps[:6])  # the opener, a buy-in, a round, the fill, part of round 2
    snap = json.loads(json.dumps(first.snapshot()))
    again = Table.restore(first.setup, snap)
    assert again.snapshot() == snap
    feed(again, *steps[6:])
    assert again.result()["tray"] == whole.result()["tray"]


def test_a_table_that_never_counts_its_tray_has_no_tray_section_or_snapshot_part() -> None:
    t = table()
    feed(t, *house_wins(10))
    assert "tray" not in t.result() and "tray" not in t.snapshot()


def test_a_corrupt_tray_in_a_snapshot_is_refused_naming_it() -> None:
    from controller.engine.snapshot import SnapshotError, digest

    t = table()
    feed(t, count("opener", OPENER))
    snap = t.snapshot()
    snap["tray"]["last"] = "ten"
    body = {k: v for k, v in snap.items() if k != "digest"}
    snap["digest"] = digest(body)
    with pytest.raises(SnapshotError, match="tray"):
        Table.restore(t.setup, snap)


@pytest.mark.parametrize(
    ("event", "field", "words"),
    [
        ({"type": "tray_count", "kind": "opener", "chips": {"0": 4}}, "chips", "more than 0"),
        ({"type": "tray_count", "kind": "opener", "chips": {"-5": 4}}, "chips", "denomination"),
        ({"type": "tray_count", "kind": "opener", "chips": {"5": -1}}, "chips", "count of"),
        ({"type": "tray_count", "kind": "opener", "chips": {"5": 1.5}}, "chips", "count of"),
        ({"type": "tray_count", "kind": "opener", "chips": {"5": True}}, "chips", "count of"),
        ({"type": "tray_count", "kind": "opener", "chips": {"five": 1}}, "chips", "denomination"),
        (
            {"type": "tray_count", "kind": "opener", "chips": {"5": 1, "5.00": 2}},
            "chips",
            "same chip",
        ),
        ({"type": "tray_count", "kind": "opener", "chips": {"0.001": 1}}, "chips", "cents"),
        ({"type": "tray_count", "kind": "opener", "chips": {}}, "chips", "at least one"),
        ({"type": "tray_count", "kind": "opener", "chips": [5, 1]}, "chips", "object"),
        (
            {"type": "tray_count", "kind": "opener", "chips": {"100000000000": 1000000}},
            "chips",
            "out of range",
        ),
        ({"type": "tray_count", "kind": "cash", "chips": {"5": 1}}, "kind", "kind of count"),
        ({"type": "tray_count", "chips": {"5": 1}}, "kind", "missing"),
        ({"type": "buy_in", "kind": "opener", "amount": 5}, "kind", "kind of buy-in"),
        ({"type": "buy_in", "kind": "cash", "amount": -5}, "amount", "0 or more"),
        ({"type": "buy_in", "kind": "cash", "amount": "1e400"}, "amount", "out of range"),
        ({"type": "fill", "slip": "a b", "chips": {"5": 1}}, "slip", "slip number"),
        ({"type": "fill", "slip": True, "chips": {"5": 1}}, "slip", "slip number"),
        ({"type": "credit", "slip": 1, "chips": {"5": 1}, "by": []}, "by", "list of ids"),
        ({"type": "drop_count", "amount": "NaN"}, "amount", "amount"),
    ],
)
def test_hostile_amounts_and_chip_maps_are_input_errors(
    event: dict, field: str, words: str
) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_event(event, 3)
    assert caught.value.field == field
    assert words in str(caught.value)


def test_the_cli_exits_2_naming_the_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = {"type": "table", "game": "blackjack", "boxes": 7, "min_bet": 5, "max_bet": 1000}
    bad = {"type": "fill", "slip": 4, "chips": {"25": "many"}, "by": CREW}
    path = tmp_path / "day.jsonl"
    path.write_text(json.dumps(setup) + "\n" + json.dumps(bad) + "\n")
    assert main(["replay", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert 'line 2: "chips"' in err and "Traceback" not in err


def test_the_replay_document_carries_the_tray_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = {"type": "table", "game": "blackjack", "boxes": 7, "min_bet": 5, "max_bet": 1000}
    from engine_dsl import step

    lines = [setup] + [step(s) if isinstance(s, str) else s for s in clean_day()]
    path = tmp_path / "day.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["replay", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tray"]["days"][0]["win"] == "-15"
    assert all(not r["flags"] for r in doc["rounds"])
