"""`floorctl floor pit-report`: every table's money for a gaming day, checked against sums taken
straight from the events each table recorded (the chips of its counts, its slips, its drop) and
the rounds' nets of `floorctl replay` of each table's own export.

Two tables play a gaming day with their trays (controller.floor.generate, `tray=True`): T31
without fault; T32 with one $75 mispay in round 40, a fill signed by one person and a credit
reusing the fill's slip number. Both are recorded by their own recorders (T31 with a signing
key) and shipped to a floor of their own.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import test_floor_support as support
from test_floor_support import quiet

from controller.cli import main
from controller.floor.generate import Shift
from controller.store.keys import load_signing_key
from controller.store.recorder import Recorder
from controller.store.repository import Store

START = datetime(2026, 12, 1, 6, 30, tzinfo=UTC)  # 19:30 on 1 December, Auckland
MISPAY = Decimal(75)


@dataclass
class Pit:
    url: str
    events: dict[str, list[tuple[dict[str, Any], str]]]
    oracle: dict[str, dict[str, Any]]
    tmp: Path


def _record(store_url: str, events: list[tuple[dict[str, Any], str]], key: Path | None) -> None:
    with Store.open(store_url) as store:
        rec = Recorder.open(
            store,
            events[0][0],
            spool=None,
            retry_every=None,
            clock=lambda: events[0][1],
            signing_key=None if key is None else load_signing_key(key),
        )
        try:
            for event, at in events[1:]:
                rec.record(event, recorded_at=at)
        finally:
            rec.close()


def _bad_slips(events: list[tuple[dict[str, Any], str]]) -> list[tuple[dict[str, Any], str]]:
    """A fill signed by one person and a credit reusing its number, just after the opener (the
    credit takes back what the fill brought: the tray is not changed)."""
    at = next(i for i, (e, _) in enumerate(events) if e.get("kind") == "opener")
    when = events[at][1]
    fill = {"type": "fill", "slip": 777, "chips": {"1000": 5}, "by": ["r.hemi"]}
    credit = {"type": "credit", "slip": 777, "chips": {"1000": 5}, "by": ["r.hemi", "s.kahu"]}
    return [*events[: at + 1], (fill, when), (credit, when), *events[at + 1 :]]


@pytest.fixture(scope="module")
def pit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pit]:
    tmp = tmp_path_factory.mktemp("pit")
    assert main(["keygen", "--out", str(tmp / "key")]) == 0
    t31 = list(Shift("T31", seed=31, start=START, tray=True, open_hours=8).events(120))
    t32 = Shift(
        "T32",
        game="blackjack-nz-1994",
        seed=32,
        start=START,
        tray=True,
        open_hours=8,
        mispay=(40, MISPAY),
    )
    events = {"T31": t31, "T32": _bad_slips(list(t32.events(120)))}
    oracle = {}
    for url in support.pg_schema():
        for table_id, evs in events.items():
            store = f"sqlite:///{tmp / f'{table_id}.db'}"
            key = tmp / "key" / "table.key" if table_id == "T31" else None
            _record(store, evs, key)
            assert quiet(["ship", "--db", store, "--to", url])[0] == 0
            out = tmp / f"export-{table_id}"
            assert quiet(["export", "--db", store, "--out", str(out)])[0] == 0
            status, text = quiet(["replay", str(out / table_id / "scenario.jsonl"), "--json"])
            assert status == 0
            oracle[table_id] = json.loads(text)
        yield Pit(url, events, oracle, tmp)


def _chips(chips: dict[str, int]) -> Decimal:
    return sum((Decimal(d) * n for d, n in chips.items()), Decimal(0))


def _by_hand(evs: list[tuple[dict[str, Any], str]], rounds: list[dict[str, Any]]) -> dict:
    """The day's figures from the recorded events alone, and the house net from the replay."""
    counts = [_chips(e["chips"]) for e, _ in evs if e["type"] == "tray_count"]
    fills = sum((_chips(e["chips"]) for e, _ in evs if e["type"] == "fill"), Decimal(0))
    credits = sum((_chips(e["chips"]) for e, _ in evs if e["type"] == "credit"), Decimal(0))
    drop = sum((Decimal(e["amount"]) for e, _ in evs if e["type"] == "drop_count"), Decimal(0))
    buy_ins = sum((Decimal(e["amount"]) for e, _ in evs if e["type"] == "buy_in"), Decimal(0))
    net = -sum((Decimal(s["net"]) for r in rounds for s in r["settlements"]), Decimal(0))
    win = counts[-1] - counts[0] + credits - fills + drop
    return {
        "opening": counts[0],
        "closing": counts[-1],
        "fills": fills,
        "credits": credits,
        "drop": drop,
        "buy_ins": buy_ins,
        "win": win,
        "house_net": net,
    }


