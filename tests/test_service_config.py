"""The table config: a good one starts; a bad key or value refuses, naming file, key and value."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller.service.config import ConfigError, load_config
from controller.service.pin import hash_pin

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "config" / "table.example.toml"
PIN_HASH = hash_pin("2468", iterations=1000)

SERVICE_SECTIONS = f"""
[shoe]
url = "/dev/ttyUSB0"
baudrate = 9600
heartbeat_timeout = 3.0

[store]
url = "sqlite:////var/lib/floorctl/floorctl.db"

[ui]
host = "127.0.0.1"
port = 8080

[supervisors]
jsmith = "{PIN_HASH}"
"""


def write(tmp_path: Path, text: str, name: str = "table.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def example_table_and_camera() -> str:
    """The [table] and [camera...] sections of the project's example config, as written."""
    keep: list[str] = []
    keeping = False
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        header = re.match(r"^\[\[?([A-Za-z_.]+)\]\]?", line)
        if header:
            keeping = header.group(1).split(".")[0] in ("table", "camera")
        if keeping:
            keep.append(line)
    return "\n".join(keep) + "\n"


def good(tmp_path: Path) -> Path:
    """The example's [table] and [camera] sections with the service's sections added."""
    return write(tmp_path, example_table_and_camera() + SERVICE_SECTIONS)


def refused(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value)


def test_the_example_config_with_service_sections_loads(tmp_path: Path) -> None:
    cfg = load_config(good(tmp_path))
    assert cfg.setup.table_id == "T07"
    assert cfg.setup.game == "pontoon-nz-2000"
    assert cfg.setup.boxes == 7
    assert cfg.shoe.url == "/dev/ttyUSB0"
    assert cfg.ui.host == "127.0.0.1" and cfg.ui.port == 8080
    assert cfg.supervisors == {"jsmith": PIN_HASH}
    # The [camera] section went through the camera driver's own loader.
    assert cfg.camera is not None and len(cfg.camera.boxes) == 7


def test_the_page_binds_to_localhost_unless_configured(tmp_path: Path) -> None:
    text = good(tmp_path).read_text().replace('host = "127.0.0.1"\n', "")
    cfg = load_config(write(tmp_path, text))
    assert cfg.ui.host == "127.0.0.1"


@pytest.mark.parametrize(
    ("old", "new", "key", "value"),
    [
        ("port = 8080", "port = 99999", "[ui] port", "99999"),
        ("port = 8080", "prot = 8080", "[ui] prot", "8080"),
        ('host = "127.0.0.1"', 'host = "the-table"', "[ui] host", '"the-table"'),
        ("baudrate = 9600", 'baudrate = "fast"', "[shoe] baudrate", '"fast"'),
        ('game = "pontoon-nz-2000"', 'game = "poker"', "[table] game", '"poker"'),
        ("max_bet = 1000", "max_bet = 1", "[table] max_bet", "1"),
        ("min_bet = 5", "min_bet = 5\nseats = 7", "[table] seats", "7"),
        ('url = "sqlite:', 'url = "mysql:', "[store] url", '"mysql:'),
    ],
)
def test_a_bad_key_or_value_names_file_key_and_value(
    tmp_path: Path, old: str, new: str, key: str, value: str
) -> None:
    text = good(tmp_path).read_text()
    assert old in text
    path = write(tmp_path, text.replace(old, new, 1))
    message = refused(path)
    assert str(path) in message
    assert key in message
    assert value in message


def test_a_bad_camera_value_is_named_by_the_camera_loader(tmp_path: Path) -> None:
    text = good(tmp_path).read_text().replace("stable_frames = 8", "stable_frames = -3", 1)
    message = refused(write(tmp_path, text))
    assert str(tmp_path / "table.toml") in message
    assert "stable_frames" in message and "-3" in message


def test_an_unknown_section_is_refused(tmp_path: Path) -> None:
    message = refused(write(tmp_path, good(tmp_path).read_text() + "\n[printer]\nport = 1\n"))
    assert "[printer]" in message and "unknown section" in message


def test_there_is_no_default_pin(tmp_path: Path) -> None:
    text = good(tmp_path).read_text()
    text = text[: text.index("[supervisors]")]
    message = refused(write(tmp_path, text))
    assert "[supervisors]" in message
    assert "no default PIN" in message


def test_a_plain_pin_in_the_config_is_refused(tmp_path: Path) -> None:
    text = good(tmp_path).read_text().replace(PIN_HASH, "1234")
    message = refused(write(tmp_path, text))
    assert "[supervisors] jsmith" in message
    assert "pin-hash" in message
    assert "1234" not in message  # the PIN itself is not echoed to the log


