"""The live table: every input becomes an event, recorded, then applied, then shown.

One :class:`TableService` per process. Inputs arrive from the shoe reader's thread, the chip
camera's thread and the dealer's screen (web requests); each goes through :meth:`submit`:

1. checked by the engine's parser (a malformed input is refused, never recorded);
2. stamped with the time, its source and (for supervisor actions) the actor;
3. recorded by the audit store: applied to the round engine and made durable, or refused;
4. announced to every listener (the dealer's screens) as a fresh snapshot.

**Store down.** An input is acknowledged only once it is durable. When the audit store can
take nothing (its database and its spool both refuse), the table is *halted*: every tap and
supervisor action is refused with the reason, and an event from the shoe — a card that has
physically left it — is *held*: kept in memory, in order, not applied, and shown on the
screen as not recorded. Once the store is back the held events are recorded in order and play
resumes by itself. Held events live in memory only: if the process dies meanwhile they are
lost, which is why the screen lists them for the dealer to note.

**The table's state is the engine's.** The dealer on duty, the devices in manual mode, the
flags waiting to be seen and how each was resolved, the misreads awaiting correction, the
camera's latest reading of each box and the rescues taken all live in the engine
(:mod:`controller.engine.desk`), are read through its frozen view (:meth:`Table.view`) and
restored with it from a checkpoint at a restart. The service keeps only what is not the
table's: the devices' health (and the boxes the working camera cannot read), the audit store's
health and the shoe events held while it is down, the dealers' and supervisors' sign-in, the
screens listening, and the screen's list of recent events. With dealer sign-in configured, the
dealer's taps wait while a flag waits (:meth:`TableService.blocking`).

Nothing here knows the rules: what is due, what is allowed (:meth:`Table.check`) and what is
flagged all come from ``controller.engine``; the service adds only what its devices and people
decide (a wager comes from the camera while it reads the box; a device that works is not put in
manual mode; the dealer signs in before the table opens).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol

import structlog

from controller import logs
from controller.cards import best_total
from controller.engine import Applied, DayState, Phase, Table, TableView, money
from controller.engine.decisions import Decision
from controller.events import Event, ScenarioError, TableSetup, parse_event
from controller.service import flags as banners
from controller.service.view import (
    box_views,
    decision_view,
    describe_event,
    flag_view,
    supervisor_actions,
    table_actions,
)
from controller.service.watch import WatchDesk
from controller.store.db import StoreDown, StoreError

log = structlog.get_logger("floorctl.service")

Listener = Callable[[], None]

# The recent events the screen lists (re-read from the store at a restart: a log, not state).
RECENT = 40
# Shoe events kept in memory while the store is down (more than a whole shoe).
MAX_HELD = 1000
# Sources whose events happened whether or not the store takes them (kept while it is down).
KEPT_SOURCES = frozenset({"shoe"})
# The devices a supervisor may put in manual mode, and the states in which each is back.
MANUAL_DEVICES = ("shoe", "camera")
DEVICE_UP = frozenset({"ok", "connected"})
# How long "no more bets" waits for the cameras to report the boxes as they stand: at least
# CAMERA_WAIT seconds; longer, up to CAMERA_WAIT_MAX, for a camera still working through its
# first CAMERA_FRAMES frames after the call (a slow or loaded camera is not cut short).
CAMERA_WAIT = 10.0
CAMERA_FRAMES = 24
CAMERA_WAIT_MAX = 40.0


class Camera(Protocol):
    """A camera the service hears wagers from (``controller.service.camera.CameraFeed``)."""

    name: str

    def reported_since(self, since: float) -> bool:
        """Whether it has reported every box as it stands in a frame read after ``since``."""
        ...

    def frames_since(self, since: float) -> int:
        """How many frames it has read (and handed on) since ``since``."""
        ...


class Recorded(Protocol):
    @property
    def seq(self) -> int: ...

    @property
    def applied(self) -> Applied: ...


class EventLog(Protocol):
    """The audit store's recorder: appends each event durably, then applies it to its table.

    (``controller.store.recorder.Recorder`` is the one the service uses.)
    """

    @property
    def table(self) -> Table: ...

    @property
    def seq(self) -> int: ...

    def record(self, event: Mapping[str, Any]) -> Recorded:
        """Record one event durably and apply it; raises ScenarioError if malformed and
        ``StoreDown`` if it could not be made durable (then it is not applied)."""
        ...

    def history(self, after: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        """The recorded events after sequence ``after``, as (sequence, event)."""
        ...

    def latest(
        self, kinds: tuple[str, ...], upto: int, limit: int = 20
    ) -> list[tuple[int, dict[str, Any]]]:
        """The newest recorded events of these types up to ``upto``, oldest first."""
        ...

    def close(self) -> None: ...


@dataclass
class DeviceState:
    state: str  # "ok", "connected", "connecting", "fault", "off"
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"state": self.state, "reason": self.reason}


@dataclass(frozen=True)
class Submitted:
    """The answer to one input: its sequence number, the flags it raised, the round it ended."""

    seq: int | None
    flags: list[dict[str, Any]] = field(default_factory=list)
    settled: dict[str, Any] | None = None
    error: str | None = None
    store_down: bool = False  # refused because the audit store can take nothing now
    held: bool = False  # not recorded yet, kept in memory until the store is back

    @property
    def ok(self) -> bool:
        return self.error is None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class TableService:
    """The table's state and its single writer (thread-safe)."""

    def __init__(
        self,
        event_log: EventLog,
        *,
        supervisors: tuple[str, ...] = (),
        dealers: tuple[str, ...] = (),
        clock: Callable[[], str] = now_iso,
    ) -> None:
        self.log = event_log
        self.setup: TableSetup = event_log.table.setup
        self.supervisors = supervisors
        self.dealers = dealers
        self.sign_in_required = bool(dealers)
        self.clock = clock
        self._lock = threading.RLock()  # inputs and snapshots: one writer at a time
        # Device states and listeners have their own lock, never held while taking the one
        # above: the audit store reports its health from its retry thread while holding its
        # own lock, which a submit (holding the lock above) may be waiting for.
        self._side_lock = threading.Lock()
        self._listeners: list[Listener] = []
        self.devices: dict[str, DeviceState] = {}
        self.unsure: dict[int, str] = {}  # box -> why the working camera cannot read it
        self.halt: dict[str, Any] | None = None  # the store is down: why, since when
        self.held: list[dict[str, Any]] = []  # shoe events kept while the store is down
        self.held_lost = 0  # shoe events beyond MAX_HELD (logged, not kept)
        self._draining = False
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT)
        self._ending: set[str] = set()  # devices whose manual mode is being ended
        self.cameras: list[Camera] = []  # the cameras "no more bets" waits for
        # The overhead camera's changes after "no more bets", judged against the round (5.5).
        self.watch = WatchDesk(self)
        self.camera_wait = CAMERA_WAIT
        self.camera_frames = CAMERA_FRAMES
        self.camera_wait_max = CAMERA_WAIT_MAX
        # "No more bets" called, waiting for the cameras: since when, and which (the screen).
        self.closing: dict[str, Any] | None = None
        self.seq = event_log.seq
        self._view: TableView = event_log.table.view()
        # The screen's list of recent events: the last ones stored (the table itself is the
        # checkpoint's, restored by the recorder; nothing is rebuilt here).
        for seq, record in event_log.history(after=max(0, self.seq - RECENT)):
            self.recent.append(_recent(seq, record))
        logs.bind_table(table=self.setup.table_id)
        self._bind_ids()

    @property
    def table(self) -> Table:
        """The round engine's table (the recorder's: it may rebuild it after a store fault)."""
        return self.log.table

    def view(self) -> TableView:
        """The table as of the last event recorded (frozen: safe to read from any thread)."""
        return self._view

    @property
    def dealer(self) -> str | None:
        """The dealer on duty (the last ``dealer`` event)."""
        return self._view.dealer

    @property
    def last_round(self) -> dict[str, Any] | None:
        """The last round ended, as the replay document gives it (None before the first)."""
        last = self._view.last_round
        return last.to_dict() if last is not None else None

    @property
    def manual(self) -> dict[str, dict[str, Any]]:
        """The devices in manual mode, as the screen lists them."""
        return {
            str(m.device): {
                "device": str(m.device),
                "since": m.since,
                "by": self._shown(m.by),
                "reason": m.reason,
            }
            for m in self._view.manual
        }

    @property
    def pending(self) -> dict[tuple[int, str], dict[str, Any]]:
        """The flags waiting to be seen, oldest first, as the screen shows them."""
        words = self.setup.rules.words
        out: dict[tuple[int, str], dict[str, Any]] = {}
        for p in self._view.pending:
            view = flag_view(
                {"rule": p.rule, "box": p.box, "message": p.messages[0]},
                p.round,
                words(p.rule),
                p.seq,
            )
            view["event_type"] = p.kind
            _misread_words(view)
            view["messages"] = [view["message"], *p.messages[1:]]
            out[(p.seq, p.rule)] = view
        return out

    @property
    def misreads(self) -> dict[int, dict[str, Any]]:
        """The misreads awaiting a supervisor's correction, by their event."""
        return {
            m.seq: {"seq": m.seq, "raw": m.raw, "note": m.note or None, "round": m.round}
            for m in self._view.misreads
        }

    def _resolution(self, seq: int, rule: str) -> str:
        r = self._view.resolution(seq, rule)
        if r is None:
            return ""
        if r.how == "corrected":
            return f"corrected: {r.card} entered by {self._shown(r.by)}"
        return f"seen by {self._shown(r.by)}"

    def _shown(self, actor: Any) -> str:
        """An actor as the screen names them: a dealer by id, a supervisor by role (the state is
        readable without a PIN, and supervisor ids are half of what a PIN guess needs)."""
        if not actor:
            return "?"
        return "a supervisor" if str(actor) in self.supervisors else str(actor)

    # ----- inputs -----------------------------------------------------------------------

    def submit(
        self,
        obj: Mapping[str, Any],
        *,
        source: str,
        actor: str | None = None,
        expect_seq: int | None = None,
    ) -> Submitted:
        """Check, record, apply and announce one input.

        `expect_seq`: refuse the input unless the table is still at that sequence number (a
        tap on a screen that the table has since moved past).
        """
        body = {k: v for k, v in obj.items() if k not in ("time", "source", "actor")}
        body["time"] = self.clock()
        body["source"] = source
        if actor is not None:
            body["actor"] = actor
        try:
            event = parse_event(body)
        except ScenarioError as exc:
            log.warning("input refused", source=source, actor=actor, error=str(exc))
            return Submitted(seq=None, error=str(exc))
        with self._lock:
            if expect_seq is not None and expect_seq != self.seq:
                return Submitted(
                    seq=None, error="the table moved on since this screen was drawn: look again"
                )
            if self.held and not self.halted():  # what the shoe read meanwhile goes first
                self._drain()
            if self.halted() or self.held:  # refused or held: the recorder is not even asked
                result = self._refuse_or_hold(body, source, self.halt_reason())
            else:
                result = self._record(body, event, source)
        if result.ok:
            self._log_event(result, event.type, source, actor)
        self._notify()
        return result

    def _record(self, body: dict[str, Any], event: Event, source: str) -> Submitted:
        """Record one checked input (the service's lock held)."""
        try:
            recorded = self.log.record(body)
        except ScenarioError as exc:
            return Submitted(seq=None, error=str(exc))
        except StoreDown as exc:
            return self._refuse_or_hold(body, source, str(exc))
        except Exception as exc:  # the store refused for good: nothing was applied
            reason = f"audit store: {exc}"
            log.error("audit store refused the event", error=str(exc), kind=body["type"])
            self.set_device("store", "fault", reason)
            return Submitted(seq=None, error=f"not recorded ({reason})")
        return self._note(recorded.seq, event, body, recorded.applied)

    def _refuse_or_hold(self, body: dict[str, Any], source: str, reason: str) -> Submitted:
        """The store took nothing: a shoe event is held (it happened), anything else refused."""
        if source not in KEPT_SOURCES:
            log.error("input refused: store down", source=source, kind=body["type"], reason=reason)
            return Submitted(
                seq=None,
                error=f"STORE DOWN: not recorded, play is halted ({reason})",
                store_down=True,
            )
        if len(self.held) >= MAX_HELD:
            self.held_lost += 1
            log.critical("store down: held shoe events full, this one is lost", shoe_event=body)
        else:
            self.held.append(body)
            log.error(
                "store down: shoe event held in memory, not recorded",
                kind=body["type"],
                card=body.get("card"),
                held=len(self.held),
            )
        return Submitted(
            seq=None,
            error=f"STORE DOWN: held in memory, not recorded yet ({reason})",
            store_down=True,
            held=True,
        )

    def _drain(self) -> None:
        """Record the held shoe events, in order, while the store takes them (lock held)."""
        if self._draining:
            return
        self._draining = True
        try:
            while self.held:
                body = self.held[0]
                try:
                    recorded = self.log.record(body)
                except StoreDown:
                    return
                except (ScenarioError, StoreError) as exc:  # refused for good
                    log.critical(
                        "held shoe event refused for good", shoe_event=body, error=str(exc)
                    )
                    self.held.pop(0)
                    continue
                self.held.pop(0)
                event = parse_event(body)
                result = self._note(recorded.seq, event, body, recorded.applied)
                self._log_event(result, event.type, "shoe", None, held=True)
        finally:
            self._draining = False

    def _log_event(
        self, result: Submitted, kind: str, source: str, actor: str | None, *, held: bool = False
    ) -> None:
        log.info(
            "event",
            seq=result.seq,
            type=kind,
            source=source,
            **({"actor": actor} if actor else {}),
            **({"held": True} if held else {}),
            flags=[f["rule"] for f in result.flags],
        )

    def _note(
        self, seq: int, event: Event, record: Mapping[str, Any], applied: Applied
    ) -> Submitted:
        self.seq = seq
        self._view = self.table.view()
        self.watch.noted(self._view)
        rules = self.setup.rules
        flags = []
        for f in applied.flags:
            view = flag_view(f.to_dict(), f.round, rules.words(f.rule), seq)
            view["event_type"] = f.kind
            _misread_words(view)
            flags.append(view)
        self.recent.append(_recent(seq, record))
        settled = applied.settled.to_dict() if applied.settled is not None else None
        self._bind_ids()
        return Submitted(seq=seq, flags=flags, settled=settled)

    def _bind_ids(self) -> None:
        view = self._view
        shoe = view.shoe.load if view.shoe is not None else None
        logs.bind_table(shoe=shoe, round=view.round.number if view.round is not None else None)

    # ----- devices ----------------------------------------------------------------------

    def store_status(self, status: Any) -> None:
        """The recorder's status callback: the audit store's health on the screen; when the
        store is back, the held shoe events are recorded (in a thread of their own, as this
        may be called while the recorder is busy)."""
        info = status.to_dict()
        state = str(info.get("state", "down"))
        reason = str(info.get("reason") or "")
        if state == "down":
            with self._side_lock:
                first = self.halt is None
                self.halt = {"reason": reason, "since": info.get("since")}
            self.set_device("store", "down", reason, notify=False)
            if first:
                log.critical(
                    "STORE DOWN: play halted; taps refused, shoe events held", reason=reason
                )
        else:
            with self._side_lock:
                was = self.halt
                self.halt = None
            if state == "spooling":
                spooled = info.get("spooled", 0)
                reason = f"database unavailable ({reason}): {spooled} events safe in the spool"
                self.set_device("store", "fault", reason, notify=False)
            else:
                self.set_device("store", "ok", notify=False)
            if was is not None:
                log.warning("audit store back: play resumes", held=len(self.held))
            if self.held or self.log.seq != self.seq:
                threading.Thread(target=self._resume, name="store-resume", daemon=True).start()
        self._notify()

    def _resume(self) -> None:
        with self._lock:
            if self.log.seq != self.seq:
                # Events the recorder found stored after all (a commit whose answer was lost).
                for seq, record in self.log.history(after=self.seq):
                    self._note(seq, parse_event(record), record, Applied())
                self.seq = self.log.seq
                self._view = self.table.view()
            self._drain()
        self._notify()

    def halted(self) -> bool:
        with self._side_lock:
            return self.halt is not None

    def halt_reason(self) -> str:
        """Why inputs are refused or held now (the store's reason, or the held events)."""
        with self._side_lock:
            halt = self.halt
        if halt is not None:
            return str(halt["reason"])
        return f"{len(self.held)} shoe events waiting to be recorded"

    def set_device(self, name: str, state: str, reason: str = "", *, notify: bool = True) -> None:
        with self._side_lock:
            before = self.devices.get(name)
            now = DeviceState(state, reason)
            if before == now:
                return
            self.devices[name] = now
        if state == "fault":
            log.error("device fault", device=name, reason=reason)
        else:
            log.info("device state", device=name, state=state, reason=reason or None)
        if state in DEVICE_UP and name in self.manual and name not in self._ending:
            self._ending.add(name)  # recorded from a thread: this may run under the lock
            threading.Thread(target=self._end_manual, args=(name,), daemon=True).start()
        if notify:
            self._notify()

    def _end_manual(self, device: str) -> None:
        """The device is back: its manual mode ends (recorded, naming why)."""
        try:
            if device in self.manual and self.device(device).state in DEVICE_UP:
                result = self.submit(
                    {"type": "manual_mode", "device": device, "on": False, "reason": "device back"},
                    source="service",
                    actor=self.dealer,
                )
                if not result.ok:
                    log.error("manual mode not ended", device=device, error=result.error)
        finally:
            self._ending.discard(device)

    def refusal(self, event: Mapping[str, Any], *, supervisor: bool = False) -> str:
        """Why this input may not be recorded now ("" when it may): what the devices and the
        sign-in decide, then the engine's answer (:meth:`Table.check`). A supervisor's wager is
        not the camera's to refuse (the dealer's is, while the camera reads the box)."""
        kind = str(event.get("type"))
        if kind == "open_table" and self.sign_in_required and self.dealer is None:
            return "the dealer signs in before the table opens"
        if kind == "bet" and not supervisor:
            why = self.bet_refusal(int(event["box"]))
            if why:
                return why
        if kind == "manual_mode" and event.get("on"):
            device = str(event.get("device"))
            if device not in self.manual and self.device(device).state in DEVICE_UP:
                return f"the {device} works: nothing to enter by hand"
        try:
            parsed = parse_event(event)
        except ScenarioError:
            return ""  # malformed, not refused: submit() answers that, naming the field
        with self._lock:
            refused = self.table.check(parsed)
        return "" if refused is None else refused.reason

    def opening_by(self, supervisor: str | None = None) -> list[str]:
        """Who opens the table or inspects a deck: the dealer on duty and the supervisor."""
        view = self._view
        out = list(view.day.by) if view.day.state is not DayState.CLOSED else []
        for who in (view.dealer, supervisor):
            if who and who not in out:
                out.append(who)
        return out[:8]

    def open_now(self) -> tuple[Decision, ...]:
        """What may be decided now, as the engine answers it (the screen's buttons)."""
        return self._view.open

    def supervisor_actions(self) -> list[dict[str, Any]]:
        """The supervisor's actions open now (void, reshuffle the discards)."""
        view = self._view
        return supervisor_actions(view.open, view.round)

    def blocking(self) -> dict[str, Any] | None:
        """The oldest flag not yet seen, when it holds the dealer's taps (sign-in configured)."""
        if not self.sign_in_required or not self._view.pending:
            return None
        return dict(next(iter(self.pending.values())))

    def camera_seen(self, event: Mapping[str, Any]) -> list[Submitted]:
        """The chip camera's stable wager for a box changed (a `wager_seen` event).

        It is always recorded (the engine checks it against the staked wagers and flags a
        change after betting closed, 5.5). While bets are open it is also the box's wager: a
        `bet` for the box's seated player, marked `"source": "camera"`.
        """
        body = {k: v for k, v in event.items() if k not in ("source", "time")}
        out: list[Submitted] = []
        with self._lock:
            box, amount = body.get("box"), body.get("amount")
            if isinstance(box, int) and amount is not None:
                # The bet first: it opens the round, which then hears what the camera saw.
                bet = self._camera_bet(box, Decimal(str(amount)))
                if bet is not None:
                    out.append(self.submit(bet, source="camera"))
            out.append(self.submit(body, source="camera"))
        return out

    def camera_unsure(self, boxes: Mapping[int, str]) -> None:
        """The boxes the camera, while it works, has not read surely for a while (box -> the
        detector's reason): the dealer enters their wagers by hand (``bet_refusal``). Each
        change is logged; the bets entered say why."""
        now = dict(boxes)
        with self._side_lock:
            before, self.unsure = self.unsure, now
        if now == before:
            return
        for box in sorted(set(now) - set(before)):
            log.info("camera cannot read a box", box=box, reason=now[box])
        for box in sorted(set(before) - set(now)):
            log.info("camera reads the box again", box=box)
        self._notify()

    def bet_refusal(self, box: int) -> str:
        """Why the dealer may not key in a wager for ``box`` ("" when they may): wagers are
        the camera's, unless it is in manual mode or cannot read that box."""
        if "camera" in self.manual:
            return ""
        if self.device("camera").state not in DEVICE_UP:
            return "wagers come from the chip camera: a supervisor puts it in manual mode"
        if box in self.unsure:
            return ""
        return (
            f"wagers come from the chip camera, which reads box {box}: "
            "a supervisor puts it in manual mode to enter them by hand"
        )

    def manual_bet_note(self, box: int) -> str | None:
        """What a wager keyed in for ``box`` records of why (None in manual mode)."""
        if "camera" in self.manual:
            return None
        reason = self.unsure.get(box)
        return (
            None
            if reason is None
            else f"entered by hand: the camera cannot read box {box} ({reason})"
        )

    def key_in_bet(self, box: int, amount: Decimal, *, actor: str | None) -> Submitted | None:
        """A wager keyed in by hand for ``box`` (the dealer's chip pad), for the box's seated
        player, where ``bet_refusal`` allows it and bets are open: None where it does not."""
        with self._lock:
            if self.bet_refusal(box):
                return None
            bet = self._camera_bet(box, amount)  # the player the camera's bet would name
            if bet is None:
                return None
            note = self.manual_bet_note(box)
            if note:
                bet["note"] = note
            return self.submit(bet, source="manual", actor=actor)

    def seen(self) -> dict[int, dict[str, Any]]:
        """The camera's latest stable reading of each box, as the screen shows it."""
        return {
            s.box: {
                "amount": money(s.amount),
                "confidence": float(s.confidence) if s.confidence is not None else None,
            }
            for s in sorted(self._view.seen, key=lambda s: s.box)
        }

    def add_camera(self, camera: Camera) -> None:
        """A camera whose report of the boxes "no more bets" waits for."""
        with self._side_lock:
            self.cameras.append(camera)

    def await_cameras(self) -> list[str]:
        """Wait until every camera has reported the boxes as they stand in a frame read after
        this call: a wager placed just before "no more bets" is then the box's wager, not a
        change after it. The wait is bounded: ``camera_wait`` seconds, or longer (up to
        ``camera_wait_max``) for a camera that has not yet read ``camera_frames`` frames since
        the call. The screen shows the wait meanwhile. Returns the cameras that did not
        report in time."""
        limit = self.camera_wait
        since = time.monotonic()
        with self._side_lock:
            cameras = list(self.cameras)
        waiting = [c for c in cameras if not c.reported_since(since)]
        if not waiting:
            return []
        with self._side_lock:
            self.closing = {"since": self.clock(), "cameras": [c.name for c in waiting]}
        self._notify()
        try:
            while waiting:
                time.sleep(0.02)
                waiting = [c for c in waiting if not c.reported_since(since)]
                spent = time.monotonic() - since
                if spent >= self.camera_wait_max:
                    break
                if spent >= limit and all(
                    c.frames_since(since) >= self.camera_frames for c in waiting
                ):
                    break
        finally:
            with self._side_lock:
                self.closing = None
            self._notify()
        if waiting:
            log.warning(
                "no more bets: a camera did not report the boxes in time",
                cameras=[c.name for c in waiting],
                seconds=round(time.monotonic() - since, 1),
            )
        return [c.name for c in waiting]

    def close_betting(self) -> list[Submitted]:
        """Before "no more bets" is recorded: wait for the cameras to report the boxes as they
        stand (:meth:`await_cameras`), then take what they see as the boxes' wagers
        (:meth:`sync_camera_bets`)."""
        self.await_cameras()
        return self.sync_camera_bets()

    def sync_camera_bets(self) -> list[Submitted]:
        """At "no more bets", while the camera works: what it sees on each box becomes that
        box's wager where none is recorded, and is restated to the engine where the round
        has not heard it (chips left standing since before the round began). A box the camera
        cannot read now keeps the wager entered by hand: its last stable reading is not what
        stands there."""
        out: list[Submitted] = []
        with self._lock:
            if self.device("camera").state not in ("ok", "connected"):
                return out
            current = {s.box: s.amount for s in self._view.seen if s.box not in self.unsure}
            for box, amount in sorted(current.items()):
                bet = self._camera_bet(box, amount)
                if bet is not None:
                    out.append(self.submit(bet, source="camera"))
            rnd = self._view.round
            for box, amount in sorted(current.items()):
                view = rnd.box(box) if rnd is not None else None
                known = view.seen if view is not None else None
                if amount > 0 and known != amount:
                    restate = {"type": "wager_seen", "box": box, "amount": money(amount)}
                    out.append(self.submit(restate, source="camera"))
        return out

    def _camera_bet(self, box: int, amount: Decimal) -> dict[str, Any] | None:
        """The bet the camera's reading of ``box`` makes (for the box's controller, or its seat),
        while bets are open and it changes the box's wager; None otherwise."""
        view = self._view
        if view.phase not in (Phase.IDLE, Phase.BETTING):
            return None
        rnd = view.round
        found = rnd.box(box) if rnd is not None else None
        if found is not None and found.controller:
            player = found.controller
            if dict(found.bets).get(player, Decimal(0)) == amount:
                return None
            return {"type": "bet", "box": box, "player": player, "amount": money(amount)}
        if amount == 0:
            return None
        return {"type": "bet", "box": box, "player": seat_name(box), "amount": money(amount)}

    # ----- outputs ----------------------------------------------------------------------

    def due(self) -> dict[str, Any]:
        return dict(self._view.due)

    def snapshot(self) -> dict[str, Any]:
        """Everything the dealer's screen shows, as one JSON-able document."""
        with self._lock:
            view = self._view
            pending = self.pending
        due = dict(view.due)
        opened = view.open
        rnd = view.round
        last = self.last_round
        rules = self.setup.rules
        words = rules.words
        flags = []
        for f in view.flags_shown():
            shown = flag_view(f.to_dict(), f.round, words(f.rule), f.seq)
            shown["event_type"] = f.kind
            _misread_words(shown)
            flags.append(shown)
        between = rnd is None
        return {
            "seq": view.seq,
            "table": {
                "table_id": self.setup.table_id,
                "game": self.setup.game,
                "title": getattr(rules, "title", "") or self.setup.game,
                "boxes": self.setup.boxes,
                "min_bet": str(self.setup.min_bet),
                "max_bet": str(self.setup.max_bet),
                "ranks": "".join(r for r in "A23456789TJQK" if r not in rules.excluded_ranks),
                "natural_name": rules.natural_name,
            },
            "due": due,
            "dealer": _dealer_view(
                last.get("dealer") if between and last is not None else due.get("dealer")
            ),
            "dealt_by": (
                list(last.get("dealers") or [])
                if between and last is not None
                else ([view.dealer] if view.dealer else [])
            ),
            "boxes": box_views(
                self.setup.boxes,
                due,
                self.seen(),
                last if between else None,
                flags,
                rules=rules,
                rescues=view.rescues,
                unsure=self.unsure,
            ),
            "open": [decision_view(d) for d in opened],
            "table_actions": table_actions(opened, self.setup),
            "supervisor_actions": supervisor_actions(opened, rnd),
            "flags": [self._flag_state(f) for f in flags],
            "alerts": [
                banners.banner(f, f.get("event_type"), str(f.get("words", "")), opened)
                for f in pending.values()
            ],
            "blocked": self.sign_in_required and bool(pending),
            "on_duty": {"dealer": view.dealer, "sign_in": self.sign_in_required},
            "closing": self._closing_view(),
            "manual": self.manual,
            "last_round": last,
            "devices": self.device_states(),
            "store": self._store_view(),
            "misreads": sorted(self.misreads.values(), key=lambda m: m["seq"]),
            "misreads_dropped": view.misreads_dropped,
            "recent": [
                {**r, "actor": self._shown(r.get("actor"))} if r.get("actor") else r
                for r in self.recent
            ],
        }

    def _flag_state(self, view: Mapping[str, Any]) -> dict[str, Any]:
        key = (int(view.get("seq") or 0), str(view.get("rule")))
        out = banners.banner(view, view.get("event_type"), str(view.get("words", "")))
        out["state"] = "waiting" if self._view.waiting(*key) is not None else "done"
        out["resolution"] = self._resolution(*key)
        return out

    def _closing_view(self) -> dict[str, Any] | None:
        """ "No more bets" waiting for the cameras (None when it is not)."""
        with self._side_lock:
            return None if self.closing is None else dict(self.closing)

    def _store_view(self) -> dict[str, Any]:
        """What the screen's STORE DOWN panel shows (the service's lock held)."""
        with self._side_lock:
            halt = dict(self.halt) if self.halt is not None else None
        return {
            "halted": halt is not None or bool(self.held),
            "reason": (halt or {}).get("reason") or "",
            "since": (halt or {}).get("since"),
            "held": [
                {"type": b.get("type"), "text": describe_event(b), "time": b.get("time")}
                for b in self.held
            ],
            "held_lost": self.held_lost,
        }

    def device(self, name: str) -> DeviceState:
        with self._side_lock:
            return self.devices.get(name, DeviceState("off"))

    def device_states(self) -> dict[str, dict[str, str]]:
        with self._side_lock:
            return {k: v.to_dict() for k, v in sorted(self.devices.items())}

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        with self._side_lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._side_lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _notify(self) -> None:
        with self._side_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("screen listener failed")

    def close(self) -> None:
        self.log.close()


def _recent(seq: int, record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "seq": seq,
        "type": record.get("type"),
        "text": describe_event(record),
        "source": record.get("source"),
        "actor": record.get("actor"),
    }


MISREAD_TODO = ": enter or correct it by hand"


def _misread_words(view: dict[str, Any]) -> None:
    """A misread's flag says what happened; what to do (and whether it was done) is the
    banner's and the resolution's to say, so a corrected misread no longer asks for it."""
    if view.get("event_type") == "misread" and view.get("rule") == "shoe":
        view["message"] = str(view.get("message", "")).removesuffix(MISREAD_TODO)


def _dealer_view(hand: Mapping[str, Any] | None) -> dict[str, Any]:
    """The dealer's cards with the total said as the dealer says it: soft, bust."""
    cards = list((hand or {}).get("cards") or [])
    total, soft = best_total(cards) if cards else (0, False)
    return {"cards": cards, "total": total, "soft": soft and total < 21, "bust": total > 21}


def seat_name(box: int) -> str:
    """The name a box's seated player gets when the camera (not a person) made the wager."""
    return f"box{box}"
