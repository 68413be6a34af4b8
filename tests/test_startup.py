"""What `floorctl run` refuses at start, and how it tells systemd (issue 25, item 5).

Each case is the attack as it was made: a key file others can read, a directory or the public
key named as the signing key, a second `floorctl run` on the same store, a store copied from
another table. Each must end `run --check` (the unit's ExecStartPre) and `run` itself with exit
status 2 (the unit's RestartPreventExitStatus) and a message naming the file and the fix, and
nothing may be served.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from controller.service.app import StartError, open_table
from controller.service.pin import hash_pin
from controller.service.startup import StartRefused
from controller.store.keys import generate_pair

ROOT = Path(__file__).resolve().parent.parent
LINE = {
    "type": "table",
    "table_id": "T07",
    "game": "pontoon-nz-2000",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
}
SUPERVISORS = {"jsmith": hash_pin("2468", iterations=1000)}


def write_config(
    tmp_path: Path, store: str, key: Path | None = None, table_id: str = "T07"
) -> Path:
    config = tmp_path / f"{table_id}.toml"
    key_line = f'signing_key = "{key}"' if key is not None else ""
    config.write_text(
        f"""
[table]
table_id = "{table_id}"
game = "pontoon-nz-2000"
boxes = 7
min_bet = 5
max_bet = 1000

[shoe]
url = "none"

[store]
url = "{store}"
{key_line}

[ui]
host = "127.0.0.1"
port = 0

