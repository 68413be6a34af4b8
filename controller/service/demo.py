"""`floorctl demo`: the whole table on stand-ins.

- the simulated shoe (drivers.shoe.simulator) writes barcoded cards into one end of a
  pseudo-terminal; the real shoe reader reads the other end, as it would /dev/ttyUSB0;
- the chip camera's synthetic layout renderer draws the wagers the bot's players place, and
  the real chip detector reads them (when the camera driver is installed);
- a dealer bot takes the dealer's and the players' part from `table.due()`;
- every event goes to a SQLite audit store, and the dealer's screen is served as in `run`.

The shoe deals a card when the bot draws one (a dealer's pace), and sends its heartbeat in
between, so the reader's silence watchdog sees a healthy device.

The table is opened as the rule book has it (:class:`DemoCards` and the bot's
`change_shoe`): the dealer signs in, the table is opened, each deck is read through the reader
for inspection (6.1), the opening's steps are confirmed (6.2, 6.3), and every shoe is loaded
from the same physical decks, ended and read out at its end, so it is reconciled. A deck fault
(`--faults short-deck`, `ten-in-deck`, `doubled-card`, `foreign-card`) is in the decks from the
start: flagged at the inspection, at each load, and named at each shoe's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import select
import sys
import threading
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

import structlog

from controller.engine import Table as EngineTable
from controller.engine import money
from controller.events import parse_setup
from controller.service.app import StartError, Table, open_table, serve
from controller.service.bot import DealerBot, Wagers
from controller.service.core import TableService
from controller.service.devices import ShoeFeed
from controller.service.pin import hash_pin
from drivers.shoe.simulator import (
    FaultPlan,
    PhysicalDeck,
    SimulatedShoe,
    Written,
    make_decks,
    parse_faults,
    shuffle_decks,
)
from drivers.shoe.transport import TransportError

log = structlog.get_logger("floorctl.demo")

DEMO_TABLE: dict[str, Any] = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "DEMO",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}


# ----- the pseudo-terminal ----------------------------------------------------------------


class PtyPair:
    """A pseudo-terminal: the simulated shoe writes the master, the reader opens the slave."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


class PtyMaster:
    """The master side of a pty as a shoe transport (the simulated device's end of the cable)."""

    def __init__(self, pair: PtyPair) -> None:
        self._pair = pair
        self._open = False

    @property
    def url(self) -> str:
        return f"pty-master:{self._pair.path}"

    @property
    def is_open(self) -> bool:
        return self._open

    def open(self) -> None:
        self._open = True

    def close(self) -> None:
        self._open = False

    def read(self) -> bytes:
        ready, _, _ = select.select([self._pair.master], [], [], 0.05)
        if not ready:
            return b""
        try:
            return os.read(self._pair.master, 4096)
        except OSError as exc:
            raise TransportError(f"{self.url}: {exc}") from exc

    def write(self, data: bytes) -> None:
        if not self._open:
            raise TransportError(f"{self.url}: cannot write: port is not open")
        try:
            os.write(self._pair.master, data)
        except OSError as exc:
            raise TransportError(f"{self.url}: port lost while writing: {exc}") from exc


