"""The chips at settlement, as the dealer handles them: the win beside the stake, not the
stake plus the win. Checked against cases worked by hand and the spec's worked examples, and
over simulated rounds by the one thing every line must satisfy: what is paid less what is
taken is the engine's net, and what is returned is part of the stake."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import paths
import pytest

from controller.rules import load_ruleset
from controller.service.payview import round_lines, settlement_lines
from controller.sim.player import RoundPlayer
from controller.sim.runner import SimConfig
from controller.sim.strategy import strategy_path

PONTOON = load_ruleset("pontoon-nz-2000")
BLACKJACK = load_ruleset("blackjack-nz-1994")
EXAMPLES = paths.EXAMPLES


def row(staked: str, returned: str, kind: str = "hand") -> dict[str, Any]:
    net = Decimal(returned) - Decimal(staked)
    return {"player": "ann", "box": 1, "hand": 0, "kind": kind, "staked": staked,
            "returned": returned, "net": str(net)}  # fmt: skip


def hand(cards: str, outcome: str, doubled: bool = False) -> dict[str, Any]:
    return {"box": 1, "hand": 0, "cards": cards.split(), "doubled": doubled, "outcome": outcome}


def said(lines: list[dict[str, Any]]) -> list[str]:
    return [" ".join(x for x in (ln["action"], ln["amount"]) if x) for ln in lines]


# Worked by hand from the rule book: (what the engine settled, the hand, what the dealer does).
CASES = [
    # A $50 even-money win: pay 50 beside the stake (the screen said "pay $100").
    (row("50", "100"), hand("9S 9H", "win"), ["pay 50"], "even money"),
    # A stand-off: the stake stays (the screen said "pay $50").
    (row("50", "50"), hand("9S 8H", "push"), ["push"], ""),
    (row("50", "125"), hand("AS KC", "win"), ["pay 75"], "pontoon (11.1) 3:2"),
    (row("20", "50"), hand("2S 3H 4D 5C 7S", "win"), ["pay 30"], "five-card 21 (11.1) 3:2"),
    (row("10", "30"), hand("2S 3H 4D 5C 2C 5S", "win"), ["pay 20"], "six-card 21 (11.1) 2:1"),
    (row("10", "40"), hand("6S 7S 8S", "win"), ["pay 30"], "6-7-8 suited spades (11.1) 3:1"),
    (row("10", "30"), hand("7H 7H 7H", "win"), ["pay 20"], "7-7-7 suited (11.1) 2:1"),
    (row("10", "25"), hand("6S 7D 8H", "win"), ["pay 15"], "6-7-8 mixed (11.1) 3:2"),
    # A doubled win is even money whatever the cards (12.5): stake 20 + double 20.
    (row("40", "80"), hand("AS 2C 8H", "win", True), ["pay 40"], "12.5"),
    (row("50", "0"), hand("9S 8H", "lose"), ["take 50"], ""),
    (row("50", "0"), hand("9S 8H KD", "lose"), ["take 50"], ""),
    # Surrender: half forfeit, half back (9.5).
    (row("50", "25"), hand("9S 7H", "surrender"), ["take 25", "return 25"], "9.5"),
    # 12.7: the dealer's pontoon takes the original 20; the double of 20 comes back.
    (row("40", "20"), hand("5S 6H 9C", "lose", True), ["take 20", "return 20"], "12.7"),
    (row("50", "50"), hand("9S 8H", "void"), ["return 50"], "16.5"),
    (row("10", "30", "insurance"), None, ["pay 20"], "insurance wins (2:1)"),
    (row("10", "0", "insurance"), None, ["take 10"], "insurance loses"),
    (row("0", "5000", "super_bonus"), None, ["pay 5000"], "Super Bonus (11.2)"),
    (row("0", "50", "bonus_50"), None, ["pay 50"], "bonus (11.3)"),
]


@pytest.mark.parametrize(("settled", "the_hand", "lines", "note"), CASES)
def test_each_settlement_is_said_as_the_chips_are_handled(
    settled: dict[str, Any], the_hand: dict[str, Any] | None, lines: list[str], note: str
) -> None:
    out = settlement_lines(settled, the_hand, PONTOON)
    assert said(out) == lines
    assert note in " ".join(x["note"] for x in out)


def test_a_rescue_is_its_own_lines_even_when_the_figures_alone_cannot_tell() -> None:
    # 02-pontoon-double-rescue: cat doubled 50 on 50 and took back the double: the original is
    # forfeit though the hand won.
    rescued = row("100", "50")
    out = settlement_lines(rescued, hand("2S 3S 4D 2C 8H", "win", True), PONTOON, rescued=True)
    assert said(out) == ["take 50", "return 50"]
    assert {x["kind"] for x in out} == {"rescue"} and "12.8" in out[0]["note"]
    # Against a dealer's pontoon a rescue and 12.7 both give the double back: only the round's
    # record of the rescue names it.
    result = {
        "round": 4,
        "dealer": {"cards": ["AS", "KD"], "total": 21},
        "hands": [hand("5S 6H 9C", "lose", True)],
        "settlements": [row("40", "20")],
    }
    assert "12.7" in round_lines(result, 1, PONTOON)[0]["note"]
    marked = round_lines(result, 1, PONTOON, rescues={(4, 1, 0, "ann")})
    assert "12.8" in marked[0]["note"]
    assert (
        round_lines(result, 1, PONTOON, rescues={(3, 1, 0, "ann")})[0]["note"] != marked[0]["note"]
    )  # a rescue of another round does not count


def test_blackjack_names_no_pontoon_numbers() -> None:
    out = settlement_lines(row("10", "25"), hand("AS KC", "win"), BLACKJACK)
    assert said(out) == ["pay 15"] and out[0]["note"] == "blackjack 3:2"


def test_the_spec_examples_read_as_the_dealer_pays_them() -> None:
    doc = json.loads((EXAMPLES / "03-pontoon-super-bonus.expected.json").read_text())
    first = doc["rounds"][0]
    box1 = round_lines(first, 1, PONTOON)
    assert [(x["player"], *said([x])) for x in box1] == [("ann", "pay 50"), ("ann", "pay 5000")]
    assert "7-7-7 suited (11.1) 2:1" in box1[0]["note"] and "11.2" in box1[1]["note"]
    box2 = round_lines(first, 2, PONTOON)
    assert [(x["player"], *said([x])) for x in box2] == [
        ("ben", "pay 10"),
        ("ben", "pay 50"),
        ("cat", "pay 5"),
        ("cat", "pay 50"),
    ]
    doc = json.loads((EXAMPLES / "02-pontoon-double-rescue.expected.json").read_text())
    lines = round_lines(doc["rounds"][0], 3, PONTOON)
    assert said(lines) == ["take 50", "return 50"] and "12.8" in lines[0]["note"]
    doc = json.loads((EXAMPLES / "04-pontoon-irregularities.expected.json").read_text())
    assert said(round_lines(doc["rounds"][1], 1, PONTOON)) == ["take 10", "pay 10"]


def balance(lines: list[dict[str, Any]]) -> tuple[Decimal, Decimal]:
    pay = sum((Decimal(x["amount"]) for x in lines if x["action"] == "pay"), Decimal(0))
    take = sum((Decimal(x["amount"]) for x in lines if x["action"] == "take"), Decimal(0))
    back = sum((Decimal(x["amount"]) for x in lines if x["action"] == "return"), Decimal(0))
    return pay - take, back


@pytest.mark.parametrize("game", ["pontoon-nz-2000", "blackjack-nz-1994"])
def test_over_simulated_rounds_every_line_adds_up_to_the_engines_net(game: str) -> None:
    config = SimConfig(game=game, strategy_path=str(strategy_path(game)), seed="payview")
    player = RoundPlayer(config, "payview-1")
    rules = player.rules
    kinds: set[str] = set()
    for _ in range(3000):
        result = player.play_round().to_dict()
        for s in result["settlements"]:
            hands = [h for h in result["hands"] if (h["box"], h["hand"]) == (s["box"], s["hand"])]
            lines = settlement_lines(s, hands[0] if hands else None, rules)
            net, back = balance(lines)
            assert net == Decimal(s["net"]), (s, lines)
            assert back <= Decimal(s["staked"]), (s, lines)  # returned chips are the stake's
            assert all(x["amount"] is None or Decimal(x["amount"]) > 0 for x in lines), lines
            kinds.update(x["action"] for x in lines)
    assert {"pay", "take", "push"} <= kinds
