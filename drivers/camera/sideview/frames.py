"""The front of the renderer: a seed's sessions of moments, each photographed by every camera.

A *session* is a stretch of play under one lighting, with every camera where a knock left it
(the first session as mounted). Each session begins with calibration frames (a target in every
box, no chips) and known-stack frames (a squared stack of each denomination), then its moments
of play. Every frame is one camera's picture of one moment, with a truth file.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import numpy as np

from drivers.camera.sideview.camera import Camera
from drivers.camera.sideview.lighting import Lighting
from drivers.camera.sideview.optics import encode, expose
from drivers.camera.sideview.raster import (
    ID_CHIP,
    ID_HAND,
    ID_TARGET,
    Background,
    Traced,
    make_background,
    qr_modules,
    trace,
)
from drivers.camera.sideview.sampling import (
    calibration_moment,
    draw_hand,
    draw_lighting,
    draw_moment,
    draw_optics,
    knocked,
    known_moments,
    mount_camera,
)
from drivers.camera.sideview.scene import Moment, Stack, build_stack
from drivers.camera.sideview.table import Table
from drivers.camera.sideview.tiers import TIER_CODES, Tier

RENDERER = "floorctl sideview 1"
MOMENTS_PER_SESSION = 10
VISIBLE_SHARE = 0.9  # a chip whose edge shows less than this of itself is hidden in part
MIN_BAND_PX = 2.0  # below this a chip's edge cannot be counted at all
KIND_CODES = {"calibration": 1, "known": 2, "play": 3, "sequence": 4, "live": 5}


@dataclass
class Frame:
    name: str  # relative path under the output folder, with its suffix
    camera: str
    data: bytes
    image: np.ndarray  # BGR
    truth: dict[str, Any]


def stream_rng(seed: int, tier: str, *stream: int) -> np.random.Generator:
    """The generator of one stream of draws (mount, lights, scene, optics...) of a seed."""
    return np.random.default_rng([seed, TIER_CODES.get(tier, 9), *stream])


class SideRenderer:
    def __init__(self, table: Table, tier: Tier, seed: int, size: tuple[int, int]) -> None:
        self.table = table
        self.tier = tier
        self.seed = seed
        self.size = size
        self.mounts = table.rigs[tier.rig]
        rng = stream_rng(seed, tier.name, 1)
        self.base = [mount_camera(table, tier, m, size, rng) for m in self.mounts]
        # which camera's line of sight says which of two stacks is "behind"
        self.viewer: dict[int, tuple[float, float]] = {}
        for m in self.mounts:
            for n in m.boxes:
                self.viewer.setdefault(n, m.position_mm)
        self._session: tuple[int, list[Camera], Lighting] | None = None
        self._backgrounds: dict[int, tuple[Background, float]] = {}

    # --- sessions --------------------------------------------------------------------------

    def session(self, s: int) -> tuple[list[Camera], Lighting]:
        if self._session is None or self._session[0] != s:
            rng = stream_rng(self.seed, self.tier.name, 2, s)
            cams = self.base if s == 0 else [knocked(c, self.tier, rng) for c in self.base]
            light = draw_lighting(self.tier, rng)
            self._session = (s, cams, light)
            self._backgrounds = {}
        _, cams, light = self._session
        return cams, light

    def background(self, s: int, i: int) -> tuple[Background, float]:
        """Camera ``i``'s cloth and rail in session ``s``, and its metered exposure."""
        cams, light = self.session(s)
        if i not in self._backgrounds:
            bg = make_background(cams[i], self.table, light)
            self._backgrounds[i] = (bg, meter(bg, light))
        return self._backgrounds[i]

    def calibration_groups(self) -> list[list[int]]:
        """Cameras whose targets can stand at once: no box covered twice in a group."""
        groups: list[list[int]] = []
        for i, m in enumerate(self.mounts):
            for g in groups:
                if not any(set(m.boxes) & set(self.mounts[j].boxes) for j in g):
                    g.append(i)
                    break
            else:
                groups.append([i])
        return groups

    # --- frames ------------------------------------------------------------------------------

    def calibration(self, s: int) -> Iterator[Frame]:
        self.session(s)
        for gi, group in enumerate(self.calibration_groups()):
            facing = {}
            for i in group:
                for n in self.mounts[i].boxes:
                    facing[n] = self.mounts[i].position_mm
            for n in self.viewer:
                facing.setdefault(n, self.viewer[n])
            moment = calibration_moment(
                self.table, facing, stream_rng(self.seed, self.tier.name, 3, s, gi)
            )
            yield from self.shoot(
                s, moment, "calibration", gi, f"session_{s:02d}/calibration", only=group
            )

    def known(self, s: int) -> Iterator[Frame]:
        for k, moment in enumerate(
            known_moments(self.table, stream_rng(self.seed, self.tier.name, 4, s))
        ):
            yield from self.shoot(s, moment, "known", k, f"session_{s:02d}/known")

    def play(self, index: int) -> Iterator[Frame]:
        s = index // MOMENTS_PER_SESSION
        moment = draw_moment(
            self.table, self.tier, self.viewer, stream_rng(self.seed, self.tier.name, 5, index)
        )
        yield from self.shoot(s, moment, "play", index, f"session_{s:02d}/play")

    def frames(self, count: int, start: int = 0) -> Iterator[Frame]:
        """Every frame of moments ``start .. start+count-1``, with each session's calibration
        and known-stack frames before its first moment."""
        for index in range(start, start + count):
            s = index // MOMENTS_PER_SESSION
            if index == start or index % MOMENTS_PER_SESSION == 0:
                yield from self.calibration(s)
                yield from self.known(s)
            yield from self.play(index)

    def shoot(
        self,
        s: int,
        moment: Moment,
        kind: str,
        index: int,
        folder: str,
        *,
        only: list[int] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Iterator[Frame]:
        """Photograph ``moment`` with every camera (or those listed), then say what each saw."""
        cams, light = self.session(s)
        which = range(len(cams)) if only is None else only
        traced: dict[int, Traced] = {}
        shots: dict[int, tuple[np.ndarray, bytes, str, dict[str, Any]]] = {}
        for i in which:
            bg, metered = self.background(s, i)
            t = trace(cams[i], self.table, light, bg, moment)
            traced[i] = t
            orng = stream_rng(self.seed, self.tier.name, 6, s, KIND_CODES[kind], index, i)
            drawn = draw_optics(self.tier, orng)
            drawn = replace(drawn, exposure=drawn.exposure * metered)
            bgr = expose(cams[i], t.radiance, drawn, light.white_balance(), orng)
            data, suffix = encode(bgr, drawn)
            shots[i] = (bgr, data, suffix, drawn.to_dict())
        seen = {
            cams[i].name: chip_visibility(cams[i], self.table, moment, traced[i]) for i in which
        }
        for i in which:
            bgr, data, suffix, optics = shots[i]
            name = f"{folder}/{kind}_{index:05d}_{cams[i].name}{suffix}"
            truth = frame_truth(
                self,
                s,
                moment,
                kind,
                index,
                cams,
                [cams[j] for j in which],
                i,
                seen,
                light,
                optics,
                name,
            )
            if extra:
                truth.update(extra)
            yield Frame(name, cams[i].name, data, bgr, truth)


def meter(bg: Background, light: Lighting) -> float:
    """The camera's automatic exposure: the lower two thirds of the picture (the cloth and the
    boxes), white-balanced, brought to a mean of 0.18 of full scale (mid grey)."""
    h = bg.ambient.shape[0]
    lower = bg.ambient[h // 3 :, ::4] + bg.direct[h // 3 :, ::4]
    wb = light.white_balance()
    lum = float((lower @ (np.array([0.2126, 0.7152, 0.0722], np.float32) * wb)).mean())
    return 0.18 / max(lum, 1e-4)


# --- what each camera saw ----------------------------------------------------------------------


@dataclass
class ChipSeen:
    share: float  # of its edge's own pixels, the share no other object hides
    by: set[str]  # what hides it
    band_px: float  # its edge's height in the picture, at the stack's front
    in_view: bool


def _front_points(cam: Camera, stack: Stack, r: float, T: float) -> tuple[np.ndarray, np.ndarray]:
    """Each chip's edge at the stack's front (towards the camera): bottom and top points."""
    bots, tops = [], []
    for c in stack.chips:
        dx, dy = cam.C[0] - c.x, cam.C[1] - c.y
        n = math.hypot(dx, dy) or 1.0
        fx, fy = c.x + dx / n * r, c.y + dy / n * r
        bots.append([fx, fy, c.z])
        tops.append([fx, fy, c.z + T])
    return np.array(bots), np.array(tops)


def chip_visibility(
    cam: Camera, table: Table, moment: Moment, traced: Traced
) -> list[list[ChipSeen]]:
    owner: list[tuple[int, int]] = [
        (si, ci) for si, s in enumerate(moment.stacks) for ci in range(len(s.chips))
    ]
    r = table.chip_diameter_mm / 2
    T = table.chip_thickness_mm
    out: list[list[ChipSeen]] = []
    gid = 0
    for si, stack in enumerate(moment.stacks):
        bots, tops = _front_points(cam, stack, r, T)
        ub, ut = cam.project(bots), cam.project(tops)
        band = np.hypot(*(ub - ut).T)
        inside = cam.in_view(ub, 1.0) & cam.in_view(ut, 1.0)
        row = []
        for ci in range(len(stack.chips)):
            hit = traced.chips[gid]
            share, by = 0.0, set()
            if hit is not None and hit.side.any():
                v0, v1, u0, u1 = hit.bbox
                ids = traced.ident[v0:v1, u0:u1][hit.side]
                mine = ids == ID_CHIP + gid * 4
                others = ids[~mine]
                for val in np.unique(others):
                    if val >= ID_TARGET:
                        by.add("target")
                    elif val >= ID_HAND:
                        by.add("hand")
                    elif val >= 0:
                        osi, _ = owner[int(val) // 4]
                        if osi == si:
                            continue  # a chip of the same stack overhanging: its own lean
                        o = moment.stacks[osi]
                        by.add(
                            "player_chips"
                            if o.own
                            else ("stack" if o.box == stack.box else "other_box")
                        )
                same = np.isin(
                    ids, [ID_CHIP + g * 4 + k for g in _same(owner, si) for k in range(3)]
                )
                share = float((mine | same).sum()) / float(ids.size)
            row.append(ChipSeen(share, by, float(band[ci]), bool(inside[ci])))
            gid += 1
        out.append(row)
    return out


def _same(owner: list[tuple[int, int]], si: int) -> list[int]:
    return [g for g, (s, _) in enumerate(owner) if s == si]


def _stack_view(seen: list[ChipSeen]) -> dict[str, Any]:
    hidden = [i for i, c in enumerate(seen) if c.share < VISIBLE_SHARE]
    out_view = [i for i, c in enumerate(seen) if not c.in_view]
    thin = [i for i, c in enumerate(seen) if c.band_px < MIN_BAND_PX]
    by = sorted(set().union(*(c.by for c in seen if c.share < VISIBLE_SHARE))) if hidden else []
    state = (
        "out_of_view"
        if out_view
        else ("occluded" if hidden else ("too_thin" if thin else "visible"))
    )
    return {
        "state": state,
        "hidden_chips": hidden,
        "hidden_by": by,
        "band_px": round(float(np.mean([c.band_px for c in seen])), 3) if seen else None,
        "min_share": round(min((c.share for c in seen), default=1.0), 3),
    }


def _px(cam: Camera, p: tuple[float, float, float]) -> list[float] | None:
    uv = cam.project(np.array([p]))[0]
    return None if not np.all(np.isfinite(uv)) else [round(float(uv[0]), 2), round(float(uv[1]), 2)]


def frame_truth(
    r: SideRenderer,
    s: int,
    moment: Moment,
    kind: str,
    index: int,
    cams: list[Camera],
    shot: list[Camera],
    me: int,
    seen: dict[str, list[list[ChipSeen]]],
    light: Lighting,
    optics: dict[str, Any],
    name: str,
) -> dict[str, Any]:
    table = r.table
    cam = cams[me]
    T = table.chip_thickness_mm
    rad = table.chip_diameter_mm / 2
    covering = {b.box: [m.name for m in r.mounts if b.box in m.boxes] for b in table.boxes}
    boxes: dict[str, Any] = {}
    for box in table.boxes:
        wagers = [
            (si, st) for si, st in enumerate(moment.stacks) if st.box == box.box and not st.own
        ]
        own = [(si, st) for si, st in enumerate(moment.stacks) if st.box == box.box and st.own]
        total = sum(v for _, st in wagers for v in st.values)
        counts: dict[str, int] = {}
        for _, st in wagers:
            for v in st.values:
                counts[str(v)] = counts.get(str(v), 0) + 1
        hand = any(h.box == box.box for h in moment.hands)
        stacks_out = []
        for si, st in wagers:
            views = {c: _stack_view(seen[c][si]) for c in seen if c in covering[box.box]}
            here = (st.chips[0].x, st.chips[0].y)
            dx, dy = cam.C[0] - here[0], cam.C[1] - here[1]
            n = math.hypot(dx, dy) or 1.0
            foot = (here[0] + dx / n * rad, here[1] + dy / n * rad, 0.0)
            topc = st.chips[-1]
            top = (topc.x + dx / n * rad, topc.y + dy / n * rad, st.height(T))
            stacks_out.append(
                {
                    "chips": st.values,
                    "total": str(sum(st.values)),
                    "role": st.role,
                    "base_mm": [round(here[0], 2), round(here[1], 2)],
                    "lean_mm": round(math.hypot(topc.x - here[0], topc.y - here[1]), 2),
                    "views": views,
                    "foot_px": _px(cam, foot),
                    "top_px": _px(cam, top),
                    "distance_mm": round(float(np.linalg.norm(np.array([*here, 0.0]) - cam.C)), 1),
                }
            )
        reasons = []
        if hand:
            reasons.append("hand")
        watchers = [c for c in covering[box.box] if c in seen]
        if wagers and watchers:
            for c in watchers:
                bad = sorted(
                    {v["state"] for v in (_stack_view(seen[c][si]) for si, _ in wagers)}
                    - {"visible"}
                )
                if bad:
                    reasons.append(f"{c}:{'/'.join(bad)}")
        # a box's read can be right when some camera sees every stack whole
        whole = any(
            all(_stack_view(seen[c][si])["state"] == "visible" for si, _ in wagers)
            for c in watchers
        )
        boxes[str(box.box)] = {
            "covered_by": covering[box.box],
            "total": str(Decimal(total)),
            "chips": dict(sorted(counts.items(), key=lambda kv: int(kv[0]))),
            "stacks": stacks_out,
            "player_chips": [
                {"chips": st.values, "base_mm": [round(st.base[0], 2), round(st.base[1], 2)]}
                for _, st in own
            ],
            "player_chips_present": bool(own),
            "hand": hand,
            "unsure_ok": bool(hand or (wagers and not whole)),
            "reasons": reasons,
            "center_px": _px(cam, (box.center_mm[0], box.center_mm[1], 0.0)),
            "distance_mm": round(float(np.linalg.norm(np.array([*box.center_mm, 0.0]) - cam.C)), 1),
            "in_this_view": box.box in r.mounts[me].boxes,
        }
    targets = {}
    for tg in moment.targets:
        targets[str(tg.box)] = _target_truth(cam, table, tg)
    rail = []
    for mark in table.rail_marks:
        rail.append(_rail_truth(cam, table, mark))
    return {
        "renderer": RENDERER,
        "frame": name,
        "kind": kind,
        "tier": r.tier.name,
        "seed": r.seed,
        "session": s,
        "index": index,
        "camera": cam.name,
        "size": [cam.k.width, cam.k.height],
        "boxes_in_view": list(r.mounts[me].boxes),
        "boxes": boxes,
        "targets": targets,
        "rail_marks": rail,
        "hands": [{"box": h.box, "where": h.where} for h in moment.hands],
        "ground_truth_camera": cam.to_dict(),
        "cameras_at_this_moment": [c.name for c in shot],
        "lighting": light.to_dict(),
        "optics": optics,
        "conditions": r.tier.conditions(),
    }


def _target_truth(cam: Camera, table: Table, tg: Any) -> dict[str, Any]:
    a = math.radians(tg.facing_deg)
    lean = math.radians(tg.lean_deg)
    n_h = np.array([math.sin(a), math.cos(a), 0.0])
    eu = np.array([math.cos(a), -math.sin(a), 0.0])
    ev = np.array([0, 0, 1.0]) * math.cos(lean) - n_h * math.sin(lean)
    base = np.array([tg.center[0], tg.center[1], 0.0])
    cw, ch = table.target_mm
    q = table.target_qr_mm / 2
    mid = base + ev * ch / 2
    # the code's corners as its reader names them: top-left, top-right, bottom-right, bottom-left
    # of the printed face (the face's left is +eu, seen from in front)
    qr = [
        mid + eu * q + ev * q,
        mid - eu * q + ev * q,
        mid - eu * q - ev * q,
        mid + eu * q - ev * q,
    ]
    card = [
        base + eu * cw / 2 + ev * ch,
        base - eu * cw / 2 + ev * ch,
        base - eu * cw / 2,
        base + eu * cw / 2,
    ]
    uv = cam.project(np.array(qr))
    text = f"BOX {tg.box}"
    return {
        "text": text,
        "qr_corners_px": [[round(float(x), 2) for x in p] for p in uv],
        "card_corners_px": [[round(float(x), 2) for x in p] for p in cam.project(np.array(card))],
        "qr_center_mm": [round(float(x), 2) for x in mid],
        "module_px": round(
            table.target_qr_mm / qr_modules(text) * cam.k.fx / float(np.linalg.norm(mid - cam.C)), 2
        ),
        "facing_camera": bool((cam.C - mid) @ n_h > 0),
        "in_view": bool(np.all(cam.in_view(uv))),
    }


def _rail_truth(cam: Camera, table: Table, mark: Any) -> dict[str, Any]:
    R = table.rail_radius_mm
    ax, ay = table.arc_center_mm
    half = mark.size_mm / 2
    zc = table.rail_height_mm / 2
    a = math.radians(mark.azimuth_deg)
    pts = []
    for s, z in ((-half, zc + half), (half, zc + half), (half, zc - half), (-half, zc - half)):
        ang = a + s / R
        pts.append([ax + R * math.sin(ang), ay + R * math.cos(ang), z])
    uv = cam.project(np.array(pts))
    facing = bool(cam.to_camera(np.array(pts))[:, 2].min() > 0)
    return {
        "text": mark.text,
        "azimuth_deg": mark.azimuth_deg,
        "corners_px": [[round(float(x), 2) for x in p] for p in uv] if facing else None,
        "in_view": facing and bool(np.all(cam.in_view(uv))),
    }


# --- a round as a sequence of frames -----------------------------------------------------------


def round_steps(r: SideRenderer, k: int) -> list[tuple[Moment, dict[str, Any]]]:
    """The moments of round ``k``: bets placed box by box (a hand over each as it is placed),
    "no more bets", the dealer's hand passing over the boxes, and in every other round a stack
    changed after the call (a chip added or taken, a hand at the box)."""
    rng = stream_rng(r.seed, r.tier.name, 7, k)
    tier = replace(r.tier, hand_chance=0.0)
    final = draw_moment(r.table, tier, r.viewer, rng)
    order = sorted({s.box for s in final.stacks if not s.own})
    steps: list[tuple[Moment, dict[str, Any]]] = []
    own = tuple(s for s in final.stacks if s.own)

    def at(boxes: set[int], extra: tuple[Stack, ...] = ()) -> tuple[Stack, ...]:
        return own + tuple(s for s in final.stacks if not s.own and s.box in boxes) + extra

    def add(m: Moment, phase: str, event: str, n: int = 1, **more: Any) -> None:
        for _ in range(n):
            steps.append(
                (m, {"round": k, "step": len(steps), "phase": phase, "event": event, **more})
            )

    add(Moment(own), "betting", "empty", 2)
    placed: set[int] = set()
    for box in order:
        hand = draw_hand(rng, r.table, box, r.viewer[box], list(final.stacks))
        hand = replace(hand, where="over")
        add(Moment(at(placed), (hand,)), "betting", "placing", 2, box=box)
        placed.add(box)
        add(Moment(at(placed)), "betting", "placed", 2, box=box)
    add(Moment(at(placed)), "no_more_bets", "no_more_bets", 3)
    if order:
        passing = draw_hand(
            rng,
            r.table,
            order[len(order) // 2],
            r.viewer[order[len(order) // 2]],
            list(final.stacks),
        )
        add(Moment(at(placed), (passing,)), "no_more_bets", "hand_passing", 2, box=passing.box)
        add(Moment(at(placed)), "no_more_bets", "stable", 2)
    if order and k % 2 == 1:
        box = order[int(rng.integers(len(order)))]
        target = next(s for s in final.stacks if s.box == box and not s.own)
        values = target.values
        if len(values) > 1 and rng.random() < 0.5:
            changed_values = values[:-1]  # a chip taken off the top
        else:
            changed_values = [*values, values[-1]]  # a chip of the top's kind added
        changed = build_stack(rng, box, target.base, changed_values, r.table.chip_thickness_mm)
        others = tuple(s for s in at(placed) if s is not target)
        hand = draw_hand(rng, r.table, box, r.viewer[box], list(final.stacks))
        change = {"box": box, "before": values, "after": changed_values}
        add(
            Moment((*others, changed), (replace(hand, where="over"),)),
            "no_more_bets",
            "changing",
            2,
            change=change,
        )
        add(Moment((*others, changed)), "no_more_bets", "changed", 3, change=change)
    return steps


def sequence_frames(r: SideRenderer, k: int) -> Iterator[Frame]:
    """Every camera's frames of round ``k``, in order, under session ``k``'s lights."""
    for moment, info in round_steps(r, k):
        step = info["step"]
        yield from r.shoot(
            k,
            moment,
            "sequence",
            k * 1000 + step,
            f"sequences/round_{k:03d}",
            extra={"sequence": info},
        )
