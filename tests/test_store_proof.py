"""A round proof proves the whole round, and nothing else passes for one (issue 25).

A genuine table records a shift, signing a head as each round ends; ``floorctl prove`` writes
a round's proof. Then a corpus of forged and malformed proofs, each made as someone with the
genuine proof (and the table's public key, or another key of their own) would make it: events
cut from either end, the settling event dropped, reordered, repeated, another round's or
table's events, a swapped hash, heads of another round or signed by another key, and files
that are not proofs at all (deep nesting, wrong types, huge numbers, missing keys). Every
forgery is refused by ``floorctl verify-proof`` (exit 1), every malformed file is a one-line
error (exit 2), never a traceback.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import store_shift

from controller.cli import main
from controller.store.api import record_scenario
from controller.store.canonical import record_hash
from controller.store.heads import Head
from controller.store.keys import SigningKey, generate_pair, load_signing_key
from controller.store.proof import check_proof, prove_round
from controller.store.repository import Store

Doc = dict[str, Any]


class Shift:
    def __init__(self, root: Path) -> None:
        self.key_file, self.pub, _ = generate_pair(root / "keys")
        self.other_file, self.other_pub, _ = generate_pair(root / "other")
        self.key = load_signing_key(self.key_file)
        self.other = load_signing_key(self.other_file)
        self.url = f"sqlite:///{root / 'table.db'}"
        record_scenario(self.url, store_shift(4), signing_key=self.key_file)
        self.url2 = f"sqlite:///{root / 'table2.db'}"
        record_scenario(self.url2, store_shift(4, table_id="T2"), signing_key=self.key_file)
        with Store.open(self.url) as store:
            self.proofs = {n: prove_round(store, "T1", n) for n in (1, 2, 3, 4)}
        with Store.open(self.url2) as store:
            self.t2 = prove_round(store, "T2", 3)


@pytest.fixture(scope="module")
def shift(tmp_path_factory: pytest.TempPathFactory) -> Shift:
    return Shift(tmp_path_factory.mktemp("proof"))


def run(path: Path, pub: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["verify-proof", str(path), "--key", str(pub)])
    out = capsys.readouterr()
    return status, out.out, out.err


def rechain(doc: Doc, table: str | None = None) -> Doc:
    """Every event's hash and link recomputed after an edit (as a forger would), from the
    first event's stated link."""
    table = table or doc["table"]
    prev = doc["events"][0]["prev_hash"]
    for ev in doc["events"]:
        ev["prev_hash"] = prev
        ev["hash"] = record_hash(
            table, ev["seq"], prev, ev["recorded_at"], ev["corrects"], ev["body"]
        )
        prev = ev["hash"]
    return doc


def resign(head: Doc, key: SigningKey, **changes: Any) -> Doc:
    h = Head.from_row({**head, **changes})
    h = Head(**{**h.to_row(), "key_id": key.key_id, "signature": ""})
    return {**h.public(), "signature": key.sign(h.statement())}


# ----- forgeries: well-formed documents that must be refused (exit 1) ----------------------


