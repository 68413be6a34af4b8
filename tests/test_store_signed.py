"""The signed log (issue 12): keys, heads, `verify --key`, the floor as witness, round proofs.

Every attack here is made as an attacker would make it: with the database's owner rights (or
root on the table PC, and so the table's own key), using the project's own Recorder and
HeadLog to write a history whose hashes (and signatures) are all recomputed, original times
kept. Each is caught by `floorctl verify` with the right message, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
import sqlalchemy as sa
from conftest import STORE_PG_BASE, _pg_conninfo
from floor_keys import register_key
from intruder import reguard, unguard
from test_store_verify import TAMPERS

from controller.cli import main
from controller.store.api import record_scenario
from controller.store.canonical import record_hash
from controller.store.heads import HeadLog, load_heads, make_head
from controller.store.keys import (
    KeyFileError,
    SigningKey,
    generate_pair,
    load_public_key,
    load_signing_key,
)
from controller.store.merkle import Frontier, leaf_hash
from controller.store.recorder import Recorder
from controller.store.repository import Store

Shift = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    private, public, _key = generate_pair(tmp_path / "keys")
    return private, public


@pytest.fixture
def other_keys(tmp_path: Path) -> tuple[Path, Path]:
    private, public, _key = generate_pair(tmp_path / "other")
    return private, public


@pytest.fixture
def signed(store_url: str, store_shift_events: Shift, keys: tuple[Path, Path]) -> str:
    record_scenario(store_url, store_shift_events(4), signing_key=keys[0])
    return store_url


@pytest.fixture
def floor_url() -> Iterator[str]:
    """A second PostgreSQL schema of its own: the floor."""
    schema = f"signed_floor_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_pg_conninfo(STORE_PG_BASE), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in STORE_PG_BASE else "?"
    yield f"{STORE_PG_BASE}{sep}options={quote(f'-csearch_path={schema}')}"
    with psycopg.connect(_pg_conninfo(STORE_PG_BASE), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["verify", *args, "--json"])
    return status, json.loads(capsys.readouterr().out)


def problem(doc: dict[str, Any]) -> tuple[int, str]:
    assert doc["problem"] is not None, doc
    return doc["problem"]["event"], doc["problem"]["kind"]


def original_log(url: str) -> list[tuple[dict[str, Any], str]]:
    with Store.open(url) as store:
        return [(r.event(), r.recorded_at) for r in store.records("T1")]


def rewrite(url: str, log: list[tuple[dict[str, Any], str]], key: SigningKey | None) -> None:
    """Replace the table's whole history with ``log``, through the project's own Recorder, every
    hash recomputed and every original time kept; signed with ``key`` (or not at all)."""
    with Store.open(url) as store:
        with store.engine.begin() as conn:
            unguard(store, conn)
            for table in (
                "settlements",
                "flags",
                "rounds",
                "shoes",
                "checkpoints",
                "heads",
                "events",
                "tables",
            ):
                conn.exec_driver_sql(f"DELETE FROM {table}")
        reguard(store)
        times = iter([at for _e, at in log])
        recorder = Recorder.open(
            store,
            log[0][0],
            spool=None,
            retry_every=None,
            clock=lambda: next(times),
            signing_key=key,
        )
        for event, at in log[1:]:
            recorder.record(event, recorded_at=at)
        recorder.close()


def early_bet_raised(log: list[tuple[dict[str, Any], str]]) -> list[tuple[dict[str, Any], str]]:
    changed = [(dict(e), at) for e, at in log]
    assert changed[3][0] == {"type": "bet", "box": 2, "player": "ben", "amount": "20"}
    changed[3][0]["amount"] = "200"
    return changed


# ----- keys ---------------------------------------------------------------------------------


def test_keygen_writes_a_private_key_only_its_owner_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 0
    out = capsys.readouterr().out
    private, public = tmp_path / "k" / "table.key", tmp_path / "k" / "table.pub"
    assert os.stat(private).st_mode & 0o777 == 0o600
    key, pub = load_signing_key(private), load_public_key(public)
    assert key.key_id == pub.key_id and pub.key_id in out
    assert "PRIVATE" not in out and private.read_text().splitlines()[1] not in out
    assert "PRIVATE" not in repr(key)
    # A table's key is never overwritten.
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert load_signing_key(private).key_id == key.key_id


def test_a_missing_or_unusable_key_is_refused_by_name(
    tmp_path: Path,
    store_sqlite_url: str,
    store_shift_events: Shift,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = tmp_path / "s.jsonl"
    scenario.write_text("\n".join(json.dumps(e) for e in store_shift_events(1)))
    missing = tmp_path / "nowhere" / "table.key"
    status = main(
        ["replay", str(scenario), "--db", store_sqlite_url, "--signing-key", str(missing)]
    )
    assert status == 2 and f"signing key {missing}: no such file" in capsys.readouterr().err
    not_a_key = tmp_path / "table.key"
    not_a_key.write_text("hello\n")
    status = main(
        ["replay", str(scenario), "--db", store_sqlite_url, "--signing-key", str(not_a_key)]
    )
    assert status == 2 and f"signing key {not_a_key}: not an unencrypted PEM" in (
        capsys.readouterr().err
    )
    with pytest.raises(KeyFileError, match=re.escape(f"signing key {tmp_path}: cannot read it")):
        load_signing_key(tmp_path)  # a directory: unreadable as a file
    # Nothing was recorded.
    assert not Path(store_sqlite_url.removeprefix("sqlite:///")).exists()


def test_the_table_service_refuses_to_start_without_its_key(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    from controller.service.app import StartError, open_table
    from controller.service.config import ConfigError, config_from_dict
    from controller.service.pin import hash_pin

    missing = tmp_path / "table.key"
    line = store_shift_events(1)[0]
    with pytest.raises(
        StartError, match=re.escape(f"signing_key: signing key {missing}: no such file")
    ):
        open_table(line, f"sqlite:///{tmp_path}/t.db", {}, spool=False, signing_key=str(missing))
    assert not (tmp_path / "t.db").exists()
    data = {
        "table": {k: v for k, v in line.items() if k != "type"},
        "shoe": {"url": "none"},
        "store": {"url": "sqlite:///x.db", "signing_key": "table.key"},
        "supervisors": {"jsmith": hash_pin("2468", iterations=1000)},
    }
    with pytest.raises(
        ConfigError, match=re.escape('signing_key = "table.key": not an absolute path')
    ):
        config_from_dict(data, "table.toml")
    data["store"]["signing_key"] = str(missing)
    assert config_from_dict(data, "table.toml").store.signing_key == str(missing)


# ----- heads --------------------------------------------------------------------------------


def test_a_head_is_signed_at_every_round_end_and_the_log_verifies(
    signed: str, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(signed) as store:
        heads = load_heads(store, "T1")
        with store.engine.connect() as conn:
            ends = [int(r[0]) for r in conn.exec_driver_sql("SELECT closed_seq FROM rounds")]
    sizes = [h.size for h in heads]
    assert ends and all(end + 1 in sizes for end in ends)
    assert sizes == sorted(sizes) and sizes[0] == 1 and sizes[-1] == 77  # start ... close
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 0 and doc["ok"], doc


def test_a_head_is_signed_within_the_interval_while_events_flow(
    store_sqlite_url: str, store_shift_events: Shift, keys: tuple[Path, Path]
) -> None:
    import time

    events = store_shift_events(1)
    with Store.open(store_sqlite_url) as store:
        recorder = Recorder.open(
            store,
            events[0],
            spool=None,
            retry_every=None,
            signing_key=load_signing_key(keys[0]),
            head_every=0.3,
        )
        recorder.record(events[1])  # no round ends here
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and load_heads(store, "T1")[-1].size < 2:
            time.sleep(0.05)
        assert load_heads(store, "T1")[-1].size == 2
        recorder.close()


def test_a_restarted_table_goes_on_signing_from_its_last_head(
    store_url: str,
    store_shift_events: Shift,
    keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    events = store_shift_events(2)
    record_scenario(store_url, events[:20], signing_key=keys[0])
    record_scenario(store_url, events, signing_key=keys[0])
    status, doc = verify(capsys, "--db", store_url, "--key", str(keys[1]))
    assert status == 0, doc


@pytest.mark.parametrize("name", list(TAMPERS))
def test_verify_with_the_key_names_the_first_changed_event(
    signed: str, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str], name: str
) -> None:
    fn, seq, kind = TAMPERS[name]
    with Store.open(signed) as store, store.engine.begin() as conn:
        unguard(store, conn)
        fn(store, conn)
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (seq, kind), doc


def test_a_whole_rewrite_that_plain_verify_passes_fails_unsigned_and_with_another_key(
    signed: str,
    keys: tuple[Path, Path],
    other_keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    forged = early_bet_raised(original_log(signed))
    rewrite(signed, forged, None)
    assert verify(capsys, "--db", signed)[0] == 0  # the hash chain alone cannot tell
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (0, "unsigned"), doc

    rewrite(signed, forged, load_signing_key(other_keys[0]))
    assert verify(capsys, "--db", signed, "--key", str(other_keys[1]))[0] == 0
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (0, "signature"), doc
    assert "not signed by key" in doc["problem"]["message"]


def test_a_rewrite_under_the_old_heads_names_the_heads_it_breaks(
    signed: str, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(signed) as store:
        kept = [h.to_row() for h in load_heads(store, "T1")]
    rewrite(signed, early_bet_raised(original_log(signed)), None)
    with Store.open(signed) as store, store.engine.begin() as conn:
        conn.execute(sa.insert(sa.table("heads", *[sa.column(c) for c in kept[0]])), kept)
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    # Head 0 covers the table line alone (still as signed); head 1 covers events 1-12.
    assert status == 1 and problem(doc) == (1, "rewritten"), doc


def test_a_head_that_does_not_extend_the_one_before_fails(
    signed: str, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    key = load_signing_key(keys[0])  # root on the table PC: the attacker holds the key
    with Store.open(signed) as store:
        last = load_heads(store, "T1")[-1]
        frontier = Frontier()
        with store.engine.connect() as conn:
            for (digest,) in conn.exec_driver_sql(
                "SELECT hash FROM events WHERE table_id = 'T1' AND seq < 50 ORDER BY seq"
            ):
                frontier.append(leaf_hash(digest))
            chain_head = conn.exec_driver_sql(
                "SELECT hash FROM events WHERE table_id = 'T1' AND seq = 49"
            ).scalar()
        rollback = make_head(
            key, "T1", last.seq + 1, frontier, str(chain_head), last.signed_at, last.digest()
        )
        with store.engine.begin() as conn:
            conn.execute(
                sa.insert(sa.table("heads", *[sa.column(c) for c in rollback.to_row()])),
                [rollback.to_row()],
            )
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (50, "head"), doc
    assert "does not extend head" in doc["problem"]["message"]


def test_dropped_or_disabled_triggers_fail_verify_with_the_key(
    signed: str, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(signed) as store, store.engine.begin() as conn:
        unguard(store, conn)
    assert verify(capsys, "--db", signed)[0] == 0
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 1 and doc["problem"]["kind"] == "guards", doc
    assert ("is gone" if signed.startswith("sqlite") else "is disabled") in doc["problem"][
        "message"
    ]


def test_events_after_the_last_head_are_unsigned(
    signed: str,
    keys: tuple[Path, Path],
    store_shift_events: Shift,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The log goes on without the key (say, the key was taken off the table): unsigned events.
    events = store_shift_events(5)
    record_scenario(signed, events)
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (77, "unsigned"), doc
    assert verify(capsys, "--db", signed, "--key", str(keys[1]), "--unsigned-tail-ok")[0] == 0


# ----- the floor as witness -----------------------------------------------------------------


def ship(src: str, floor: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["ship", "--db", src, "--to", floor])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def truncate_and_resign(url: str, first: int, key: SigningKey) -> None:
    """Root on the table PC: cut events ``first``... (and their rows and heads), then sign a
    head over what is left with the table's own key, and put the guards back."""
    with Store.open(url) as store:
        with store.engine.begin() as conn:
            unguard(store, conn)
            for table, col in (
                ("settlements", "seq"),
                ("flags", "seq"),
                ("rounds", "closed_seq"),
                ("shoes", "seq"),
                ("checkpoints", "seq + 1"),  # committed with the event after it
                ("events", "seq"),
            ):
                conn.exec_driver_sql(f"DELETE FROM {table} WHERE {col} >= {first}")
            conn.exec_driver_sql(f"DELETE FROM heads WHERE size > {first}")
        reguard(store)
        top = store.head("T1")
        assert top is not None and top[0] == first - 1
        HeadLog(store, "T1", key, clock=lambda: "2026-12-01T00:00:00.000000Z").sign(*top)


