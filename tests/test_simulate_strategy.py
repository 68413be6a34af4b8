"""The strategy tables `floorctl simulate` plays: they load, cover every hand, and say what a
basic-strategy player would do."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from controller.cards import RANKS
from controller.rules import CONFIG_DIR, GAMES
from controller.sim.strategy import (
    ACTIONS,
    COLUMNS,
    StrategyError,
    load_strategy,
    strategy_path,
)

BLACKJACK = load_strategy(strategy_path("blackjack"))
PONTOON = load_strategy(strategy_path("pontoon-nz-2000"))
ALL = {"hit", "stand", "double", "split", "surrender"}
PLAY = {"hit", "stand"}
UP_CARDS = [r + "S" for r in "23456789TA"]


@pytest.mark.parametrize("game", GAMES)
def test_every_game_has_a_default_strategy_that_loads(game: str) -> None:
    strategy = load_strategy(strategy_path(game))
    assert strategy.name and strategy.source


@pytest.mark.parametrize(
    "path", sorted(CONFIG_DIR.glob("strategy-*.toml")), ids=lambda p: Path(p).name
)
def test_every_shipped_strategy_file_loads_complete(path: Path) -> None:
    strategy = load_strategy(path)
    assert set(strategy.hard) == set(range(4, 22)) and set(strategy.soft) == set(range(12, 22))
    assert set(strategy.pairs) == set("A23456789T")


@pytest.mark.parametrize("strategy", [BLACKJACK, PONTOON], ids=["blackjack", "pontoon"])
def test_every_two_and_three_card_hand_has_a_legal_answer(strategy: object) -> None:
    from controller.sim.strategy import Strategy

    assert isinstance(strategy, Strategy)
    ranks = [r for r in RANKS if r != "T"] if strategy is PONTOON else list(RANKS)
    seen = 0
    for up in UP_CARDS:
        if strategy is PONTOON and up[0] == "T":
            up = "KS"
        for n in (2, 3):
            for combo in itertools.combinations_with_replacement(ranks, n):
                cards = [r + "H" for r in combo]
                entry = strategy.table_action(cards, up)
                assert entry in ACTIONS, (cards, up, entry)
                for offered in (ALL, PLAY, {"hit", "stand", "double"}, {"stand"}):
                    assert strategy.decide(cards, up, offered) in offered
                seen += 1
    assert seen > 1000


def test_blackjack_basic_strategy_cells() -> None:
    s = BLACKJACK
    assert s.decide(["6H", "5C"], "6S", ALL) == "double"  # 11 v 6
    assert s.decide(["6H", "5C"], "AS", ALL) == "hit"  # 11 v A (S17)
    assert s.decide(["TH", "6C"], "TS", ALL - {"surrender"}) == "hit"  # 16 v T, no surrender
    assert s.decide(["TH", "6C"], "TS", ALL) == "surrender"  # where the table offers it
    assert s.decide(["TH", "2C"], "4S", ALL) == "stand"  # 12 v 4
    assert s.decide(["TH", "2C"], "3S", ALL) == "hit"  # 12 v 3
    assert s.decide(["8H", "8C"], "TS", ALL) == "split"
    assert s.decide(["AH", "AC"], "AS", ALL) == "split"
    assert s.decide(["TH", "KC"], "6S", ALL) == "stand"  # never split tens
    assert s.decide(["9H", "9C"], "7S", ALL) == "stand"  # 18 v 7
    assert s.decide(["AH", "7C"], "3S", ALL) == "double"  # soft 18 v 3
    assert s.decide(["AH", "7C"], "3S", PLAY) == "stand"  # Ds: stand when no double
    assert s.decide(["AH", "2D", "4C"], "3S", PLAY) == "hit"  # soft 17, 3 cards: D -> hit
    assert s.decide(["AH", "7C"], "9S", ALL) == "hit"  # soft 18 v 9
    assert s.decide(["8H", "8C"], "TS", PLAY) == "hit"  # can't split: hard 16 v T
    assert not s.insurance


def test_pontoon_strategy_follows_the_nz_rules() -> None:
    s = PONTOON
    # 12.2: a doubled soft hand counts its ace 1, so soft hands never double.
    for second in "2345678":
        assert s.decide(["AH", second + "C"], "5S", ALL) != "double"
    # No hole card: no extra money against a possible dealer pontoon.
    assert s.decide(["8H", "8C"], "KS", ALL) == "hit"
    assert s.decide(["AH", "AC"], "AS", ALL) == "hit"
    assert s.decide(["8H", "8C"], "6S", ALL) == "split"
    # A shoe short of tens: a stiff 12 or 13 draws even against a 6; 14 stands against 4-6.
    assert s.decide(["7H", "6C"], "6S", ALL) == "hit"
    assert s.decide(["9H", "5C"], "4S", ALL) == "stand"
    # The 5/6/7-card bonuses: a many-card 14 draws where a two-card 14 stands...
    assert s.decide(["2H", "3C", "4D", "5S"], "4S", ALL) == "hit"
    assert s.decide(["2H", "2C", "3D", "3S", "6D"], "6S", ALL) == "stand"  # 16, 5 cards
    assert s.decide(["2H", "2C", "2D", "3S", "3D", "4C"], "6S", ALL) == "hit"  # 16, 6 cards
    # ...and a double, which forfeits the bonus odds (12.5), gets rarer as the hand grows.
    assert s.decide(["5H", "6C"], "TS", ALL) == "double"
    assert s.decide(["2H", "3C", "6D"], "TS", ALL) == "hit"
    assert s.decide(["2H", "3C", "2D", "4S"], "6S", ALL) == "double"
    assert s.decide(["2H", "3C", "2D", "2S", "2D"], "6S", ALL) == "hit"
    # Rescue (12.8) a doubled stiff hand against a strong up card, keep it against a weak one.
    assert s.rescues(14, "KS") and s.rescues(16, "AS") and s.rescues(17, "AS")
    assert not s.rescues(14, "6S") and not s.rescues(17, "KS") and not s.rescues(20, "AS")
    assert not s.insurance
    # 11.2: suited 7-7 against a dealer 7 draws for the Super Bonus; unsuited follows the table.
    assert s.decide(["7H", "7H"], "7S", ALL) == "hit"
    assert s.decide(["7H", "7C"], "7S", ALL) == "split"
    assert BLACKJACK.decide(["7H", "7H"], "7S", ALL) == "split"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "strategy.toml"
    path.write_text(text)
    return path


def _table_text(drop: str | None = None, replace: tuple[str, str] | None = None) -> str:
    text = strategy_path("blackjack").read_text()
    if drop:
        text = "\n".join(line for line in text.splitlines() if not line.startswith(drop))
    if replace:
        text = text.replace(*replace)
    return text


def test_a_missing_row_is_refused_naming_the_table_and_row(tmp_path: Path) -> None:
    path = _write(tmp_path, _table_text(drop="13 = "))
    with pytest.raises(StrategyError, match=r"\[hard\] has no row for 13"):
        load_strategy(path)


def test_an_unknown_action_is_refused_naming_the_cell(tmp_path: Path) -> None:
    path = _write(tmp_path, _table_text(replace=('A = "P  P', 'A = "X  P')))
    with pytest.raises(StrategyError, match=r"\[pairs\] A: 'X' against 2"):
        load_strategy(path)


def test_a_short_row_is_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path, _table_text(replace=('21 = "S  S  S  S  S  S  S  S  S  S"', '21 = "S"'))
    )
    with pytest.raises(StrategyError, match=f"has 1 actions, needs {len(COLUMNS)}"):
        load_strategy(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(StrategyError, match="no such strategy file"):
        load_strategy(tmp_path / "nope.toml")
