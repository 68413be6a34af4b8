"""The chip tray and the drop: counts, fills, credits, buy-ins, and the gaming day's win.

Between two counts the tray changes by exactly what the table's records explain::

    count - previous count = fills - credits + house net of the rounds settled between - buy-ins

so at each count (``tray_count``: an ``opener``, a ``check`` or a ``closer``) the table knows
what the tray should hold, and any other difference is flagged ``tray`` with both figures and
the difference: a mispay, chips taken, a round or a buy-in not recorded. The gaming day runs
from an opener to its closer; the count room's ``drop_count`` must equal the buy-ins recorded
for the day (else ``tray``), and the day's win by the standard formula (closer - opener +
credits - fills + drop) is set beside the rounds' house net. The paperwork is checked too
(``slip``): a slip number used twice, a slip signed by fewer than two people, chips that do
not add to the amount a slip or count states, an opener whose chips differ from the last
closer.

These events come between rounds, never inside one (:func:`refusal`). The records kept here
are the replay document's ``"tray"`` section (:func:`document`) and part of the checkpoint.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

from controller.engine.results import RoundResult
from controller.engine.state import SETTLED, VOID, TableState
from controller.events import BuyIn, Credit, DropCount, Event, Fill, Slip, TrayCount, amount_of

ZERO: Final = Decimal(0)
CENT: Final = Decimal("0.01")
# A live table (``keep_rounds``) keeps this many of each record; a replay keeps every one.
KEEP_RECORDS: Final = 400
KEEP_SLIP_NUMBERS: Final = 20_000


def dollars(d: Decimal) -> str:
    """Money as people read it: ``$1,234.50``, ``-$20.00``."""
    sign = "-" if d < 0 else ""
    return f"{sign}${abs(d).quantize(CENT):,}"


def plain(d: Decimal) -> str:
    """Money as the documents write it: a decimal string with cents when there are any."""
    if d == d.to_integral_value():
        return str(d.quantize(Decimal(1)))
    return str(d.quantize(CENT))


def chips_value(chips: tuple[tuple[str, int], ...]) -> Decimal:
    total = ZERO
    for denomination, count in chips:
        total += Decimal(denomination) * count
    return total


def by_value(chips: tuple[tuple[str, int], ...]) -> dict[Decimal, int]:
    """Chips by the value of each denomination, the empty ones left out (``"5"`` is ``"5.00"``)."""
    out: dict[Decimal, int] = {}
    for denomination, count in chips:
        if count:
            value = Decimal(denomination)
            out[value] = out.get(value, 0) + count
    return out


class GamingDay:
    """One gaming day of the table, from its opener (the money of each kind recorded while it
    was open)."""

    opener_seq: int
    opener: Decimal
    closer_seq: int  # 0: not closed
    closer: Decimal
    fills: Decimal
    credits: Decimal
    cash: Decimal  # cash buy-ins
    markers: Decimal  # marker buy-ins
    house_net: Decimal
    rounds: int  # rounds settled in the day
    drop_seq: int  # 0: the drop not counted yet
    drop: Decimal

    def __init__(self, opener_seq: int, opener: Decimal) -> None:
        self.opener_seq = opener_seq
        self.opener = opener
        self.closer_seq = 0
        self.closer = ZERO
        self.fills = ZERO
        self.credits = ZERO
        self.cash = ZERO
        self.markers = ZERO
        self.house_net = ZERO
        self.rounds = 0
        self.drop_seq = 0
        self.drop = ZERO

    def buy_ins(self) -> Decimal:
        return self.cash + self.markers

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "opener_event": self.opener_seq,
            "opener": plain(self.opener),
            "closer_event": self.closer_seq or None,
            "closer": plain(self.closer) if self.closer_seq else None,
            "fills": plain(self.fills),
            "credits": plain(self.credits),
            "buy_ins": {"cash": plain(self.cash), "marker": plain(self.markers)},
            "rounds": self.rounds,
            "house_net": plain(self.house_net),
            "drop_event": self.drop_seq or None,
            "drop": plain(self.drop) if self.drop_seq else None,
            "win": None,
            "difference": None,
        }
        if self.closer_seq and self.drop_seq:
            win = self.closer - self.opener + self.credits - self.fills + self.drop
            out["win"] = plain(win)
            out["difference"] = plain(win - self.house_net)
        return out


class Tray:
    """The tray's state: the last count, what moved since, the gaming day, the records."""

    last_seq: int  # the last count's event (0: never counted)
    last_kind: str
    last: Decimal  # what the last count found
    closer_chips: dict[Decimal, int] | None  # the last closer's chips, for the next opener
    fills: Decimal  # since the last count
    credits: Decimal
    buy_ins: Decimal
    house_net: Decimal
    first_round: int  # the rounds settled since the last count (0: none)
    last_round: int
    day: GamingDay | None  # the gaming day open now, or the last one closed
    counts: list[dict[str, Any]]
    slips: list[dict[str, Any]]
    buy_in_list: list[dict[str, Any]]
    drops: list[dict[str, Any]]
    days: list[GamingDay]  # every day opened, the one open now last
    slip_numbers: dict[str, int]  # each slip number used: the event that used it
    used: bool  # any tray event heard

    def __init__(self) -> None:
        self.last_seq = 0
        self.last_kind = ""
        self.last = ZERO
        self.closer_chips = None
        self.fills = ZERO
        self.credits = ZERO
        self.buy_ins = ZERO
        self.house_net = ZERO
        self.first_round = 0
        self.last_round = 0
        self.day = None
        self.counts = []
        self.slips = []
        self.buy_in_list = []
        self.drops = []
        self.days = []
        self.slip_numbers = {}
        self.used = False

    def moved(self) -> bool:
        return bool(
            self.fills or self.credits or self.buy_ins or self.house_net or self.first_round
        )

    def expected(self) -> Decimal | None:
        """What the tray should hold now (None: it was never counted)."""
        if not self.last_seq:
            return None
        return self.last + self.fills - self.credits + self.house_net - self.buy_ins

    def open_day(self) -> GamingDay | None:
        day = self.day
        return day if day is not None and not day.closer_seq else None

    def round_ended(self, result: RoundResult) -> None:
        """A round ended: its house net is money the tray paid out or took in."""
        net = ZERO
        for s in result.settlements:
            net += s.staked - s.returned
        self.house_net += net
        if not self.first_round:
            self.first_round = result.round
        self.last_round = result.round
        day = self.open_day()
        if day is not None:
            day.house_net += net
            day.rounds += 1


