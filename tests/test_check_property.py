"""One question, one answer: what the engine's check allows is what the engine carries out.

Over random tables (three games, random wagers, random decisions taken and cards dealt, random
irregular events along the way), at random moments, for many candidate events legal and not:

* every decision the screen offers (``TableView.open``, the buttons) passes ``Table.check``, and
  the engine carries it out when it is applied;
* whatever ``check`` allows, the engine carries out (never refuses it);
* for the decisions the players and the dealer take in the round (``stand`` ... ``peek``, and
  ``bet``): whatever the engine would carry out, ``check`` allows — the screen refuses nothing
  the engine takes. (A new shoe mid-round, a void before the deal and a 16.7 reshuffle of a
  shoe not short are not offered; a replay that holds one anyway is carried out and flagged.)

"Carries out" is judged independently of ``check``, from the engine's own behaviour on a copy
of the table: an event is *refused* when applying it raises a flag and changes nothing of the
table's state (the rooms' rule: a refused event is flagged and ignored).
"""

from __future__ import annotations

import os
import random
from decimal import Decimal
from typing import Any

from engine_dsl import new_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cards import deck
from controller.engine import Kind, Table
from controller.events import ScenarioError, parse_event

GAMES = ("pontoon-nz-2000", "blackjack-nz-1994", "blackjack")
PLAYERS = ("ann", "bob")
# The decisions taken in the round: for these the two directions must agree.
PROCEDURES = frozenset({"shuffle", "void", "reshuffle_discards"})
PEOPLES = frozenset(str(k) for k in Kind) - PROCEDURES | {"bet"}
CANDIDATE_KINDS = sorted(PEOPLES | PROCEDURES - {"shuffle"})


def _state(table: Table) -> dict[str, Any]:
    """The table's state less what a refused event may add (its sequence number, its flag)."""
    snap = table.snapshot()
    for key in ("seq", "digest", "desk", "unassigned"):
        snap.pop(key, None)
    rnd = snap.get("round")
    if rnd is not None:
        rnd["flags"] = []
        if rnd["phase"] == "betting" and not rnd["boxes"]:
            # A bet refused between rounds opens the round its flag belongs to (so the replay
            # lists the flag there); a round with no wager in it is no round yet.
            snap["round"] = None
    for r in snap.get("rounds") or []:
        r["flags"] = []
    return snap


def outcome(table: Table, ev: dict[str, Any]) -> str:
    """What the engine does with ``ev`` now, on a copy: ``refused`` (a flag, nothing changed),
    ``taken`` (the table changed) or ``nothing`` (no flag, no change: a repeated "no more
    bets", a hit that the next card is anyway)."""
    copy = Table.restore(table.setup, table.snapshot())
    before = _state(copy)
    applied = copy.apply(parse_event(ev))
    if _state(copy) != before:
        return "taken"
    return "refused" if applied.flags else "nothing"


def candidates(table: Table, rng: random.Random) -> list[dict[str, Any]]:
    """Events legal and not: the screen's decisions, and others beside them."""
    view = table.view()
    out: list[dict[str, Any]] = [d.event() for d in view.open]
    for d in view.open:
        if d.max is not None:
            out.append(d.event(d.max + Decimal("0.01")))
        if d.min is not None and d.min > Decimal("0.01"):
            out.append(d.event(d.min - Decimal("0.01")))
    players = list(PLAYERS)
    if view.round is not None:
        players += [b.controller for b in view.round.boxes]
    for _ in range(16):
        kind = rng.choice(CANDIDATE_KINDS)
        ev: dict[str, Any] = {"type": kind}
        if kind in ("offer_surrender", "surrender", "hit", "stand", "refuse", "absent", "rescue"):
            ev["box"] = rng.randint(1, 4)
        if kind in ("double", "insurance", "bet"):
            ev["box"] = rng.randint(1, 4)
            ev["player"] = rng.choice(players)
            ev["amount"] = rng.choice(["0", "2.5", "5", "10", "25", "1000", "2000"])
        if kind == "rescue":
            ev["player"] = rng.choice(players)
        if kind == "split":
            ev["box"] = rng.randint(1, 4)
            if rng.random() < 0.4:
                ev["player"] = rng.choice(players)
        if kind == "void" and rng.random() < 0.5:
            ev["box"] = rng.randint(1, 4)
        if kind == "reshuffle_discards":
            ev["cut_card"] = None
        out.append(ev)
    return out


def walk(game: str, seed: int, steps: int) -> list[Table]:
    """A random table's life: the moments to probe."""
    rng = random.Random(seed)
    table = new_table(game, boxes=4)
    decks = table.rules.decks
    cards = deck(table.rules.excluded_ranks) * decks
    rng.shuffle(cards)
    table.apply(parse_event({"type": "shuffle", "decks": decks, "cut_card": len(cards) - 40}))
    probes: list[Table] = []
    for step in range(steps):
        view = table.view()
        roll = rng.random()
        if view.round is None or (str(view.phase) == "betting" and roll < 0.4):
            ev: dict[str, Any] = {
                "type": "bet",
                "box": rng.randint(1, 3),
                "player": rng.choice(PLAYERS),
                "amount": rng.choice(["5", "10", "25"]),
            }
        elif roll < 0.08:
            ev = rng.choice(candidates(table, rng))  # now and then, anything at all
        elif roll < 0.55 and view.open:
            d = rng.choice(view.open)
            ev = d.event()
            if d.kind is Kind.SHUFFLE:
                cards = deck(table.rules.excluded_ranks) * decks
                rng.shuffle(cards)
                ev = {"type": "shuffle", "decks": decks, "cut_card": len(cards) - 40}
            elif d.kind is Kind.RESHUFFLE_DISCARDS:
                continue
        else:
            if not cards:
                cards = deck(table.rules.excluded_ranks) * decks
                rng.shuffle(cards)
            ev = {"type": "card", "card": cards.pop()}
        try:
            table.apply(parse_event(ev))
        except ScenarioError:
            continue
        if step % 7 == 3:
            probes.append(Table.restore(table.setup, table.snapshot()))
    return probes


# FLOORCTL_SLOW_CHECKS=1 runs many more tables (the suite's run takes seconds).
EXAMPLES = 200 if os.environ.get("FLOORCTL_SLOW_CHECKS") else 6


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10**9))
def test_the_screen_offers_exactly_what_the_engine_accepts(game: str, seed: int) -> None:
    rng = random.Random(seed ^ 0x5EED)
    for table in walk(game, seed, 50):
        offered = {repr(sorted(d.event().items())) for d in table.view().open}
        for ev in candidates(table, rng):
            try:
                event = parse_event(ev)
            except ScenarioError:
                continue
            allowed = table.check(event) is None
            did = outcome(table, ev)
            key = repr(sorted(ev.items()))
            why = table.check(event)
            where = f"{game} seed {seed} at event {table.seq}: {ev}"
            if key in offered:
                assert allowed, f"offered but refused by check: {where}: {table.check(event)}"
            if allowed:
                assert did != "refused", f"check allowed, the engine refused: {where}"
            elif ev["type"] in PEOPLES:
                assert did != "taken", f"the engine takes it, check refused: {where}: {why}"
