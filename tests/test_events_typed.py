"""The event classes (one msgspec struct per kind, decoded and checked in one step) against two
things they were not built beside: the stored form the previous parser wrote, and the field
checks that name a refused field.

* ``tests/data/events-stored-v1.jsonl`` holds inputs and the exact form the dataclass parser
  that came before stored for each (the worked examples' events and every kind with its
  optional fields, given, false or null): today's parser must store the same, so existing
  stores and their signatures still verify.
* Over random objects of every kind with fields of every sort (valid and hostile), a line read
  by ``decode_event`` (bytes straight to the class) and the same object read by ``parse_event``
  agree, accept exactly what each present field's check accepts, and refuse naming the field
  whose check fails.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.events import (
    _CHECK,
    _CHECK_FOR,
    _SPECS,
    BY_TYPE,
    EVENT_TYPES,
    PASSTHROUGH,
    Bet,
    Card,
    Event,
    ScenarioError,
    decode_event,
    jsonl_lines,
    parse_event,
)

STORED = paths.DATA / "events-stored-v1.jsonl"


def _stored() -> list[dict[str, Any]]:
    return [json.loads(line) for line in jsonl_lines(STORED.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("case", _stored(), ids=lambda c: c["input"][:40])
def test_the_stored_form_is_the_one_the_previous_parser_wrote(case: dict[str, Any]) -> None:
    text = case["input"]
    from_object = parse_event(json.loads(text, parse_float=Decimal))
    from_line = decode_event(text.encode())
    assert from_object.to_dict() == case["stored"]
    assert from_line.to_dict() == case["stored"]
    # and what is stored reads back as itself
    again = decode_event(json.dumps(case["stored"], ensure_ascii=False))
    assert again.to_dict() == case["stored"]


def test_each_kind_is_its_own_class() -> None:
    bet = decode_event(b'{"type":"bet","box":2,"player":"ann","amount":"12.50"}')
    assert type(bet) is Bet and bet.type == "bet"
    assert bet.box == 2 and bet.amount == Decimal("12.50") and bet.player == "ann"
    card = decode_event('{"type":"card","card":"QH","face_up":true}')
    assert isinstance(card, Card) and isinstance(card, Event) and card.face_up
    assert set(EVENT_TYPES) == set(BY_TYPE)
    assert all(BY_TYPE[name].type == name for name in EVENT_TYPES)


# --- random objects, valid and hostile -----------------------------------------------------------

_GOOD: dict[str, st.SearchStrategy[Any]] = {
    "box": st.integers(0, 100),
    "player": st.sampled_from(["ann", "Zoë", " ", "", "a" * 65, "tab\there", "ok name"]),
    "amount": st.sampled_from([0, 5, "12.50", "1.001", -1, "1e2", 1e12, 10**13, "NaN", 2.5, True]),
    "card": st.sampled_from(["AS", "TD", "1S", "as", "", 7]),
    "face_up": st.sampled_from([True, False, None, 1, "yes"]),
    "in_error": st.sampled_from(["exposed", "unexposed", "Exposed", None, 3]),
    "damaged": st.sampled_from([True, False, None, 0]),
    "controls": st.sampled_from([True, False, None, "no"]),
    "decks": st.sampled_from([1, 6, 16, 0, 17, "6", 6.0]),
    "cut_card": st.sampled_from([None, 0, 200, 1_000_000, 1_000_001, -1, "200"]),
    "deck": st.sampled_from(["AB12", "ab12", "ABC", "ABCDEFGHIJKLM", "AB12\n", None, 5]),
    "deck_serials": st.sampled_from([["AB12"], [], ["AB12", "x"], "AB12", None, [1]]),
    "raw": st.sampled_from(["", "garbled", "\x00\x01", "x" * 513, 5]),
    "chips": st.sampled_from(
        [{"5": 1}, {}, {"x": 1}, {"5": -1}, [], {"1.001": 2}, None, {"5": 1, "5.00": 2}, {"0": 1}]
    ),
    "confidence": st.sampled_from([0, 1, 0.5, "0.61", 1.5, -0.1, "x", None, True]),
    "by": st.sampled_from([["sup"], [], ["a"] * 9, "sup", [" "], None, [5]]),
    "step": st.sampled_from(["spread", "cut", "shuffle", None, 1]),
    "dealer": st.sampled_from(["d-1", "", "x" * 65, None, 7]),
    "device": st.sampled_from(["shoe", "camera", "Shoe", None, 0]),
    "on": st.sampled_from([True, False, None, 1]),
    "reason": st.sampled_from(["jammed", "", "\x07", "r" * 201, None]),
    "flag_event": st.sampled_from([1, 0, 2**63 - 1, 2**63, -3, "4", None]),
    "rule": st.sampled_from(["16.4", "shoe", "a b", "x" * 17, "", None]),
    "was": st.sampled_from(["2026-12-01T21:14:00Z", "2026-12-01T21:14:00", "soon", None, 5]),
    "now": st.sampled_from(["2026-12-01T21:14:00+13:00", "2026-13-01T00:00:00Z", "x" * 41]),
    "elapsed": st.sampled_from([0, 2.5, "12.125", -1, 10**10, "x", None, True]),
    "kind": st.sampled_from(["opener", "check", "closer", "cash", "marker", "x", None, 1]),
    "slip": st.sampled_from(["F-1001", 12, 0, "a b", "-x", True, 10**12, None]),
    "time": st.sampled_from(["2026-01-01T00:00:00Z", " ", "\u2028", None, 5, "t" * 65]),
    "actor": st.sampled_from(["sup-1", "", None, ["a"]]),
    "source": st.sampled_from(["shoe", "manual", "s" * 33, None]),
    "correction_of": st.sampled_from([1, 0, 12, None, True, "3"]),
    "note": st.sampled_from(["", "日本語", "n" * 2001, None, 4, "\ud800"]),
}


@st.composite
def event_objects(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(EVENT_TYPES))
    required, optional = _SPECS[kind]
    obj: dict[str, Any] = {"type": kind}
    for name in (*required, *optional, *PASSTHROUGH):
        if name in required and draw(st.integers(0, 9)) == 0:
            continue  # a required field left out, now and then
        if name in required or draw(st.booleans()):
            obj[name] = draw(_GOOD[name])
    if draw(st.integers(0, 4)) == 0:  # a field of another kind: ignored
        other = draw(st.sampled_from(sorted(_GOOD)))
        obj.setdefault(other, draw(_GOOD[other]))
    return obj


def _first_fault(obj: dict[str, Any]) -> str | None:
    """The field the checks find wrong first (None: the object is a valid event)."""
    required, optional = _SPECS[obj["type"]]
    for name in required:
        if name not in obj:
            return name
    for name in (*required, *optional, *PASSTHROUGH):
        if name in obj and (name in required or obj[name] is not None):
            try:
                _CHECK_FOR.get((obj["type"], name), _CHECK[name])(obj[name])
            except ValueError:
                return name
    return None


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=event_objects())
def test_the_classes_accept_exactly_what_the_field_checks_accept(obj: dict[str, Any]) -> None:
    fault = _first_fault(obj)
    text = json.dumps(obj, ensure_ascii=False)
    read = json.loads(text, parse_float=Decimal)
    line = text.encode("utf-8", "surrogatepass")
    if fault is None:
        event = parse_event(read, 3)
        assert decode_event(line, 3).to_dict() == event.to_dict()
        stored = event.to_dict()
        assert stored["type"] == obj["type"]
        for name in _SPECS[obj["type"]][0]:
            assert name in stored  # a required field is always stored, null or false included
        return
    with pytest.raises(ScenarioError) as by_object:
        parse_event(read, 3)
    with pytest.raises(ScenarioError) as by_line:
        decode_event(line, 3)
    assert by_object.value.field == fault
    assert str(by_line.value) == str(by_object.value)
    assert str(by_object.value).startswith(f'line 3: "{fault}": ')
