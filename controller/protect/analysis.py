"""Game protection over one or more tables' records: players, dealers, tables, hold, shuffles.

:func:`analyse` takes :class:`~controller.protect.record.TableRecord` values and returns one
JSON-able document (what ``floorctl protect --json`` prints and the floor's pages show):

- ``players``: each player's session at a table (a run of their rounds with no gap of more than
  :data:`SESSION_GAP_ROUNDS` table rounds or an hour) with its statistics and verdict;
- ``dealers``: each dealer's scorecard, the "played as if they knew" test over the rounds they
  dealt (and for each player they dealt to), and a verdict;
- ``tables``: each table's hold against expectation, its shuffle audit and its players;
- ``hold``: the hold of each table, game, dealer and shift (and of each day, month and year
  where the events carry times) against the rule set's house edge, with a 95% band from the
  rounds' own variance, and the largest contributors of a window outside its band.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from statistics import median
from typing import Any, Final

from controller.protect.record import Decision, PlayerRound, RoundRecord, TableRecord
from controller.protect.stats import (
    cluster_slope,
    index_direction,
    informed,
    normal_sf,
    poisson_binomial_z,
    z_of_tail,
)
from controller.protect.verdict import Calibration, judge, load_calibration

SESSION_GAP_ROUNDS: Final = 60
SESSION_GAP_TIME: Final = timedelta(hours=1)
MIN_SHOES: Final = 5  # bet and play against the count: fewer shoes cannot be judged
MIN_DEPARTURES: Final = 5  # index plays: fewer departures with a direction cannot be judged
MIN_LUCK_ROUNDS: Final = 100  # luck: one bonus payout in a few rounds is no sign of anything
TC_BUCKETS: Final = (
    (-99.0, 0.0, "<=0"),
    (0.0, 1.0, "0..1"),
    (1.0, 2.0, "1..2"),
    (2.0, 3.0, "2..3"),
    (3.0, 4.0, "3..4"),
    (4.0, 99.0, ">=4"),
)
Z95: Final = 1.959964
SHIFTS: Final = ((6, "day"), (14, "swing"), (22, "night"))


def _money(d: Decimal) -> str:
    return str(d.quantize(Decimal("0.01")))


def _r(x: float | None, places: int = 3) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(x, places)


@dataclass
class Session:
    table: TableRecord
    player: str
    rounds: list[tuple[RoundRecord, PlayerRound]] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    @property
    def first(self) -> RoundRecord:
        return self.rounds[0][0]

    @property
    def last(self) -> RoundRecord:
        return self.rounds[-1][0]


def sessions(table: TableRecord, *, split: bool = True) -> list[Session]:
    """Each player's sessions at the table, in order of their first round (``split=False``:
    each player's whole play at the table as one session)."""
    by_player: dict[str, list[Session]] = defaultdict(list)
    index = {r.round: i for i, r in enumerate(table.rounds)}
    for rnd in table.rounds:
        for pr in rnd.players:
            if pr.wager <= 0:
                continue
            runs = by_player[pr.player]
            if runs and split:
                prev = runs[-1].last
                gap_rounds = index[rnd.round] - index[prev.round]
                gap_time = (
                    rnd.start - prev.end if rnd.start is not None and prev.end is not None else None
                )
                if gap_rounds > SESSION_GAP_ROUNDS or (
                    gap_time is not None and gap_time > SESSION_GAP_TIME
                ):
                    runs.append(Session(table, pr.player))
            elif not runs:
                runs.append(Session(table, pr.player))
            runs[-1].rounds.append((rnd, pr))
    by_round: dict[tuple[str, int], Session] = {}
    for runs in by_player.values():
        for s in runs:
            for rnd, _ in s.rounds:
                by_round[(s.player, rnd.round)] = s
    for d in table.decisions:
        found = by_round.get((d.player, d.round))
        if found is not None:
            found.decisions.append(d)
    out = [s for runs in by_player.values() for s in runs]
    out.sort(key=lambda s: (s.first.seq_first, s.player))
    return out


