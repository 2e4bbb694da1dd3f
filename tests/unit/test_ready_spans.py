"""Issue 22: the spans of time during which a pattern is ready to promote (kg/store/spans.py) give, at every
moment, what `lc_promotion_candidates` counts there (`aggregates.window_figures`), and nothing outside them."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from kg.store.aggregates import window_figures
from kg.store.spans import TICK, fingerprint, spans_of

T0 = datetime(2026, 3, 1, 9, 0)
WINDOW = timedelta(days=30)
RULE = {"window": WINDOW, "min_recurrence": 3, "min_sessions": 2, "ignore": ["wont_fix"]}


def _ready_at(members, now):
    at, sess, st = (list(x) for x in zip(*members, strict=True)) if members else ([], [], [])
    n, sessions, last = window_figures(at, sess, st, now - WINDOW, now, RULE["ignore"])
    return (n, sessions, last) if last is not None and n >= 3 and sessions >= 2 else None


def _span_at(spans, now):
    held = [s for s in spans if s[0] <= now < s[1]]
    assert len(held) <= 1, held  # spans never overlap
    return tuple(held[0][2:]) if held else None


def _moments(members, rng):
    times = [t for t, _, _ in members if t is not None]
    out = [T0 - WINDOW, T0 + 10 * WINDOW]
    for t in times:  # each instant where the figures may change, and a tick either side
        for edge in (t, t + WINDOW, t + WINDOW + TICK):
            out += [edge - TICK, edge, edge + TICK]
    out += [T0 + timedelta(seconds=rng.uniform(-1, 200) * 86_400) for _ in range(40)]
    return out


@pytest.mark.parametrize("seed", range(60))
def test_spans_give_the_window_figures_at_every_moment(seed):
    rng = random.Random(seed)
    k = rng.randrange(0, 14)
    spread = rng.choice([2, 20, 45, 120])  # days: all inside one window, or spread over several
    members = [(None if rng.random() < 0.05 else T0 + timedelta(seconds=rng.randrange(spread * 86_400)),
                rng.choice(["s1", "s2", "s3", None]) if rng.random() < 0.9 else "s1",
                rng.choice(["pending", "resolved", "wont_fix", None]) if rng.random() < 0.3 else "pending")
               for _ in range(k)]
    if members and rng.random() < 0.3:  # two events at one instant
        members.append((members[0][0], "s9", "pending"))
    spans = spans_of(members, **RULE)
    assert spans == sorted(spans) and all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    for now in _moments(members, rng):
        assert _span_at(spans, now) == _ready_at(members, now), now


def test_a_pattern_short_of_the_rule_has_no_span():
    members = [(T0 + timedelta(hours=i), "s1", "pending") for i in range(5)]  # one session only
    assert spans_of(members, **RULE) == []
    assert spans_of(members[:2], **{**RULE, "min_sessions": 1}) == []  # two events only


def test_a_span_opens_at_the_third_event_and_closes_a_tick_after_the_first_leaves_the_window():
    at = [T0, T0 + timedelta(days=1), T0 + timedelta(days=2)]
    spans = spans_of([(at[0], "a", "pending"), (at[1], "b", "pending"), (at[2], "a", "pending")], **RULE)
    assert spans == [(at[2], at[0] + WINDOW + TICK, 3, 2, at[2])]


def test_the_fingerprint_names_the_rule_whatever_its_number_types():
    assert fingerprint(30, 3, 2, ["wont_fix"]) == fingerprint(30.0, 3, 2, ("wont_fix",))
    assert fingerprint(30, 3, 2, ["wont_fix"]) != fingerprint(14, 3, 2, ["wont_fix"])
