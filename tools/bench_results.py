"""Run benchmarks and write what they printed to benchmarks/RESULTS.md (``make bench``).

    .venv/bin/python tools/bench_results.py [--out benchmarks/RESULTS.md] BENCHMARK.py...

Each benchmark runs in turn with this Python, its output shown as it comes and kept; the file
then holds, under the date and the machine (CPU model, cores, memory, load average, Python,
the operating system), each benchmark's command, exit status, wall and CPU time, and its
printed figures verbatim: its standard output. What it logs on standard error is shown as it
runs and kept in the file only when the benchmark failed. The figures are the benchmarks' own
(each prints its peer or limit from the same run); nothing here judges them. The file is
written again after each benchmark, so a run cut short still leaves what it measured, and it
names the benchmarks of benchmarks/ a run did not include. Exit status: 1 if any benchmark
failed, else 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
ERROR_LINES = 40  # of a failed benchmark's standard error, kept in the file


@dataclass
class Result:
    path: str
    status: int
    wall: float
    cpu: float
    output: str  # standard output: the figures
    errors: list[str]  # standard error: logs and tracebacks


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def machine() -> list[str]:
    """The lines that say when and on what the figures were taken."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- CPU: {_cpu_model()}, {os.cpu_count()} cores",
        f"- memory: {_memory()}",
        f"- load average at the start (1, 5, 15 min): {load}",
        f"- Python {platform.python_version()} ({sys.implementation.name}), {platform.platform()}",
    ]


def _pump(stream: IO[str], echo: IO[str], into: list[str]) -> None:
    for line in stream:
        echo.write(line)
        echo.flush()
        into.append(line)


def run(path: str) -> Result:
    """Run one benchmark, echoing its output and its logs, and keep both."""
    print(f"== {path}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, path],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert proc.stdout is not None and proc.stderr is not None
    lines: list[str] = []
    errors: list[str] = []
    logs = threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, errors), daemon=True)
    logs.start()
    _pump(proc.stdout, sys.stdout, lines)
    status = proc.wait()
    logs.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Result(path, status, time.monotonic() - start, cpu, "".join(lines), errors)


def render(
    header: list[str], results: list[Result], pending: list[str], left_out: list[str]
) -> str:
    out = [
        "# Benchmark results",
        "",
        "Written by `make bench` (tools/bench_results.py): each benchmark's printed figures,",
        "verbatim. Read the ratios each one prints against its peer or limit in the same run;",
        "absolute times depend on the machine and on what else it was doing.",
        "",
        *header,
        "",
    ]
    for r in results:
        verdict = "ok" if r.status == 0 else f"FAILED (exit {r.status})"
        out += [
            f"## {Path(r.path).name}",
            "",
            f"`python {r.path}`: {verdict}; {r.wall:.1f} s wall, {r.cpu:.1f} s CPU",
            "",
            "```text",
            r.output.rstrip("\n"),
            "```",
            "",
        ]
        if r.status != 0 and r.errors:
            shown = r.errors[-ERROR_LINES:]
            out += [
                f"Its last {len(shown)} lines on standard error:",
                "",
                "```text",
                "".join(shown).rstrip("\n"),
                "```",
                "",
            ]
        elif r.errors:
            out += [f"({len(r.errors)} lines logged on standard error, not kept here.)", ""]
    if pending:
        out += ["Not run (the run was cut short): " + ", ".join(pending), ""]
    if left_out:
        out += ["Not in this run (not asked for): " + ", ".join(left_out), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmarks", nargs="+", help="benchmark scripts, run in this order")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    args = parser.parse_args(argv)
    missing = [b for b in args.benchmarks if not (ROOT / b).is_file()]
    if missing:
        print(f"bench_results: no such benchmark: {', '.join(missing)}", file=sys.stderr)
        return 2
    header = machine()
    asked = {str((ROOT / b).resolve()) for b in args.benchmarks}
    every = sorted((ROOT / "benchmarks").glob("bench_*.py"))
    left_out = [str(b.relative_to(ROOT)) for b in every if str(b.resolve()) not in asked]
    results: list[Result] = []
    for i, path in enumerate(args.benchmarks):
        results.append(run(path))
        text = render(header, results, args.benchmarks[i + 1 :], left_out)
        args.out.write_text(text, encoding="utf-8")
    failed = [r.path for r in results if r.status != 0]
    print(f"\n{args.out}: {len(results)} benchmarks, {len(failed)} failed", flush=True)
    for path in failed:
        print(f"  FAILED: {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