# --- the tests ---------------------------------------------------------------------------


def bet_against_count(s: Session) -> dict[str, Any]:
    x = [rnd.true_count for rnd, _ in s.rounds]
    y = [math.log(float(pr.wager)) for _, pr in s.rounds]
    shoes = [rnd.shoe for rnd, _ in s.rounds]
    slope, z, clusters = cluster_slope(x, y, shoes)
    judged = clusters >= MIN_SHOES
    by_bucket: list[dict[str, Any]] = []
    for lo, hi, label in TC_BUCKETS:
        bets = [
            pr.wager
            for rnd, pr in s.rounds
            if lo < rnd.true_count <= hi or (label == "<=0" and rnd.true_count <= 0)
        ]
        if bets:
            mean = sum(bets, Decimal(0)) / len(bets)
            by_bucket.append({"true_count": label, "rounds": len(bets), "mean_bet": _money(mean)})
    low = [pr.wager for rnd, pr in s.rounds if rnd.true_count <= 1]
    high = [pr.wager for rnd, pr in s.rounds if rnd.true_count >= 3]
    spread = None
    if low and high:
        spread = float((sum(high, Decimal(0)) / len(high)) / (sum(low, Decimal(0)) / len(low)))
    n = len(x)
    corr = None
    if n > 2:
        mx, my = sum(x) / n, sum(y) / n
        sxx = sum((a - mx) ** 2 for a in x)
        syy = sum((b - my) ** 2 for b in y)
        if sxx > 0 and syy > 0:
            corr = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / math.sqrt(
                sxx * syy
            )
    return {
        "correlation": _r(corr),
        "slope_log_bet_per_true_count": _r(slope, 4),
        "z": _r(z, 2) if judged else None,
        "shoes": clusters,
        "spread_high_over_low": _r(spread, 2),
        "by_true_count": by_bucket,
        "judged": judged,
    }


def play_against_count(s: Session) -> dict[str, Any]:
    """Wonging: does the player sit in at high counts and out at low ones?"""
    table = s.table
    first, last = s.first.seq_first, s.last.seq_first
    window = [r for r in table.rounds if first <= r.seq_first <= last and r.status != "void"]
    played = {rnd.round for rnd, _ in s.rounds}
    x = [r.true_count for r in window]
    y = [1.0 if r.round in played else 0.0 for r in window]
    _, z, clusters = cluster_slope(x, y, [r.shoe for r in window])
    entries: list[float] = []
    exits: list[float] = []
    prev_in = False
    prev_shoe = -1
    for r in window:
        now_in = r.round in played
        if r.shoe == prev_shoe and now_in and not prev_in:
            entries.append(r.true_count)
        if r.shoe == prev_shoe and prev_in and not now_in:
            exits.append(r.true_count)
        prev_in, prev_shoe = now_in, r.shoe
    sat_out = len(window) - len(played & {r.round for r in window})
    judged = clusters >= MIN_SHOES and sat_out > 0
    return {
        "table_rounds": len(window),
        "rounds_played": len(played),
        "entries_mid_shoe": len(entries),
        "mean_true_count_at_entry": _r(sum(entries) / len(entries), 2) if entries else None,
        "exits_mid_shoe": len(exits),
        "mean_true_count_at_exit": _r(sum(exits) / len(exits), 2) if exits else None,
        "mean_true_count_of_table": _r(sum(x) / len(x), 2) if x else None,
        "z": _r(z, 2) if judged else None,
        "judged": judged,
    }