[supervisors]
jsmith = "{SUPERVISORS["jsmith"]}"
""",
        encoding="utf-8",
    )
    return config


def floorctl(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def key(tmp_path: Path) -> Path:
    private, _public, _key = generate_pair(tmp_path / "keys")
    return private


# ----- the signing key ----------------------------------------------------------------------


def unsafe_keys(tmp_path: Path, key: Path) -> dict[str, tuple[Path, str]]:
    """Each unsafe key as it was named in the attack, and what the message must say."""
    readable = tmp_path / "readable" / "table.key"
    readable.parent.mkdir()
    readable.write_bytes(key.read_bytes())
    readable.chmod(0o644)
    group = tmp_path / "group" / "table.key"
    group.parent.mkdir()
    group.write_bytes(key.read_bytes())
    group.chmod(0o640)
    return {
        "others can read it": (readable, f"chmod 600 {readable}"),
        "its group can read it": (group, f"chmod 600 {group}"),
        "a directory": (key.parent, "is a directory"),
        "the public key": (key.with_name("table.pub"), "is a public key"),
        "missing": (tmp_path / "nowhere" / "table.key", "no such file"),
    }


def test_an_unsafe_signing_key_is_refused_by_run_check_and_run_with_exit_2(
    tmp_path: Path, key: Path
) -> None:
    # A public key is refused as such, whatever its mode (keygen leaves it readable).
    for what, (path, says) in unsafe_keys(tmp_path, key).items():
        config = write_config(tmp_path, f"sqlite:///{tmp_path}/t.db", path)
        for args in (("--check",), ()):
            status, out = floorctl("run", "--config", str(config), *args)
            assert status == 2, (what, args, out)
            assert says in out and str(path) in out, (what, args, out)
            assert "Traceback" not in out
        assert not (tmp_path / "t.db").exists(), what  # refused before the store is touched
    good = write_config(tmp_path, f"sqlite:///{tmp_path}/t.db", key)
    status, out = floorctl("run", "--config", str(good), "--check")
    assert status == 0, out


def test_open_table_refuses_a_readable_key_before_the_store(tmp_path: Path, key: Path) -> None:
    key.chmod(0o604)
    with pytest.raises(StartRefused, match=r"mode 0604 lets other users read it; fix: chmod 600"):
        open_table(LINE, f"sqlite:///{tmp_path}/t.db", SUPERVISORS, signing_key=str(key))
    assert not (tmp_path / "t.db").exists()


# ----- one recorder per store ---------------------------------------------------------------


def test_a_second_recorder_on_a_sqlite_store_is_refused_and_the_first_goes_on(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    first = open_table(LINE, url, SUPERVISORS)
    try:
        with pytest.raises(StartRefused, match="another floorctl is recording on it"):
            open_table(LINE, url, SUPERVISORS)
        # ... and as systemd would start it: exit 2, no READY=1, nothing served.
        notify_path = str(tmp_path / "notify.sock")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.setblocking(False)
        config = write_config(tmp_path, url)
        status, out = floorctl(
            "run", "--config", str(config), env=dict(os.environ, NOTIFY_SOCKET=notify_path)
        )
        assert status == 2, out
        assert f"process {os.getpid()}" in out and "systemctl stop floorctl" in out, out
        with pytest.raises(BlockingIOError):
            notify.recv(4096)
        notify.close()
        first.service.submit({"type": "shuffle", "decks": 6, "cut_card": 200}, source="shoe")
        assert first.recorder.seq == 1
    finally:
        first.close()
    again = open_table(LINE, url, SUPERVISORS)  # the lock went with the first table
    try:
        assert again.recorder.seq == 1
    finally:
        again.close()


def test_replay_into_a_store_a_table_is_recording_on_is_refused(tmp_path: Path) -> None:
    from controller.store.api import record_scenario
    from controller.store.lock import StoreLocked

    url = f"sqlite:///{tmp_path}/t.db"
    table = open_table(LINE, url, SUPERVISORS)
    try:
        with pytest.raises(StoreLocked, match="another floorctl is recording on it"):
            record_scenario(url, [LINE, {"type": "shuffle", "decks": 6, "cut_card": 200}])
        assert table.recorder.seq == 0  # nothing was written behind the table's back
    finally:
        table.close()
    record_scenario(url, [LINE, {"type": "shuffle", "decks": 6, "cut_card": 200}])


def test_a_second_recorder_on_a_postgresql_store_is_refused(
    store_pg_url: str, store_spool_dir: Path
) -> None:
    first = open_table(LINE, store_pg_url, SUPERVISORS)
    try:
        with pytest.raises(StartRefused, match="another floorctl is recording table T07"):
            open_table(LINE, store_pg_url, SUPERVISORS)
    finally:
        first.close()
    again = open_table(LINE, store_pg_url, SUPERVISORS)
    again.close()


# ----- a store of this table ----------------------------------------------------------------


def test_a_store_copied_from_another_table_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    open_table(LINE, url, SUPERVISORS).close()
    other = {**LINE, "table_id": "T08"}
    with pytest.raises(StartRefused, match=r"holds the log of table T07, not of table T08"):
        open_table(other, url, SUPERVISORS)
    status, out = floorctl("run", "--config", str(write_config(tmp_path, url, table_id="T08")))
    assert status == 2 and "belongs to another table" in out, out


def test_a_store_signed_by_another_key_is_refused(tmp_path: Path, key: Path) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    open_table(LINE, url, SUPERVISORS, signing_key=str(key)).close()
    other, _pub, _k = generate_pair(tmp_path / "other")
    with pytest.raises(StartRefused, match=r"not by the configured signing key"):
        open_table(LINE, url, SUPERVISORS, signing_key=str(other))
    status, out = floorctl("run", "--config", str(write_config(tmp_path, url, other)))
    assert status == 2 and "belongs to another table" in out, out


def test_a_spool_copied_from_another_table_is_refused(tmp_path: Path) -> None:
    from controller.store.canonical import GENESIS, ChainRecord
    from controller.store.spool import Spool

    # T08's spool, copied to where T07's is kept (beside its store).
    spool, _ = Spool.open(tmp_path / "t.db.T07.spool", "T08")
    line = {**LINE, "table_id": "T08"}
    spool.append([ChainRecord.make("T08", 0, line, GENESIS, "2026-12-02T08:00:00.000000Z")])
    spool.close()
    with pytest.raises(StartRefused, match=r"names table 'T08', not 'T07': the spool belongs"):
        open_table(LINE, f"sqlite:///{tmp_path}/t.db", SUPERVISORS)


def test_a_store_set_up_as_another_game_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    open_table(LINE, url, SUPERVISORS).close()
    with pytest.raises(StartRefused, match=r"is stored with the table line"):
        open_table({**LINE, "max_bet": 500}, url, SUPERVISORS)


def test_a_postgresql_table_with_no_spool_directory_is_a_config_error(
    store_pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    with pytest.raises(StartRefused, match=r"\[store\] spool_dir") as caught:
        open_table(LINE, store_pg_url, SUPERVISORS)
    assert caught.value.exit_code == 2


def test_an_unreachable_store_is_a_fault_a_restart_may_clear(tmp_path: Path) -> None:
    with pytest.raises(StartError) as caught:
        open_table(LINE, "postgresql://nobody@127.0.0.1:1/none", SUPERVISORS, spool=False)
    assert caught.value.exit_code == 1