class DealerPacedShoe(SimulatedShoe):
    """The simulated shoe, dealing each card when the dealer draws it (`grant()`).

    Between cards it keeps writing its heartbeat, as a real reader does while the shoe waits.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._grants = threading.Semaphore(0)

    def grant(self) -> None:
        self._grants.release()

    def _write(self, item: Written) -> None:
        # SimulatedShoe.run() deals the next card when _wait() returns, even when it returned
        # because the shoe was stopped: nothing is written once stopped.
        if not self._stopping.is_set():
            super()._write(item)

    def _wait(self, seconds: float) -> None:  # the dealer's pace, not a timer
        del seconds
        while not self._stopping.is_set():
            self._pace(0.0)  # writes a heartbeat when one is due
            if self._grants.acquire(timeout=0.1):
                return


# ----- the decks and the reader, as the dealer handles them ------------------------------

READ_INTERVAL = 0.005  # seconds per card read for inspection or read out (a reader is quick)
HEARD_TIMEOUT = 20.0  # how long the table may take to hear a deck or a readout


class DemoCards:
    """The demo's decks (made once, faults included) and the simulated reader they pass through
    (the bot's :class:`~controller.service.bot.Cards`)."""

    def __init__(self, demo: Demo) -> None:
        self.demo = demo
        self.physical: tuple[PhysicalDeck, ...] = ()

    def decks(self) -> list[str]:
        if not self.physical:
            demo = self.demo
            assert demo.table is not None
            setup = demo.table.service.setup
            pontoon = "T" in setup.rules.excluded_ranks
            self.physical, injected = make_decks(
                setup.decks, demo.rng, pontoon=pontoon, faults=demo.plan.decks
            )
            for fault in injected:
                log.warning("demo deck fault put in", fault=fault.describe())
        return [d.serial for d in self.physical]

    def read_deck(self, serial: str) -> None:
        demo = self.demo
        deck = next(d for d in self.physical if d.serial == serial)
        reader = SimulatedShoe(
            demo.master, shuffle_decks((deck,), demo.rng, cut_card=None), demo.rng
        )
        reader.inspect(deck, READ_INTERVAL)
        demo.wait_for(
            lambda t: t.inspection is not None and len(t.inspection.cards) >= len(deck.cards),
            f"the inspection of deck {serial}",
        )

    def read_out(self) -> None:
        demo = self.demo
        shoe = demo.stop_shoe()
        if shoe is None:
            return
        left = len(shoe.rest())
        with demo.service_lock():
            before = demo.engine().shoe
            drawn = before.drawn if before is not None else 0
        shoe.resume()
        shoe.read_out(READ_INTERVAL)
        demo.wait_for(lambda t: t.shoe is not None and t.shoe.drawn >= drawn + left, "the readout")

    def load(self) -> None:
        self.demo.load_shoe(self.physical)


# ----- the demo ---------------------------------------------------------------------------


DEMO_DIR = Path("floorctl-demo")  # every file the demo writes is in here (git-ignored)


@dataclass
class DemoOptions:
    rounds: int = 0  # 0: until interrupted
    db: Path = DEMO_DIR / "DEMO.db"  # its spool, key pair and stills are written beside it
    host: str = "127.0.0.1"
    port: int = 8080
    pace: float = 0.6
    settle_pause: float = 2.5
    seed: int | None = None
    faults: str = ""
    game: str = "pontoon-nz-2000"
    decks: int | None = None  # None: the rule set's
    pin: str | None = None
    camera: bool = True
    quiet: bool = False
    table_id: str = "DEMO"
    read_pause: float = 2.0  # seconds the dealer reads a flag before tapping "Seen"
    tray: bool = True  # the pit's day at the tray: opener, fill, buy-ins, checks, closer, drop
    mispay: Decimal | None = None  # the dealer pays this much too much in round 2


class Demo:
    """Builds the stand-in table; `run()` serves it until the rounds are done."""

    def __init__(self, options: DemoOptions, out: TextIO = sys.stdout) -> None:
        self.options = options
        self.out = out
        self.rng = random.Random(options.seed)
        self.pin = options.pin or f"{secrets.randbelow(10**6):06d}"
        self.dealer_pin = f"{secrets.randbelow(10**6):06d}"  # the dealer's, to sign in
        self.pty = PtyPair()
        self.master = PtyMaster(self.pty)
        self.plan = FaultPlan()  # the faults asked for (read by open())
        self.tampers: dict[int, str] = {}  # round -> "past-post" or "pinch" (read by open())
        self.tampered: list[tuple[int, int]] = []  # (round, box) tampered with, as done
        self.cards = DemoCards(self)
        self._shoe: DealerPacedShoe | None = None
        self._shoe_thread: threading.Thread | None = None
        self._true_cards: dict[bytes, str] = {}
        self.table: Table | None = None
        self.bot: DealerBot | None = None
        self.camera: Any = None
        self.url = ""

    # ----- parts ------------------------------------------------------------------------

    def open(self) -> Table:
        opts = self.options
        try:
            shoe_faults, self.tampers = split_camera_faults(opts.faults)
            self.plan = parse_faults(shoe_faults) if shoe_faults else FaultPlan()
        except ValueError as exc:
            raise StartError(f"--faults: {exc}") from None
        if self.tampers and not opts.camera:
            raise StartError("--faults: past-post and pinch need the camera stand-in")
        line = dict(DEMO_TABLE, game=opts.game, table_id=opts.table_id)
        if opts.decks is not None:
            line["decks"] = opts.decks
        setup = parse_setup(line)
        try:  # the deck faults asked for must fit these decks (a dry run of their making)
            pontoon = "T" in setup.rules.excluded_ranks
            make_decks(setup.decks, random.Random(0), pontoon=pontoon, faults=self.plan.decks)
        except ValueError as exc:
            raise StartError(f"--faults: {exc}") from None
        opts.db.parent.mkdir(parents=True, exist_ok=True)
        if opts.db.exists():  # the last demo's store (and any spool) is kept aside, once
            previous = opts.db.with_name(opts.db.name + ".previous")
            for suffix in ("", "-wal", "-shm"):
                src = Path(str(opts.db) + suffix)
                if src.exists():
                    src.replace(Path(str(previous) + suffix))
            for spool in opts.db.parent.glob(opts.db.name + ".*.spool"):
                spool.replace(spool.with_name(spool.name + ".previous"))
        # The demo's one supervisor; the PIN is printed at start (there is no default PIN).
        supervisors = {"demo": hash_pin(self.pin, iterations=50_000)}
        # A dealer signs in to deal, as at a live table: a flag then holds the dealer's taps
        # until the dealer has seen it (the bot reads it and taps "Seen").
        dealers = {"dana": hash_pin(self.dealer_pin, iterations=50_000)}
        # Every round kept: the demo counts and totals them all (its shifts are short).
        table = open_table(
            line,
            f"sqlite:///{opts.db.resolve()}",
            supervisors,
            keep_rounds=None,
            signing_key=str(self.key_file()),
            dealers=dealers,
        )
        self.table = table
        service = table.service
        feed = ShoeFeed(service, self.pty.path, silence_timeout=3.0, reconnect_max=1.0)
        feed.start()
        # Stopped in reverse: the bot, the camera, the shoe, the reader, then the pty.
        table.stoppers.append(self.pty.close)
        table.stoppers.append(feed.stop)
        table.stoppers.append(self._stop_shoe)
        place = self._manual_wagers
        if opts.camera:
            camera = _synthetic_camera(service, self.rng)
            if camera is not None:
                self.camera = camera
                table.stoppers.append(camera.stop)
                place = camera.place
        if self.camera is None:
            service.set_device("camera", "off", "demo without the camera: wagers entered by hand")
        tray = None
        if opts.tray:
            from controller.service.trayday import TrayDay

            tray = TrayDay(
                service,
                random.Random(opts.seed),
                dealer="dana",
                supervisor="demo",
                mispay=opts.mispay,
            )
        self.bot = DealerBot(
            service,
            draw=self._draw,
            place_wagers=place,
            new_shoe=lambda: self.cards.load(),
            rng=self.rng,
            pace=opts.pace,
            settle_pause=opts.settle_pause,
            max_rounds=opts.rounds,
            cards=self.cards,
            supervisor="demo",
            read_pause=opts.read_pause,
            after_call=self._after_call,
            tray=tray,
        )
        table.stoppers.append(self.bot.stop)
        return table

    def _after_call(self, number: int) -> None:
        """A camera fault asked for this round: once "no more bets" is called, a player adds
        a chip to their wager (past-post) or takes one off it (pinch)."""
        kind = self.tampers.get(number)
        if kind is None or self.camera is None or self.bot is None:
            return
        placed = self.camera.source.placed
        if not placed:
            return
        step = Decimal(min(c.value for c in self.camera.source.cfg.chips))
        if kind == "past-post":
            box = min(placed)
            amount = placed[box] + step
        else:  # the largest wager, one chip less
            box = max(placed, key=lambda b: (placed[b], -b))
            amount = placed[box] - step
        time.sleep(0.5)  # a moment after the call, as a past-poster waits for the dealer
        self.camera.tamper(box, amount)
        self.tampered.append((number, box))
        log.warning("demo camera fault put in", fault=kind, round=number, box=box)

    def _manual_wagers(self, wagers: Wagers) -> None:
        assert self.table is not None
        players = ("ann", "bob", "cat", "dan", "eve", "fay", "gus")
        for box, amount in sorted(wagers.items()):
            self.table.service.submit(
                {
                    "type": "bet",
                    "box": box,
                    "player": players[(box - 1) % len(players)],
                    "amount": str(amount),
                },
                source="manual",
                actor="demo",
            )

    def key_dir(self) -> Path:
        """Where the demo keeps its table's signing key: beside its store."""
        return self.options.db.with_name(self.options.db.name + ".keys")

    def key_file(self) -> Path:
        """The demo table's Ed25519 key, made on the first run (``floorctl keygen``'s way) and
        kept for the next: the demo signs its log as a live table does."""
        from controller.store.keys import PRIVATE_NAME, generate_pair

        private = self.key_dir() / PRIVATE_NAME
        if not private.exists():
            generate_pair(self.key_dir())
        return private

    def load_shoe(self, decks: tuple[PhysicalDeck, ...]) -> None:
        """Shuffle the decks into a new shoe, record the load, and start dealing from it."""
        assert self.table is not None
        self._stop_shoe()
        if not decks:
            self.cards.decks()
            decks = self.cards.physical
        load = shuffle_decks(decks, self.rng)
        self.table.service.submit(load.shuffle_event(), source="shoe-loader")
        shoe = DealerPacedShoe(
            self.master, load, self.rng, faults=self.plan, on_write=self._written
        )
        self._shoe = shoe
        self._shoe_thread = threading.Thread(target=shoe.run, name="simulated-shoe", daemon=True)
        self._shoe_thread.start()

    def stop_shoe(self) -> DealerPacedShoe | None:
        """Stop dealing; the shoe stopped (its cards left unread), if one was dealing."""
        shoe = self._shoe
        self._stop_shoe()
        return shoe

    def service_lock(self) -> contextlib.AbstractContextManager[bool]:
        assert self.table is not None
        return self.table.service._lock

    def engine(self) -> EngineTable:
        assert self.table is not None
        return self.table.service.table

    def wait_for(self, done: Callable[[EngineTable], bool], what: str) -> None:
        """Wait until the table's engine state says ``done`` (the reader's cards were heard)."""
        deadline = time.monotonic() + HEARD_TIMEOUT
        while time.monotonic() < deadline:
            with self.service_lock():
                if done(self.engine()):
                    return
            time.sleep(0.01)
        log.warning("the table did not hear the cards in time", what=what)

    def _written(self, item: Written) -> None:
        if item.kind in ("misread", "checksum") and item.card is not None:
            self._true_cards[item.data] = item.card.card

    def _stop_shoe(self) -> None:
        if self._shoe is not None:
            self._shoe.stop()
        if self._shoe_thread is not None:
            self._shoe_thread.join(timeout=5)
        self._shoe = None
        self._shoe_thread = None

    def _draw(self) -> None:
        """The dealer draws a card: the shoe deals it; wait until the table has heard it."""
        assert self.table is not None
        service = self.table.service
        before = service.seq
        if self._shoe is None:
            return
        self._shoe.grant()
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            heard = [r for r in list(service.recent) if r["seq"] > before]
            if any(r["type"] in ("card", "misread") for r in heard):
                self._correct_misreads()
                return
            time.sleep(0.01)
        log.warning("the shoe's card did not arrive within 5 s")

    def _correct_misreads(self) -> None:
        """Faults on: the demo's supervisor keys in the card the reader could not decode."""
        assert self.table is not None
        service = self.table.service
        for seq, info in sorted(service.misreads.items()):
            true = self._card_for_raw(info.get("raw", ""))
            if true is None:
                continue
            service.submit(
                {"type": "card", "card": true, "correction_of": seq},
                source="manual",
                actor="demo",
            )

    def _card_for_raw(self, raw: str) -> str | None:
        for data, card in list(self._true_cards.items()):
            text = data.rstrip(b"\r\n").decode("ascii", "replace")
            if text == raw:
                del self._true_cards[data]
                return card
        return None

    # ----- running ----------------------------------------------------------------------

    def progress(self) -> str:
        assert self.table is not None
        service = self.table.service
        with service._lock:  # the replay document: every round this demo's table played
            doc = service.table.result()
        rounds = [r for r in doc["rounds"] if r["status"] != "incomplete"]
        flags = sum(len(r["flags"]) for r in rounds)
        house = -sum((Decimal(s["net"]) for r in rounds for s in r["settlements"]), Decimal(0))
        target = f"/{self.options.rounds}" if self.options.rounds else ""
        sign = "+" if house >= 0 else "-"
        return (
            f"round {len(rounds)}{target} · {service.seq} events · {flags} flags · "
            f"house {sign}${money(abs(house))}"
        )

    async def run(self) -> int:
        table = self.table or self.open()
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        assert self.bot is not None

        def ready(url: str) -> None:
            self.url = url
            if not self.options.quiet:
                print(f"dealer's screen: {url}", file=self.out)
                print(f"supervisor: demo, PIN {self.pin}", file=self.out)
                print(f"dealer: dana, PIN {self.dealer_pin}", file=self.out)
                print(f"audit store: {self.options.db}", file=self.out)
                from controller.store.keys import PUBLIC_NAME

                pub = self.key_dir() / PUBLIC_NAME
                print(
                    f"signed with {self.key_file()}; check it with: floorctl verify "
                    f"--db sqlite:///{self.options.db.resolve()} --key {pub}",
                    file=self.out,
                    flush=True,
                )
            assert self.bot is not None
            self.bot.start()
            threading.Thread(target=self._watch, args=(loop, finished), daemon=True).start()

        return await serve(
            table, self.options.host, self.options.port, on_ready=ready, until=finished
        )

    def _watch(self, loop: asyncio.AbstractEventLoop, finished: asyncio.Future[None]) -> None:
        assert self.table is not None
        last = ""
        while not finished.done():
            line = self.progress()
            if line != last and not self.options.quiet:
                end = "\n" if not self.out.isatty() else ""
                print(
                    ("\r" if self.out.isatty() else "") + line, end=end, file=self.out, flush=True
                )
                last = line
            played = self.table.service.view().rounds_played
            tray = self.bot.tray if self.bot is not None else None
            if (
                self.options.rounds
                and played >= self.options.rounds
                and (tray is None or tray.done)
            ):
                loop.call_soon_threadsafe(_finish, finished)
                return
            time.sleep(0.2)

    def close(self) -> None:
        if self.table is not None:
            self.table.close()
            self.table = None


CAMERA_FAULTS = ("past-post", "pinch")


def split_camera_faults(spec: str) -> tuple[str, dict[int, str]]:
    """The demo's camera faults (``past-post@ROUND``, ``pinch@ROUND``: a chip added to, or
    taken off, a wager after that round's "no more bets") apart from the shoe's and the
    decks' (:func:`drivers.shoe.simulator.parse_faults`)."""
    rest: list[str] = []
    tampers: dict[int, str] = {}
    for item in (part.strip() for part in spec.split(",")):
        kind, _, at = item.partition("@")
        if kind not in CAMERA_FAULTS:
            if item:
                rest.append(item)
            continue
        if not at.isdigit() or int(at) < 1:
            raise ValueError(f"fault {item!r}: a camera fault is {kind}@ROUND (rounds from 1)")
        tampers[int(at)] = kind
    return ",".join(rest), tampers


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _synthetic_camera(service: TableService, rng: random.Random) -> Any:
    """The camera on synthetic frames, when the camera driver provides what it needs."""
    try:
        from controller.service.camera import SyntheticCamera
    except ImportError as exc:
        log.warning("camera stand-in unavailable: wagers entered by hand", error=str(exc))
        return None
    try:
        return SyntheticCamera.start(service, seed=rng.randrange(2**31))
    except Exception as exc:
        log.warning("camera stand-in failed to start: wagers entered by hand", error=str(exc))
        return None
