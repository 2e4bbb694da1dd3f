"""Issue 20, readers first: a detached applier that sees agents logging in parallel starts the workspace's read
server, so the first read under that load finds it warm; with the server off it starts nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import kg
from kg.ingest.background import watching
from kg.serve import client, protocol

KG = str(Path(sys.executable).with_name("kg"))


def _stop(root: Path) -> None:
    """Stop the server the test started, also one still starting (not listening yet: `serve stop` misses it)."""
    deadline = time.monotonic() + 120
    while True:
        subprocess.run([KG, "-w", str(root), "serve", "stop"], capture_output=True, timeout=300,
                       env={**os.environ, "KG_SERVER": "1"})
        if not client.alive(root / "memory" / ".kg") or time.monotonic() > deadline:
            return
        time.sleep(0.2)


def test_an_applier_that_sees_agents_logging_starts_the_read_server(tmp_path, monkeypatch):
    monkeypatch.setenv("KG_SERVER", "1")
    ws = kg.init_workspace(tmp_path / "ws")
    ws.log("error", "deploy step 1 failed on staging", area="infra", apply=False)

    def drain_while_another_agent_logs():
        report = ws.drain(if_pending=True)
        ws.log("error", "deploy step 2 failed on staging", area="infra", apply=False)  # came in meanwhile
        return report

    once = watching(ws, drain_while_another_agent_logs)
    try:
        assert once().applied == 1
        deadline = time.monotonic() + 120
        while not client.alive(ws.kg_dir):  # it is starting: its lock is taken first thing
            assert time.monotonic() < deadline, "no read server was started"
            time.sleep(0.02)
        assert client.spawn(ws.root)  # one lives: a second is not started
        while True:  # it comes up, listening before it applies anything (a reader may be at the door)
            try:
                protocol.connect(ws.kg_dir, 30).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the read server never listened"
                time.sleep(0.02)
        while ws.journal.has_pending():  # then it applies what came in meanwhile, between reads
            assert time.monotonic() < deadline, "the read server never applied the entry logged meanwhile"
            time.sleep(0.05)
    finally:
        _stop(ws.root)


def test_a_lone_log_or_a_server_switched_off_starts_none(tmp_path, monkeypatch):
    ws = kg.init_workspace(tmp_path / "ws")
    monkeypatch.setenv("KG_SERVER", "1")
    ws.log("error", "one entry, nobody else logging", apply=False)
    watching(ws, lambda: ws.drain(if_pending=True))()
    assert not client.alive(ws.kg_dir)
    monkeypatch.setenv("KG_SERVER", "0")
    ws.log("error", "deploy step 1 failed", apply=False)
    watching(ws, lambda: [ws.drain(if_pending=True), ws.log("error", "deploy step 2 failed", apply=False)][0])()
    assert not client.alive(ws.kg_dir) and ws.journal.pending_count() == 1


def test_an_applier_that_finds_other_agents_entries_starts_the_server_before_draining(tmp_path, monkeypatch):
    """More than its own entry in the journal: the applier starts the server first thing and leaves the drain
    to it (that round applies nothing), so the first read under load finds the server up."""
    monkeypatch.setenv("KG_SERVER", "1")
    ws = kg.init_workspace(tmp_path / "ws")
    for step in (1, 2):
        ws.log("error", f"deploy step {step} failed on staging", area="infra", apply=False)
    drained = []
    once = watching(ws, lambda: drained.append(ws.drain(if_pending=True)))
    try:
        assert once() is None and not drained  # nothing applied here: the server takes it
        deadline = time.monotonic() + 120
        while not client.alive(ws.kg_dir):
            assert time.monotonic() < deadline, "no read server was started"
            time.sleep(0.02)
        # (a server that is starting is left the drain too: test_serve_turns.py) once it listens, stop it
        while not (ws.kg_dir / "serve.sock").exists():
            assert time.monotonic() < deadline, "the read server never listened"
            time.sleep(0.02)
        _stop(ws.root)
        while client.alive(ws.kg_dir):
            assert time.monotonic() < deadline, "the read server did not stop"
            time.sleep(0.02)
        once()  # started once: later rounds drain as before (no second server)
        assert len(drained) == 1 and not client.alive(ws.kg_dir)
    finally:
        _stop(ws.root)
