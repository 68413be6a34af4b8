"""What a tap on the dealer's screen may carry: one strict schema per tap type and per role.

A dealer's tap (no PIN) carries only the fields a dealer sets: the box, the player, an amount,
the cutting card, and the serial of a deck the dealer begins to inspect (typed from the deck's
box when the shoe has no reader; the inspection names who opened the day). Corrections (``correction_of``), notes and deck serials come only from a
supervisor (behind the PIN) or the shoe reader; a field a tap type does not name is refused,
and so is a value of the wrong kind (``"box": "2"``, ``"type": ["stand"]``). The service fills
in what the screen must not choose: the time, the source and the actor.

:func:`parse_tap` reads the raw request body: a body that is not JSON (empty, cut short, not
UTF-8, nested too deep) is a :class:`TapError` with status 400, a JSON body that does not fit
the schema one with status 422, each naming the field that is wrong.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from controller.events import MAX_NOTE
from controller.rules import MAX_AMOUNT

Box = Annotated[StrictInt, Field(ge=1, le=99)]
Player = Annotated[str, Field(min_length=1, max_length=64)]
Amount = Annotated[Decimal, Field(ge=0, le=MAX_AMOUNT, decimal_places=2, allow_inf_nan=False)]
CutCard = Annotated[StrictInt, Field(ge=0, le=1_000_000)] | None
Decks = Annotated[StrictInt, Field(ge=1, le=16)]
Seq = Annotated[StrictInt, Field(ge=0)]
Card = Annotated[str, Field(min_length=2, max_length=2)]
Serial = Annotated[str, Field(pattern=r"^[A-Z0-9]{4,12}$")]
Note = Annotated[str, Field(max_length=MAX_NOTE)]
Rule = Annotated[str, Field(min_length=1, max_length=16)]
Reason = Annotated[str, Field(min_length=1, max_length=200)]
Id = Annotated[str, Field(min_length=1, max_length=64)]
Pin = Annotated[str, Field(min_length=1, max_length=32)]
Step = Literal["spread", "chemmy", "stack", "riffle", "cut"]
Denomination = Annotated[str, Field(pattern=r"^[0-9]{1,9}(\.[0-9]{1,2})?$")]
ChipCount = Annotated[StrictInt, Field(ge=0, le=1_000_000)]
Chips = Annotated[dict[Denomination, ChipCount], Field(min_length=1, max_length=32)]
SlipNumber = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$")]


class _Tap(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def event(self) -> dict[str, Any]:
        """The event this tap makes (amounts as decimal text; fields not given left out)."""
        out = self.model_dump(exclude_none=True)
        for key, value in out.items():
            if isinstance(value, Decimal):
                out[key] = str(value)
        if "cut_card" in type(self).model_fields and "cut_card" not in out:
            out["cut_card"] = None  # a shoe loaded with no cutting card says so
        return out


# --- the dealer's taps ---------------------------------------------------------------------------


class BoxTap(_Tap):
    type: Literal["stand", "hit", "surrender", "refuse", "absent", "offer_surrender"]
    box: Box


class AmountTap(_Tap):
    type: Literal["double", "insurance"]
    box: Box
    player: Player
    amount: Amount


class SplitTap(_Tap):
    type: Literal["split"]
    box: Box
    player: Player | None = None  # given: a back-bettor following the controller's split


class RescueTap(_Tap):
    type: Literal["rescue"]
    box: Box
    player: Player


class BareTap(_Tap):
    type: Literal["peek", "no_more_bets", "offer_insurance", "inspect_end", "shoe_end"]


class InspectTap(_Tap):
    """A deck's inspection begins (6.1); its serial typed when the reader cannot decode it."""

    type: Literal["inspect"]
    deck: Serial | None = None


class ShuffleTap(_Tap):
    type: Literal["shuffle"]
    decks: Decks
    cut_card: CutCard = None


class AcknowledgeTap(_Tap):
    type: Literal["acknowledge"]
    flag_event: Annotated[StrictInt, Field(ge=1)]
    rule: Rule


class CardTap(_Tap):
    """A card the dealer keys in while the shoe is in manual mode."""

    type: Literal["card"]
    card: Card


class BetTap(_Tap):
    """A wager the dealer keys in while the camera is in manual mode."""

    type: Literal["bet"]
    box: Box
    player: Player
    amount: Amount


class StepTap(_Tap):
    type: Literal["opening_step"]
    step: Step


class BuyInTap(_Tap):
    """A cash buy-in: the dealer takes the cash to the drop box and gives chips of its value."""

    type: Literal["buy_in"]
    kind: Literal["cash"] = "cash"
    amount: Amount
    box: Box | None = None


DealerTap = Annotated[
    BuyInTap
    | BoxTap
    | AmountTap
    | SplitTap
    | RescueTap
    | BareTap
    | InspectTap
    | ShuffleTap
    | AcknowledgeTap
    | CardTap
    | BetTap
    | StepTap,
    Field(discriminator="type"),
]


