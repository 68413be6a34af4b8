"""The indexer: the floor's read model kept up to date from the shipped events.

Each table's events are read in sequence order and applied to the engine through the store's
own :class:`~controller.store.fold.Fold` (the one way a table's state is rebuilt); what the
engine answers becomes the read model's rows: one ``floor_rounds`` row per round (its first
and last events, when it opened and ended, its shoe, dealers, hands, wagered, result, flags),
``floor_flags``, ``floor_shoes`` and the table's line on the floor (``floor_tables``).

An event belongs to a round as the store's timelines say: the round it was applied in;
between rounds, the round its flags name (a card after the dealer finished), else the next
round (the shuffle and the bets before it). A round is *in play* from the event that opened it
(its first bet) to the one that settled or voided it.

Just before each shuffle the engine's state is checkpointed (``Table.snapshot()``) with the
indexer's own: a round is rebuilt (:mod:`controller.floor.rebuild`) from the checkpoint before
it, and the indexer resumes from its newest checkpoint. Checkpoints are a cache, never the
record: ``floorctl floor index --rebuild`` drops the read model and makes it again from the
events.

Each batch of a table is one transaction that first locks the table's ``floor_tables`` row, so
two indexers (the service's and a command's) never index the same events twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Connection

from controller.engine import SnapshotError, Table
from controller.engine.results import RoundResult
from controller.events import TRAY_EVENTS, Shuffle
from controller.floor.schema import PARTITIONED, Floor, ensure_partitions, month_of
from controller.floor.settings import parse_recorded
from controller.store.canonical import ChainRecord
from controller.store.fold import Fold

KEEP_ROUNDS = 2  # rounds (and shoes) the engine keeps: a flag noticed after a round joins it,
# and the shoe a shuffle reconciles is still there when the next is loaded
RESUME_EVERY = 2000
# The events after which a shoe may have been ended or reconciled (its readout ends at the next
# shuffle, inspection or close of the table).
RECONCILING = frozenset(
    {"shoe_end", "shuffle", "inspect", "close_table", "reshuffle_discards"}
)  # events after the newest checkpoint before a resume checkpoint is kept


def fold_at(table_id: str, setup: Mapping[str, Any], snapshot: str | None, seq: int) -> Fold:
    """A fold of table ``table_id`` at event ``seq``: from a checkpoint, or from its table
    line (``seq`` 0, ``snapshot`` None). The engine keeps only its last round."""
    fold = Fold(table_id, setup)
    if snapshot is None:
        fold.table = Table(fold.setup, keep_rounds=KEEP_ROUNDS)
    else:
        data = json.loads(snapshot)
        if not isinstance(data, dict) or data.get("seq") != seq:
            shown = data.get("seq") if isinstance(data, dict) else None
            raise ValueError(f"the checkpoint filed at event {seq} is of event {shown}")
        fold.table = Table.restore(fold.setup, data, keep_rounds=KEEP_ROUNDS)
    fold.seq = seq
    return fold


def round_money(result: RoundResult) -> tuple[Decimal, Decimal, int, int]:
    """(wagered, what the house won, hands, boxes) of an ended round.

    Wagered: every stake of the round's settlements (wagers, doubles, insurance) except on
    hands voided (16.5: returned, never in play). The house's result: minus the players' net.
    """
    outcome = {(h["box"], h["hand"]): h.get("outcome") for h in result.hands}
    wagered = Decimal(0)
    net = Decimal(0)
    for s in result.settlements:
        net += s.returned - s.staked
        if outcome.get((s.box, s.hand)) != "void":
            wagered += s.staked
    boxes = len({h["box"] for h in result.hands})
    return wagered, -net, len(result.hands), boxes


@dataclass
class Writes:
    """The rows one batch of events gives, written together."""

    rounds: dict[int, dict[str, Any]] = field(default_factory=dict)
    flags: list[dict[str, Any]] = field(default_factory=list)
    acks: list[dict[str, Any]] = field(default_factory=list)
    shoes: dict[int, dict[str, Any]] = field(default_factory=dict)
    shoe_updates: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    tray: list[dict[str, Any]] = field(default_factory=list)

    def months(self) -> set[tuple[int, int]]:
        out = {month_of(r["started_at"]) for r in self.rounds.values()}
        out |= {month_of(f["at"]) for f in self.flags}
        return out


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _dt(text: Any) -> datetime | None:
    return None if text is None else datetime.fromisoformat(str(text))


class TableIndex:
    """One table's indexing state: the fold, and what the read model needs beside it."""

    def __init__(self, table_id: str, setup: Mapping[str, Any], fold: Fold) -> None:
        self.table_id = table_id
        self.setup = dict(setup)
        self.fold = fold
        self.last_closed_seq = 0
        self.current: dict[str, Any] | None = None  # the row of the round in play
        self.last_round: dict[str, Any] | None = None  # the row of the last round that ended
        self.dealer: str | None = None
        self.devices: dict[str, dict[str, Any]] = {}
        self.day_started_at: datetime | None = None
        self.closed = False
        self.shoe_seq: int | None = None
        self.last_at: datetime | None = None
        self.last_type: str | None = None
        self.checkpoint_seq = 0
        self.reconciled: set[int] = set()  # shoes whose reconciliation is written

    @property
    def seq(self) -> int:
        return self.fold.seq

    # ----- the state beside the engine, for checkpoints -------------------------------------

    def state(self) -> dict[str, Any]:
        def row(r: dict[str, Any] | None) -> dict[str, Any] | None:
            if r is None:
                return None
            return {
                k: (_iso(v) if isinstance(v, datetime) else str(v) if isinstance(v, Decimal) else v)
                for k, v in r.items()
            }

        return {
            "last_closed_seq": self.last_closed_seq,
            "current": row(self.current),
            "last_round": row(self.last_round),
            "dealer": self.dealer,
            "devices": self.devices,
            "day_started_at": _iso(self.day_started_at),
            "closed": self.closed,
            "shoe_seq": self.shoe_seq,
            "reconciled": sorted(self.reconciled),
            "last_at": _iso(self.last_at),
            "last_type": self.last_type,
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        def row(r: Any) -> dict[str, Any] | None:
            if r is None:
                return None
            out = dict(r)
            for k in ("started_at", "ended_at", "last_at"):
                out[k] = _dt(out.get(k))
            for k in ("wagered", "result"):
                out[k] = Decimal(str(out.get(k, "0")))
            return out

        self.last_closed_seq = int(state.get("last_closed_seq", 0))
        self.current = row(state.get("current"))
        self.last_round = row(state.get("last_round"))
        self.dealer = state.get("dealer")
        self.devices = dict(state.get("devices") or {})
        self.day_started_at = _dt(state.get("day_started_at"))
        self.closed = bool(state.get("closed"))
        self.shoe_seq = state.get("shoe_seq")
        self.reconciled = {int(x) for x in state.get("reconciled") or []}
        self.last_at = _dt(state.get("last_at"))
        self.last_type = state.get("last_type")

    def checkpoint(self, kind: str) -> dict[str, Any]:
        self.checkpoint_seq = self.seq
        return {
            "table_id": self.table_id,
            "seq": self.seq,
            "kind": kind,
            "snapshot": json.dumps(self.fold.table.snapshot(), separators=(",", ":")),
            "state": json.dumps(self.state()),
        }

    # ----- one event --------------------------------------------------------------------------

    def step(self, record: ChainRecord, out: Writes) -> None:
        """Apply one record and add the rows it gives to ``out``."""
        event_body = record.event()
        kind = record.type
        at = parse_recorded(record.recorded_at)
        if kind == "shuffle" and self.seq > self.checkpoint_seq:
            out.checkpoints.append(self.checkpoint("shoe"))
        before = self.fold.table.in_play()
        event, applied, _derived = self.fold.apply(record.seq, event_body)
        number = self.fold.round_of(before, applied)
        self.last_at = at
        self.last_type = kind
        seq = record.seq
        self._vocabulary(kind, event_body, seq, at, out)
        now = self.fold.table.in_play()
        if before is None and now is not None:  # a round opened
            self.current = {
                "table_id": self.table_id,
                "round": now,
                "started_at": at,
                "first_seq": self.last_closed_seq + 1,
                "open_seq": seq,
                "closed_seq": None,
                "last_seq": seq,
                "ended_at": None,
                "last_at": at,
                "status": "in play",
                "shoe_seq": self.shoe_seq,
                "dealers": [self.dealer] if self.dealer else [],
                "boxes": 0,
                "hands": 0,
                "wagered": Decimal(0),
                "result": Decimal(0),
                "flags": 0,
                "rules": [],
            }
        target: dict[str, Any] | None = None
        if self.current is not None and number == self.current["round"]:
            target = self.current
        elif self.last_round is not None and number == self.last_round["round"]:
            target = self.last_round
        if target is not None:
            target["last_seq"] = seq
            target["last_at"] = at
            if self.dealer and self.dealer not in target["dealers"]:
                target["dealers"] = [*target["dealers"], self.dealer]
        for idx, flag in enumerate(applied.flags):
            out.flags.append(
                {
                    "table_id": self.table_id,
                    "seq": seq,
                    "idx": idx,
                    "at": at,
                    "round": flag.round if flag.round > 0 else number,
                    "rule": flag.rule,
                    "box": flag.box,
                    "message": flag.message,
                    "dealer": self.dealer,
                }
            )
            if target is not None:
                target["flags"] += 1
                if flag.rule not in target["rules"]:
                    target["rules"] = [*target["rules"], flag.rule]
        settled = applied.settled
        if settled is not None and self.current is not None:
            row = self.current
            wagered, result, hands, boxes = round_money(settled)
            dealers = getattr(settled, "dealers", None)
            row.update(
                closed_seq=seq,
                ended_at=at,
                status=settled.status,
                wagered=wagered,
                result=result,
                hands=hands,
                boxes=boxes,
                flags=len(settled.flags),
                rules=list(dict.fromkeys(f.rule for f in settled.flags)),
            )
            if isinstance(dealers, list):
                row["dealers"] = [str(d) for d in dealers]
            self.last_round = row
            self.current = None
            self.last_closed_seq = seq
        if target is not None:
            out.rounds[int(target["round"])] = dict(target)
        if kind in ("shuffle", "reshuffle_discards"):
            self.shoe_seq = seq
            out.shoes[seq] = {
                "table_id": self.table_id,
                "seq": seq,
                "kind": kind,
                "loaded_at": at,
                "decks": event.decks if isinstance(event, Shuffle) else None,
            }
        if kind in RECONCILING:
            self._reconciliations(kind, seq, at, out)
        if kind in TRAY_EVENTS:
            self._tray(kind, seq, at, out)

    def _tray(self, kind: str, seq: int, at: datetime, out: Writes) -> None:
        """The engine's record of a tray event (none when it was refused: inside a round)."""
        table = self.fold.table
        tray = table.tray
        records = {
            "tray_count": tray.counts,
            "fill": tray.slips,
            "credit": tray.slips,
            "buy_in": tray.buy_in_list,
            "drop_count": tray.drops,
        }[kind]
        if not records or records[-1]["event"] != table.seq:
            return
        r = records[-1]
        day = tray.day
        row: dict[str, Any] = {
            "table_id": self.table_id,
            "seq": seq,
            "at": at,
            "kind": r["kind"] if kind in ("tray_count", "fill", "credit") else kind,
            "detail": r["kind"] if kind == "buy_in" else None,
            "slip": r.get("slip"),
            "amount": r.get("counted") or r["amount"],
            "expected": r.get("expected"),
            "difference": r.get("difference"),
            "house_net": r.get("house_net"),
            "buy_ins": r.get("buy_ins") if kind == "tray_count" else None,
            "by_ids": list(r.get("by") or []),
            "dealer": self.dealer,
            "day_seq": None,
        }
        if kind == "drop_count":
            row["kind"] = "drop"
            row["day_seq"] = r.get("day")
        elif day is not None:
            row["day_seq"] = day.opener_seq if day.opener_seq else None
        out.tray.append(row)

    def _reconciliations(self, kind: str, seq: int, at: datetime, out: Writes) -> None:
        """The shoes the engine has reconciled (or ended) by now, as the read model keeps them."""
        shoes = self.fold.table.view().shoes
        for record in shoes:
            if kind == "shoe_end" and record.seq == self.shoe_seq:
                out.shoe_updates.append(
                    {
                        "table_id": self.table_id,
                        "seq": record.seq,
                        "ended_at": at,
                        "reconciled": None,
                        "missing": "[]",
                        "extra": "[]",
                        "inspected": None,
                    }
                )
            if record.reconciled is None or record.seq in self.reconciled:
                continue
            self.reconciled.add(record.seq)
            out.shoe_updates.append(
                {
                    "table_id": self.table_id,
                    "seq": record.seq,
                    "ended_at": at,
                    "reconciled": record.reconciled,
                    "missing": json.dumps(list(record.missing)),
                    "extra": json.dumps(list(record.extra)),
                    "inspected": json.dumps(list(record.inspected)),
                }
            )
        if len(self.reconciled) > 64:
            kept = {r.seq for r in shoes}
            self.reconciled &= kept

    def _vocabulary(
        self, kind: str, body: Mapping[str, Any], seq: int, at: datetime, out: Writes
    ) -> None:
        """What the table's day, its dealers, its devices and acknowledgements say."""
        if kind == "dealer":
            self.dealer = str(body.get("dealer"))
        elif kind == "open_table":
            self.day_started_at = at
            self.closed = False
        elif kind == "close_table":
            self.closed = True
        elif kind == "manual_mode":
            device = str(body.get("device"))
            if body.get("on"):
                self.devices[device] = {
                    "reason": str(body.get("reason") or "manual entry"),
                    "since": _iso(at),
                    "seq": seq,
                }
            else:
                self.devices.pop(device, None)
        elif kind == "acknowledge":
            out.acks.append(
                {
                    "table_id": self.table_id,
                    "flag_seq": body.get("flag_event"),
                    "rule": str(body.get("rule")),
                    "seq": seq,
                    "at": at,
                    "by": body.get("actor"),
                }
            )

    def status(self) -> str:
        if self.closed:
            return "closed"
        return "dealing" if self.fold.table.in_play() is not None else "between rounds"


# ----- reading and writing the read model ------------------------------------------------------


def _setup_of(floor: Floor, conn: Connection, table_id: str) -> dict[str, Any]:
    records = floor.store.records(table_id, after=-1, upto=0)
    if not records:
        raise ValueError(f"table {table_id} has no table line on the floor")
    return records[0].event()


def restore_index(floor: Floor, conn: Connection, table_id: str, upto: int) -> TableIndex:
    """The table's index state at event ``upto``: from the newest checkpoint at or before it,
    the events after it applied again (their rows are already written)."""
    setup = _setup_of(floor, conn, table_id)
    row = conn.exec_driver_sql(
        "SELECT seq, snapshot, state FROM floor_checkpoints WHERE table_id = %(t)s "
        "AND seq <= %(s)s ORDER BY seq DESC LIMIT 1",
        {"t": table_id, "s": upto},
    ).first()
    index = TableIndex(table_id, setup, fold_at(table_id, setup, None, 0))
    if row is not None:
        try:
            index = TableIndex(table_id, setup, fold_at(table_id, setup, str(row[1]), int(row[0])))
            state = row[2] if isinstance(row[2], dict) else json.loads(str(row[2]))
            index.load_state(state)
            index.checkpoint_seq = int(row[0])
        except (SnapshotError, ValueError, KeyError, TypeError):
            # A damaged checkpoint is a cache lost: start again from the table line.
            index = TableIndex(table_id, setup, fold_at(table_id, setup, None, 0))
    scratch = Writes()
    for record in floor.store.iter_records(table_id, after=index.seq, upto=upto):
        index.step(record, scratch)
    return index


_ROUND_COLUMNS = (
    "table_id",
    "round",
    "started_at",
    "first_seq",
    "open_seq",
    "closed_seq",
    "last_seq",
    "ended_at",
    "last_at",
    "status",
    "shoe_seq",
    "dealers",
    "boxes",
    "hands",
    "wagered",
    "result",
    "flags",
    "rules",
)
_UPSERT_ROUND = (
    f"INSERT INTO floor_rounds ({', '.join(_ROUND_COLUMNS)}) VALUES "
    f"({', '.join(f'%({c})s' for c in _ROUND_COLUMNS)}) "
    "ON CONFLICT (table_id, started_at, round) DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in _ROUND_COLUMNS[3:])
)
_INSERT_FLAG = (
    "INSERT INTO floor_flags (table_id, seq, idx, at, round, rule, box, message, dealer) VALUES "
    "(%(table_id)s, %(seq)s, %(idx)s, %(at)s, %(round)s, %(rule)s, %(box)s, %(message)s, "
    "%(dealer)s) ON CONFLICT DO NOTHING"
)
_ACK = (
    "UPDATE floor_flags SET acknowledged_seq = %(seq)s, acknowledged_at = %(at)s, "
    "acknowledged_by = %(by)s WHERE table_id = %(table_id)s AND seq = %(flag_seq)s "
    "AND rule = %(rule)s AND acknowledged_seq IS NULL"
)
_UPSERT_SHOE = (
    "INSERT INTO floor_shoes (table_id, seq, kind, loaded_at, decks) VALUES "
    "(%(table_id)s, %(seq)s, %(kind)s, %(loaded_at)s, %(decks)s) ON CONFLICT DO NOTHING"
)
_UPDATE_SHOE = (
    "UPDATE floor_shoes SET ended_at = COALESCE(ended_at, %(ended_at)s), "
    "reconciled = COALESCE(%(reconciled)s, reconciled), "
    "missing = CASE WHEN %(reconciled)s IS NULL THEN missing ELSE %(missing)s::jsonb END, "
    "extra = CASE WHEN %(reconciled)s IS NULL THEN extra ELSE %(extra)s::jsonb END, "
    "inspected = COALESCE(%(inspected)s::jsonb, inspected) "
    "WHERE table_id = %(table_id)s AND seq = %(seq)s"
)
_INSERT_CHECKPOINT = (
    "INSERT INTO floor_checkpoints (table_id, seq, kind, snapshot, state) VALUES "
    "(%(table_id)s, %(seq)s, %(kind)s, %(snapshot)s, %(state)s) ON CONFLICT DO NOTHING"
)


TRAY_COLUMNS = (
    "table_id",
    "seq",
    "at",
    "kind",
    "detail",
    "slip",
    "amount",
    "expected",
    "difference",
    "house_net",
    "buy_ins",
    "by_ids",
    "dealer",
    "day_seq",
)
# Each row carries the table's running totals: the row before it (inserted earlier in the same
# batch, or in an earlier one) plus this row's part.
TRAY_TOTALS = (
    "cum_fills",
    "cum_credits",
    "cum_buy_ins",
    "cum_house_net",
    "cum_difference",
    "cum_counts",
)
_INSERT_TRAY = (
    f"INSERT INTO floor_tray ({', '.join(TRAY_COLUMNS + TRAY_TOTALS)}) SELECT "
    + ", ".join(f"%({c})s" for c in TRAY_COLUMNS)
    + ", coalesce(p.cum_fills, 0) + CASE WHEN %(kind)s = 'fill' THEN %(amount)s::numeric "
    "ELSE 0 END, coalesce(p.cum_credits, 0) + CASE WHEN %(kind)s = 'credit' "
    "THEN %(amount)s::numeric ELSE 0 END, coalesce(p.cum_buy_ins, 0) + CASE WHEN "
    "%(kind)s = 'buy_in' THEN %(amount)s::numeric ELSE 0 END, coalesce(p.cum_house_net, 0) "
    "+ coalesce(%(house_net)s::numeric, 0), coalesce(p.cum_difference, 0) + CASE WHEN "
    "%(kind)s IN ('opener', 'check', 'closer') THEN coalesce(%(difference)s::numeric, 0) "
    "ELSE 0 END, coalesce(p.cum_counts, 0) + CASE WHEN %(kind)s IN ('opener', 'check', "
    "'closer') THEN 1 ELSE 0 END FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT cum_fills, "
    "cum_credits, cum_buy_ins, cum_house_net, cum_difference, cum_counts FROM floor_tray "
    "WHERE table_id = %(table_id)s AND seq < %(seq)s ORDER BY seq DESC LIMIT 1) p ON true "
    "ON CONFLICT DO NOTHING"
)


def write(conn: Connection, out: Writes) -> None:
    if out.rounds:
        conn.exec_driver_sql(_UPSERT_ROUND, list(out.rounds.values()))
    if out.flags:
        conn.exec_driver_sql(_INSERT_FLAG, out.flags)
    if out.acks:
        conn.exec_driver_sql(_ACK, [a for a in out.acks if isinstance(a["flag_seq"], int)])
    if out.shoes:
        conn.exec_driver_sql(_UPSERT_SHOE, list(out.shoes.values()))
    if out.shoe_updates:
        conn.exec_driver_sql(_UPDATE_SHOE, out.shoe_updates)
    if out.checkpoints:
        conn.exec_driver_sql(_INSERT_CHECKPOINT, out.checkpoints)
    if out.tray:
        conn.exec_driver_sql(_INSERT_TRAY, out.tray)


def _table_line(conn: Connection, index: TableIndex) -> None:
    view = index.fold.table.view()
    conn.exec_driver_sql(
        "UPDATE floor_tables SET indexed_seq = %(seq)s, last_event_at = %(last_at)s, "
        "last_event_type = %(last_type)s, status = %(status)s, round_in_play = %(rnd)s, "
        "round_started_at = %(rnd_at)s, rounds_played = %(played)s, shoe_seq = %(shoe)s, "
        "dealer = %(dealer)s, devices = %(devices)s, day_started_at = %(day)s, "
        "last_closed_seq = %(closed)s, updated_at = now() WHERE table_id = %(t)s",
        {
            "t": index.table_id,
            "seq": index.seq,
            "last_at": index.last_at,
            "last_type": index.last_type,
            "status": index.status(),
            "rnd": view.round.number if view.round is not None else None,
            "rnd_at": index.current["started_at"] if index.current is not None else None,
            "played": view.rounds_played,
            "shoe": index.shoe_seq,
            "dealer": index.dealer,
            "devices": json.dumps(index.devices),
            "day": index.day_started_at,
            "closed": index.last_closed_seq,
        },
    )


def _names(month: tuple[int, int]) -> set[str]:
    return {f"{t}_y{month[0]:04d}m{month[1]:02d}" for t in PARTITIONED}


class Indexer:
    """Indexes every table of a floor; keeps each table's state between passes."""

    def __init__(self, floor: Floor, *, batch: int = 5000) -> None:
        self.floor = floor
        self.batch = batch
        self.states: dict[str, TableIndex] = {}
        self.partitions: set[str] = set()

    def heads(self) -> dict[str, int]:
        """Each shipped table's last event (one index probe per table)."""
        with self.floor.engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT t.table_id, (SELECT e.seq FROM events e WHERE e.table_id = t.table_id "
                "ORDER BY e.seq DESC LIMIT 1) FROM tables t ORDER BY t.table_id"
            )
            return {str(r[0]): int(r[1]) for r in rows if r[1] is not None}

    def run_once(
        self, table_ids: list[str] | None = None, progress: Callable[[str, int], None] | None = None
    ) -> dict[str, int]:
        """Index what each table (or those named) has shipped since; returns events indexed."""
        heads = self.heads()
        done: dict[str, int] = {}
        for table_id in table_ids if table_ids is not None else list(heads):
            head = heads.get(table_id)
            if head is None:
                continue
            done[table_id] = self.index_table(table_id, head, progress)
        return done

    def index_table(
        self, table_id: str, head: int, progress: Callable[[str, int], None] | None = None
    ) -> int:
        count = 0
        floor = self.floor
        while True:
            with floor.engine.begin() as conn:
                indexed = self._lock(conn, table_id)
                if indexed >= head:
                    return count
                index = self.states.get(table_id)
                if index is None or index.seq != indexed:
                    index = restore_index(floor, conn, table_id, indexed)
                out = Writes()
                last = min(head, indexed + self.batch)
                try:
                    for record in floor.store.iter_records(table_id, after=indexed, upto=last):
                        index.step(record, out)
                        count += 1
                    if index.seq - index.checkpoint_seq >= RESUME_EVERY:
                        out.checkpoints.append(index.checkpoint("resume"))
                    self._partitions(out.months())
                    write(conn, out)
                    _table_line(conn, index)
                except Exception:
                    self.states.pop(table_id, None)  # its fold holds events not committed
                    raise
                self.states[table_id] = index
            if progress is not None:
                progress(table_id, index.seq)

    def _partitions(self, months: set[tuple[int, int]]) -> None:
        """Create the months' partitions in a short transaction of their own: creating one
        locks its parent table, which must not wait for (or hold up) a batch."""
        missing = {m for m in months if not self.partitions.issuperset(_names(m))}
        if missing:
            with self.floor.engine.begin() as conn:
                ensure_partitions(conn, missing, self.partitions)

    def _lock(self, conn: Connection, table_id: str) -> int:
        params = {"t": table_id}
        row = conn.exec_driver_sql(
            "SELECT indexed_seq FROM floor_tables WHERE table_id = %(t)s FOR UPDATE", params
        ).first()
        if row is not None:
            return int(row[0])
        conn.exec_driver_sql(
            "INSERT INTO floor_tables (table_id, game, boxes) SELECT table_id, game, "
            "(setup::jsonb ->> 'boxes')::int FROM tables WHERE table_id = %(t)s "
            "ON CONFLICT DO NOTHING",
            params,
        )
        row = conn.exec_driver_sql(
            "SELECT indexed_seq FROM floor_tables WHERE table_id = %(t)s FOR UPDATE", params
        ).first()
        if row is None:
            raise ValueError(f"table {table_id} has no table row on the floor")
        return int(row[0])
