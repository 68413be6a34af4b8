"""The demo's dealer bot: plays the dealer's (and the players') part from `table.due()`.

It reads what the engine says is due and does it: calls "no more bets", draws the next card
when one is due, makes the offers the engine prompts for, and takes each decision the engine
offers the way a sensible player would (the game's strategy table from
`controller.sim.strategy`; back-bettors follow doubles and splits at random). It never
decides what the rules allow: it only picks among the decisions `due()` lists.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import structlog

from controller.service.core import TableService
from controller.sim.strategy import Strategy, StrategyError, load_strategy, strategy_path

log = structlog.get_logger("floorctl.bot")

PLAYERS = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy")
_SURRENDER_PROMPT = re.compile(r"offer surrender to box (\d+)")

Wagers = dict[int, Decimal]


class DealerBot:
    """One step at a time (`step()`), or in its own thread (`start()`)."""

    def __init__(
        self,
        service: TableService,
        *,
        draw: Callable[[], None],
        place_wagers: Callable[[Wagers], None],
        new_shoe: Callable[[], None],
        rng: random.Random,
        pace: float = 0.5,
        settle_pause: float = 2.0,
        strategy: Strategy | None = None,
        max_rounds: int = 0,
    ) -> None:
        self.service = service
        self.draw = draw
        self.place_wagers = place_wagers
        self.new_shoe = new_shoe
        self.rng = rng
        self.pace = pace
        self.settle_pause = settle_pause
        self.max_rounds = max_rounds  # 0: no limit; else no new round once this many ended
        self.strategy = strategy if strategy is not None else _default_strategy(service)
        self._declined: set[tuple[Any, ...]] = set()
        self._placed: Wagers = {}
        self._placed_at = 0.0
        self._settled_at: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.steps = 0

    # ----- running ----------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dealer-bot", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                did = self.step()
            except Exception:
                log.exception("dealer bot step failed")
                did = "error"
            self._stop.wait(self.pace if did != "wait" else 0.05)

    # ----- one step ---------------------------------------------------------------------

    def step(self) -> str:
        """Do the next thing the table needs; returns what was done ("wait" if nothing)."""
        due = self.service.due()
        phase = due.get("phase")
        prompts = [str(p) for p in due.get("prompts") or []]
        self.steps += 1
        if phase == "idle":
            return self._between_rounds(due, prompts)
        self._settled_at = None
        if phase == "betting":
            return self._betting(due)
        if "offer insurance" in prompts:
            return self._send({"type": "offer_insurance"})
        for prompt in prompts:
            m = _SURRENDER_PROMPT.search(prompt)
            if m:
                return self._send({"type": "offer_surrender", "box": int(m.group(1))})
        decisions: list[dict[str, Any]] = list(due.get("decisions") or [])
        done = self._window_decision(due, decisions)
        if done:
            return done
        done = self._play_decision(due, decisions)
        if done:
            return done
        if due.get("next_card"):
            self.draw()
            return "draw"
        return "wait"

    def _between_rounds(self, due: Mapping[str, Any], prompts: list[str]) -> str:
        now = time.monotonic()
        if self.service.table.rounds and self._settled_at is None:
            self._settled_at = now
            self._placed = {}
            self.place_wagers({})  # the dealer pays and collects; players pick up their chips
        if self._settled_at is not None and now - self._settled_at < self.settle_pause:
            return "wait"  # the dealer pays and collects; the screen shows the payouts
        if self.max_rounds and len(self.service.table.rounds) >= self.max_rounds:
            return "wait"
        if due.get("shoe") is None or any(p.startswith("shuffle") for p in prompts):
            self.place_wagers({})  # chips collected before the shuffle
            self.new_shoe()
            return "shuffle"
        if not self._placed:
            self._placed = self._choose_wagers()
            self._placed_at = now
            self.place_wagers(self._placed)
            return "wagers"
        if now - self._placed_at > 10:  # the wagers never arrived (camera down?): place again
            self._placed = {}
        return "wait"

    def _betting(self, due: Mapping[str, Any]) -> str:
        boxes = {b["box"]: b for b in due.get("boxes") or []}
        arrived = all(
            box in boxes and sum(Decimal(str(a)) for a in boxes[box]["bets"].values()) == amount
            for box, amount in self._placed.items()
        )
        if not arrived and time.monotonic() - self._placed_at < 3:
            return "wait"  # the camera reports a wager once it has been still for a moment
        self.service.sync_camera_bets()
        return self._send({"type": "no_more_bets"})

    def _choose_wagers(self) -> Wagers:
        setup = self.service.setup
        count = self.rng.randint(1, min(4, setup.boxes))
        boxes = sorted(self.rng.sample(range(1, setup.boxes + 1), count))
        low = max(setup.min_bet, Decimal(5))
        top = min(setup.max_bet, Decimal(100))
        steps = [
            a for a in (Decimal(v) for v in (5, 10, 15, 20, 25, 30, 50, 75, 100)) if low <= a <= top
        ] or [low]
        return {box: self.rng.choice(steps) for box in boxes}

    def _window_decision(self, due: Mapping[str, Any], decisions: list[dict[str, Any]]) -> str:
        """Insurance and rescue: each player's own choice, open out of turn."""
        rnd = due.get("round")
        up = _up_card(due)
        for d in decisions:
            key = (rnd, d.get("action"), d.get("box"), d.get("hand"), d.get("player"))
            if key in self._declined:
                continue
            if d["action"] == "insurance":
                self._declined.add(key)
                if self.strategy is not None and self.strategy.insurance:
                    return self._send(
                        {
                            "type": "insurance",
                            "box": d["box"],
                            "player": d["player"],
                            "amount": d["max"],
                        }
                    )
            elif d["action"] == "rescue":
                self._declined.add(key)
                total = _hand_total(due, d["box"], d.get("hand", 0))
                if (
                    up
                    and total is not None
                    and self.strategy is not None
                    and self.strategy.rescues(total, up)
                ):
                    return self._send({"type": "rescue", "box": d["box"], "player": d["player"]})
        return ""

    def _play_decision(self, due: Mapping[str, Any], decisions: list[dict[str, Any]]) -> str:
        rnd = due.get("round")
        nxt = due.get("next_card") or {}
        controllers = {b["box"]: b.get("controller") for b in due.get("boxes") or []}
        # Back-bettors following a double or a split: each their own choice.
        for d in decisions:
            if d["action"] not in ("double", "split"):
                continue
            if d.get("player") == controllers.get(d.get("box")):
                continue
            key = (rnd, d["action"], d.get("box"), d.get("hand"), d.get("player"))
            if key in self._declined:
                continue
            self._declined.add(key)
            if self.rng.random() < 0.5:
                if d["action"] == "double":
                    return self._send(
                        {
                            "type": "double",
                            "box": d["box"],
                            "player": d["player"],
                            "amount": d["max"],
                        }
                    )
                return self._send({"type": "split", "box": d["box"], "player": d["player"]})
        # 16.4: an exposed error card offered to the box in play.
        offered = {d["action"] for d in decisions if d.get("box") == nxt.get("box")}
        if not nxt and any(d["action"] == "refuse" for d in decisions):
            d = next(d for d in decisions if d["action"] == "refuse")
            if self.rng.random() < 0.8:
                return self._send({"type": "hit", "box": d["box"]})
            return self._send({"type": "refuse", "box": d["box"]})
        if any(d["action"] == "peek" for d in decisions):
            return self._send({"type": "peek"})
        own = [
            d
            for d in decisions
            if d.get("box") == nxt.get("box")
            and d["action"] in ("stand", "hit", "double", "split", "surrender")
            and d.get("player") == controllers.get(d.get("box"))
        ]
        if not own:
            return ""
        box, hand = nxt.get("box"), nxt.get("hand", 0)
        cards = _hand_cards(due, box, hand)
        up = _up_card(due)
        choice = "stand"
        if self.strategy is not None and up and cards:
            choice = self.strategy.decide(cards, up, offered - {"absent"})
        elif "hit" in offered and cards and _hand_total(due, box, hand) in range(0, 17):
            choice = "hit"
        if choice == "hit":
            self.draw()
            return "draw"
        if choice == "double":
            d = next(d for d in own if d["action"] == "double")
            return self._send(
                {"type": "double", "box": box, "player": d["player"], "amount": d["max"]}
            )
        return self._send({"type": choice, "box": box})

    def _send(self, event: dict[str, Any]) -> str:
        result = self.service.submit(event, source="dealer")
        if not result.ok:
            log.warning("dealer bot input refused", event=event, error=result.error)
        return str(event["type"])


def _default_strategy(service: TableService) -> Strategy | None:
    try:
        return load_strategy(strategy_path(service.setup.game))
    except StrategyError as exc:
        log.warning("no strategy table: the bot stands on 17", error=str(exc))
        return None


def _box(due: Mapping[str, Any], number: Any) -> Mapping[str, Any] | None:
    for b in due.get("boxes") or []:
        if b.get("box") == number:
            return b  # type: ignore[no-any-return]
    return None


def _hand_cards(due: Mapping[str, Any], box: Any, hand: Any) -> list[str]:
    view = _box(due, box)
    if view is None:
        return []
    for h in view.get("hands") or []:
        if h.get("hand") == hand:
            return list(h.get("cards") or [])
    return []


def _hand_total(due: Mapping[str, Any], box: Any, hand: Any) -> int | None:
    view = _box(due, box)
    if view is None:
        return None
    for h in view.get("hands") or []:
        if h.get("hand") == hand and isinstance(h.get("total"), int):
            return int(h["total"])
    return None


def _up_card(due: Mapping[str, Any]) -> str | None:
    cards = (due.get("dealer") or {}).get("cards") or []
    return str(cards[0]) if cards else None
