"""The offline install of a table PC: `make wheelhouse`, then pip with no package index.

    FLOORCTL_SLOW_CHECKS=1 .venv/bin/python -m pytest -q tests/test_wheelhouse.py

`make wheelhouse` fetches every dependency from the package index (about 100 MB), so this runs
only when asked for. The wheels go into a temporary directory; a fresh virtual environment
installs floorctl from them alone (`pip install --no-index --find-links DIR floorctl`), with
the machine's pip configuration and `PIP_*` variables left out (they may name other wheel
directories) and, where the kernel allows it (root, or user namespaces), inside a network
namespace of its own with no interface up (`unshare -n`), so a download would fail. The
installed command then prints its version and replays a worked example to its expected result,
from a directory outside the checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
import venv
from decimal import Decimal
from pathlib import Path

import paths
import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not os.environ.get("FLOORCTL_SLOW_CHECKS"),
    reason="builds a wheelhouse from the package index (~100 MB): set FLOORCTL_SLOW_CHECKS=1",
)


def _offline_prefix() -> list[str]:
    """``unshare -n`` where it works here: no network at all for what runs under it."""
    try:
        probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    except FileNotFoundError:
        return []
    return ["unshare", "-n"] if probe.returncode == 0 else []


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


def test_offline_install_from_the_wheelhouse(tmp_path: Path) -> None:
    wheels = tmp_path / "wheelhouse"
    _run(
        ["make", "--no-print-directory", "wheelhouse", f"WHEELHOUSE={wheels}"],
        ROOT,
        dict(os.environ),
    )
    names = sorted(p.name for p in wheels.glob("*.whl"))
    assert any(n.startswith("floorctl-") for n in names), names
    assert not list(wheels.glob("*.tar.gz")), "the wheelhouse must hold wheels only"

    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    bin_dir = target / "bin"
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PIP_CONFIG_FILE": os.devnull,  # no index or find-links from the machine's config
        "LANG": "C.UTF-8",
    }
    offline = _offline_prefix()
    print(f"offline by: {'unshare -n' if offline else '--no-index and no pip config'}")
    _run(
        [*offline, str(bin_dir / "pip"), "install", "-q", "--no-index", "--find-links",
         str(wheels), "floorctl"],
        work,
        env,
    )  # fmt: skip

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    floorctl = str(bin_dir / "floorctl")
    assert _run([*offline, floorctl, "--version"], work, env) == f"floorctl {version['version']}\n"

    scenario = paths.EXAMPLES / "01-pontoon-basic.jsonl"
    expected = json.loads(scenario.with_name("01-pontoon-basic.expected.json").read_text())
    got = json.loads(_run([*offline, floorctl, "replay", str(scenario), "--json"], work, env))
    key = ("player", "box", "hand", "kind", "net")
    assert [[tuple(s[k] for k in key) for s in r["settlements"]] for r in got["rounds"]] == [
        [tuple(s[k] for k in key) for s in r["settlements"]] for r in expected["rounds"]
    ]
    assert [[f["rule"] for f in r["flags"]] for r in got["rounds"]] == [
        [f["rule"] for f in r["flags"]] for r in expected["rounds"]
    ]
    for r in got["rounds"]:
        for s in r["settlements"]:
            assert Decimal(s["staked"]) + Decimal(s["net"]) == Decimal(s["returned"])
    # The installed package answered, not the checkout.
    where = _run([str(bin_dir / "python"), "-c", "import controller; print(controller.__file__)"],
                 work, env)  # fmt: skip
    assert str(ROOT) not in where and "site-packages" in where