def _report(pit: Pit, *args: str) -> dict[str, Any]:
    status, out = quiet(
        [
            "floor",
            "pit-report",
            "--db",
            pit.url,
            "--date",
            "2026-12-01",
            "--prepared-by",
            "pm.rangi",
            "--json",
            *args,
        ]
    )
    assert status == 0, out
    return json.loads(out)


def test_each_tables_day_is_the_standard_formula_over_its_own_events(pit: Pit) -> None:
    doc = _report(pit)
    assert [t["table"] for t in doc["tables"]] == ["T31", "T32"]
    for t in doc["tables"]:
        want = _by_hand(pit.events[t["table"]], pit.oracle[t["table"]]["rounds"])
        day = t["window"]
        for name in ("fills", "credits", "drop", "buy_ins", "win", "house_net"):
            assert Decimal(day[name]) == want[name], (t["table"], name)
        assert Decimal(day["opening_count"]) == want["opening"]
        assert Decimal(day["closing_count"]) == want["closing"]
        assert day["drop_counted"] is True and day["drop"] == day["buy_ins"]
        hold = (want["win"] / want["drop"] * 100).quantize(Decimal("0.01"))
        assert day["hold_pct"] == f"{hold}%"
        # The month and the year so far are this one day.
        assert t["month_to_date"] == day and t["year_to_date"] == day
    t31, t32 = doc["tables"]
    assert Decimal(t31["window"]["difference"]) == 0
    assert Decimal(t32["window"]["difference"]) == -MISPAY  # the mispay, to the cent
    assert Decimal(t32["window"]["tray_difference"]) == -MISPAY
    total = doc["totals"]["window"]
    for name in ("drop", "fills", "credits", "win", "house_net", "difference"):
        parts = sum(Decimal(t["window"][name]) for t in doc["tables"])
        assert Decimal(total[name]) == parts, name


def test_the_dealers_and_the_mispay_found_while_one_dealt(pit: Pit) -> None:
    doc = _report(pit)
    rounds = sum(len(pit.oracle[t]["rounds"]) for t in ("T31", "T32"))
    assert sum(d["rounds"] for d in doc["dealers"]) == rounds
    house = sum(Decimal(d["house_net"]) for d in doc["dealers"])
    assert house == sum(Decimal(t["window"]["house_net"]) for t in doc["tables"])
    assert sum(Decimal(d["tray_difference"]) for d in doc["dealers"]) == -MISPAY


def test_the_slip_register_names_the_slip_used_twice_and_the_one_signed_once(pit: Pit) -> None:
    reg = _report(pit)["slip_register"]
    assert reg["used_twice"] == ["777"]
    assert reg["unsigned"] == ["777"]
    flagged = {(s["table"], s["kind"]): s["problems"] for s in reg["slips"] if s["problems"]}
    assert set(flagged) == {("T32", "fill"), ("T32", "credit")}
    assert any("signed by 1" in p for p in flagged[("T32", "fill")])
    assert not any("signed by" in p for p in flagged[("T32", "credit")])


