"""The renderer's front: frames of one tier and seed, each with its truth.

``SceneRenderer(cfg, "mild", seed=3).frame(i)`` gives frame ``i`` of that run: the bytes of its
file (PNG, or JPEG when the tier's optics say so), the picture they decode to and its truth.
The table (its cloth and print) is made once per config, the chips' designs, the mount and the
lamps once per renderer;
the rays and their texture lookups once per session of :data:`SESSION_FRAMES` frames.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from drivers.camera.config import CameraConfig
from drivers.camera.scene.chips import ChipModel, design
from drivers.camera.scene.compose import Compositor
from drivers.camera.scene.layout import U8, TableArt
from drivers.camera.scene.optics import encode
from drivers.camera.scene.sampling import (
    SESSION_FRAMES,
    camera_for,
    frame_scene,
    rng_for,
    session_pose,
    setup,
)
from drivers.camera.scene.tiers import SIZES, TIERS, Tier
from drivers.camera.scene.truth import truth

__all__ = ["SESSION_FRAMES", "SIZES", "SceneFrame", "SceneRenderer"]


@dataclass
class SceneFrame:
    index: int
    name: str  # the file name: frame_00012.png or .jpg
    data: bytes  # the file's contents
    image: U8  # the BGR picture the file decodes to
    truth: dict[str, Any]


@lru_cache(maxsize=2)
def _table(cfg: CameraConfig) -> TableArt:
    """One table's cloth and print: the same in every tier and seed (it is the same table)."""
    return TableArt(cfg)


class SceneRenderer:
    def __init__(
        self,
        cfg: CameraConfig,
        tier: Tier | str,
        seed: int,
        size: tuple[int, int] = (1280, 720),
        supersample: int = 2,
        model: ChipModel | None = None,
    ) -> None:
        self.cfg = cfg
        self.tier = TIERS[tier] if isinstance(tier, str) else tier
        self.seed = seed
        self.size = size
        self.model = model or ChipModel(diameter_mm=cfg.layout.chip_diameter_mm)
        self.art = _table(cfg)
        self.designs = [design(c.colour, c.value, i, self.model) for i, c in enumerate(cfg.chips)]
        self.base = setup(cfg, self.tier, seed)
        self.compositor = Compositor(
            cfg, self.art, self.designs, self.model, self.base, supersample
        )

    def frame(self, index: int) -> SceneFrame:
        scene = frame_scene(self.cfg, self.tier, self.seed, index, self.model, self.base)
        pose = session_pose(self.base, self.tier, self.seed, scene.session)
        camera = camera_for(self.base, pose, *self.size)
        noise = rng_for(self.seed, self.tier, "noise", index)
        out = self.compositor.render(scene, camera, (scene.session, self.size), noise)
        data, ext, image = encode(out.rgb, scene.optics.jpeg_quality)
        name = f"frame_{index:05d}{ext}"
        record = truth(
            self.cfg,
            self.tier,
            self.seed,
            scene,
            camera,
            self.base.lighting,
            self.model,
            out.measured,
            out.wb_gains,
            name,
        )
        return SceneFrame(index, name, data, image, record)

    def frames(self, count: int, start: int = 0) -> Iterator[SceneFrame]:
        for i in range(start, start + count):
            yield self.frame(i)
