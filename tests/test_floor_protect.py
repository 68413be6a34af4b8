"""Game protection on the floor (issue 29): the pages, the live feed, the evidence report.

A table plays a simulated session (``benchmarks/protect_population.py``: a counter with a 1-12
spread on box 1) recorded by the table's own recorder with a signing key, one round a minute
from 20:00 NZDT on 1 December 2026, and shipped to a PostgreSQL floor of its own. The floor's
analysis must find what ``floorctl protect`` finds in the same events read from the file;
the live feed must push a flag raised after the page opened, and again when acknowledged; the
evidence report must hold proofs that ``floorctl verify-proof`` accepts with the table's key.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import test_floor_support as support
from test_floor_support import quiet

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.protect_population import PLAYER, play_session  # noqa: E402
from controller.cli import main  # noqa: E402
from controller.floor import users  # noqa: E402
from controller.floor.audit import Who  # noqa: E402
from controller.floor.schema import Floor, open_floor  # noqa: E402
from controller.floor.web import FloorServer  # noqa: E402
from controller.protect.analysis import analyse  # noqa: E402
from controller.protect.record import read_table  # noqa: E402
from controller.store.keys import load_signing_key  # noqa: E402
from controller.store.recorder import Recorder  # noqa: E402
from controller.store.repository import Store  # noqa: E402

START = datetime(2026, 12, 1, 7, 0, tzinfo=UTC)  # 20:00 NZDT
PASSWORDS = {"sally": "watching the floor 1", "pete": "pit boss password 2"}


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _timed(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """Each event at its round's minute (the population writes a time on each round's first
    event), a few milliseconds apart within it."""
    out = []
    at = START
    first: datetime | None = None
    for i, e in enumerate(events):
        e = dict(e)
        if "time" in e:
            t = datetime.fromisoformat(e.pop("time"))
            first = first or t
            at = START + (t - first)
        out.append((e, _iso(at + timedelta(milliseconds=i % 50000))))
    return out


class Table:
    def __init__(self, tmp: Path) -> None:
        _, events = play_session("pontoon-nz-2000", "counter-1-12", 400, "floor", events=True)
        events[0]["table_id"] = "P07"
        self.events = events
        self.timed = _timed(events)
        assert main(["keygen", "--out", str(tmp / "key")]) == 0
        self.key = tmp / "key" / "table.key"
        self.public = tmp / "key" / "table.pub"
        self.store = f"sqlite:///{tmp / 'P07.db'}"
        self.recorder: Recorder | None = None
        self.record(self.timed)

    def record(self, timed: list[tuple[dict[str, Any], str]]) -> None:
        with Store.open(self.store) as store:
            rec = Recorder.open(
                store,
                timed[0][0],
                spool=None,
                retry_every=None,
                clock=lambda: timed[0][1],
                signing_key=load_signing_key(self.key),
            )
            try:
                for event, at in timed[rec.seq + 1 :]:
                    rec.record(event, recorded_at=at)
            finally:
                rec.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Floor, str, Table, str]]:
    tmp = tmp_path_factory.mktemp("protect-floor")
    table = Table(tmp)
    for url in support.pg_schema():
        assert quiet(["ship", "--db", table.store, "--to", url])[0] == 0
        floor = open_floor(url)
        who = Who("test-admin", "cli", "cli")
        users.add_user(floor, who, "sally", "surveillance", PASSWORDS["sally"])
        users.add_user(floor, who, "pete", "pit", PASSWORDS["pete"])
        server = FloorServer(floor, "127.0.0.1", 0, poll=0.3)
        with server.running() as base:
            yield floor, base, table, url
        floor.close()


@contextlib.contextmanager
def client(base: str, name: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=300) as c:
        r = c.post("/login", data={"name": name, "password": PASSWORDS[name], "next": "/"})
        assert r.status_code == 303
        yield c


def _indexed(base: str) -> None:
    with client(base, "sally") as c:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            doc = c.get("/api/floor").json()
            if any(t["table"] == "P07" and t["last_event"]["local"] for t in doc["tables"]):
                return
            time.sleep(0.3)
    pytest.fail("the floor never indexed table P07")


def test_the_floor_finds_what_the_file_shows(served: tuple[Floor, str, Table, str]) -> None:
    _, base, table, _ = served
    _indexed(base)
    with client(base, "sally") as c:
        r = c.get("/api/protect", params={"date": "2026-12-01"})
        assert r.status_code == 200, r.text
        doc = r.json()
    from_file = analyse([read_table(table.events)])
    mine = {p["player"]: p for p in doc["players"]}
    theirs = {p["player"]: p for p in from_file["players"]}
    assert mine.keys() == theirs.keys() == {PLAYER, "filler"}
    for name in mine:
        for test in ("bet_against_count", "knew_next_card", "luck"):
            assert mine[name][test]["z"] == theirs[name][test]["z"], (name, test)
        assert mine[name]["verdict"]["level"] == theirs[name]["verdict"]["level"]
    # 400 rounds of a 1-12 counter: at least watched, for the bets that follow the count.
    assert mine[PLAYER]["verdict"]["level"] in ("watch", "alert")
    assert any(r.startswith("bet_count") for r in mine[PLAYER]["verdict"]["reasons"])
    assert mine["filler"]["verdict"]["level"] == "clear"
    assert {d["dealer"] for d in doc["dealers"]} == {"D1", "D2", "D3"}
    spans = {(h["table_id"], h["span"]) for h in doc["hold_to_date"]}
    assert ("P07", "day") in spans and ("P07", "year to date") in spans


def test_pages_and_roles(served: tuple[Floor, str, Table, str]) -> None:
    _, base, _, _ = served
    _indexed(base)
    with client(base, "sally") as c:
        page = c.get("/protect", params={"date": "2026-12-01"})
        assert page.status_code == 200 and "protect-players" in page.text
        assert PLAYER in page.text and "bet_count" in page.text
        player = c.get(
            "/protect/player", params={"table": "P07", "player": PLAYER, "date": "2026-12-01"}
        )
        assert player.status_code == 200 and "<svg" in player.text
        dealer = c.get("/protect/dealer", params={"dealer": "D2", "date": "2026-12-01"})
        assert dealer.status_code == 200 and "scorecard" in dealer.text
        missing = c.get(
            "/protect/player", params={"table": "P07", "player": "nobody", "date": "2026-12-01"}
        )
        assert missing.status_code == 404 and "nobody" in missing.text
    with client(base, "pete") as c:
        assert c.get("/protect", params={"date": "2026-12-01"}).status_code == 403


def test_evidence_report_carries_proofs_the_key_accepts(
    served: tuple[Floor, str, Table, str], tmp_path: Path
) -> None:
    _, base, table, _ = served
    _indexed(base)
    with client(base, "sally") as c:
        r = c.get(
            "/protect/evidence", params={"table": "P07", "player": PLAYER, "date": "2026-12-01"}
        )
    assert r.status_code == 200, r.text[:500]
    z = zipfile.ZipFile(io.BytesIO(r.content))
    names = set(z.namelist())
    assert {"report.pdf", "session.json", "evidence.json"} <= names
    assert z.read("report.pdf").startswith(b"%PDF")
    proofs = sorted(n for n in names if n.startswith("proofs/round-"))
    assert proofs, "no round proof in the evidence"
    evidence = json.loads(z.read("evidence.json"))
    assert evidence["asked_by"]["name"] == "sally"
    for name in proofs[:3]:
        path = tmp_path / Path(name).name
        path.write_bytes(z.read(name))
        assert main(["verify-proof", str(path), "--key", str(table.public)]) == 0
    # A card changed in a proven round fails it.
    doc = json.loads(z.read(proofs[0]))
    for ev in doc["events"]:
        if ev["type"] == "card":
            card = json.loads(ev["body"])["card"]
            ev["body"] = ev["body"].replace(card, "2S" if card != "2S" else "3S", 1)
            break
    bad = tmp_path / "forged.json"
    bad.write_text(json.dumps(doc))
    assert main(["verify-proof", str(bad), "--key", str(table.public)]) != 0


def test_live_feed_pushes_a_flag_and_its_acknowledgement(
    served: tuple[Floor, str, Table, str],
) -> None:
    _, base, table, url = served
    _indexed(base)
    received: list[dict[str, Any]] = []
    with client(base, "sally") as c, c.stream("GET", "/api/protect/feed") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        # Raise a flag now: a wager above the table's maximum, then its acknowledgement.
        now = datetime.now(UTC)
        over = {"type": "bet", "box": 3, "player": "whale", "amount": 5000}
        seq = len(table.timed)  # the store numbers the table line 0
        ack = {"type": "acknowledge", "flag_event": seq, "rule": "limits", "actor": "sup-anna"}
        timed = [*table.timed, (over, _iso(now)), (ack, _iso(now + timedelta(seconds=2)))]
        table.record(timed)
        assert quiet(["ship", "--db", table.store, "--to", url])[0] == 0
        deadline = time.monotonic() + 60
        event = None
        for line in lines:
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "flag":
                item = json.loads(line[6:])
                if item["event"] == seq:
                    received.append(item)
                    if item["acknowledged_by"]:
                        break
            if time.monotonic() > deadline:
                break
    assert received, "the feed never pushed the flag"
    assert received[0]["rule"] == "limits" and received[0]["table_id"] == "P07"
    assert received[-1]["acknowledged_by"] == "sup-anna" and received[-1]["acknowledged_at"]


def test_the_feed_s_verdicts_name_the_counter(served: tuple[Floor, str, Table, str]) -> None:
    floor, base, _, _ = served
    _indexed(base)
    from controller.floor.protect import alerts_now

    day = floor.settings.gaming_day(floor.settings.parse_date("2026-12-01"))
    items = alerts_now(floor, day)
    players = [i for i in items if i["kind"] == "player"]
    assert [(i["table_id"], i["player"]) for i in players] == [("P07", PLAYER)]
    assert players[0]["level"] in ("watch", "alert") and players[0]["round"] == 400
    assert players[0]["false_alarm_rate"] is not None
