"""Every field a device, the screen or a supervisor can put on an event survives the whole
trip: recorded as a live table records it -> the store -> ``verify`` -> ``export`` ->
``verify DIR`` -> ``replay`` of the exported scenario, which gives the same rounds.

The events are the worked examples' plays, decorated the way real inputs arrive: camera
confidences at full float precision or as text, chip maps, deck serials on cards and shoes,
actors, sources, corrections of earlier events, notes in any script, times with offsets; with
device events (``wager_seen``, ``misread``, ``peek``) put in between.
"""

from __future__ import annotations

import contextlib
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cli import main
from controller.events import jsonl_lines, parse_event

EXAMPLES = paths.EXAMPLES
SERIAL = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=4, max_size=12)
CONFIDENCE = st.one_of(
    st.floats(min_value=0, max_value=1),  # a float at full precision: 0.8779999999999999
    st.integers(0, 17).flatmap(lambda p: st.decimals(min_value=0, max_value=1, places=p)).map(str),
    st.sampled_from([0, 1, 0.878, "0.61", "1", "0.5000"]),
)
CHIPS = st.dictionaries(
    st.sampled_from(["1", "2.5", "5", "25", "100", "500", "1000"]),
    st.integers(0, 40),
    max_size=6,
)
# Ids as a casino writes them: letters of any script, digits, a few separators.
NAME = st.text(
    alphabet=st.characters(categories=["L", "N"], include_characters=" -._'"),
    min_size=1,
    max_size=24,
).filter(lambda s: s.strip() != "")
TIME = st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat())


def _example(name: str) -> list[dict[str, Any]]:
    path = next(EXAMPLES.glob(f"{name}*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@st.composite
def decorated_scenario(draw: st.DrawFn) -> list[dict[str, Any]]:
    name = draw(st.sampled_from(["01", "02", "03", "04", "05"]))
    lines = _example(name)
    out: list[dict[str, Any]] = [lines[0]]
    serials: list[str] = []
    for event in lines[1:]:
        event = dict(event)
        if event["type"] == "shuffle" and draw(st.booleans()):
            serials = draw(st.lists(SERIAL, min_size=1, max_size=event["decks"], unique=True))
            event["deck_serials"] = serials
        if event["type"] == "card" and serials and draw(st.booleans()):
            event["deck"] = draw(st.sampled_from(serials))
        # Device events between the plays.
        for _ in range(draw(st.integers(0, 2))):
            kind = draw(st.sampled_from(["wager_seen", "misread", "peek"]))
            extra: dict[str, Any] = {"type": kind}
            if kind == "wager_seen":
                extra["box"] = draw(st.integers(1, lines[0].get("boxes", 7)))
                extra["amount"] = draw(st.sampled_from([0, 5, 10, "12.50", 100]))
                if draw(st.booleans()):
                    extra["confidence"] = draw(CONFIDENCE)
                if draw(st.booleans()):
                    extra["chips"] = draw(CHIPS)
            elif kind == "misread":
                extra["raw"] = draw(st.text(max_size=40))
            out.append(_decorate(draw, extra, len(out)))
        out.append(_decorate(draw, event, len(out)))
    return out


def _decorate(draw: st.DrawFn, event: dict[str, Any], seq: int) -> dict[str, Any]:
    """Optional fields any event may carry; ``seq`` is the event's sequence number."""
    if draw(st.booleans()):
        event["time"] = draw(TIME)
    if draw(st.integers(0, 3)) == 0:
        event["actor"] = draw(NAME)
    if draw(st.integers(0, 3)) == 0:
        event["source"] = draw(
            st.sampled_from(["shoe", "camera", "screen", "manual", "supervisor"])
        )
    if seq > 1 and draw(st.integers(0, 6)) == 0:
        event["correction_of"] = draw(st.integers(1, seq - 1))
    if draw(st.integers(0, 4)) == 0:
        event["note"] = draw(st.text(max_size=200).filter(_utf8))
    return event


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _rounds(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["rounds"]


def _canonical(event: dict[str, Any]) -> dict[str, Any]:
    """The event as the store keeps it: checked by the parser, in its canonical form."""
    return parse_event(event).to_dict()


def roundtrip(events: list[dict[str, Any]], work: Path, db_url: str) -> None:
    scenario = work / "scenario.jsonl"
    scenario.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in events) + "\n")
    status, out, err = _cli("replay", str(scenario), "--json")
    assert status == 0, err
    direct = json.loads(out)
    status, out, err = _cli("replay", str(scenario), "--db", db_url, "--json")
    assert status == 0, err
    assert _rounds(json.loads(out)) == _rounds(direct)  # the live table's rounds
    status, out, err = _cli("verify", "--db", db_url)
    assert status == 0, out + err
    export = work / "export"
    status, out, err = _cli("export", "--db", db_url, "--out", str(export))
    assert status == 0, out + err
    status, out, err = _cli("verify", str(export))
    assert status == 0, out + err
    table_id = events[0].get("table_id", "T1")
    exported = export / table_id / "scenario.jsonl"
    lines = [json.loads(x) for x in jsonl_lines(exported.read_text(encoding="utf-8"))]
    # Every field of every event is there, exactly as the store keeps it.
    assert [{k: v for k, v in e.items() if k != "recorded_at"} for e in lines[1:]] == [
        _canonical(e) for e in events[1:]
    ]
    status, out, err = _cli("replay", str(exported), "--json")
    assert status == 0, err
    assert _rounds(json.loads(out)) == _rounds(direct)


@settings(
    max_examples=25,
    deadline=None,
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(events=decorated_scenario())
def test_every_field_survives_store_verify_export_and_replay(
    tmp_path_factory: pytest.TempPathFactory, events: list[dict[str, Any]]
) -> None:
    work = tmp_path_factory.mktemp("trip")
    roundtrip(events, work, f"sqlite:///{work / 'table.db'}")


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(events=decorated_scenario(), n=st.uuids())
def test_the_same_trip_on_postgresql(
    tmp_path_factory: pytest.TempPathFactory,
    store_pg_url: str,
    events: list[dict[str, Any]],
    n: Any,
) -> None:
    events[0] = {**events[0], "table_id": f"T{n.hex[:12]}"}  # one schema, a table per example
    roundtrip(events, tmp_path_factory.mktemp("pg"), store_pg_url)


def test_confidences_as_the_demo_camera_sends_them(tmp_path: Path) -> None:
    """The issue's case: a wager_seen with confidence 0.878 (and "0.61") replays, records,
    verifies, exports, and its export verifies."""
    events = _example("01")
    events.insert(2, {"type": "wager_seen", "box": 1, "amount": 10, "confidence": 0.878,
                      "chips": {"5": 2}})  # fmt: skip
    events.insert(3, {"type": "wager_seen", "box": 2, "amount": 10, "confidence": "0.61"})
    roundtrip(events, tmp_path, f"sqlite:///{tmp_path / 'table.db'}")
    kept = parse_event(events[2]).confidence
    assert kept == Decimal("0.878")
