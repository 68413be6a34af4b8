"""Running a simulation: fixed seeded chunks of rounds, played in one process or several.

A run of N rounds is cut into chunks of :data:`CHUNK_ROUNDS` rounds. Chunk *k* plays with its
own shoe, shuffled by ``random.Random("floorctl-simulate/<seed>/<k>")``, from a fresh shoe and a
fresh table. The chunks' tallies are exact sums, merged in chunk order, so the result depends on
the seed, the number of rounds and the chunk size only: the same ``--seed`` gives the same
figures whatever ``--jobs`` is (the jobs only share out the chunks).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, Any

from controller.sim.stats import Tally
from controller.sim.strategy import Strategy, load_strategy

CHUNK_ROUNDS = 5000


@dataclass(frozen=True)
class SimConfig:
    game: str
    strategy_path: str
    seed: str
    bet: Decimal = Decimal(10)
    penetration: float = 0.75
    overrides: tuple[tuple[str, Any], ...] = ()

    def rules(self) -> dict[str, Any]:
        return dict(self.overrides)


def chunk_seed(seed: str, index: int) -> str:
    """The seed of chunk ``index``'s shoe (``random.Random`` hashes a str seed with SHA-512)."""
    return f"floorctl-simulate/{seed}/{index}"


def chunks(rounds: int, size: int = CHUNK_ROUNDS) -> list[tuple[int, int]]:
    """(index, rounds) for each chunk of a run of ``rounds`` rounds."""
    return [(i, min(size, rounds - start)) for i, start in enumerate(range(0, rounds, size))]


def play_chunk(
    config: SimConfig,
    index: int,
    rounds: int,
    tick: Callable[[int], None] | None = None,
    strategy: Strategy | None = None,
) -> Tally:
    """Play one chunk (in whatever process calls it)."""
    from controller.sim.player import RoundPlayer

    player = RoundPlayer(config, chunk_seed(config.seed, index), strategy)
    return player.play(rounds, tick)


def _play_chunk_job(args: tuple[SimConfig, int, int, Strategy]) -> Tally:
    config, index, rounds, strategy = args
    return play_chunk(config, index, rounds, strategy=strategy)


def run(
    config: SimConfig,
    rounds: int,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    chunk_rounds: int = CHUNK_ROUNDS,
) -> Tally:
    """Play ``rounds`` rounds; ``progress(rounds_done)`` is called as chunks complete.

    The result depends on ``config``, ``rounds`` and ``chunk_rounds``, never on ``jobs``.
    """
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    parts = chunks(rounds, chunk_rounds)
    strategy = load_strategy(config.strategy_path)  # read once: every chunk plays the same table
    results: dict[int, Tally] = {}
    if jobs <= 1 or len(parts) == 1:
        done = 0
        for index, n in parts:
            base = done

            def tick(k: int, base: int = base) -> None:
                if progress is not None:
                    progress(base + k)

            results[index] = play_chunk(config, index, n, tick, strategy)
            done += n
            if progress is not None:
                progress(done)
    else:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        ctx = multiprocessing.get_context(method)
        done = 0
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(parts)), mp_context=ctx)
        try:
            pending: dict[Future[Tally], tuple[int, int]] = {
                pool.submit(_play_chunk_job, (config, index, n, strategy)): (index, n)
                for index, n in parts
            }
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    index, n = pending.pop(fut)
                    results[index] = fut.result()
                    done += n
                    if progress is not None:
                        progress(done)
        except BaseException:
            # Ctrl-C or a failed chunk: drop the chunks not yet started, do not wait for them.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    total = Tally()
    for index, _n in parts:
        total.merge(results[index])
    return total


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class ProgressBar:
    """A plain-text progress bar on a stream (stderr): redrawn in place on a terminal, one line
    per tenth of the run otherwise."""

    WIDTH = 30

    def __init__(self, total: int, stream: IO[str] | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._last_tenth = -1

    def __call__(self, done: int) -> None:
        now = time.perf_counter()
        if self.tty:
            if done < self.total and now - self._last_draw < 0.2:
                return
            self._last_draw = now
            self.stream.write("\r" + self.line(done, now))
        else:
            tenth = done * 10 // self.total
            if tenth == self._last_tenth:
                return
            self._last_tenth = tenth
            self.stream.write(self.line(done, now) + "\n")
        self.stream.flush()

    def line(self, done: int, now: float) -> str:
        frac = done / self.total if self.total else 1.0
        filled = int(frac * self.WIDTH)
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        return (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {frac * 100:5.1f}% "
            f"{done:,}/{self.total:,} rounds  {rate:,.0f} rounds/s  "
            f"ETA {int(eta) // 60}:{int(eta) % 60:02d}"
        )

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
