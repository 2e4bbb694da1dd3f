"""A read after a bulk `kg ingest` that could not reach the graph (QA3 #1). The next read applied every waiting
entry before it answered, though nobody else wrote: 1,500 entries made a session-start hook wait 21 s and an MCP
`status` 20 s; at 20,000 every MCP tool timed out for over ten minutes. Now a read applies a batch at most of such
a backlog, says what it left (`journal_pending`) and leaves the rest to whoever applies in the background: the
detached applier the command leaves, or the MCP server's drain thread, which lets a tool call go first between two
records. Every acknowledged entry still ends up in the graph.

Real processes: the real console entry (its detached applier), the real `kg mcp` over stdio; the backlog is made
as QA3 made it, `kg ingest` while this test holds the graph's lock. No timing: the children are waited for on
their pidfds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kg
from kg.store.lock import FileLock

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import children_done as _children_done  # noqa: E402

pytestmark = pytest.mark.embedded_only("the backlog is made by holding the Kùzu file's lock; a team graph's "
                                      "writes go to its server")

KG = str(Path(sys.executable).parent / "kg")
BACKLOG = 60  # well past one drain batch (`write.drain_batch` = 8)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") or k.startswith("KG_STORE")}
    return {**env, "KG_NOW": "2026-12-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0", **extra}


def _kg(root: Path, *argv: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *argv], input=stdin, capture_output=True, text=True, cwd=root,
                          env=_env(**env), timeout=300)


def _backlog(root: Path, tmp_path: Path) -> list[str]:
    """`kg ingest` of BACKLOG entries while the graph is held: journaled, none applied. Their ids. A reader's budget
    of 0 s: its first batch, however fast the machine (the packaged 0.3 s count from a process's start), and a
    backlog of 20 lines counts as bulk (`write.reader_leave_backlog`; the packaged 200 would make BACKLOG large)."""
    toml = root / "kg.toml"
    toml.write_text((toml.read_text(encoding="utf-8") if toml.exists() else "")
                    + "\n[rules.policy.write]\nreader_drain_seconds = 0\nreader_leave_backlog = 20\n", encoding="utf-8")
    src = tmp_path / "bulk.jsonl"
    src.write_text("".join(json.dumps({"kind": "learning", "at": f"2026-11-{1 + i % 28:02d}T10:00:00",
                                       "summary": f"bulk entry {i} about widget {i % 7} and gadget {i % 5}"}) + "\n"
                           for i in range(BACKLOG)), encoding="utf-8")
    holder = FileLock(root / "memory" / ".kg" / "graph.lock", timeout=60)
    holder.acquire()
    try:
        done = _kg(root, "ingest", str(src), "--json", KG_LOCK_TIMEOUT="0")
    finally:
        holder.release()
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["logged"], out["applied"]) == (BACKLOG, False)
    return out["ids"]


def _all_applied(root: Path, ids: list[str], extra: int = 0) -> None:
    w = kg.open_workspace(root)
    assert not w.journal.has_pending()  # applied by the background, not left to this (library) read
    assert w.status()["entries"] == {"learning": BACKLOG + extra}
    assert {n["id"] for n in w.list(type="learning", limit=10 * BACKLOG)} >= set(ids)


def test_a_hook_and_a_read_answer_with_a_batch_of_a_backlog_and_the_applier_applies_the_rest(ws, tmp_path):
    ids = _backlog(ws.root, tmp_path)
    hook = _kg(ws.root, "hook", "session-start", "-m", "pnpm", "--json")
    assert hook.returncode == 0, hook.stderr
    left = json.loads(hook.stdout)["journal_pending"]
    assert 0 < left < BACKLOG  # a batch at least (what was logged moments ago shows), never the whole backlog
    status = _kg(ws.root, "status", "--json")  # beside the applier the hook left: it hands the graph over
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["journal_pending"] <= left
    _children_done(ws.root, "session-start")
    _children_done(ws.root, "status")
    _all_applied(ws.root, ids)


def test_mcp_tools_answer_with_a_batch_of_a_backlog_and_the_drain_thread_applies_the_rest(ws, tmp_path, need):
    """The first call finds the backlog (no drain thread runs yet): before, its open applied all of it, and `log`'s
    thread then held the graph for the whole journal while every later call waited. The server ends once its
    thread has applied everything."""
    need("mcp")
    ids = _backlog(ws.root, tmp_path)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    calls = [("initialize", hello), ("tools/call", {"name": "status", "arguments": {}}),
             ("tools/call", {"name": "log", "arguments": {"kind": "learning", "summary": "logged over a backlog"}}),
             ("tools/call", {"name": "search", "arguments": {"query": "widget"}}),
             ("tools/call", {"name": "status", "arguments": {}})]
    msgs = [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in enumerate(calls)]
    msgs.insert(1, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    proc = subprocess.Popen([KG, "-w", str(ws.root), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ws.root, env=_env())
    answers = {}
    for msg in msgs:  # one at a time, each answered before the next is sent
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        if "id" in msg:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            answers[json.loads(line)["id"]] = json.loads(line)["result"]
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert not any(a.get("isError") for a in answers.values()), answers
    first, last = answers[1]["structuredContent"], answers[4]["structuredContent"]
    assert 0 < first["journal_pending"] < BACKLOG
    assert last["journal_pending"] <= first["journal_pending"] + 1  # (the logged entry, if not applied yet)
    assert answers[3]["structuredContent"]["hits"]
    _all_applied(ws.root, ids, extra=1)
