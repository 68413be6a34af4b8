"""Whether the engine runs compiled (the optional mypyc build), and that such a build is current.

``tools/build_native.py`` (``make native``) compiles the engine's modules in place and writes a
manifest of their sources' SHA-256 beside them. A compiled module whose source has changed since
would run old rules, so importing the engine refuses it: :func:`check` raises ``ImportError``
naming the module and what to do. Without a build the same sources run as pure Python.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent.parent
MANIFEST = PACKAGE / "_native.json"


def check(root: Path = ROOT) -> None:
    """Refuse a compiled build that does not match its sources (no build: nothing to check)."""
    built = sorted((root / "controller").rglob("*.so"))
    if not built:
        return
    manifest = root / "controller" / "engine" / "_native.json"
    fix = "run `make native` again, or `make clean-native` for the pure-Python engine"
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