def index_plays(decisions: Sequence[Decision]) -> dict[str, Any]:
    pts = [
        (index_direction(d.advised, d.action), d.true_count)
        for d in decisions
        if d.action != d.advised
    ]
    pts = [(sgn, tc) for sgn, tc in pts if sgn != 0]
    n = len(pts)
    z = None
    if n >= MIN_DEPARTURES:
        ms = sum(p for p, _ in pts) / n
        mt = sum(t for _, t in pts) / n
        sss = sum((p - ms) ** 2 for p, _ in pts)
        stt = sum((t - mt) ** 2 for _, t in pts)
        if sss > 0 and stt > 0:
            r = sum((p - ms) * (t - mt) for p, t in pts) / math.sqrt(sss * stt)
            z = r * math.sqrt(n - 1)
        else:
            z = 0.0
    with_count = sum(1 for sgn, tc in pts if sgn * tc >= 2)
    return {
        "departures": sum(1 for d in decisions if d.action != d.advised),
        "with_a_direction": n,
        "in_the_count_s_direction_at_2_or_more": with_count,
        "z": _r(z, 2),
        "judged": z is not None,
    }


def assessed(
    decisions: Iterable[Decision], what: str, pontoon: bool
) -> Iterator[tuple[Decision, bool, float]]:
    """Each departure judged given ``what`` ("next card" or "hole card"): (the decision, was it
    right, the chance of being right without knowing)."""
    for d in decisions:
        for known, right, p in informed(
            d.cards,
            d.up,
            d.advised,
            d.action,
            d.unseen,
            next_card=d.next_card,
            hole=d.hole,
            pontoon=pontoon,
        ):
            if known == what:
                yield d, right, p


def knew(decisions: Sequence[Decision], what: str, pontoon: bool) -> dict[str, Any]:
    """Departures from the table that were right given ``what`` ("next card" or "hole card")."""
    probs: list[float] = []
    hits = 0
    examples: list[dict[str, Any]] = []
    for d, right, p in assessed(decisions, what, pontoon):
        probs.append(p)
        if right:
            hits += 1
            if len(examples) < 50:
                examples.append(
                    {
                        "round": d.round,
                        "event": d.seq,
                        "hand": " ".join(d.cards),
                        "up": d.up,
                        "advised": d.advised,
                        "did": d.action,
                        "card": d.next_card if what == "next card" else d.hole,
                        "chance": _r(p, 3),
                    }
                )
    tail, z = poisson_binomial_z(hits, probs)
    return {
        "assessed": len(probs),
        "right": hits,
        "expected_right": _r(sum(probs), 2),
        "tail_probability": _r(tail, 8) if probs else None,
        "z": _r(z, 2) if probs else None,
        "judged": bool(probs),
        "examples": examples,
    }


def luck(s: Session) -> dict[str, Any]:
    cs = s.table.count
    result = expected = 0.0
    var = 0.0
    for rnd, pr in s.rounds:
        w = float(pr.wager)
        result += float(pr.net)
        expected += w * cs.advantage(rnd.true_count)
        var += (cs.sd_per_unit * w) ** 2
    judged = var > 0 and len(s.rounds) >= MIN_LUCK_ROUNDS
    z = (result - expected) / math.sqrt(var) if var > 0 else 0.0
    return {
        "result": _r(result, 2),
        "expected_given_count": _r(expected, 2),
        "z": _r(z, 2) if judged else None,
        "judged": judged,
    }


def analyse_session(s: Session, calibration: Calibration) -> dict[str, Any]:
    pontoon = "T" in s.table.count.excluded_ranks
    bets = [pr.wager for _, pr in s.rounds]
    wagered = sum(bets, Decimal(0))
    net = sum((pr.net for _, pr in s.rounds), Decimal(0))
    bet = bet_against_count(s)
    wong = play_against_count(s)
    index = index_plays(s.decisions)
    knew_next = knew(s.decisions, "next card", pontoon)
    knew_hole = knew(s.decisions, "hole card", pontoon) if s.table.hole_card else None
    lk = luck(s)
    zs: dict[str, float | None] = {
        "bet_count": bet["z"],
        "wonging": wong["z"],
        "index_plays": index["z"],
        "knew_next": knew_next["z"],
        "luck": lk["z"],
    }
    if knew_hole is not None:
        zs["knew_hole"] = knew_hole["z"]
    n = len(s.rounds)
    doc: dict[str, Any] = {
        "player": s.player,
        "table_id": s.table.table_id,
        "game": s.table.game,
        "first_round": s.first.round,
        "last_round": s.last.round,
        "start": s.first.start.isoformat() if s.first.start else None,
        "end": s.last.end.isoformat() if s.last.end else None,
        "rounds": n,
        "boxes": sorted({b for _, pr in s.rounds for b in pr.boxes}),
        "dealers": sorted({rnd.dealer for rnd, _ in s.rounds if rnd.dealer}),
        "wagered": _money(wagered),
        "net": _money(net),
        "mean_bet": _money(wagered / n) if n else "0.00",
        "min_bet": _money(min(bets)) if bets else None,
        "max_bet": _money(max(bets)) if bets else None,
        "decisions": len(s.decisions),
        "bet_against_count": bet,
        "play_against_count": wong,
        "index_plays": index,
        "knew_next_card": knew_next,
        "luck": lk,
        "verdict": judge(zs, n, calibration),
    }
    if knew_hole is not None:
        doc["knew_hole_card"] = knew_hole
    return doc