def test_a_malformed_pin_hash_is_refused(tmp_path: Path) -> None:
    text = good(tmp_path).read_text().replace(PIN_HASH, "md5$abc")
    assert "[supervisors] jsmith" in refused(write(tmp_path, text))


def test_the_shoe_section_is_required_and_may_say_none(tmp_path: Path) -> None:
    text = good(tmp_path).read_text()
    without = text.replace('url = "/dev/ttyUSB0"', "")
    assert "[shoe] url" in refused(write(tmp_path, without))
    cfg = load_config(write(tmp_path, text.replace('"/dev/ttyUSB0"', '"none"')))
    assert cfg.shoe.url is None


def test_a_file_that_is_not_toml_is_refused_with_its_name(tmp_path: Path) -> None:
    path = write(tmp_path, "[table\n")
    message = refused(path)
    assert str(path) in message and "not valid TOML" in message


def test_floorctl_run_refuses_to_start_on_a_bad_config(tmp_path: Path) -> None:
    path = write(tmp_path, good(tmp_path).read_text().replace("port = 8080", "port = -1"))
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert f"{path}: [ui] port = -1" in proc.stderr
    assert proc.stdout == ""


def test_floorctl_run_check_accepts_a_good_config(tmp_path: Path) -> None:
    path = good(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(path), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "good" in proc.stdout and "T07" in proc.stdout


def test_a_plain_scanner_without_heartbeat_is_configured_with_zero(tmp_path: Path) -> None:
    text = good(tmp_path).read_text()
    cfg = load_config(
        write(tmp_path, text.replace("heartbeat_timeout = 3.0", "heartbeat_timeout = 0"))
    )
    assert cfg.shoe.heartbeat_timeout == 0
    message = refused(
        write(tmp_path, text.replace("heartbeat_timeout = 3.0", "heartbeat_timeout = 0.1"))
    )
    assert "[shoe] heartbeat_timeout = 0.1" in message


def test_the_screens_network_settings_are_checked(tmp_path: Path) -> None:
    text = good(tmp_path).read_text()
    ui = 'host = "127.0.0.1"\n'
    cfg = load_config(
        write(
            tmp_path,
            text.replace(
                ui,
                ui + 'allowed_hosts = ["Table07.floor.example.", "10.1.2.3"]\n'
                'trusted_proxy = "10.1.2.1"\nrequest_timeout = 4\n',
            ),
        )
    )
    assert cfg.ui.allowed_hosts == ("table07.floor.example", "10.1.2.3")
    assert cfg.ui.trusted_proxy == "10.1.2.1" and cfg.ui.request_timeout == 4.0
    assert load_config(good(tmp_path)).ui.trusted_proxy is None  # no proxy is trusted
    for bad, key in (
        ('allowed_hosts = "table07"', "[ui] allowed_hosts"),
        ('allowed_hosts = ["evil example"]', "[ui] allowed_hosts"),
        ('trusted_proxy = "proxy.floor"', "[ui] trusted_proxy"),
        ("request_timeout = 0", "[ui] request_timeout"),
    ):
        assert key in refused(write(tmp_path, text.replace(ui, ui + bad + "\n"))), bad


def test_dealers_sign_in_with_pin_hashes_like_supervisors(tmp_path: Path) -> None:
    text = good(tmp_path).read_text()
    assert load_config(good(tmp_path)).dealers == {}  # none: taps are not attributed
    dealer_hash = hash_pin("1357", iterations=1000)
    cfg = load_config(write(tmp_path, text + f'\n[dealers]\nD1042 = "{dealer_hash}"\n'))
    assert cfg.dealers == {"D1042": dealer_hash}
    assert "[dealers] D1042" in refused(write(tmp_path, text + '\n[dealers]\nD1042 = "1357"\n'))
    assert "pin-hash" in refused(write(tmp_path, text + '\n[dealers]\nD1042 = "1357"\n'))
    message = refused(write(tmp_path, text + f'\n[dealers]\n"ann smith" = "{dealer_hash}"\n'))
    assert "[dealers] ann smith" in message and "an id is" in message


@pytest.mark.parametrize(
    ("boxes", "words"),
    [
        (5, "box 6, 7 is not on this table"),
        (9, "box 8, 9 has no area"),
    ],
)
def test_the_tables_boxes_must_be_the_cameras_boxes(
    tmp_path: Path, boxes: int, words: str
) -> None:
    """The example camera watches boxes 1-7: a table of 5 or of 9 boxes is refused, naming the
    file, the key and its value."""
    text = good(tmp_path).read_text()
    assert "boxes = 7" in text
    message = refused(write(tmp_path, text.replace("boxes = 7", f"boxes = {boxes}", 1)))
    assert message.startswith(f"{tmp_path}") and f"[table] boxes = {boxes}" in message, message
    assert words in message and "boxes 1, 2, 3, 4, 5, 6, 7" in message, message
