"""An agent wired to kg through MCP alone (no runtime hooks) gets a kg session per conversation: its first `brief`
starts one when none is open, and the server's exit ends it with its summary (QA9 #5: its logs joined no session,
so a pattern recurring over its conversations counted 0 sessions and never became ready). Under a runtime's hooks,
whose start opened the session, the brief goes on with that one and the server's exit leaves it open. The real
`kg mcp` over stdio, as a client launches it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.integration.test_mcp_server import _stdio

KG = str(Path(sys.executable).with_name("kg"))
KEY = "wf.migrate_first"


def _call(name: str, arguments: dict) -> tuple[str, dict]:
    return "tools/call", {"name": name, "arguments": arguments}


BRIEF = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "brief", "arguments": {}}}


def _server(ws):
    """A `kg mcp` process, initialized, and a function that sends it one message (and reads its answer, for a call)."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    proc = subprocess.Popen([KG, "-w", str(ws.root), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)

    def send(msg: dict) -> dict | None:
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline()) if "id" in msg else None

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc, send


def _ended(ws, sid: str):
    with ws.reading() as st:
        return st.run("memory_session_get", id=sid)[0]["ended_at"]


def test_each_mcp_conversation_is_a_session_ended_when_the_server_exits(ws, need, monkeypatch):
    need("mcp")
    monkeypatch.setenv("KG_SERVER", "0")
    sessions = []
    for day in ("02", "03", "04"):
        monkeypatch.setenv("KG_NOW", f"2026-11-{day}T10:00:00")
        answers, other, err = _stdio(ws.root, [
            _call("brief", {}), _call("log", {"kind": "learning", "summary": "ran the migrations after the tests",
                                              "pattern_key": KEY}), _call("brief", {})])
        assert not other and "Traceback" not in err, (other, err)
        first, again = (answers[i]["result"]["structuredContent"] for i in (1, 3))
        assert first["session_started"] is True and again["session_started"] is False, (first, again)
        assert first["session"] == again["session"]  # (one conversation: one session, however many briefs)
        sessions.append(first["session"])
        assert _ended(ws, first["session"]) is not None  # its exit ended it
        assert (ws.root / "memory" / "sessions" / f"{first['session']}.md").exists()
    assert len(set(sessions)) == 3
    shown = subprocess.run([KG, "-w", str(ws.root), "show", KEY, "--json"], capture_output=True, text=True,
                           timeout=120, check=True)
    assert json.loads(shown.stdout)["node"]["recurrence"]["sessions"] == 3  # (before: 0)


def test_under_a_runtimes_hooks_the_brief_goes_on_with_their_session_and_leaves_it_open(ws, need, monkeypatch):
    need("mcp")
    monkeypatch.setenv("KG_SERVER", "0")
    monkeypatch.setenv("KG_NOW", "2026-11-02T10:00:00")
    payload = {"session_id": "cc-1", "cwd": str(ws.root), "hook_event_name": "SessionStart", "source": "startup"}
    started = subprocess.run([KG, "-w", str(ws.root), "hook", "session-start", "--start-session", "--runtime",
                              "claude-code"], input=json.dumps(payload), capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    theirs = ws.current_session()
    answers, other, err = _stdio(ws.root, [_call("brief", {})])
    brief = answers[1]["result"]["structuredContent"]
    assert (brief["session"], brief["session_started"]) == (theirs, False), brief
    assert _ended(ws, theirs) is None and ws.current_session() == theirs  # the runtime's to end


def test_a_session_a_killed_server_left_open_is_ended_by_the_next_conversations_brief(ws, need, monkeypatch):
    """A server killed (no exit to end its session) left its session open and current: every later conversation's
    brief went on with it. The next brief ends it, with the summary its events make, and starts its own."""
    need("mcp")
    import signal

    monkeypatch.setenv("KG_SERVER", "0")
    monkeypatch.setenv("KG_NOW", "2026-11-02T10:00:00")
    proc, send = _server(ws)
    killed = send({**BRIEF, "id": 1})["result"]["structuredContent"]["session"]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert _ended(ws, killed) is None and ws.current_session() == killed  # what the kill leaves
    monkeypatch.setenv("KG_NOW", "2026-11-03T10:00:00")
    answers, other, err = _stdio(ws.root, [_call("brief", {})])
    brief = answers[1]["result"]["structuredContent"]
    assert brief["session_started"] is True and brief["session"] != killed, brief
    assert _ended(ws, killed) is not None and (ws.root / "memory" / "sessions" / f"{killed}.md").exists()


def test_a_later_brief_never_takes_over_a_session_a_person_started(ws, need, monkeypatch):
    """Review: after its own session ended, the server's next brief went on with the session a person then started
    (`kg session start`) as its own, and its exit ended it."""
    need("mcp")
    monkeypatch.setenv("KG_SERVER", "0")
    monkeypatch.setenv("KG_NOW", "2026-11-02T10:00:00")
    proc, send = _server(ws)
    own = send({**BRIEF, "id": 1})["result"]["structuredContent"]["session"]
    run = [KG, "-w", str(ws.root), "session"]
    assert subprocess.run([*run, "end", "--session", own], capture_output=True, timeout=120).returncode == 0
    assert subprocess.run([*run, "start"], capture_output=True, timeout=120).returncode == 0
    theirs = ws.current_session()
    again = send({**BRIEF, "id": 2})["result"]["structuredContent"]
    assert (again["session"], again["session_started"]) == (theirs, False), again
    proc.stdin.close()
    proc.wait(timeout=120)
    assert _ended(ws, theirs) is None and ws.current_session() == theirs  # the person's, left to them


def test_a_brief_while_another_process_holds_the_graph_is_the_busy_brief(ws, need, monkeypatch):
    """Review: with a session open, the brief read the graph before its own bounded read and failed after the lock
    budget ("held by another process") instead of answering from the files."""
    need("mcp")
    from tests.integration.test_mcp_server import HOLDER

    monkeypatch.setenv("KG_SERVER", "0")
    monkeypatch.setenv("KG_NOW", "2026-11-02T10:00:00")
    started = subprocess.run([KG, "-w", str(ws.root), "session", "start"], capture_output=True, timeout=120)
    assert started.returncode == 0, started.stderr
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ws.root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "holding\n"
        answers, other, err = _stdio(ws.root, [_call("brief", {})])
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    result = answers[1]["result"]
    assert not result.get("isError") and result["structuredContent"]["graph_busy"] is True, result
