"""OpenClaw ends a session by its daily reset or idle expiry with no event: the conversation's next message gets a
new sessionId, and the handler's next `agent:bootstrap` is the only sign (QA1 #2). A session start naming the
conversation (`--thread`, OpenClaw's sessionKey) ends the kg session of the runtime session before on it,
reflecting on the transcript that session's start named. Through the real CLI on a real OpenClaw transcript."""

from __future__ import annotations

import json
import shutil

A = "b3db607f-7ae8-4089-b806-44800e961672"  # 2 failed tool calls (an ls and a read)
B = "f967d602-325a-4a45-8d54-ee17484cfd96"
KEY = "agent:main:telegram:direct:5551234567"


def _copy(shared_data, tmp_path, sid: str) -> str:
    folder = tmp_path / "sessions"
    folder.mkdir(exist_ok=True)
    path = folder / f"{sid}.jsonl"
    shutil.copyfile(shared_data / "runtimes" / "openclaw" / "transcripts" / f"{sid}.jsonl", path)
    return str(path)


def _start(run_kg, sid: str, thread: str, transcript: str, now: str) -> str:
    res = run_kg(["hook", "session-start", "--start-session", "--json", "--runtime", "openclaw",
                  "--runtime-session", sid, "--thread", thread, "--transcript", transcript, "--now", now])
    assert res.exit_code == 0, res.stderr
    return res.json["session"]


def _ended(ws, sid: str):
    with ws.reading() as st:
        return st.run("memory_session_get", id=sid)[0]["ended_at"]


def _errors(run_kg, session: str | None = None) -> list[str]:
    rows = run_kg("list --type error --limit 0 --json").json
    return [e["text"] for e in rows if session is None or e["session"] == session]


def test_a_new_session_on_the_conversation_ends_the_one_before(ws, run_kg, shared_data, tmp_path):
    first = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-26T15:00")
    again = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-26T15:05")  # the next run: goes on
    assert again == first and _ended(ws, first) is None and _errors(run_kg) == []
    # the next morning, after the daily reset: a new sessionId on the same sessionKey, and no /new
    second = _start(run_kg, B, KEY, _copy(shared_data, tmp_path, B), "2026-02-27T09:00")
    assert second != first and ws.current_session() == second
    assert _ended(ws, first) is not None  # (before: open for ever, no summary)
    summary = (ws.root / "memory" / "sessions" / f"{first}.md").read_text(encoding="utf-8")
    assert f"Reflected on {tmp_path / 'sessions' / A}.jsonl" in summary
    logged = _errors(run_kg, first)  # logged into the session they happened in
    assert len(logged) == 2 and any("ls -la" in e for e in logged) and any("MEMORY.md" in e for e in logged)
    assert not list((ws.root / "memory" / ".kg" / "ending").glob("*.json"))
    # the same start again ends nothing more
    assert _start(run_kg, B, KEY, _copy(shared_data, tmp_path, B), "2026-02-27T09:05") == second
    assert _ended(ws, second) is None and len(_errors(run_kg)) == 2


def test_another_conversation_or_an_end_already_made_ends_nothing(ws, run_kg, shared_data, tmp_path):
    first = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-26T15:00")
    # a group chat of the same agent is another conversation: both stay open
    group = _start(run_kg, B, "agent:main:telegram:group:42", _copy(shared_data, tmp_path, B), "2026-02-26T15:10")
    assert group != first and _ended(ws, first) is None and _ended(ws, group) is None
    # /new ends the DM's session itself; its next session's start then has nothing left to end
    end = run_kg(["hook", "session-end", "--runtime", "openclaw", "--runtime-session", A, "--transcript",
                  _copy(shared_data, tmp_path, A), "--now", "2026-02-26T15:20"])
    assert end.exit_code == 0, end.stderr
    assert _ended(ws, first) is not None and len(_errors(run_kg)) == 2
    third = _start(run_kg, "0a1b2c3d-0000-4000-8000-000000000001", KEY, str(tmp_path / "none.jsonl"),
                   "2026-02-26T15:21")
    assert third not in (first, group) and _ended(ws, group) is None and len(_errors(run_kg)) == 2
    threads = json.loads((ws.root / "memory" / ".kg" / "sessions.json").read_text())["threads"]
    assert threads[f"openclaw:{KEY}"][0] == "openclaw:0a1b2c3d-0000-4000-8000-000000000001"


