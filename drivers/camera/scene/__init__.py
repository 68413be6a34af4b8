"""An evaluation renderer for the chip camera, written from camera physics, not from the detector.

This package shares nothing with the detector or with ``drivers/camera/render.py`` but the
table config (``drivers/camera/config.py``) and the shape of the truth files. It ray-traces a
pinhole camera with a real pose and barrel distortion over the layout in millimetres: textured
felt with the printed layout and four QR fiducials encoded by ``segno`` (another encoder than
OpenCV's); clay chips as 39 x 3.3 mm cylinders with rounded edges, edge spots, a moulded ring
and a printed inlay, each a little off in colour; stacks of up to 20, mixed with the large
chips at the bottom, two in a box, leaning and untidy; a dealer's hand and sleeve; cards on
the felt. Lamps light it by the inverse square law and cast soft shadows; the light passes
through vignetting, depth-dependent defocus, motion blur, chromatic aberration, a Bayer
sensor with shot and read noise, white balance with drift, the tone curve, sharpening and JPEG.

Modules: :mod:`.camera` (pose, lens, projection), :mod:`.lighting` (lamps, shadows),
:mod:`.layout` (felt, print, QR codes, table, cards), :mod:`.chips` (the chip model and its
tracing), :mod:`.hand` (hand and arm), :mod:`.tiers` (the conditions), :mod:`.sampling`
(scenes from seeds), :mod:`.shadows` (a frame's light on the felt), :mod:`.compose` (tracing
and lighting a frame), :mod:`.measure` (what the camera saw, for the truth), :mod:`.optics`
(the camera after the lens), :mod:`.truth` (the truth file), :mod:`.frames` (the front),
:mod:`.writer`, :mod:`.cli` (``floorctl chips scene``), :mod:`.sheet` (contact sheets).

    floorctl chips scene --config TABLE.toml --tier mild --seed 3 --count 200 --out DIR
        [--size 1280x720|1920x1080] [--start N] [--chip-thickness 3.3]

Seeds. The same seed, tier and size always give the same frames (frame ``i`` depends only on
them and ``i``). Tune on seed 1 only; report on seeds 100 and up, which nobody tunes on. Frames
come in sessions of ten; the camera is knocked between sessions.

Tiers (every range is drawn uniformly; the truth file of each frame carries its tier's full
conditions and the values drawn for it):

============  =========  ==========  =======  ======  =====  ======  ======  ==========
tier          tilt deg   knock       lamps    WB      gain   motion  JPEG    hand/cards
============  =========  ==========  =======  ======  =====  ======  ======  ==========
mild          53-57      1 deg 15mm  3800-    +-3%    1-2    10% of  PNG     15% / 30%
                                     5200 K                  frames
                                                             <=2 px
medium        48-52      2.5 deg     3000-    +-6%    1.5-4  30%     75-90   25% / 50%
                         30 mm       6000 K                  <=5 px
hard          43-47      4 deg       two,     +-10%   3-8    50%     60-80   35% / 70%
                         50 mm       mixed                   <=9 px
                                     2700-
                                     6500 K
overhead      10-30      2.5 deg     3000-    +-6%    1.5-4  30%     70-90   25% / 50%
                         30 mm       6000 K                  <=5 px
============  =========  ==========  =======  ======  =====  ======  ======  ==========

- **mild**: camera about 55 deg from vertical, 1.45-1.75 m from the layout's centre, barrel
  k1 -0.03..-0.10; one or two lamps 1.2-1.6 m up, light patches of 4%; exposure +-8%; defocus
  up to 0.4 px plus up to 1 px away from the focused depth; stacks lean up to 0.25 mm a chip,
  chips off the one below by about 0.35 mm, tilted up to 0.5 deg.
- **medium**: about 50 deg, 1.35-1.65 m, k1 -0.06..-0.20; lamps 1.0-1.5 m up, patches of
  10%, the dealer's body shading the dealer's edge in 20% of seeds; exposure +-20%; defocus up
  to 0.8 + 2 px; chromatic aberration up to 0.08%; lean 0.5 mm, offsets 0.5 mm, tilt 1 deg.
- **hard**: 45 deg, 1.2-1.5 m, k1 -0.10..-0.30; two lamps of different colour 0.85-1.3 m up,
  patches of 20%, the dealer's shadow in half the seeds; exposure 0.65-1.3; defocus 0.3-1.3 +
  0.5-3 px; chromatic aberration 0.05-0.15%; sharpening up to 1.0; lean 0.9 mm, offsets
  0.8 mm, tilt 2 deg; moving hands smeared up to 18 px.
- **overhead**: a ceiling camera 10-30 deg from vertical, 1.3-1.8 m away, otherwise as
  medium. Stacks show little or none of their sides, so many boxes are unsure by design
  (their truth says which and why).

In every tier a quarter of the boxes are empty, the others hold a stack of 1-20 chips (or two
stacks, 28%) of one to three denominations, larger chips at the bottom.
"""
