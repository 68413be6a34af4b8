"""The opening and reconciliation scenarios of tests/scenarios/, written by hand from the rule
book, replay to their hand-derived expectations: in-process and through `floorctl replay --json`.

Each ``*.jsonl`` is one-deck Pontoon (48 cards). The round in each: box 1 gets 9S 8H (17), is
offered surrender and stands; the dealer 5D KC 2C (17): a push. The events, counted from 1
after the table line:

* opening-clean: dealer, open_table (1-2), inspect (3), the 48 cards, inspect_end (52), the
  five steps (53-57), the load (58), the round, shoe_end (68), the 43 cards left, close_table.
  Nothing is flagged; the shoe reconciles.
* opening-short-deck: the deck lacks 7H. inspect_end (51) flags it (`shoe`, 6.1's inspection);
  the load (57) flags the deck that failed; the readout lacks 7H too, so close_table (110)
  finds AAAA1-7H missing.
* opening-ten-in-deck: TS in the deck: 6.1 at inspect_end (53), `shoe` at the load (59), 6.1
  again when it comes out in the deal (64, not dealt: box 1 still gets 8H), and the
  reconciliation at close_table (114) names it as extra.
* opening-doubled-card: 8C twice: `shoe` at inspect_end (53) and at the load (59); in the
  readout the second 8C read is flagged (110) and the reconciliation (114) names it.
* shoe-one-card-short: no opening procedure, as before it existed (no flag at the load); the
  readout lacks QH: the next load (54) reconciles the shoe (AAAA1-QH missing) and flags the
  short deck loaded again. Both flags belong to round 1, after which they were noticed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.replay import format_table, replay_lines

HERE = Path(__file__).resolve().parent / "scenarios"
SCENARIOS = sorted(HERE.glob("*.jsonl"))


def expected(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.stem + ".expected.json").read_text())  # type: ignore[no-any-return]


def compare(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["game"] == want["game"]
    assert len(got["rounds"]) == len(want["rounds"])
    for mine, theirs in zip(got["rounds"], want["rounds"], strict=True):
        for key in ("round", "status", "dealers", "dealer", "hands", "settlements"):
            assert mine[key] == theirs[key], f"round {theirs['round']}: {key}"
        assert [(f["rule"], f["event"]) for f in mine["flags"]] == [
            (f["rule"], f["event"]) for f in theirs["flags"]
        ], f"round {theirs['round']}: flags"
        for flag, named in zip(mine["flags"], theirs["flags"], strict=True):
            for words in named["names"]:
                assert words in flag["message"], (words, flag["message"])
    assert got["shoes"] == want["shoes"]
    assert got["inspections"] == want["inspections"]


def test_the_scenarios_are_there() -> None:
    assert {p.stem for p in SCENARIOS} >= {
        "opening-clean",
        "opening-short-deck",
        "opening-ten-in-deck",
        "opening-doubled-card",
        "shoe-one-card-short",
    }


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_replays_to_its_expectation(scenario: Path) -> None:
    compare(replay_lines(scenario.read_text().splitlines()), expected(scenario))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_through_floorctl_replay_json(scenario: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", str(scenario), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    compare(json.loads(proc.stdout), expected(scenario))


def test_the_readable_replay_shows_the_inspections_and_the_reconciliations() -> None:
    def readable(name: str) -> str:
        text = format_table(replay_lines((HERE / name).read_text().splitlines()))
        return re.sub(" +", " ", text)  # the columns' padding aside

    short = readable("opening-short-deck.jsonl")
    assert "dealers on duty: dee" in short
    assert "decks inspected" in short
    assert "deck AAAA1 events 3-51 by dee, sam: 47 cards, FAILED: missing 7H" in short
    assert "loaded at event 57: 1 deck AAAA1; inspected: none NOT RECONCILED: missing AAAA1-7H" in (
        short
    )
    clean = readable("opening-clean.jsonl")
    assert "events 3-52 by dee, sam: 48 cards, passed" in clean
    assert "loaded at event 58: 1 deck AAAA1; inspected: AAAA1 reconciled" in clean
    assert "FLAG" not in clean
