"""OpenClaw's installed handler.js runs kg detached (a hook that waits holds up the gateway), so the processes of
back-to-back events are not ordered by the runtime: /new (command:new) then the next run's agent:bootstrap. With
node running the real handler, the real console entry and a real OpenClaw transcript; the session end is held
back (a wrapper in KG_BIN waits for the test's gate) instead of hoping the machine is slow, and node's own spawn
reports which kg processes the handler started, so the test knows whether the start ran before the end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import processes_of  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
TRANSCRIPT = ("runtimes", "openclaw", "transcripts", "b3db607f-7ae8-4089-b806-44800e961672.jsonl")

# The gateway's side: import the handler once (as the gateway does) and await it with each event; every process
# it starts is reported as it is spawned. Stays up (the handler's module state with it) until stdin closes.
DRIVER = r"""
import cp from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
const real = cp.spawn;
cp.spawn = (cmd, args, opts) => { console.log("spawned " + JSON.stringify(args)); return real(cmd, args, opts); };
syncBuiltinESMExports();
const [handlerPath, events] = [process.argv[2], JSON.parse(process.argv[3])];
const { default: handler } = await import("file://" + handlerPath);
for (const e of events) await handler(e);
console.log("dispatched");
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
"""

# KG_BIN: a session end waits for the gate; a finished session start leaves a mark.
WRAPPER = """#!/bin/sh
case " $* " in *" session-end "*) while [ ! -e "$KG_TEST_GATE" ]; do sleep 0.02; done ;; esac
"$KG_TEST_REAL" "$@"
rc=$?
case " $* " in *" session-start "*) echo done >> "$KG_TEST_STARTED" ;; esac
exit $rc
"""


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + 300
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _open(ws, session: str) -> bool:
    with ws.reading() as st:
        return st.run("memory_session_get", id=session)[0]["ended_at"] is None


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs OpenClaw's handler.js")
def test_a_new_then_the_next_bootstrap_open_a_new_session_whichever_kg_runs_first(ws, shared_data, tmp_path):
    copy = tmp_path / "session.jsonl"
    shutil.copyfile(shared_data.joinpath(*TRANSCRIPT), copy)
    env = {**os.environ, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0"}
    env.pop("KG_WORKSPACE", None)
    env.pop("KG_HOOK_WAIT", None)
    assert subprocess.run([KG, "-w", str(ws.root), "install", "openclaw"], env=env, capture_output=True,
                          timeout=300).returncode == 0
    first = subprocess.run([KG, "-w", str(ws.root), "hook", "session-start", "--start-session", "--write", "--json",
                            "--runtime", "openclaw"], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    first_id = json.loads(first.stdout)["session"]
    assert ws.current_session() == first_id and (ws.root / "memory" / ".hook-context.txt").exists()

    wrapper = tmp_path / "kg-wrapper"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    wrapper.chmod(0o755)
    gate, started = tmp_path / "gate", tmp_path / "started"
    (tmp_path / "drive.mjs").write_text(DRIVER, encoding="utf-8")
    events = [{"type": "command", "action": "new", "sessionKey": "agent:main:main", "messages": [],
               "context": {"previousSessionEntry": {"sessionId": copy.stem, "sessionFile": str(copy)}}},
              {"type": "agent", "action": "bootstrap", "sessionKey": "agent:main:main", "messages": [],
               "context": {"workspaceDir": str(ws.root), "bootstrapFiles": [], "agentId": "main"}}]
    node = subprocess.Popen(["node", str(tmp_path / "drive.mjs"), str(ws.root / "hooks/kaizen-kg/handler.js"),
                             json.dumps(events)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ws.root,
                            env={**env, "KG_BIN": str(wrapper), "KG_TEST_REAL": KG, "KG_TEST_GATE": str(gate),
                                 "KG_TEST_STARTED": str(started)})
    try:
        spawned = []
        for line in node.stdout:
            if line.strip() == "dispatched":
                break
            spawned.append(json.loads(line.split(" ", 1)[1]))
        assert any("session-end" in a for a in spawned), spawned
        if any("session-start" in a for a in spawned):  # the start did not wait for the end: let it run first
            _until(started.exists, "the session start never finished")
        gate.touch()  # the end goes on (late, as on a loaded machine)
        _until(started.exists, "the session start never ran")
        _until(lambda: not processes_of(ws.root, "session-end"), "the session end never finished")
    finally:
        gate.touch()
        node.stdin.close()
        node.wait(timeout=300)
    second = ws.current_session()
    # (before: the start found the old session still current and open and went on with it; the late end then
    # closed it, and what the agent logged after /new landed in the old session or in none)
    assert second is not None and second != first_id
    assert _open(ws, second)
    assert not _open(ws, first_id) and (ws.root / "memory" / "sessions" / f"{first_id}.md").exists()
    assert not (ws.root / "memory" / "sessions" / f"{second}.md").exists()