# ----- the handlers ----------------------------------------------------------------------------


def refusal_reason(t: TableState, ev: Event) -> str | None:
    """Why a tray event may not happen now (None: it may): they come between rounds."""
    rnd = t.current_round
    number = None if rnd is None or rnd.phase is SETTLED or rnd.phase is VOID else rnd.number
    if number is not None:
        return (
            f"{ev.type} refused: round {number} is in play; the tray's events come between rounds"
        )
    return None


def on_round_ended(t: TableState, result: RoundResult) -> None:
    """A round ended: its house net is money the tray paid out or took in."""
    t.tray.round_ended(result)


def _stated(t: TableState, ev: Event, value: Decimal, what: str) -> None:
    claimed = amount_of(ev)
    if claimed is not None and claimed != value:
        t.flag(
            "slip",
            f"the {what}'s chips by denomination add to {dollars(value)}, not the "
            f"{dollars(claimed)} it states (the chips are taken as counted)",
        )


def on_tray_count(t: TableState, ev: TrayCount) -> None:
    chips = tuple(ev.chips.items())
    kind = ev.kind or "check"
    tray = t.tray
    tray.used = True
    value = chips_value(chips)
    _stated(t, ev, value, f"{kind} count")
    expected = tray.expected()
    difference = None if expected is None else value - expected
    after_closer = tray.last_kind == "closer"
    if kind == "opener" and tray.closer_chips is not None:
        closer = tray.closer_chips
        if by_value(chips) != closer:
            closed = ZERO
            for denomination, count in closer.items():
                closed += denomination * count
            t.flag(
                "slip",
                f"the opener's chips ({dollars(value)}) differ from the last closer's "
                f"({dollars(closed)}): {_chip_difference(by_value(chips), closer)}",
            )
    reconcile = not (kind == "opener" and after_closer and not tray.moved())
    if reconcile and expected is not None and difference is not None and difference != 0:
        t.flag("tray", _tray_message(tray, kind, value, expected, difference))
    record: dict[str, Any] = {
        "event": t.seq,
        "kind": kind,
        "chips": {d: n for d, n in chips},
        "counted": plain(value),
        "expected": None if expected is None else plain(expected),
        "difference": None if difference is None else plain(difference),
        "since_event": tray.last_seq or None,
        "fills": plain(tray.fills),
        "credits": plain(tray.credits),
        "buy_ins": plain(tray.buy_ins),
        "rounds": [tray.first_round, tray.last_round] if tray.first_round else [],
        "house_net": plain(tray.house_net),
        "by": list(ev.by or ()),
    }
    _keep(t, tray.counts, record)
    tray.last_seq = t.seq
    tray.last_kind = kind
    tray.last = value
    tray.fills = tray.credits = tray.buy_ins = tray.house_net = ZERO
    tray.first_round = tray.last_round = 0
    if kind == "opener":
        opened = GamingDay(t.seq, value)
        tray.day = opened
        tray.days.append(opened)
        if t.keep_rounds is not None and len(tray.days) > KEEP_RECORDS:
            del tray.days[: len(tray.days) - KEEP_RECORDS]
    elif kind == "closer":
        tray.closer_chips = by_value(chips)
        closing = tray.open_day()
        if closing is not None:
            closing.closer_seq = t.seq
            closing.closer = value


