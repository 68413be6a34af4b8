"""Readers of a table still recording see one moment of it: no false tampering alarms.

A real recorder process plays a long shift at full speed (no pacing: each event is committed,
with its derived rows and, at every round's end, a signed head) while the test runs the
readers against the same store again and again: ``floorctl verify`` (plain, and with the key
and ``--unsigned-tail-ok``), ``floorctl ship`` to a floor database, ``floorctl export`` and
``floorctl prove``. A store that is only being appended to is never tampered with, so every
run must pass; a reader that read the events and the rows derived from them at two moments
reports the rows written in between as "deleted" events.

The suite runs 20 verify and 20 ship runs on SQLite and on PostgreSQL; ``FLOORCTL_SLOW_CHECKS=1``
runs 200 of each.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from conftest import STORE_PG_BASE, _pg_conninfo, store_shift

from controller.cli import main
from controller.store.api import record_scenario
from controller.store.keys import generate_pair, load_signing_key
from controller.store.recorder import Recorder
from controller.store.repository import Store

SLOW = os.environ.get("FLOORCTL_SLOW_CHECKS") == "1"
RUNS = 200 if SLOW else 20


@pytest.fixture
def floor_url() -> Iterator[str]:
    schema = f"snapshot_floor_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_pg_conninfo(STORE_PG_BASE), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in STORE_PG_BASE else "?"
    yield f"{STORE_PG_BASE}{sep}options={quote(f'-csearch_path={schema}')}"
    with psycopg.connect(_pg_conninfo(STORE_PG_BASE), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def endless_shift() -> Iterator[dict[str, Any]]:
    """store_shift's events without end: the table line, then its four blocks (each a shoe
    of its own) over and over, so the writer never runs out however long the readers run."""
    first = store_shift(4)
    yield first[0]
    while True:
        yield from (dict(event) for event in first[1:])


def _record(url: str, key: str, started: Any, stop: Any) -> None:
    """The writer: the table's recorder, restarted from the store, playing on unpaced."""
    events = endless_shift()
    setup = next(events)
    with Store.open(url) as store:
        recorder = Recorder.open(
            store, setup, spool=None, retry_every=None, signing_key=load_signing_key(key)
        )
        try:
            started.set()
            for event in itertools.islice(events, recorder.seq, None):
                if stop.is_set():
                    break
                recorder.record(event)
        finally:
            recorder.close()


class Writer:
    def __init__(self, url: str, key: Path) -> None:
        ctx = multiprocessing.get_context("fork")
        self.started = ctx.Event()
        self.stop = ctx.Event()
        self.process = ctx.Process(
            target=_record, args=(url, str(key), self.started, self.stop), daemon=True
        )

    def __enter__(self) -> Writer:
        self.process.start()
        assert self.started.wait(60), "the recorder did not start"
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.process.join(30)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()

    def events(self, url: str) -> int:
        with Store.open(url, create=False) as store:
            head = store.head("T1")
        return -1 if head is None else head[0]


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main([*args, "--json"])
    out = capsys.readouterr()
    return status, json.loads(out.out) if out.out.strip() else {"err": out.err}


@pytest.mark.timeout(5400 if SLOW else 600)
def test_readers_of_a_table_recording_at_full_speed_never_see_tampering(
    store_url: str,
    floor_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, public, _key = generate_pair(tmp_path / "keys")
    record_scenario(store_url, store_shift(6), signing_key=private)
    alarms: list[str] = []
    with Writer(store_url, private) as writer:
        start = writer.events(store_url)
        for run in range(RUNS):
            # Plain verify, and verify with the key (the unsigned tail of a table in play
            # accepted) on alternate runs: each reads the whole log and all its derived rows.
            signed = ("--key", str(public), "--unsigned-tail-ok") if run % 2 else ()
            status, doc = _json(capsys, "verify", "--db", store_url, *signed)
            if status != 0:
                alarms.append(f"verify {' '.join(signed)} run {run}: {doc.get('problem') or doc}")
            status = main(["ship", "--db", store_url, "--to", floor_url])
            err = capsys.readouterr().err
            if status != 0:
                alarms.append(f"ship run {run}: {err.strip()}")
        export_dir = tmp_path / "export"
        status = main(["export", "--db", store_url, "--out", str(export_dir)])
        err = capsys.readouterr().err
        if status != 0:
            alarms.append(f"export: {err.strip()}")
        end = writer.events(store_url)
    assert not alarms, f"{len(alarms)} false alarms, the first: {alarms[:3]}"
    # The writer really was writing all along: the readers raced hundreds of commits.
    assert end - start > 2 * RUNS, (start, end)
    # And what was exported and shipped still verifies, the floor's copy against the table's.
    assert main(["verify", str(export_dir), "--json"]) == 0
    capsys.readouterr()
    assert main(["verify", "--db", floor_url, "--json"]) == 0
    capsys.readouterr()
