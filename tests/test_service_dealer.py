"""The dealer on duty, flags that hold the table until seen, play by hand, and the day's
opening and closing, through the screen's API with dealer sign-in configured."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_server import DEALER_PIN, SUPERVISOR_PIN, TABLE_LINE, pin_books

from controller.cards import deck
from controller.service.app import Table, open_table
from controller.service.web import create_app


def opened(tmp_path: Path) -> Table:
    supervisors, dealers = pin_books(True)
    return open_table(
        TABLE_LINE,
        f"sqlite:///{tmp_path / 'audit.db'}",
        supervisors,
        dealers={**dealers, "D1042": dealers["ann"]},
    )


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = opened(tmp_path)
    yield t
    t.close()


@pytest.fixture
def client(table: Table) -> Iterator[TestClient]:
    with TestClient(create_app(table.service, table.guard), base_url="http://127.0.0.1:8080") as c:
        yield c


def stored(table: Table) -> list[dict[str, Any]]:
    return [r.event() for r in table.store.records("T07")][1:]


def tap(client: TestClient, event: dict[str, Any]) -> Any:
    seq = client.get("/api/state").json()["seq"]
    return client.post("/api/event", json={"event": event, "seq": seq})


def sign_in(client: TestClient, who: str = "ann", pin: str = DEALER_PIN) -> Any:
    return client.post("/api/dealer/signin", json={"dealer": who, "pin": pin})


def supervisor(client: TestClient) -> dict[str, str]:
    r = client.post("/api/supervisor/login", json={"supervisor": "JSmith", "pin": SUPERVISOR_PIN})
    assert r.status_code == 200, r.text
    assert r.json()["supervisor"] == "jsmith"  # the id as the config spells it
    return {"x-supervisor-token": r.json()["token"]}


def sup(client: TestClient, headers: dict[str, str], event: dict[str, Any]) -> Any:
    return client.post("/api/supervisor/event", json={"event": event}, headers=headers)


def deal_to_play(table: Table) -> None:
    """Box 2 (bob, $20) holds 9-7 against the dealer's 6: bob to decide."""
    s = table.service
    s.submit({"type": "bet", "box": 2, "player": "bob", "amount": 20}, source="camera")
    s.submit({"type": "no_more_bets"}, source="dealer", actor="ann")
    for card in ("9S", "6H", "7D"):
        s.submit({"type": "card", "card": card}, source="shoe")


def test_a_dealer_signs_in_and_every_tap_names_them(table: Table, client: TestClient) -> None:
    shuffle = {"type": "shuffle", "decks": 6, "cut_card": 200}
    r = tap(client, shuffle)
    assert r.status_code == 403 and "sign in" in r.json()["error"]
    assert stored(table) == []
    assert client.get("/api/state").json()["on_duty"] == {"dealer": None, "sign_in": True}
    assert sign_in(client, pin="0000").status_code == 401
    r = sign_in(client)
    assert r.status_code == 200 and r.json()["dealer"] == "ann"
    assert stored(table)[-1] == {**stored(table)[-1], "type": "dealer", "dealer": "ann",
                                 "actor": "ann", "source": "dealer"}  # fmt: skip
    assert tap(client, shuffle).status_code == 200
    deal_to_play(table)
    assert tap(client, {"type": "stand", "box": 2}).status_code == 200
    assert stored(table)[-1]["actor"] == "ann" and stored(table)[-1]["type"] == "stand"
    # Another dealer takes over mid-round: a `dealer` event; the round names both.
    assert sign_in(client, "d1042").json()["dealer"] == "D1042"
    assert stored(table)[-1]["dealer"] == "D1042"
    for card in ("KD", "4C"):  # the dealer's hand: 6-K 16, 4: 20
        table.service.submit({"type": "card", "card": card}, source="shoe")
    state = client.get("/api/state").json()
    assert state["last_round"]["dealers"] == ["ann", "D1042"]
    assert state["dealt_by"] == ["ann", "D1042"]
    assert state["on_duty"]["dealer"] == "D1042"


