"""Checkpointed restore: a restart starts from the newest checkpoint bound into the chain and
replays only the events after it, giving exactly the state of a replay from the table line;
an altered, replaced, deleted or inserted checkpoint is skipped at a restart and reported by
``verify``. On SQLite and on PostgreSQL."""

from __future__ import annotations

import itertools
import json
import random
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import paths
import pytest
import sqlalchemy as sa

from controller.cli import main
from controller.engine import SnapshotError, Table
from controller.events import parse_event, parse_scenario
from controller.floor.generate import Shift
from controller.store import checkpoint
from controller.store.canonical import ChainRecord
from controller.store.db import StoreError
from controller.store.fold import Fold
from controller.store.recorder import Recorder
from controller.store.repository import Store
from controller.store.verify import verify_store

START = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
EVERY = 40  # events between checkpoints in these tests
OVERHEAD = 3  # events a restart reads besides those it replays: the table line, and the
# checkpoint's event and the one naming it


def game(seed: int, rounds: int) -> list[tuple[dict[str, Any], str]]:
    """A random game: the floor's generator (shoe ends, inspections, irregularities)."""
    return list(Shift("T1", seed=seed, start=START, vocabulary=True, irregular=0.05).events(rounds))


def record(url: str, events: list[tuple[dict[str, Any], str]], every: int = EVERY) -> None:
    with Store.open(url) as store:
        rec = Recorder.open(
            store, events[0][0], spool=None, retry_every=None, checkpoint_every=every
        )
        try:
            for event, at in events[1:]:
                rec.record(event, recorded_at=at)
        finally:
            rec.close()


def replayed_states(events: list[tuple[dict[str, Any], str]]) -> list[dict[str, Any]]:
    """The state a replay from the table line reaches after each event (index = sequence)."""
    fold = Fold("T1", events[0][0], keep_rounds=checkpoint.KEEP_ROUNDS)
    states = [fold.snapshot()]
    for seq, (event, _at) in enumerate(events[1:], start=1):
        fold.apply(seq, event)
        states.append(fold.snapshot())
    return states


class Counting:
    """Counts the stored events a restart reads (wrapping ``Store.iter_records``)."""

    def __init__(self, store: Store) -> None:
        self.read = 0
        inner = store.iter_records

        def iter_records(*args: Any, **kwargs: Any) -> Iterator[ChainRecord]:
            for r in inner(*args, **kwargs):
                self.read += 1
                yield r

        store.iter_records = iter_records  # type: ignore[method-assign]


def reopen(store: Store, every: int = EVERY) -> tuple[Recorder, int]:
    counter = Counting(store)
    rec = Recorder.open(store, table_id="T1", spool=None, retry_every=None, checkpoint_every=every)
    return rec, counter.read


def raw_sql(store: Store, sql: str, **params: Any) -> None:
    """What an intruder with the database owner's rights does: guards off, then the change."""
    with store.engine.begin() as conn:
        if store.dialect == "sqlite":
            for verb in ("update", "delete"):
                conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS checkpoints_no_{verb}")
        else:
            conn.exec_driver_sql("ALTER TABLE checkpoints DISABLE TRIGGER USER")
        conn.execute(sa.text(sql), params)


def newest(store: Store) -> tuple[int, str]:
    return checkpoint.stored(store, "T1")[-1]


# ----- restore == replay ------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_restore_from_a_checkpoint_is_a_replay_from_the_start(store_url: str, seed: int) -> None:
    """Cut a random game at random events (mid-round too), restart each time: the restored
    state is exactly a replay's, from the newest checkpoint, reading only the events after it."""
    events = game(seed, 14)
    states = replayed_states(events)
    rng = random.Random(seed)
    cuts = [*sorted(rng.sample(range(EVERY + 2, len(events)), 4)), len(events) - 1]
    done = 0
    mid_round = 0
    with Store.open(url=store_url) as store:
        rec = Recorder.open(
            store, events[0][0], spool=None, retry_every=None, checkpoint_every=EVERY
        )
        for cut in cuts:
            for event, at in events[done + 1 : cut + 1]:
                rec.record(event, recorded_at=at)
            done = cut
            rec.close()
            stored = checkpoint.stored(store, "T1")
            rec, read = reopen(store)
            assert rec.seq == cut
            assert rec.fold.snapshot() == states[cut]
            assert rec.fold.restored_from == stored[-1][0]
            # Only the events after the checkpoint, and the table line and the checkpoint's
            # two events (the one it follows and the one naming it).
            assert read == cut - stored[-1][0] + OVERHEAD
            mid_round += rec.table.current_round is not None
            # The spacing the setting asks for, and one after each shoe end or load.
            marks = [0] + [s for s, _ in stored]
            assert max(b - a for a, b in itertools.pairwise(marks)) <= EVERY
        rec.close()
        assert mid_round >= 1, "no cut landed mid-round"
        assert verify_store(store, full=True).ok