# --- hold -----------------------------------------------------------------------------------


ShiftOf = Callable[[datetime], str]


def shift_of(at: datetime | None) -> str:
    """The shift by the hour of the clock the time was written in (day 06-14, swing 14-22,
    night 22-06); the floor passes its own shifts in its time zone instead."""
    if at is None:
        return "all"
    hour = at.hour
    name = SHIFTS[-1][1]
    for start, label in SHIFTS:
        if hour >= start:
            name = label
    return name


def hold(items: Iterable[tuple[TableRecord, RoundRecord]], label: dict[str, Any]) -> dict[str, Any]:
    wagered = result = Decimal(0)
    expected = 0.0
    sq = 0.0
    rounds = 0
    contrib: dict[tuple[str, str], float] = defaultdict(float)
    for table, rnd in items:
        if rnd.status == "void":
            continue
        edge = table.count.house_edge
        w = rnd.wagered
        e = float(w) * edge
        r = rnd.house_net
        wagered += w
        result += r
        expected += e
        sq += (float(r) - e) ** 2
        rounds += 1
        for pr in rnd.players:
            contrib[(table.table_id, pr.player)] += float(pr.net) + float(pr.wager) * edge
    half = Z95 * math.sqrt(sq)
    low, high = expected - half, expected + half
    outside = rounds > 1 and not (low <= float(result) <= high)
    doc: dict[str, Any] = {
        **label,
        "rounds": rounds,
        "wagered": _money(wagered),
        "result": _money(result),
        "expected": _r(expected, 2),
        "band_95": [_r(low, 2), _r(high, 2)],
        "hold": _r(float(result / wagered), 5) if wagered else None,
        "expected_hold": _r(expected / float(wagered), 5) if wagered else None,
        "hold_band_95": [_r(low / float(wagered), 5), _r(high / float(wagered), 5)]
        if wagered
        else None,
        "outside_band": outside,
    }
    if outside:
        top = sorted(contrib.items(), key=lambda kv: -abs(kv[1]))[:5]
        doc["largest_contributors"] = [
            {"table_id": t, "player": p, "won_beyond_expectation": _r(v, 2)} for (t, p), v in top
        ]
    return doc


def hold_windows(
    tables: Sequence[TableRecord], shift: ShiftOf | None = None
) -> list[dict[str, Any]]:
    def shift_name(at: datetime | None) -> str:
        return shift(at) if (shift is not None and at is not None) else shift_of(at)

    items = [(t, r) for t in tables for r in t.rounds]
    groups: dict[tuple[tuple[str, str], ...], list[tuple[TableRecord, RoundRecord]]] = defaultdict(
        list
    )
    keys: list[Callable[[TableRecord, RoundRecord], tuple[tuple[str, str], ...]]] = [
        lambda t, r: (("table_id", t.table_id),),
        lambda t, r: (("game", t.game),),
        lambda t, r: (("dealer", r.dealer or "unknown"),),
        lambda t, r: (("table_id", t.table_id), ("shift", shift_name(r.start))),
    ]
    have_times = any(r.start is not None for _, r in items)
    if have_times:
        keys += [
            lambda t, r: (
                ("table_id", t.table_id),
                ("day", r.start.date().isoformat() if r.start else ""),
            ),
            lambda t, r: (
                ("table_id", t.table_id),
                ("month", r.start.strftime("%Y-%m") if r.start else ""),
            ),
            lambda t, r: (
                ("table_id", t.table_id),
                ("year", r.start.strftime("%Y") if r.start else ""),
            ),
        ]
    for key in keys:
        for t, r in items:
            groups[key(t, r)].append((t, r))
    return [hold(v, dict(k)) for k, v in groups.items()]


