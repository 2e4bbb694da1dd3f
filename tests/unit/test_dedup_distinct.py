"""QA4 #10: near-duplicate attach merged different facts. A differing version or id in a fact's entry is a
different fact (not in an error's: there it says where the same failure struck), and with `[dedup] first_only` a
pattern is joined only by a near-duplicate of its first event (a chain of pairwise-alike turns joined turns that
shared nothing). Pure, packaged rules."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from kg.graph import linking
from kg.graph.linking import Doc

R = linking.default_rules()


def _ev(i: str, text: str, day: int = 1, key: str | None = None, entry_type: str = "learning") -> Doc:
    return Doc(i, "event", text, entry_type=entry_type, area=None, created_at=datetime(2026, 5, day), pattern_key=key)


@pytest.mark.parametrize(("a", "b", "dup"), [
    ("deploy release-1.2 broke login", "deploy release-1.3 fixed login", False),
    ("deploy release-1.2 broke login", "deploy release-1.2 broke the login", True),
    ("upgrade to lib v2.4.1 breaks auth", "upgrade to lib v2.4.0 is fine", False),
    ("upgrade to lib v2.4.1 breaks auth", "upgrade to lib 2.4.1 breaks auth", True),  # v2.4.1 is version 2.4.1
    ("upgrade to lib v2.4.1 breaks auth", "upgrade to lib breaks auth", True),  # one names none: not told apart
    ("git push failed at 08:00: no upstream branch", "git push failed at 09:12: no upstream branch", True),  # times
    ("nightly build 2026-05-01 failed: disk full", "nightly build 2026-05-02 failed: disk full", True),  # dates
])
def test_a_differing_version_or_id_is_a_different_fact(a, b, dup):
    assert (linking.duplicate(_ev("b", b), _ev("a", a), R) is not None) is dup


def test_an_errors_differing_id_is_where_the_same_failure_struck():
    a = _ev("a", "git push failed: no upstream for branch feature-3", entry_type="error")
    b = _ev("b", "git push failed: no upstream for branch feature-7", entry_type="error")
    assert linking.distinct_ids(a.text, b.text)
    assert linking.duplicate(b, a, R) is not None
    assert linking.duplicate(replace(b, entry_type="learning"), replace(a, entry_type="learning"), R) is None


def test_the_rule_is_data():
    a, b = _ev("a", "deploy release-1.2 broke login"), _ev("b", "deploy release-1.3 broke login")
    assert linking.duplicate(b, a, R) is None
    assert linking.duplicate(b, a, replace(R, dedup_distinct_ids=False)) is not None


def test_ids_of_leaves_times_and_dates_out():
    assert linking.ids_of("c0-D1:3 at 08:00 on 2023-10-25, lib v2.4.1") == {"c0 d1 3", "2 4 1"}


HEAD = "the staging deploy failed: disk full on the runner"
MIDDLE = "staging deploy failed, runner cache cleaned and rebuilt"
TAIL = "cleaned the runner cache and rebuilt it"


def test_the_chain_is_alike_pair_by_pair_only():
    head, middle, tail = _ev("E1", HEAD, 1), _ev("E2", MIDDLE, 2), _ev("E3", TAIL, 3)
    assert linking.duplicate(middle, head, R) is not None
    assert linking.duplicate(tail, middle, R) is not None
    assert linking.duplicate(tail, head, R) is None


def test_a_pattern_is_joined_only_by_a_near_duplicate_of_its_first_event():
    head = _ev("P", HEAD, day=1)
    member = _ev("E2", MIDDLE, day=2, key="auto.x")
    new = _ev("E3", TAIL, day=3)  # alike E2 only
    found = linking.Candidates([member], {})
    assert linking.match_pattern(new, found, R) is not None  # the first event unknown: any member
    assert linking.match_pattern(new, found, R, lambda key: head) is None
    assert linking.match_pattern(new, found, replace(R, dedup_first_only=False), lambda key: head) is not None
    again = _ev("E4", "the staging deploy failed again: disk full on the runner", day=4)
    m = linking.match_pattern(again, linking.Candidates([member], {}), R, lambda key: head)
    assert m is not None and (m.key, m.via) == ("auto.x", "E2")


def test_a_new_pattern_takes_only_near_duplicates_of_its_first_event():
    first = _ev("E1", HEAD, day=1)
    other = _ev("E2", TAIL, day=2)
    new = _ev("E3", MIDDLE, day=3)
    assert [linking.duplicate(new, d, R) is not None for d in (first, other)] == [True, True]
    m = linking.match_pattern(new, linking.Candidates([first, other], {}), R)
    assert m is not None and m.new and m.members == ("E1",) and m.text == first.text
    m = linking.match_pattern(new, linking.Candidates([first, other], {}), replace(R, dedup_first_only=False))
    assert m is not None and m.members == ("E1", "E2")
