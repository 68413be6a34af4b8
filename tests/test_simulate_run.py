"""`floorctl simulate` end to end: seeded, the same whatever --jobs, played by the engine."""

from __future__ import annotations

import io
import json
import math
from decimal import Decimal
from typing import Any

import pytest

from controller.cli import main
from controller.sim.player import suit_class
from controller.sim.runner import ProgressBar, SimConfig, run
from controller.sim.stats import Tally
from controller.sim.strategy import strategy_path

D = Decimal
CHUNK = 400  # small chunks so that a short run is still shared out between processes


def config(game: str, seed: str = "7", **rules: Any) -> SimConfig:
    return SimConfig(
        game=game,
        strategy_path=str(strategy_path(game)),
        seed=seed,
        overrides=tuple(rules.items()),
    )


def figures(tally: Tally) -> dict[str, Any]:
    return tally.to_dict()


@pytest.fixture(scope="module")
def blackjack_run() -> Tally:
    return run(config("blackjack"), 3000, 1, chunk_rounds=CHUNK)


@pytest.fixture(scope="module")
def pontoon_run() -> Tally:
    return run(config("pontoon-nz-2000"), 3000, 1, chunk_rounds=CHUNK)


def test_the_same_seed_gives_the_same_figures(blackjack_run: Tally) -> None:
    again = run(config("blackjack"), 3000, 1, chunk_rounds=CHUNK)
    assert figures(again) == figures(blackjack_run)
    other = run(config("blackjack", seed="8"), 3000, 1, chunk_rounds=CHUNK)
    assert figures(other)["net"] != figures(blackjack_run)["net"]


def test_jobs_share_the_chunks_without_changing_the_result(pontoon_run: Tally) -> None:
    two = run(config("pontoon-nz-2000"), 3000, 2, chunk_rounds=CHUNK)
    assert figures(two) == figures(pontoon_run)


@pytest.mark.parametrize("game", ["blackjack", "pontoon-nz-2000"])
def test_the_engine_accepts_every_event_the_simulator_sends(
    game: str, blackjack_run: Tally, pontoon_run: Tally
) -> None:
    tally = blackjack_run if game == "blackjack" else pontoon_run
    assert tally.flags == 0, tally.flag_samples
    assert tally.rounds == 3000
    assert tally.shuffles >= 3000 * 5 // (6 * 48)  # a fresh shoe roughly every 45-55 rounds


def test_blackjack_frequencies_are_those_of_the_game(blackjack_run: Tally) -> None:
    d = figures(blackjack_run)["frequencies"]
    # A blackjack is 2 * (4/13) * (16/52) ~ 4.7% of rounds; the dealer busts in ~28% of the
    # rounds he plays out (less per round: he stops when every hand has busted).
    assert 0.035 < d["natural"]["per_round"] < 0.06
    assert 0.035 < d["dealer_natural"]["per_round"] < 0.06
    assert 0.18 < d["dealer_bust"]["per_round"] < 0.33
    assert 0.07 < d["double"]["per_round"] < 0.14
    assert d["super_bonus"]["count"] == 0 and d["rescue"]["count"] == 0
    assert 0.8 < figures(blackjack_run)["sd_per_round_units"] < 1.5


def test_pontoon_frequencies_are_those_of_the_game(pontoon_run: Tally) -> None:
    d = figures(pontoon_run)["frequencies"]
    # Pontoon is 2 * (4/48) * (12/48) ~ 4.2% of rounds: fewer picture cards than tens.
    assert 0.03 < d["natural"]["per_round"] < 0.055
    assert d["five_card_21"]["count"] > 0
    assert d["rescue"]["count"] > 0  # 12.8 is played
    assert 0.15 < d["dealer_bust"]["per_round"] < 0.3


def test_a_rule_change_reaches_the_engine(blackjack_run: Tally) -> None:
    # Same seed, same cards, same decisions: paying blackjack 6:5 costs 0.3 of the bet on
    # every blackjack that won, and on nothing else.
    six_five = run(config("blackjack", natural_pays="6:5"), 3000, 1, chunk_rounds=CHUNK)
    bet = Decimal(10)
    lost = (blackjack_run.net - six_five.net) / (bet * Decimal("0.3"))
    naturals = blackjack_run.counts["natural"]
    assert lost == lost.to_integral_value()
    assert 0.85 * naturals <= lost <= naturals
    # The dealer hitting soft 17 changes the dealer's hands, so the figures move.
    h17 = run(config("blackjack", dealer_hits_soft_17=True), 3000, 1, chunk_rounds=CHUNK)
    assert h17.net != blackjack_run.net


def test_pontoon_shoe_has_no_tens(pontoon_run: Tally) -> None:
    from controller.sim.player import RoundPlayer

    p = RoundPlayer(config("pontoon-nz-2000"), "x")
    seen = set()
    for _ in range(200):
        r = p.play_round()
        seen.update(c[0] for h in r.hands for c in h["cards"])
        seen.update(c[0] for c in r.dealer)
    assert "T" not in seen and {"J", "Q", "K"} <= seen


def test_standard_error_from_the_per_round_variance() -> None:
    t = Tally()
    nets = [Decimal(15), Decimal(-10), Decimal(0), Decimal(-20)]
    for net in nets:
        t.add_round(net, Decimal(10), Decimal(10))
    units = [float(n) / 10 for n in nets]
    mean = sum(units) / 4
    var = sum((u - mean) ** 2 for u in units) / 3
    assert t.house_edge() == pytest.approx(-mean)
    assert t.standard_error() == pytest.approx(math.sqrt(var / 4))


