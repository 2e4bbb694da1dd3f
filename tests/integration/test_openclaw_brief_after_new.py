"""The brief a bootstrap right after /new gives the agent is the new session's. OpenClaw's handler answers a
bootstrap from the brief kg saved, refreshed in the background, so as not to hold up the gateway; right after
/new that saved brief was the ended session's: the agent of the new session was told "Session: <the old one>
(started now)" (QA pass). With node running the real handler as the gateway does (imported once, each event
awaited, nothing waited for: no KG_HOOK_WAIT) and a real OpenClaw transcript."""

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
TRANSCRIPT = ("runtimes", "openclaw", "transcripts", "b3db607f-7ae8-4089-b806-44800e961672.jsonl")
DRIVER = r"""
const [handlerPath, events] = [process.argv[2], JSON.parse(process.argv[3])];
const { default: handler } = await import("file://" + handlerPath);
const briefs = [];
for (const e of events) {
  await handler(e);
  const agents = e.action === "bootstrap" && e.context.bootstrapFiles.find((f) => f.name === "AGENTS.md");
  if (agents) briefs.push(agents.content);
}
console.log(JSON.stringify(briefs));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs OpenClaw's handler.js")
def test_the_bootstrap_after_new_names_the_new_session(ws, shared_data, tmp_path):
    copy = tmp_path / "session.jsonl"
    shutil.copyfile(shared_data.joinpath(*TRANSCRIPT), copy)
    env = {**os.environ, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600"}
    for name in ("KG_WORKSPACE", "KG_HOOK_WAIT"):
        env.pop(name, None)
    assert subprocess.run([KG, "-w", str(ws.root), "install", "openclaw"], env=env, capture_output=True,
                          timeout=300).returncode == 0
    (tmp_path / "drive.mjs").write_text(DRIVER, encoding="utf-8")

    def boot(sid: str) -> dict:
        return {"type": "agent", "action": "bootstrap", "sessionKey": "agent:main:main", "messages": [],
                "context": {"sessionId": sid, "workspaceDir": str(ws.root), "agentId": "main", "bootstrapFiles": [
                    {"name": "AGENTS.md", "path": "AGENTS.md", "content": "# Agents", "missing": False}]}}

    events = [boot(copy.stem),
              {"type": "command", "action": "new", "sessionKey": "agent:main:main", "messages": [],
               "context": {"previousSessionEntry": {"sessionId": copy.stem, "sessionFile": str(copy)}}},
              boot("f967d602-325a-4a45-8d54-ee17484cfd96")]
    done = subprocess.run(["node", str(tmp_path / "drive.mjs"), str(ws.root / "hooks/kaizen-kg/handler.js"),
                           json.dumps(events)], capture_output=True, text=True, cwd=ws.root, env=env, timeout=300)
    assert done.returncode == 0 and "kaizen-kg" not in done.stderr, done.stderr
    first, second = (re.search(r"- Session: (\S+)", b).group(1) for b in json.loads(done.stdout))
    deadline = time.monotonic() + 300
    while processes_of(ws.root, "session-end") or processes_of(ws.root, "session-start"):
        assert time.monotonic() < deadline, "kg's detached processes never finished"
        time.sleep(0.05)
    # (before: `second` was `first`, from the brief the first bootstrap saved)
    assert second != first
    assert ws.current_session() == second
    with ws.reading() as st:
        assert st.run("memory_session_get", id=first)[0]["ended_at"] is not None
        assert st.run("memory_session_get", id=second)[0]["ended_at"] is None
