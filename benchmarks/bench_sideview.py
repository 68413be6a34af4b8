"""Side-view renderer speed: CPU seconds a frame, per tier and size, against the 1 s limit.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_sideview.py [--moments 6]

For each tier at 1920x1080 (and mild at 3840x2160) it renders ``--moments`` moments of play
with every camera of the tier's rig, after one warm-up moment (which makes each camera's
cloth and rail, once a session), and prints the CPU time a frame, frames per CPU-second, and
the ratio to the limit the benchmark of the counting camera relies on (a 1920x1080 frame in
well under a second). CPU time, not wall time: the machine is shared. Seeds 900 and up
(neither tuning nor reporting seeds).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from drivers.camera.sideview.frames import SideRenderer
from drivers.camera.sideview.table import default_table
from drivers.camera.sideview.tiers import TIERS

LIMIT_S = 1.0  # CPU seconds for one 1920x1080 frame


def run(tier: str, size: tuple[int, int], moments: int, seed: int) -> tuple[float, float, int]:
    r = SideRenderer(default_table(), TIERS[tier], seed, size)
    warm = time.process_time()
    n_warm = sum(1 for _ in r.play(0))
    warm_s = (time.process_time() - warm) / n_warm
    start = time.process_time()
    n = 0
    for i in range(1, moments + 1):
        for frame in r.play(i):
            n += 1 if frame.data else 0
    return (time.process_time() - start) / n, warm_s, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moments", type=int, default=6)
    args = ap.parse_args()
    print(
        f"{'tier':8} {'size':10} {'frames':>6} {'CPU s/frame':>11} {'frames/CPU-s':>12} "
        f"{'vs 1 s':>7} {'first frame (with cloth)':>25}"
    )
    cases = [(t, (1920, 1080)) for t in TIERS] + [("mild", (3840, 2160))]
    for k, (tier, size) in enumerate(cases):
        moments = args.moments if size[0] < 3000 else max(1, args.moments // 3)
        per, warm, n = run(tier, size, moments, 900 + k)
        print(
            f"{tier:8} {size[0]}x{size[1]:<5} {n:6d} {per:11.3f} {1 / per:12.2f} "
            f"{per / LIMIT_S:7.2f} {warm:24.2f}s"
        )


if __name__ == "__main__":
    main()
