"""Reads whose cost follows their answer (issue 22): `kg list` read from the newest day back, widening, gives
the rows of one read of the whole span, with and without filters, ties at a window's edge included. Real Kùzu."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from kg.graph import reads

T0 = datetime(2025, 3, 1, 9)
NO_FILTER = {"kind": None, "entry_type": None, "status": None, "priority": None, "area": None}


def _full(st, filters, since, limit):
    """nodes_newest over everything from `since` (or the oldest node): what `kg list` read before."""
    lo = st.run("nodes_time_bounds")[0]["lo"]
    start = max(lo, since) if since is not None else lo
    return st._execute_raw(st.query("nodes_newest").text, {**filters, "since": start, "limit": limit})


@pytest.fixture(scope="module")
def spread(module_workspace):
    """Entries over a year and a half, denser lately; three logged at one moment a day before the newest (the
    first window's edge), one in the future of the others' pattern."""
    ws = module_workspace[0]
    offsets = [0, 1, 2, 30, 31, 90, 200, 300, 400, 450, 480, 490, 495, 498, 499]
    for i, days in enumerate(offsets):
        kind = ("error", "learning", "feature")[i % 3]
        ws.log(kind, f"entry {i} about the build step", now=T0 + timedelta(days=days, minutes=i),
               priority=("low", "high", "medium")[i % 3], area=("infra", "tests")[i % 2], link=False)
    edge = T0 + timedelta(days=498, minutes=13)  # newest is day 499 (+14 min): exactly one day before it
    for i in range(3):
        ws.log("error", f"tied entry {i}", now=edge, priority="critical", area="infra", link=False)
    return ws


FILTERS = [{}, {"entry_type": "error"}, {"priority": "critical"}, {"area": "tests"},
           {"kind": "event", "priority": "low"}, {"status": "resolved"}]


def test_windows_give_the_rows_of_one_full_read(spread):
    with spread.reading() as st:
        for filters in FILTERS:
            f = {**NO_FILTER, **filters}
            for limit in (1, 2, 3, 4, 5, 12, 50):
                for since in (None, T0 + timedelta(days=100), T0 + timedelta(days=499), T0 + timedelta(days=900)):
                    assert reads.newest_in_windows(st, f, since=since, limit=limit) == _full(st, f, since, limit), \
                        (filters, limit, since)


def test_list_is_newest_first_and_orders_ties_by_id(spread):
    rows = spread.list(limit=5)
    assert rows[0]["text"] == "entry 14 about the build step"
    tied = rows[1:5]  # entry 13 and the three tied entries share one moment, a day before the newest
    assert len({r["created_at"] for r in tied}) == 1
    assert [r["id"] for r in tied] == sorted((r["id"] for r in tied), reverse=True)
    everything = spread.list(limit=100)
    assert len(everything) == 18
    assert spread.list(type="feature", limit=100) == [r for r in everything if r.get("entry_type") == "feature"]


def test_an_empty_graph_lists_nothing(ws):
    with ws.reading() as st:
        assert reads.newest_in_windows(st, NO_FILTER, since=None, limit=5) == []
    assert ws.list(limit=5) == []