def test_checkpoints_at_shoe_ends_and_every_n(store_url: str) -> None:
    """With a long interval, checkpoints come at shoe points (after the minimum gap)."""
    events = game(5, 30)
    record(store_url, events, every=100_000)
    types = {seq: e["type"] for seq, (e, _at) in enumerate(events)}
    with Store.open(store_url) as store:
        stored = checkpoint.stored(store, "T1")
    assert stored, "no checkpoint at any shoe end"
    assert all(types[seq] in checkpoint.SHOE_POINTS for seq, _ in stored)
    assert all(b - a >= checkpoint.MIN_GAP for (a, _), (b, _) in itertools.pairwise(stored))


def test_the_chain_names_each_checkpoint_and_numbering_is_unchanged(store_sqlite_url: str) -> None:
    events = game(4, 10)
    record(store_sqlite_url, events)
    with Store.open(store_sqlite_url) as store:
        records = store.records("T1")
        stored = checkpoint.stored(store, "T1")
    assert [r.seq for r in records] == list(range(len(events)))
    for seq, digest in stored:
        assert records[seq + 1].event()[checkpoint.KEY] == digest
    heard = [checkpoint.without_key(r.event()) for r in records[1:]]
    assert heard == [parse_event(e).to_dict() for e, _ in events[1:]]
    assert any(checkpoint.KEY in r.event() for r in records)
    # The field is the store's, not the table's: an event that brings one has it replaced.
    with Store.open(store_sqlite_url) as store:
        rec = Recorder.open(store, table_id="T1", spool=None, retry_every=None)
        done = rec.record(
            {"type": "bet", "box": 1, "player": "ann", "amount": 5, "checkpoint": "0" * 64}
        )
        rec.close()
        body = store.records("T1", after=done.seq - 1, upto=done.seq)[0].event()
        assert body.get(checkpoint.KEY) != "0" * 64
        assert verify_store(store).ok


# ----- a damaged checkpoint -----------------------------------------------------------------

Damage = Callable[[Store, int, str], None]


def _alter_state(store: Store, seq: int, digest: str) -> None:
    raw_sql(
        store,
        "UPDATE checkpoints SET state = replace(state, :a, :b) WHERE seq = :s",
        a='"rounds_played":',
        b='"rounds_played":1',
        s=seq,
    )


def _replace(store: Store, seq: int, digest: str) -> None:
    """A forged state with its own digest recomputed."""
    with store.engine.connect() as conn:
        state = conn.execute(
            sa.text("SELECT state FROM checkpoints WHERE seq = :s"), {"s": seq}
        ).scalar_one()
    forged = state.replace('"rounds_played":', '"rounds_played":1')
    raw_sql(
        store,
        "UPDATE checkpoints SET state = :st, digest = :d WHERE seq = :s",
        st=forged,
        d=checkpoint.digest_of(forged),
        s=seq,
    )


def _delete(store: Store, seq: int, digest: str) -> None:
    raw_sql(store, "DELETE FROM checkpoints WHERE seq = :s", s=seq)


