"""The demo's chip tray: a gaming day of counts, a fill, buy-ins, a shift count, the closer and
the drop, as the pit does them between rounds.

The demo has no physical tray, so it keeps one: it holds what the table's records explain (the
engine's own figure), less whatever the dealer mispaid. A mispay (``mispay``: the dealer pays
that much too much in round ``mispay_round``) is therefore in the chips at the next count, and
the table's reconciliation finds it there: a ``tray`` flag naming the amount.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

import structlog

from controller.service.core import TableService

log = structlog.get_logger("floorctl.demo.tray")

DENOMINATIONS = tuple(Decimal(d) for d in ("1000", "500", "100", "25", "5", "1", "0.5", "0.01"))
OPENING = Decimal(20_000)
BUY_INS = (50, 100, 100, 200, 300, 500)


def chips_for(amount: Decimal) -> dict[str, int]:
    """Chips worth exactly ``amount``, the largest first."""
    out: dict[str, int] = {}
    for value in DENOMINATIONS:
        n, amount = divmod(amount, value)
        if n:
            out[format(value.normalize(), "f")] = int(n)
    return out or {"1": 0}


class TrayDay:
    """What the pit does at the table between rounds, one event a step."""

    def __init__(
        self,
        service: TableService,
        rng: random.Random,
        *,
        dealer: str,
        supervisor: str,
        mispay: Decimal | None = None,
        mispay_round: int = 2,
        fill_at: int = 3,
        check_every: int = 6,
    ) -> None:
        self.service = service
        self.rng = rng
        self.dealer = dealer
        self.supervisor = supervisor
        self.mispay = mispay
        self.mispay_round = mispay_round
        self.fill_at = fill_at
        self.check_every = check_every
        self.opened = self.closed = self.dropped = self.filled = self.mispaid = False
        self.checked = 0  # the rounds played at the last check count
        self.bought = -1  # the rounds played at the last buy-in
        self.short = Decimal(0)  # mispaid since the last count: not in the tray
        self.buy_ins = Decimal(0)
        self.slip = 5000 + rng.randrange(1000) * 10

    @property
    def done(self) -> bool:
        return self.dropped

    def _submit(self, event: dict[str, Any], source: str) -> str:
        actor = self.dealer if source == "dealer" else self.supervisor
        result = self.service.submit(event, source=source, actor=actor)
        if not result.ok:
            log.warning("demo tray input refused", input=event, error=result.error)
        return str(event.get("kind") or event["type"])

    def _count(self, kind: str) -> str:
        expected = self.service.table.tray.expected()
        held = (OPENING if expected is None else expected) - self.short
        self.short = Decimal(0)
        event: dict[str, Any] = {
            "type": "tray_count",
            "kind": kind,
            "chips": chips_for(held),
            "by": [self.dealer, self.supervisor],
        }
        return self._submit(event, "supervisor")

    def step(self, played: int, last: int) -> str | None:
        """The next thing the pit does with ``played`` rounds done (``last``: the day's last
        round, 0 for none); None when nothing is due."""
        if not self.opened:
            self.opened = True
            return self._count("opener")
        if self.mispay is not None and not self.mispaid and played >= self.mispay_round:
            self.mispaid = True
            self.short += self.mispay
            log.warning("demo mispay", round=self.mispay_round, amount=str(self.mispay))
        if last and played >= last:
            if not self.closed:
                self.closed = True
                return self._count("closer")
            if not self.dropped:
                self.dropped = True
                drop = {
                    "type": "drop_count",
                    "amount": str(self.buy_ins),
                    "by": ["count-1", "count-2"],
                }
                return self._submit(drop, "supervisor")
            return None
        if not self.filled and played >= self.fill_at:
            self.filled = True
            self.slip += 1
            event: dict[str, Any] = {
                "type": "fill",
                "slip": self.slip,
                "chips": {"1000": 5},
                "by": ["runner-1", self.supervisor, self.dealer],
            }
            return self._submit(event, "supervisor")
        if played and played % self.check_every == 0 and self.checked != played:
            self.checked = played
            return self._count("check")
        if played != self.bought and self.rng.random() < 0.3:
            self.bought = played
            amount = Decimal(self.rng.choice(BUY_INS))
            self.buy_ins += amount
            box = self.rng.randint(1, self.service.setup.boxes)
            return self._submit(
                {"type": "buy_in", "kind": "cash", "amount": str(amount), "box": box}, "dealer"
            )
        return None
