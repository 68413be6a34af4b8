"""Watch it again: a round rebuilt from its events, step by step, as the dealer's screen showed it.

The round's events are applied to the engine through the store's fold, starting from the
floor's checkpoint before the round's shoe (:mod:`controller.floor.indexer`); after each event
the screen is drawn with the dealer's screen's own view functions
(:mod:`controller.service.view`) from the engine's ``due()``. Beside each step: the event and
its times, who made the decision (read from the engine's typed decisions open just before it:
dealer, supervisor, player), the card and the box and hand it went to, the flags it raised
with the rule's words.

Two checks go with every rebuilt round: the hash chain of the events read (each record's hash
recomputed, each linked to the one before), and the rebuilt round against the rows the table's
own recorder derived when it played it (round, settlements, flags), which ``ship`` verified.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Connection

from controller.engine import Applied, Decision, Role, SnapshotError, money
from controller.engine.results import RoundResult
from controller.floor.indexer import fold_at, round_money
from controller.floor.schema import Floor
from controller.floor.settings import FloorSettings, parse_recorded
from controller.service.flags import banner
from controller.service.view import box_views, describe_event, flag_view
from controller.store.canonical import ChainRecord
from controller.store.fold import Fold

# The role an event's decision falls to when the engine had no such decision open (the event
# was refused and flagged): whoever would have made it.
DEFAULT_ROLE: dict[str, str] = {
    "bet": "player",
    "stand": "player",
    "hit": "player",
    "double": "player",
    "split": "player",
    "surrender": "player",
    "insurance": "player",
    "rescue": "player",
    "refuse": "player",
    "no_more_bets": "dealer",
    "offer_insurance": "dealer",
    "offer_surrender": "dealer",
    "peek": "dealer",
    "shuffle": "dealer",
    "cut_card": "dealer",
    "absent": "dealer",
    "void": "supervisor",
    "reshuffle_discards": "supervisor",
    "card": "shoe",
    "misread": "shoe",
    "wager_seen": "camera",
}
NOT_DEALT: dict[str, str] = {
    "16.1": "found face up in the shoe: to the discard rack, not dealt",
    "16.3": "after the dealer's hand was complete: face down to the discard rack",
    "6.1": "a ten in a Pontoon shoe: removed from play",
    "shoe": "a card the shoe cannot hold: removed from play",
    "16.4": "drawn in error and exposed: offered in turn",
}


@dataclass
class Rebuilt:
    """The round as rebuilt: its steps, its result, and the checks."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    cards: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    camera: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    bets: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    flags: list[dict[str, Any]] = field(default_factory=list)
    result: RoundResult | None = None
    chain_ok: bool = True
    chain_problem: str = ""
    checkpoint_problem: str = ""


def _hands_now(fold: Fold, applied: Applied) -> tuple[dict[tuple[int, int], list[str]], list[str]]:
    """Every hand's cards and the dealer's, just after an event (the ended round's, if it
    ended)."""
    rnd = fold.table.view().round
    if rnd is not None:
        return {key: list(cards) for key, cards in rnd.hands().items()}, list(rnd.dealer)
    if applied.settled is not None:
        return (
            {(h["box"], h["hand"]): list(h["cards"]) for h in applied.settled.hands},
            list(applied.settled.dealer),
        )
    return {}, []


