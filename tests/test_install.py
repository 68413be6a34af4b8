"""The installed artifact, as the table-PC install makes it, run from outside the checkout.

The install is docs/technician/install.md's.

The wheel is built from this checkout and installed (with its dependencies, from the package
index) into a fresh virtual environment; then, from an empty directory elsewhere, with no
path into the checkout:

- ``floorctl run --check`` on the shipped example config (read from the installed package),
  with a supervisor's PIN hash filled in and ``[shoe] url = "none"``;
- ``floorctl simulate`` for both New Zealand games;
- ``floorctl replay`` of a worked example, compared with the expected result;
- the rule sets and strategy tables are the installed package's own files.

This is what CI runs (it is part of the suite); it takes a minute or so, most of it pip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import paths
import pytest

ROOT = Path(__file__).resolve().parent.parent
# Building the wheel compiles the engine with mypyc: minutes of CPU, many more on a loaded
# machine. The suite's 300 s per test would cut the build off, so this module allows 30 min.
pytestmark = pytest.mark.timeout(1800)
EXAMPLES = paths.EXAMPLES


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 1500, stdin: str = ""
) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, input=stdin
    )
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """(the venv's bin directory, a working directory outside the checkout, the environment)."""
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    # Build from a copy of the committed layout, so files lying about in the checkout (a
    # .venv, caches) cannot leak into the wheel; the link controller/config -> ../config is
    # copied as a link, as git checks it out.
    shutil.copytree(
        ROOT,
        src,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "*.egg-info", "build", "__pycache__", ".*_cache", "artifacts", "*.db*"
        ),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("FLOORCTL_CONFIG_DIR", None)
    dist = base / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
        base,
        env,
    )
    wheels = list(dist.glob("floorctl-*.whl"))
    assert len(wheels) == 1, wheels
    target = base / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    bin_dir = target / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheels[0])], base, env)
    work = base / "elsewhere"
    work.mkdir()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    yield bin_dir, work, env


