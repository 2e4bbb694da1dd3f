"""Issue 17, migration 0013: the decay pass's staging table (LcStage) exists only while a pass uses it. Every node
table costs memory at each open of the graph whatever its rows (an empty LcStage: 5.3 MB resident at 100k entries,
in the read server and in every one-off command). The pass makes it, empties what a killed pass left, joins
against it, and drops it; statements prepared against it are forgotten with it. Real Kùzu, real files."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from kg.lifecycle import api, cycle
from kg.store.schema import STAGING_DDL

pytestmark = pytest.mark.embedded_only("a team graph keeps no tables: its staged nodes are only deleted")

T0 = datetime(2026, 1, 5, 9)


def _tables(ws) -> set[str]:
    with ws.store() as st:
        return {r["name"] for r in st._execute_raw("CALL show_tables() RETURN name", {})}


def _seed(ws) -> list[str]:
    ids = []
    with ws:
        for i in range(24):
            e = ws.log("error" if i % 3 else "learning", f"entry {i}: the tool {i % 5} failed on step {i % 4}",
                       now=T0 + timedelta(hours=7 * i), session=f"s{i % 4}", priority=["high", "medium", "low"][i % 3],
                       pattern_key=f"tool.k{i % 6}" if i % 2 else None, link=False)
            ids.append(e.id)
    return ids


def _stages(ws) -> dict[str, tuple]:
    with ws.store() as st:
        rows = st._execute_raw("MATCH (n:Node) RETURN n.id AS id, n.decay_stage AS stage, "
                               "n.status AS status, n.priority AS priority", {})
    return {r["id"]: (r["stage"] or 0, r["status"], r["priority"]) for r in rows}


def _same(a: dict, b: dict) -> bool:
    """Two decay reports alike: the counts, and the sampled ids as sets (they come in the candidates query's row
    order, which differs between a rehearsal and the pass; fewer than `cycle.SAMPLE` here, so none is cut)."""
    ids = ("ids",)
    return ({k: v for k, v in a.items() if k not in ids} == {k: v for k, v in b.items() if k not in ids}
            and {k: sorted(v) for k, v in a["ids"].items()} == {k: sorted(v) for k, v in b["ids"].items()}
            and all(len(v) < cycle.SAMPLE for v in a["ids"].values()))


@pytest.mark.parametrize("copy", [False, True], ids=["create", "copy"])
def test_decay_passes_in_one_process_stage_join_and_leave_no_table(ws, monkeypatch, copy):
    if copy:
        monkeypatch.setattr(cycle, "STAGE_COPY_ROWS", 0)  # the COPY FROM a file path a large pass takes
    _seed(ws)
    assert "LcStage" not in _tables(ws)  # a new graph: made by 0002, dropped by 0013
    rehearsed = api.cycle(ws, now=T0 + timedelta(days=70), dry_run=True).decayed
    assert "LcStage" not in _tables(ws)  # a dry run's table went with its rolled-back transaction
    first = api.cycle(ws, now=T0 + timedelta(days=70)).decayed
    assert _same(first, rehearsed)
    after_first = _stages(ws)
    assert sum(first[k] for k in ("demoted", "stale", "expired")) > 0
    assert "LcStage" not in _tables(ws)
    for name in ("demoted", "stale", "expired"):  # what the pass reported is what the join wrote
        want = {"demoted": 1, "stale": 2, "expired": 3}[name]
        assert all(after_first[i][0] == want for i in first["ids"].get(name, []))
    with ws:  # the same process, the same store: statements prepared against the dropped table are gone
        for i in range(3):
            ws.log("error", f"entry {i}: the tool {i} failed on step {i}", now=T0 + timedelta(days=71, hours=i),
                   session="s9", pattern_key="tool.k1", link=False)
        second = api.cycle(ws, now=T0 + timedelta(days=200)).decayed
    assert sum(second[k] for k in ("demoted", "stale", "expired", "restored")) > 0
    assert "LcStage" not in _tables(ws)
    stages = _stages(ws)
    assert all(stages[i][0] == 3 for i in second["ids"].get("expired", []))


def test_an_old_graphs_table_goes_and_a_table_a_killed_pass_left_is_emptied_first(ws):
    ids = _seed(ws)
    with ws.store() as st:  # as a graph from before 0013, and a pass killed after staging: a stale row left
        st._execute_raw(STAGING_DDL["LcStage"], {})
        st._execute_raw("MATCH (m:Meta {key: 'migration:0013_staging_on_demand'}) DELETE m", {})
    with ws.store() as st:
        assert "LcStage" not in {r["name"] for r in st._execute_raw("CALL show_tables() RETURN name", {})}
        st._execute_raw(STAGING_DDL["LcStage"], {})  # a kill between the stage and the drop, after the upgrade
        st._execute_raw("CREATE (:LcStage {id: $id, stage: 3, priority: 'low', base: 'low', stale: true, "
                        "status: 'expired', at: timestamp('2026-01-06T00:00:00')})", {"id": ids[0]})
    assert "LcStage" in _tables(ws)
    report = api.cycle(ws, now=T0 + timedelta(days=70)).decayed
    stages = _stages(ws)
    assert ids[0] not in report["ids"].get("expired", []) and stages[ids[0]][1] != "expired"
    assert "LcStage" not in _tables(ws)
