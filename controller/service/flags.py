"""Each flag as the dealer's banner says it: the rule, its words, and what to do now.

The engine raises a flag naming a rule and what happened; this module adds, for the screen, the
words that fit the case and what the rule directs the dealer to do at that moment (16.1:
"put the 5H in the discard rack"; 16.4: "offer the 7H to box 3 ..."), and who must act on it:

- ``dealer``: the dealer reads it and taps "Seen" (recorded as an ``acknowledge`` event with the
  dealer's id); until then the table waits;
- ``supervisor``: a voided round or box (16.5), the discards reshuffled (16.7), a misread, a card
  the shoe cannot hold, a ten in a Pontoon shoe (6.1), a deck or a shoe that does not add up:
  the banner says a supervisor is needed and stays until one resolves it (a misread by the card
  entered in its place, the others by the supervisor's acknowledgement).

The case is told apart by the rule and by the type of the event that raised the flag (a
``shoe`` flag at a ``misread`` is not a ``shoe`` flag at a ``card``). Pure functions: nothing
here decides anything about the rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from controller.cards import is_card
from controller.engine.decisions import Decision, Kind

SUPERVISOR_RULES = frozenset({"16.5", "16.7", "6.1", "shoe", "tray", "slip"})
# What the tray's flags mean (the rule sets have no words for them: they are the table's own).
TRAY_WORDS = {
    "tray": (
        "The tray must hold what the last count, the slips, the rounds' results and the buy-ins "
        "explain. A difference is a mispay, chips taken, or a round or a buy-in not recorded."
    ),
    "slip": (
        "A fill or credit slip is numbered once and signed by two people, its chips add to its "
        "amount, and the opener's chips are the last closer's."
    ),
}
# Decisions refused by the engine: not recorded as taken, play goes on as the screen shows.
_REFUSALS = frozenset(
    {"turn", "9", "10.1", "10.2", "10.3", "10.4", "12.1", "12.3", "12.4", "12.8", "13.1", "13.3"}
    | {"13.4", "15.3", "11.1", "11.3", "11.4", "insurance", "surrender", "rescue"}
)
_CLOCK_WORDS = (
    "The table's clock was changed while it was recording. Play is not affected: the record "
    "keeps every event in the order it happened, and notes the change."
)
_MISREAD_WORDS = (
    "Every card that leaves the shoe is recorded: a card the reader cannot read is entered "
    "by hand before play goes on."
)


def needs(rule: str, event_type: str | None) -> str:
    """Who acts on the flag: ``"dealer"`` (acknowledges) or ``"supervisor"`` (resolves)."""
    if rule in SUPERVISOR_RULES:
        return "supervisor"
    if event_type in ("inspect_end", "shoe_end"):
        return "supervisor"
    return "dealer"


def case(rule: str, event_type: str | None) -> str:
    """The flag's case: the rule, or the rule and the kind of event for the shoe's flags."""
    if rule == "shoe" and event_type in ("misread", "card", "shuffle", "inspect_end", "shoe_end"):
        return f"shoe:{event_type}"
    if rule == "6.1" and event_type in ("inspect_end", "shuffle"):
        return f"6.1:{event_type}"
    return rule


def banner(
    flag: Mapping[str, Any],
    event_type: str | None,
    words: str,
    open_decisions: Iterable[Decision] = (),
) -> dict[str, Any]:
    """The banner for one flag (``flag`` as :func:`~controller.service.view.flag_view` gives
    it): its case, the words that fit it, what to do now and who must act."""
    rule = str(flag.get("rule", ""))
    kind = case(rule, event_type)
    who = needs(rule, event_type)
    if kind == "shoe:misread":
        words = _MISREAD_WORDS
    elif kind == "clock" and not words:
        words = _CLOCK_WORDS
    if not words and rule in TRAY_WORDS:
        words = TRAY_WORDS[rule]
    return {
        **flag,
        "case": kind,
        "words": words,
        "direction": direction(flag, kind, open_decisions),
        "needs": who,
    }


def _card_of(message: str) -> str | None:
    first = message.split(" ", 1)[0]
    return first if is_card(first) else None


_BOX = re.compile(r"\bbox (\d+)\b")


def direction(flag: Mapping[str, Any], kind: str, open_decisions: Iterable[Decision] = ()) -> str:
    """What the rule directs the dealer to do now, in the dealer's words."""
    message = str(flag.get("message", ""))
    card = _card_of(message) or "card"
    box = flag.get("box")
    if box is None:
        found = _BOX.search(message)
        box = int(found.group(1)) if found else None
    where = f"box {box}" if box is not None else "the box"
    if kind == "16.4":
        offers = [d for d in open_decisions if d.kind is Kind.REFUSE and d.rule == "16.4"]
        if offers:
            offered = offers[0].card or card
            return (
                f"Offer the {offered} to box {offers[0].box}: if refused, offer it to the next "
                "box in turn; refused by every box, it is the dealer's second card."
            )
        if "initial deal" in message:
            return f"Place the {card} where the next card of the deal goes: it is dealt as that."
        return f"The {card} has been placed as the next card: deal on as the screen shows."
    fixed = _DIRECTIONS.get(kind)
    if fixed is not None:
        return fixed.format(card=card, where=where)
    if kind == "16.5":
        if "no round is in progress" in message or "has no wager" in message:
            return "Nothing was voided: play on as the screen shows."
        if box is not None:
            return (
                f"Return {where}'s wagers and insurance and put its cards in the discard rack; "
                "the other boxes play on."
            )
        return "Return every wager and insurance and put all the round's cards in the discard rack."
    if kind == "5.5":
        if "refused" in message:
            return "Refused: hand back the chips placed after no more bets."
        if "settled on" in message:
            return f"Pay {where} on its recorded wager; the supervisor checks the chips."
        return f"Put {where}'s chips back as they were at no more bets; call the supervisor."
    if kind in _REFUSALS:
        return "Refused, not recorded: play on as the screen shows."
    return "Read it, then tap Seen."


