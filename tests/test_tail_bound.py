"""`verify --unsigned-tail-ok` accepts only what a table still playing leaves unsigned
(issue 25, item 7): at most 60 s (and 15 s for the signing timer) and 200 events after the
last signed head. The attack: 259 events inserted under no head, accepted as a "tail"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import store_shift

from controller.cli import main
from controller.store.api import record_scenario
from controller.store.keys import generate_pair
from controller.store.repository import Store
from controller.store.signed import TailBound, check_tail


def verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["verify", *args, "--json"])
    return status, json.loads(capsys.readouterr().out)


@pytest.fixture
def signed_then_tail(tmp_path: Path) -> tuple[str, Path, int, int]:
    """A signed log of ``signed`` events, then 259 more recorded now under no head."""
    private, public, _key = generate_pair(tmp_path / "keys")
    url = f"sqlite:///{tmp_path / 't.db'}"
    events = store_shift(20)
    signed = 80
    assert len(events) >= signed + 259
    record_scenario(url, events[:signed], signing_key=private)
    record_scenario(url, events[: signed + 259])
    return url, public, signed, 259


def test_259_events_under_no_head_are_refused_under_the_60_s_bound(
    signed_then_tail: tuple[str, Path, int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    url, public, signed, tail = signed_then_tail
    status, doc = verify(capsys, "--db", url, "--key", str(public), "--unsigned-tail-ok")
    assert status == 1, doc
    assert doc["problem"]["kind"] == "unsigned" and doc["problem"]["event"] == signed, doc
    assert f"({tail} events)" in doc["problem"]["message"]
    assert "more than the 200" in doc["problem"]["message"]
    # The same tail within a bound set above it (it was recorded just now): accepted.
    status, doc = verify(
        capsys, "--db", url, "--key", str(public), "--unsigned-tail-ok", "--tail-events", "300"
    )
    assert status == 0, doc


def test_an_old_unsigned_tail_is_refused_however_short(
    signed_then_tail: tuple[str, Path, int, int],
) -> None:
    url, _public, signed, _tail = signed_then_tail
    with Store.open(url, create=False) as store:
        first = store.records("T1", after=signed - 1, upto=signed)[0].recorded_at
        at = datetime.fromisoformat(first)
        many = TailBound(events=1000, now=lambda: at + timedelta(seconds=70))
        assert check_tail(store, "T1", many) is None  # 70 s: within 60 s and the timer's 15
        late = TailBound(events=1000, now=lambda: at + timedelta(seconds=120))
        problem = check_tail(store, "T1", late)
        assert problem is not None and problem.kind == "unsigned" and problem.seq == signed
        assert "recorded 120 s ago" in problem.message
        strict = TailBound(seconds=10, events=1000, now=lambda: at + timedelta(seconds=30))
        assert check_tail(store, "T1", strict) is not None


def test_the_tail_options_need_unsigned_tail_ok(
    signed_then_tail: tuple[str, Path, int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    url, public, _signed, _tail = signed_then_tail
    assert main(["verify", "--db", url, "--key", str(public), "--tail-events", "5"]) == 2
    assert "go with --unsigned-tail-ok" in capsys.readouterr().err


def test_a_log_with_no_unsigned_tail_passes(tmp_path: Path) -> None:
    private, _public, _key = generate_pair(tmp_path / "keys")
    url = f"sqlite:///{tmp_path / 't.db'}"
    record_scenario(url, store_shift(1), signing_key=private)
    with Store.open(url, create=False) as store:
        never = TailBound(seconds=1, events=1, now=lambda: datetime(2100, 1, 1, tzinfo=UTC))
        assert check_tail(store, "T1", never) is None
