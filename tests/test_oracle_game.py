"""The oracle (`benchmarks/oracle/`) against hand-derived rounds, before it judges floorctl.

Each case stacks a genuine shoe (cards only moved to the front) and plays one round by the
shipped strategy table; the expected nets are worked out by hand from the rule book, not taken from
either program. The last tests check that the rule settings the oracle assumes are still the
ones `config/` ships, so a reviewed rule change cannot leave the oracle behind unnoticed.
"""

from __future__ import annotations

import ast
import random
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.oracle.cards import Shoe, parse  # noqa: E402
from benchmarks.oracle.game import BLACKJACK, PONTOON, Round, Rules, play_round  # noqa: E402
from benchmarks.oracle.strategy import StrategyError, load, shipped  # noqa: E402


def _round(rules: Rules, cards: list[str], wager: int = 10, boxes: int = 1) -> Round:
    shoe = Shoe(rules.decks, rules.pontoon, random.Random(1), 0.75)
    assert shoe.bring_to_front([parse(c) for c in cards])
    strategy = load(shipped(rules.game), rules.pontoon)
    table = [(box, [(f"p{box}", wager * 100)]) for box in range(1, boxes + 1)]
    return play_round(rules, strategy, shoe, table)


def _nets(result: Round) -> dict[tuple[int, str], float]:
    """(hand, kind) -> net in dollars for a one-box round."""
    out: dict[tuple[int, str], float] = {}
    for _player, box, hand, kind, net in result.rows:
        assert box == 1
        out[(hand, kind)] = out.get((hand, kind), 0) + net / 100
    return out


# (cards in dealing order: box, up, box, then the box's draws and the dealer's), expected nets
PONTOON_CASES: dict[str, tuple[list[str], dict[tuple[int, str], float]]] = {
    # 11 v A doubles (12.1), the 6 makes 17, rescued (12.8, table: 17 v A); dealer A-6 = 17:
    # the rescued wager loses its original whatever the dealer makes.
    "rescued tie": (["6D", "AS", "5C", "6H", "6S"], {(0, "hand"): -10}),
    "rescued v dealer pontoon": (["6D", "AS", "5C", "6H", "KS"], {(0, "hand"): -10}),
    # 10 v 8 doubles, 13 rescued; nobody depends on the dealer, who stops on 8-6.
    "rescued, dealer stops": (["5D", "8S", "5C", "3H", "6C", "9D"], {(0, "hand"): -10}),
    # 11 v A doubled to 20 and kept; dealer pontoon: only the original is lost (12.7).
    "double v dealer pontoon": (["5D", "AH", "6C", "9S", "QH"], {(0, "hand"): -10}),
    # 11 v 6 doubled to 19; dealer 6-K-9 busts: 1:1 on both parts (12.5).
    "double wins": (["5D", "6H", "6C", "8S", "KH", "9D"], {(0, "hand"): 20}),
    # pontoon beats a dealer pontoon, 3:2 (5.1(c)).
    "pontoon v pontoon": (["AD", "AH", "KC", "JS"], {(0, "hand"): 15}),
    # 6-7-8 of hearts v 9: 2:1; the 21 does not need the dealer, who stops at 9-K.
    "6-7-8 suited": (["6H", "9C", "7H", "8H", "KD"], {(0, "hand"): 20}),
    "6-7-8 spades": (["6S", "9C", "7S", "8S", "KD"], {(0, "hand"): 30}),
    "6-7-8 mixed": (["6S", "9C", "7H", "8S", "KD"], {(0, "hand"): 15}),
    # suited 7-7 v a 7 hits (chase_super_bonus); 7-7-7 hearts: 2:1 and $1,000 (11.2).
    "super bonus": (["7H", "7C", "7H", "7H", "KD"], {(0, "hand"): 20, (0, "super_bonus"): 1000}),
    # 2-3-4-5-7 v 9: a 5-card 21, 3:2; 6 cards 2:1; 7 cards 3:1 (11.1).
    "5-card 21": (["2C", "9D", "3C", "4H", "5S", "7D", "KD"], {(0, "hand"): 15}),
    "6-card 21": (["2C", "9D", "2D", "2H", "3S", "3D", "9H", "KD"], {(0, "hand"): 20}),
    "7-card 21": (["2C", "9D", "2D", "2H", "3S", "3D", "4C", "5H", "KD"], {(0, "hand"): 30}),
    # A-A v 5 split: one card each, two 21s that are not pontoons (13.4(b), (c)): 1:1 each.
    "split aces": (["AC", "5D", "AH", "KS", "QD", "9C"], {(0, "hand"): 10, (1, "hand"): 10}),
    # 17 v 7-Q: equal totals stand off.
    "stand off": (["9C", "7D", "8C", "QH"], {(0, "hand"): 0}),
    # 16 v 5 stands; dealer 5-6-5-K busts.
    "dealer busts": (["9C", "5D", "7C", "6H", "5S", "KH"], {(0, "hand"): 10}),
}