def _who(
    body: Mapping[str, Any], opened: tuple[Decision, ...], fold: Fold, dealer: str | None
) -> dict[str, Any]:
    """Who made an event's decision: the role, the person, and how it reached the table."""
    kind = str(body.get("type"))
    box = body.get("box")
    player = body.get("player")
    role: str | None = None
    name: str | None = None
    for d in opened:
        if str(d.kind) != kind or (box is not None and d.box not in (None, box)):
            continue
        if player is not None and d.player not in (None, player):
            continue
        role = str(d.by)
        name = d.player
        break
    if role is None:
        role = DEFAULT_ROLE.get(kind, "dealer")
    if role in (str(Role.CONTROLLER), str(Role.PLAYER), str(Role.BACK_BETTOR)) or role == "player":
        if name is None:
            name = str(player) if player is not None else None
        if name is None and isinstance(box, int):
            rnd = fold.table.view().round
            found = rnd.box(box) if rnd is not None else None
            if found is not None:
                name = found.controller
    elif role == str(Role.SUPERVISOR):
        name = str(body["actor"]) if body.get("actor") else None
    elif role == str(Role.DEALER):
        name = dealer
    return {
        "role": role,
        "name": name,
        "actor": body.get("actor"),
        "source": body.get("source"),
    }


def rebuild(
    floor: Floor,
    conn: Connection,
    table_id: str,
    setup: Mapping[str, Any],
    first_seq: int,
    last_seq: int,
    number: int,
) -> Rebuilt:
    """Apply the events up to ``last_seq``, recording a step for each from ``first_seq``."""
    settings = floor.settings
    rules = None
    row = conn.exec_driver_sql(
        "SELECT seq, snapshot, state FROM floor_checkpoints WHERE table_id = %(t)s "
        "AND seq < %(s)s ORDER BY seq DESC LIMIT 1",
        {"t": table_id, "s": first_seq},
    ).first()
    out = Rebuilt()
    start = 0 if row is None else int(row[0])
    dealer: str | None = None
    try:
        fold = fold_at(table_id, setup, None if row is None else str(row[1]), start)
        if row is not None:
            state = row[2] if isinstance(row[2], dict) else json.loads(str(row[2]))
            dealer = state.get("dealer")
    except (SnapshotError, ValueError) as exc:  # a damaged cache: from the table line instead
        out.checkpoint_problem = f"the floor's checkpoint at event {start} is unusable ({exc})"
        start = 0
        fold = fold_at(table_id, setup, None, 0)
    rules = fold.setup.rules
    boxes = fold.setup.boxes
    prev_hash: str | None = None
    offered: dict[str, Any] | None = None  # a 16.4 card on offer, until it goes somewhere
    round_flags: list[dict[str, Any]] = []
    for record in floor.store.iter_records(table_id, after=start - 1, upto=last_seq):
        if not _chain_link(record, prev_hash, out):
            pass
        prev_hash = record.hash
        if record.seq == start:
            continue  # the checkpoint's own event: the link is all it is read for
        body = record.event()
        kind = record.type
        if kind == "dealer":
            dealer = str(body.get("dealer"))
        watching = record.seq >= first_seq
        if not watching:
            fold.apply(record.seq, body)
            continue
        opened = fold.table.view().open
        who = _who(body, opened, fold, dealer)
        hands_before, dealer_before = _hands_now(fold, Applied())
        _event, applied, _derived = fold.apply(record.seq, body)
        hands_after, dealer_after = _hands_now(fold, applied)
        at = parse_recorded(record.recorded_at)
        # Each flag as the dealer's banner showed it: the words that fit its case and what the
        # rule directed at that moment (the screen's own module, so both say the same).
        flags = [
            {
                **banner(
                    flag_view(f.to_dict(), f.round, rules.words(f.rule), record.seq),
                    kind,
                    rules.words(f.rule),
                    opened,
                ),
                "not_dealt": NOT_DEALT.get(f.rule) if kind == "card" else None,
            }
            for f in applied.flags
        ]
        for f in flags:
            f["at"] = record.recorded_at
        out.flags.extend(flags)
        round_flags.extend(flags)
        moved = (
            []
            if kind == "split"
            else _moved(hands_before, hands_after, dealer_before, dealer_after)
        )
        step: dict[str, Any] = {
            "seq": record.seq,
            "type": kind,
            "text": describe_event(body),
            "event": body,
            "recorded_at": record.recorded_at,
            "local": settings.local(at),
            "utc": settings.utc(at),
            "table_time": body.get("time"),
            "who": who,
            "flags": flags,
            "moved": moved,
            "corrects": record.corrects,
        }
        if kind == "card":
            entry: dict[str, Any] = {
                "seq": record.seq,
                "card": body.get("card"),
                "deck": body.get("deck"),
                "local": settings.local(at),
                "utc": settings.utc(at),
                "source": body.get("source"),
                "to": None,
            }
            if moved:
                entry["to"] = moved[0]
            else:
                rnd = fold.table.view().round
                note = next((f["not_dealt"] for f in flags if f.get("not_dealt")), None)
                entry["not_dealt"] = note or "not dealt"
                if rnd is not None and rnd.pending_card == body.get("card"):
                    offered = entry
            out.cards.append(entry)
            step["card"] = entry
        elif offered is not None and moved:
            offered["to"] = moved[0]
            offered["not_dealt"] = (offered.get("not_dealt") or "") + f" (then {moved[0]['text']})"
            offered = None
        if kind == "wager_seen" and isinstance(body.get("box"), int):
            reading = {
                "amount": str(body.get("amount")),
                "confidence": (
                    float(Decimal(str(body["confidence"])))
                    if body.get("confidence") is not None
                    else None
                ),
            }
            out.camera.setdefault(int(body["box"]), []).append(
                {"seq": record.seq, "local": settings.local(at), **reading}
            )
        if kind == "bet" and isinstance(body.get("box"), int):
            out.bets.setdefault(int(body["box"]), []).append(
                {
                    "seq": record.seq,
                    "local": settings.local(at),
                    "player": body.get("player"),
                    "amount": str(body.get("amount")),
                    "source": body.get("source"),
                    "accepted": not applied.flags,
                }
            )
        if kind not in ("card", "wager_seen", "misread", "bet"):
            out.decisions.append(
                {
                    "seq": record.seq,
                    "type": kind,
                    "box": body.get("box"),
                    "player": body.get("player"),
                    "amount": body.get("amount"),
                    "who": who,
                    "local": settings.local(at),
                    "utc": settings.utc(at),
                    "refused": bool(applied.flags) and not applied.accepted,
                }
            )
        if applied.settled is not None and applied.settled.round == number:
            out.result = applied.settled
        step["screen"] = _screen(fold, boxes, round_flags)
        out.steps.append(step)
    if out.result is None:
        out.result = fold.table.round_result(number)
    return out