def test_a_late_start_of_the_session_before_ends_nothing(ws, run_kg, shared_data, tmp_path):
    """The handler refreshes a session's brief in a detached `kg` it does not wait for; the next session's first
    bootstrap asks for its brief at once. When that refresh reaches the graph last, it named a runtime session the
    conversation had already left: it ended the new session and started a third (ci of 6f18be8a, the gateway
    driven by node: '2026-07-01-003' current where '-002' was the brief's)."""
    first = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-27T08:59")
    second = _start(run_kg, B, KEY, _copy(shared_data, tmp_path, B), "2026-02-27T09:00")
    late = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-27T09:00")
    assert late == second and ws.current_session() == second  # goes on with the session that runs now
    assert _ended(ws, second) is None and _ended(ws, first) is not None
    with ws.reading() as st:
        assert st.run("count_sessions")[0]["n"] == 2
    threads = json.loads((ws.root / "memory" / ".kg" / "sessions.json").read_text())["threads"]
    assert threads[f"openclaw:{KEY}"][0] == f"openclaw:{B}"  # the conversation is still on B
    # B's next run goes on with its own session, and A's end, should it come, ends nothing more
    assert _start(run_kg, B, KEY, _copy(shared_data, tmp_path, B), "2026-02-27T09:05") == second
    end = run_kg(["hook", "session-end", "--runtime", "openclaw", "--runtime-session", A, "--transcript",
                  _copy(shared_data, tmp_path, A), "--now", "2026-02-27T09:10"])
    assert end.exit_code == 0, end.stderr
    assert _ended(ws, second) is None and ws.current_session() == second


def test_a_late_start_after_the_session_ended_starts_nothing(ws, run_kg, shared_data, tmp_path):
    """QA7 #1: /new ends A (its end handed over), and the handler's refresh of A's brief reaches kg after it: the
    start opened a session nobody used, made it current, and B's start then ended it with an empty summary."""
    first = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-27T08:59")
    end = run_kg(["hook", "session-end", "--runtime", "openclaw", "--runtime-session", A, "--transcript",
                  _copy(shared_data, tmp_path, A), "--now", "2026-02-27T09:00"])
    assert end.exit_code == 0, end.stderr
    late = run_kg(["hook", "session-start", "--start-session", "--json", "--runtime", "openclaw", "--runtime-session",
                   A, "--thread", KEY, "--transcript", _copy(shared_data, tmp_path, A), "--now", "2026-02-27T09:00"])
    assert late.exit_code == 0 and late.json["session_started"] is False, late.stderr
    assert late.json["session"] in (None, first) and ws.current_session() in (None, first)
    second = _start(run_kg, B, KEY, _copy(shared_data, tmp_path, B), "2026-02-27T09:01")
    assert second == "2026-02-27-002" and ws.current_session() == second
    assert sorted(p.name for p in (ws.root / "memory" / "sessions").glob("*.md")) == [f"{first}.md"]
    with ws.reading() as st:
        assert st.run("count_sessions")[0]["n"] == 2


