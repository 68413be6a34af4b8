"""The canonical encoding and the hash chain, on hand-made records."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

import pytest

from controller.store.canonical import GENESIS, ChainRecord, canonical_json, record_text
from controller.store.chain import check_chain

T0 = "2026-11-30T10:00:00.000000Z"


def make_log(n: int, table_id: str = "T7") -> list[ChainRecord]:
    events: list[dict[str, Any]] = [{"type": "table", "table_id": table_id, "game": "blackjack"}]
    events += [{"type": "card", "card": f"{'A23456789TJQK'[i % 13]}S"} for i in range(n - 1)]
    out: list[ChainRecord] = []
    prev = GENESIS
    for seq, event in enumerate(events):
        rec = ChainRecord.make(table_id, seq, event, prev, T0)
        out.append(rec)
        prev = rec.hash
    return out


def renumber(rec: ChainRecord, seq: int) -> ChainRecord:
    return rec._replace(seq=seq)


def test_record_is_sorted_compact_json_hashed_with_sha256() -> None:
    event = {"type": "bet", "box": 3, "player": "Ané", "amount": "12.50"}
    rec = ChainRecord.make("T7", 5, event, "ab" * 32, T0, corrects=2)
    whole = {
        "table": "T7",
        "seq": 5,
        "prev": "ab" * 32,
        "recorded_at": T0,
        "corrects": 2,
        "event": event,
    }
    expected_text = json.dumps(whole, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert record_text("T7", 5, "ab" * 32, T0, 2, rec.body) == expected_text
    assert rec.hash == hashlib.sha256(expected_text.encode("utf-8")).hexdigest()
    assert rec.body == '{"amount":"12.50","box":3,"player":"Ané","type":"bet"}'


def test_canonical_json_refuses_nan_and_keeps_decimals_exact() -> None:
    with pytest.raises(ValueError):
        canonical_json({"type": "wager_seen", "confidence": float("nan")})
    assert canonical_json({"amount": Decimal("12.50")}) == '{"amount":"12.50"}'


def test_an_intact_chain_checks_out_and_gives_its_head() -> None:
    log = make_log(50)
    count, head, problem = check_chain("T7", log)
    assert problem is None
    assert count == 50
    assert [r.seq for r in log] == list(range(50))
    assert head == log[-1].hash


def test_an_edited_event_is_named() -> None:
    log = make_log(30)
    log[11] = log[11]._replace(body='{"card":"KH","type":"card"}')
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (11, "edited")


def test_an_edit_with_its_hash_recomputed_is_named_by_the_next_link() -> None:
    log = make_log(30)
    forged = ChainRecord.make("T7", 11, {"type": "card", "card": "KH"}, log[10].hash, T0)
    log[11] = forged
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (11, "edited")


def test_a_deleted_event_leaves_a_gap_that_is_named() -> None:
    log = make_log(30)
    del log[9]
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (9, "deleted")


def test_a_deletion_hidden_by_renumbering_is_named() -> None:
    log = make_log(30)
    del log[9]
    log = log[:9] + [renumber(r, r.seq - 1) for r in log[9:]]
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (9, "deleted")


def test_an_insertion_with_renumbering_is_named() -> None:
    log = make_log(30)
    stranger = ChainRecord.make("T7", 7, {"type": "card", "card": "AH"}, "f" * 64, T0)
    log = log[:7] + [stranger] + [renumber(r, r.seq + 1) for r in log[7:]]
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (7, "inserted")


def test_an_insertion_with_a_fitting_hash_is_named() -> None:
    log = make_log(30)
    stranger = ChainRecord.make("T7", 7, {"type": "card", "card": "AH"}, log[6].hash, T0)
    log = log[:7] + [stranger] + [renumber(r, r.seq + 1) for r in log[7:]]
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (7, "inserted")


def test_two_events_swapped_are_named_as_reordered() -> None:
    log = make_log(30)
    a, b = log[14], log[15]
    log[14], log[15] = renumber(b, 14), renumber(a, 15)
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (14, "reordered")


def test_an_event_moved_further_is_named_as_reordered() -> None:
    log = make_log(30)
    moved = log.pop(4)
    log.insert(9, moved)
    log = [renumber(r, i) for i, r in enumerate(log)]
    problem = check_chain("T7", log)[2]
    assert problem is not None
    assert (problem.seq, problem.kind) == (4, "reordered")


@pytest.mark.parametrize(
    "text", ['T"7', "T\\7", "T\n7", "T\u20287", "Tü7", "T\x7f7", "", "2026-11-30T10:00:00Z"]
)
def test_record_text_escapes_strings_as_json_does(text: str) -> None:
    event = {"type": "note", "note": text}
    whole = {
        "table": text,
        "seq": 1,
        "prev": text,
        "recorded_at": text,
        "corrects": None,
        "event": event,
    }
    assert record_text(text, 1, text, text, None, canonical_json(event)) == canonical_json(whole)
