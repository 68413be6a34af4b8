"""The tiers of conditions, mild to hard, with every range written down.

``rig`` says which cameras watch: ``single`` (each box seen by one camera) or ``pair`` (each
box seen from the tray's left corner and its right). Every range is drawn uniformly; the truth
file of each frame carries its tier's conditions and the values drawn.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

Range = tuple[float, float]


@dataclass(frozen=True)
class Tier:
    name: str
    summary: str
    rig: str
    # the mount, drawn per seed; knocked between sessions
    height_mm: Range  # lens above the cloth
    aim_jitter_deg: float  # the camera is pointed at its boxes within this
    roll_deg: float
    k1: Range
    k2: Range
    knock_deg: float  # each session: yaw, tilt and roll off the mount by up to this
    knock_mm: float  # ... and the camera moved by up to this
    # the lights, drawn per session
    kelvin: Range
    mixed: bool  # a fill lamp of another colour
    fill_chance: float
    elevation_deg: Range
    intensity: Range
    ambient: Range
    uneven: float
    wb_correction: Range
    wb_drift: float
    # the optics, drawn per frame
    exposure: Range  # off the camera's metered exposure by this factor
    defocus_px: Range
    motion_chance: float
    motion_px: Range
    vignette: Range
    gain: Range
    read_noise: Range
    jpeg: tuple[int, int]  # (0, 0): PNG
    # the scene, drawn per moment
    empty_chance: float
    two_stacks: float  # a second stack in a box
    behind_chance: float  # ... standing behind the first, as one camera sees them
    player_chance: float  # a player's own chips behind a box
    hand_chance: float  # a hand (and its sleeve) at a box
    lean_mm: Range  # a stack leans by up to this per chip
    jitter_mm: float  # each chip off the one below by about this
    unsorted_chance: float  # a stack not built with the larger chips at the bottom

    def conditions(self) -> dict[str, object]:
        return asdict(self)


MILD = Tier(
    name="mild",
    summary="squared stacks, one per box; neutral steady light; no hands, no occlusion; PNG",
    rig="single",
    height_mm=(50.0, 90.0),
    aim_jitter_deg=0.5,
    roll_deg=0.5,
    k1=(-0.08, -0.02),
    k2=(0.0, 0.01),
    knock_deg=0.15,
    knock_mm=1.0,
    kelvin=(4200.0, 5200.0),
    mixed=False,
    fill_chance=0.0,
    elevation_deg=(55.0, 80.0),
    intensity=(2.6, 3.0),
    ambient=(0.35, 0.45),
    uneven=0.03,
    wb_correction=(0.85, 0.95),
    wb_drift=0.02,
    exposure=(0.95, 1.05),
    defocus_px=(0.5, 0.7),
    motion_chance=0.0,
    motion_px=(0.0, 0.0),
    vignette=(0.1, 0.2),
    gain=(1.0, 1.5),
    read_noise=(0.001, 0.002),
    jpeg=(0, 0),
    empty_chance=0.15,
    two_stacks=0.0,
    behind_chance=0.0,
    player_chance=0.0,
    hand_chance=0.0,
    lean_mm=(0.0, 0.0),
    jitter_mm=0.15,
    unsorted_chance=0.0,
)

MEDIUM = Tier(
    name="medium",
    summary="some lean; two stacks side by side; players' own chips behind the boxes; warm "
    "to cool light; JPEG 80-92",
    rig="single",
    height_mm=(40.0, 110.0),
    aim_jitter_deg=1.0,
    roll_deg=1.0,
    k1=(-0.12, -0.03),
    k2=(0.0, 0.02),
    knock_deg=0.5,
    knock_mm=3.0,
    kelvin=(2900.0, 6500.0),
    mixed=False,
    fill_chance=0.3,
    elevation_deg=(45.0, 80.0),
    intensity=(2.0, 3.2),
    ambient=(0.25, 0.45),
    uneven=0.08,
    wb_correction=(0.6, 0.9),
    wb_drift=0.05,
    exposure=(0.85, 1.15),
    defocus_px=(0.5, 1.0),
    motion_chance=0.1,
    motion_px=(1.0, 2.5),
    vignette=(0.2, 0.4),
    gain=(1.5, 3.0),
    read_noise=(0.0015, 0.003),
    jpeg=(80, 92),
    empty_chance=0.15,
    two_stacks=0.3,
    behind_chance=0.0,
    player_chance=0.25,
    hand_chance=0.0,
    lean_mm=(0.0, 0.4),
    jitter_mm=0.4,
    unsorted_chance=0.1,
)

HARD = Tier(
    name="hard",
    summary="hands and sleeves in front of and over stacks; a stack behind another; leaning "
    "untidy stacks; mixed lamps; noise, defocus, motion blur; JPEG 60-80; knocked camera",
    rig="single",
    height_mm=(30.0, 120.0),
    aim_jitter_deg=1.5,
    roll_deg=1.5,
    k1=(-0.18, -0.05),
    k2=(0.0, 0.03),
    knock_deg=1.5,
    knock_mm=8.0,
    kelvin=(2700.0, 6500.0),
    mixed=True,
    fill_chance=1.0,
    elevation_deg=(35.0, 80.0),
    intensity=(1.4, 3.4),
    ambient=(0.15, 0.4),
    uneven=0.18,
    wb_correction=(0.5, 0.9),
    wb_drift=0.08,
    exposure=(0.65, 1.35),
    defocus_px=(0.6, 1.6),
    motion_chance=0.35,
    motion_px=(1.0, 5.0),
    vignette=(0.3, 0.6),
    gain=(3.0, 8.0),
    read_noise=(0.002, 0.004),
    jpeg=(60, 80),
    empty_chance=0.15,
    two_stacks=0.4,
    behind_chance=0.4,
    player_chance=0.35,
    hand_chance=0.35,
    lean_mm=(0.2, 1.0),
    jitter_mm=0.7,
    unsorted_chance=0.25,
)

PAIR = Tier(
    name="pair",
    summary="two cameras on every box (the tray's left and right corners); medium light and "
    "optics; a stack behind another as one camera sees them, which the other sees; some hands",
    rig="pair",
    height_mm=(40.0, 110.0),
    aim_jitter_deg=1.0,
    roll_deg=1.0,
    k1=(-0.12, -0.03),
    k2=(0.0, 0.02),
    knock_deg=0.5,
    knock_mm=3.0,
    kelvin=(2900.0, 6500.0),
    mixed=False,
    fill_chance=0.3,
    elevation_deg=(45.0, 80.0),
    intensity=(2.0, 3.2),
    ambient=(0.25, 0.45),
    uneven=0.08,
    wb_correction=(0.6, 0.9),
    wb_drift=0.05,
    exposure=(0.85, 1.15),
    defocus_px=(0.5, 1.0),
    motion_chance=0.1,
    motion_px=(1.0, 2.5),
    vignette=(0.2, 0.4),
    gain=(1.5, 3.0),
    read_noise=(0.0015, 0.003),
    jpeg=(80, 92),
    empty_chance=0.15,
    two_stacks=0.45,
    behind_chance=0.6,
    player_chance=0.25,
    hand_chance=0.15,
    lean_mm=(0.0, 0.4),
    jitter_mm=0.4,
    unsorted_chance=0.1,
)

TIERS: dict[str, Tier] = {t.name: t for t in (MILD, MEDIUM, HARD, PAIR)}
TIER_CODES = {"mild": 1, "medium": 2, "hard": 3, "pair": 4}

TUNING_SEEDS = range(1, 100)  # tune a reader on these
REPORT_SEEDS_FROM = 300  # report on these and above, never tuned on
