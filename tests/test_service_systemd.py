"""The systemd units: `systemd-analyze verify` finds nothing to say about them, and they carry
what the table needs (notify readiness, watchdog, restart, dedicated user, state directory,
hardening; the kiosk on the dealer's page)."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "systemd"
ANALYZE = shutil.which("systemd-analyze")


def unit(name: str) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(UNITS / name, encoding="utf-8")
    return parser


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed on this machine")
@pytest.mark.parametrize(
    "name",
    [
        "floorctl.service",
        "floorctl-kiosk.service",
        "floorctl-ship.service",
        "floorctl-ship.timer",
        "floorctl-floor.service",
        "floorctl-floor-ingest.service",
    ],
)
def test_systemd_analyze_verify_is_silent(tmp_path: Path, name: str) -> None:
    # Verified as installed here: /opt/floorctl is where docs/technician/install.md installs
    # the project.
    text = (UNITS / name).read_text(encoding="utf-8").replace("/opt/floorctl", str(ROOT))
    target = tmp_path / name
    target.write_text(text, encoding="utf-8")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    assert ANALYZE is not None
    proc = subprocess.run(
        [ANALYZE, "verify", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime), SYSTEMD_LOG_LEVEL="notice"),
    )
    complaints = [line for line in (proc.stdout + proc.stderr).splitlines() if name in line]
    assert proc.returncode == 0, proc.stderr
    assert complaints == []


def test_the_table_service_unit() -> None:
    service = unit("floorctl.service")["Service"]
    assert service["Type"] == "notify"
    assert int(service["WatchdogSec"]) > 0
    assert service["Restart"] == "on-failure"
    assert service["User"] == "floorctl"
    assert service["StateDirectory"] == "floorctl"
    assert service["ProtectSystem"] == "strict"
    assert service["NoNewPrivileges"] == "yes"
    assert "--config /etc/floorctl/table.toml" in service["ExecStart"]
    assert service["ExecStart"].split()[1] == "run"


def test_the_kiosk_unit_opens_chromium_on_the_dealers_page() -> None:
    service = unit("floorctl-kiosk.service")["Service"]
    assert "/usr/bin/chromium --kiosk" in service["ExecStart"]
    assert ". /run/floorctl/ui.env" in service["ExecStart"]  # the address the service wrote
    assert service["Restart"] == "always"


def test_the_table_unit_has_room_for_connections_and_publishes_its_address() -> None:
    service = unit("floorctl.service")["Service"]
    assert int(service["LimitNOFILE"]) >= 4096
    assert service["RuntimeDirectory"] == "floorctl"


def test_the_ship_timer_runs_the_ship_service_every_minute() -> None:
    timer = unit("floorctl-ship.timer")["Timer"]
    assert timer["OnUnitActiveSec"] == "1min"
    service = unit("floorctl-ship.service")["Service"]
    assert service["Type"] == "oneshot"
    assert service["ExecStart"].split()[1] == "ship"
    assert "--to ${FLOORCTL_FLOOR_URL}" in service["ExecStart"]
    assert service["User"] == "floorctl"


def test_the_dedicated_user_is_declared() -> None:
    lines = (UNITS / "floorctl.sysusers.conf").read_text().splitlines()
    assert any(line.startswith("u floorctl ") for line in lines)
    assert "m floorctl dialout" in lines


SERVICES = ["floorctl.service", "floorctl-kiosk.service", "floorctl-ship.service"]
FLOOR_SERVICES = ["floorctl-floor.service", "floorctl-floor-ingest.service"]


@pytest.mark.parametrize("name", SERVICES)
def test_every_service_caps_memory_and_tasks_and_weighs_its_cpu(name: str) -> None:
    service = unit(name)["Service"]
    assert service["MemoryMax"].rstrip("MG").isdigit(), service.get("MemoryMax")
    assert int(service["TasksMax"]) > 0
    assert "CPUQuota" in service or "CPUWeight" in service
    # The table's recorder wins the CPU against the screen and the ship when they compete.
    if name != "floorctl.service":
        assert int(service["CPUWeight"]) < int(unit("floorctl.service")["Service"]["CPUWeight"])


def test_a_configuration_error_is_not_restarted() -> None:
    # `run --check` (ExecStartPre) and `run` exit 2 on a bad config, an unsafe key, a second
    # recorder or another table's store (tests/test_startup.py): systemd must not restart it.
    service = unit("floorctl.service")["Service"]
    assert service["RestartPreventExitStatus"].split() == ["2"]
    assert service["ExecStartPre"].split()[1:3] == ["run", "--config"]
    assert service["ExecStartPre"].split()[-1] == "--check"


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed on this machine")
@pytest.mark.parametrize("name", SERVICES + FLOOR_SERVICES)
def test_systemd_analyze_security_rates_every_service_ok(name: str) -> None:
    assert ANALYZE is not None
    proc = subprocess.run(
        [ANALYZE, "security", "--offline=yes", str(UNITS / name)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    last = proc.stdout.strip().splitlines()[-1]
    exposure = float(last.split(":")[1].split()[0])
    assert exposure <= 3.0, last  # "OK" (the kiosk was 9.2 UNSAFE)


@pytest.mark.parametrize("name", FLOOR_SERVICES)
def test_the_floors_services_restart_unless_misconfigured(name: str) -> None:
    """On the floor's server: restarted after any exit, however often (the floor commands exit 2
    for a database they cannot reach, as for a bad setting, and the database may be
    restarting); capped; the floor's address from a file, never on the command line."""
    whole = unit(name)
    service = whole["Service"]
    assert service["Restart"] == "always"
    assert whole["Unit"]["StartLimitIntervalSec"] == "0"
    assert "RestartPreventExitStatus" not in service
    assert service["MemoryMax"].rstrip("MG").isdigit()
    assert int(service["TasksMax"]) > 0
    assert service["EnvironmentFile"].startswith("/etc/floorctl/")
    assert "postgresql://" not in service["ExecStart"]
    command = {"floorctl-floor.service": "serve", "floorctl-floor-ingest.service": "ingest"}
    assert service["ExecStart"].split()[1:3] == ["floor", command[name]]