def _tray_message(tray: Tray, kind: str, value: Decimal, expected: Decimal, diff: Decimal) -> str:
    parts = [f"the last count {dollars(tray.last)} (event {tray.last_seq})"]
    if tray.fills:
        parts.append(f"fills {dollars(tray.fills)}")
    if tray.credits:
        parts.append(f"less credits {dollars(tray.credits)}")
    if tray.first_round:
        rounds = (
            f"round {tray.first_round}"
            if tray.first_round == tray.last_round
            else f"rounds {tray.first_round}-{tray.last_round}"
        )
        parts.append(f"{rounds}' house net {dollars(tray.house_net)}")
    if tray.buy_ins:
        parts.append(f"less buy-ins {dollars(tray.buy_ins)}")
    short = "short" if diff < 0 else "over"
    return (
        f"the {kind} count found {dollars(value)} in the tray; it should hold "
        f"{dollars(expected)} ({', '.join(parts)}): {dollars(abs(diff))} {short} "
        "(a mispay, chips taken, or a round or buy-in not recorded)"
    )


def _chip_difference(now: dict[Decimal, int], then: dict[Decimal, int]) -> str:
    parts = []
    for value in sorted(set(now) | set(then), reverse=True):
        a, b = now.get(value, 0), then.get(value, 0)
        if a != b:
            parts.append(f"{dollars(value)} chips {a} (closer {b})")
    return "; ".join(parts)


