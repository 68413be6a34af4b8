"""Strategy tables for ``floorctl simulate``: ``config/strategy-*.toml`` → :class:`Strategy`.

A table says what a player does with a hand (hard total, soft total or pair, by the number of
cards where it matters) against the dealer's up card. It names *intentions* (``D``: double if the
table allows it, else hit); whether a move is allowed is the engine's business: :meth:`decide`
picks among the decisions the engine offers (``table.open_decisions()``), so the rules live in
one place.
The file format is documented at the top of ``config/strategy-blackjack.toml``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.cards import best_total
from controller.rules import CONFIG_DIR

COLUMNS: tuple[str, ...] = ("2", "3", "4", "5", "6", "7", "8", "9", "T", "A")
ACTIONS = frozenset({"H", "S", "D", "Ds", "P", "Rh", "Rs", "Rp"})
PAIR_ACTIONS = ACTIONS | {"-"}
RESCUE_ACTIONS = frozenset({"R", "-"})
HARD_TOTALS = range(4, 22)
SOFT_TOTALS = range(12, 22)
PAIR_RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")

# The strategy each game uses unless --strategy names another file.
DEFAULT_STRATEGY: dict[str, str] = {
    "blackjack": "strategy-blackjack.toml",
    "blackjack-nz-1994": "strategy-blackjack.toml",
    "pontoon-nz-2000": "strategy-pontoon-nz-2000.toml",
}

# Column of a card code: its rank, with every ten-value card in the "T" column.
_COLUMN_OF_RANK = {
    r: (COLUMNS.index("T") if r in "TJQK" else COLUMNS.index(r)) for r in "A23456789TJQK"
}
# Pair row of a rank: ten-value cards are one row ("T").
_PAIR_OF_RANK = {r: ("T" if r in "TJQK" else r) for r in "A23456789TJQK"}

_FALLBACK = {"D": "hit", "Ds": "stand", "Rh": "hit", "Rs": "stand"}


class StrategyError(ValueError):
    """A strategy file that cannot be used; the message names the file and the key."""


Row = tuple[str, ...]


@dataclass(frozen=True)
class Strategy:
    name: str
    source: str
    path: str
    insurance: bool
    hard: Mapping[int, Row]
    soft: Mapping[int, Row]
    pairs: Mapping[str, Row]
    # (N, rows): rows replacing the base row for hands of N or more cards, largest N first.
    hard_from_cards: tuple[tuple[int, Mapping[int, Row]], ...] = ()
    soft_from_cards: tuple[tuple[int, Mapping[int, Row]], ...] = ()
    rescue: Mapping[int, Row] = field(default_factory=dict)
    # 11.2: with two 7s of one suit against a dealer 7, hit for the third (the Super Bonus).
    chase_super_bonus: bool = False

    # --- looking up the table ------------------------------------------------------------------

    def table_action(self, cards: Sequence[str], up: str, *, consider_pair: bool = True) -> str:
        """The table's entry for ``cards`` against the up card ``up`` (a card code)."""
        col = _COLUMN_OF_RANK[up[0]]
        if consider_pair and len(cards) == 2:
            a, b = cards
            pa = _PAIR_OF_RANK[a[0]]
            if pa == _PAIR_OF_RANK[b[0]]:
                entry = self.pairs[pa][col]
                if entry != "-":
                    return entry
        total, soft = best_total(cards)
        if total < 4:  # a one-card hand (never asked in practice): draw
            return "H"
        if total > 21:
            return "S"
        n = len(cards)
        base, layers = (
            (self.soft, self.soft_from_cards) if soft else (self.hard, self.hard_from_cards)
        )
        for min_cards, rows in layers:
            if n >= min_cards and total in rows:
                return rows[total][col]
        return base[total][col]

    def decide(self, cards: Sequence[str], up: str, offered: Collection[str]) -> str:
        """The engine action (one of ``offered``) this strategy takes with ``cards`` v ``up``.

        ``offered`` is the set of actions the engine opens for the hand ("hit", "stand",
        "double", "split", "surrender", ...). An intention the table does not allow falls back
        as the action code says (D → hit, Ds → stand, Rh → hit, P → play the total).
        """
        if (
            self.chase_super_bonus
            and len(cards) == 2
            and up[0] == "7"
            and cards[0][0] == cards[1][0] == "7"
            and cards[0][1] == cards[1][1]
            and "hit" in offered
        ):
            return "hit"
        entry = self.table_action(cards, up)
        if entry in ("Rh", "Rs", "Rp"):
            if "surrender" in offered:
                return "surrender"
            entry = "P" if entry == "Rp" else entry
        if entry == "P":
            if "split" in offered:
                return "split"
            entry = self.table_action(cards, up, consider_pair=False)
            if entry == "Rp":  # a pair row may only be reached through consider_pair
                entry = "H"
            if entry in ("Rh", "Rs") and "surrender" in offered:
                return "surrender"
        if entry in ("D", "Ds") and "double" in offered:
            return "double"
        action = {"H": "hit", "S": "stand"}.get(entry) or _FALLBACK.get(entry, "hit")
        if action not in offered:
            # e.g. "hit" where the engine only lets the hand stand: do what it allows.
            return "stand" if "stand" in offered else next(iter(sorted(offered)))
        return action

    def rescues(self, total: int, up: str) -> bool:
        """Rule 12.8: take back the double after the double card, with this total v ``up``?"""
        row = self.rescue.get(total)
        return row is not None and row[_COLUMN_OF_RANK[up[0]]] == "R"


