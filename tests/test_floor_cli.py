"""`floorctl floor round|report|rounds|flags|view|evidence`: the floor's answers on the command
line, checked against `floorctl replay` of each table's own export (an independent path: the
table's SQLite store, its export, a replay from the table line; nothing of the floor's)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import test_floor_support as support
from test_floor_support import FloorData, quiet

from controller.floor.pit import money

NZ = ZoneInfo("Pacific/Auckland")
floor_data = support.floor_data  # the shared floor, built once for this module


def floor(data: FloorData, *argv: str) -> tuple[int, str]:
    return quiet(["floor", argv[0], "--db", data.url, *argv[1:]])


def floor_json(data: FloorData, *argv: str) -> Any:
    status, out = floor(data, *argv, "--json")
    assert status == 0, out
    return json.loads(out)


def local(text: str) -> str:
    """A recorded_at (UTC) as the local time a surveillance officer would type, to the ms."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(NZ)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def wagered_and_result(rnd: dict[str, Any]) -> tuple[Decimal, Decimal]:
    void = {(h["box"], h["hand"]) for h in rnd["hands"] if h["outcome"] == "void"}
    wagered = sum(
        (Decimal(s["staked"]) for s in rnd["settlements"] if (s["box"], s["hand"]) not in void),
        Decimal(0),
    )
    result = -sum((Decimal(s["net"]) for s in rnd["settlements"]), Decimal(0))
    return wagered, result


@pytest.mark.parametrize("table_id", ["T01", "T02", "EX4"])
def test_every_round_matches_the_replay_of_the_tables_own_export(
    floor_data: FloorData, table_id: str
) -> None:
    oracle = floor_data.oracle(table_id)["rounds"]
    assert oracle
    for expected in oracle:
        doc = floor_json(
            floor_data, "round", "--table", table_id, "--round", str(expected["round"])
        )
        assert doc["status"] == expected["status"]
        assert doc["dealer"] == expected["dealer"]
        assert doc["hands"] == expected["hands"]
        assert doc["settlements"] == expected["settlements"]
        assert [(f["rule"], f["message"]) for f in doc["flags"]] == [
            (f["rule"], f["message"]) for f in expected["flags"]
        ]
        assert all(f["words"] for f in doc["flags"] if f["rule"][0].isdigit())
        # What the rule directed, as the dealer's banner said it, and who had to act.
        assert all(f["direction"] and f["needs"] in ("dealer", "supervisor") for f in doc["flags"])
        # Each card, in shoe order, went to the hand the replay has it in.
        dealt_to: dict[Any, list[str]] = {}
        for card in doc["cards"]:
            to = card["to"]
            key = "dealer" if to and to["to"] == "dealer" else (to["box"] if to else None)
            dealt_to.setdefault(key, []).append(card["card"])
        assert dealt_to.get("dealer", []) == expected["dealer"]["cards"]
        for box in {h["box"] for h in expected["hands"]}:
            hands = [h for h in expected["hands"] if h["box"] == box]
            if len(hands) == 1:
                assert dealt_to.get(box, []) == hands[0]["cards"]
            else:  # a split: the pair's second card moved, not dealt again
                assert Counter(dealt_to.get(box, [])) == Counter(
                    c for h in hands for c in h["cards"]
                )
        wagered, result = wagered_and_result(expected)
        assert Decimal(doc["wagered"]) == wagered and Decimal(doc["result"]) == result
        assert doc["checks"] == {
            "chain": True,
            "chain_problem": None,
            "matches_table_record": True,
            "differences": [],
            "checkpoint": None,
        }