# --- dealers and shuffles -------------------------------------------------------------------


def shuffle_audit(tables: Sequence[TableRecord], dealer: str | None = None) -> dict[str, Any]:
    """Are shuffles before the cutting card more frequent when the count favours the players?"""
    early: list[float] = []
    chances: list[float] = []
    shuffles = 0
    for t in tables:
        for sh in t.shuffles:
            if dealer is not None and sh.dealer != dealer:
                continue
            shuffles += 1
            if sh.early:
                early.append(sh.true_count)
                chances.append(sh.true_count)
        for r in t.rounds:
            if (dealer is None or r.dealer == dealer) and not r.cut_out and r.cards_dealt > 0:
                chances.append(r.true_count)  # the dealer could have shuffled here and did not
    z = None
    n, k = len(chances), len(early)
    if k and n > k:
        mean = sum(chances) / n
        var = sum((c - mean) ** 2 for c in chances) / (n - 1)
        if var > 0:
            se = math.sqrt(var / k * (n - k) / (n - 1))
            z = (sum(early) / k - mean) / se
    level = "clear"
    if z is not None and z >= 3.09:
        level = "alert"
    elif z is not None and z >= 2.326:
        level = "watch"
    return {
        "shuffles": shuffles,
        "early": k,
        "early_at_true_count_2_or_more": sum(1 for c in early if c >= 2),
        "mean_true_count_at_early_shuffles": _r(sum(early) / k, 2) if k else None,
        "mean_true_count_when_shuffling_was_possible": _r(sum(chances) / n, 2) if n else None,
        "z": _r(z, 2),
        "verdict": {
            "level": level,
            "false_alarm_rate": {"clear": None, "watch": 0.01, "alert": 0.001}[level],
            "basis": "one-sided test of the mean count at early shuffles (normal tail)",
        },
        "shuffle_points": [
            {
                "table_id": t.table_id,
                "event": sh.seq,
                "shoe": sh.shoe,
                "true_count": _r(sh.true_count, 2),
                "cards_dealt": sh.cards_dealt,
                "cut_card": sh.cut_card,
                "early": sh.early,
                "dealer": sh.dealer,
                "at": sh.at.isoformat() if sh.at else None,
            }
            for t in tables
            for sh in t.shuffles
            if dealer is None or sh.dealer == dealer
        ],
    }


