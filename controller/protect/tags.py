"""Each game's count: balanced tags derived from its effect of removal, and the true count.

The tags, the advantage per true count, the basic-strategy house edge and the spread of one
round's result are data (``config/count-tags.toml``), written by ``tools/derive_count_tags.py``
from simulations through the engine; this module only reads them and counts.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from controller.cards import deck
from controller.rules import CONFIG_DIR

VALUES: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
INDEX: Final = {v: i for i, v in enumerate(VALUES)}
TAGS_FILE: Final = "count-tags.toml"


class CountError(ValueError):
    """The count tags cannot be used: the message names the file, the game and the key."""


def value_index(code: str) -> int:
    """The point-value class of a card code (0 = ace ... 9 = any ten-value card)."""
    r = code[0]
    return 9 if r in "TJQK" else INDEX[r]


@dataclass(frozen=True)
class CountSystem:
    game: str
    tags: tuple[int, ...]  # by value class
    per_deck: tuple[int, ...]  # cards of each value class in one deck
    advantage_per_true_count: float  # change in the player's expectation per +1 true count
    house_edge: float  # basic strategy, per unit of initial wager
    sd_per_unit: float  # one round's result, per unit of initial wager
    betting_correlation: float
    excluded_ranks: str  # ranks not in this game's deck (a Pontoon shoe has no tens)

    @property
    def cards_per_deck(self) -> int:
        return sum(self.per_deck)

    def counts(self, code: str) -> bool:
        """Whether the card belongs to this game's deck (a ten in a Pontoon shoe does not)."""
        return code[0] not in self.excluded_ranks

    def tag(self, code: str) -> int:
        return self.tags[value_index(code)]

    def true_count(self, running: int, unseen_cards: int) -> float:
        """Running count per deck still unseen (at least a quarter deck, as counters round)."""
        decks = max(unseen_cards / self.cards_per_deck, 0.25)
        return running / decks

    def advantage(self, true_count: float) -> float:
        """The basic-strategy player's expectation per unit wagered at this true count."""
        return -self.house_edge + self.advantage_per_true_count * true_count


def _list(path: str, game: str, data: dict[str, Any], key: str, n: int) -> tuple[int, ...]:
    value = data.get(key)
    if not isinstance(value, list) or len(value) != n or not all(isinstance(x, int) for x in value):
        raise CountError(f"{path}: [{game}] {key}: must be a list of {n} integers, got {value!r}")
    return tuple(value)


def _float(path: str, game: str, data: dict[str, Any], key: str) -> float:
    value = data.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise CountError(f"{path}: [{game}] {key}: must be a number, got {value!r}")
    return float(value)


@cache
def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise CountError(f"{path}: no count tags (run tools/derive_count_tags.py)") from None
    except tomllib.TOMLDecodeError as exc:
        raise CountError(f"{path}: not valid TOML ({exc})") from None


def count_system(game: str, excluded_ranks: str, path: str | None = None) -> CountSystem:
    """The count of ``game`` (a rule set's name; its deck lacks ``excluded_ranks``)."""
    path = path or str(CONFIG_DIR / TAGS_FILE)
    data = _load(path)
    section = data.get(game)
    if not isinstance(section, dict):
        raise CountError(f"{path}: no count for game {game!r} (games: {', '.join(sorted(data))})")
    tags = _list(path, game, section, "tags", len(VALUES))
    per_deck = _list(path, game, section, "cards_per_deck", len(VALUES))
    if any(t not in (-1, 0, 1) for t in tags):
        raise CountError(f"{path}: [{game}] tags: each must be -1, 0 or +1, got {list(tags)}")
    if sum(t * n for t, n in zip(tags, per_deck, strict=True)) != 0:
        raise CountError(f"{path}: [{game}] tags: not balanced over a deck ({list(tags)})")
    expected = [0] * len(VALUES)
    for code in deck(excluded_ranks):
        expected[value_index(code)] += 1
    if list(per_deck) != expected:
        raise CountError(
            f"{path}: [{game}] cards_per_deck: {list(per_deck)} is not this game's deck "
            f"({expected})"
        )
    return CountSystem(
        game=game,
        tags=tags,
        per_deck=per_deck,
        advantage_per_true_count=_float(path, game, section, "advantage_per_true_count"),
        house_edge=_float(path, game, section, "house_edge"),
        sd_per_unit=_float(path, game, section, "sd_per_unit"),
        betting_correlation=_float(path, game, section, "betting_correlation"),
        excluded_ranks=excluded_ranks,
    )