def test_a_round_is_found_by_the_local_time_it_was_in_play(floor_data: FloorData) -> None:
    chain = floor_data.chain("T01")
    closed = floor_data.closed("T01")
    for number in (1, 17, 40, 70):
        # A millisecond before the event that settled it, in Auckland time as typed.
        at = datetime.fromisoformat(chain[closed[number]].replace("Z", "+00:00"))
        typed = (at - timedelta(milliseconds=1)).astimezone(NZ).strftime("%Y-%m-%d %H:%M:%S.%f")
        doc = floor_json(floor_data, "round", "--table", "T01", "--at", typed)
        assert doc["round"] == number
        assert doc["ended"]["utc"] == at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"
    # To the minute: the round in play at the start of that minute, or the first to begin in it.
    first_bet = min(
        seq for seq, rec in enumerate(floor_data.events["T01"]) if rec[0]["type"] == "bet"
    )
    began = datetime.fromisoformat(chain[first_bet].replace("Z", "+00:00")).astimezone(NZ)
    doc = floor_json(
        floor_data, "round", "--table", "T01", "--at", began.strftime("%Y-%m-%d %H:%M")
    )
    assert doc["round"] == 1


def test_the_day_report_is_the_sum_of_the_replayed_rounds(floor_data: FloorData) -> None:
    for table_id in ("T01", "T02"):
        oracle = floor_data.oracle(table_id)["rounds"]
        doc = floor_json(floor_data, "report", "--table", table_id, "--date", "2026-12-01")
        assert doc["rounds"] == len(oracle)
        wagered = sum((wagered_and_result(r)[0] for r in oracle), Decimal(0))
        result = sum((wagered_and_result(r)[1] for r in oracle), Decimal(0))
        assert Decimal(doc["wagered"]) == wagered
        assert Decimal(doc["result"]) == result
        assert (
            doc["result_pct_of_wagered"] == f"{(result / wagered * 100).quantize(Decimal('0.01'))}%"
        )
        assert doc["hands"] == sum(len(r["hands"]) for r in oracle if r["status"] == "settled")
        flags = Counter(f["rule"] for r in oracle for f in r["flags"])
        assert {f["rule"]: f["count"] for f in doc["flags_by_rule"]} == dict(flags)
        chain, closed = floor_data.chain(table_id), floor_data.closed(table_id)
        events = floor_data.events[table_id]
        first = next(s for s, (e, _) in enumerate(events) if e["type"] == "bet")
        span = _at(chain[closed[max(closed)]]) - _at(chain[first])
        assert doc["rounds_per_hour"] == round(len(oracle) / (span.total_seconds() / 3600), 1)
        assert doc["window"]["from"]["utc"] == "2026-11-30 17:00:00.000Z"  # 06:00 NZDT
        assert doc["window"]["to"]["utc"] == "2026-12-01 17:00:00.000Z"


def test_the_report_names_the_dealers_and_which_shoes_reconciled(floor_data: FloorData) -> None:
    replay = floor_data.oracle("T01")
    doc = floor_json(floor_data, "report", "--table", "T01", "--date", "2026-12-01")
    dealers = Counter(d for r in replay["rounds"] for d in r["dealers"])
    assert {d["dealer"]: d["rounds"] for d in doc["dealers"]} == dict(dealers)
    assert len(dealers) > 1
    shoes = {s["shoe"]: s for s in replay["shoes"]}
    assert [s["shoe"] for s in doc["shoes"]] == sorted(shoes)
    for s in doc["shoes"]:
        assert s["reconciled"] == shoes[s["shoe"]]["reconciled"]
        assert s["missing"] == shoes[s["shoe"]]["missing"]
        assert s["extra"] == shoes[s["shoe"]]["extra"]
    assert doc["shoes_not_reconciled"] == sum(1 for s in shoes.values() if s["reconciled"] is False)
    assert doc["shoes_not_reconciled"] >= 1 and doc["shoes_reconciled"] >= 1
    status, text = floor(floor_data, "report", "--table", "T01", "--date", "2026-12-01")
    assert status == 0
    assert (
        "NOT RECONCILED" in text
        and "missing "
        + shoes[next(k for k, v in shoes.items() if v["reconciled"] is False)]["missing"][0]
        in text
    )
    rnd = floor_json(floor_data, "round", "--table", "T01", "--round", "30")
    assert rnd["dealers"] == replay["rounds"][29]["dealers"]


