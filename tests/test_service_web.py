"""The dealer's screen API: taps reach the engine (and only taps that are open), supervisor
actions need a PIN and name the supervisor, the screen is pushed after every event."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from controller.service.app import Table, open_table
from controller.service.pin import hash_pin
from controller.service.web import create_app
from controller.store.repository import Store

TABLE_LINE: dict[str, Any] = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "T07",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}
SUPERVISORS = {"jsmith": hash_pin("2468", iterations=1000)}
WS = "ws://127.0.0.1:8080/ws"


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = open_table(
        TABLE_LINE, f"sqlite:///{tmp_path / 'audit.db'}", SUPERVISORS, pin_max_attempts=3
    )
    yield t
    t.close()


@pytest.fixture
def client(table: Table) -> Iterator[TestClient]:
    with TestClient(create_app(table.service, table.guard), base_url="http://127.0.0.1:8080") as c:
        yield c


def stored(table: Table) -> list[dict[str, Any]]:
    return [r.event() for r in table.store.records("T07")][1:]


def tap(client: TestClient, event: dict[str, Any], seq: int | None = None) -> Any:
    if seq is None:
        seq = client.get("/api/state").json()["seq"]
    return client.post("/api/event", json={"event": event, "seq": seq})


def deal_to_play(table: Table) -> None:
    """Box 2 (ann, $20) holds 9-7 against the dealer's 6: ann to decide."""
    s = table.service
    s.submit({"type": "shuffle", "decks": 6, "cut_card": 200}, source="dealer")
    s.submit({"type": "bet", "box": 2, "player": "ann", "amount": 20}, source="camera")
    s.submit({"type": "no_more_bets"}, source="dealer")
    for card in ("9S", "6H", "7D"):
        s.submit({"type": "card", "card": card}, source="shoe")


def test_a_dealers_tap_reaches_the_engine_and_the_audit_log(
    table: Table, client: TestClient
) -> None:
    deal_to_play(table)
    state = client.get("/api/state").json()
    assert {d["action"] for d in state["due"]["decisions"]} >= {"stand", "double"}
    box2 = next(b for b in state["boxes"] if b["box"] == 2)
    assert box2["hands"][0]["cards"] == ["9S", "7D"] and box2["hands"][0]["total"] == 16
    r = tap(client, {"type": "stand", "box": 2})
    assert r.status_code == 200, r.text
    assert stored(table)[-1]["type"] == "stand"
    assert stored(table)[-1]["source"] == "dealer"
    assert client.get("/api/state").json()["due"]["next_card"] == {"to": "dealer"}


def test_a_decision_that_is_not_open_is_refused_and_not_recorded(
    table: Table, client: TestClient
) -> None:
    deal_to_play(table)
    before = len(stored(table))
    for event in (
        {"type": "stand", "box": 5},  # nobody plays box 5
        {"type": "split", "box": 2},  # 9-7 is not a pair
        {"type": "rescue", "box": 2, "player": "ann"},  # nothing doubled
    ):
        r = tap(client, event)
        assert r.status_code == 409, event
        assert "not open" in r.json()["error"]
    assert len(stored(table)) == before


def test_a_tap_on_a_screen_the_table_has_moved_past_is_refused(
    table: Table, client: TestClient
) -> None:
    deal_to_play(table)
    seq = client.get("/api/state").json()["seq"]
    table.service.submit({"type": "card", "card": "2C"}, source="shoe")  # a hit, meanwhile
    r = tap(client, {"type": "stand", "box": 2}, seq=seq)
    assert r.status_code == 409
    assert "moved on" in r.json()["error"]
    assert stored(table)[-1]["type"] == "card"


