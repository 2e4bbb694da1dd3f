"""Many kg processes at once: every acknowledged write lands exactly once, with a unique id, while readers run
beside the writers. The full 8 x 200 `kg log` run is `bench/concurrency.py` (minutes); here a smaller one, which
still fails when a write is lost or an id given twice."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("concurrency", Path(__file__).parents[2] / "bench" / "concurrency.py")
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)


def _check(root: Path, acked: list[str], workers: int, count: int) -> None:
    n = workers * count
    t = bench.tally(root, acked, workers, count)
    assert (t["acked"], t["unique_acked"]) == (n, n)  # every write acknowledged, under its own id
    assert (t["in_graph"], t["lost"], t["unacked_in_graph"], t["duplicated"]) == (n, 0, 0, 0)
    assert t["entries"] == {"error": n} and t["sessions"] == workers
    assert t["patterns"] == {f"key.{i}": n // bench.KEYS for i in range(bench.KEYS)}
    assert not t["journal_pending"] and t["daily_lines"] == n


@pytest.mark.slow  # a hundred `kg log` processes: started first (see conftest)
def test_kg_log_commands_from_parallel_processes_with_readers_beside(ws, monkeypatch):
    """4 processes x 25 `kg log` commands (each answering at the ack, a detached drainer behind it); after every
    5th log each runs `kg status` and `kg list` beside the other writers: every read succeeds and never sees
    entries go away."""
    res = bench.run(ws.root, workers=4, count=25, read_every=5)
    monkeypatch.setenv("KG_LOCK_TIMEOUT", "120")  # detached drainers may still be finishing
    _check(ws.root, res["acked"], 4, 25)
    for reads in res["reads"]:
        assert len(reads) == 10 and all(code == 0 for _, code, _, _ in reads)
        for what in ("status", "list"):
            seen = [n for w, _, n, _ in reads if w == what]
            assert seen == sorted(seen) and all(0 <= n <= 100 for n in seen)


def test_library_writers_in_parallel_processes(ws):
    """The same through `Workspace.log` (a notebook, the MCP server): each write applied in the foreground."""
    res = bench.run(ws.root, workers=4, count=25, cli=False)
    _check(ws.root, res["acked"], 4, 25)
