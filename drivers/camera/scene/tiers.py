"""The tiers of conditions, from mild to hard, with every range written down.

A tier names how the camera is mounted and knocked, how the table is lit, what the optics and
the sensor do to the picture, how often a hand is over a box and how untidy the stacks are. What
is bet (how many chips, which, how many stacks in a box) is the same in every tier: it is the
table, not the conditions. :func:`Tier.conditions` is what each truth file carries.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

Range = tuple[float, float]

# The frame sizes the set is rendered at, and its chips' thickness unless told otherwise.
SIZES = {"1280x720": (1280, 720), "1920x1080": (1920, 1080)}
CHIP_THICKNESS_MM = 3.3


@dataclass(frozen=True)
class Tier:
    name: str
    summary: str
    # the mount (drawn once per seed) and the knocks between sessions
    tilt_deg: Range  # optical axis from straight down
    distance_mm: Range  # from the camera to where its axis meets the felt
    yaw_deg: float  # the mount faces the players within this
    roll_deg: float
    margin: Range  # share of the picture left around the layout when mounted
    bump_deg: float  # each session: tilt, yaw (and half of it roll) off by up to this
    bump_mm: float  # ... and the mount moved by up to this
    k1: Range  # barrel distortion (negative)
    # the lamps (drawn once per seed) and the camera's white balance and exposure per frame
    lamps: tuple[int, int]
    lamp_height_mm: Range
    lamp_offset_mm: float  # the main lamp hangs within this of the layout's centre
    kelvin: Range
    mixed_kelvin: bool  # a second lamp of a different colour temperature
    lamp_radius_mm: Range
    ambient: Range  # share of the light at the layout's centre that comes from the room
    uneven: float  # amplitude of slow light/dark patches (lamp reflectors, fittings)
    body_shadow: float  # chance that the dealer's body shades the dealer's edge
    wb_drift: float  # the white balance's red and blue gains off by up to this
    exposure: Range  # auto-exposure off target by this factor
    gain: Range  # analogue gain (noise grows with it)
    read_noise: Range  # of full scale, at unit gain
    # the optics per frame
    defocus_px: Range  # circle of confusion at the focused depth (1280 px wide)
    depth_blur_px: Range  # ... and its growth away from it
    motion_chance: float
    motion_px: Range
    vignette: Range  # share of the natural cos^4 fall-off left uncorrected
    chromatic: Range
    sharpen: Range
    jpeg_quality: tuple[int, int]  # 0, 0: PNG
    # the scene per frame
    hand_chance: float
    hand_motion_px: Range
    card_chance: float
    lean_mm: float  # a stack leans by up to this much per chip
    jitter_mm: float  # and each chip sits off the one below by about this
    chip_tilt_deg: float

    def conditions(self) -> dict[str, object]:
        return asdict(self)


MILD = Tier(
    name="mild",
    summary="camera about 55 deg from vertical, steady; one or two neutral lamps; "
    "little noise or blur; PNG",
    tilt_deg=(53.0, 57.0),
    distance_mm=(1450.0, 1750.0),
    yaw_deg=2.0,
    roll_deg=1.0,
    margin=(0.07, 0.12),
    bump_deg=1.0,
    bump_mm=15.0,
    k1=(-0.10, -0.03),
    lamps=(1, 2),
    lamp_height_mm=(1200.0, 1600.0),
    lamp_offset_mm=120.0,
    kelvin=(3800.0, 5200.0),
    mixed_kelvin=False,
    lamp_radius_mm=(60.0, 150.0),
    ambient=(0.25, 0.4),
    uneven=0.04,
    body_shadow=0.0,
    wb_drift=0.03,
    exposure=(0.92, 1.08),
    gain=(1.0, 2.0),
    read_noise=(0.001, 0.002),
    defocus_px=(0.0, 0.4),
    depth_blur_px=(0.0, 1.0),
    motion_chance=0.1,
    motion_px=(0.5, 2.0),
    vignette=(0.1, 0.3),
    chromatic=(0.0, 0.0),
    sharpen=(0.2, 0.4),
    jpeg_quality=(0, 0),
    hand_chance=0.15,
    hand_motion_px=(0.0, 4.0),
    card_chance=0.3,
    lean_mm=0.25,
    jitter_mm=0.35,
    chip_tilt_deg=0.5,
)

MEDIUM = Tier(
    name="medium",
    summary="camera about 50 deg from vertical, knocked a little between sessions; warm to "
    "cool lamps, uneven; some noise, defocus and motion blur; JPEG 75-90",
    tilt_deg=(48.0, 52.0),
    distance_mm=(1350.0, 1650.0),
    yaw_deg=3.0,
    roll_deg=1.5,
    margin=(0.06, 0.10),
    bump_deg=2.5,
    bump_mm=30.0,
    k1=(-0.20, -0.06),
    lamps=(1, 2),
    lamp_height_mm=(1000.0, 1500.0),
    lamp_offset_mm=250.0,
    kelvin=(3000.0, 6000.0),
    mixed_kelvin=False,
    lamp_radius_mm=(40.0, 150.0),
    ambient=(0.15, 0.35),
    uneven=0.10,
    body_shadow=0.2,
    wb_drift=0.06,
    exposure=(0.8, 1.2),
    gain=(1.5, 4.0),
    read_noise=(0.0015, 0.003),
    defocus_px=(0.0, 0.8),
    depth_blur_px=(0.0, 2.0),
    motion_chance=0.3,
    motion_px=(1.0, 5.0),
    vignette=(0.2, 0.5),
    chromatic=(0.0, 0.0008),
    sharpen=(0.2, 0.6),
    jpeg_quality=(75, 90),
    hand_chance=0.25,
    hand_motion_px=(0.0, 10.0),
    card_chance=0.5,
    lean_mm=0.5,
    jitter_mm=0.5,
    chip_tilt_deg=1.0,
)

HARD = Tier(
    name="hard",
    summary="camera at 45 deg from vertical, knocked by up to 4 deg and 5 cm; mixed warm and "
    "cool lamps, strongly uneven, the dealer's shadow; high gain noise, defocus, motion blur, "
    "chromatic aberration; JPEG 60-80; untidy leaning stacks, hands, cards",
    tilt_deg=(43.0, 47.0),
    distance_mm=(1200.0, 1500.0),
    yaw_deg=4.0,
    roll_deg=2.0,
    margin=(0.05, 0.09),
    bump_deg=4.0,
    bump_mm=50.0,
    k1=(-0.30, -0.10),
    lamps=(2, 2),
    lamp_height_mm=(850.0, 1300.0),
    lamp_offset_mm=350.0,
    kelvin=(2700.0, 6500.0),
    mixed_kelvin=True,
    lamp_radius_mm=(30.0, 120.0),
    ambient=(0.1, 0.3),
    uneven=0.20,
    body_shadow=0.5,
    wb_drift=0.10,
    exposure=(0.65, 1.3),
    gain=(3.0, 8.0),
    read_noise=(0.002, 0.004),
    defocus_px=(0.3, 1.3),
    depth_blur_px=(0.5, 3.0),
    motion_chance=0.5,
    motion_px=(2.0, 9.0),
    vignette=(0.4, 0.8),
    chromatic=(0.0005, 0.0015),
    sharpen=(0.3, 1.0),
    jpeg_quality=(60, 80),
    hand_chance=0.35,
    hand_motion_px=(0.0, 18.0),
    card_chance=0.7,
    lean_mm=0.9,
    jitter_mm=0.8,
    chip_tilt_deg=2.0,
)

OVERHEAD = Tier(
    name="overhead",
    summary="camera on the ceiling, 10-30 deg from vertical; otherwise medium conditions; "
    "JPEG 70-90 (stacks show little of their sides: many are unsure by design)",
    tilt_deg=(10.0, 30.0),
    distance_mm=(1300.0, 1800.0),
    yaw_deg=3.0,
    roll_deg=1.5,
    margin=(0.06, 0.10),
    bump_deg=2.5,
    bump_mm=30.0,
    k1=(-0.20, -0.06),
    lamps=(1, 2),
    lamp_height_mm=(1300.0, 1800.0),
    lamp_offset_mm=250.0,
    kelvin=(3000.0, 6000.0),
    mixed_kelvin=False,
    lamp_radius_mm=(40.0, 150.0),
    ambient=(0.15, 0.35),
    uneven=0.10,
    body_shadow=0.0,
    wb_drift=0.06,
    exposure=(0.8, 1.2),
    gain=(1.5, 4.0),
    read_noise=(0.0015, 0.003),
    defocus_px=(0.0, 0.8),
    depth_blur_px=(0.0, 1.5),
    motion_chance=0.3,
    motion_px=(1.0, 5.0),
    vignette=(0.2, 0.5),
    chromatic=(0.0, 0.0008),
    sharpen=(0.2, 0.6),
    jpeg_quality=(70, 90),
    hand_chance=0.25,
    hand_motion_px=(0.0, 10.0),
    card_chance=0.5,
    lean_mm=0.5,
    jitter_mm=0.5,
    chip_tilt_deg=1.0,
)

TIERS: dict[str, Tier] = {t.name: t for t in (MILD, MEDIUM, HARD, OVERHEAD)}