# --- loading -----------------------------------------------------------------------------


def strategy_path(game: str, given: str | None = None) -> Path:
    """The strategy file to use: ``given`` (a path) or the game's default in ``config/``."""
    if given:
        return Path(given)
    try:
        return CONFIG_DIR / DEFAULT_STRATEGY[game]
    except KeyError:
        raise StrategyError(
            f"no default strategy for game {game!r}; name one with --strategy FILE"
        ) from None


def _rows(
    path: Path,
    section: str,
    data: Any,
    keys: Sequence[str],
    allowed: frozenset[str],
    *,
    complete: bool,
) -> dict[str, Row]:
    if not isinstance(data, Mapping):
        raise StrategyError(f"{path}: [{section}] must be a table of rows")
    out: dict[str, Row] = {}
    for key, text in data.items():
        where = f"{path}: [{section}] {key}"
        if key not in keys:
            raise StrategyError(f"{where}: not a row of this table (rows: {keys[0]}..{keys[-1]})")
        if not isinstance(text, str):
            raise StrategyError(f"{where}: must be a string of {len(COLUMNS)} actions")
        row = tuple(text.split())
        if len(row) != len(COLUMNS):
            raise StrategyError(f"{where}: has {len(row)} actions, needs {len(COLUMNS)}")
        for col, action in zip(COLUMNS, row, strict=True):
            if action not in allowed:
                raise StrategyError(
                    f"{where}: {action!r} against {col} is not one of {', '.join(sorted(allowed))}"
                )
        out[key] = row
    if complete:
        missing = [k for k in keys if k not in out]
        if missing:
            raise StrategyError(f"{path}: [{section}] has no row for {', '.join(missing)}")
    return out


def _layers(
    path: Path, name: str, data: Any, keys: Sequence[str]
) -> tuple[tuple[int, Mapping[int, Row]], ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise StrategyError(f"{path}: [{name}] must hold tables named by a number of cards")
    layers: list[tuple[int, Mapping[int, Row]]] = []
    for n_text, rows in data.items():
        if not n_text.isdigit() or int(n_text) < 3:
            raise StrategyError(f"{path}: [{name}.{n_text}]: the number of cards must be 3 or more")
        parsed = _rows(path, f"{name}.{n_text}", rows, keys, ACTIONS, complete=False)
        layers.append((int(n_text), {int(k): v for k, v in parsed.items()}))
    layers.sort(key=lambda layer: -layer[0])
    return tuple(layers)


def load_strategy(path: str | Path) -> Strategy:
    """Read and check a strategy file: every total and pair must have a full row."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise StrategyError(f"{path}: no such strategy file") from None
    except tomllib.TOMLDecodeError as exc:
        raise StrategyError(f"{path}: not valid TOML ({exc})") from None
    columns = data.get("columns", list(COLUMNS))
    if list(columns) != list(COLUMNS):
        raise StrategyError(f"{path}: columns must be {' '.join(COLUMNS)} (got {columns!r})")
    hard_keys = [str(t) for t in HARD_TOTALS]
    soft_keys = [str(t) for t in SOFT_TOTALS]
    for section in ("hard", "soft", "pairs"):
        if section not in data:
            raise StrategyError(f"{path}: the [{section}] table is missing")
    hard = _rows(path, "hard", data["hard"], hard_keys, ACTIONS, complete=True)
    soft = _rows(path, "soft", data["soft"], soft_keys, ACTIONS, complete=True)
    pairs = _rows(path, "pairs", data["pairs"], PAIR_RANKS, PAIR_ACTIONS, complete=True)
    rescue = _rows(
        path, "rescue", data.get("rescue", {}), hard_keys, RESCUE_ACTIONS, complete=False
    )
    flags: dict[str, bool] = {}
    for key in ("insurance", "chase_super_bonus"):
        value = data.get(key, False)
        if not isinstance(value, bool):
            raise StrategyError(f"{path}: {key} must be true or false (got {value!r})")
        flags[key] = value
    known = {
        "name", "source", "games", "insurance", "chase_super_bonus", "columns",
        "hard", "soft", "pairs", "hard_from_cards", "soft_from_cards", "rescue",
    }  # fmt: skip
    unknown = sorted(set(data) - known)
    if unknown:
        raise StrategyError(f"{path}: unknown key {unknown[0]!r}")
    return Strategy(
        name=str(data.get("name", path.stem)),
        source=str(data.get("source", "")),
        path=str(path),
        insurance=flags["insurance"],
        chase_super_bonus=flags["chase_super_bonus"],
        hard={int(k): v for k, v in hard.items()},
        soft={int(k): v for k, v in soft.items()},
        pairs=pairs,
        hard_from_cards=_layers(path, "hard_from_cards", data.get("hard_from_cards"), hard_keys),
        soft_from_cards=_layers(path, "soft_from_cards", data.get("soft_from_cards"), soft_keys),
        rescue={int(k): v for k, v in rescue.items()},
    )


__all__ = [
    "COLUMNS",
    "DEFAULT_STRATEGY",
    "Strategy",
    "StrategyError",
    "load_strategy",
    "strategy_path",
]
