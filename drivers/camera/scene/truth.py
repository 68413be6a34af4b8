"""The truth file written beside each frame.

The fields a scorer needs have the shape of ``floorctl chips render``'s truth files:

- ``boxes``: for every box of the config, ``amount`` (whole dollars, a string), ``chips``
  (``{"value": count}``, values ascending) and ``stacks`` (each a list of chip values, bottom
  to top);
- ``occluded``: the boxes the dealer's hand covers (a fifth of the betting circle, or any chip);
- ``fiducials_visible``: the codes wholly in the picture and not covered by the hand.

Beyond those, each box says whether it is ``unsure_ok`` and why (``reasons``): ``hand``
(occluded), ``chip_not_visible`` (some chip shows less than a pixel-high band: hidden behind
the other stack or seen too edge-on to count) or ``out_of_view`` (part of the circle is outside
the picture). A detector that calls such a box unsure is right; one that reads it wrong with
confidence is still wrong. Every frame also records its tier with the tier's conditions, the
camera (pose, lens), the lamps, the optics drawn for it and the white-balance gains applied.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from drivers.camera.config import CameraConfig
from drivers.camera.scene.camera import Camera
from drivers.camera.scene.chips import ChipModel
from drivers.camera.scene.lighting import Lighting
from drivers.camera.scene.measure import Measured
from drivers.camera.scene.sampling import FrameScene
from drivers.camera.scene.tiers import Tier

RENDERER = "floorctl scene 1"
HAND_CIRCLE_SHARE = 0.2  # the hand over this much of a circle makes the box occluded
MIN_BAND_PX = 1.0  # a chip showing a thinner band than this cannot be counted


def truth(
    cfg: CameraConfig,
    tier: Tier,
    seed: int,
    scene: FrameScene,
    camera: Camera,
    lighting: Lighting,
    model: ChipModel,
    measured: Measured,
    wb_gains: tuple[float, float, float],
    frame_name: str,
) -> dict[str, Any]:
    band = np.divide(
        measured.chip_px,
        measured.chip_width_px,
        out=np.zeros_like(measured.chip_px),
        where=measured.chip_width_px > 0,
    )
    boxes: dict[str, Any] = {}
    occluded: list[int] = []
    unsure: list[int] = []
    start = 0
    per_stack: dict[int, list[tuple[list[int], float]]] = {}
    for stack in scene.stacks:
        n = len(stack.chips)
        per_stack.setdefault(stack.box, []).append(
            ([c.value for c in stack.chips], float(band[start : start + n].min()))
        )
        start += n
    for box in cfg.boxes:
        stacks = per_stack.get(box.box, [])
        counts = Counter(v for values, _ in stacks for v in values)
        amount = sum(v * n for v, n in counts.items())
        reasons = []
        hand_over = (
            measured.circle_cover[box.box] >= HAND_CIRCLE_SHARE
            or measured.hand_over_chips[box.box] > 0
        )
        if hand_over:
            reasons.append("hand")
            occluded.append(box.box)
        min_band = min((b for _, b in stacks), default=None)
        if min_band is not None and min_band < MIN_BAND_PX:
            reasons.append("chip_not_visible")
        if not measured.circle_in_view[box.box]:
            reasons.append("out_of_view")
        if reasons:
            unsure.append(box.box)
        boxes[str(box.box)] = {
            "amount": str(amount),
            "chips": {str(v): counts[v] for v in sorted(counts)},
            "stacks": [values for values, _ in stacks],
            "occluded": hand_over,
            "unsure_ok": bool(reasons),
            "reasons": reasons,
            "hand_cover": round(measured.circle_cover[box.box], 3),
            "min_band_px": None if min_band is None else round(min_band, 2),
            "center_px": [round(c, 2) for c in measured.circle_px[box.box]],
        }
    visible = [
        f.code
        for f in cfg.fiducials
        if measured.fiducial_in_view[f.code] and measured.fiducial_cover[f.code] < 0.01
    ]
    pose = camera.pose
    lens = camera.lens
    o = scene.optics
    return {
        "index": scene.index,
        "seed": seed,
        "tier": tier.name,
        "session": scene.session,
        "renderer": RENDERER,
        "frame": frame_name,
        "size": [camera.width, camera.height],
        "boxes": boxes,
        "occluded": occluded,
        "unsure_ok": unsure,
        "fiducials_visible": visible,
        "fiducials": {
            f.code: {
                "corners_px": [list(c) for c in measured.fiducial_corners[f.code]],
                "in_view": measured.fiducial_in_view[f.code],
                "hand_cover": round(measured.fiducial_cover[f.code], 3),
                "module_px": round(measured.fiducial_module_px[f.code], 2),
            }
            for f in cfg.fiducials
        },
        "camera": {
            "position_mm": [round(v, 2) for v in pose.position],
            "height_mm": round(pose.height_mm, 2),
            "tilt_deg": round(pose.tilt_deg, 3),
            "yaw_deg": round(pose.yaw_deg, 3),
            "roll_deg": round(pose.roll_deg, 3),
            "focal_px": round(camera.fpx, 3),
            "principal_px": [round(lens.cx * camera.width, 3), round(lens.cy * camera.height, 3)],
            "k1": round(lens.k1, 5),
            "k2": round(lens.k2, 5),
        },
        "chip_model": {"diameter_mm": model.diameter_mm, "thickness_mm": model.thickness_mm},
        "lamps": [
            {
                "position_mm": [round(v, 1) for v in lamp.position],
                "kelvin": round(lamp.kelvin),
                "radius_mm": round(lamp.radius_mm, 1),
            }
            for lamp in lighting.lamps
        ],
        "hand": None
        if scene.hand is None
        else {
            "over_box": scene.hand.over_box,
            "height_mm": round(-scene.hand.palm.centre[2], 1),
            "motion_px": [round(v, 2) for v in scene.hand.motion_px],
            "skin": scene.hand.skin,
            "sleeve": scene.hand.sleeve,
        },
        "cards": len(scene.cards),
        "optics": {
            "focus_mm": round(o.focus_mm, 1),
            "defocus_px": round(o.defocus_px, 3),
            "depth_blur_px": round(o.depth_blur_px, 3),
            "motion_px": round(o.motion_px, 3),
            "motion_deg": round(o.motion_deg, 1),
            "vignette": round(o.vignette, 3),
            "chromatic": round(o.chromatic, 5),
            "exposure": round(o.exposure, 3),
            "gain": round(o.gain, 3),
            "read_noise": round(o.read_noise, 5),
            "wb_gains": [round(g, 4) for g in wb_gains],
            "sharpen": round(o.sharpen, 3),
            "jpeg_quality": o.jpeg_quality or None,
        },
        "conditions": tier.conditions(),
    }