def test_the_report_says_who_prepared_it_and_what_it_was_verified_against(pit: Pit) -> None:
    doc = _report(pit)
    assert doc["prepared_by"] == "pm.rangi"
    heads = {h["table"]: h for h in doc["verified_against"]}
    assert heads["T32"]["head"] is None and heads["T32"]["signature"] == "no signed head"
    t31 = heads["T31"]
    assert t31["head"] is not None and re.fullmatch(r"[0-9a-f]{64}", t31["head"]["root"])
    assert t31["signature"] in ("valid", "no registered key")


def _pdf_text(path: Path) -> str:
    data = path.read_bytes()
    assert data.startswith(b"%PDF")
    out = []
    for m in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
        raw = m.group(1).strip()
        if raw.endswith(b"~>"):  # reportlab's ASCII85, then Flate
            raw = base64.a85decode(raw[:-2])
        try:
            out.append(zlib.decompress(raw).decode("latin-1"))
        except zlib.error:
            out.append(raw.decode("latin-1"))
    return "".join(out)


def test_the_text_and_the_pdf_show_dollars_and_hold_as_win_over_drop(
    pit: Pit, tmp_path: Path
) -> None:
    status, text = quiet(
        [
            "floor",
            "pit-report",
            "--db",
            pit.url,
            "--date",
            "2026-12-01",
            "--pdf",
            str(tmp_path / "pit.pdf"),
        ]
    )
    assert status == 0
    assert "hold % = win / drop" in text and "reviewed by" in text
    doc = _report(pit)
    win = Decimal(doc["tables"][1]["window"]["win"])
    shown = f"-${abs(win):,.2f}" if win < 0 else f"${win:,.2f}"
    assert shown in text
    pdf = _pdf_text(tmp_path / "pit.pdf")
    assert "reviewed by" in pdf and "prepared by" in pdf and "Hold % = win" in pdf
    assert shown in pdf


def test_a_shift_without_its_drop_counted_says_the_buy_ins_stand_for_it(pit: Pit) -> None:
    status, out = quiet(
        [
            "floor",
            "pit-report",
            "--db",
            pit.url,
            "--date",
            "2026-12-01",
            "--shift",
            "night",
            "--json",
        ]
    )
    assert status == 0
    doc = json.loads(out)
    for t in doc["tables"]:
        f = t["window"]
        assert f["drop_counted"] is False and f["drop"] == f["buy_ins"]


def test_a_malformed_date_is_exit_2() -> None:
    status = main(
        ["floor", "pit-report", "--db", "postgresql://nobody@127.0.0.1:1/x", "--date", "2026-13-45"]
    )
    assert status == 2


def test_the_pit_page_and_its_pdf_for_a_pit_manager(pit: Pit) -> None:
    import httpx

    from controller.floor import users
    from controller.floor.audit import Who
    from controller.floor.schema import open_floor
    from controller.floor.web import FloorServer

    password = "pit boss password 2"
    floor = open_floor(pit.url)
    try:
        users.add_user(floor, Who("test-admin", "cli", "cli"), "pete", "pit", password)
        server = FloorServer(floor, "127.0.0.1", 0, poll=0.3)
        with server.running() as base, httpx.Client(base_url=base, timeout=120) as c:
            r = c.post("/login", data={"name": "pete", "password": password, "next": "/"})
            assert r.status_code == 303
            page = c.get("/pit", params={"date": "2026-12-01"})
            assert page.status_code == 200
            doc = _report(pit)
            for t in doc["tables"]:
                win = Decimal(t["window"]["win"])
                shown = f"-${abs(win):,.2f}" if win < 0 else f"${win:,.2f}"
                assert f'data-table="{t["table"]}"' in page.text and shown in page.text
            assert "Hold % = win ÷ drop" in page.text and "777" in page.text
            pdf = c.get("/pit.pdf", params={"date": "2026-12-01"})
            assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
            bad = c.get("/pit", params={"date": "2026-02-30"})
            assert bad.status_code == 400 and "Traceback" not in bad.text
    finally:
        floor.close()