def test_progress_bar_prints_tenths_when_not_a_terminal() -> None:
    out = io.StringIO()
    bar = ProgressBar(1000, out)
    for done in range(0, 1001, 50):
        bar(done)
    lines = out.getvalue().splitlines()
    assert len(lines) == 11 and "100.0%" in lines[-1] and "1,000/1,000 rounds" in lines[-1]


def test_cli_prints_a_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["simulate", "--game", "pontoon-nz-2000", "--rounds", "300", "--seed", "3", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rounds"] == 300 and doc["game"] == "pontoon-nz-2000"
    assert {"house_edge", "standard_error", "frequencies", "timing"} <= set(doc)
    for key in ("natural", "five_card_21", "six_seven_eight", "seven_seven_seven",
                "super_bonus", "dealer_bust"):  # fmt: skip
        assert key in doc["frequencies"]


def test_cli_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["simulate", "--game", "blackjack", "--rounds", "200", "--seed", "3"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "house edge" in out and "blackjack" in out and "dealer bust" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "baccarat"], "--game: no rule set named 'baccarat'"),
        (["--game", "blackjack", "--rules", "{"], "--rules: not valid JSON"),
        (["--game", "blackjack", "--rules", '{"decks": "six"}'], "--rules: rule setting 'decks'"),
        (["--game", "blackjack", "--rules", '{"colour": 1}'], "'colour' is not a setting"),
        (["--game", "blackjack", "--strategy", "/nonexistent.toml"], "--strategy: /nonexistent"),
        (["--game", "blackjack", "--bet", "ten"], "--bet: 'ten' is not an amount"),
    ],
)
def test_cli_input_errors_name_the_option(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["simulate", "--rounds", "10", "--seed", "1", *args])
    assert rc == 2
    assert message in capsys.readouterr().err


def test_money_counts_say_what_each_hands_money_did(pontoon_run: Tally) -> None:
    d = figures(pontoon_run)["frequencies"]
    money = sum(d[k]["count"] for k in ("won", "lost", "pushed", "surrendered", "rescued"))
    assert money == pontoon_run.hands  # every hand's money did exactly one of these
    assert d["rescued"]["count"] == d["rescue"]["count"] > 0
    # A rescued hand's money is lost whatever its total did against the dealer (12.8), so the
    # money won can only be fewer than the hands won by their totals.
    assert d["won"]["count"] <= d["win"]["count"]


def test_money_counts_of_one_round_worked_by_hand() -> None:
    from controller.engine import RoundResult, Settlement, SettlementKind
    from controller.sim.player import PLAYER, RoundPlayer

    p = RoundPlayer(config("pontoon-nz-2000"), "x")
    p._rescued = {1}  # the round's second hand was rescued (12.8)
    hands = [
        {"box": 1, "hand": 0, "cards": ["8S", "9D"], "total": 17, "doubled": False},
        {"box": 1, "hand": 1, "cards": ["8H", "3C", "6C"], "total": 17, "doubled": True},
        {"box": 1, "hand": 2, "cards": ["8C", "KC"], "total": 18, "doubled": False},
    ]
    for h, outcome in zip(hands, ("push", "push", "win"), strict=True):
        h["outcome"] = outcome
    rows = [  # 17 v 17 stands off; the rescued 17 v 17 gets only its double back; 18 wins
        Settlement(PLAYER, 1, 0, SettlementKind.HAND, D(10), D(10)),
        Settlement(PLAYER, 1, 1, SettlementKind.HAND, D(20), D(10)),
        Settlement(PLAYER, 1, 2, SettlementKind.HAND, D(10), D(20)),
    ]
    p._record(RoundResult(1, "settled", ["9H", "8D"], 17, hands, rows, []))
    c = p.tally.counts
    assert (c["won"], c["lost"], c["pushed"], c["rescued"]) == (1, 0, 1, 1)
    assert (c["win"], c["push"]) == (1, 2)  # the hands' outcomes by total, as before
    assert p.tally.net == D(0)


@pytest.mark.parametrize(
    ("cards", "klass"),
    [
        (["6H", "7D", "8H"], "mixed"),
        (["6S", "7S", "8H"], "mixed"),  # two spades are not "all spades"
        (["7C", "7C", "7C"], "suited"),
        (["8D", "6D", "7D"], "suited"),
        (["7S", "7S", "7S"], "spades"),
        (["6S", "8S", "7S"], "spades"),
    ],
)
def test_three_card_hands_by_the_suit_classes_of_11_1(cards: list[str], klass: str) -> None:
    assert suit_class(cards) == klass


def test_suit_classes_and_tied_rescues_partition_their_counts(pontoon_run: Tally) -> None:
    d = figures(pontoon_run)["frequencies"]
    for shape in ("six_seven_eight", "seven_seven_seven"):
        parts = [d[f"{shape}_{k}"]["count"] for k in ("mixed", "suited", "spades")]
        assert sum(parts) == d[shape]["count"]
    assert d["six_seven_eight_mixed"]["count"] > 0  # the run is long enough to show them
    assert 0 < d["rescued_tie"]["count"] < d["rescued"]["count"]
