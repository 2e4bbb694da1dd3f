"""`kg serve stop` while the read server writes its log into the graph as it closes (`fold_before_close`: minutes
at a million entries). The stop waited `KG_LOCK_TIMEOUT` + 30 s for the answer, then said "the read server is still
starting and did not answer" (exit 1): neither true. Now it waits for the fold as long as its progress marker says
it goes on, saying so, and past KG_MIGRATION_WAIT it exits 1 naming the fold.

Real processes: a real server with a real log to fold, held in its fold deterministically: its trace
(KG_SERVE_TRACE) is a FIFO this test reads, and once the fold's step is read the FIFO has no reader, so the
server's next trace (the fold's end, before its marker goes) blocks until the test reads again. No sleep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import kg
from kg.serve import client, progress

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import until  # noqa: E402

KG = str(Path(sys.executable).with_name("kg"))
NOW = "2026-06-01T12:00:00"
FOLD_STEP = "migration step 1 of 1: fold the write-ahead log into the graph"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_SERVE_TRACE", "KG_MIGRATION_WAIT", "KG_WORKSPACE")}
    return {**env, "KG_SERVER": "1", **extra}


def _kg(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env=_env(**extra))


class _Trace:
    """The server's trace FIFO, read line by line until the fold's step; then no one reads it until `release`."""

    def __init__(self, path: Path):
        self.path = path
        os.mkfifo(path)
        self.folding = threading.Event()
        self.reading = threading.Thread(target=self._read, args=(True,), daemon=True)
        self.reading.start()

    def _read(self, stop_at_fold: bool) -> None:
        while True:
            fd = os.open(self.path, os.O_RDONLY)  # (each trace opens, writes one line, closes: EOF after it)
            try:
                while chunk := os.read(fd, 65536):
                    if stop_at_fold and FOLD_STEP.encode() in chunk:
                        self.folding.set()
                        return  # closed by `finally`: the server's next trace waits for a reader
            finally:
                os.close(fd)

    def release(self) -> None:
        threading.Thread(target=self._read, args=(False,), daemon=True).start()


def _server_folding(tmp_path: Path) -> tuple[Path, int, _Trace]:
    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.serve]\nidle_seconds = 600\n", encoding="utf-8")
    trace = _Trace(tmp_path / "trace.fifo")
    started = _kg(root, "serve", "start", "--json", KG_SERVE_TRACE=str(trace.path))
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    logged = _kg(root, "log", "learning", "docker permission denied on the socket", "--now", NOW)
    assert logged.returncode == 0, logged.stderr
    ws = kg.open_workspace(root)
    wal = ws.graph_path.with_name(ws.graph_path.name + ".wal")
    until(lambda: not ws.journal.has_pending() and wal.exists() and wal.stat().st_size > 0,
          "the server applied the entry (its log holds it)")
    return root, pid, trace


def _stop(root: Path, **extra: str) -> subprocess.Popen:
    return subprocess.Popen([KG, "-w", str(root), "serve", "stop"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(KG_LOCK_TIMEOUT="0.3", **extra))


@pytest.mark.embedded_only("the read server serves the embedded graph only")
def test_a_stop_waits_for_the_servers_fold_saying_so_then_stops_it(tmp_path):
    root, pid, trace = _server_folding(tmp_path)
    stop = _stop(root)
    try:
        assert trace.folding.wait(120), stop.communicate()
        kg_dir = root / "memory" / ".kg"
        assert progress.current(kg_dir)["pid"] == pid  # folding, as far as anyone can see
        line = stop.stderr.readline()  # said once the fold is SAY_AFTER old; past the old 30.3 s budget it would fail
        assert line.startswith("kg: writing the read server's log into the graph (step 1 of 1: fold the "
                               "write-ahead log into the graph), "), line
        assert line.endswith(f" s so far, by process {pid}; waiting for it, then answering\n"), line
        assert stop.poll() is None
    finally:
        trace.release()
    out, err = stop.communicate(timeout=300)
    assert (stop.returncode, out, err) == (0, "Stopped the read server.\n", ""), err
    assert not client.alive(root / "memory" / ".kg")


@pytest.mark.embedded_only("the read server serves the embedded graph only")
def test_past_kg_migration_wait_a_stop_exits_1_naming_the_fold(tmp_path):
    root, pid, trace = _server_folding(tmp_path)
    stop = _stop(root, KG_MIGRATION_WAIT="0.5")
    try:
        assert trace.folding.wait(120), stop.communicate()
        out, err = stop.communicate(timeout=300)
    finally:
        trace.release()
    assert (stop.returncode, out) == (1, ""), err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"Error: kg process {pid} is writing the read server's log into the graph (step 1 of 1: "
                           "fold the write-ahead log into the graph), started "), err
    assert "try again in a few minutes" in last and "still starting" not in err
    until(lambda: not client.alive(root / "memory" / ".kg"), "the server ended its fold and stopped")
