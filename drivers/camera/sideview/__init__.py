"""The counting camera's side view: an evaluation renderer written from the mount and optics.

A stand-in for the counting camera (DEVICES.md, "The chip cameras"): cameras on the dealer's
side 3-12 cm above the cloth, tilted at most 15 deg down, looking across the arc of boxes at
chips 0.35-1.3 m away. It shares nothing with any reader; see docs/developer/side-renderer.md
for the frames, the truth files and the command (``floorctl chips render-side``).

Modules: :mod:`.table` (boxes, rail, cameras, chip designs), :mod:`.camera` (pinhole, pose,
distortion), :mod:`.chips` (edge and face textures), :mod:`.lighting` (lamps, white balance),
:mod:`.scene` (stacks, hands, targets), :mod:`.tiers`, :mod:`.sampling` (drawing from a tier),
:mod:`.raster` (tracing a view), :mod:`.optics` (lens, sensor, encoder), :mod:`.frames`
(sessions, moments, truth), :mod:`.dataset` and :mod:`.writer` (a set on disk), :mod:`.cli`.
"""
