"""The oracle's own reader of a strategy table (`config/strategy-*.toml`).

It follows the format documented at the top of `config/strategy-blackjack.toml`, read so:

- `columns` name the dealer's up card of each cell: "2".."9", "T" (any ten-value card: T, J,
  Q, K; in Pontoon a picture card) and "A".
- `[pairs]`: a hand of exactly two cards of the same value (A-A, or any two ten-value cards
  as "T", or two equal number cards) looks here first, whether it is a box's first hand or a
  split hand that drew a card of its first card's value. "P" splits when the rules allow a
  split there (hand limit, aces only once), else the hand is played by its total; "-" plays it
  by its total; "Rp" is "P" where surrender is not offered.
- `[hard]` (no ace counted 11) and `[soft]` (an ace counted 11) rows by total; a
  `[hard_from_cards.N]` / `[soft_from_cards.N]` row replaces the row of the same total for a
  hand of N or more cards, the largest such N not above the hand's size winning. A total no
  table has a row for is an error.
- "D" doubles if a double is allowed on the hand, else hits; "Ds" doubles, else stands. The
  double is for the whole original wager (12.3 allows less; where doubling is the better play
  the most is the best double).
- "Rh", "Rs", "Rp": surrender if offered, else hit / stand / split. The oracle never
  surrenders by strategy: in the generic `blackjack` no surrender is offered, and for Pontoon a
  table with a surrender cell is refused (the shipped one has none, and its notes say why).
- `[rescue]` (Pontoon, 12.8): after the double card, "R" at the hand's total (12.2 applied)
  and the dealer's up card takes the double back; "-" or a total with no row keeps it.
- `chase_super_bonus = true`: a hand of exactly two 7s of one suit against a dealer's 7 hits,
  before the pairs table is read (also a split hand that drew a 7 of its suit).
- `insurance = false`: never insure. A table that insures is refused (the oracle does not
  model a counting insurance decision).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HIT, STAND, DOUBLE_OR_HIT, DOUBLE_OR_STAND, SPLIT, SURRENDER_OR_HIT = 0, 1, 2, 3, 4, 5
SURRENDER_OR_STAND, SURRENDER_OR_SPLIT, BY_TOTAL = 6, 7, 8
ACTIONS = {
    "H": HIT,
    "S": STAND,
    "D": DOUBLE_OR_HIT,
    "Ds": DOUBLE_OR_STAND,
    "P": SPLIT,
    "Rh": SURRENDER_OR_HIT,
    "Rs": SURRENDER_OR_STAND,
    "Rp": SURRENDER_OR_SPLIT,
    "-": BY_TOTAL,
}
# Without a surrender offer: what a surrender cell falls back to.
NO_SURRENDER = {SURRENDER_OR_HIT: HIT, SURRENDER_OR_STAND: STAND, SURRENDER_OR_SPLIT: SPLIT}
MAX_CARDS = 12  # rows by number of cards: a hand of 12+ cards reads the same rows as 12
COLUMN_VALUE = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10, "A": 1}


class StrategyError(ValueError):
    """A strategy table the oracle cannot read, naming the file and the cell."""


Row = list[int]  # by the dealer's up-card value 1..10 (index 0 unused)


@dataclass
class Strategy:
    """Lookups: `hard[n][total]`, `soft[n][total]` (n = cards in the hand, capped at
    MAX_CARDS), `pairs[value]`, `rescue[total]` (True: rescue), each a row by up-card value."""

    name: str
    path: Path
    hard: list[dict[int, Row]]
    soft: list[dict[int, Row]]
    pairs: dict[int, Row]
    rescue: dict[int, list[bool]]
    chase_super_bonus: bool


def _row(text: Any, columns: list[int], where: str) -> Row:
    if not isinstance(text, str):
        raise StrategyError(f"{where}: a row must be a string of actions, got {text!r}")
    cells = text.split()
    if len(cells) != len(columns):
        raise StrategyError(f"{where}: {len(cells)} cells for {len(columns)} columns")
    row = [BY_TOTAL] * 11
    for up, cell in zip(columns, cells, strict=True):
        if cell not in ACTIONS:
            raise StrategyError(f"{where}: unknown action {cell!r}")
        row[up] = ACTIONS[cell]
    return row


def _rows(table: Any, columns: list[int], where: str) -> dict[int, Row]:
    if not isinstance(table, dict):
        raise StrategyError(f"{where}: expected a table of rows")
    out: dict[int, Row] = {}
    for key, text in table.items():
        try:
            total = int(key)
        except ValueError:
            raise StrategyError(f"{where}: row {key!r} is not a total") from None
        out[total] = _row(text, columns, f"{where} row {key}")
    return out


def _by_cards(
    base: dict[int, Row], extra: Any, columns: list[int], where: str
) -> list[dict[int, Row]]:
    """For each hand size 0..MAX_CARDS, the rows that apply."""
    layers: dict[int, dict[int, Row]] = {}
    if extra is not None:
        if not isinstance(extra, dict):
            raise StrategyError(f"{where}: expected tables named by a number of cards")
        for n, table in extra.items():
            try:
                size = int(n)
            except ValueError:
                raise StrategyError(f"{where}.{n}: not a number of cards") from None
            layers[size] = _rows(table, columns, f"{where}.{n}")
    out = []
    for size in range(MAX_CARDS + 1):
        rows = dict(base)
        for n in sorted(k for k in layers if k <= size):  # larger N applied last: it wins
            rows.update(layers[n])
        out.append(rows)
    return out


def load(path: Path, pontoon: bool) -> Strategy:
    where = str(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise StrategyError(f"{where}: {exc}") from None
    if doc.get("insurance", False):
        raise StrategyError(f"{where}: insurance = true is not modelled by the oracle")
    try:
        columns = [COLUMN_VALUE[c] for c in doc["columns"]]
    except (KeyError, TypeError):
        raise StrategyError(f"{where}: columns must name up cards 2-9, T, A") from None
    if sorted(columns) != list(range(1, 11)):
        raise StrategyError(f"{where}: columns must name each up card once")
    hard = _rows(doc.get("hard"), columns, f"{where} [hard]")
    soft = _rows(doc.get("soft"), columns, f"{where} [soft]")
    pairs_raw = doc.get("pairs", {})
    pairs: dict[int, Row] = {}
    for key, text in pairs_raw.items():
        if key not in COLUMN_VALUE:
            raise StrategyError(f"{where} [pairs]: row {key!r} is not a rank")
        pairs[COLUMN_VALUE[key]] = _row(text, columns, f"{where} [pairs] row {key}")
    rescue: dict[int, list[bool]] = {}
    for key, text in doc.get("rescue", {}).items():
        cells = text.split() if isinstance(text, str) else []
        if len(cells) != len(columns) or any(c not in ("R", "-") for c in cells):
            raise StrategyError(f"{where} [rescue] row {key}: cells must be R or -")
        flags = [False] * 11
        for up, cell in zip(columns, cells, strict=True):
            flags[up] = cell == "R"
        rescue[int(key)] = flags
    strategy = Strategy(
        name=str(doc.get("name", path.stem)),
        path=path,
        hard=_by_cards(hard, doc.get("hard_from_cards"), columns, f"{where} [hard_from_cards]"),
        soft=_by_cards(soft, doc.get("soft_from_cards"), columns, f"{where} [soft_from_cards]"),
        pairs=pairs,
        rescue=rescue,
        chase_super_bonus=bool(doc.get("chase_super_bonus", False)),
    )
    if pontoon:
        tables = [*strategy.hard, *strategy.soft, strategy.pairs]
        for rows in tables:
            for total, row in rows.items():
                if any(a in NO_SURRENDER for a in row):
                    raise StrategyError(
                        f"{where}: a surrender cell (row {total}); the oracle does not model "
                        "surrender by strategy in Pontoon"
                    )
    return strategy


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def shipped(game: str) -> Path:
    """The strategy file floorctl simulate uses by default for the game."""
    return repo_root() / "config" / f"strategy-{game}.toml"
