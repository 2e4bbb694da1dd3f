"""A read server that is alive but stopped (SIGSTOP, Ctrl-Z on `kg serve run`, a paused container) holds the graph
and answers nothing: every read, the session-start hook's included, waited the client's whole 600 s, and a runtime
killed the hook at its own timeout (QA11 #12). A read now says at once that the server is stopped, and how to resume
or end it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.embedded_only("the embedded graph's read server")
KG = str(Path(sys.executable).parent / "kg")


def test_a_read_of_a_stopped_server_says_so_instead_of_waiting(ws):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    ws.log("learning", "logged before the server stopped", now="2026-12-01T10:00:00", wait=True)
    started = subprocess.run([KG, "-w", str(ws.root), "serve", "start"], capture_output=True, text=True, env=env,
                             timeout=120)
    assert started.returncode == 0, started.stderr
    status = subprocess.run([KG, "-w", str(ws.root), "serve", "status", "--json"], capture_output=True, text=True,
                            env=env, timeout=120)
    pid = int(__import__("json").loads(status.stdout)["pid"])
    os.kill(pid, signal.SIGSTOP)
    try:
        for argv in (["status"], ["hook", "session-start", "--runtime", "claude-code"]):
            # (the timeout only keeps a regression from holding the run for the client's 600 s)
            r = subprocess.run([KG, "-w", str(ws.root), *argv], stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, env=env, timeout=90)
            assert r.returncode == 1 and f"the read server (pid {pid}) is stopped" in r.stderr, (argv, r.stderr)
            assert f"kill -CONT {pid}" in r.stderr, r.stderr
    finally:
        os.kill(pid, signal.SIGCONT)
        subprocess.run([KG, "-w", str(ws.root), "serve", "stop"], capture_output=True, env=env, timeout=120)