def _chain_link(record: ChainRecord, prev_hash: str | None, out: Rebuilt) -> bool:
    if not out.chain_ok:
        return False
    if record.recompute() != record.hash:
        out.chain_ok = False
        out.chain_problem = f"event {record.seq}: its hash does not match its contents"
    elif prev_hash is not None and record.prev_hash != prev_hash:
        out.chain_ok = False
        out.chain_problem = f"event {record.seq}: not chained to event {record.seq - 1}"
    return out.chain_ok


def _moved(
    before: dict[tuple[int, int], list[str]],
    after: dict[tuple[int, int], list[str]],
    dealer_before: list[str],
    dealer_after: list[str],
) -> list[dict[str, Any]]:
    """The cards an event put into hands (a split's moved card excepted)."""
    out: list[dict[str, Any]] = []
    for key, cards in after.items():
        had = before.get(key, [])
        if len(cards) <= len(had) or cards[: len(had)] != had:
            continue
        for card in cards[len(had) :]:
            box, hand = key
            out.append(
                {
                    "card": card,
                    "to": "box",
                    "box": box,
                    "hand": hand,
                    "text": f"box {box} hand {hand + 1}",
                }
            )
    if len(dealer_after) > len(dealer_before) and dealer_after[: len(dealer_before)] == (
        dealer_before
    ):
        for card in dealer_after[len(dealer_before) :]:
            out.append({"card": card, "to": "dealer", "text": "the dealer"})
    return out


