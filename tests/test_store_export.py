"""`floorctl export`: a surveillance package that replays, with its window and timelines."""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.replay import replay_dicts, replay_lines
from controller.store.recorder import Recorder
from controller.store.repository import Store

pytestmark = pytest.mark.usefixtures("store_spool_dir")

Shift = Callable[..., list[dict[str, Any]]]


def record_with_times(url: str, events: list[dict[str, Any]]) -> list[str]:
    """Record events one minute apart from 10:00 UTC; returns each event's time."""
    times = []
    with Store.open(url) as store:
        rec = Recorder.open(
            store, events[0], retry_every=None, clock=lambda: "2026-11-30T09:59:00.000000Z"
        )
        for i, e in enumerate(events[1:], start=1):
            at = f"2026-11-30T{10 + i // 60:02d}:{i % 60:02d}:00.000000Z"
            rec.record(e, recorded_at=at)
            times.append(at)
        rec.close()
    return times


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_package_replays_to_the_table_and_lists_what_was_stored(
    store_url: str, store_shift_events: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = store_shift_events(4)
    record_with_times(store_url, events)
    out = tmp_path / "pkg"
    assert main(["export", "--db", store_url, "--out", str(out)]) == 0
    assert "table T1: 77 events" in capsys.readouterr().out
    tdir = out / "T1"
    doc = replay_lines((tdir / "scenario.jsonl").read_text().splitlines())
    assert doc == replay_dicts(events)
    settlements = read_csv(tdir / "settlements.csv")
    want = [s for rnd in doc["rounds"] for s in rnd["settlements"]]
    assert [
        {k: row[k] for k in ("player", "kind", "staked", "returned", "net")} for row in settlements
    ] == [{k: s[k] for k in ("player", "kind", "staked", "returned", "net")} for s in want]
    assert [row["rule"] for row in read_csv(tdir / "flags.csv")] == [
        f["rule"] for rnd in doc["rounds"] for f in rnd["flags"]
    ]
    assert [int(r["round"]) for r in read_csv(tdir / "rounds.csv")] == [1, 2, 3, 4, 5]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tables"]["T1"]["head_seq"] == 76
    with Store.open(store_url) as store:
        assert manifest["tables"]["T1"]["head_hash"] == store.head("T1")[1]  # type: ignore[index]
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest
    assert len(manifest["files"]) == 6 + 5  # five CSV/JSONL files, chain.csv, five timelines


def test_a_round_timeline_shows_each_event_its_flags_and_the_settlement(
    store_url: str, store_shift_events: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = store_shift_events(4)
    times = record_with_times(store_url, events)
    out = tmp_path / "pkg"
    assert main(["export", "--db", store_url, "--out", str(out), "--round", "4"]) == 0
    printed = capsys.readouterr().out
    text = (out / "T1" / "timelines" / "round-0004.txt").read_text()
    assert text in printed
    lines = text.splitlines()
    assert lines[0] == "table T1  game pontoon-nz-2000  round 4"
    assert any(line.split()[:3] == ["61", times[60], "card"] for line in lines)
    assert any("FLAG 16.4 box 1" in line for line in lines)
    assert "status: settled" in lines
    assert "  ben            2    1  hand                 10          0        -10" in lines
    assert sorted(p.name for p in (out / "T1" / "timelines").iterdir()) == ["round-0004.txt"]


def test_since_and_until_choose_the_rounds_listed(
    store_url: str, store_shift_events: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = store_shift_events(4)
    record_with_times(store_url, events)
    out = tmp_path / "pkg"
    # Round 2 is events 13..33 (10:13..10:33), round 3 34..49 (10:34..10:49).
    args = ["--since", "2026-11-30T10:14:00Z", "--until", "2026-11-30T10:40:00+00:00"]
    assert main(["export", "--db", store_url, "--out", str(out), *args]) == 0
    tdir = out / "T1"
    assert [r["round"] for r in read_csv(tdir / "rounds.csv")] == ["2"]
    assert {r["round"] for r in read_csv(tdir / "settlements.csv")} == {"2"}
    assert sorted(p.name for p in (tdir / "timelines").iterdir()) == [
        "round-0002.txt",
        "round-0003.txt",
    ]
    scenario = (tdir / "scenario.jsonl").read_text().splitlines()
    assert len(scenario) == 41  # from the table line to event 40, the last before --until
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()


def test_an_empty_window_is_an_error(
    store_url: str, store_shift_events: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record_with_times(store_url, store_shift_events(1))
    status = main(
        ["export", "--db", store_url, "--out", str(tmp_path / "p"), "--since", "2030-01-01"]
    )
    assert status == 2
    assert "no events" in capsys.readouterr().err


def test_a_timeline_whose_text_holds_unicode_digits_is_written(
    store_url: str, store_shift_events: Shift, tmp_path: Path
) -> None:
    # Hypothesis found it: an actor named "²" (a digit to str.isdigit, not to int) broke the
    # timelines' reading of their own sequence numbers.
    events = store_shift_events(1)
    events[1] = {**events[1], "actor": "²"}
    record_with_times(store_url, events)
    out = tmp_path / "pkg"
    assert main(["export", "--db", store_url, "--out", str(out)]) == 0
    assert (out / "T1" / "timelines" / "round-0001.txt").exists()
    assert main(["verify", str(out)]) == 0