@pytest.mark.parametrize("cut", ["the last event", "the last round with its rows"])
def test_a_truncated_tail_passes_alone_and_fails_against_the_witness(
    signed: str,
    floor_url: str,
    keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    cut: str,
) -> None:
    assert ship(signed, floor_url, capsys)[0] == 0
    with Store.open(floor_url) as floor:
        assert [h.size for h in load_heads(floor, "T1")][-1] == 77
        with floor.engine.connect() as conn:
            ends = sorted(int(r[0]) for r in conn.exec_driver_sql("SELECT closed_seq FROM rounds"))
    first = 76 if cut == "the last event" else ends[-2] + 1
    truncate_and_resign(signed, first, load_signing_key(keys[0]))
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]))
    assert status == 0, doc["problem"]  # the table's own log, re-signed, cannot tell
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]), "--witness", floor_url)
    assert status == 1 and problem(doc) == (first, "deleted"), doc
    assert "which the floor witnessed" in doc["problem"]["message"]


def test_an_edit_the_floor_witnessed_fails_against_the_witness(
    signed: str, floor_url: str, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert ship(signed, floor_url, capsys)[0] == 0
    rewrite(signed, early_bet_raised(original_log(signed)), load_signing_key(keys[0]))
    assert verify(capsys, "--db", signed, "--key", str(keys[1]))[0] == 0
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]), "--witness", floor_url)
    assert status == 1 and problem(doc) == (3, "edited"), doc