@pytest.mark.parametrize("name", sorted(PONTOON_CASES))
def test_oracle_pontoon_round_matches_the_hand_worked_net(name: str) -> None:
    cards, want = PONTOON_CASES[name]
    assert _nets(_round(PONTOON, cards)) == want


def test_oracle_super_bonus_is_5000_from_25_dollars() -> None:
    nets = _nets(_round(PONTOON, ["7H", "7C", "7H", "7H", "KD"], wager=25))
    assert nets == {(0, "hand"): 50, (0, "super_bonus"): 5000}


def test_oracle_pontoon_21_beats_a_dealer_21_and_the_dealer_draws_for_a_live_hand() -> None:
    # box 1 5-9 v 9 hits a 7: an ordinary three-card 21; box 2 K-8 stands on 18. The dealer
    # draws for box 2 only: 9-2-K = 21. 5.1(d): box 1 wins 1:1; box 2 loses.
    result = _round(PONTOON, ["5C", "KH", "9D", "9S", "8C", "7H", "2S", "KD"], boxes=2)
    assert [row[4] / 100 for row in result.rows] == [10, -10]
    assert result.dealer_total == 21


def test_oracle_super_bonus_pays_every_other_box_50_dollars() -> None:
    # box 1 suited 7-7 v 7 makes 7-7-7 (Super Bonus); box 2 K-9 stands; 11.3: box 2 gets $50.
    result = _round(PONTOON, ["7H", "KS", "7C", "7H", "9S", "7H", "QD"], boxes=2)
    rows = {(row[1], row[3]): row[4] / 100 for row in result.rows}
    assert rows == {
        (1, "hand"): 20,
        (1, "super_bonus"): 1000,
        (2, "hand"): 10,  # 19 v 7-Q 17
        (2, "bonus_50"): 50,
    }


BLACKJACK_CASES: dict[str, tuple[list[str], dict[tuple[int, str], float]]] = {
    # box, up, box, hole: the dealer peeks; his blackjack ends the round.
    "dealer blackjack under an ace": (["9C", "AH", "8D", "KS"], {(0, "hand"): -10}),
    "blackjack v blackjack": (["AC", "QH", "KD", "AS"], {(0, "hand"): 0}),
    "blackjack 3:2": (["AC", "QH", "KD", "7S"], {(0, "hand"): 15}),
    # 11 v 6 (hole T: 16) doubles to 20; dealer draws 5: 21 beats 20, both parts lost.
    "double loses": (["5C", "6D", "6H", "TS", "9C", "5H"], {(0, "hand"): -20}),
    # A-A split: A+K is 21, not a blackjack, and pushes against the dealer's 21.
    "split aces, 21 v 21": (
        ["AC", "6D", "AH", "TD", "KS", "9D", "5H"],
        {(0, "hand"): 0, (1, "hand"): -10},
    ),
}


@pytest.mark.parametrize("name", sorted(BLACKJACK_CASES))
def test_oracle_blackjack_round_matches_the_hand_worked_net(name: str) -> None:
    cards, want = BLACKJACK_CASES[name]
    assert _nets(_round(BLACKJACK, cards)) == want