def test_the_dealer_cannot_take_supervisor_actions(table: Table, client: TestClient) -> None:
    deal_to_play(table)
    for kind in ("void", "reshuffle_discards"):
        r = tap(client, {"type": kind})
        assert r.status_code == 422, kind
        assert "not a tap this screen takes" in r.json()["error"]
    # A card or a wager by hand is the dealer's only in manual mode, which is off.
    for event in (
        {"type": "card", "card": "5S"},
        {"type": "bet", "box": 3, "player": "ann", "amount": "10"},
    ):
        r = tap(client, event)
        assert r.status_code == 409 and "manual mode" in r.json()["error"], event
    r = client.post("/api/supervisor/event", json={"event": {"type": "void"}})
    assert r.status_code == 401
    assert stored(table)[-1]["type"] == "card"


def test_a_wager_the_working_camera_cannot_read_is_the_dealers_to_key_in(
    table: Table, client: TestClient
) -> None:
    service = table.service
    service.submit({"type": "shuffle", "decks": 6, "cut_card": 200}, source="dealer")
    service.set_device("camera", "ok")
    service.camera_unsure({3: "a chip's colour is unclear"})
    state = client.get("/api/state").json()
    assert [b["unsure"] for b in state["boxes"]][1:4] == [None, "a chip's colour is unclear", None]
    r = tap(client, {"type": "bet", "box": 3, "player": "ann", "amount": "10"})
    assert r.status_code == 200, r.text
    bet = stored(table)[-1]
    assert (bet["type"], bet["box"], bet["source"]) == ("bet", 3, "manual")
    assert (
        bet["note"] == "entered by hand: the camera cannot read box 3 (a chip's colour is unclear)"
    )
    # A box the camera reads is the camera's; and with the camera down, manual mode is the way.
    r = tap(client, {"type": "bet", "box": 4, "player": "bob", "amount": "10"})
    assert r.status_code == 409
    assert "the chip camera, which reads box 4" in r.json()["error"]
    service.set_device("camera", "fault", "frame is black")
    r = tap(client, {"type": "bet", "box": 3, "player": "ann", "amount": "20"})
    assert r.status_code == 409
    assert r.json()["error"] == (
        "wagers come from the chip camera: a supervisor puts it in manual mode"
    )
    assert stored(table)[-1] == bet


def login(client: TestClient, pin: str) -> Any:
    return client.post("/api/supervisor/login", json={"supervisor": "jsmith", "pin": pin})