def test_the_floor_registry_takes_a_key_once_and_ship_refuses_a_log_it_does_not_check(
    signed: str,
    floor_url: str,
    keys: tuple[Path, Path],
    other_keys: tuple[Path, Path],
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with Store.open(floor_url):
        pass  # the floor's schema
    register = ["floor", "register-key", "--db", floor_url, "--table", "T1"]
    assert main([*register, "--key", str(other_keys[1]), "--by", "sup-anna"]) == 0
    capsys.readouterr()
    assert main([*register, "--key", str(keys[1]), "--by", "sup-bob"]) == 2
    assert "registered once" in capsys.readouterr().err
    status, text = ship(signed, floor_url, capsys)
    assert status == 1 and "is not signed by key" in text
    with Store.open(floor_url) as floor:
        assert floor.head("T1") is None  # nothing of it shipped

    # An unsigned table whose key is registered is refused too.
    plain = f"sqlite:///{tmp_path}/plain.db"
    record_scenario(plain, store_shift_events(1, "T2"))
    assert register_key(floor_url, "T2", keys[1]) == 0
    status, text = ship(plain, floor_url, capsys)
    assert status == 1 and "no signed head" in text


def test_ship_copies_only_signed_events_once_the_key_is_registered(
    store_sqlite_url: str,
    floor_url: str,
    keys: tuple[Path, Path],
    store_shift_events: Shift,
    capsys: pytest.CaptureFixture[str],
) -> None:
    events = store_shift_events(2)
    with Store.open(store_sqlite_url) as store:
        recorder = Recorder.open(
            store,
            events[0],
            spool=None,
            retry_every=None,
            signing_key=load_signing_key(keys[0]),
            head_every=3600,
        )
        for event in events[1:14]:  # round 1 ends at event 12; 13 is unsigned yet
            recorder.record(event)
        with Store.open(floor_url):
            pass
        assert register_key(floor_url, "T1", keys[1]) == 0
        assert ship(store_sqlite_url, floor_url, capsys)[0] == 0
        with Store.open(floor_url) as floor:
            assert floor.head("T1") == (12, load_heads(store, "T1")[-1].chain_head)
        recorder.close()  # signs the rest
    assert ship(store_sqlite_url, floor_url, capsys)[0] == 0
    with Store.open(floor_url) as floor:
        assert floor.head("T1") is not None and floor.head("T1")[0] == 13  # type: ignore[index]
    status, doc = verify(
        capsys, "--db", store_sqlite_url, "--key", str(keys[1]), "--witness", floor_url
    )
    assert status == 0, doc


# ----- exports ------------------------------------------------------------------------------


def reseal(out: Path, key: SigningKey | None = None) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    for rel in manifest["files"]:
        manifest["files"][rel] = hashlib.sha256((out / rel).read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))
    if key is not None:
        from controller.store.signed import sign_manifest

        sign_manifest(out, key)