def test_oracle_refuses_a_strategy_cell_it_does_not_model(tmp_path: Path) -> None:
    text = shipped("pontoon-nz-2000").read_text(encoding="utf-8")
    bad = tmp_path / "s.toml"
    row16 = '16 = "S  S  S  S  S  H  H  H  H  H"'
    bad.write_text(text.replace(row16, row16.replace("H  H  H  H  H", "H  H  H  Rh H")))
    with pytest.raises(StrategyError, match="surrender"):
        load(bad, pontoon=True)
    row15 = '15 = "S  S  S  S  S  H  H  H  H  H"'
    bad.write_text(text.replace(row15, row15.replace("S  H", "X  H"), 1))
    with pytest.raises(StrategyError, match="unknown action 'X'"):
        load(bad, pontoon=True)


def _settings(name: str) -> dict[str, Any]:
    doc = tomllib.loads((ROOT / "config" / f"{name}.toml").read_text(encoding="utf-8"))
    base = doc.get("base")
    merged = _settings(base) if base else {}
    merged.update({k: v for k, v in doc.items() if not isinstance(v, dict)})
    return merged


# The settings whose values the oracle's game logic is written for (docs/reference/rule-book.md).
ASSUMED = {
    "pontoon-nz-2000": {
        "decks": 6,
        "excluded_ranks": "T",
        "hole_card": "none",
        "dealer_hits_soft_17": False,
        "natural_pays": "3:2",
        "natural_vs_dealer_natural": "win",
        "player_21_beats_dealer_21": True,
        "player_21_beats_dealer_pontoon": False,
        "dealer_natural_takes_doubles": False,
        "dealer_natural_takes_splits": True,
        "bonus_odds": True,
        "surrender_lost_to_dealer_natural": True,
        "double_first_two": "any",
        "double_after_split": True,
        "double_split_aces": False,
        "double_later_under_21": True,
        "double_amount": "up_to_original",
        "double_aces_count_one": True,
        "rescue": True,
        "split_pairs": "same_value",
        "max_hands": 3,
        "resplit_aces": False,
        "split_aces_one_card": True,
        "super_bonus": True,
        "super_bonus_small": "1000",
        "super_bonus_small_min": "2",
        "super_bonus_large": "5000",
        "super_bonus_large_min": "25",
        "bonus_50": "50",
        "insurance_pays": "2:1",
        "insurance_max_fraction": "0.5",
    },
    "blackjack": {
        "decks": 6,
        "excluded_ranks": "",
        "hole_card": "peek",
        "dealer_hits_soft_17": False,
        "natural_pays": "3:2",
        "natural_vs_dealer_natural": "push",
        "player_21_beats_dealer_21": False,
        "bonus_odds": False,
        "surrender": False,
        "double_first_two": "any",
        "double_after_split": True,
        "double_split_aces": False,
        "double_later_under_21": False,
        "double_amount": "equal",
        "double_aces_count_one": False,
        "rescue": False,
        "split_pairs": "same_value",
        "max_hands": 4,
        "resplit_aces": False,
        "split_aces_one_card": True,
        "super_bonus": False,
        "insurance_pays": "2:1",
    },
}


@pytest.mark.parametrize("game", sorted(ASSUMED))
def test_shipped_rule_set_is_the_one_the_oracle_models(game: str) -> None:
    settings = _settings(game)
    differs = {k: (settings.get(k), v) for k, v in ASSUMED[game].items() if settings.get(k) != v}
    assert not differs, (
        f"config/{game}.toml changed (shipped, oracle): {differs}: update the oracle"
    )


def test_the_oracle_imports_nothing_of_floorctl() -> None:
    """Its independence, checked: no module of benchmarks/oracle imports controller or
    drivers (it reads only config/ files and runs floorctl as a subprocess)."""
    for path in sorted((ROOT / "benchmarks" / "oracle").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            bad = [n for n in names if n.split(".")[0] in ("controller", "drivers")]
            assert not bad, f"{path.name} imports {bad}"
