"""OpenClaw's daily reset (04:00) and idle expiry give the conversation's next message a new sessionId with no
/new and no session:end (only planned upstream): the handler's next bootstrap is the only sign. Before, the
session before was never reflected on nor ended (QA1 #2), and that bootstrap was shown the saved brief, which named
the session before as its own (QA1 #7). With node running the real handler as the gateway does (imported once,
each event awaited, no KG_HOOK_WAIT) on real OpenClaw transcripts in an OpenClaw home."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import processes_of  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
A, B = "b3db607f-7ae8-4089-b806-44800e961672", "f967d602-325a-4a45-8d54-ee17484cfd96"
KEY = "agent:main:telegram:direct:5551234567"
DRIVER = r"""
const [handlerPath, events] = [process.argv[2], JSON.parse(process.argv[3])];
const { default: handler } = await import("file://" + handlerPath);
const briefs = [];
for (const e of events) {
  await handler(e);
  const agents = e.context.bootstrapFiles.find((f) => f.name === "AGENTS.md");
  briefs.push(agents ? agents.content : "");
}
console.log(JSON.stringify(briefs));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs OpenClaw's handler.js")
def test_a_bootstrap_after_the_daily_reset_ends_the_session_before(ws, shared_data, tmp_path):
    home = tmp_path / "home"
    sessions = home / ".openclaw" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    for sid in (A, B):
        real = shared_data / "runtimes" / "openclaw" / "transcripts" / f"{sid}.jsonl"
        shutil.copyfile(real, sessions / f"{sid}.jsonl")
    env = {**os.environ, "HOME": str(home), "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600"}
    for name in ("KG_WORKSPACE", "KG_HOOK_WAIT"):
        env.pop(name, None)
    assert subprocess.run([KG, "-w", str(ws.root), "install", "openclaw"], env=env, capture_output=True,
                          timeout=300).returncode == 0
    (tmp_path / "drive.mjs").write_text(DRIVER, encoding="utf-8")

    def boot(sid: str) -> dict:
        return {"type": "agent", "action": "bootstrap", "sessionKey": KEY, "messages": [],
                "context": {"sessionKey": KEY, "sessionId": sid, "agentId": "main", "workspaceDir": str(ws.root),
                            "bootstrapFiles": [{"name": "AGENTS.md", "path": "AGENTS.md", "content": "# Agents",
                                                "missing": False}]}}

    done = subprocess.run(["node", str(tmp_path / "drive.mjs"), str(ws.root / "hooks/kaizen-kg/handler.js"),
                           json.dumps([boot(A), boot(A), boot(B)])], capture_output=True, text=True, cwd=ws.root,
                          env=env, timeout=300)
    assert done.returncode == 0 and "kaizen-kg" not in done.stderr, done.stderr
    named = [re.search(r"- Session: (\S+)", b) for b in json.loads(done.stdout)]
    first, again = named[0].group(1), named[1] and named[1].group(1)
    deadline = time.monotonic() + 300
    while processes_of(ws.root, "session-end") or processes_of(ws.root, "session-start"):
        assert time.monotonic() < deadline, "kg's detached processes never finished"
        time.sleep(0.05)
    assert again == first  # the same session's next run: its own saved brief
    # (before: the saved brief, "Session: <first> (started now)", for the new session too)
    assert named[2] is not None and named[2].group(1) != first
    second = named[2].group(1)
    assert ws.current_session() == second
    with ws.reading() as st:
        assert st.run("memory_session_get", id=first)[0]["ended_at"] is not None  # (before: open for ever)
        assert st.run("memory_session_get", id=second)[0]["ended_at"] is None
    summary = (ws.root / "memory" / "sessions" / f"{first}.md").read_text(encoding="utf-8")
    assert f"Reflected on {sessions / A}.jsonl" in summary
