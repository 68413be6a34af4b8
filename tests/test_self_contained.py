"""The repository stands on its own: no tracked file names a path outside it.

A clone has nothing beside it, so code, tests, the Makefile, benchmarks and the documentation
must not read or point at a sibling folder or at the machine the project was written on. Every
file git tracks is searched, byte for byte (a picture or a data file included), for the two
forms such a path took. The strings are assembled here so that this file does not name them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = (b".." + b"/shared", b"/" + b"work/")


def _tracked() -> list[Path]:
    try:
        proc = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False
        )
    except FileNotFoundError:
        proc = None
    if proc is None or proc.returncode != 0:
        pytest.fail(f"{ROOT} is not a git checkout: the tracked files cannot be listed")
    return [ROOT / name for name in proc.stdout.decode().split("\0") if name]


def _outside(files: list[Path], root: Path) -> list[str]:
    """Each line of ``files`` naming a path outside the repository, as ``file:line: text``."""
    hits = []
    for path in files:
        if path.is_symlink() or not path.is_file():
            continue  # a link (controller/config) is checked through its target
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if any(needle in line for needle in OUTSIDE):
                text = line.decode("utf-8", "replace").strip()[:120]
                hits.append(f"{path.relative_to(root)}:{number}: {text}")
    return hits


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    files = _tracked()
    assert len(files) > 100, "expected the project's files"
    hits = _outside(files, ROOT)
    assert not hits, "paths outside the repository:\n" + "\n".join(hits)


def test_the_search_finds_such_paths(tmp_path: Path) -> None:
    """The search itself: each form is found, with its file and line, in text or binary."""
    (tmp_path / "a.md").write_bytes(b"clean\nsee " + OUTSIDE[0] + b"/spec/x.md\n")
    (tmp_path / "b.png").write_bytes(b"\x89PNG\x00\x01" + OUTSIDE[1] + b"main\x00")
    (tmp_path / "c.py").write_text("ROOT = '../docs/shared'  # not the sibling folder\n")
    found = _outside(sorted(tmp_path.iterdir()), tmp_path)
    assert [hit.split(": ", 1)[0] for hit in found] == ["a.md:2", "b.png:1"]