# --- the supervisor's actions --------------------------------------------------------------------


class VoidAction(_Tap):
    type: Literal["void"]
    box: Box | None = None


class ReshuffleAction(_Tap):
    type: Literal["reshuffle_discards"]
    cut_card: CutCard = None


class CardAction(_Tap):
    type: Literal["card"]
    card: Card
    deck: Serial | None = None
    correction_of: Annotated[StrictInt, Field(ge=1)] | None = None
    note: Note | None = None


class BetAction(_Tap):
    type: Literal["bet"]
    box: Box
    player: Player
    amount: Amount
    controls: StrictBool | None = None
    note: Note | None = None


class ShuffleAction(_Tap):
    type: Literal["shuffle"]
    decks: Decks
    cut_card: CutCard = None
    deck_serials: Annotated[list[Serial], Field(max_length=16)] | None = None


class ManualModeAction(_Tap):
    type: Literal["manual_mode"]
    device: Literal["shoe", "camera"]
    on: StrictBool
    reason: Reason | None = None


class AcknowledgeAction(_Tap):
    type: Literal["acknowledge"]
    flag_event: Annotated[StrictInt, Field(ge=1)]
    rule: Rule
    note: Note | None = None


class DayAction(_Tap):
    type: Literal["open_table", "close_table"]


class TrayCountAction(_Tap):
    """The tray counted by denomination, with the dealer (the service adds both ids)."""

    type: Literal["tray_count"]
    kind: Literal["opener", "check", "closer"]
    chips: Chips


class SlipAction(_Tap):
    """A fill or a credit: its slip's number, its chips, and the runner who carried them (the
    service adds the supervisor's and the dealer's ids)."""

    type: Literal["fill", "credit"]
    slip: SlipNumber
    chips: Chips
    runner: Id

    def event(self) -> dict[str, Any]:
        out = super().event()
        del out["runner"]
        out["by"] = [self.runner]
        return out


class MarkerAction(_Tap):
    type: Literal["buy_in"]
    kind: Literal["marker", "cash"]
    amount: Amount
    box: Box | None = None


SupervisorAction = Annotated[
    TrayCountAction
    | SlipAction
    | MarkerAction
    | VoidAction
    | ReshuffleAction
    | CardAction
    | BetAction
    | ShuffleAction
    | ManualModeAction
    | AcknowledgeAction
    | DayAction,
    Field(discriminator="type"),
]


# --- the request bodies --------------------------------------------------------------------------


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DealerBody(_Body):
    event: DealerTap
    seq: Seq


class SupervisorBody(_Body):
    event: SupervisorAction
    seq: Seq | None = None


class Login(_Body):
    """A supervisor's PIN (``supervisor``) or a dealer's sign-in (``dealer``)."""

    supervisor: Id | None = None
    dealer: Id | None = None
    pin: Pin


class TapError(ValueError):
    """A request body refused: ``status`` 400 (not JSON) or 422 (not what the schema allows)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


_NOT_JSON = frozenset({"json_invalid", "json_type"})


M = TypeVar("M", bound=_Body)


def parse_tap(model: type[M], body: bytes) -> M:
    """The request body as ``model``, or a :class:`TapError` naming what is wrong."""
    if not body.strip():
        raise TapError(400, "empty body: send a JSON object")
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise _refusal(exc) from None


def _refusal(exc: ValidationError) -> TapError:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0] if errors else {"type": "json_invalid", "loc": (), "msg": "not JSON"}
    if first["type"] in _NOT_JSON:
        return TapError(400, f"not a JSON object: {first['msg']}")
    # The location names the tap type as pydantic's union tag: say it as the field path.
    loc = list(first["loc"])
    if len(loc) >= 2 and loc[0] == "event" and loc[1] in _TAGS:
        del loc[1]
    where = ".".join(str(part) for part in loc)
    what = first["msg"]
    if first["type"] == "extra_forbidden":
        what = "this tap may not carry it (corrections, notes and deck serials are a supervisor's)"
    elif first["type"] == "union_tag_invalid":
        what = "not a tap this screen takes here"
    elif first["type"] == "union_tag_not_found":
        what = 'no "type" given'
    return TapError(422, f'"{where or "body"}": {what}')


_TAGS = frozenset(
    {
        "stand",
        "hit",
        "surrender",
        "refuse",
        "absent",
        "offer_surrender",
        "double",
        "insurance",
        "split",
        "rescue",
        "peek",
        "no_more_bets",
        "offer_insurance",
        "inspect",
        "inspect_end",
        "shoe_end",
        "shuffle",
        "acknowledge",
        "card",
        "bet",
        "opening_step",
        "void",
        "reshuffle_discards",
        "manual_mode",
        "open_table",
        "close_table",
    }
)
