"""The table config (`/etc/floorctl/table.toml`): read, checked, refused when wrong.

Every key is known; an unknown section or key, or a value of the wrong kind, stops the
service before it opens a device, with one message naming the file, the key and the value:

    /etc/floorctl/table.toml: [ui] port = 99999: not a TCP port (1-65535)

The [table] section becomes the scenario's `table` line and is checked by the engine's own
parser; the [camera] section is checked by the camera driver's loader.
"""

from __future__ import annotations

import importlib
import ipaddress
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from controller.events import ScenarioError, TableSetup, parse_setup
from controller.rules import add_rules_dir
from controller.service.pin import MIN_PIN_LENGTH, PinFormatError, parse_pin_hash

DEFAULT_CONFIG = Path("/etc/floorctl/table.toml")


class ConfigError(ValueError):
    """A config the service will not start with; the message names file, key and value."""

    def __init__(self, path: Path | str, key: str, value: Any, reason: str) -> None:
        shown = "(missing)" if value is _MISSING else _show(value)
        super().__init__(f"{path}: {key} = {shown}: {reason}" if key else f"{path}: {reason}")
        self.path = str(path)
        self.key = key
        self.value = None if value is _MISSING else value
        self.reason = reason

    @classmethod
    def named_by(cls, path: Path | str, key: str, message: str) -> ConfigError:
        """An error whose message (from another part's loader) already names file, key, value."""
        err = cls(path, "", _MISSING, message)
        err.args = (message if str(path) in message else f"{path}: {message}",)
        err.key = key
        return err


_MISSING: Any = object()


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, (dict, list)) else str(value)


@dataclass(frozen=True)
class ShoeConfig:
    url: str | None  # None: no shoe reader attached (cards entered by hand)
    baudrate: int = 9600
    heartbeat_timeout: float = 3.0
    reconnect_seconds: float = 2.0
    noise_misreads: int = 5  # more misreads than this within noise_window: "line noise"
    noise_window: float = 10.0


@dataclass(frozen=True)
class UiConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    pin_max_attempts: int = 5
    pin_lockout_seconds: float = 60.0
    supervisor_session_seconds: float = 120.0
    allowed_hosts: tuple[str, ...] = ()  # names beyond 127.0.0.1, localhost, ::1 and `host`
    trusted_proxy: str | None = None  # the one address whose proxy headers are believed
    request_timeout: float = 10.0  # a request's line, headers and body arrive within this


@dataclass(frozen=True)
class StoreConfig:
    url: str = "sqlite:///floorctl.db"
    spool_dir: str | None = None  # the local spool's directory (default: beside SQLite)
    spool_reserve_kib: int = 1024  # kept allocated in the spool for a full disk
    signing_key: str | None = None  # the table's Ed25519 key (floorctl keygen): signed heads
    checkpoint_every: int = 2000  # events between checkpoints of the table's state, at most
    clock_forward_seconds: float = 120.0  # a wall clock further ahead is recorded as a step


@dataclass(frozen=True)
class LogConfig:
    level: str = "info"


@dataclass(frozen=True)
class ServiceConfig:
    path: Path
    table: dict[str, Any]  # the scenario's `table` line
    setup: TableSetup
    shoe: ShoeConfig
    store: StoreConfig
    ui: UiConfig
    log: LogConfig
    supervisors: dict[str, str]  # supervisor id -> PIN hash
    camera: Any = None  # the camera driver's own config object, or None when absent
    camera_raw: dict[str, Any] = field(default_factory=dict)
    dealers: dict[str, str] = field(default_factory=dict)  # dealer id -> PIN hash


# --- value checkers: each returns the value or raises ValueError(reason) ----------------------


def _str(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("expected non-empty text")
    return v


def _int_range(lo: int, hi: int, what: str) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"not {what} ({lo}-{hi})")
        return v

    return check


def _seconds(lo: float, hi: float) -> Callable[[Any], float]:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ValueError(f"not a number of seconds ({lo:g}-{hi:g})")
        return float(v)

    return check


