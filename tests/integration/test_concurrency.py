"""Many kg processes at once: every acknowledged write lands exactly once, with a unique id."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import kg

WORKER = textwrap.dedent("""
    import sys, kg
    path, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    acked = []
    for i in range(count):
        r = kg.open_workspace(path).log("error", f"worker {worker} failure {i}", session=f"w{worker}",
                                        pattern_key=f"key.{i % 5}", now="2026-11-30T10:00:00")
        acked.append(r.id)
    print("\\n".join(acked))
""")


def _run_workers(root: Path, workers: int, count: int) -> list[str]:
    env = {**os.environ, "KG_LOCK_TIMEOUT": "120"}
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(root), str(w), str(count)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for w in range(workers)]
    acked = []
    for p in procs:
        out, err = p.communicate(timeout=2400)
        assert p.returncode == 0, err
        acked += out.split()
    return acked


def test_eight_processes_times_two_hundred_logs(ws):
    acked = _run_workers(ws.root, workers=8, count=200)
    assert len(acked) == 1600 and len(set(acked)) == 1600
    fresh = kg.open_workspace(ws.root)
    status = fresh.status()
    assert status["entries"] == {"error": 1600}
    assert status["sessions"] == 8
    ids = {r["id"] for r in fresh.list(type="error", limit=5000)}
    assert ids == set(acked)
    patterns = {p["key"]: p["recurrence"] for p in status["patterns"]}
    assert patterns == {f"key.{i}": 320 for i in range(5)}
    assert not fresh.journal.has_pending()
    daily = (fresh.memory / "2026-11-30.md").read_text(encoding="utf-8").splitlines()
    assert sum(1 for line in daily if line.startswith("### ❌")) == 1600