def test_a_flag_holds_the_dealers_taps_until_seen(table: Table, client: TestClient) -> None:
    sign_in(client)
    tap(client, {"type": "shuffle", "decks": 6, "cut_card": 200})
    deal_to_play(table)
    # A card found face up in the shoe (16.1): not dealt, and the dealer must see it.
    table.service.submit({"type": "card", "card": "5H", "face_up": True}, source="shoe")
    seq = table.service.seq
    state = client.get("/api/state").json()
    (alert,) = state["alerts"]
    assert (alert["rule"], alert["needs"], alert["seq"]) == ("16.1", "dealer", seq)
    assert alert["words"] == table.service.setup.rules.words("16.1")
    assert alert["direction"] == "Put the 5H in the discard rack: it is not dealt."
    assert state["blocked"] is True
    r = tap(client, {"type": "stand", "box": 2})
    assert r.status_code == 409 and r.json()["blocked"] and "16.1" in r.json()["error"]
    r = tap(client, {"type": "acknowledge", "flag_event": seq, "rule": "16.4"})
    assert r.status_code == 409  # no such flag waits
    r = tap(client, {"type": "acknowledge", "flag_event": seq, "rule": "16.1"})
    assert r.status_code == 200, r.text
    assert stored(table)[-1] == {**stored(table)[-1], "type": "acknowledge", "flag_event": seq,
                                 "rule": "16.1", "actor": "ann"}  # fmt: skip
    state = client.get("/api/state").json()
    assert state["alerts"] == [] and not state["blocked"]
    assert state["flags"][-1]["state"] == "done" and state["flags"][-1]["resolution"] == (
        "seen by ann"
    )
    assert tap(client, {"type": "stand", "box": 2}).status_code == 200


def test_a_misread_waits_for_a_supervisor_not_the_dealer(table: Table, client: TestClient) -> None:
    sign_in(client)
    tap(client, {"type": "shuffle", "decks": 6, "cut_card": 200})
    deal_to_play(table)
    table.service.submit({"type": "misread", "raw": "K7Q2M9-?S"}, source="shoe")
    seq = table.service.seq
    (alert,) = client.get("/api/state").json()["alerts"]
    assert alert["needs"] == "supervisor" and alert["case"] == "shoe:misread"
    assert "decks loaded" not in alert["words"]
    r = tap(client, {"type": "acknowledge", "flag_event": seq, "rule": "shoe"})
    assert r.status_code == 409 and "supervisor" in r.json()["error"]
    assert tap(client, {"type": "stand", "box": 2}).status_code == 409
    headers = supervisor(client)
    r = sup(client, headers, {"type": "card", "card": "2C", "correction_of": seq})
    assert r.status_code == 200, r.text
    state = client.get("/api/state").json()
    assert state["misreads"] == []
    misread = next(f for f in state["flags"] if f["seq"] == seq)
    assert misread["resolution"] == "corrected: 2C entered by a supervisor"
    assert misread["state"] == "done"
    # A void (16.5) is a supervisor's flag too: it holds the table until one resolves it.
    # (The card entered was box 2's first decision, unoffered surrender: 16.12, the dealer's.)
    assert [a["rule"] for a in client.get("/api/state").json()["alerts"]] == ["16.12"]
    r = sup(client, headers, {"type": "void", "box": 2})
    assert r.status_code == 200
    void_seq = r.json()["seq"]
    alert = client.get("/api/state").json()["alerts"][-1]
    assert alert["rule"] == "16.5" and alert["needs"] == "supervisor"
    assert "Return box 2's wagers" in alert["direction"]
    r = sup(client, headers, {"type": "acknowledge", "flag_event": void_seq, "rule": "16.5"})
    assert r.status_code == 200 and stored(table)[-1]["actor"] == "jsmith"
    assert [a["rule"] for a in client.get("/api/state").json()["alerts"]] == ["16.12"]