DAMAGES: dict[str, tuple[Damage, str]] = {
    "state altered": (_alter_state, "its state was altered"),
    "state and digest replaced": (_replace, "the checkpoint was replaced"),
    "deleted": (_delete, "which the store lacks"),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_damaged_checkpoint_is_skipped_and_verify_reports_it(
    store_url: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    events = game(6, 8)
    record(store_url, events)
    states = replayed_states(events)
    damage, words = DAMAGES[name]
    with Store.open(store_url) as store:
        stored = checkpoint.stored(store, "T1")
        assert len(stored) >= 2
        seq, digest = stored[-1]
        damage(store, seq, digest)
        report = verify_store(store, replay=False)
        assert not report.ok
        assert report.problem is not None
        assert report.problem.kind == "checkpoint"
        assert report.problem.seq == seq + 1
        assert words in report.problem.message
        capsys.readouterr()
        rec, read = reopen(store)
        logged = capsys.readouterr().out
        # Warned: the damaged one skipped, or (deleted) its event naming what is not stored.
        warning = "the store lacks" if name == "deleted" else "checkpoint skipped"
        assert warning in logged and f"checkpoint={seq}" in logged
        older = stored[-2][0]
        assert rec.fold.restored_from == older  # the next older one, bound and sound
        # (and perhaps the two events of the checkpoint skipped)
        assert 0 <= read - (len(events) - 1 - older + OVERHEAD) <= 2
        assert rec.fold.snapshot() == states[-1]
        rec.close()


def test_an_inserted_checkpoint_is_not_used_and_verify_reports_it(store_url: str) -> None:
    events = game(7, 8)
    record(store_url, events)
    states = replayed_states(events)
    with Store.open(store_url) as store:
        seq, _digest = newest(store)
        at = len(events) - 3  # newer than the newest; no event names it
        fold = Fold("T1", events[0][0], keep_rounds=checkpoint.KEEP_ROUNDS)
        for s, (event, _at) in enumerate(events[1 : at + 1], start=1):
            fold.apply(s, event)
        forged = checkpoint.Checkpoint.of(fold)
        raw_sql(
            store,
            "INSERT INTO checkpoints (table_id, seq, digest, state) VALUES ('T1', :s, :d, :st)",
            s=at,
            d=forged.digest,
            st=forged.state,
        )
        rec, _read = reopen(store)
        assert rec.fold.restored_from == seq
        assert rec.fold.snapshot() == states[-1]
        rec.close()
        report = verify_store(store, replay=False)
        assert report.problem is not None
        assert (report.problem.kind, report.problem.seq) == ("checkpoint", at + 1)
        assert "it was inserted" in report.problem.message


def test_a_checkpoint_rebound_by_rewriting_its_event_breaks_the_chain(store_url: str) -> None:
    """Forging a checkpoint and the event naming it (hash recomputed) leaves the chain broken
    at the next event: the restart refuses the store, verify names the event."""
    events = game(8, 8)
    record(store_url, events)
    with Store.open(store_url) as store:
        seq, _digest = newest(store)
        _replace(store, seq, _digest)
        with store.engine.connect() as conn:
            new = conn.execute(
                sa.text("SELECT digest FROM checkpoints WHERE seq = :s"), {"s": seq}
            ).scalar_one()
        old = store.records("T1", after=seq, upto=seq + 1)[0]
        body = {**old.event(), checkpoint.KEY: new}
        forged = ChainRecord.make("T1", seq + 1, body, old.prev_hash, old.recorded_at, old.corrects)
        with store.engine.begin() as conn:
            if store.dialect == "sqlite":
                conn.exec_driver_sql("DROP TRIGGER IF EXISTS events_no_update")
            else:
                conn.exec_driver_sql("ALTER TABLE events DISABLE TRIGGER USER")
            conn.execute(
                sa.text("UPDATE events SET body = :b, hash = :h WHERE seq = :s"),
                {"b": forged.body, "h": forged.hash, "s": seq + 1},
            )
        report = verify_store(store, replay=False)
        assert report.problem is not None and report.problem.kind == "edited"
        assert report.problem.seq == seq + 1
        with pytest.raises(StoreError, match="does not verify"):
            Recorder.open(store, table_id="T1", spool=None, retry_every=None)


def test_verify_full_checks_each_checkpoint_against_a_replay(
    store_sqlite_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint bound into the chain but holding a wrong state (a recorder at fault):
    the default check passes (the chain and digests hold), ``--full`` names it."""
    events = game(9, 8)
    taken = checkpoint.Checkpoint.of
    wrong: list[int] = []

    def faulty(fold: Fold) -> checkpoint.Checkpoint:
        good = taken(fold)
        if wrong:
            return good
        wrong.append(good.seq)
        state = json.loads(good.state)
        state["engine"]["discards"] = [*state["engine"]["discards"], "KS"]
        text = json.dumps(state, sort_keys=True, separators=(",", ":"))
        return checkpoint.Checkpoint(good.table_id, good.seq, checkpoint.digest_of(text), text)

    monkeypatch.setattr(checkpoint.Checkpoint, "of", staticmethod(faulty))
    record(store_sqlite_url, events)
    monkeypatch.setattr(checkpoint.Checkpoint, "of", staticmethod(taken))
    assert main(["verify", "--db", store_sqlite_url]) == 0
    capsys.readouterr()
    assert main(["verify", "--db", store_sqlite_url, "--full"]) == 1
    out = capsys.readouterr().out
    assert f"event {wrong[0] + 1}: checkpoint:" in out and "differs from a replay" in out


def test_verify_full_passes_on_a_sound_store(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record(store_url, game(10, 10))
    assert main(["verify", "--db", store_url, "--full"]) == 0
    assert "OK" in capsys.readouterr().out


# ----- the restart's reading does not grow with the log ------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_a_restart_reads_only_the_events_after_its_checkpoint(tmp_path: Path, n: int) -> None:
    """The benchmark's stores, small: the recorder replays only the events after the newest
    checkpoint, and the screen reads nothing but its list of recent events: the table it shows
    is the checkpoint's, whatever the log's length."""
    from bench_store import build_store

    from controller.service.core import RECENT, TableService

    url = f"sqlite:///{tmp_path / 'big.db'}"
    build_store(url, n)
    with Store.open(url) as store:
        stored = checkpoint.stored(store, "T1")
        counter = Counting(store)
        rec = Recorder.open(store, table_id="T1", spool=None, retry_every=None)
        replayed = counter.read
        assert rec.seq == n
        assert rec.fold.restored_from == stored[-1][0]
        assert replayed == n - stored[-1][0] + OVERHEAD
        assert replayed <= checkpoint.DEFAULT_EVERY + OVERHEAD
        assert len(rec.table.rounds) <= checkpoint.KEEP_ROUNDS
        counter.read = 0
        TableService(rec)
        assert counter.read <= RECENT
        rec.close()


def test_a_fold_state_is_refused_when_of_another_table_or_damaged() -> None:
    events = game(11, 3)
    fold = Fold("T1", events[0][0], keep_rounds=checkpoint.KEEP_ROUNDS)
    for seq, (event, _at) in enumerate(events[1:40], start=1):
        fold.apply(seq, event)
    state = fold.snapshot()
    back = Fold.restore("T1", events[0][0], state)
    assert back.snapshot() == state and back.restored_from == 39
    with pytest.raises(ValueError, match="of table 'T1', not 'T2'"):
        Fold.restore("T2", events[0][0], state)
    with pytest.raises(ValueError, match="holds an engine at event 39"):
        Fold.restore("T1", events[0][0], {**state, "seq": 38})
    engine = {**state["engine"], "rounds_played": 99}
    with pytest.raises(ValueError, match="digest does not match"):
        Fold.restore("T1", events[0][0], {**state, "engine": engine})
    with pytest.raises(ValueError, match="another table setup"):
        Fold.restore("T1", {**events[0][0], "boxes": 5}, state)


def test_a_checkpoint_of_the_older_engine_format_is_compared_as_it_was_written() -> None:
    """A store's checkpoints from before the desk (engine format 2) still verify: today's
    replay, written as format 2 wrote it, equals the state the older engine checkpointed.
    The fixture is the older engine's own snapshot (floorctl at c83c062) after 25 events of
    the worked example 04 (a round in progress, flags on both rounds)."""
    older = json.loads((paths.DATA / "engine-snapshot-v2.json").read_text(encoding="utf-8"))
    assert older["version"] == 2
    lines = (paths.EXAMPLES / "04-pontoon-irregularities.jsonl").read_text().splitlines()
    setup, events = parse_scenario(lines)
    table = Table(setup)
    for _line, ev in events[:25]:
        table.apply(ev)
    now = table.snapshot()
    assert now["version"] == 3
    assert checkpoint.same_state({"seq": 25, "engine": now}, {"seq": 25, "engine": older}) is None
    # and a difference still shows, by its field
    older["round"]["flags"] = []
    assert checkpoint.same_state({"seq": 25, "engine": now}, {"seq": 25, "engine": older}) == (
        "round"
    )
    # an older checkpoint cannot be restored: a restart skips it and replays (see the recorder)
    with pytest.raises(SnapshotError, match="version 2"):
        Table.restore(setup, older)