def _screen(fold: Fold, boxes: int, flags: list[dict[str, Any]]) -> dict[str, Any]:
    """The dealer's screen after an event, drawn as the table's screen draws it."""
    view = fold.table.view()
    due = dict(view.due)
    rnd = view.round
    last = view.last_round.to_dict() if view.last_round is not None else None
    between = rnd is None
    seen = {
        s.box: {
            "amount": money(s.amount),
            "confidence": float(s.confidence) if s.confidence is not None else None,
        }
        for s in view.seen
    }
    return {
        "phase": due.get("phase"),
        "round": due.get("round"),
        "prompts": due.get("prompts"),
        "next_card": due.get("next_card"),
        "dealer": last.get("dealer") if between and last is not None else due.get("dealer"),
        "boxes": box_views(
            boxes,
            due,
            seen,
            last if between else None,
            flags,
            rules=fold.setup.rules,
            rescues=view.rescues,
        ),
        "last_round": last.get("round") if last else None,
        "shown_round": rnd.number if rnd is not None else (last.get("round") if last else None),
    }


def compare_with_store(
    conn: Connection,
    table_id: str,
    result: RoundResult | None,
    flags: list[dict[str, Any]],
    first_seq: int,
    last_seq: int,
) -> list[str]:
    """Where the rebuilt round differs from the rows the table's recorder derived ([] if not)."""
    if result is None:
        stored = conn.exec_driver_sql(
            "SELECT status FROM rounds WHERE table_id = %(t)s AND closed_seq >= %(a)s "
            "AND closed_seq <= %(b)s",
            {"t": table_id, "a": first_seq, "b": last_seq},
        ).first()
        if stored is not None:
            return [
                f"the table recorded a round ending in events {first_seq}-{last_seq}; "
                "the rebuilt events ended none"
            ]
        return []
    doc = result.to_dict()
    problems: list[str] = []
    stored = conn.exec_driver_sql(
        "SELECT status, dealer, hands FROM rounds WHERE table_id = %(t)s AND round = %(r)s",
        {"t": table_id, "r": result.round},
    ).first()
    if stored is None:
        problems.append(f"the table recorded no round {result.round}")
    else:
        if stored[0] != doc["status"]:
            problems.append(f"status: the table recorded {stored[0]}, rebuilt {doc['status']}")
        if json.loads(stored[1]) != doc["dealer"]:
            problems.append("the dealer's hand differs from the table's record")
        if json.loads(stored[2]) != doc["hands"]:
            problems.append("the hands differ from the table's record")
    rows = conn.exec_driver_sql(
        "SELECT player, box, hand, kind, staked, returned, net FROM settlements "
        "WHERE table_id = %(t)s AND round = %(r)s ORDER BY idx",
        {"t": table_id, "r": result.round},
    ).all()
    mine = [
        (s["player"], s["box"], s["hand"], s["kind"], s["staked"], s["returned"], s["net"])
        for s in doc["settlements"]
    ]
    if [tuple(r) for r in rows] != mine:
        problems.append("the settlements differ from the table's record")
    stored_flags = conn.exec_driver_sql(
        "SELECT seq, rule, message FROM flags WHERE table_id = %(t)s AND seq >= %(a)s "
        "AND seq <= %(b)s ORDER BY seq, idx",
        {"t": table_id, "a": first_seq, "b": last_seq},
    ).all()
    if [(int(r[0]), r[1], r[2]) for r in stored_flags] != [
        (f["seq"], f["rule"], f["message"]) for f in flags
    ]:
        problems.append("the flags differ from the table's record")
    return problems


def money_of(result: RoundResult | None) -> dict[str, str]:
    if result is None:
        return {"wagered": "0.00", "result": "0.00"}
    wagered, house, _hands, _boxes = round_money(result)
    cent = Decimal("0.01")
    return {"wagered": str(wagered.quantize(cent)), "result": str(house.quantize(cent))}


def times(settings: FloorSettings, moment: datetime | None) -> dict[str, str]:
    return {"local": settings.local(moment), "utc": settings.utc(moment)}
