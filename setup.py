"""The build's one step beyond pyproject.toml: the compiled engine.

``pip install .`` (and so a wheel, and the README's install) compiles the engine's hot modules
(``controller.engine.native.modules()``) with mypyc wherever a C compiler and Python's headers
are present, and writes the manifest of their sources beside them, which the engine checks at
import. Without a compiler, with ``FLOORCTL_PURE_PYTHON=1``, for an editable install (a
developer's checkout, whose sources change under it), or if the compile fails, the package is
the same sources as pure Python: the engine runs either way, and ``floorctl --version`` says
which one it is.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def _native() -> ModuleType:
    """controller/engine/native.py, loaded by path (the package is not installed yet)."""
    path = HERE / "controller" / "engine" / "native.py"
    spec = importlib.util.spec_from_file_location("_floorctl_native", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def why_pure() -> str:
    """Why this build stays pure Python ("" when it compiles)."""
    if os.environ.get("FLOORCTL_PURE_PYTHON", "") not in ("", "0"):
        return "FLOORCTL_PURE_PYTHON is set"
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc}) on the PATH"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "Python's C headers (Python.h) are not installed"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc (from mypy) is not installed in the build environment"
    return ""


def _say(message: str) -> None:
    print(f"floorctl build: {message}", file=sys.stderr)


class CompiledEngine(Distribution):
    """A distribution with binary parts wherever the engine is compiled (a platform wheel)."""

    def has_ext_modules(self) -> bool:
        return not why_pure()


class BuildEngine(build_ext):
    """build_ext that makes the engine's extensions with mypyc, or leaves the engine pure."""

    def finalize_options(self) -> None:
        self.pure_reason = why_pure()
        if self.editable_mode or self.inplace:
            self.pure_reason = "an editable install (make native compiles a checkout)"
        self.compiled_modules: list[str] = []
        self.compiled_digests: dict[str, str] = {}
        if not self.pure_reason:
            try:
                self._mypycify()
            except (Exception, SystemExit) as exc:  # mypy refused the sources (mypyc exits):
                # a pure package still works
                self.pure_reason = f"mypyc could not compile it ({exc})"
                self.distribution.ext_modules = []
        super().finalize_options()

    def _mypycify(self) -> None:
        from mypyc.build import mypycify

        native = _native()
        os.chdir(HERE)
        self.compiled_modules = list(native.modules(HERE))
        self.compiled_digests = native.source_digests(HERE)  # the sources mypyc reads now
        build_temp = self.build_temp or str(HERE / "build" / "mypyc")
        self.distribution.ext_modules = mypycify(
            self.compiled_modules,
            group_name=native.GROUP,
            target_dir=str(Path(build_temp) / "mypyc"),
        )

    def run(self) -> None:
        if self.pure_reason:
            _say(f"the engine stays pure Python: {self.pure_reason}")
            return
        try:
            super().run()
        except Exception as exc:  # a failed compile leaves a working pure-Python package
            _say(f"the engine stays pure Python: compiling it failed ({exc})")
            for path in Path(self.build_lib).joinpath("controller").rglob("*.so"):
                path.unlink()
            return
        native = _native()
        lib = Path(self.build_lib)
        # The manifest names the sources the package installs; they must be the ones compiled
        # (a source edited while the build ran would make the two disagree).
        if native.source_digests(lib) != self.compiled_digests:
            _say("the engine stays pure Python: its sources changed while it was compiled")
            for path in lib.joinpath("controller").rglob("*.so"):
                path.unlink()
            return
        (lib / native.MANIFEST_NAME).write_text(native.manifest_text(lib), encoding="utf-8")
        _say(f"compiled {len(self.compiled_modules)} engine modules with mypyc")


if why_pure():
    _say(f"the engine stays pure Python: {why_pure()}")
setup(distclass=CompiledEngine, cmdclass={"build_ext": BuildEngine})
