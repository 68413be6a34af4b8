"""Table.snapshot() and Table.restore(): the engine's state as plain data, and back.

The property: for random event streams (legal and illegal), cut at a random point, restoring
the snapshot (through JSON text) and going on gives exactly what never stopping gives: the same
Applied results event by event, the same due() and the same final result().
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from engine_dsl import new_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import GAMES, bot_shift, event

from controller.cards import deck
from controller.engine import Applied, SnapshotError, Table, desk
from controller.engine.snapshot import digest
from controller.events import parse_event
from controller.rules import load_ruleset


def applied_form(a: Applied) -> tuple[Any, ...]:
    return (
        [(f.to_dict(), f.round, f.seq) for f in a.flags],
        a.settled.to_dict() if a.settled is not None else None,
        a.accepted,
    )


def plain(obj: Any) -> bool:
    """Only str, int, bool, None, lists and dicts with str keys."""
    if obj is None or isinstance(obj, (str, bool, int)):
        return not isinstance(obj, float)
    if isinstance(obj, list):
        return all(plain(x) for x in obj)
    if isinstance(obj, dict):
        return all(isinstance(k, str) and plain(v) for k, v in obj.items())
    return False


def through_json(table: Table) -> Table:
    snap = table.snapshot()
    assert plain(snap)
    text = json.dumps(snap, sort_keys=True)
    return Table.restore(table.setup, json.loads(text))


def rules_for(game: str) -> dict[str, Any] | None:
    return {"decks": 2} if game != "blackjack" else None


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(GAMES),
    events=st.lists(event, max_size=90),
    cut=st.floats(0, 1),
    keep=st.sampled_from([None, 1, 3]),
)
def test_restoring_a_snapshot_and_going_on_is_the_same_as_never_stopping(
    game: str, events: list[dict[str, Any]], cut: float, keep: int | None
) -> None:
    parsed = [parse_event(e) for e in events]
    at = int(cut * len(parsed))
    straight = new_table(game, rules_for(game))
    straight.keep_rounds = keep
    for ev in parsed[:at]:
        straight.apply(ev)
    resumed = through_json(straight)
    assert resumed.snapshot() == straight.snapshot()
    assert resumed.due().to_dict() == straight.due().to_dict()
    for ev in parsed[at:]:
        assert applied_form(resumed.apply(ev)) == applied_form(straight.apply(ev))
        assert resumed.due().to_dict() == straight.due().to_dict()
        assert resumed.open_decisions() == straight.open_decisions()
    assert resumed.result() == straight.result()
    assert resumed.snapshot() == straight.snapshot()


@settings(max_examples=25, deadline=None)
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 2**32), cut=st.integers(0, 400))
def test_legal_play_restored_mid_round_goes_on_identically(game: str, seed: int, cut: int) -> None:
    _table, log = bot_shift(game, seed, rounds=6)
    events = [parse_event(e) for e in log]
    at = min(cut, len(events))
    straight = new_table(game)
    for ev in events[:at]:
        straight.apply(ev)
    resumed = through_json(straight)
    for ev in events[at:]:
        assert applied_form(resumed.apply(ev)) == applied_form(straight.apply(ev))
    assert resumed.result() == straight.result()


def _mid_round() -> Table:
    table = new_table()
    for e in (
        {"type": "dealer", "dealer": "dee"},
        {"type": "shuffle", "decks": 6, "cut_card": 200},
        {"type": "bet", "box": 1, "player": "ann", "amount": "12.50"},
        {"type": "bet", "box": 1, "player": "bob", "amount": 10},
        {"type": "no_more_bets"},
        {"type": "card", "card": "8S"},
        {"type": "card", "card": "AD"},
        {"type": "card", "card": "8H"},
        {"type": "offer_insurance"},
        {"type": "insurance", "box": 1, "player": "bob", "amount": 5},
        {"type": "split", "box": 1},
    ):
        table.apply(parse_event(e))
    return table


def test_a_snapshot_is_deterministic_and_names_what_it_was_taken_under() -> None:
    a, b = _mid_round(), _mid_round()
    assert a.snapshot() == b.snapshot() == a.snapshot()
    snap = a.snapshot()
    assert snap["format"] == "floorctl-engine-snapshot" and snap["version"] == 3
    assert snap["setup"]["game"] == "pontoon-nz-2000" and snap["setup"]["table_id"] == "T"
    assert snap["round"]["boxes"][0]["bets"] == [["ann", "12.5"], ["bob", "10"]]
    assert snap["digest"] == digest({k: v for k, v in snap.items() if k != "digest"})


def _resign(snap: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in snap.items() if k != "digest"}
    return {**body, "digest": digest(body)}


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (lambda s: None, "not an engine snapshot"),
        (lambda s: [s], "not an engine snapshot"),
        (lambda s: {**s, "format": "something-else"}, "not an engine snapshot"),
        (lambda s: _resign({**s, "version": 1}), "version 1"),
        (lambda s: {**s, "seq": s["seq"] + 1}, "digest does not match"),
        (lambda s: {k: v for k, v in s.items() if k != "digest"}, "digest"),
        (lambda s: _resign({**s, "seq": "eleven"}), "seq: 'eleven' is not a whole number"),
        (
            lambda s: _resign({**s, "round": {**s["round"], "dealer": ["ZZ"]}}),
            "round.dealer[0]: 'ZZ' is not a card code",
        ),
        (
            lambda s: _resign({**s, "round": {**s["round"], "phase": "lunch"}}),
            "round.phase: 'lunch'",
        ),
        (lambda s: _resign({k: v for k, v in s.items() if k != "shoe"}), '"shoe" is missing'),
        (
            lambda s: _resign({**s, "discards": ["8S", 7]}),
            "discards[1]: 7 is not a card code",
        ),
        (
            lambda s: _resign({**s, "setup": {**s["setup"], "table_id": "T9"}}),
            "another table setup: table_id 'T9'",
        ),
        (
            lambda s: _resign({**s, "setup": {**s["setup"], "game": "blackjack"}}),
            "another table setup: game",
        ),
    ],
)
def test_a_corrupt_or_foreign_snapshot_is_refused_naming_why(spoil: Any, says: str) -> None:
    table = _mid_round()
    with pytest.raises(SnapshotError, match=re.escape(says)):
        Table.restore(table.setup, spoil(table.snapshot()))


def _opened_mid_inspection() -> Table:
    """A day opened, a short deck inspected, a shoe loaded, dealt, ended, read out and
    reconciled, the next shoe loaded and dealt from, a deck under inspection."""
    table = new_table(rules={"decks": 2})
    deck_a = [c for c in deck("T") if c != "7H"]
    events: list[dict[str, Any]] = [
        {"type": "open_table", "by": ["dee", "sam"]},
        {"type": "dealer", "dealer": "dee"},
        {"type": "inspect", "deck": "AAAA1", "by": ["dee"]},
        *({"type": "card", "card": c, "deck": "AAAA1"} for c in deck_a),
        {"type": "inspect_end"},
        {"type": "opening_step", "step": "spread", "actor": "dee"},
        {"type": "shuffle", "decks": 2, "cut_card": 60, "deck_serials": ["AAAA1", "BBBB2"]},
        {"type": "bet", "box": 1, "player": "ann", "amount": 10},
        {"type": "no_more_bets"},
        *({"type": "card", "card": c, "deck": "BBBB2"} for c in ("9S", "8D", "KH", "5C")),
        {"type": "shoe_end"},
        {"type": "card", "card": "QS", "deck": "AAAA1"},
        {"type": "shuffle", "decks": 2, "cut_card": 60, "deck_serials": ["CCCC3", "BBBB2"]},
        {"type": "bet", "box": 2, "player": "bob", "amount": 10},
        {"type": "no_more_bets"},
        {"type": "card", "card": "9S", "deck": "CCCC3"},
        {"type": "inspect", "deck": "DDDD4"},
    ]
    for e in events:
        table.apply(parse_event(e))
    return table


@pytest.mark.parametrize("build", [_mid_round, _opened_mid_inspection])
def test_every_field_changed_is_caught(build: Any) -> None:
    # Any one value changed and the digest left as it was: refused as corrupt. Any one number,
    # flag or empty field changed to text and the digest made to match: refused as malformed.
    table = build()
    snap = table.snapshot()
    leaves: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, (dict, list)) and value:
                walk(value)
            elif key != "digest":
                leaves.append((node, key))

    walk(snap)
    assert len(leaves) > 90
    typed = 0
    for node, key in leaves:
        before = node[key]
        node[key] = "x" if not isinstance(before, str) else before + "x"
        with pytest.raises(SnapshotError, match=r"digest|not an engine snapshot|version"):
            Table.restore(table.setup, json.loads(json.dumps(snap)))
        if not isinstance(before, str) and key != "version":
            typed += 1
            with pytest.raises(SnapshotError, match=r"is not|is missing|not an|another table"):
                Table.restore(table.setup, _resign(json.loads(json.dumps(snap))))
        node[key] = before
    assert typed > 50
    assert Table.restore(table.setup, snap).snapshot() == snap


def test_a_snapshot_under_another_version_of_the_rule_set_is_refused() -> None:
    table = _mid_round()
    changed = dataclasses.replace(
        table.setup, rules=load_ruleset("pontoon-nz-2000", {"dealer_hits_soft_17": True})
    )
    assert changed.to_dict() == table.setup.to_dict()  # the setup line alone looks the same
    with pytest.raises(SnapshotError, match="another version of rule set"):
        Table.restore(changed, table.snapshot())


def test_keep_rounds_bounds_a_live_table_and_its_snapshot() -> None:
    live = new_table("pontoon-nz-2000")
    live.keep_rounds = 2
    full = new_table("pontoon-nz-2000")
    sizes: list[int] = []
    _t, log = bot_shift("pontoon-nz-2000", 11, rounds=160)
    for obj in log:
        ev = parse_event(obj)
        live.apply(ev)
        settled = full.apply(ev).settled
        if settled is not None:
            snap = live.snapshot()
            # The desk is bounded by count (flags waiting to be seen, misreads): checked below.
            sizes.append(len(json.dumps({k: v for k, v in snap.items() if k != "desk"})))
    assert full.rounds_played == live.rounds_played == 160
    assert len(full.rounds) == 160 and [r.round for r in live.rounds] == [159, 160]
    assert live.rounds == full.rounds[-2:]
    # The snapshot's size follows the shoe (its discards), not the table's age.
    assert max(sizes[80:]) <= 1.25 * max(sizes[:80])
    whole = {k: v for k, v in full.snapshot().items() if k != "desk"}
    assert len(json.dumps(whole)) > 10 * max(sizes)
    # The bot never offers surrender, so every round flags 16.12: the flags waiting to be seen
    # stop at the desk's bound, the oldest first.
    assert len(live.desk.pending) == desk.MAX_PENDING == len(full.desk.pending)
    assert min(live.desk.pending)[0] > 1


def test_keep_rounds_must_be_at_least_one_and_restore_may_change_it() -> None:
    setup = new_table().setup
    with pytest.raises(ValueError, match="keep_rounds"):
        Table(setup, keep_rounds=0)
    table, _log = bot_shift("pontoon-nz-2000", 5, rounds=6)
    assert len(Table.restore(table.setup, table.snapshot(), keep_rounds=2).rounds) == 2
    assert Table.restore(table.setup, table.snapshot()).keep_rounds is None


def test_a_flag_noticed_after_a_round_joins_it_on_a_bounded_table() -> None:
    table = new_table()
    table.keep_rounds = 1
    for e in (
        {"type": "shuffle", "decks": 6, "cut_card": 200},
        {"type": "bet", "box": 1, "player": "ann", "amount": 10},
        {"type": "no_more_bets"},
        {"type": "card", "card": "AS"},
        {"type": "card", "card": "7D"},
        {"type": "card", "card": "KH"},
        {"type": "card", "card": "8C"},
        {"type": "card", "card": "3C"},
    ):
        table.apply(parse_event(e))
    assert [f.rule for f in table.rounds[-1].flags] == ["16.3"]
    resumed = Table.restore(table.setup, table.snapshot())
    assert [f.rule for f in resumed.rounds[-1].flags] == ["16.3"]