def scorecard(tables: Sequence[TableRecord], dealer: str) -> dict[str, Any]:
    rounds = [(t, r) for t in tables for r in t.rounds if r.dealer == dealer]
    flags = [f for t in tables for f in t.flags if f.dealer == dealer]
    seconds = 0.0
    for t in tables:
        mine = [r for r in t.rounds if r.start is not None]
        for a, b in pairwise(mine):
            if a.dealer == dealer and a.start is not None and b.start is not None:
                seconds += min((b.start - a.start).total_seconds(), 600.0)
    by_rule: dict[str, int] = defaultdict(int)
    for f in flags:
        by_rule[f.rule] += 1
    n = len(rounds)
    waits = [
        (f.acknowledged_at - f.at).total_seconds()
        for f in flags
        if f.acknowledged_at is not None and f.at is not None
    ]
    return {
        "rounds": n,
        "hours": _r(seconds / 3600, 2) if seconds else None,
        "rounds_per_hour": _r(n / (seconds / 3600), 1) if seconds else None,
        "flags_per_100_rounds": {
            rule: _r(100 * c / n, 2) if n else None for rule, c in sorted(by_rule.items())
        },
        "flags": len(flags),
        "voids": sum(r.voids for _, r in rounds),
        "corrections": sum(r.corrections for _, r in rounds),
        "shoe_failures": sum(1 for f in flags if f.rule in ("shoe", "6.1")),
        "acknowledged": sum(1 for f in flags if f.acknowledged_seq is not None),
        "unacknowledged": sum(1 for f in flags if f.acknowledged_seq is None),
        "acknowledgement_wait_seconds": {
            "median": _r(median(waits), 1) if waits else None,
            "max": _r(max(waits), 1) if waits else None,
        },
        "flag_list": [
            {
                "table_id": t.table_id,
                "event": f.seq,
                "round": f.round,
                "rule": f.rule,
                "at": f.at.isoformat() if f.at else None,
                "acknowledged_by": f.acknowledged_by,
                "acknowledged_at": f.acknowledged_at.isoformat() if f.acknowledged_at else None,
            }
            for t in tables
            for f in t.flags
            if f.dealer == dealer
        ],
        "hold": hold(rounds, {"dealer": dealer}),
    }


def _excess(decisions: Sequence[Decision], what: str, pontoon: bool) -> tuple[float, float, int]:
    """(right - expected, variance, assessed) of departures right given ``what``."""
    k = e = v = 0.0
    n = 0
    for _, right, p in assessed(decisions, what, pontoon):
        n += 1
        k += right
        e += p
        v += p * (1 - p)
    return k - e, v, n


def dealer_contrast(
    mine: Sequence[Decision], others: Sequence[Decision], what: str, pontoon: bool
) -> float | None:
    """z of a player's excess of informed departures under this dealer over the others'.

    A player who knows the cards whoever deals (marked cards) shows the same excess under
    every dealer: only knowledge that comes with one dealer raises this. None where the player
    has no assessed departure under this dealer or never played under another (then nothing
    tells the dealer from the player). A player who played by the table under every other
    dealer has no excess there."""
    ex_d, v_d, n_d = _excess(mine, what, pontoon)
    ex_o, v_o, n_o = _excess(others, what, pontoon)
    if n_d == 0 or not others:
        return None
    var = v_d / n_d**2 + (v_o / n_o**2 if n_o else 0.0)
    if n_o == 0:
        ex_o, n_o = 0.0, 1
    if var <= 0:
        return None
    return (ex_d / n_d - ex_o / n_o) / math.sqrt(var)


