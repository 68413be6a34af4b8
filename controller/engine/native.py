"""Which engine runs (compiled by mypyc, or pure Python), and that a compiled build is current.

The build (``setup.py``, so ``pip install .`` and a wheel; or ``make native`` for a checkout)
compiles :data:`MODULES` with mypyc wherever a C compiler is present, and writes a manifest of
their sources' SHA-256 beside them (``controller/engine/_native.json``). A compiled module whose
source has changed since would run old rules, so importing the engine refuses it: :func:`check`
raises ``ImportError`` naming the module and what to do. Without a build the very same sources
run as pure Python.

This module imports only the standard library: ``setup.py`` loads it by path, before anything
is installed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Final

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent.parent
MANIFEST = PACKAGE / "_native.json"
MANIFEST_NAME: Final = "controller/engine/_native.json"
GROUP: Final = "controller.engine._native"

# The hot path of `floorctl replay` and `floorctl simulate`: the engine's rooms, the payout
# arithmetic, and the simulator's dealer, player, shoe and tally. The packages' __init__
# modules stay pure (they check the build is current before anything compiled is imported),
# and so does this one. The strategy table stays pure too: a compiled frozen dataclass does not
# unpickle, and `--jobs` sends it to the worker processes.
PURE_IN_ENGINE: Final = frozenset({"__init__.py", "native.py"})
EXTRA_MODULES: Final = (
    "controller/payouts.py",
    "controller/sim/player.py",
    "controller/sim/shoe.py",
    "controller/sim/stats.py",
)


def modules(root: Path = ROOT) -> tuple[str, ...]:
    """The modules the build compiles, as paths relative to ``root`` (sorted, '/'-separated)."""
    engine = root / "controller" / "engine"
    rooms = sorted(
        p.relative_to(root).as_posix()
        for p in engine.glob("*.py")
        if p.name not in PURE_IN_ENGINE and not p.name.startswith("_")
    )
    return (*rooms, *EXTRA_MODULES)


def source_digests(root: Path = ROOT) -> dict[str, str]:
    """The SHA-256 of each compiled module's source: what the manifest records."""
    return {m: hashlib.sha256((root / m).read_bytes()).hexdigest() for m in modules(root)}


def manifest_text(root: Path = ROOT) -> str:
    return json.dumps(source_digests(root), indent=1, sort_keys=True) + "\n"


def check(root: Path = ROOT) -> None:
    """Refuse a compiled build that does not match its sources (no build: nothing to check)."""
    built = sorted((root / "controller").rglob("*.so"))
    if not built:
        return
    manifest = root / MANIFEST_NAME
    fix = (
        "reinstall floorctl (pip install .), or in a checkout run `make native` again or "
        "`make clean-native` for the pure-Python engine"
    )
    try:
        digests = json.loads(manifest.read_text(encoding="utf-8"))
        if not isinstance(digests, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        raise ImportError(
            f"compiled engine files ({built[0].name}, ...) without a readable manifest "
            f"{manifest}: {exc}; {fix}"
        ) from None
    for module, digest in sorted(digests.items()):
        source = root / module
        try:
            now = hashlib.sha256(source.read_bytes()).hexdigest()
        except OSError:
            now = "missing"
        if now != digest:
            raise ImportError(
                f"the compiled engine is out of date: {module} changed since it was built; {fix}"
            )


def compiled() -> bool:
    """Whether the engine's rooms loaded from a compiled build."""
    from controller.engine import deal

    return not str(deal.__file__).endswith(".py")


def describe() -> str:
    """Which engine runs, in words: what ``floorctl --version`` and ``simulate`` print."""
    return "compiled (mypyc)" if compiled() else "pure Python"