def test_a_restart_keeps_the_dealer_the_flags_waiting_and_manual_mode(tmp_path: Path) -> None:
    first = opened(tmp_path)
    with TestClient(create_app(first.service, first.guard), base_url="http://127.0.0.1") as c:
        sign_in(c)
        headers = supervisor(c)
        first.service.set_device("shoe", "fault", "port gone")
        r = sup(c, headers, {"type": "manual_mode", "device": "shoe", "on": True,
                             "reason": "shoe reader fault"})  # fmt: skip
        assert r.status_code == 200, r.text
        tap(c, {"type": "shuffle", "decks": 6, "cut_card": 200})
        first.service.submit({"type": "card", "card": "5H"}, source="shoe")  # 16.3: not due
        before = c.get("/api/state").json()
    first.close()
    again = opened(tmp_path)
    try:
        after = again.service.snapshot()
        for key in ("on_duty", "manual", "alerts", "blocked"):
            assert after[key] == before[key], key
        assert after["alerts"][0]["rule"] == "16.3"
        assert after["manual"]["shoe"]["reason"] == "shoe reader fault"
        assert after["manual"]["shoe"]["by"] == "a supervisor"
    finally:
        again.close()


def test_manual_mode_lets_the_dealer_enter_cards_and_wagers(
    table: Table, client: TestClient
) -> None:
    service = table.service
    sign_in(client)
    service.set_device("shoe", "off", "no shoe reader configured")
    service.set_device("camera", "ok")
    headers = supervisor(client)
    assert tap(client, {"type": "shuffle", "decks": 6, "cut_card": 200}).status_code == 200
    bet = {"type": "bet", "box": 1, "player": "box1", "amount": "25"}
    assert tap(client, bet).status_code == 409  # the camera works: wagers are its
    r = sup(client, headers, {"type": "manual_mode", "device": "camera", "on": True, "reason": "x"})
    assert r.status_code == 409 and "works" in r.json()["error"]
    r = sup(client, headers, {"type": "manual_mode", "device": "shoe", "on": True})
    assert r.status_code == 409 and "why" in r.json()["error"]
    r = sup(client, headers, {"type": "manual_mode", "device": "shoe", "on": True,
                              "reason": "no shoe reader at this table"})  # fmt: skip
    assert r.status_code == 200
    service.set_device("camera", "fault", "lens covered")
    sup(client, headers, {"type": "manual_mode", "device": "camera", "on": True, "reason": "dark"})
    assert tap(client, bet).status_code == 200
    assert tap(client, {"type": "no_more_bets"}).status_code == 200
    for card in ("9S", "6H", "7D"):
        assert tap(client, {"type": "card", "card": card}).status_code == 200
    records = stored(table)
    entries = [e for e in records if e["type"] in ("card", "bet")]
    assert [(e["source"], e["actor"]) for e in entries] == [("manual", "ann")] * 4
    assert [e["type"] for e in records if e["type"] == "manual_mode"] == ["manual_mode"] * 2
    assert client.get("/api/state").json()["boxes"][0]["hands"][0]["cards"] == ["9S", "7D"]
    # A card the dealer keys in is checked like one the reader sends.
    r = tap(client, {"type": "card", "card": "ZZ"})
    assert r.status_code == 400
    # The camera comes back: its manual mode ends by itself, recorded.
    service.set_device("camera", "ok")
    for _ in range(200):
        if "camera" not in service.manual:
            break
        import time

        time.sleep(0.01)
    assert "camera" not in service.manual
    last = [e for e in stored(table) if e["type"] == "manual_mode"][-1]
    assert (last["device"], last["on"], last["reason"], last["source"]) == (
        "camera",
        False,
        "device back",
        "service",
    )
    # The supervisor ends the shoe's manual mode: cards are the reader's again.
    r = sup(client, headers, {"type": "manual_mode", "device": "shoe", "on": False})
    assert r.status_code == 200
    assert tap(client, {"type": "card", "card": "2C"}).status_code == 409


def read_deck(table: Table, serial: str, skip: str = "") -> None:
    for card in deck("T"):
        if card != skip:
            table.service.submit({"type": "card", "card": card, "deck": serial}, source="shoe")


