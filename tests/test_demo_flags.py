"""The demo as the product runs: with the camera stand-in, the dealer signed in and "no more
bets" waiting for the camera, a plain demo raises no flag."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from test_service_demo import stored_events

from controller.service.demo import Demo, DemoOptions

LIMIT_S = 900.0  # a loaded machine renders and reads the camera's frames slowly


def run_demo(tmp_path: Path, **kw: Any) -> tuple[Demo, list[dict[str, Any]], str, dict[str, Any]]:
    """A short demo at a dealer's pace (a round lasts long enough for the camera to see what
    happens in it), the dealer reading each flag for half a second."""
    options = DemoOptions(
        db=tmp_path / "demo.db",
        port=0,
        pace=0.3,
        settle_pause=0.5,
        read_pause=0.5,
        decks=1,  # a short opening: one deck to inspect
        **kw,
    )
    out = io.StringIO()
    demo = Demo(options, out=out)
    demo.open()
    try:
        assert asyncio.run(asyncio.wait_for(demo.run(), LIMIT_S)) == 0
        assert demo.table is not None
        live = demo.table.service.table.result()
    finally:
        demo.close()
    return demo, stored_events(options.db), out.getvalue(), live


def _flags(live: dict) -> list[tuple[int, str, int | None, str]]:  # type: ignore[type-arg]
    return [
        (r["round"], f["rule"], f.get("box"), f["message"])
        for r in live["rounds"]
        for f in r["flags"]
    ]


@pytest.mark.timeout(LIMIT_S + 60)
def test_a_plain_demo_with_the_camera_raises_no_flag(tmp_path: Path) -> None:
    demo, events, _out, live = run_demo(tmp_path, rounds=3, camera=True, seed=12)
    assert demo.camera is not None, "the camera stand-in did not start"
    assert _flags(live) == []
    # The wagers came from the camera (or were keyed in where it could not read a box), and
    # every round's call waited for it: no wager arrived after "no more bets".
    assert any(e["type"] == "bet" and e["source"] == "camera" for e in events)
    assert not any(e["type"] == "stack_changed" for e in events)
