"""`floorctl run --check --devices`: open each device the config names and say what was found.

Run by the technician (and by the unit's ``ExecStartPre`` if wanted) before a table opens:

- the shoe reader: the port opens; with a heartbeat configured, a valid line (heartbeat,
  card, ...) arrives within ``heartbeat_timeout``;
- the chip camera: the source opens and gives a frame that is not black;
- the audit store: it can be reached, it is writable, and its schema is one this floorctl
  knows (an older one is upgraded when the service starts; a newer one is refused);
- the signing key, when ``[store] signing_key`` names one: readable, Ed25519, mode 0600.

Nothing is changed: no event is recorded, no migration run. Each check answers one line; the
first that fails makes the exit status 1, its line naming the device.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from controller.service.config import ServiceConfig

NOT_LEARNED = (
    "its chips were never learned on this table (no [camera.learned]): run `floorctl "
    "calibrate --learn` before play (as configured, a dark chip at a stack's foot may be missed)"
)


@dataclass(frozen=True)
class DeviceCheck:
    device: str
    ok: bool
    found: str

    def line(self) -> str:
        return f"{self.device:<7} {'ok' if self.ok else 'FAILED'}: {self.found}"


def check_devices(cfg: ServiceConfig) -> list[DeviceCheck]:
    checks = [_check_shoe(cfg), _check_camera(cfg), _check_store(cfg)]
    if cfg.store.signing_key is not None:
        checks.append(_check_key(cfg.store.signing_key))
    else:  # allowed (a test bench, a table before its key is made), but said
        checks.append(
            DeviceCheck("key", True, "none ([store] signing_key): the log will not be signed")
        )
    return checks


def _check_key(path: str) -> DeviceCheck:
    """The table's signing key ([store] signing_key): readable, an Ed25519 key, kept private."""
    from controller.store.db import StoreError
    from controller.store.keys import load_signing_key

    try:
        key = load_signing_key(path)
    except StoreError as exc:
        return DeviceCheck("key", False, str(exc))
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o077:
        return DeviceCheck(
            "key", False, f"signing key {path}: mode {mode:04o} lets others read it (chmod 0600)"
        )
    return DeviceCheck("key", True, f"{path}: Ed25519 key {key.key_id[:16]}…, mode 0600")


def _check_shoe(cfg: ServiceConfig) -> DeviceCheck:
    url = cfg.shoe.url
    if url is None:
        return DeviceCheck("shoe", True, 'none configured ([shoe] url = "none"): cards by hand')
    from drivers.shoe.events import Misread
    from drivers.shoe.framing import LineFramer
    from drivers.shoe.transport import SerialSettings, SerialTransport, TransportError

    port = SerialTransport(url, SerialSettings(baudrate=cfg.shoe.baudrate), read_timeout=0.1)
    try:
        port.open()
    except TransportError as exc:
        return DeviceCheck("shoe", False, str(exc))
    try:
        wait = cfg.shoe.heartbeat_timeout
        if not wait:
            return DeviceCheck(
                "shoe", True, f"{url} opened at {cfg.shoe.baudrate} baud (no heartbeat)"
            )
        framer = LineFramer()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                data = port.read()
            except TransportError as exc:
                return DeviceCheck("shoe", False, str(exc))
            for event in framer.feed(data):
                if not isinstance(event, Misread):
                    heard = event.to_dict()
                    return DeviceCheck(
                        "shoe",
                        True,
                        f"{url} opened at {cfg.shoe.baudrate} baud; heard a {heard['type']}",
                    )
        return DeviceCheck(
            "shoe",
            False,
            f"{url} opened, but no valid line in {wait:g} s "
            "(is the reader powered and set to this baud rate?)",
        )
    finally:
        port.close()


