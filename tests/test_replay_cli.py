"""`floorctl replay`: input errors exit 2 naming line and field; breaches are flags, exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import paths
import pytest

from controller.cli import main
from controller.replay import format_table, replay_lines

TABLE = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "T1",
    "boxes": 7,
    "decks": 6,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}


def write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("bad", "line", "field"),
    [
        ('{"type": "bet", "box": 1, "player": "ann", "amount": 10', 3, ""),  # not JSON
        ({"type": "deal", "box": 1}, 3, '"type"'),
        ({"type": "card", "card": "1S"}, 3, '"card"'),
        ({"type": "card"}, 3, '"card"'),
        ({"type": "bet", "box": 1, "player": "ann"}, 3, '"amount"'),
        ({"type": "bet", "box": 0, "player": "ann", "amount": 5}, 3, '"box"'),
        ({"type": "bet", "box": 1, "player": "ann", "amount": -5}, 3, '"amount"'),
        ({"type": "double", "box": 1, "amount": 5}, 3, '"player"'),
        ({"type": "shuffle", "decks": 6}, 3, '"cut_card"'),
        ({"type": "card", "card": "AS", "in_error": "sideways"}, 3, '"in_error"'),
    ],
)
def test_malformed_input_exits_2_naming_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: object, line: int, field: str
) -> None:
    path = write(tmp_path, TABLE, {"type": "shuffle", "decks": 6, "cut_card": 100}, bad)
    assert main(["replay", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert f"line {line}" in err
    assert field in err
    assert err.count("\n") == 1  # one message


def test_unknown_game_and_rule_setting_are_input_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, {**TABLE, "game": "baccarat"})
    assert main(["replay", str(path)]) == 2
    assert '"game"' in capsys.readouterr().err
    path = write(tmp_path, {**TABLE, "rules": {"dealer_hits_soft_18": True}})
    assert main(["replay", str(path)]) == 2
    assert '"rules.dealer_hits_soft_18"' in capsys.readouterr().err
    path = write(tmp_path, {**TABLE, "rules": {"max_hands": "three"}})
    assert main(["replay", str(path)]) == 2
    assert "'three'" in capsys.readouterr().err


def test_first_line_must_be_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"type": "shuffle", "decks": 6, "cut_card": 100})
    assert main(["replay", str(path)]) == 2
    assert "line 1" in capsys.readouterr().err


def test_rule_breaches_are_flagged_and_play_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        TABLE,
        {"type": "shuffle", "decks": 6, "cut_card": 100},
        {"type": "bet", "box": 1, "player": "ann", "amount": 10},
        {"type": "no_more_bets"},
        {"type": "card", "card": "9S"},
        {"type": "card", "card": "7D"},
        {"type": "card", "card": "8C"},
        {"type": "bet", "box": 2, "player": "ben", "amount": 10},  # late: 5.5
        {"type": "offer_surrender", "box": 1},
        {"type": "stand", "box": 3},  # wrong box
        {"type": "stand", "box": 1},
        {"type": "card", "card": "KD"},
    )
    assert main(["replay", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (rnd,) = doc["rounds"]
    assert [f["rule"] for f in rnd["flags"]] == ["5.5", "turn"]
    assert rnd["status"] == "settled"
    assert [s["net"] for s in rnd["settlements"]] == ["0"]  # 17 v 17


def test_readable_table_without_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examples = paths.EXAMPLES
    assert main(["replay", str(examples / "04-pontoon-irregularities.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "round 1  settled\ndealer: 4D 5C KH (19)\n" in out
    assert "FLAG 16.4 box 1" in out
    assert "insurance" in out


def test_scenario_ending_mid_round_is_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        TABLE,
        {"type": "shuffle", "decks": 6, "cut_card": 100},
        {"type": "bet", "box": 1, "player": "ann", "amount": 10},
        {"type": "no_more_bets"},
        {"type": "card", "card": "9S"},
    )
    assert main(["replay", str(path), "--json"]) == 0
    (rnd,) = json.loads(capsys.readouterr().out)["rounds"]
    assert rnd["status"] == "incomplete"
    assert rnd["settlements"] == []
    assert rnd["hands"][0]["cards"] == ["9S"]


def test_missing_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_every_text_of_a_round_numbers_a_boxs_hands_from_1_the_json_from_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One rendering of a round (controller.roundtext): the replay's account, the export's
    timelines and the floor's text say "box 1 hand 2" for the JSON's hand 1 of box 1."""
    from controller.floor.text import format_round
    from controller.roundtext import round_lines

    lines = [
        json.dumps(o)
        for o in (
            {"type": "table", "game": "blackjack", "table_id": "T1", "boxes": 3,
             "min_bet": 5, "max_bet": 100},
            {"type": "shuffle", "decks": 6, "cut_card": 250},
            {"type": "bet", "box": 1, "player": "ann", "amount": 10},
            {"type": "no_more_bets"},
            {"type": "card", "card": "8S"}, {"type": "card", "card": "9D"},
            {"type": "card", "card": "8H"}, {"type": "card", "card": "7C"},
            {"type": "split", "box": 1},
            {"type": "card", "card": "TD"}, {"type": "stand", "box": 1},
            {"type": "card", "card": "KD"}, {"type": "stand", "box": 1},
            {"type": "card", "card": "5C"},
        )
    ]  # fmt: skip
    doc = replay_lines(lines)
    [rnd] = doc["rounds"]
    assert [(h["box"], h["hand"]) for h in rnd["hands"]] == [(1, 0), (1, 1)]
    assert [s["hand"] for s in rnd["settlements"]] == [0, 1]
    text = format_table(doc)
    assert "  box 1 hand 1  8S TD" in text and "  box 1 hand 2  8H KD" in text
    assert "box 1 hand 0" not in text
    shared = round_lines(rnd)
    assert all(line in text.splitlines() for line in shared)
    assert shared[1].startswith("  box 1 hand 1") and shared[2].startswith("  box 1 hand 2")
    # The floor's text prints the same lines for the hands (the export's timeline too: see
    # test_store_export's settlement row).
    floor_doc = {
        **rnd,
        "table": "T1",
        "game": "blackjack",
        "started": None,
        "ended": None,
        "shoe": 2,
        "events": {"first": 3, "last": 14},
        "cards": [],
        "decisions": [],
        "wagers": [],
        "wagered": "20.00",
        "result": "-20.00",
        "flags": [],
        "checks": {"chain": True, "matches_table_record": True, "differences": []},
    }
    floor_text = format_round(floor_doc).splitlines()
    for line in shared[1:3]:
        assert line in floor_text
