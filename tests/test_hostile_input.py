"""Hostile scenario input is an input error (exit 2, one line naming line and field) or a
flag, never a traceback: huge amounts, deep nesting, rule-set names that are paths, rule
settings out of range, and a fuzzer over everything a file can hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cli import main

TABLE: dict[str, Any] = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "T1",
    "boxes": 7,
    "decks": 6,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}
SHUFFLE = {"type": "shuffle", "decks": 6, "cut_card": 200}
EXAMPLES = paths.EXAMPLES


def write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def run_replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["replay", str(path), "--json"])
    captured = capsys.readouterr()
    run_replay.out = captured.out  # type: ignore[attr-defined]
    return status, captured.err


HUGE = ["1e28", "1e308", 10**30, "123456789012345678901234567890", 1e308]


@pytest.mark.parametrize("amount", HUGE, ids=str)
@pytest.mark.parametrize("kind", ["bet", "insurance", "double"])
def test_an_amount_beyond_any_table_is_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], amount: object, kind: str
) -> None:
    event = {"type": kind, "box": 1, "player": "ann", "amount": amount}
    status, err = run_replay(write(tmp_path, TABLE, SHUFFLE, event), capsys)
    assert status == 2
    assert err.startswith(f'{tmp_path / "s.jsonl"}: line 3: "amount":')
    assert "out of range" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("field", ["max_bet", "min_bet"])
def test_a_table_limit_beyond_any_table_is_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str
) -> None:
    table = {**TABLE, field: "1e30"} if field == "max_bet" else {**TABLE, "min_bet": 10**30}
    status, err = run_replay(write(tmp_path, table), capsys)
    assert status == 2
    assert f'line 1: "{field}"' in err
    assert "out of range" in err


def test_a_huge_rule_amount_is_refused_naming_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = {**TABLE, "rules": {"min_increment": "1e28"}}
    status, err = run_replay(write(tmp_path, table), capsys)
    assert status == 2
    assert '"rules.min_increment"' in err
    assert "out of range" in err


def test_a_bet_over_the_table_maximum_is_a_limits_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bet = {"type": "bet", "box": 1, "player": "ann", "amount": 5000}
    status, _ = run_replay(write(tmp_path, TABLE, SHUFFLE, bet), capsys)
    assert status == 0
    doc = json.loads(run_replay.out)  # type: ignore[attr-defined]
    assert [f["rule"] for r in doc["rounds"] for f in r["flags"]] == ["limits"]


@pytest.mark.parametrize("depth", [5, 50, 100_000])
def test_deep_nesting_is_not_valid_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    nested = '{"type": "bet", "box": 1, "player": "ann", "amount": 5, "note": ' + (
        "[" * depth + "]" * depth + "}"
    )
    status, err = run_replay(write(tmp_path, TABLE, nested), capsys)
    assert status == 2
    assert "line 2: not valid JSON" in err


def test_an_integer_of_thousands_of_digits_is_not_valid_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = '{"type": "bet", "box": 1, "player": "ann", "amount": ' + "9" * 5000 + "}"
    status, err = run_replay(write(tmp_path, TABLE, line), capsys)
    assert status == 2
    assert "line 2: not valid JSON" in err


@pytest.mark.parametrize("name", ["../pyproject", "/etc/passwd", "pontoon nz", "", "a" * 65, "x/y"])
def test_a_game_is_a_rule_set_name_never_a_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    status, err = run_replay(write(tmp_path, {**TABLE, "game": name}), capsys)
    assert status == 2
    assert 'line 1: "game"' in err
    assert "not a rule set name" in err


@pytest.mark.parametrize(
    ("rules", "named"),
    [
        ({"decks": 0}, "rules.decks"),
        ({"decks": 99}, "rules.decks"),
        ({"max_hands": 0}, "rules.max_hands"),
    ],
)
def test_a_setting_out_of_range_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rules: dict[str, int], named: str
) -> None:
    status, err = run_replay(write(tmp_path, {**TABLE, "rules": rules}), capsys)
    assert status == 2
    assert f'"{named}"' in err


def test_odds_that_are_not_odds_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = {**TABLE, "rules": {"natural_pays": "1e999999:1e-999999"}}
    status, err = run_replay(write(tmp_path, table), capsys)
    assert status == 2
    assert '"rules.natural_pays"' in err


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe\x00garbage", b"", b"\n\n", b"null\n", b"[1,2]\n", b'"table"\n'],
    ids=["binary", "empty", "blank", "null", "array", "string"],
)
def test_files_that_are_not_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    status, err = run_replay(path, capsys)
    assert status == 2
    assert err.count("\n") == 1


def test_a_directory_or_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_replay(tmp_path, capsys)[0] == 2
    assert run_replay(tmp_path / "missing.jsonl", capsys)[0] == 2


# --- the fuzzer -------------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["AS", "TD", "7H", "QC", "K7Q2M9", "1e28", "-0", "0.001", "NaN", "Infinity"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_FIELDS = [
    "type", "box", "player", "amount", "card", "face_up", "in_error", "damaged", "controls",
    "decks", "cut_card", "deck", "deck_serials", "raw", "chips", "confidence", "time",
    "actor", "source", "correction_of", "note", "by", "step", "dealer", "device", "on",
    "reason", "flag_event", "rule",
]  # fmt: skip
_TYPES = [
    "shuffle", "bet", "no_more_bets", "card", "cut_card", "offer_insurance", "insurance",
    "offer_surrender", "surrender", "hit", "stand", "double", "split", "rescue", "refuse",
    "absent", "void", "reshuffle_discards", "misread", "wager_seen", "peek", "table",
    "inspect", "inspect_end", "shoe_end", "open_table", "opening_step", "close_table", "dealer",
    "manual_mode", "acknowledge",
]  # fmt: skip


def _example_lines() -> list[list[str]]:
    return [
        [line for line in path.read_text().splitlines() if line.strip()]
        for path in sorted(EXAMPLES.glob("*.jsonl"))
    ]


@st.composite
def hostile_scenarios(draw: st.DrawFn) -> list[str]:
    """A worked example with some lines mutated: fields replaced by anything JSON can hold,
    lines cut, duplicated or replaced by noise."""
    examples = _example_lines()
    lines = list(draw(st.sampled_from(examples)))
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["field", "type", "cut", "noise", "dup", "nest"]))
        if how in ("field", "type"):
            try:
                obj = json.loads(lines[i])
            except (ValueError, RecursionError):
                continue
            if not isinstance(obj, dict):
                continue
            if how == "type":
                obj["type"] = draw(st.sampled_from(_TYPES))
            else:
                obj[draw(st.sampled_from(_FIELDS))] = draw(_values)
            lines[i] = json.dumps(obj)
        elif how == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif how == "noise":
            lines[i] = draw(st.text(max_size=40))
        elif how == "dup":
            lines.insert(i, lines[i])
        else:
            depth = draw(st.integers(1, 3000))
            lines[i] = "[" * depth + "]" * depth
    return lines


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=hostile_scenarios())
def test_no_file_makes_replay_print_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str]
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    # Any exception escaping main() is the traceback the user would see: the test fails on it.
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["replay", str(path), "--json"])
    assert status in (0, 2)
    if status == 2:
        assert err.getvalue().count("\n") == 1
        assert "Traceback" not in err.getvalue()