def _check_camera(cfg: ServiceConfig) -> DeviceCheck:
    camera = cfg.camera
    if camera is None:
        return DeviceCheck("camera", True, "none configured: wagers by hand")
    from drivers.camera.monitor import is_black
    from drivers.camera.sources import SourceError, open_source

    try:
        source = open_source(camera.source, camera.resolution)
    except SourceError as exc:
        return DeviceCheck("camera", False, str(exc))
    try:
        frame = None
        for _ in range(10):  # a camera may give a few empty frames while it starts
            frame = source.read()
            if frame is not None:
                break
        if frame is None:
            return DeviceCheck("camera", False, f"camera source {camera.source!r} gave no frame")
        height, width = frame.shape[:2]
        if is_black(frame, camera.black_level):
            return DeviceCheck(
                "camera",
                False,
                f"camera source {camera.source!r}: the frame is black (lens covered, lights off?)",
            )
        return DeviceCheck(
            "camera",
            True,
            f"{camera.source!r} gives {width}x{height} frames "
            "(`floorctl calibrate` checks the layout is in view)"
            + ("" if camera.learned is not None else f"; {NOT_LEARNED}"),
        )
    finally:
        source.close()


def _check_store(cfg: ServiceConfig) -> DeviceCheck:
    import sqlalchemy as sa

    from controller.store.db import (
        StoreError,
        create_engine,
        current_revision,
        describe,
        head_revision,
        normalize_url,
        safe_url,
        sqlite_path,
    )

    url = cfg.store.url
    shown = safe_url(url)
    try:
        path = sqlite_path(normalize_url(url))
    except sa.exc.ArgumentError as exc:
        return DeviceCheck("store", False, f"{shown}: not a database URL ({exc})")
    if path is not None and not path.exists():
        if not path.parent.is_dir():
            return DeviceCheck("store", False, f"{shown}: directory {path.parent} does not exist")
        if not os.access(path.parent, os.W_OK):
            return DeviceCheck("store", False, f"{shown}: directory {path.parent} is not writable")
        return DeviceCheck("store", True, f"{shown}: new store, created when the service starts")
    try:
        engine = create_engine(url)
    except StoreError as exc:
        return DeviceCheck("store", False, str(exc))
    try:
        head = head_revision()
        try:
            revision = current_revision(engine)
            if revision is not None and revision != head and not _known(revision):
                return DeviceCheck(
                    "store",
                    False,
                    f"{shown}: schema {revision} is not one this floorctl knows "
                    f"(newest known {head}): a newer floorctl wrote it",
                )
            if path is not None:
                problem = _sqlite_unwritable(path)
                if problem:
                    return DeviceCheck("store", False, f"{shown}: {problem}")
            elif revision is not None:
                with engine.connect() as conn:
                    allowed = conn.execute(
                        sa.text("SELECT has_table_privilege(current_user, 'events', 'INSERT')")
                    ).scalar()
                if not allowed:
                    return DeviceCheck(
                        "store", False, f"{shown}: this role may not insert into events"
                    )
        except sa.exc.DBAPIError as exc:
            return DeviceCheck("store", False, f"{shown}: {describe(exc)}")
        if revision is None:
            state = "no schema yet: created when the service starts"
        elif revision == head:
            state = f"schema current ({head})"
        else:
            state = f"schema {revision}, upgraded to {head} when the service starts"
        return DeviceCheck("store", True, f"{shown} writable; {state}")
    finally:
        engine.dispose()


def _sqlite_unwritable(path: Path) -> str:
    """Why the SQLite file cannot take a write now ("" when it can): a write lock is taken
    and given back, which needs the file and its directory (the WAL and its index) writable."""
    try:
        conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    except sqlite3.Error as exc:
        return f"cannot open {path}: {exc}"
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return f"cannot write {path}: {exc}"
    finally:
        conn.close()
    return ""


def _known(revision: str) -> bool:
    from alembic.script import ScriptDirectory

    from controller.store.db import MIGRATIONS

    try:
        return ScriptDirectory(str(MIGRATIONS)).get_revision(revision) is not None
    except Exception:  # alembic raises its own errors for an unknown id
        return False