def _port(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 65535:
        raise ValueError("not a TCP port (1-65535, or 0 for any free port)")
    return v


def _heartbeat(v: Any) -> float:
    """Seconds of silence before the reader counts as faulty; 0 for a plain scanner."""
    if v == 0 and not isinstance(v, bool):
        return 0.0
    try:
        return _seconds(0.5, 600)(v)
    except ValueError:
        raise ValueError(
            "not a number of seconds (0.5-600, or 0: the reader sends no heartbeat)"
        ) from None


def _host(v: Any) -> str:
    if v == "localhost":
        return "127.0.0.1"
    try:
        ipaddress.ip_address(v)
    except ValueError:
        raise ValueError("not an IP address to listen on (e.g. 127.0.0.1 or 0.0.0.0)") from None
    return str(v)


_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_HOSTNAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*")


def _hostnames(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list):
        raise ValueError('expected a list of host names, e.g. ["table07.floor.example"]')
    out = []
    for name in v:
        text = name.lower().rstrip(".") if isinstance(name, str) else ""
        try:
            ipaddress.ip_address(text)
        except ValueError:
            if not _HOSTNAME.fullmatch(text):
                raise ValueError(f"{_show(name)} is not a host name or IP address") from None
        out.append(text)
    return tuple(out)


def _proxy(v: Any) -> str | None:
    if v == "":
        return None
    try:
        return str(ipaddress.ip_address(v))
    except ValueError:
        raise ValueError(
            'not the IP address of a proxy in front of the screen ("" for none)'
        ) from None


def _level(v: Any) -> str:
    if v not in ("debug", "info", "warning", "error"):
        raise ValueError('not a log level ("debug", "info", "warning" or "error")')
    return str(v)


def _shoe_url(v: Any) -> str | None:
    if v == "none":
        return None
    return _str(v)


def _directory(v: Any) -> str:
    text = _str(v)
    if not Path(text).is_absolute():
        raise ValueError("not an absolute directory path")
    return text


def _store_url(v: Any) -> str:
    text = _str(v)
    if not text.startswith(("sqlite:", "postgresql:", "postgresql+psycopg:", "postgres:")):
        raise ValueError("not a database URL (sqlite:///PATH or postgresql://...)")
    return text


def _key_file(v: Any) -> str:
    text = _str(v)
    if not Path(text).is_absolute():
        raise ValueError("not an absolute path to the table's key (floorctl keygen)")
    return text


Spec = dict[str, tuple[Callable[[Any], Any], Any]]

_SHOE: Spec = {
    "url": (_shoe_url, _MISSING),
    "baudrate": (_int_range(300, 921_600, "a baud rate"), 9600),
    "heartbeat_timeout": (_heartbeat, 3.0),
    "reconnect_seconds": (_seconds(0.1, 600), 2.0),
    "noise_misreads": (_int_range(1, 10_000, "a number of misreads"), 5),
    "noise_window": (_seconds(0.5, 3600), 10.0),
}
_UI: Spec = {
    "host": (_host, "127.0.0.1"),
    "port": (_port, 8080),
    "pin_max_attempts": (_int_range(1, 100, "a number of attempts"), 5),
    "pin_lockout_seconds": (_seconds(1, 86_400), 60.0),
    "supervisor_session_seconds": (_seconds(10, 3600), 120.0),
    "allowed_hosts": (_hostnames, ()),
    "trusted_proxy": (_proxy, None),
    "request_timeout": (_seconds(0.5, 120), 10.0),
}
_STORE: Spec = {
    "url": (_store_url, _MISSING),
    "spool_dir": (_directory, None),
    "spool_reserve_kib": (_int_range(16, 1 << 20, "a size in KiB"), 1024),
    "signing_key": (_key_file, None),
    "checkpoint_every": (_int_range(100, 1_000_000, "a number of events"), 2000),
    "clock_forward_seconds": (_seconds(5, 86_400), 120.0),
}
_LOG: Spec = {"level": (_level, "info")}
_TABLE_KEYS = ("table_id", "game", "boxes", "decks", "min_bet", "max_bet", "rules")
# Keys of [table] that configure the service and are not part of the table line.
_TABLE_SERVICE_KEYS = ("rules_dir",)
_SECTIONS = ("table", "shoe", "camera", "store", "ui", "supervisors", "dealers", "log")


def _section(path: Path, data: Mapping[str, Any], name: str, spec: Spec) -> dict[str, Any]:
    raw = data.get(name, {})
    if not isinstance(raw, Mapping):
        raise ConfigError(path, f"[{name}]", raw, "expected a table (section)")
    for key in raw:
        if key not in spec:
            known = ", ".join(spec)
            raise ConfigError(path, f"[{name}] {key}", raw[key], f"unknown key (known: {known})")
    out: dict[str, Any] = {}
    for key, (check, default) in spec.items():
        if key not in raw:
            if default is _MISSING:
                raise ConfigError(path, f"[{name}] {key}", _MISSING, "required")
            out[key] = default
            continue
        try:
            out[key] = check(raw[key])
        except ValueError as exc:
            raise ConfigError(path, f"[{name}] {key}", raw[key], str(exc)) from None
    return out


def _table(path: Path, data: Mapping[str, Any]) -> tuple[dict[str, Any], TableSetup]:
    raw = data.get("table")
    if not isinstance(raw, Mapping):
        raise ConfigError(path, "[table]", raw if raw is not None else _MISSING, "required")
    for key in raw:
        if key not in _TABLE_KEYS + _TABLE_SERVICE_KEYS:
            known = ", ".join(_TABLE_KEYS + _TABLE_SERVICE_KEYS)
            raise ConfigError(path, f"[table] {key}", raw[key], f"unknown key (known: {known})")
    if "rules_dir" in raw:
        _rules_dir(path, raw["rules_dir"])
    line: dict[str, Any] = {"type": "table"}
    for key in _TABLE_KEYS:
        if key in raw:
            value = raw[key]
            # TOML floats are binary: money goes to the engine as decimal text.
            line[key] = str(Decimal(str(value))) if isinstance(value, float) else value
    if "table_id" not in line:
        raise ConfigError(path, "[table] table_id", _MISSING, "required")
    line.setdefault("rules", {})
    try:
        setup = parse_setup(line, line=0)
    except ScenarioError as exc:
        key = exc.field or "?"
        if key.startswith("rules."):
            shown = f"[table.rules] {key.removeprefix('rules.')}"
            value = raw.get("rules", {}).get(key.removeprefix("rules."), _MISSING)
        else:
            shown = f"[table] {key}"
            value = raw.get(key, _MISSING)
        raise ConfigError(path, shown, value, exc.detail) from None
    return line, setup


def _rules_dir(path: Path, value: Any) -> None:
    """``[table] rules_dir``: the operator's own rule sets, searched before floorctl's."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(path, "[table] rules_dir", value, "expected a directory's path")
    folder = path.parent / value  # a relative path is taken from the config's own directory
    if not folder.is_dir():
        raise ConfigError(path, "[table] rules_dir", value, f"{folder} is not a directory")
    add_rules_dir(folder)


def _supervisors(path: Path, data: Mapping[str, Any]) -> dict[str, str]:
    raw = data.get("supervisors")
    if raw is None or (isinstance(raw, Mapping) and not raw):
        raise ConfigError(
            path,
            "[supervisors]",
            _MISSING,
            "no supervisor PIN is set; there is no default PIN. Add one line per supervisor, "
            'e.g. jsmith = "<output of floorctl pin-hash>"',
        )
    return _pin_book(path, "supervisors", raw)


def _dealers(path: Path, data: Mapping[str, Any]) -> dict[str, str]:
    """``[dealers]``: who may sign in to deal (none: the screen takes taps unattributed)."""
    raw = data.get("dealers")
    return {} if raw is None else _pin_book(path, "dealers", raw)


_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")


def _pin_book(path: Path, section: str, raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        raise ConfigError(path, f"[{section}]", raw, "expected a table of id = PIN hash")
    out: dict[str, str] = {}
    for ident, stored in raw.items():
        key = f"[{section}] {ident}"
        if not _ID.fullmatch(str(ident)):
            raise ConfigError(path, key, stored, "an id is 1-32 letters, digits, '.', '_' or '-'")
        if not isinstance(stored, str):
            raise ConfigError(path, key, stored, "expected a PIN hash (text)")
        if stored.isdigit():
            raise ConfigError(
                path,
                key,
                "(a plain PIN)",
                "PINs are stored hashed: run `floorctl pin-hash` and paste its output",
            )
        try:
            parse_pin_hash(stored)
        except PinFormatError as exc:
            raise ConfigError(path, key, stored, f"not a PIN hash: {exc}") from None
        if any(known.casefold() == str(ident).casefold() for known in out):
            raise ConfigError(path, key, stored, "another id differs from this one only in case")
        out[str(ident)] = stored
    return out


CameraLoader = Callable[[Mapping[str, Any], Path], Any]


def _camera_loader() -> CameraLoader | None:
    """The camera driver's section loader, when that driver is installed."""
    try:
        module = importlib.import_module("drivers.camera.config")
    except ImportError:
        return None
    for name in ("load_camera_section", "camera_config_from_dict", "parse_camera_config"):
        loader = getattr(module, name, None)
        if callable(loader):
            return _adapt(loader)
    return None


def _adapt(loader: Callable[..., Any]) -> CameraLoader:
    def call(section: Mapping[str, Any], path: Path) -> Any:
        return loader(dict(section), path)

    return call


def load_config(path: Path | str, camera_loader: CameraLoader | None = None) -> ServiceConfig:
    """Read and check the whole table config; raises ConfigError naming file, key and value."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, "", _MISSING, f"cannot read the config: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, "", _MISSING, f"not valid TOML: {exc}") from None
    return config_from_dict(data, path, camera_loader)


def config_from_dict(
    data: Mapping[str, Any], path: Path | str, camera_loader: CameraLoader | None = None
) -> ServiceConfig:
    path = Path(path)
    for name in data:
        if name not in _SECTIONS:
            raise ConfigError(
                path, f"[{name}]", data[name], f"unknown section (known: {', '.join(_SECTIONS)})"
            )
    table_line, setup = _table(path, data)
    shoe = ShoeConfig(**_section(path, data, "shoe", _SHOE)) if "shoe" in data else None
    if shoe is None:
        raise ConfigError(
            path, "[shoe] url", _MISSING, 'required (a serial port or pyserial URL, or "none")'
        )
    store = StoreConfig(**_section(path, data, "store", _STORE))
    ui = UiConfig(**_section(path, data, "ui", _UI))
    log = LogConfig(**_section(path, data, "log", _LOG))
    supervisors = _supervisors(path, data)
    dealers = _dealers(path, data)
    camera_raw = data.get("camera")
    camera: Any = None
    if camera_raw is not None:
        if not isinstance(camera_raw, Mapping):
            raise ConfigError(path, "[camera]", camera_raw, "expected a table (section)")
        loader = camera_loader if camera_loader is not None else _camera_loader()
        if loader is not None:
            try:
                camera = loader(camera_raw, path)
            except ConfigError:
                raise
            except ValueError as exc:
                # The camera driver's errors already name the file, key and value.
                raise ConfigError.named_by(path, "[camera]", str(exc)) from None
        _camera_boxes_fit(path, setup.boxes, camera)
    return ServiceConfig(
        path=path,
        table=table_line,
        setup=setup,
        shoe=shoe,
        store=store,
        ui=ui,
        log=log,
        supervisors=supervisors,
        dealers=dealers,
        camera=camera,
        camera_raw=dict(camera_raw) if isinstance(camera_raw, Mapping) else {},
    )


def _camera_boxes_fit(path: Path, boxes: int, camera: Any) -> None:
    """The camera's box areas are the table's boxes, 1 to [table] boxes, every one of them: a
    box the camera watches that the table does not have, or a box of the table the camera
    does not watch, is refused naming both."""
    areas = sorted(int(a.box) for a in getattr(camera, "boxes", ()) or ())
    if not areas:
        return
    extra = [b for b in areas if b > boxes]
    unseen = [b for b in range(1, boxes + 1) if b not in areas]
    listed = ", ".join(map(str, areas))
    if extra:
        raise ConfigError(
            path,
            "[table] boxes",
            boxes,
            f"the camera's [[camera.boxes]] are boxes {listed}: box "
            f"{', '.join(map(str, extra))} is not on this table (remove its area, or give the "
            "table's real number of boxes)",
        )
    if unseen:
        raise ConfigError(
            path,
            "[table] boxes",
            boxes,
            f"the camera's [[camera.boxes]] are boxes {listed}: box "
            f"{', '.join(map(str, unseen))} has no area, so the camera would never see its "
            "wagers (calibrate the layout with every box)",
        )


__all__ = [
    "DEFAULT_CONFIG",
    "MIN_PIN_LENGTH",
    "ConfigError",
    "LogConfig",
    "ServiceConfig",
    "ShoeConfig",
    "StoreConfig",
    "UiConfig",
    "config_from_dict",
    "load_config",
]