def analyse_dealer(
    tables: Sequence[TableRecord], dealer: str, calibration: Calibration
) -> dict[str, Any]:
    decisions = [(t, d) for t in tables for d in t.decisions if d.dealer == dealer]
    pontoon = any("T" in t.count.excluded_ranks for t in tables)
    overall = knew([d for _, d in decisions], "next card", pontoon)
    holes = any(t.hole_card for t in tables)
    overall_hole = knew([d for _, d in decisions], "hole card", pontoon) if holes else None
    players: dict[str, list[Decision]] = defaultdict(list)
    elsewhere: dict[str, list[Decision]] = defaultdict(list)
    for t in tables:
        for d in t.decisions:
            (players if d.dealer == dealer else elsewhere)[d.player].append(d)
    pairs = []
    worst = -math.inf
    tests = 0
    for player, ds in sorted(players.items()):
        k = knew(ds, "next card", pontoon)
        kh = knew(ds, "hole card", pontoon) if holes else None
        contrast = {
            what: dealer_contrast(ds, elsewhere[player], what, pontoon)
            for what in (("next card", "hole card") if holes else ("next card",))
        }
        for z in contrast.values():
            if z is not None:
                tests += 1
                worst = max(worst, z)
        pairs.append(
            {
                "player": player,
                "knew_next_card": _strip(k),
                **({"knew_hole_card": _strip(kh)} if kh else {}),
                "under_this_dealer_against_others_z": {w: _r(z, 2) for w, z in contrast.items()},
            }
        )
    # The least likely player, corrected for the players and tests looked at (Bonferroni).
    zs_pair = None
    if tests:
        zs_pair = z_of_tail(min(1.0, normal_sf(worst) * tests))
    rounds = sum(1 for t in tables for r in t.rounds if r.dealer == dealer)
    several = len({d.dealer for t in tables for d in t.decisions}) > 1
    # With one dealer only, nothing tells the dealer from the players: the dealer's rounds as
    # a whole are judged.
    zs: dict[str, float | None] = (
        {}
        if several
        else {
            "knew_next": overall["z"],
            "knew_hole": overall_hole["z"] if overall_hole else None,
        }
    )
    verdict = dealer_verdict(zs, zs_pair, tests, rounds, calibration)
    return {
        "dealer": dealer,
        "tables": sorted({t.table_id for t in tables if any(r.dealer == dealer for r in t.rounds)}),
        "scorecard": scorecard(tables, dealer),
        "knew_next_card": _strip(overall),
        **({"knew_hole_card": _strip(overall_hole)} if overall_hole else {}),
        "by_player": pairs,
        "shuffle_audit": {
            k: v for k, v in shuffle_audit(tables, dealer).items() if k != "shuffle_points"
        },
        "worst_player_z_corrected": _r(zs_pair, 2),
        "contrast_tests": tests,
        "verdict": verdict,
    }


def dealer_verdict(
    zs: dict[str, float | None],
    pair_z: float | None,
    players: int,
    rounds: int,
    calibration: Calibration,
) -> dict[str, Any]:
    """A dealer's verdict: over every decision they dealt to, and for the one player whose
    decisions under them were the least likely (corrected for the players looked at)."""
    verdict = judge(zs, rounds, calibration)
    if pair_z is not None:
        pair_verdict = judge({"knew_next": pair_z}, rounds, calibration)
        if _rank(pair_verdict["level"]) > _rank(verdict["level"]):
            pair_verdict["reasons"] = [
                f"one player's decisions under this dealer against other dealers' (corrected "
                f"for {players} tests): " + r
                for r in pair_verdict["reasons"]
            ]
            verdict = pair_verdict
    return verdict


def _strip(doc: dict[str, Any] | None) -> dict[str, Any] | None:
    if doc is None:
        return None
    return {k: v for k, v in doc.items() if k != "examples"}


def _rank(level: str) -> int:
    return {"clear": 0, "watch": 1, "alert": 2}[level]


def analyse(
    tables: Sequence[TableRecord],
    calibration: Calibration | None = None,
    *,
    shift: ShiftOf | None = None,
) -> dict[str, Any]:
    cal = calibration or load_calibration()
    players = [analyse_session(s, cal) for t in tables for s in sessions(t)]
    dealers = sorted({r.dealer for t in tables for r in t.rounds if r.dealer})
    table_docs = []
    for t in tables:
        table_docs.append(
            {
                "table_id": t.table_id,
                "game": t.game,
                "rounds": len(t.rounds),
                "decisions": len(t.decisions),
                "count": {
                    "tags": dict(
                        zip(
                            ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T"),
                            t.count.tags,
                            strict=True,
                        )
                    ),
                    "advantage_per_true_count": t.count.advantage_per_true_count,
                    "house_edge": t.count.house_edge,
                },
                "hold": hold(((t, r) for r in t.rounds), {"table_id": t.table_id}),
                "shuffle_audit": shuffle_audit([t]),
                "flags": len(t.flags),
                "shoe_failures": t.shoes_failed,
            }
        )
    return {
        "calibration": cal.source,
        "tables": table_docs,
        "players": players,
        "dealers": [analyse_dealer(tables, d, cal) for d in dealers],
        "hold": hold_windows(tables, shift),
        "summary": {
            level: sum(1 for p in players if p["verdict"]["level"] == level)
            for level in ("clear", "watch", "alert")
        },
    }