def test_the_installed_engine_is_compiled_wherever_a_c_compiler_is_present(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    """The README's install builds the mypyc engine (setup.py); --version and simulate say so."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the install is the pure-Python engine")
    bin_dir, work, env = installed
    floorctl = str(bin_dir / "floorctl")
    assert "(engine: compiled (mypyc))" in _run([floorctl, "--version"], work, env)
    out = _run(
        [floorctl, "simulate", "--game", "blackjack", "--rounds", "200", "--seed", "1", "--quiet"],
        work,
        env,
    )
    assert "engine: compiled (mypyc)" in out.splitlines()[:6]
    site = _run([str(bin_dir / "python"), "-c", "import controller; print(controller.__file__)"],
                work, env)  # fmt: skip
    engine = Path(site.strip()).parent / "engine"
    assert list(engine.glob("deal.*.so")) and (engine / "_native.json").is_file()


def test_a_build_without_the_compiler_is_the_pure_python_engine(tmp_path: Path) -> None:
    """FLOORCTL_PURE_PYTHON=1 (as a machine without a C compiler) builds a wheel of sources
    only: no extension and no manifest, so the engine imports as pure Python."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "*.egg-info", "build", "__pycache__", ".*_cache", "artifacts", "*.db*"
        ),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["FLOORCTL_PURE_PYTHON"] = "1"
    dist = tmp_path / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(dist), str(src)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "the engine stays pure Python: FLOORCTL_PURE_PYTHON is set" in proc.stdout + proc.stderr
    [wheel] = dist.glob("floorctl-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert "controller/engine/deal.py" in names
    assert not [n for n in names if n.endswith(".so") or n.endswith("_native.json")]


def test_the_package_is_the_installed_one_and_carries_its_config(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    bin_dir, work, env = installed
    code = (
        "import json, controller, controller.rules as r; "
        "print(json.dumps([controller.__file__, str(r.CONFIG_DIR), "
        "sorted(p.name for p in r.CONFIG_DIR.glob('*.toml'))]))"
    )
    module, config_dir, files = json.loads(_run([str(bin_dir / "python"), "-c", code], work, env))
    assert str(ROOT) not in module, "the test must run the installed package, not the checkout"
    assert "site-packages" in config_dir
    assert Path(config_dir).is_dir() and not Path(config_dir).is_symlink()
    for name in ("pontoon-nz-2000", "blackjack-nz-1994", "blackjack"):
        assert f"{name}.toml" in files
    assert "strategy-pontoon-nz-2000.toml" in files and "table.example.toml" in files


def test_version_of_the_installed_command(installed: tuple[Path, Path, dict[str, str]]) -> None:
    import tomllib

    bin_dir, work, env = installed
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out = _run([str(bin_dir / "floorctl"), "--version"], work, env)
    assert out.startswith(f"floorctl {expected['version']} (engine: "), out


def test_run_check_on_the_shipped_example_config(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    bin_dir, work, env = installed
    floorctl = str(bin_dir / "floorctl")
    pin_hash = _run([floorctl, "pin-hash", "--stdin"], work, env, stdin="2468\n").strip()
    example = _run(
        [str(bin_dir / "python"), "-c",
         "import controller.rules as r; print((r.CONFIG_DIR / 'table.example.toml').read_text())"],
        work,
        env,
    )  # fmt: skip
    text = example.replace('url = "/dev/ttyUSB0"', 'url = "none"')
    text = text.replace("sqlite:////var/lib/floorctl/floorctl.db", f"sqlite:///{work / 'table.db'}")
    text = text.replace("[supervisors]\n", f'[supervisors]\njsmith = "{pin_hash}"\n')
    config = work / "table.toml"
    config.write_text(text, encoding="utf-8")
    out = _run([floorctl, "run", "--config", str(config), "--check"], work, env)
    assert "good (table T07, pontoon-nz-2000)" in out


@pytest.mark.parametrize("game", ["pontoon-nz-2000", "blackjack-nz-1994"])
def test_simulate_both_nz_games(installed: tuple[Path, Path, dict[str, str]], game: str) -> None:
    bin_dir, work, env = installed
    out = _run(
        [str(bin_dir / "floorctl"), "simulate", "--game", game, "--rounds", "2000",
         "--seed", "7", "--json", "--quiet"],
        work,
        env,
    )  # fmt: skip
    doc = json.loads(out)
    assert doc["rounds"] == 2000


def test_replay_a_worked_example(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    scenario = work / "example.jsonl"
    shutil.copy(EXAMPLES / "02-pontoon-double-rescue.jsonl", scenario)
    expected = json.loads((EXAMPLES / "02-pontoon-double-rescue.expected.json").read_text())
    doc = json.loads(
        _run([str(bin_dir / "floorctl"), "replay", str(scenario), "--json"], work, env)
    )
    got = [[s["net"] for s in r["settlements"]] for r in doc["rounds"]]
    want = [[s["net"] for s in r["settlements"]] for r in expected["rounds"]]
    assert got == want
    assert [[f["rule"] for f in r["flags"]] for r in doc["rounds"]] == [
        [f["rule"] for f in r["flags"]] for r in expected["rounds"]
    ]


def test_record_verify_and_export_with_the_installed_store(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    """The store's migrations ship too: a scenario recorded into a new SQLite store from the
    installed package verifies and exports."""
    bin_dir, work, env = installed
    floorctl = str(bin_dir / "floorctl")
    scenario = work / "recorded.jsonl"
    shutil.copy(EXAMPLES / "01-pontoon-basic.jsonl", scenario)
    url = f"sqlite:///{work / 'recorded.db'}"
    _run([floorctl, "replay", str(scenario), "--db", url, "--json"], work, env)
    assert "OK" in _run([floorctl, "verify", "--db", url], work, env)
    _run([floorctl, "export", "--db", url, "--out", str(work / "export")], work, env)
    assert "OK" in _run([floorctl, "verify", str(work / "export")], work, env)


def test_an_operator_rule_set_directory(installed: tuple[Path, Path, dict[str, str]]) -> None:
    """FLOORCTL_CONFIG_DIR adds the operator's own rule sets to the shipped ones."""
    bin_dir, work, env = installed
    rules = work / "house-rules"
    rules.mkdir()
    (rules / "pontoon-house.toml").write_text(
        'base = "pontoon-nz-2000"\ntitle = "house Pontoon: 4 decks"\ndecks = 4\n', encoding="utf-8"
    )
    scenario = work / "house.jsonl"
    scenario.write_text(
        json.dumps({"type": "table", "game": "pontoon-house", "boxes": 1, "min_bet": 5,
                    "max_bet": 100}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    floorctl = str(bin_dir / "floorctl")
    refused = subprocess.run(
        [floorctl, "replay", str(scenario)], cwd=work, env=env, capture_output=True, text=True
    )
    assert refused.returncode == 2 and "pontoon-house" in refused.stderr
    out = _run([floorctl, "replay", str(scenario), "--json"], work,
               {**env, "FLOORCTL_CONFIG_DIR": str(rules)})  # fmt: skip
    assert json.loads(out)["game"] == "pontoon-house"
