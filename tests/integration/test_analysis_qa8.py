"""QA8's findings in the analyst's Python API, on a real Kùzu workspace: each was a raw Python error or a CLI
flag's words where a notebook's caller needs a ValueError naming its own argument."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg import analysis as ka
from kg.analysis import export as ke
from kg.core import clock


@pytest.fixture
def logged(ws):
    """Two errors three weeks apart, on the workspace's clock."""
    with ws:
        old = ws.log("error", "npm ci failed: lockfile out of sync", area="build", now="2026-11-01T10:00:00",
                     wait=True).id
        new = ws.log("error", "git push failed: no upstream", area="tooling", now="2026-11-22T10:00:00",
                     wait=True).id
    return ws, old, new


def test_a_since_with_a_time_zone_is_read_in_the_workspace_zone(logged, tmp_path):
    """`since=datetime.now(timezone.utc) - timedelta(days=30)` was a TypeError ("can't compare offset-naive and
    offset-aware datetimes") from every function that filters by time: it is converted as `now=` is."""
    ws, old, new = logged
    with ws:
        zone = clock.zone()
    since = datetime(2026, 11, 15, 9, 30, tzinfo=zone).astimezone(UTC)
    graph = ka.to_networkx(ws.root, since=since)
    assert new in graph and old not in graph
    assert graph.graph["since"] == "2026-11-15T09:30:00"  # the workspace's wall clock, as its nodes are dated
    with ka.load(ws.root) as a:
        assert set(a.subgraph(since=since)) == set(graph)
        assert set(ka.filter_graph(a.graph, since=since)) == set(graph)
    result = ke.export_graph(ws.root, "json", since=since)
    assert result.nodes == graph.number_of_nodes()
