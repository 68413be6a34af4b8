"""The worked scenarios of tests/data/examples replay exactly to their expected results."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import paths
import pytest

from controller.replay import replay_lines

EXAMPLES = paths.EXAMPLES
SCENARIOS = sorted(EXAMPLES.glob("*.jsonl"))


def test_the_examples_are_there() -> None:
    assert len(SCENARIOS) >= 5, f"expected the worked examples in {EXAMPLES}"


def _compare(got: dict, expected: dict) -> None:
    assert got["game"] == expected["game"]
    assert len(got["rounds"]) == len(expected["rounds"])
    for mine, theirs in zip(got["rounds"], expected["rounds"], strict=True):
        key = ("player", "box", "hand", "kind", "net")
        assert [tuple(s[k] for k in key) for s in mine["settlements"]] == [
            tuple(s[k] for k in key) for s in theirs["settlements"]
        ], f"round {theirs['round']} settlements"
        assert [f["rule"] for f in mine["flags"]] == [f["rule"] for f in theirs["flags"]]
        assert mine["status"] == theirs["status"]
        assert mine["dealer"] == theirs["dealer"]
        assert mine["hands"] == theirs["hands"]
        for s in mine["settlements"]:
            assert Decimal(s["staked"]) + Decimal(s["net"]) == Decimal(s["returned"])


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_example_replays_to_expected(scenario: Path) -> None:
    expected = json.loads(scenario.with_name(scenario.stem + ".expected.json").read_text())
    _compare(replay_lines(scenario.read_text().splitlines()), expected)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_example_through_the_command_line(scenario: Path) -> None:
    expected = json.loads(scenario.with_name(scenario.stem + ".expected.json").read_text())
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", str(scenario), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    _compare(json.loads(proc.stdout), expected)