def _slip(t: TableState, ev: Slip, kind: str) -> Decimal:
    chips = tuple(ev.chips.items())
    number = ev.number
    tray = t.tray
    tray.used = True
    value = chips_value(chips)
    _stated(t, ev, value, kind)
    first = tray.slip_numbers.get(number)
    if first is not None:
        t.flag("slip", f"{kind} slip {number} was used already (event {first})")
    else:
        tray.slip_numbers[number] = t.seq
        if t.keep_rounds is not None and len(tray.slip_numbers) > KEEP_SLIP_NUMBERS:
            del tray.slip_numbers[next(iter(tray.slip_numbers))]
    signed = list(dict.fromkeys(ev.by or ()))
    if len(signed) < 2:
        t.flag(
            "slip",
            f"{kind} slip {number} is signed by {len(signed)} "
            f"{'person' if len(signed) == 1 else 'people'}; a slip needs two (the runner's, "
            "the supervisor's, the dealer's)",
        )
    record: dict[str, Any] = {
        "event": t.seq,
        "kind": kind,
        "slip": number,
        "chips": {d: n for d, n in chips},
        "amount": plain(value),
        "by": list(ev.by or ()),
    }
    _keep(t, tray.slips, record)
    return value


def on_fill(t: TableState, ev: Fill) -> None:
    value = _slip(t, ev, "fill")
    t.tray.fills += value
    day = t.tray.open_day()
    if day is not None:
        day.fills += value


def on_credit(t: TableState, ev: Credit) -> None:
    value = _slip(t, ev, "credit")
    t.tray.credits += value
    day = t.tray.open_day()
    if day is not None:
        day.credits += value


def on_buy_in(t: TableState, ev: BuyIn) -> None:
    amount = ev.amount or ZERO
    kind = ev.kind or "cash"
    tray = t.tray
    tray.used = True
    tray.buy_ins += amount
    day = tray.open_day()
    if day is not None:
        if kind == "marker":
            day.markers += amount
        else:
            day.cash += amount
    record: dict[str, Any] = {"event": t.seq, "kind": kind, "amount": plain(amount)}
    if ev.box is not None:
        record["box"] = ev.box
    if ev.player is not None:
        record["player"] = ev.player
    _keep(t, tray.buy_in_list, record)


def on_drop_count(t: TableState, ev: DropCount) -> None:
    amount = ev.amount or ZERO
    tray = t.tray
    tray.used = True
    day = tray.day
    record: dict[str, Any] = {
        "event": t.seq,
        "amount": plain(amount),
        "day": None,
        "buy_ins": None,
        "difference": None,
        "by": list(ev.by or ()),
    }
    if day is None:
        t.flag("tray", f"a drop of {dollars(amount)} counted with no gaming day opened (no opener)")
    elif day.drop_seq:
        t.flag(
            "tray",
            f"the drop of the gaming day opened at event {day.opener_seq} was counted already "
            f"(event {day.drop_seq}, {dollars(day.drop)}); this count of {dollars(amount)} is "
            "not taken",
        )
    else:
        day.drop_seq = t.seq
        day.drop = amount
        recorded = day.buy_ins()
        record["day"] = day.opener_seq
        record["buy_ins"] = plain(recorded)
        record["difference"] = plain(amount - recorded)
        if amount != recorded:
            t.flag(
                "tray",
                f"the drop counted {dollars(amount)}; the buy-ins recorded for the gaming day "
                f"opened at event {day.opener_seq} come to {dollars(recorded)}: "
                f"{dollars(abs(amount - recorded))} {'over' if amount > recorded else 'short'} "
                "(a buy-in not recorded, or cash gone astray)",
            )
    _keep(t, tray.drops, record)


def _keep(t: TableState, records: list[dict[str, Any]], record: dict[str, Any]) -> None:
    records.append(record)
    if t.keep_rounds is not None and len(records) > KEEP_RECORDS:
        del records[: len(records) - KEEP_RECORDS]


# ----- out ---------------------------------------------------------------------------------------


def document(tray: Tray) -> dict[str, Any]:
    """The replay document's ``"tray"`` section."""
    return {
        "counts": [dict(c) for c in tray.counts],
        "slips": [dict(s) for s in tray.slips],
        "buy_ins": [dict(b) for b in tray.buy_in_list],
        "drops": [dict(d) for d in tray.drops],
        "days": [d.to_dict() for d in tray.days],
    }


# ----- the checkpoint ----------------------------------------------------------------------------