def test_a_signed_export_verifies_and_an_edit_with_its_manifest_recomputed_does_not(
    signed: str,
    keys: tuple[Path, Path],
    other_keys: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "pkg"
    assert main(["export", "--db", signed, "--out", str(out), "--signing-key", str(keys[0])]) == 0
    capsys.readouterr()
    assert verify(capsys, str(out), "--key", str(keys[1]))[0] == 0

    # A timeline edited, the manifest's sums recomputed: only the signature can tell.
    timeline = out / "T1" / "timelines" / "round-0001.txt"
    timeline.write_text(timeline.read_text().replace("ben", "bob"))
    reseal(out)
    assert verify(capsys, str(out))[0] == 0
    status, doc = verify(capsys, str(out), "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (0, "signature"), doc

    # Resigned by another key: still not the table's.
    reseal(out, load_signing_key(other_keys[0]))
    status, doc = verify(capsys, str(out), "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (0, "signature"), doc

    # The events rewritten with their hashes recomputed, resealed and signed with the table's
    # own key (root on the table PC): the heads in the package were signed over other events.
    rewritten = tmp_path / "rewritten"
    rewrite(signed, early_bet_raised(original_log(signed)), None)
    assert main(["export", "--db", signed, "--out", str(rewritten)]) == 0
    capsys.readouterr()
    (rewritten / "T1" / "heads.json").write_text((out / "T1" / "heads.json").read_text())
    reseal(rewritten, load_signing_key(keys[0]))
    status, doc = verify(capsys, str(rewritten), "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (1, "rewritten"), doc


def test_an_export_that_ends_inside_a_head_carries_a_consistency_proof(
    signed: str, keys: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(signed) as store, store.engine.connect() as conn:
        at = conn.exec_driver_sql("SELECT recorded_at FROM events WHERE seq = 40").scalar()
    out = tmp_path / "pkg"
    assert (
        main(
            [
                "export",
                "--db",
                signed,
                "--out",
                str(out),
                "--until",
                str(at),
                "--signing-key",
                str(keys[0]),
            ]
        )
        == 0
    )
    capsys.readouterr()
    doc = json.loads((out / "T1" / "heads.json").read_text())
    assert doc["cover"]["size"] == 41 and doc["cover"]["head"]["size"] > 41
    assert verify(capsys, str(out), "--key", str(keys[1]))[0] == 0
    doc["cover"]["proof"][0] = "00" * 32
    (out / "T1" / "heads.json").write_text(json.dumps(doc))
    reseal(out, load_signing_key(keys[0]))
    status, report = verify(capsys, str(out), "--key", str(keys[1]))
    assert status == 1 and report["problem"]["kind"] == "rewritten", report


# ----- round proofs -------------------------------------------------------------------------


def test_a_round_proof_checks_alone_and_fails_when_one_card_is_changed(
    signed: str,
    keys: tuple[Path, Path],
    other_keys: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    proof = tmp_path / "round2.json"
    assert (
        main(["prove", "--db", signed, "--table", "T1", "--round", "2", "--out", str(proof)]) == 0
    )
    capsys.readouterr()
    assert main(["verify-proof", str(proof), "--key", str(keys[1])]) == 0
    assert "OK" in capsys.readouterr().out
    assert main(["verify-proof", str(proof), "--key", str(other_keys[1])]) == 1
    assert "not signed by key" in capsys.readouterr().out

    doc = json.loads(proof.read_text())
    cards = [i for i, ev in enumerate(doc["events"]) if ev["type"] == "card"]
    i = cards[2]
    ev = doc["events"][i]
    body = json.loads(ev["body"])
    body["card"] = "AS" if body["card"] != "AS" else "KH"
    ev["body"] = json.dumps(body, sort_keys=True, separators=(",", ":"))
    proof.write_text(json.dumps(doc))
    assert main(["verify-proof", str(proof), "--key", str(keys[1])]) == 1
    assert f"event {ev['seq']}: its content does not match its hash" in capsys.readouterr().out

    # The card changed with every hash of the round after it recomputed.
    prev = doc["events"][i - 1]["hash"]
    for later in doc["events"][i:]:
        later["prev_hash"] = prev
        later["hash"] = record_hash(
            "T1", later["seq"], prev, later["recorded_at"], later["corrects"], later["body"]
        )
        prev = later["hash"]
    proof.write_text(json.dumps(doc))
    assert main(["verify-proof", str(proof), "--key", str(keys[1])]) == 1
    assert f"event {ev['seq']}: not in the log under head" in capsys.readouterr().out


def test_a_round_no_head_covers_cannot_be_proved(
    store_sqlite_url: str,
    store_shift_events: Shift,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record_scenario(store_sqlite_url, store_shift_events(2))
    out = tmp_path / "p.json"
    assert (
        main(
            ["prove", "--db", store_sqlite_url, "--table", "T1", "--round", "1", "--out", str(out)]
        )
        == 1
    )
    assert "no signed head marks that end" in capsys.readouterr().err and not out.exists()


def test_the_floors_evidence_of_a_round_carries_its_proof(
    signed: str,
    floor_url: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from controller.floor.audit import Who
    from controller.floor.evidence import write_evidence
    from controller.floor.indexer import Indexer
    from controller.floor.schema import open_floor
    from controller.store.proof import check_proof

    assert ship(signed, floor_url, capsys)[0] == 0
    out = tmp_path / "evidence"
    with open_floor(floor_url) as floor:
        Indexer(floor).run_once(["T1"])
        lines = write_evidence(floor, Who.cli(), "T1", out, number=3)
    assert any("proof.json" in line for line in lines)
    doc = json.loads((out / "proof.json").read_text())
    assert doc["round"] == 3 and check_proof(doc, load_public_key(keys[1])).ok
    record = json.loads((out / "evidence.json").read_text())
    assert (
        record["files"]["proof.json"]
        == hashlib.sha256((out / "proof.json").read_bytes()).hexdigest()
    )
    assert main(["verify-proof", str(out / "proof.json"), "--key", str(keys[1])]) == 0


def test_the_floors_evidence_verifies_with_the_tables_key_as_the_docs_say_and_tampered_fails(
    signed: str,
    floor_url: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`floorctl verify EV/export --key table.pub`: the floor holds no table's private key, so
    its package carries no manifest.sig; the table's signed heads carry the proof."""
    import shutil

    from controller.floor.audit import Who
    from controller.floor.evidence import write_evidence
    from controller.floor.indexer import Indexer
    from controller.floor.schema import open_floor

    assert ship(signed, floor_url, capsys)[0] == 0
    out = tmp_path / "EV"
    with open_floor(floor_url) as floor:
        Indexer(floor).run_once(["T1"])
        write_evidence(floor, Who.cli(), "T1", out, number=3)
    export = out / "export"
    assert not (export / "manifest.sig").exists()
    status, doc = verify(capsys, str(export), "--key", str(keys[1]))
    assert status == 0, doc

    # A timeline edited and the sums recomputed: plain verify cannot tell, the key check can.
    edited = tmp_path / "edited"
    shutil.copytree(export, edited)
    timeline = next((edited / "T1" / "timelines").glob("round-*.txt"))
    text = timeline.read_text()
    assert "ben" in text
    timeline.write_text(text.replace("ben", "bob"))
    reseal(edited)
    assert verify(capsys, str(edited))[0] == 0
    status, doc = verify(capsys, str(edited), "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (0, "edited"), doc

    # The history rewritten with every hash recomputed, the genuine heads kept beside it.
    rewritten = tmp_path / "rewritten"
    rewrite(signed, early_bet_raised(original_log(signed)), None)
    assert main(["export", "--db", signed, "--out", str(rewritten), "--round", "3"]) == 0
    capsys.readouterr()
    (rewritten / "T1" / "heads.json").write_text((export / "T1" / "heads.json").read_text())
    reseal(rewritten)
    assert verify(capsys, str(rewritten))[0] == 0
    status, doc = verify(capsys, str(rewritten), "--key", str(keys[1]))
    assert status == 1 and problem(doc)[1] in ("rewritten", "deleted"), doc

    # A manifest.sig that is there must be the table's.
    forged = tmp_path / "forged"
    shutil.copytree(export, forged)
    other, _pub, _ = generate_pair(tmp_path / "other-key")
    reseal(forged, load_signing_key(other))
    status, doc = verify(capsys, str(forged), "--key", str(keys[1]))
    assert status == 1 and problem(doc) == (0, "signature"), doc


def test_events_that_waited_in_the_spool_are_signed_once_they_are_written_back(
    tmp_path: Path,
    store_shift_events: Shift,
    keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    import sqlite3

    db = tmp_path / "table.db"
    events = store_shift_events(2)
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        rec = Recorder.open(
            store,
            events[0],
            retry_every=None,
            signing_key=load_signing_key(keys[0]),
            head_every=3600,
        )
        for event in events[1:5]:
            assert rec.record(event).stored
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the database
        held = [rec.record(event) for event in events[5:13]]  # round 1 ends at event 12
        assert not any(r.stored for r in held)
        other.execute("ROLLBACK")
        other.close()
        assert load_heads(store, "T1")[-1].size == 1  # nothing signed while spooling
        assert rec.flush() is True
        assert load_heads(store, "T1")[-1].size == 13  # signed as soon as they were written
        rec.close()
    logged = capsys.readouterr()  # the recorder's own log of the fault
    assert "spool" in logged.out + logged.err and "PRIVATE" not in logged.out + logged.err
    status, doc = verify(capsys, "--db", f"sqlite:///{db}", "--key", str(keys[1]))
    assert status == 0, doc


def test_a_witness_that_holds_nothing_of_the_table_fails(
    signed: str, floor_url: str, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(floor_url):
        pass
    status, doc = verify(capsys, "--db", signed, "--key", str(keys[1]), "--witness", floor_url)
    assert status == 1 and problem(doc) == (0, "witness"), doc
    assert "holds nothing of this table" in doc["problem"]["message"]


def test_run_check_devices_checks_the_signing_key(
    tmp_path: Path, store_shift_events: Shift, keys: tuple[Path, Path]
) -> None:
    from controller.service.check import check_devices
    from controller.service.config import config_from_dict
    from controller.service.pin import hash_pin

    line = store_shift_events(1)[0]

    def key_line(path: Path) -> str:
        data = {
            "table": {k: v for k, v in line.items() if k != "type"},
            "shoe": {"url": "none"},
            "store": {"url": f"sqlite:///{tmp_path}/t.db", "signing_key": str(path)},
            "supervisors": {"jsmith": hash_pin("2468", iterations=1000)},
        }
        checks = check_devices(config_from_dict(data, tmp_path / "table.toml"))
        return next(c.line() for c in checks if c.device == "key")

    assert key_line(keys[0]).startswith("key     ok:")
    assert key_line(tmp_path / "none.key") == (
        f"key     FAILED: signing key {tmp_path / 'none.key'}: no such file"
    )
    os.chmod(keys[0], 0o644)
    assert "lets others read it" in key_line(keys[0])