def test_a_shift_report_counts_the_rounds_that_began_in_the_shift(floor_data: FloorData) -> None:
    """T02 starts at 22:30 NZDT: the swing shift (14:00-22:00) has none of its rounds, the night
    shift (22:00-06:00) all that began before 06:00."""
    chain = floor_data.chain("T02")
    closed = floor_data.closed("T02")
    events = floor_data.events["T02"]
    # Each round opens at its first bet after the round before it ended (the table's own rows).
    opened: dict[int, datetime] = {}
    previous = 0
    for number in sorted(closed):
        seq = next(s for s in range(previous + 1, closed[number]) if events[s][0]["type"] == "bet")
        opened[number] = datetime.fromisoformat(chain[seq].replace("Z", "+00:00"))
        previous = closed[number]
    night_end = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)  # 06:00 NZDT on the 2nd
    expected = [n for n, at in opened.items() if at < night_end]
    doc = floor_json(
        floor_data, "report", "--table", "T02", "--date", "2026-12-01", "--shift", "night"
    )
    assert doc["rounds"] == len(expected) > 0
    swing = floor_json(
        floor_data, "report", "--table", "T02", "--date", "2026-12-01", "--shift", "swing"
    )
    assert swing["rounds"] == 0 and swing["result_pct_of_wagered"] is None
    listed = floor_json(
        floor_data,
        "rounds",
        "--table",
        "T02",
        "--from",
        "2026-12-01 22:00",
        "--to",
        "2026-12-02 06:00",
    )
    assert [r["round"] for r in listed["rounds"]] == expected


def test_flags_by_rule_table_and_shift(floor_data: FloorData) -> None:
    # EX4 was recorded at the time of the test run: only T01 and T02 are on 1 December for sure.
    everyone = floor_json(floor_data, "flags", "--date", "2026-12-01")
    for table_id in ("T01", "T02"):
        doc = floor_json(floor_data, "flags", "--date", "2026-12-01", "--table", table_id)
        rounds = floor_data.oracle(table_id)["rounds"]
        expected = Counter(f["rule"] for r in rounds for f in r["flags"])
        assert Counter(doc["by_rule"]) == expected
        assert everyone["by_table"][table_id] == sum(expected.values())
        assert [(f["round"], f["seq"]) for f in doc["flags"]] == [
            (r["round"], f["event"]) for r in rounds for f in r["flags"]
        ]
    doc = floor_json(floor_data, "flags", "--date", "2026-12-01", "--table", "T02")
    by_shift = Counter(f["shift"] for f in doc["flags"])
    assert Counter(doc["by_shift"]) == by_shift
    night = floor_json(
        floor_data, "flags", "--date", "2026-12-01", "--table", "T02", "--shift", "night"
    )
    assert len(night["flags"]) == by_shift.get("2026-12-01 night", 0)
    rule = next(iter(doc["by_rule"]))
    only = floor_json(floor_data, "flags", "--date", "2026-12-01", "--rule", rule, "--table", "T01")
    assert {f["rule"] for f in only["flags"]} == {rule}
    assert {f["table"] for f in only["flags"]} == {"T01"}
    for f in only["flags"]:
        rnd = floor_json(floor_data, "round", "--table", "T01", "--round", str(f["round"]))
        assert f["seq"] in [x["seq"] for x in rnd["flags"]]


def test_the_floor_view_lists_every_table(floor_data: FloorData) -> None:
    doc = floor_json(floor_data, "view")
    tables = {t["table"]: t for t in doc["tables"]}
    assert set(tables) == {"T01", "T02", "EX4"}
    assert tables["T01"]["status"] == "closed"  # its day ended with close_table
    assert tables["T02"]["status"] == "between rounds"
    assert tables["T01"]["rounds_played"] == 70
    last = floor_data.oracle("EX4")["rounds"][-1]
    in_play = last["status"] == "incomplete"
    assert tables["EX4"]["status"] == ("dealing" if in_play else "between rounds")
    assert tables["EX4"]["round_in_play"] == (last["round"] if in_play else None)
    assert tables["EX4"]["open_flags"] == sum(
        len(r["flags"]) for r in floor_data.oracle("EX4")["rounds"]
    )


