"""Tables for the tests on ``chips render``'s frames.

``chips render`` (the project's own renderer) stands every stack upright: no chip leans on
the one below. The example table allows stacks to lean (``stack_lean_mm``), and so reports a
tall stack's count unsure unless its seams confirm it, which under that renderer's blur they
mostly cannot. The tests on its frames read them with the example table saying what that
renderer draws.
"""

from __future__ import annotations

from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "table.example.toml"
_LEAN = "stack_lean_mm = 0.25"


def upright_table(folder: Path) -> Path:
    """The example table with upright stacks (``stack_lean_mm = 0``), written into ``folder``."""
    text = EXAMPLE.read_text()
    assert _LEAN in text, "the example table's stack_lean_mm line has changed"
    path = folder / "table.upright.toml"
    path.write_text(text.replace(_LEAN, "stack_lean_mm = 0"))
    return path
