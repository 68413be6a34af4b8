"""Rule sets as data: ``config/<name>.toml`` → a frozen :class:`RuleSet`.

A rule set file may name a ``base`` rule set whose settings it starts from. A scenario's (or a
table config's) ``rules`` object overrides settings by name; an unknown name or a value of the
wrong kind is refused with a message naming the setting and the value.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from functools import cache
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import Any, get_type_hints

# The rule sets, strategy tables and example table config that ship with floorctl: package data
# (``controller/config`` is the top-level ``config/`` directory), found the same way from a
# wheel, an sdist, an editable install and the checkout.
CONFIG_DIR = Path(str(files("controller").joinpath("config")))

# Operators add directories of their own rule sets with FLOORCTL_CONFIG_DIR (several joined by
# ":"), or the table config's ``[table] rules_dir``; these are searched before the shipped ones,
# so a reviewed revision of a rule set may keep its name.
ENV_RULES_DIRS = "FLOORCTL_CONFIG_DIR"
_extra_dirs: list[Path] = []

# A rule set is named, never addressed: letters, digits and "-" only.
RULESET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")

# No amount a table could use comes near this; anything above it is an input error rather than
# a number the engine's arithmetic (28 significant digits) might not hold.
MAX_AMOUNT = Decimal(10) ** 12

GAMES = ("pontoon-nz-2000", "blackjack-nz-1994", "blackjack")


class RuleSetError(ValueError):
    """A rule set or an override that cannot be used; ``key`` names the setting."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class HoleCard(StrEnum):
    """Whether the dealer takes a hole card: ``none`` (his second card after the boxes play)
    or ``peek`` (dealt face down and checked for a natural)."""

    NONE = "none"
    PEEK = "peek"


class NaturalVsNatural(StrEnum):
    """A player's natural against the dealer's: ``win`` or ``push``."""

    WIN = "win"
    PUSH = "push"


class DoubleFirstTwo(StrEnum):
    """Which first two cards may double: ``any``, only ``totals`` listed, or ``never``."""

    ANY = "any"
    TOTALS = "totals"
    NEVER = "never"


class DoubleAmount(StrEnum):
    """A double's amount: ``up_to_original`` (any, up to the wager) or ``equal`` to it."""

    UP_TO_ORIGINAL = "up_to_original"
    EQUAL = "equal"


class SplitPairs(StrEnum):
    """Which pairs split: ``same_value`` or ``same_rank_pictures`` (pictures by rank only)."""

    SAME_VALUE = "same_value"
    SAME_RANK_PICTURES = "same_rank_pictures"


def _ratio(text: str) -> Decimal:
    num, _, den = text.partition(":")
    return Decimal(num) / Decimal(den or "1")


@dataclass(frozen=True)
class RuleSet:
    name: str
    title: str
    natural_name: str
    decks: int
    excluded_ranks: str
    hole_card: HoleCard
    dealer_hits_soft_17: bool
    natural_pays: str
    natural_vs_dealer_natural: NaturalVsNatural
    player_21_beats_dealer_21: bool
    player_21_beats_dealer_pontoon: bool
    dealer_natural_takes_doubles: bool
    dealer_natural_takes_splits: bool
    bonus_odds: bool
    insurance: bool
    insurance_pays: str
    insurance_max_fraction: Decimal
    surrender: bool
    surrender_lost_to_dealer_natural: bool
    double_first_two: DoubleFirstTwo
    double_totals: tuple[int, ...]
    double_no_aces: bool
    double_after_split: bool
    double_split_aces: bool
    double_later_under_21: bool
    double_amount: DoubleAmount
    min_increment: Decimal
    double_aces_count_one: bool
    rescue: bool
    split_pairs: SplitPairs
    max_hands: int
    resplit_aces: bool
    split_aces_one_card: bool
    super_bonus: bool
    super_bonus_small: Decimal
    super_bonus_small_min: Decimal
    super_bonus_large: Decimal
    super_bonus_large_min: Decimal
    bonus_50: Decimal
    absent_draw_to: int
    rule_refs: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))
    rule_words: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))

    # Derived once, used on the hot path.
    @property
    def natural_ratio(self) -> Decimal:
        return _ratio(self.natural_pays)

    @property
    def insurance_ratio(self) -> Decimal:
        return _ratio(self.insurance_pays)

    def ref(self, situation: str) -> str:
        """The rule label a flag for ``situation`` names (a Gazette number where one exists)."""
        return self.rule_refs.get(situation, situation)

    def words(self, rule: str) -> str:
        return self.rule_words.get(rule, "")

    def cards_per_deck(self) -> int:
        return 4 * (13 - len(self.excluded_ranks))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, MappingProxyType):
                v = dict(v)
            elif isinstance(v, (Decimal, StrEnum)):
                v = str(v)
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out