_DIRECTIONS = {
    "16.1": "Put the {card} in the discard rack: it is not dealt.",
    "16.2": "The {card} is the next card: deal it where the screen shows it.",
    "16.3": "Put the {card} face down in the discard rack: it is not dealt.",
    "16.6": "Draw cards to {where} until it totals 12 or more.",
    "16.7": "Complete the round with the reshuffled discards, then go on with those cards.",
    "16.8": "Deal on; replace the damaged {card} at the end of the round.",
    "16.9": "Shuffle immediately after this round.",
    "16.10": "At the end of this round, take out the cards and reshuffle.",
    "16.11": "Offer insurance now: each player may still insure until the dealer's second card.",
    "16.12": (
        "Offer {where} surrender now: it may still surrender until its next card or the "
        "dealer's second card."
    ),
    "5.2": "Check {where}: its chips and its recorded wager differ; the wager is entered by hand.",
    "5.6": "Refused: the first insurance wager stands.",
    "6.1": "Take the {card} out of play and hand it to the supervisor: the decks are checked.",
    "6.1:inspect_end": "Set this deck aside: the supervisor removes the ten before it is used.",
    "6.1:shuffle": "Stop: the supervisor checks the decks loaded before any card is dealt.",
    "limits": "Refused: hand the wager back; it must be within the table's limits.",
    "clock": "Play on; tell the supervisor, who has the table's clock checked.",
    "dealer": "Complete the dealer's hand first; only then the next round's wagers.",
    "shoe": "Call the supervisor: the shoe's cards do not add up.",
    "tray": (
        "Stop: touch nothing in the tray. The supervisor recounts it with you; if the "
        "difference stands, surveillance reviews the rounds since the last count."
    ),
    "slip": "Call the supervisor: the slip or the count is corrected before play goes on.",
    "shoe:misread": (
        "Do not deal on: the supervisor enters the card by hand (or marks that no card left)."
    ),
    "shoe:card": "Take the {card} out of play and hand it to the supervisor.",
    "shoe:shuffle": "Stop: the supervisor checks the shoe's load before any card is dealt.",
    "shoe:inspect_end": "Set this deck aside: the supervisor checks it before it is used.",
    "shoe:shoe_end": "Keep the shoe's cards together: the supervisor checks what is missing.",
}
