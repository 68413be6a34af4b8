"""What `floorctl run` refuses before it serves a screen: an unsafe signing key, a second
recorder on the same store, a store that belongs to another table.

Each refusal is a :class:`StartRefused`, which `floorctl run` ends with exit status 2: the
unit's ``RestartPreventExitStatus=2`` then stops systemd restarting a table whose fix is a
person's (a chmod, a config, a store put back), where a restart every 2 s would only fill the
journal. Each message names the file or store and says what to do.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TYPE_CHECKING

from controller.service.errors import StartError

if TYPE_CHECKING:
    from controller.store.keys import SigningKey
    from controller.store.lock import RecorderLock
    from controller.store.repository import Store


class StartRefused(StartError):
    """A start refused for a reason a restart would not fix (exit status 2)."""

    exit_code = 2


# ----- the signing key ----------------------------------------------------------------------


def key_problem(path: Path | str) -> str | None:
    """Why the file named by ``[store] signing_key`` may not be used as the table's key, or
    None: it must exist, be a regular file, be readable by no one but its owner, and hold an
    Ed25519 private key (not the public ``table.pub``)."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        return (
            f"signing key {path}: no such file (make one with `floorctl keygen --out "
            f"{path.parent}`, or name the table's key)"
        )
    except OSError as exc:
        return f"signing key {path}: cannot read it ({exc.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return (
            f"signing key {path}: is a directory; name the key file in it (e.g. {path}/table.key)"
        )
    if not stat.S_ISREG(info.st_mode):
        return f"signing key {path}: not a regular file"
    if _is_public_key(path):  # table.pub named for table.key: chmod is not the fix
        return (
            f"signing key {path}: is a public key; name the private key "
            "(table.key, made with table.pub by floorctl keygen)"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return (
            f"signing key {path}: mode {mode:04o} lets other users read it; "
            f"fix: chmod 600 {path} (and make a new key if others may have read it)"
        )
    return None


def load_table_key(path: Path | str) -> SigningKey:
    """The table's signing key, checked as :func:`key_problem` says; :class:`StartRefused`
    naming the file and the fix otherwise."""
    from controller.store.db import StoreError
    from controller.store.keys import load_signing_key

    problem = key_problem(path)
    if problem is not None:
        raise StartRefused(f"[store] signing_key: {problem}")
    try:
        return load_signing_key(path)
    except StoreError as exc:
        message = str(exc)
        if _is_public_key(Path(path)):
            message = (
                f"signing key {path}: is a public key; name the private key "
                "(table.key, made with table.pub by floorctl keygen)"
            )
        raise StartRefused(f"[store] signing_key: {message}") from None


def _is_public_key(path: Path) -> bool:
    try:
        head = path.read_bytes()[:200]
    except OSError:
        return False
    return b"-----BEGIN PUBLIC KEY-----" in head


# ----- one recorder per store ---------------------------------------------------------------


def lock_store(store_url: str, table_id: str, store: Store | None = None) -> RecorderLock | None:
    """The recorder's lock on its store (:func:`controller.store.lock.lock_store`), a lock held
    by another process refused as :class:`StartRefused`."""
    from controller.store.lock import StoreLocked
    from controller.store.lock import lock_store as take

    try:
        return take(store_url, table_id, store)
    except StoreLocked as exc:
        raise StartRefused(str(exc)) from None


# ----- a store of this table ----------------------------------------------------------------


def check_store_is_this_tables(store: Store, table_id: str) -> None:
    """StartRefused if the store holds other tables' logs but not this one's: a store copied
    from another table (or a config naming the wrong table) would otherwise start a second
    table in it, silently."""
    others = store.table_ids()
    if others and table_id not in others:
        shown = ", ".join(others[:5]) + (" …" if len(others) > 5 else "")
        raise StartRefused(
            f"audit store {store.name} holds the log of table {shown}, not of table "
            f"{table_id} ([table] table_id): it belongs to another table. Give this table its "
            "own store ([store] url), or correct table_id if the store is this table's"
        )