def test_supervisor_actions_are_recorded_naming_the_supervisor(
    table: Table, client: TestClient
) -> None:
    deal_to_play(table)
    r = login(client, "2468")
    assert r.status_code == 200
    token = r.json()["token"]
    headers = {"x-supervisor-token": token}
    # A misread from the shoe, corrected by hand.
    table.service.submit({"type": "misread", "raw": "K7Q2M9-?S"}, source="shoe")
    misread_seq = table.service.seq
    assert [m["seq"] for m in client.get("/api/state").json()["misreads"]] == [misread_seq]
    r = client.post(
        "/api/supervisor/event",
        json={"event": {"type": "card", "card": "5S", "correction_of": misread_seq}},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    last = stored(table)[-1]
    assert last == {**last, "type": "card", "card": "5S", "correction_of": misread_seq,
                    "actor": "jsmith", "source": "manual"}  # fmt: skip
    assert client.get("/api/state").json()["misreads"] == []
    # A correction must name a misread that awaits one.
    r = client.post(
        "/api/supervisor/event",
        json={"event": {"type": "card", "card": "5S", "correction_of": 2}},
        headers=headers,
    )
    assert r.status_code == 409
    # Void the round.
    r = client.post("/api/supervisor/event", json={"event": {"type": "void"}}, headers=headers)
    assert r.status_code == 200
    assert r.json()["settled"]["status"] == "void"
    assert stored(table)[-1]["actor"] == "jsmith"
    # A wager entered by hand (the camera is down) is marked manual.
    r = client.post(
        "/api/supervisor/event",
        json={"event": {"type": "bet", "box": 4, "player": "bob", "amount": "15"}},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    assert stored(table)[-1]["source"] == "manual" and stored(table)[-1]["actor"] == "jsmith"
    # After logging out the token is worthless.
    client.post("/api/supervisor/logout", headers=headers)
    r = client.post("/api/supervisor/event", json={"event": {"type": "void"}}, headers=headers)
    assert r.status_code == 401


def test_pin_attempts_are_rate_limited(table: Table, client: TestClient) -> None:
    assert login(client, "1111").status_code == 401
    assert login(client, "2222").status_code == 401
    r = login(client, "3333")
    assert r.status_code == 429
    assert int(r.headers["retry-after"]) >= 60
    r = login(client, "2468")  # the right PIN, during the lockout
    assert r.status_code == 429
    assert "token" not in r.json()


def test_the_screen_is_pushed_after_every_event(table: Table, client: TestClient) -> None:
    with client.websocket_connect(WS) as ws:
        first = ws.receive_json()
        assert first["table"]["table_id"] == "T07"
        table.service.submit({"type": "shuffle", "decks": 6, "cut_card": 200}, source="dealer")
        pushed = ws.receive_json()
        assert pushed["seq"] == first["seq"] + 1
        assert pushed["recent"][-1]["type"] == "shuffle"


def test_pages_from_other_origins_cannot_drive_the_table(client: TestClient) -> None:
    with (
        pytest.raises(WebSocketDisconnect),
        client.websocket_connect(WS, headers={"origin": "http://evil.example"}) as ws,
    ):
        ws.receive_json()
    r = client.post(
        "/api/event",
        content='{"event": {"type": "no_more_bets"}, "seq": 0}',
        headers={"content-type": "text/plain"},
    )
    assert r.status_code == 415


def test_a_flag_is_shown_with_its_rule_number_and_words(table: Table, client: TestClient) -> None:
    deal_to_play(table)
    # A wager placed after no more bets and the first card: 5.5.
    table.service.submit({"type": "bet", "box": 5, "player": "bob", "amount": 10}, source="camera")
    flags = client.get("/api/state").json()["flags"]
    assert [f["rule"] for f in flags] == ["5.5"]
    assert flags[0]["words"] == table.service.setup.rules.words("5.5") != ""
    assert flags[0]["round"] == 1


def test_a_restarted_service_shows_the_same_table(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    first = open_table(TABLE_LINE, url, SUPERVISORS)
    deal_to_play(first)
    first.service.submit({"type": "misread", "raw": "??"}, source="shoe")
    before = first.service.snapshot()
    first.close()
    again = open_table(TABLE_LINE, url, SUPERVISORS)
    try:
        after = again.service.snapshot()
        for key in ("seq", "due", "boxes", "misreads", "flags"):
            assert after[key] == before[key], key
        assert [r["seq"] for r in after["recent"]] == [r["seq"] for r in before["recent"]]
    finally:
        again.close()
    with Store.open(url) as store:
        assert len(store.records("T07")) == before["seq"] + 1


def test_an_audit_store_fault_is_shown_and_the_table_goes_on(
    table: Table, client: TestClient, tmp_path: Path
) -> None:
    import sqlite3
    import time

    deal_to_play(table)
    blocker = sqlite3.connect(tmp_path / "audit.db", timeout=0.1)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the database
    try:
        r = tap(client, {"type": "stand", "box": 2})
        assert r.status_code == 200  # durable in the local spool, so acknowledged
        state = client.get("/api/state").json()
        assert state["devices"]["store"]["state"] == "fault"
        assert "1 events safe in the spool" in state["devices"]["store"]["reason"]
        assert state["store"]["halted"] is False
        assert state["due"]["next_card"] == {"to": "dealer"}
    finally:
        blocker.rollback()
        blocker.close()
    deadline = time.monotonic() + 10
    while client.get("/api/state").json()["devices"]["store"]["state"] != "ok":
        assert time.monotonic() < deadline, "the store did not recover"
        time.sleep(0.05)
    assert stored(table)[-1]["type"] == "stand"
