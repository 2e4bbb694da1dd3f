"""Many kg processes at once: every acknowledged write lands exactly once, with a unique id."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kg

# A worker that logs through the library, in its own process.
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


# A worker that runs the real `kg log` command `count` times, one new process each, as an agent's hooks do.
# Each answers once its entry is journaled and leaves a detached drainer behind.
CLI_WORKER = textwrap.dedent("""
    import json, subprocess, sys
    kg, path, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    acked = []
    for i in range(count):
        out = subprocess.run([kg, "-w", path, "log", "error", f"worker {worker} failure {i}", "--session",
                              f"w{worker}", "--pattern-key", f"key.{i % 5}", "--now", "2026-11-30T10:00:00",
                              "--json"], capture_output=True, text=True, check=True)
        acked.append(json.loads(out.stdout)["id"])
    print("\\n".join(acked))
""")
KG = str(Path(sys.executable).with_name("kg"))


def _run_workers(root: Path, workers: int, count: int, *, cli: bool = False) -> list[str]:
    env = {**os.environ, "KG_LOCK_TIMEOUT": "120"}
    procs = [subprocess.Popen([sys.executable, "-c", CLI_WORKER, KG, str(root), str(w), str(count)] if cli else
                              [sys.executable, "-c", WORKER, str(root), str(w), str(count)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for w in range(workers)]
    acked = []
    for p in procs:
        out, err = p.communicate(timeout=2400)
        assert p.returncode == 0, err
        acked += out.split()
    return acked


def _check(root: Path, acked: list[str], workers: int, count: int) -> None:
    n = workers * count
    assert len(acked) == n and len(set(acked)) == n
    fresh = kg.open_workspace(root)
    status = fresh.status()
    assert status["entries"] == {"error": n}
    assert status["sessions"] == workers
    ids = {r["id"] for r in fresh.list(type="error", limit=5000)}
    assert ids == set(acked)
    patterns = {p["key"]: p["recurrence"] for p in status["patterns"]}
    assert patterns == {f"key.{i}": n // 5 for i in range(5)}
    assert not fresh.journal.has_pending()
    daily = (fresh.memory / "2026-11-30.md").read_text(encoding="utf-8").splitlines()
    assert sum(1 for line in daily if line.startswith("### ❌")) == n


@pytest.mark.slow
def test_eight_processes_times_two_hundred_kg_log_commands(ws, monkeypatch):
    """The issue's test, through the command: 8 processes x 200 `kg log` leave exactly 1,600 events."""
    acked = _run_workers(ws.root, workers=8, count=200, cli=True)
    monkeypatch.setenv("KG_LOCK_TIMEOUT", "120")  # detached drainers may still be finishing
    _check(ws.root, acked, 8, 200)


def test_library_writers_in_parallel_processes(ws):
    """The same through `Workspace.log` (a notebook, the MCP server): each write applied in the foreground."""
    acked = _run_workers(ws.root, workers=4, count=100)
    _check(ws.root, acked, 4, 100)
