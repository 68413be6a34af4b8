"""Build the compiled engine in a checkout: mypyc over the engine's modules, in place.

    .venv/bin/python tools/build_native.py          # or: make native
    .venv/bin/python tools/build_native.py --clean  # back to the pure-Python engine

``pip install .`` compiles the engine by itself (``setup.py``); an editable install (a
developer's checkout) stays pure Python, and this compiles it in place. mypyc compiles
``controller.engine.native.modules()`` (``mypy --strict`` clean) into C extensions placed
beside their sources, so ``import controller.engine`` loads them in place of the ``.py`` files;
without them the very same sources run as pure Python. The build writes a manifest of the
sources' SHA-256 (``controller/engine/_native.json``): ``controller.engine`` refuses to import a
compiled build whose sources have changed since (rebuild it, or clean it).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _load_native() -> ModuleType:
    """controller/engine/native.py by path: importing the package would check (and refuse) the
    very build this replaces."""
    spec = importlib.util.spec_from_file_location("_native", ROOT / "controller/engine/native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _load_native()

MANIFEST = ROOT / native.MANIFEST_NAME
MODULES = native.modules(ROOT)


def built_files() -> list[Path]:
    """Every compiled extension under controller/ (this build's, or an older one's)."""
    return sorted((ROOT / "controller").rglob("*.so"))


def clean() -> None:
    for path in built_files():
        path.unlink()
    MANIFEST.unlink(missing_ok=True)


def build() -> None:
    """Compile in a child process, its compiler output kept back unless the build fails."""
    clean()
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--compile"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"build_native: mypyc failed (exit status {proc.returncode})")
    MANIFEST.write_text(native.manifest_text(ROOT))
    print(f"compiled {len(MODULES)} modules: {len(built_files())} extension files")


def compile_in_place() -> None:
    from mypyc.build import mypycify
    from setuptools import setup

    work = Path(tempfile.mkdtemp(prefix="floorctl-native-"))
    try:
        os.chdir(ROOT)
        warnings.simplefilter("ignore")  # setuptools' notes on the project's own pyproject
        setup(
            name="floorctl-native",
            ext_modules=mypycify(
                list(MODULES), group_name=native.GROUP, target_dir=str(work / "c")
            ),
            script_args=[
                "build_ext",
                "--inplace",
                "--build-temp",
                str(work / "tmp"),
                "--build-lib",
                str(work / "lib"),
            ],
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--clean", action="store_true", help="remove the compiled build")
    ap.add_argument("--compile", action="store_true", help=argparse.SUPPRESS)  # the child's part
    args = ap.parse_args()
    if args.compile:
        compile_in_place()
    elif args.clean:
        clean()
        print("removed the compiled engine: the pure-Python engine runs")
    else:
        build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
