"""`floorctl replay`: run a scenario through the engine and print what the table would have done.

The readable account gives each round (its dealers on duty, hands, settlements and flags), then
the decks inspected and the shoes loaded with their reconciliation; ``--json`` prints the replay
document (``rounds``, ``shoes``, ``inspections``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from controller.engine import Table
from controller.events import (
    ScenarioError,
    jsonl_lines,
    parse_event,
    parse_scenario,
    parse_setup,
)
from controller.roundtext import round_lines


def replay_lines(lines: Iterable[str]) -> dict[str, Any]:
    """Replay scenario text lines; raises :class:`ScenarioError` on malformed input."""
    setup, events = parse_scenario(lines)
    table = Table(setup)
    for _, ev in events:
        table.apply(ev)
    return table.result()


def replay_dicts(objs: Iterable[Any]) -> dict[str, Any]:
    """Replay event objects (the table line first), as the audit store keeps them."""
    it = iter(objs)
    try:
        first = next(it)
    except StopIteration:
        raise ScenarioError(1, "type", "no events: the table line is missing") from None
    table = Table(parse_setup(first, 1))
    for number, obj in enumerate(it, start=2):
        table.apply(parse_event(obj, number))
    return table.result()


def format_table(doc: dict[str, Any]) -> str:
    """A readable account of each round, for a person at a terminal."""
    out: list[str] = [f"game {doc['game']}  table {doc.get('table_id', '')}".rstrip()]
    for rnd in doc["rounds"]:
        out.append("")
        out.append(f"round {rnd['round']}  {rnd['status']}")
        out.extend(round_lines(rnd))
    out.extend(_inspections(doc.get("inspections") or []))
    out.extend(_shoes(doc.get("shoes") or []))
    return "\n".join(out)


def _inspections(found: list[dict[str, Any]]) -> list[str]:
    if not found:
        return []
    out = ["", "decks inspected"]
    for i in found:
        who = f" by {', '.join(i['by'])}" if i["by"] else ""
        deck = f"deck {i['deck']}" if i["deck"] else "deck (no serial)"
        wrong = [
            f"{what} {', '.join(i[what])}"
            for what in ("missing", "doubled", "foreign", "tens")
            if i[what]
        ]
        verdict = "passed" if i["passed"] else f"FAILED: {'; '.join(wrong)}"
        out.append(
            f"  {deck:<18} events {i['inspect']}-{i['end']}{who}: {i['cards']} cards, {verdict}"
        )
    return out


def _shoes(shoes: list[dict[str, Any]]) -> list[str]:
    if not shoes:
        return []
    out = ["", "shoes"]
    for s in shoes:
        serials = s["deck_serials"]
        decks = f"{s['decks']} deck{'s' if s['decks'] != 1 else ''}"
        if serials is not None:
            decks += f" {', '.join(serials)}; inspected: {', '.join(s['inspected']) or 'none'}"
        if s["reconciled"] is None:
            verdict = "not ended"
        elif s["reconciled"]:
            verdict = "reconciled"
        else:
            wrong = [f"{k} {', '.join(s[k])}" for k in ("missing", "extra") if s[k]]
            verdict = f"NOT RECONCILED: {'; '.join(wrong)}"
        out.append(f"  loaded at event {s['shoe']}: {decks}  {verdict}")
    return out


def _run(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    if args.signing_key and not args.db:
        print("floorctl replay: --signing-key signs a store: give --db URL too", file=sys.stderr)
        return 2
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"floorctl replay: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    lines = jsonl_lines(text)
    try:
        doc = replay_lines(lines)  # malformed input is refused before anything is stored
        if args.db:
            from controller.store.api import record_scenario
            from controller.store.db import StoreError

            objs = [json.loads(line) for line in lines if line.strip()]
            try:
                doc = record_scenario(args.db, objs, signing_key=args.signing_key)
            except StoreError as exc:
                from controller.store.keys import KeyFileError

                print(f"floorctl replay: {exc}", file=sys.stderr)
                return 2 if isinstance(exc, KeyFileError) else 1
    except ScenarioError as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_table(doc))
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "replay",
        help="replay a scenario (JSON Lines) through the rules engine",
        description="Replay a scenario through the round engine: settlements and flags per round.",
    )
    p.add_argument("scenario", help="the scenario file (JSON Lines, the table line first)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")
    p.add_argument(
        "--db",
        metavar="URL",
        help="record the events into this audit store as a live table would "
        "(sqlite:///table.db or postgresql://...)",
    )
    p.add_argument(
        "--signing-key",
        metavar="FILE",
        help="with --db: sign the log with this table.key (floorctl keygen), as a live table "
        "signs it ([store] signing_key)",
    )
    p.set_defaults(func=_run)