def dump(tray: Tray) -> dict[str, Any]:
    """The tray's state as plain JSON-able data (part of the engine's snapshot)."""
    return {
        "last_seq": tray.last_seq,
        "last_kind": tray.last_kind,
        "last": plain(tray.last),
        "closer_chips": None
        if tray.closer_chips is None
        else [[plain(v), n] for v, n in sorted(tray.closer_chips.items())],
        "fills": plain(tray.fills),
        "credits": plain(tray.credits),
        "buy_ins": plain(tray.buy_ins),
        "house_net": plain(tray.house_net),
        "rounds": [tray.first_round, tray.last_round],
        "days": [_dump_day(d) for d in tray.days],
        "day": None if tray.day is None else _day_index(tray),
        "counts": [dict(c) for c in tray.counts],
        "slips": [dict(s) for s in tray.slips],
        "buy_in_list": [dict(b) for b in tray.buy_in_list],
        "drops": [dict(d) for d in tray.drops],
        "slip_numbers": [[k, v] for k, v in tray.slip_numbers.items()],
    }


def _day_index(tray: Tray) -> int:
    for i, d in enumerate(tray.days):
        if d is tray.day:
            return i
    return -1


def _dump_day(d: GamingDay) -> list[Any]:
    return [
        d.opener_seq,
        plain(d.opener),
        d.closer_seq,
        plain(d.closer),
        plain(d.fills),
        plain(d.credits),
        plain(d.cash),
        plain(d.markers),
        plain(d.house_net),
        d.rounds,
        d.drop_seq,
        plain(d.drop),
    ]


def _money(v: Any) -> Decimal:
    if not isinstance(v, str):
        raise ValueError(f"{v!r} is not an amount")
    d = Decimal(v)
    if not d.is_finite() or plain(d) != v:
        raise ValueError(f"{v!r} is not an amount in canonical form")
    return d


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{v!r} is not a whole number from 0")
    return v


def _records(v: Any) -> list[dict[str, Any]]:
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise ValueError(f"{v!r} is not a list of records")
    return [dict(x) for x in v]


def load(data: Any) -> Tray:
    """The tray :func:`dump` gave; ValueError (or KeyError, TypeError) names what is wrong.
    The snapshot's loader checks that the table dumps back to exactly its snapshot."""
    if not isinstance(data, dict):
        raise ValueError("is not an object")
    tray = Tray()
    tray.used = True
    tray.last_seq = _int(data["last_seq"])
    tray.last_kind = str(data["last_kind"])
    tray.last = _money(data["last"])
    closer = data["closer_chips"]
    if closer is not None:
        tray.closer_chips = {_money(v): _int(n) for v, n in closer}
    tray.fills = _money(data["fills"])
    tray.credits = _money(data["credits"])
    tray.buy_ins = _money(data["buy_ins"])
    tray.house_net = _money(data["house_net"])
    first, last = data["rounds"]
    tray.first_round, tray.last_round = _int(first), _int(last)
    for row in data["days"]:
        if not isinstance(row, list) or len(row) != 12:
            raise ValueError(f"{row!r} is not a gaming day")
        day = GamingDay(_int(row[0]), _money(row[1]))
        day.closer_seq, day.closer = _int(row[2]), _money(row[3])
        day.fills, day.credits = _money(row[4]), _money(row[5])
        day.cash, day.markers = _money(row[6]), _money(row[7])
        day.house_net, day.rounds = _money(row[8]), _int(row[9])
        day.drop_seq, day.drop = _int(row[10]), _money(row[11])
        tray.days.append(day)
    index = data["day"]
    if index is not None:
        tray.day = tray.days[_int(index)]
    tray.counts = _records(data["counts"])
    tray.slips = _records(data["slips"])
    tray.buy_in_list = _records(data["buy_in_list"])
    tray.drops = _records(data["drops"])
    for number, seq in data["slip_numbers"]:
        tray.slip_numbers[str(number)] = _int(seq)
    return tray