def test_the_opening_and_closing_of_the_day(table: Table, client: TestClient) -> None:
    sign_in(client)
    headers = supervisor(client)
    r = tap(client, {"type": "opening_step", "step": "spread"})
    assert r.status_code == 409 and "not open" in r.json()["error"]
    r = sup(client, headers, {"type": "open_table"})
    assert r.status_code == 200, r.text
    assert stored(table)[-1]["by"] == ["ann", "jsmith"]
    # One deck inspected whole, one short of the 7H: the count runs as the cards are read.
    assert tap(client, {"type": "inspect"}).status_code == 200
    assert stored(table)[-1]["by"] == ["ann", "jsmith"]
    for card in deck("T")[:20]:
        table.service.submit({"type": "card", "card": card, "deck": "AAAA01"}, source="shoe")
    running = client.get("/api/state").json()["due"]["inspection"]
    assert (running["read"], running["of"]) == (20, 48)
    for card in deck("T")[20:]:
        table.service.submit({"type": "card", "card": card, "deck": "AAAA01"}, source="shoe")
    assert tap(client, {"type": "inspect_end"}).status_code == 200
    assert client.get("/api/state").json()["alerts"] == []
    tap(client, {"type": "inspect"})
    read_deck(table, "BBBB02", skip="7H")
    assert tap(client, {"type": "inspect_end"}).status_code == 200
    alerts = client.get("/api/state").json()["alerts"]
    assert alerts and all(a["needs"] == "supervisor" for a in alerts)
    assert any("7H" in m for a in alerts for m in a["messages"])
    assert tap(client, {"type": "opening_step", "step": "spread"}).status_code == 409  # held
    for a in alerts:
        assert sup(client, headers, {"type": "acknowledge", "flag_event": a["seq"],
                                     "rule": a["rule"]}).status_code == 200  # fmt: skip
    for step in ("spread", "chemmy", "stack", "riffle"):
        r = tap(client, {"type": "opening_step", "step": step})
        assert r.status_code == 200, r.text
        assert stored(table)[-1]["actor"] == "ann"
    assert tap(client, {"type": "opening_step", "step": "spread"}).status_code == 409
    day = client.get("/api/state").json()["due"]["opening"]
    assert [s["step"] for s in day["steps"]] == ["spread", "chemmy", "stack", "riffle"]
    assert {s["by"] for s in day["steps"]} == {"ann"}
    r = sup(client, headers, {"type": "shuffle", "decks": 1, "cut_card": 30,
                              "deck_serials": ["AAAA01"]})  # fmt: skip
    assert r.status_code == 200, r.text
    (alert,) = client.get("/api/state").json()["alerts"]  # one deck, where the game has six
    assert alert["case"] == "shoe:shuffle" and alert["needs"] == "supervisor"
    sup(client, headers, {"type": "acknowledge", "flag_event": alert["seq"], "rule": "shoe"})
    # The day's end: the shoe ends, the cards left are read out, the table closes.
    assert tap(client, {"type": "shoe_end"}).status_code == 200
    assert tap(client, {"type": "shoe_end"}).status_code == 409
    read_deck(table, "AAAA01")
    assert sup(client, headers, {"type": "close_table"}).status_code == 200
    state = client.get("/api/state").json()
    assert state["due"]["opening"] is None
    shoes = table.service.table.result()["shoes"]
    assert shoes[-1]["reconciled"] is True, shoes
    assert sup(client, headers, {"type": "close_table"}).status_code == 409


def test_a_dealer_may_type_the_serial_of_a_deck_to_inspect_and_nothing_else() -> None:
    """The deck's serial rides on the dealer's inspect tap (a table with no reader types it);
    a serial that is not one, or on another tap, is refused."""
    from controller.service.taps import DealerBody, TapError, parse_tap

    ok = parse_tap(DealerBody, b'{"event": {"type": "inspect", "deck": "BBBB02"}, "seq": 3}')
    assert ok.event.event() == {"type": "inspect", "deck": "BBBB02"}
    for bad in (
        b'{"event": {"type": "inspect", "deck": "bb"}, "seq": 3}',
        b'{"event": {"type": "inspect", "deck": "BBBB02; DROP"}, "seq": 3}',
        b'{"event": {"type": "card", "card": "AS", "deck": "BBBB02"}, "seq": 3}',
        b'{"event": {"type": "inspect_end", "deck": "BBBB02"}, "seq": 3}',
    ):
        with pytest.raises(TapError) as refused:
            parse_tap(DealerBody, bad)
        assert refused.value.status == 422, bad
