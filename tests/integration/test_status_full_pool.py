"""`kg status` on a workspace whose graph no longer fits Kùzu's buffer pool (w-fgrow2 left it): a reader does not
compact (a session's start would wait for the rebuild), and status failed with Kùzu's own message ("graph query
failed: Buffer manager exception: Unable to allocate memory! The buffer pool is full ..."), which says neither what
is wrong in kg's words nor what to do. It now says so in one line (`kg doctor` rebuilds the file compact, or a larger
`store.buffer_pool_mb`), exit 1, no traceback, the waiting entries kept. A real checkpointed graph of 300 entries
under real small pools (the policy's floor lowered by the test, as tests/integration/test_compact.py does): 12 MB
fills on the reader's apply of five waiting entries, 6 MB already on the open."""

from __future__ import annotations

import pytest

from tests.integration.test_compact import _entries, _ingest, checkpoint, kg, low  # noqa: F401 - fixtures

pytestmark = pytest.mark.embedded_only("Kùzu's buffer pool")


@pytest.mark.parametrize("pool_mb", [12, 6])
def test_status_on_a_graph_past_a_small_pool_says_what_to_do_in_one_line(ws, kg, tmp_path, pool_mb,  # noqa: F811
                                                                          monkeypatch):
    from kg.core import policy

    _ingest(kg, tmp_path, _entries(300, 8))
    checkpoint(ws)
    for i in range(5):
        ws.log("learning", f"waiting in the journal {i}", apply=False)
    monkeypatch.setattr(policy, "POOL_MIN_MB", 1)
    small = tmp_path / "small-pool"
    small.mkdir()
    (small / "policy.toml").write_text(f"[store]\nbuffer_pool_mb = {pool_mb}\n", encoding="utf-8")
    code, out, err = kg("--rules", str(small), "status")
    assert (code, out) == (1, ""), err
    assert err == (f"Error: the graph does not fit Kùzu's buffer pool (store.buffer_pool_mb, {pool_mb} MB); 5 "
                   "entr(y/ies) wait in the journal, kept: run `kg doctor`, which rebuilds the graph file compact, or "
                   "raise store.buffer_pool_mb (kg.toml [rules.policy.store])\n")
    assert ws.journal.pending_count(entries=True) == 5
    code, out, err = kg("status", "--json")  # the workspace's own pool applies them and reads
    assert code == 0, err
