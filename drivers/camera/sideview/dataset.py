"""A whole set on disk: the frames of a seed and tier, the table they show, a manifest."""

from __future__ import annotations

from pathlib import Path

from drivers.camera.sideview.frames import (
    MOMENTS_PER_SESSION,
    RENDERER,
    SideRenderer,
    sequence_frames,
)
from drivers.camera.sideview.table import Table
from drivers.camera.sideview.tiers import REPORT_SEEDS_FROM, TIERS, TUNING_SEEDS
from drivers.camera.sideview.writer import write_frames, write_json


def render_set(
    table: Table,
    tier: str,
    seed: int,
    size: tuple[int, int],
    out: Path,
    moments: int,
    start: int = 0,
    rounds: int = 0,
) -> int:
    """Render moments ``start .. start+moments-1`` (and their sessions' calibration and
    known-stack frames) into ``out``; returns the number of frames written."""
    r = SideRenderer(table, TIERS[tier], seed, size)
    write_json(
        out / "table.json",
        {
            **table.describe(),
            "cameras": [{"name": m.name, "boxes": list(m.boxes)} for m in r.mounts],
        },
    )
    names = write_frames(r.frames(moments, start), out) if moments else []
    for k in range(rounds):
        names += write_frames(sequence_frames(r, k), out)
    write_json(
        out / "manifest.json",
        {
            "renderer": RENDERER,
            "tier": tier,
            "seed": seed,
            "seed_use": "tuning"
            if seed in TUNING_SEEDS
            else ("reporting" if seed >= REPORT_SEEDS_FROM else "other"),
            "size": list(size),
            "moments": [start, start + moments],
            "moments_per_session": MOMENTS_PER_SESSION,
            "rounds": rounds,
            "cameras": [{"name": m.name, "boxes": list(m.boxes)} for m in r.mounts],
            "chips": [{"value": c.value, "name": c.name} for c in table.chips],
            "frames": names,
        },
    )
    return len(names)
