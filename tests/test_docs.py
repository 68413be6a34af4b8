"""The reference pages cover what the code has: every command, config key, event type and flag.

The pages are written by hand, in the users' words; these tests hold them to the code, so a
command, a key, an event or a rule added without its documentation fails here, naming it. The
site's own build (``make docs``: MkDocs with warnings as errors) checks the links and anchors.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from controller import cli, rules
from controller.events import _SPECS
from controller.service import config as service_config

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _page(relative: str) -> str:
    return (DOCS / relative).read_text(encoding="utf-8")


def _in_code(text: str) -> set[str]:
    """Every word shown as code (between backticks) on a page, split at spaces and dots."""
    words: set[str] = set()
    for span in re.findall(r"`([^`]+)`", text):
        words.add(span)
        words.update(re.split(r"[\s.=\[\]]+", span))
    return words


def _commands() -> list[tuple[str, str | None]]:
    parser = cli.build_parser(None)
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out: list[tuple[str, str | None]] = []
    for name, sub in top.choices.items():
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        out += [(name, s) for s in nested[0].choices] if nested else [(name, None)]
    return out


def test_the_commands_page_lists_every_command_and_subcommand() -> None:
    page = _page("reference/commands.md")
    missing = []
    for name, sub in _commands():
        if name == "floor":  # the floor's table lists its subcommands by their own name
            found = f"| `{sub} " in page or f"| `{sub}`" in page
        elif sub is None:
            found = f"`floorctl {name} " in page or f"`floorctl {name}`" in page
        else:
            found = f"`floorctl {name} {sub} " in page
        if not found:
            missing.append(f"floorctl {name} {sub or ''}".strip())
    assert not missing, f"docs/reference/commands.md lacks: {missing}"


def _keys(table: dict[str, Any], prefix: str = "") -> set[str]:
    keys = set()
    for key, value in table.items():
        keys.add(key)
        if isinstance(value, dict):
            keys |= _keys(value, f"{prefix}{key}.")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                keys |= _keys(item, f"{prefix}{key}.")
    return keys


def test_the_configuration_reference_has_every_key() -> None:
    words = _in_code(_page("technician/configuration.md"))
    expected = set(service_config._TABLE_KEYS) | set(service_config._TABLE_SERVICE_KEYS)
    for spec in (service_config._SHOE, service_config._UI, service_config._STORE):
        expected |= set(spec)
    expected |= set(service_config._LOG)
    example = tomllib.loads((ROOT / "config" / "table.example.toml").read_text(encoding="utf-8"))
    expected |= _keys(example)
    # The keys calibrate --learn writes (the example has none learned).
    expected |= {"learned", "focal_px", "k1", "width", "white", "runs", "face", "side", "step_mm"}
    expected |= {"direction_deg"}
    expected -= {"rules"}  # the [table.rules] table, documented as a section
    missing = sorted(k for k in expected if k not in words)
    assert not missing, f"docs/technician/configuration.md lacks the keys {missing}"
    for section in service_config._SECTIONS:
        assert f"`[{section}]`" in _page("technician/configuration.md"), section


def test_the_events_page_has_every_event_type() -> None:
    page = _page("reference/events.md")
    missing = sorted(t for t in _SPECS if f"| `{t}` |" not in page)
    assert not missing, f"docs/reference/events.md lacks the events {missing}"


@pytest.mark.parametrize("name", ["pontoon-nz-2000", "blackjack-nz-1994", "blackjack"])
def test_the_rule_book_page_names_every_flag_and_setting(name: str) -> None:
    ruleset = rules.load_ruleset(name)
    words = _in_code(_page("reference/rule-book.md"))
    text = _page("reference/rule-book.md")
    flags = set(ruleset.rule_refs.values()) | set(ruleset.rule_words)
    missing_flags = sorted(r for r in flags if r not in text)
    assert not missing_flags, f"the rule book page lacks the rules {missing_flags} of {name}"
    settings = set(ruleset.to_dict()) - {"name", "title", "natural_name", "rule_refs"}
    settings -= {"rule_words"}
    missing = sorted(s for s in settings if s not in words)
    assert not missing, f"the rule book page lacks the settings {missing} of {name}"
