"""Batch lookups by id go through the primary-key index (issue 22, item 1).

In kuzu 0.11.3 `UNWIND $rows MATCH (a:Node {id: r.a}), (b:Node {id: r.b})` joins the node table with itself:
at 300k nodes the daily cycle's conflict step failed with "buffer pool is full" even with a 4 GiB pool. The
same failure shows at 60k nodes with a 32 MB pool, which keeps this test small: the old shape is run first to
prove the size shows the problem, then every per-id query kg uses in its place runs under the same pool.
"""

from __future__ import annotations

from datetime import datetime

import pytest

import kg
import kg.ingest.trail
from kg.core.errors import StoreError
from kg.store import NODE_COLUMNS, Store
from kg.store.bulk import copy_rows, fts_drop, run_each

N = 60_000
POOL_MB = 32
PER_ID = {  # every query that kg runs once per id instead of once per list, with its parameters
    "lc_contradicts_add": lambda a, b: {"a": a, "b": b, "at": datetime(2026, 12, 1), "reason": "test"},
    "graph_nodes": lambda a, b: {"id": a},
    "graph_neighbours": lambda a, b: {"id": a},
    "graph_edges_from": lambda a, b: {"id": a},
    "nodes_list_row": lambda a, b: {"id": a},
    "pending_high_row": lambda a, b: {"id": a},
    "bulk_out_led_to": lambda a, b: {"id": a},
}


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    ws = kg.init_workspace(tmp_path_factory.mktemp("keys") / "ws")
    at = datetime(2026, 1, 1)
    rows = []
    for i in range(N):
        row = {c: None for c in NODE_COLUMNS}
        row.update(id=f"pri-20260101-{i:06d}", kind="principle", text=f"principle number {i}", status="active",
                   files=[], tags=[], redactions=[], created_at=at, updated_at=at, reinforced_at=at, pinned=False,
                   stale=False, tokens=f"principle number {i}")
        rows.append(row)
    with ws.store() as st:
        fts_drop(st)
        copy_rows(st, "Node", rows, scratch=ws.kg_dir, columns=NODE_COLUMNS)
        st.execute("CHECKPOINT")  # else every open replays the load from the WAL into the small pool
    return ws


def _small_pool(ws):
    return Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", lock_timeout=5, buffer_pool_mb=POOL_MB)


def test_the_list_shape_fills_a_small_pool_at_this_size(big):
    rows = [{"a": f"pri-20260101-{i:06d}", "b": f"pri-20260101-{i + 1:06d}"} for i in range(0, 40, 2)]
    with _small_pool(big) as st, pytest.raises(StoreError, match="buffer pool is full"):
        st.execute("UNWIND $rows AS r MATCH (a:Node {id: r.a}), (b:Node {id: r.b}) RETURN a.id, b.id",
                   {"rows": rows})


@pytest.mark.parametrize("name", sorted(PER_ID))
def test_per_id_queries_use_the_primary_key_and_fit_the_pool(big, name):
    pairs = [(f"pri-20260101-{i:06d}", f"pri-20260101-{i + 1:06d}") for i in range(0, 40, 2)]
    with _small_pool(big) as st:
        params = [PER_ID[name](a, b) for a, b in pairs]
        plan = st._conn.execute("EXPLAIN " + st.query(name).text, params[0]).get_next()[0]
        assert "PRIMARY_KEY_SCAN_NODE_TABLE" in plan, plan
        run_each(st, name, params)
    if name == "lc_contradicts_add":
        with big.store() as st:
            assert st.execute("MATCH ()-[r:contradicts]->() RETURN count(r) AS n")[0]["n"] == len(pairs)


@pytest.mark.parametrize("skewed", [True, False], ids=["skewed", "uniform"])
@pytest.mark.embedded_only("opens the workspace's Kùzu file directly (its primary-key lookups)")
def test_top_patterns_gives_the_rows_of_the_full_query(tmp_path, skewed):
    """`kg status`'s recurring patterns come from per-pattern figures taken best bound first; they must be
    the full query's rows, in its order, whether a few patterns dominate or all tie (the fallback)."""
    import json

    from kg.store.bulk import top_patterns

    ws = kg.init_workspace(tmp_path / "ws")
    entries = []
    for i in range(400):
        key = f"k.{int(i ** 0.5) % 30}" if skewed else f"k.{i % 40}"
        entries.append({"id": f"ERR-20260101-{i:04d}", "type": "error", "summary": f"build {i % 9} failed",
                        "logged": f"2026-01-{1 + i % 28:02d}T10:{i % 60:02d}:00", "pattern_key": key,
                        "session": f"2026-01-01-{1 + i % 7:03d}"})
    trail = tmp_path / "trail.json"
    trail.write_text(json.dumps({"entries": entries}))
    kg.ingest.trail.import_trail(ws, [trail], now="2026-02-01T00:00:00")
    with ws.reading() as st:
        for limit in (1, 3, 10, 50):
            assert top_patterns(st, limit) == st.run("pattern_stats_all", limit=limit)
