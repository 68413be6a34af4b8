"""The demo's dealer bot plays whole rounds from the engine's typed decisions alone.

A stand-in for the table service (the real engine, no store): the bot draws from a shuffled
shoe, places wagers with back-bettors, and takes every decision it is offered. Legal play
raises no flag, every round settles, and the events replay to the same result.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from engine_dsl import new_table

from controller.cards import deck
from controller.engine import Flag, Table, TableView
from controller.events import parse_event
from controller.replay import replay_dicts
from controller.service.bot import DealerBot


@dataclass
class Result:
    ok: bool
    error: str = ""


class FakeService:
    """What the bot needs of the table service: the table's view, submit."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.setup = table.setup
        self._lock = threading.RLock()
        self.log: list[dict[str, Any]] = []
        self.flags: list[Flag] = []

    def submit(self, event: dict[str, Any], *, source: str, **_: Any) -> Result:
        with self._lock:
            self.log.append(dict(event))
            applied = self.table.apply(parse_event(event))
            self.flags.extend(applied.flags)
            return Result(ok=True)

    def close_betting(self) -> list[Any]:
        return []

    def blocking(self) -> dict[str, Any] | None:
        return None  # no dealer sign-in here: a flag does not hold the table

    def view(self) -> TableView:
        with self._lock:
            return self.table.view()


def play(game: str, seed: int, rounds: int) -> FakeService:
    table = new_table(game, rules={"surrender": True} if game == "blackjack" else None)
    service = FakeService(table)
    rng = random.Random(seed)
    cards: list[str] = []

    def new_shoe() -> None:
        cards[:] = deck(table.rules.excluded_ranks) * table.rules.decks
        rng.shuffle(cards)
        service.submit({"type": "shuffle", "decks": table.rules.decks, "cut_card": 150}, source="x")

    full = len(deck(table.rules.excluded_ranks)) * table.rules.decks

    def cut_card_next() -> None:
        if len(cards) == full - 150 and not (table.shoe and table.shoe.cut_out):
            service.submit({"type": "cut_card"}, source="shoe")

    def draw() -> None:
        cut_card_next()
        service.submit({"type": "card", "card": cards.pop(0)}, source="shoe")

    def place(wagers: dict[int, Decimal]) -> None:
        for box, amount in sorted(wagers.items()):
            back = Decimal(5) if amount >= 10 and rng.random() < 0.5 else Decimal(0)
            seated = {"type": "bet", "box": box, "player": f"p{box}", "amount": str(amount - back)}
            service.submit(seated, source="x")
            if back:  # a back-bettor on the box: the box's chips add up to what was placed
                service.submit(
                    {"type": "bet", "box": box, "player": f"b{box}", "amount": str(back)},
                    source="x",
                )

    bot = DealerBot(
        service,  # type: ignore[arg-type]
        draw=draw,
        place_wagers=place,
        new_shoe=new_shoe,
        rng=rng,
        pace=0,
        settle_pause=0,
        max_rounds=rounds,
    )
    for _ in range(rounds * 60):
        if table.rounds_played >= rounds:
            break
        if table.current_round is None:
            cut_card_next()  # the cutting card next between rounds: it comes out, a shuffle follows
        bot.step()
    return service


@pytest.mark.parametrize("game", ["pontoon-nz-2000", "blackjack-nz-1994", "blackjack"])
def test_the_bot_plays_legal_rounds_from_the_typed_decisions(game: str) -> None:
    service = play(game, seed=3, rounds=25)
    table = service.table
    assert table.rounds_played == 25
    assert service.flags == []  # the bot took only what was open: nothing refused
    assert all(r.status == "settled" for r in table.rounds)
    kinds = {e["type"] for e in service.log}
    assert {"no_more_bets", "card", "stand", "shuffle"} <= kinds
    setup = table.setup.to_dict()
    assert replay_dicts([setup, *service.log])["rounds"] == table.result()["rounds"]


def test_the_bot_answers_back_bettors_insurance_and_offers() -> None:
    kinds: set[str] = set()
    for seed in range(4):
        service = play("pontoon-nz-2000", seed=seed, rounds=40)
        assert service.flags == []
        kinds |= {e["type"] for e in service.log}
        players = {(e["type"], e.get("player", "")[:1]) for e in service.log}
        kinds |= {f"{t}:back" for t, p in players if p == "b" and t in ("double", "split")}
    assert {"offer_surrender", "offer_insurance", "double", "split"} <= kinds
    assert {"double:back", "split:back"} <= kinds