_ENUMS: dict[str, type[StrEnum]] = {
    "hole_card": HoleCard,
    "natural_vs_dealer_natural": NaturalVsNatural,
    "double_first_two": DoubleFirstTwo,
    "double_amount": DoubleAmount,
    "split_pairs": SplitPairs,
}
_CHOICES: dict[str, tuple[str, ...]] = {k: tuple(e) for k, e in _ENUMS.items()}
_MAPPINGS = ("rule_refs", "rule_words")
_TYPES: dict[str, Any] = get_type_hints(RuleSet)
SETTINGS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(RuleSet) if f.name not in _MAPPINGS
)


def _coerce(key: str, value: Any) -> Any:
    """Check one setting's value against its declared type; return it in that type."""
    kind = _TYPES[key]
    bad = RuleSetError(key, f"rule setting {key!r}: {value!r} is not a valid value")
    if kind is bool:
        if not isinstance(value, bool):
            raise bad
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1000:
            raise bad
        return value
    if kind is Decimal:
        if isinstance(value, bool) or not isinstance(value, (int, str, Decimal)):
            raise bad
        try:
            d = Decimal(str(value))
        except InvalidOperation:
            raise bad from None
        if not d.is_finite() or d < 0:
            raise bad
        if d > MAX_AMOUNT:
            raise RuleSetError(key, f"rule setting {key!r}: {value!r} is out of range")
        return d
    if kind == tuple[int, ...]:
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise bad
        return tuple(value)
    if not isinstance(value, str):
        raise bad
    if key in _CHOICES and value not in _CHOICES[key]:
        raise RuleSetError(
            key, f"rule setting {key!r}: {value!r} is not one of {', '.join(_CHOICES[key])}"
        )
    if key in _ENUMS:
        return _ENUMS[key](value)
    if key in ("natural_pays", "insurance_pays") and (
        not _RATIO.fullmatch(value) or _ratio(value) <= 0
    ):
        raise RuleSetError(
            key, f'rule setting {key!r}: {value!r} is not odds such as "3:2" or "2:1"'
        )
    return value


_RATIO = re.compile(r"\d{1,4}(\.\d{1,4})?:[1-9]\d{0,3}(\.\d{1,4})?")


def add_rules_dir(path: Path | str) -> None:
    """Search ``path`` for rule sets too (before the shipped ones), for this process."""
    p = Path(path)
    if p not in _extra_dirs:
        _extra_dirs.insert(0, p)


def rules_dirs() -> tuple[Path, ...]:
    """Where rule sets are looked for, in order: the operator's directories, then floorctl's."""
    env = tuple(Path(p) for p in os.environ.get(ENV_RULES_DIRS, "").split(os.pathsep) if p)
    return (*_extra_dirs, *env, CONFIG_DIR)


def ruleset_path(name: str, dirs: tuple[Path, ...] | None = None) -> Path:
    """The file rule set ``name`` is read from; :class:`RuleSetError` when there is none."""
    if not isinstance(name, str) or not RULESET_NAME.fullmatch(name):
        raise RuleSetError(
            "game", f"{name!r} is not a rule set name (letters, digits and '-', up to 64)"
        )
    search = rules_dirs() if dirs is None else dirs
    for d in search:
        path = d / f"{name}.toml"
        if path.is_file():
            return path
    looked = ", ".join(str(d) for d in search)
    raise RuleSetError("game", f"no rule set named {name!r} (looked in {looked})")


def _raw(name: str) -> dict[str, Any]:
    return _raw_in(name, rules_dirs(), ())


@cache
def _raw_in(name: str, dirs: tuple[Path, ...], chain: tuple[str, ...]) -> dict[str, Any]:
    if name in chain:
        raise RuleSetError("base", f"rule set {name!r} is its own base ({' -> '.join(chain)})")
    path = ruleset_path(name, dirs)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RuleSetError("game", f"rule set {name!r} ({path}) cannot be read: {exc}") from None
    base = data.pop("base", None)
    if base is None:
        return data
    merged = dict(_raw_in(str(base), dirs, (*chain, name)))
    for key, value in data.items():
        if key in _MAPPINGS:
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


def load_ruleset(name: str, overrides: dict[str, Any] | None = None) -> RuleSet:
    """The rule set ``name`` from ``config/``, with ``overrides`` applied by setting name."""
    data = dict(_raw(name))
    for key, value in (overrides or {}).items():
        if key not in SETTINGS or key in ("name",):
            raise RuleSetError(key, f"{key!r} is not a setting of rule set {name!r}")
        data[key] = value
    unknown = set(data) - set(SETTINGS) - set(_MAPPINGS)
    if unknown:
        key = sorted(unknown)[0]
        raise RuleSetError(key, f"rule set {name!r}: unknown setting {key!r}")
    missing = set(SETTINGS) - set(data)
    if missing:
        key = sorted(missing)[0]
        raise RuleSetError(key, f"rule set {name!r}: setting {key!r} is missing")
    values = {key: _coerce(key, data[key]) for key in SETTINGS}
    for key in _MAPPINGS:
        values[key] = MappingProxyType({str(k): str(v) for k, v in data.get(key, {}).items()})
    for key, most in (("decks", 16), ("max_hands", 8)):
        if not 1 <= values[key] <= most:
            raise RuleSetError(key, f"rule setting {key!r}: {values[key]} is not 1 to {most}")
    return RuleSet(**values)
