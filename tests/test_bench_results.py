"""`make bench`'s writer: each benchmark's printed figures, verbatim, under the machine's name."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "bench_results.py"


def test_results_hold_each_output_the_machine_and_the_failures(tmp_path: Path) -> None:
    good = tmp_path / "bench_good.py"
    good.write_text(
        "print('appends: 4,208 events/s, 0.65 of the bare loop')\nprint('p99 1.7 ms')\n"
    )
    bad = tmp_path / "bench_bad.py"
    bad.write_text(
        "import sys\nprint('half way')\nprint('Traceback: boom', file=sys.stderr)\nsys.exit(3)\n"
    )
    good.write_text(good.read_text() + "import sys\nprint('a log line', file=sys.stderr)\n")
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--out", str(out), str(good), str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr  # one benchmark failed
    assert "appends: 4,208 events/s" in proc.stdout  # shown as it ran
    text = out.read_text(encoding="utf-8")
    assert "appends: 4,208 events/s, 0.65 of the bare loop\np99 1.7 ms\n```" in text
    assert f"`python {good}`: ok;" in text
    assert f"`python {bad}`: FAILED (exit 3);" in text and "half way" in text
    assert f"{os.cpu_count()} cores" in text
    assert f"Python {platform.python_version()}" in text
    assert "- date: 20" in text and "UTC" in text
    # Logs stay out of the figures: kept for the failed benchmark, counted for the other.
    assert "a log line" not in text and "(1 lines logged on standard error, not kept here.)" in text
    assert "Its last 1 lines on standard error:\n\n```text\nTraceback: boom\n```" in text
    assert "a log line" in proc.stderr  # shown as it ran
    # The project's own benchmarks were not asked for, and the file says so.
    assert "Not in this run (not asked for): benchmarks/bench_" in text


def test_an_unknown_benchmark_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--out", str(out), "benchmarks/bench_nothing.py"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "no such benchmark: benchmarks/bench_nothing.py" in proc.stderr
    assert not out.exists()