def test_the_text_forms_read_as_the_json_says(floor_data: FloorData) -> None:
    status, out = floor(floor_data, "round", "--table", "T01", "--round", "5")
    doc = floor_json(floor_data, "round", "--table", "T01", "--round", "5")
    assert status == 0
    assert f"round 5  {doc['status']}" in out
    for card in doc["cards"]:
        assert f"#{card['seq']}" in out and card["card"] in out
    status, out = floor(floor_data, "report", "--table", "T01", "--date", "2026-12-01")
    report = floor_json(floor_data, "report", "--table", "T01", "--date", "2026-12-01")
    assert status == 0 and money(report["wagered"]) in out and money(report["result"]) in out


@pytest.mark.parametrize(
    ("argv", "status", "words"),
    [
        (["round", "--table", "T99", "--round", "1"], 1, "no table 'T99' on the floor"),
        (["round", "--table", "T01", "--round", "9999"], 1, "has no round 9999"),
        (["round", "--table", "T01", "--at", "2026-11-30 05:00"], 1, "no round was in play"),
        (["round", "--table", "T01", "--at", "2026-12-01 25:61"], 2, "is not a time"),
        (["round", "--table", "T01", "--at", "yesterday"], 2, "is not a time"),
        (["round", "--table", "T01", "--at", "2027-04-04 02:30"], 2, "happened twice"),
        (["round", "--table", "T01", "--at", "2026-09-27 02:30"], 2, "never happened"),
        (["round", "--table", "T01"], 2, "give either --at TIME or --round N"),
        (["report", "--table", "T01", "--date", "2026-12-32"], 2, "is not a date"),
        (["report", "--table", "T01", "--date", "01/12/2026"], 2, "is not a date"),
        (["report", "--table", "T01"], 2, "give --date"),
        (["report", "--table", "T01", "--date", "2026-12-01", "--shift", "lunch"], 2, "no shift"),
        (
            ["report", "--table", "T01", "--from", "2026-12-02 01:00", "--to", "2026-12-01 01:00"],
            2,
            "is not after",
        ),
        (
            ["report", "--table", "T01", "--date", "2026-12-01", "--tz", "Mars/Olympus"],
            2,
            "time zone",
        ),
    ],
)
def test_bad_input_is_a_clear_message(
    floor_data: FloorData,
    argv: list[str],
    status: int,
    words: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    got, out = floor(floor_data, *argv)
    err = capsys.readouterr().err
    assert got == status
    assert words in err
    assert "Traceback" not in err and out == ""


def test_an_unreachable_floor_is_a_clear_message(capsys: pytest.CaptureFixture[str]) -> None:
    got, _ = quiet(["floor", "view", "--db", "postgresql://nobody@127.0.0.1:1/none"])
    err = capsys.readouterr().err
    assert got == 2 and "127.0.0.1" in err and "Traceback" not in err


def test_evidence_of_a_round_verifies_and_reads(floor_data: FloorData, tmp_path: Path) -> None:
    out = tmp_path / "evidence"
    status, text = floor(
        floor_data, "evidence", "--table", "T01", "--round", "12", "--out", str(out)
    )
    assert status == 0, text
    assert quiet(["verify", str(out / "export")])[0] == 0
    doc = floor_json(floor_data, "round", "--table", "T01", "--round", "12")
    html = (out / "report.html").read_text()
    assert doc["started"]["local"] in html and doc["started"]["utc"] in html
    for card in doc["cards"]:
        assert f'<tr data-seq="{card["seq"]}">' in html
    for f in doc["flags"]:
        assert f["words"] in html or f["words"].replace("'", "&#39;") in html
    manifest = json.loads((out / "export" / "manifest.json").read_text())
    assert manifest["tables"]["T01"]["head_hash"] in html
    record = json.loads((out / "evidence.json").read_text())
    for name, digest in record["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF")
    # The export replays to the same round.
    status, replayed = quiet(["replay", str(out / "export" / "T01" / "scenario.jsonl"), "--json"])
    rounds = {r["round"]: r for r in json.loads(replayed)["rounds"]}
    assert rounds[12]["settlements"] == doc["settlements"]


def test_evidence_of_a_shift_and_a_report_pdf(floor_data: FloorData, tmp_path: Path) -> None:
    out = tmp_path / "night"
    status, _ = floor(
        floor_data,
        "evidence",
        "--table",
        "T02",
        "--date",
        "2026-12-01",
        "--shift",
        "night",
        "--out",
        str(out),
    )
    assert status == 0
    html = (out / "report.html").read_text()
    report = floor_json(
        floor_data, "report", "--table", "T02", "--date", "2026-12-01", "--shift", "night"
    )
    assert money(report["result"]) in html and f"round {report['round_list'][0]['round']}" in html
    assert quiet(["verify", str(out / "export")])[0] == 0
    pdf = tmp_path / "day.pdf"
    assert (
        floor(floor_data, "report", "--table", "T01", "--date", "2026-12-01", "--pdf", str(pdf))[0]
        == 0
    )
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 2000
    status, _ = floor(floor_data, "evidence", "--table", "T02", "--round", "1", "--out", str(out))
    assert status == 2  # not an empty directory


def test_a_round_left_unfinished_by_a_silent_table_is_not_in_play_later(
    floor_data: FloorData, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table that stopped mid-round: its round is in play just after its last event, and not
    at a time after the table went silent (the answer says so and how to see the round)."""
    from controller.floor.generate import Shift

    events = list(Shift("T05", seed=15, start=support.T01_START, vocabulary=True).events(2))
    store = f"sqlite:///{floor_data.tmp / 'T05.db'}"
    # The table stops two events after its last round's no more bets: mid-deal.
    cut = max(i for i, (e, _) in enumerate(events) if e.get("type") == "no_more_bets") + 3
    support.record(store, events[:cut])
    assert quiet(["ship", "--db", store, "--to", floor_data.url])[0] == 0
    doc = floor_json(floor_data, "round", "--table", "T05", "--round", "2")
    assert not (doc["ended"] or {}).get("utc"), doc["ended"]
    started = _at(doc["started"]["utc"])
    soon = (started + timedelta(seconds=1)).astimezone(NZ).strftime("%Y-%m-%d %H:%M:%S.%f")
    assert floor_json(floor_data, "round", "--table", "T05", "--at", soon)["round"] == 2
    later = (started + timedelta(hours=3)).astimezone(NZ).strftime("%Y-%m-%d %H:%M:%S")
    capsys.readouterr()
    status, _ = floor(floor_data, "round", "--table", "T05", "--at", later)
    out = capsys.readouterr().err
    assert status == 1 and "round 2 began" in out and "has not ended" in out, out
    assert "last heard" in out and "--round 2" in out, out
    # The day's report adds up: its dealers' rounds are its rounds ended; the round left in
    # play is counted apart, in the figures and in the PDF.
    day = started.astimezone(NZ).date().isoformat()
    report = floor_json(floor_data, "report", "--table", "T05", "--date", day)
    assert (report["rounds"], report["rounds_in_play"]) == (1, 1)
    assert sum(d["rounds"] for d in report["dealers"]) == report["rounds"]
    assert sum(d["in_play"] for d in report["dealers"]) == report["rounds_in_play"]
    from controller.floor.pdf import report_story

    story = report_story(report)
    words = " ".join(getattr(f, "text", "") for f in story)
    tables = [f for f in story if hasattr(f, "_cellvalues")]
    cells = [str(getattr(c, "text", c)) for t in tables for row in t._cellvalues for c in row]
    assert any("1 in play" in c for c in cells), (words, cells)
    assert "in play" in cells and "acknowledged" in cells, cells