def test_a_start_killed_before_it_ended_the_session_before_leaves_it_to_the_next(ws, run_kg, shared_data, tmp_path):
    """QA7 #3: the conversation was noted as moved on before the session before was recorded as ended; a start
    killed in between (handler.js gives up on a first brief after 10 s) left that session open for good. Now the end
    is recorded first: a start that dies after it leaves the record, which the next start or end sweeps."""
    from kg.memory import session_ids

    first = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-27T08:59")
    with ws.journal.locked():  # what a start killed right after the conversation's move was noted left (before)
        assert session_ids.follow(ws, f"openclaw:{KEY}", f"openclaw:{B}", _copy(shared_data, tmp_path, B),
                                  noted=False) == (first, _copy(shared_data, tmp_path, A))
    threads = json.loads((ws.root / "memory" / ".kg" / "sessions.json").read_text())["threads"]
    assert threads[f"openclaw:{KEY}"][0] == f"openclaw:{A}"  # not noted: the next start of B still ends A
    second = _start(run_kg, B, KEY, _copy(shared_data, tmp_path, B), "2026-02-27T09:00")
    assert second != first and _ended(ws, first) is not None


def test_a_second_end_of_the_same_session_adds_nothing(ws, run_kg, shared_data, tmp_path):
    """QA7 #2: OpenClaw fires command:new and then session:end for one session. When the second end ran while the
    first's child held the session's end record (forced by stopping that child: /work/tmp-qa7/s6.sh), it found no
    session tied and reflected the transcript into a session named after it: the findings and a summary there, the
    real session ended with an empty one. A second end of a session whose end was handed over now does nothing."""
    first = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-27T08:59")
    argv = ["hook", "session-end", "--runtime", "openclaw", "--runtime-session", A, "--transcript",
            _copy(shared_data, tmp_path, A), "--now", "2026-02-27T09:00"]
    assert run_kg(argv).exit_code == 0
    again = run_kg(argv)
    assert again.exit_code == 0 and "end was handed over already" in again.stderr, again.stderr
    assert sorted(p.name for p in (ws.root / "memory" / "sessions").glob("*.md")) == [f"{first}.md"]
    assert {e["session"] for e in run_kg("list --type error --limit 0 --json").json} == {first}


def test_a_session_end_typed_by_hand_leaves_the_next_run_a_session(ws, run_kg, shared_data, tmp_path):
    """`kg session end` in a running OpenClaw session is not its runtime's end: its next bootstrap (the same
    sessionId) opens a new kg session, as before ended sessions were remembered (review of 2f12f565 #3)."""
    first = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-27T08:59")
    assert run_kg(["session", "end", "--summary", "done for now", "--now", "2026-02-27T09:30"]).exit_code == 0
    again = _start(run_kg, A, KEY, _copy(shared_data, tmp_path, A), "2026-02-27T10:00")
    assert again not in (None, first) and ws.current_session() == again


def test_a_claude_code_end_after_a_start_that_tied_nothing_still_reflects(ws, run_kg, shared_data, tmp_path):
    """Claude Code resumes a session after its end (`claude --resume`, the same session_id); when that start tied
    no kg session (killed at its timeout, a team server down), its end reflects the transcript as a session kg never
    saw (QA2 #6). Ended sessions are taken as over only on a conversation (review of 2f12f565 #2)."""
    sid = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    path = tmp_path / f"{sid}.jsonl"
    path.write_text("", encoding="utf-8")  # the first run: nothing in the transcript yet

    def hook(event: str, now: str, extra: dict):
        payload = {"session_id": sid, "transcript_path": str(path), "cwd": str(ws.root), "hook_event_name": event,
                   **extra}
        r = run_kg(["hook", event == "SessionStart" and "session-start" or "session-end", "--runtime", "claude-code",
                    "--now", now, *(["--start-session"] if event == "SessionStart" else [])], input=json.dumps(payload))
        assert r.exit_code == 0, r.stderr

    hook("SessionStart", "2026-07-01T10:00", {"source": "startup"})
    hook("SessionEnd", "2026-07-01T10:05", {"reason": "other"})
    shutil.copyfile(shared_data / "runtimes" / "claude_code" / "transcripts" / f"{sid}.jsonl", path)  # resumed
    hook("SessionEnd", "2026-07-01T11:00", {"reason": "other"})
    assert len(_errors(run_kg)) >= 1
