"""Game protection (issue 29): the record, the tests, the verdicts, ``floorctl protect``.

The sessions come from ``benchmarks/protect_population.py``, whose game is the oracle's (written
from the rule book without the engine) and which builds its own record of what it dealt: the
engine path (:func:`controller.protect.record.read_table`, from the events) must agree with it
round by round and decision by decision, and ``floorctl replay`` must find nothing to flag.
A small population is judged here; the measured rates are the benchmark's
(``benchmarks/bench_protect.py``).
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from itertools import product
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.protect_population import PLAYER, play_session  # noqa: E402
from controller.protect.analysis import analyse, analyse_session, sessions  # noqa: E402
from controller.protect.record import read_table  # noqa: E402
from controller.protect.stats import (  # noqa: E402
    cluster_slope,
    index_direction,
    informed,
    poisson_binomial_z,
)
from controller.protect.tags import CountError, count_system  # noqa: E402
from controller.protect.verdict import load_calibration  # noqa: E402
from controller.replay import replay_dicts  # noqa: E402

FLOORCTL = [sys.executable, "-m", "controller.cli"]


# --- tags ----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["pontoon-nz-2000", "blackjack-nz-1994", "blackjack"])
def test_count_tags_are_balanced_and_match_the_deck(game: str) -> None:
    excluded = "T" if game.startswith("pontoon") else ""
    cs = count_system(game, excluded)
    assert sum(t * n for t, n in zip(cs.tags, cs.per_deck, strict=True)) == 0
    assert cs.cards_per_deck == (48 if excluded else 52)
    # Low cards help the dealer: their removal helps the player (+), and the ace and the
    # ten-value cards help the player (-), as every published count agrees.
    assert cs.tags[4] == 1 and cs.tags[0] == -1 and cs.tags[9] == -1
    assert cs.advantage_per_true_count > 0


def test_count_tags_file_errors_name_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "tags.toml"
    bad.write_text(
        '["blackjack"]\ntags = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n'
        "cards_per_deck = [4, 4, 4, 4, 4, 4, 4, 4, 4, 16]\n"
    )
    with pytest.raises(CountError, match=r"\[blackjack\] tags: not balanced"):
        count_system("blackjack", "", str(bad))
    with pytest.raises(CountError, match="no count for game 'pontoon-nz-2000'"):
        count_system("pontoon-nz-2000", "T", str(bad))


# --- the statistics against independent computations ---------------------------------------


def test_poisson_binomial_tail_is_exact() -> None:
    rng = random.Random(7)
    probs = [rng.uniform(0.1, 0.9) for _ in range(10)]
    for hits in (0, 3, 7, 10):
        brute = 0.0
        for outcome in product((0, 1), repeat=len(probs)):
            if sum(outcome) >= hits:
                brute += math.prod(p if o else 1 - p for p, o in zip(probs, outcome, strict=True))
        tail, _ = poisson_binomial_z(hits, probs)
        assert tail == pytest.approx(brute, abs=1e-12)


def test_cluster_slope_finds_a_slope_and_not_a_drift() -> None:
    rng = random.Random(3)
    # Bets that drift by shoe but are unrelated to the count: no slope to find.
    x, y, g = [], [], []
    for shoe in range(60):
        level = rng.gauss(0, 1)
        drift = rng.gauss(0, 1)
        for _ in range(30):
            x.append(level + rng.gauss(0, 0.3))
            y.append(drift + rng.gauss(0, 0.1))
            g.append(shoe)
    _, z, clusters = cluster_slope(x, y, g)
    assert clusters == 60 and abs(z) < 3.5
    # Bets that follow the count.
    y2 = [a * 0.5 + rng.gauss(0, 0.3) for a in x]
    slope, z2, _ = cluster_slope(x, y2, g)
    assert slope == pytest.approx(0.5, abs=0.05) and z2 > 10


def test_informed_stand_on_a_busting_card_and_its_chance() -> None:
    # 16 against a ten: the table hits; standing is right when the next card busts (6 or more).
    unseen = (4, 4, 4, 4, 4, 4, 4, 4, 4, 16)  # one deck
    got = informed(
        ("TS", "6H"), "KD", "hit", "stand", unseen, next_card="8C", hole=None, pontoon=False
    )
    assert got == [("next card", True, pytest.approx((4 * 4 + 16) / 52))]
    wrong = informed(
        ("TS", "6H"), "KD", "hit", "stand", unseen, next_card="3C", hole=None, pontoon=False
    )
    assert wrong[0][1] is False
    # No departure from the table, nothing to judge.
    assert (
        informed(("TS", "6H"), "KD", "hit", "hit", unseen, next_card="3C", hole=None, pontoon=False)
        == []
    )


def test_informed_by_the_hole_card_allows_for_the_peek() -> None:
    # Insurance against an ace: right when the hole card is a ten; it is decided before the
    # peek, so every unseen card may be the hole card.
    unseen = (3, 4, 4, 4, 4, 4, 4, 4, 4, 16)
    got = informed(
        ("9S", "7H"),
        "AD",
        "no insurance",
        "insurance",
        unseen,
        next_card=None,
        hole="QC",
        pontoon=False,
    )
    assert got == [("hole card", True, pytest.approx(16 / 51))]
    # Standing on 16 against an ace after the peek: the hole card is no ten (no blackjack);
    # standing is right when the dealer's two cards make 12-16 or no more than the player's.
    after = informed(
        ("9S", "7H"), "AD", "hit", "stand", unseen, next_card=None, hole="5C", pontoon=False
    )
    # Hole cards making A+x = soft 13..17 / hard: A-2..A-5 give soft 13-16 (stiff), A-6 is 17,
    # A-7..A-9 beat 16; A-A is 12 (stiff). Stiff or at most 16: A, 2, 3, 4, 5 of 35 non-tens.
    assert after == [("hole card", True, pytest.approx((3 + 4 * 4) / 35))]


def test_index_direction() -> None:
    assert index_direction("hit", "stand") == 1
    assert index_direction("stand", "hit") == -1
    assert index_direction("hit", "double") == 1
    assert index_direction("double", "hit") == -1
    assert index_direction("no insurance", "insurance") == 1
    assert index_direction("hit", "hit") == 0


# --- the engine path against the population simulator's own record ------------------------


@pytest.mark.parametrize(
    "game,kind",
    [
        ("pontoon-nz-2000", "counter-1-8-index"),
        ("pontoon-nz-2000", "knower-5"),
        ("blackjack", "counter-1-12-index"),
        ("blackjack", "knower-5"),
        ("blackjack", "hunch"),
        ("pontoon-nz-2000", "backcounter"),
    ],
)
def test_records_from_events_agree_with_the_game_that_dealt_them(game: str, kind: str) -> None:
    direct, events = play_session(game, kind, 400, "agree", events=True)
    doc = replay_dicts(events)
    assert [f for r in doc["rounds"] for f in r["flags"]] == []
    assert all(r["status"] == "settled" for r in doc["rounds"])
    got = read_table(events)
    assert len(got.rounds) == len(direct.rounds) == 400
    for a, b in zip(direct.rounds, got.rounds, strict=True):
        assert (a.round, a.shoe, a.dealer) == (b.round, b.shoe, b.dealer)
        assert a.true_count == pytest.approx(b.true_count)
        assert sorted((p.player, p.wager, p.net) for p in a.players) == sorted(
            (p.player, p.wager, p.net) for p in b.players
        )
    key = lambda d: (d.round, d.player, d.cards, d.action)  # noqa: E731
    mine = {key(d): d for d in direct.decisions}
    theirs = {key(d): d for d in got.decisions}
    assert mine.keys() == theirs.keys()
    for k, d in mine.items():
        e = theirs[k]
        assert (d.advised, d.next_card, d.hole, d.unseen, d.up) == (
            e.advised,
            e.next_card,
            e.hole,
            e.unseen,
            e.up,
        ), k
        assert d.true_count == pytest.approx(e.true_count)
    assert [(s.shoe, s.cards_dealt, s.early) for s in direct.shuffles] == [
        (s.shoe, s.cards_dealt, s.early) for s in got.shuffles
    ]
    if kind.startswith(("counter", "knower", "hunch")):
        assert any(d.action != d.advised for d in got.decisions if d.player == PLAYER)


# --- a small population judged --------------------------------------------------------------


def _level(game: str, kind: str, rounds: int, seed: str) -> str:
    rec, _ = play_session(game, kind, rounds, seed)
    mine = [s for s in sessions(rec, split=False) if s.player == PLAYER]
    return str(analyse_session(mine[0], load_calibration())["verdict"]["level"])


@pytest.mark.parametrize("game", ["pontoon-nz-2000", "blackjack"])
def test_a_small_population_is_told_apart(game: str) -> None:
    for seed in ("t1", "t2"):
        assert _level(game, "counter-1-8", 1000, seed) == "alert"
        assert _level(game, "knower-5", 1000, seed) == "alert"
        assert _level(game, "flat", 1000, seed) != "alert"
        assert _level(game, "martingale", 1000, seed) != "alert"


def test_a_favouring_dealer_is_told_from_the_others() -> None:
    rec, _ = play_session("pontoon-nz-2000", "favoured", 1500, "fav")
    doc = analyse([rec])
    levels = {d["dealer"]: d["verdict"]["level"] for d in doc["dealers"]}
    assert levels["D2"] == "alert"
    assert levels["D1"] != "alert" and levels["D3"] != "alert"


def test_a_knower_at_every_dealer_does_not_accuse_the_dealers() -> None:
    rec, _ = play_session("blackjack", "knower-5", 1500, "everywhere")
    doc = analyse([rec])
    assert all(d["verdict"]["level"] != "alert" for d in doc["dealers"])
    studied = [p for p in doc["players"] if p["player"] == PLAYER]
    assert any(p["verdict"]["level"] == "alert" for p in studied)


# --- the command ----------------------------------------------------------------------------


def test_floorctl_protect_json(tmp_path: Path) -> None:
    _, events = play_session("pontoon-nz-2000", "counter-1-12", 600, "cli", events=True)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    out = subprocess.run(
        [*FLOORCTL, "protect", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    doc = json.loads(out.stdout)
    studied = [p for p in doc["players"] if p["player"] == PLAYER]
    assert studied and studied[0]["verdict"]["level"] == "alert"
    assert studied[0]["verdict"]["false_alarm_rate"] is not None
    assert doc["tables"][0]["shuffle_audit"]["shuffles"] > 0
    assert {d["dealer"] for d in doc["dealers"]} == {"D1", "D2", "D3"}
    text = subprocess.run(
        [*FLOORCTL, "protect", str(path)], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert "ALERT" in text


@pytest.mark.parametrize(
    "line,message",
    [
        ('{"type": "card", "card": "1S"}', 'line 2: "card"'),
        ("{not json", "line 2"),
        ('{"type": "bet", "box": 1, "player": "a"}', 'line 2: "amount"'),
    ],
)
def test_floorctl_protect_bad_input_exits_2(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    head = {"type": "table", "game": "pontoon-nz-2000", "boxes": 7, "min_bet": 5, "max_bet": 500}
    path.write_text(json.dumps(head) + "\n" + line + "\n", encoding="utf-8")
    out = subprocess.run(
        [*FLOORCTL, "protect", str(path)], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
