"""The command line: the table of commands agrees with the modules that register them, and a
command imports only its own module (so `floorctl --help`, `replay` and `shoe listen` start
without SQLAlchemy, OpenCV or FastAPI)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from controller import cli

HEAVY = ("sqlalchemy", "alembic", "sqlmodel", "cv2", "fastapi", "uvicorn", "numpy")


def _registered() -> dict[str, str | None]:
    parser = argparse.ArgumentParser(prog="floorctl")
    subparsers = parser.add_subparsers(dest="command")
    for module in cli.COMMAND_MODULES:
        __import__(module, fromlist=["register"]).register(subparsers)
    helps = {a.dest: a.help for a in subparsers._choices_actions}
    return {name: helps.get(name) for name in subparsers.choices}


def test_every_registered_command_is_in_the_table_with_the_same_help() -> None:
    registered = _registered()
    table = {c.name: c.help for c in cli.COMMANDS}
    assert set(registered) == set(table), "add new commands to controller.cli.COMMANDS"
    for name, text in table.items():
        assert registered[name] == text, f"{name}: the table's help differs from its module's"


def test_a_module_s_commands_stand_together_in_the_table() -> None:
    modules = [c.module for c in cli.COMMANDS]
    for module in set(modules):
        first = modules.index(module)
        count = modules.count(module)
        assert modules[first : first + count] == [module] * count


def _imported_after(argv: list[str]) -> tuple[int, list[str]]:
    """Run floorctl's main with ``argv`` in a fresh interpreter; the heavy modules it loaded."""
    code = (
        "import sys, json\n"
        "from controller.cli import main\n"
        "try:\n"
        f"    status = main({argv!r})\n"
        "except SystemExit as e:\n"
        "    status = e.code\n"
        f"print(json.dumps([status, sorted(m for m in {HEAVY!r} if m in sys.modules)]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    status, heavy = json.loads(proc.stdout.strip().splitlines()[-1])
    return int(status or 0), heavy


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["replay", "--help"],
        ["shoe", "--help"],
        ["shoe", "listen", "--help"],
        ["verify", "--help"],
        ["export", "--help"],
        ["ship", "--help"],
        ["keygen", "--help"],
        ["prove", "--help"],
        ["verify-proof", "--help"],
        ["chips", "--help"],
        ["chips", "render", "--help"],
        ["chips", "detect", "--help"],
        ["chips", "scene", "--help"],
        ["chips", "score", "--help"],
        ["calibrate", "--help"],
    ],
    ids=lambda a: " ".join(a),
)
def test_light_commands_load_no_heavy_library(argv: list[str]) -> None:
    status, heavy = _imported_after(argv)
    assert status == 0
    assert heavy == []


def test_a_replay_loads_no_heavy_library(tmp_path: object) -> None:
    from pathlib import Path

    scenario = Path(str(tmp_path)) / "s.jsonl"
    scenario.write_text(
        '{"type": "table", "game": "pontoon-nz-2000", "boxes": 1, "min_bet": 5, "max_bet": 100}\n'
    )
    status, heavy = _imported_after(["replay", str(scenario), "--json"])
    assert status == 0
    assert heavy == []


def test_an_unknown_command_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["nonsense"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    for command in cli.COMMANDS:
        assert command.name in out


def test_version_is_the_project_s_own(capsys: pytest.CaptureFixture[str]) -> None:
    """``--version`` prints the version pyproject.toml gives (the installed metadata's)."""
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    expected = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"floorctl {expected} (engine: "), out
    assert out.rstrip().endswith(("compiled (mypyc))", "pure Python)")), out
