"""A small run of benchmarks/bench_floor.py (the 1e7 run is `--big`, by hand): it loads its
own database, indexes it, prints every figure at each stage and their growth, and drops the
database. Nothing here is timed."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import paths
import psycopg

ROOT = Path(__file__).resolve().parent.parent


def test_the_floor_benchmark_runs_small_and_cleans_up() -> None:
    tag = f"test_{uuid.uuid4().hex[:8]}"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_floor.py"),
            "--tables",
            "3",
            "--streams",
            "1",
            "--stages",
            "1500,4500",
            "--samples",
            "5",
            "--jobs",
            "1",
            "--tag",
            tag,
        ],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    for figure in (
        "round lookup",
        "round watched (every step)",
        "shift report",
        "floor view",
        "SELECT 1 (peer)",
        "round rebuilt from the table line (naive)",
    ):
        assert (
            len(re.findall(rf"{re.escape(figure)}\s+p50\s+[\d.]+ ms\s+p95\s+[\d.]+ ms", out)) == 2
        )
        assert re.search(rf"{re.escape(figure)}\s+p50 x\s*[\d.]+\s+p95 x\s*[\d.]+", out)
    assert "indexed 4,500 events" not in out  # each stage indexes only what is new
    assert re.search(r"indexed 1,500 events.*\nindexed 3,000 events", out, re.S)
    with psycopg.connect(paths.pg_conninfo()) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname = %s", (f"floorctl_bench_{tag}",)
        ).fetchone()
    assert left == (0,)