def _settle_dropped(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"] = d["events"][:-1]
    return d


def _last5_dropped(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"] = d["events"][:-5]
    return d


def _first_cut(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"] = d["events"][1:]
    return d


def _first3_cut(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"] = d["events"][3:]
    return d


def _round1_first_cut(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[1])
    d["events"] = d["events"][2:]
    return d


def _both_ends_cut(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"] = d["events"][2:-2]
    return d


def _reordered(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    e = d["events"]
    e[4], e[5] = e[5], e[4]
    return d


def _reordered_seqs_swapped(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    e = d["events"]
    e[4], e[5] = e[5], e[4]
    e[4]["seq"], e[5]["seq"] = e[5]["seq"], e[4]["seq"]
    return d


def _duplicated(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"].insert(6, copy.deepcopy(d["events"][6]))
    return d


def _duplicate_replaces(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"][7] = copy.deepcopy(d["events"][6])
    return d


def _other_round_spliced(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"][3:6] = copy.deepcopy(s.proofs[4]["events"][3:6])
    return d


def _next_round_appended(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"] += copy.deepcopy(s.proofs[4]["events"][:3])
    return d


def _two_rounds_as_one(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[4])
    d["events"] = copy.deepcopy(s.proofs[3]["events"]) + d["events"]
    d["start"] = copy.deepcopy(s.proofs[3]["start"])
    return d


def _round_relabelled(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["round"] = 4
    return d


def _wrong_table(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["table"] = "T2"
    return d


def _other_tables_round(s: Shift) -> Doc:
    d = copy.deepcopy(s.t2)
    d["table"] = "T1"
    return d


def _other_tables_events(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"] = copy.deepcopy(s.t2["events"])
    return d


def _hash_swapped(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"][5]["hash"] = d["events"][6]["hash"]
    return d


def _card_changed(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    ev = next(e for e in d["events"] if e["type"] == "card")
    body = json.loads(ev["body"])
    body["card"] = "AS" if body["card"] != "AS" else "KH"
    ev["body"] = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return d


def _card_changed_rechained(s: Shift) -> Doc:
    return rechain(_card_changed(s))


def _type_not_body(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"][2]["type"] = "void"
    return d


def _inclusion_step_changed(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"][4]["proof"][0] = "00" * 32
    return d


def _inclusion_truncated(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"][4]["proof"] = d["events"][4]["proof"][:-1]
    return d


def _consistency_changed(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["consistency"][-1] = "11" * 32
    return d


def _start_of_another_round(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["start"] = copy.deepcopy(s.proofs[2]["start"])
    return d


def _start_dropped(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["start"] = None
    return d


def _head_of_another_round(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["head"] = copy.deepcopy(s.proofs[4]["head"])
    return d


def _head_marks_claimed(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["head"]["closes"] = 2
    return d


def _head_signed_by_another_key(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["head"] = resign(d["head"], s.other)
    d["start"] = resign(d["start"], s.other)
    return d


def _cut_and_resigned_by_another_key(s: Shift) -> Doc:
    """Settlement dropped, and a head over the cut log made and signed with another key."""
    d = _settle_dropped(s)
    last = d["events"][-1]
    d["head"] = resign(d["head"], s.other, size=last["seq"] + 1, chain_head=last["hash"])
    return d


def _signature_of_another_head(s: Shift) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["head"]["signature"] = s.proofs[4]["head"]["signature"]
    return d


def _old_format(s: Shift) -> Doc:
    """The format before issue 25: events under the newest head, nothing bounding them."""
    d = copy.deepcopy(s.proofs[3])
    d["format"] = "floorctl-round-proof/1"
    return d


FORGED: dict[str, Callable[[Shift], Doc]] = {
    name[1:]: fn
    for name, fn in dict(globals()).items()
    if name.startswith("_")
    and callable(fn)
    and getattr(fn, "__module__", "") == __name__
    and name not in ("_old_format",)
}


def test_a_genuine_proof_of_each_round_checks_whole(
    shift: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for number, doc in shift.proofs.items():
        path = tmp_path / f"round-{number}.json"
        path.write_text(json.dumps(doc))
        status, out, err = run(path, shift.pub, capsys)
        assert status == 0 and f"round {number}, whole" in out, (out, err)
        assert doc["events"][-1]["seq"] == doc["head"]["size"] - 1
        assert doc["head"]["closes"] == number
    # Round 1 starts right after the table line; later rounds after the previous end.
    assert shift.proofs[1]["start"] is None and shift.proofs[1]["events"][0]["seq"] == 1
    for n in (2, 3, 4):
        assert shift.proofs[n]["events"][0]["seq"] == shift.proofs[n - 1]["head"]["size"]


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_proof_is_refused(
    name: str, shift: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = FORGED[name](shift)
    assert doc != shift.proofs[3]
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(doc))
    status, out, err = run(path, shift.pub, capsys)
    assert status == 1, (name, out, err)
    assert out.startswith("FAILED: ") and "Traceback" not in out + err
    assert not check_proof(doc, shift.key.public).ok


def test_the_corpus_holds_at_least_28_kinds_of_forgery() -> None:
    assert len(FORGED) >= 28, sorted(FORGED)


# ----- malformed files: not a round proof at all (exit 2, one line) ------------------------


def _deep(n: int) -> str:
    return "[" * n + "]" * n


MALFORMED: dict[str, Callable[[Shift], str | bytes]] = {
    "deeply_nested": lambda s: _deep(200_000),
    "deeply_nested_in_a_field": lambda s: (
        json.dumps({**s.proofs[3], "events": []})[:-3] + _deep(100_000) + "}"
    ),
    "deeply_nested_object": lambda s: '{"a":' * 100_000 + "1" + "}" * 100_000,
    "not_json": lambda s: "this is not a proof",
    "invalid_utf8": lambda s: b"\xff\xfe{\x00",
    "empty_file": lambda s: "",
    "a_list": lambda s: json.dumps([s.proofs[3]]),
    "null": lambda s: "null",
    "missing_events": lambda s: json.dumps({k: v for k, v in s.proofs[3].items() if k != "events"}),
    "missing_head": lambda s: json.dumps({k: v for k, v in s.proofs[3].items() if k != "head"}),
    "events_not_a_list": lambda s: json.dumps({**s.proofs[3], "events": {"0": 1}}),
    "no_events": lambda s: json.dumps({**s.proofs[3], "events": []}),
    "seq_as_text": lambda s: json.dumps(_edit_event(s, "seq", "12")),
    "seq_huge": lambda s: json.dumps(s.proofs[3]).replace(
        f'"seq": {s.proofs[3]["events"][0]["seq"]},', '"seq": ' + "9" * 400 + ",", 1
    ),
    "seq_negative": lambda s: json.dumps(_edit_event(s, "seq", -1)),
    "seq_float": lambda s: json.dumps(_edit_event(s, "seq", 12.5)),
    "seq_true": lambda s: json.dumps(_edit_event(s, "seq", True)),
    "round_huge": lambda s: json.dumps(s.proofs[3]).replace('"round": 3', '"round": 1e999'),
    "head_size_text": lambda s: json.dumps(
        {**s.proofs[3], "head": {**s.proofs[3]["head"], "size": "many"}}
    ),
    "hash_not_hex": lambda s: json.dumps(_edit_event(s, "hash", "zz" * 32)),
    "proof_not_hex": lambda s: json.dumps(_edit_event(s, "proof", ["xyz"])),
    "proof_too_long": lambda s: json.dumps(_edit_event(s, "proof", ["00" * 32] * 100)),
    "body_not_text": lambda s: json.dumps(_edit_event(s, "body", {"type": "card"})),
    "body_null": lambda s: json.dumps(_edit_event(s, "body", None)),
    "extra_key": lambda s: json.dumps({**s.proofs[3], "trust_me": True}),
    "old_format": lambda s: json.dumps(_old_format(s)),
    "unknown_format": lambda s: json.dumps({**s.proofs[3], "format": "x" * 10_000}),
}


def _edit_event(s: Shift, key: str, value: Any) -> Doc:
    d = copy.deepcopy(s.proofs[3])
    d["events"][0][key] = value
    return d


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_proof_is_a_clear_error(
    name: str, shift: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = MALFORMED[name](shift)
    path = tmp_path / "malformed.json"
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    status, out, err = run(path, shift.pub, capsys)
    assert status == 2, (name, out, err[:300])
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("floorctl verify-proof: ") and len(lines[0]) < 400
    )


def test_a_proof_file_that_is_a_directory_or_missing_is_exit_2(
    shift: Shift, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, shift.pub, capsys)[0] == 2
    assert run(tmp_path / "nothing.json", shift.pub, capsys)[0] == 2
