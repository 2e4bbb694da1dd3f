"""`kg hook session-start` while another process holds the graph read-write: after `busy_wait_seconds` it
answers from files (kg's blocks in the instruction files, today's log) with a note, and exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kg

HOLDER = """
import sys, kg
ws = kg.open_workspace(sys.argv[1])
with ws.store() as st:
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


def test_session_start_briefs_from_files_while_a_writer_holds_the_graph(tmp_path):
    root = tmp_path / "ws"
    ws = kg.init_workspace(root)
    ws.log("error", "docker: permission denied on /var/run/docker.sock", now="2026-12-02T09:00:00",
           priority="high")
    (root / "AGENTS.md").write_text("# Agents\n\n<!-- kaizen-kg:begin rules -->\n- Run the tests with "
                                    "`uv run pytest`, never bare pytest.\n<!-- kaizen-kg:end rules -->\n",
                                    encoding="utf-8")
    env = {**os.environ, "KG_WORKSPACE": str(root), "KG_NOW": "2026-12-02T10:00:00"}
    env.pop("KG_LOCK_TIMEOUT", None)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        kg_bin = Path(sys.executable).with_name("kg")
        payload = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"})
        r = subprocess.run([str(kg_bin), "hook", "session-start", "--start-session", "--runtime", "claude-code"],
                           input=payload, capture_output=True, text=True, env=env, cwd=root, timeout=60)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert r.returncode == 0, r.stderr
    context = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "graph was busy" in context
    assert "uv run pytest" in context  # the AGENTS.md block
    assert "docker: permission denied" in context  # today's daily log
    assert "## ## " not in context  # (was: the brief's fit adds the "## " the busy sections' titles had already)
    assert "\n\n## Today's log (2026-12-02.md, newest first) (1)\n" in context
    assert "\n\n## AGENTS.md (rules) (1)\n" in context


def test_the_wait_is_a_rule(tmp_path):
    from kg.runtimes.hooks import HookRules

    assert HookRules.from_mapping({"busy_wait_seconds": 1.5}).busy_wait == 1.5
