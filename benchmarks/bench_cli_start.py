"""How much CPU a `floorctl` command costs before it does anything, against a bare Python.

Each command is run as a fresh process many times; the figure is the median CPU time (user +
system) of the child, and the ratio is against ``python -c "import argparse"`` in the same
virtual environment, measured in the same run. The aim (issue 10): `floorctl --help` and
`floorctl replay --help` at most 8 times the bare start.

    .venv/bin/python benchmarks/bench_cli_start.py [--runs 21]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
COMMANDS = [
    ["--help"],
    ["replay", "--help"],
    ["shoe", "listen", "--help"],
    ["run", "--help"],
    ["simulate", "--help"],
    ["verify", "--help"],
    ["chips", "--help"],
    ["chips", "detect", "--help"],
    ["chips", "scene", "--help"],
    ["calibrate", "--help"],
]
AIM = 8.0


def cpu_seconds(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    floorctl = str(BIN / "floorctl")
    bare = cpu_seconds([sys.executable, "-c", "import argparse"], args.runs)
    print(f"bare python -c 'import argparse': {bare * 1000:.1f} ms CPU (median of {args.runs})")
    print(f"{'command':<28} {'CPU ms':>8} {'x bare':>7}")
    for argv in COMMANDS:
        t = cpu_seconds([floorctl, *argv], args.runs)
        ratio = t / bare
        mark = ""
        if argv in (["--help"], ["replay", "--help"]):
            mark = "  within aim" if ratio <= AIM else f"  ABOVE the aim of {AIM:g}x"
        print(f"floorctl {' '.join(argv):<19} {t * 1000:8.1f} {ratio:7.1f}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
