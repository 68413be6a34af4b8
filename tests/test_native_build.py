"""The optional compiled engine: the build check, and which engine the suite is running.

``make test`` runs the suite on the pure-Python engine, then the engine and simulator tests
again on a compiled copy (``make test-native``); ``FLOORCTL_EXPECT_NATIVE`` says which one a
run must be on, so neither run can quietly test the other engine.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from controller.engine import native


def test_the_engine_under_test_is_the_one_this_run_expects() -> None:
    expect = os.environ.get("FLOORCTL_EXPECT_NATIVE")
    if expect is None:
        pytest.skip("FLOORCTL_EXPECT_NATIVE is not set: this run may use either engine")
    assert native.compiled() is (expect == "1")


def _tree(tmp_path: Path) -> Path:
    engine = tmp_path / "controller" / "engine"
    engine.mkdir(parents=True)
    (engine / "deal.py").write_text("X = 1\n")
    return tmp_path


def _manifest(root: Path) -> None:
    source = root / "controller" / "engine" / "deal.py"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    manifest = root / "controller" / "engine" / "_native.json"
    manifest.write_text(json.dumps({"controller/engine/deal.py": digest}))


def test_no_compiled_files_means_nothing_to_check(tmp_path: Path) -> None:
    native.check(_tree(tmp_path))


def test_a_current_build_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "controller" / "engine" / "deal.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    _manifest(root)
    native.check(root)


def test_a_build_older_than_its_source_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "controller" / "engine" / "deal.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    _manifest(root)
    (root / "controller" / "engine" / "deal.py").write_text("X = 2\n")
    with pytest.raises(ImportError, match=r"out of date: controller/engine/deal\.py changed"):
        native.check(root)


def test_compiled_files_without_a_manifest_are_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "controller" / "engine" / "deal.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    with pytest.raises(ImportError, match="without a readable manifest"):
        native.check(root)
