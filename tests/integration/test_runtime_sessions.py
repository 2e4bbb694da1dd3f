"""Whole sessions of each runtime through the hooks `kg install` writes, with the runtime's real transcripts
(../shared/data/runtimes) and payloads shaped by its documented hook schema: start, failures, end, resume,
end. Afterwards the graph holds exactly one event per real failure, with the real error text and the pattern
key reflection gives it, and nothing whose only content is an exit code is promoted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kg.core.policy import packaged
from kg.reflect.failures import failures, load_rules
from kg.reflect.parse import read_transcript
from kg.store.lock import FileLock

KG = str(Path(sys.executable).parent / "kg")
RULES = load_rules(packaged("errors"))


def kg(root: Path, *args: str, now: str = "2026-07-03T12:00") -> subprocess.CompletedProcess:
    env = {**os.environ, "KG_NOW": now}
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, env=env, timeout=300,
                          check=False)


def run_hook(command: str, payload: dict | None, cwd: Path, now: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KG_NOW": now, "KG_HOOK_WAIT": "1"}
    env.pop("KG_WORKSPACE", None)
    return subprocess.run(command, shell=True, input=json.dumps(payload) if payload is not None else "",
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300, check=False)


def hooks_of(settings: Path, event: str) -> list[str]:
    data = json.loads(settings.read_text(encoding="utf-8"))
    return [h["command"] for g in data["hooks"].get(event, []) for h in g["hooks"] if "--runtime" in h["command"]]


def prefix(src: Path, lines: int, dest: Path) -> Path:
    """The transcript as it stood after `lines` lines (runtimes append as the session goes)."""
    with src.open("rb") as fh:
        dest.write_bytes(b"".join(fh.readline() for _ in range(lines)))
    return dest


def error_events(root: Path) -> list[dict]:
    listed = kg(root, "list", "--type", "event", "--limit", "1000", "--json")
    assert listed.returncode == 0, listed.stderr
    return [e for e in json.loads(listed.stdout) if e["entry_type"] == "error"]


def check_graph(root: Path, transcripts: list[Path]) -> list[dict]:
    """One event per real failure of the transcripts, each with its real error line and its pattern key."""
    expected = [f for t in transcripts for f in failures(read_transcript(t), RULES).found]
    events = error_events(root)
    assert len(events) == len(expected), ([e["text"] for e in events], [f.line for f in expected])
    assert sorted(e["pattern_key"] for e in events) == sorted(f.pattern_key for f in expected)
    for f in expected:
        want = f.summary(RULES.summary_chars)
        assert any(e["text"] == want for e in events), want
        assert not want.split(" failed: ", 1)[1].lower().startswith("exit code") or f.exit_only
    return events


def check_nothing_promoted_from_exit_codes(root: Path, now: str) -> dict:
    cycle = kg(root, "cycle", "--json", now=now)
    assert cycle.returncode == 0, cycle.stderr
    report = json.loads(cycle.stdout)
    for item in [*report["promoted"], *report["proposed"]]:
        text = json.dumps(item).lower()
        assert "exit code" not in text and "no output" not in text, item
    return report


# -- Claude Code -----------------------------------------------------------------------------------------------
def claude_failures(path: Path) -> list[dict]:
    """PostToolUseFailure payloads for the failed calls of a real transcript, as the hook schema documents them
    (Bash's error is "Exit code N" then the output)."""
    uses, out = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        content = (rec.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                uses[block["id"]] = block
            elif block.get("type") == "tool_result" and block.get("is_error"):
                use = uses[block["tool_use_id"]]
                text = block["content"] if isinstance(block["content"], str) else "\n".join(
                    b.get("text", "") for b in block["content"])
                error = f"Exit code 1\n{text}" if use["name"] == "Bash" else text
                out.append({"session_id": rec["sessionId"], "cwd": rec.get("cwd", "/"), "permission_mode": "default",
                            "hook_event_name": "PostToolUseFailure", "tool_name": use["name"],
                            "tool_input": use["input"], "tool_use_id": use["id"], "error": error,
                            "is_interrupt": False})
    return out


@pytest.mark.slow
def test_claude_code_whole_session(ws, shared_data, tmp_path):
    real = shared_data / "runtimes" / "claude_code" / "transcripts" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    assert kg(ws.root, "install", "claude-code").returncode == 0
    settings = ws.root / ".claude" / "settings.local.json"
    transcript = tmp_path / real.name
    base = {"session_id": real.stem, "transcript_path": str(transcript), "cwd": str(ws.root),
            "permission_mode": "default"}
    fails = claude_failures(real)
    assert len(fails) == 3

    # first stretch: start, two failures live, the end reflects on the transcript so far
    start = run_hook(hooks_of(settings, "SessionStart")[0], {**base, "hook_event_name": "SessionStart",
                                                              "source": "startup"}, ws.root, "2026-07-01T09:00")
    assert start.returncode == 0 and json.loads(start.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    for payload in fails[:2]:
        done = run_hook(hooks_of(settings, "PostToolUseFailure")[0], payload, ws.root, "2026-07-01T09:05")
        assert (done.returncode, done.stdout) == (0, ""), done.stderr
    prefix(real, 40, transcript)
    end = run_hook(hooks_of(settings, "SessionEnd")[0], {**base, "hook_event_name": "SessionEnd", "reason": "other"},
                   ws.root, "2026-07-01T09:30")
    assert end.returncode == 0, end.stderr
    assert len(error_events(ws.root)) == 2

    # resume: the same file grows; the third failure live, then the end again, then a stray re-run
    run_hook(hooks_of(settings, "SessionStart")[0], {**base, "hook_event_name": "SessionStart", "source": "resume"},
             ws.root, "2026-07-02T09:00")
    done = run_hook(hooks_of(settings, "PostToolUseFailure")[0], fails[2], ws.root, "2026-07-02T09:05")
    assert done.returncode == 0, done.stderr
    shutil.copyfile(real, transcript)
    for now in ("2026-07-02T09:30", "2026-07-02T09:31"):
        end = run_hook(hooks_of(settings, "SessionEnd")[0], {**base, "hook_event_name": "SessionEnd",
                                                              "reason": "other"}, ws.root, now)
        assert end.returncode == 0, end.stderr
    again = kg(ws.root, "reflect", str(transcript), "--apply", "--json")
    assert json.loads(again.stdout)["logged"] == []
    events = check_graph(ws.root, [real])
    texts = " | ".join(e["text"] for e in events)
    assert "File has not been read yet" in texts and "lsd: 3: No such file" in texts
    assert "Task failed: The required parameter `prompt` is missing" in texts  # the cause, not its header
    check_nothing_promoted_from_exit_codes(ws.root, "2026-07-03T12:00")
    # a failure the user interrupted, or a cancelled sibling, is not one
    for extra in ({"is_interrupt": True}, {"error": "<tool_use_error>Sibling tool call errored</tool_use_error>",
                                           "tool_use_id": "toolu_sibling"}):
        done = run_hook(hooks_of(settings, "PostToolUseFailure")[0], {**fails[0], "tool_use_id": "toolu_new", **extra},
                        ws.root, "2026-07-02T10:00")
        assert done.returncode == 0
    assert len(error_events(ws.root)) == 3


# -- Codex --------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_codex_whole_session(ws, shared_data, tmp_path):
    real = (shared_data / "runtimes" / "codex" / "transcripts"
            / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    assert kg(ws.root, "install", "codex").returncode == 0
    hooks = ws.root / ".codex" / "hooks.json"
    rollout = tmp_path / real.name
    base = {"session_id": "019e1625-789d-76c0-80ab-3724b5ddb799", "transcript_path": str(rollout),
            "cwd": str(ws.root), "model": "gpt-5", "permission_mode": "default"}
    stop = {**base, "hook_event_name": "Stop", "turn_id": "t1", "last_assistant_message": None,
            "stop_hook_active": False}
    start = run_hook(hooks_of(hooks, "SessionStart")[0], {**base, "hook_event_name": "SessionStart",
                                                           "source": "startup"}, ws.root, "2026-07-01T09:00")
    assert start.returncode == 0 and "hookSpecificOutput" in json.loads(start.stdout)

    prefix(real, 180, rollout)  # two of the four failed calls so far; one is an `rg` that found nothing
    for now in ("2026-07-01T09:10", "2026-07-01T09:11"):  # a Stop per turn; the second adds nothing
        done = run_hook(hooks_of(hooks, "Stop")[0], stop, ws.root, now)
        assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert len(error_events(ws.root)) == 1
    blocked = run_hook(hooks_of(hooks, "Stop")[0], {**stop, "stop_hook_active": True}, ws.root, "2026-07-01T09:12")
    assert (blocked.returncode, blocked.stdout) == (0, "")
    end = run_hook(hooks_of(hooks, "SessionEnd")[0], {**{k: base[k] for k in ("session_id", "transcript_path", "cwd")},
                                                      "hook_event_name": "SessionEnd", "reason": "other"},
                   ws.root, "2026-07-01T09:30")
    assert end.returncode == 0, end.stderr

    # resume: Codex appends to the same rollout
    run_hook(hooks_of(hooks, "SessionStart")[0], {**base, "hook_event_name": "SessionStart", "source": "resume"},
             ws.root, "2026-07-02T09:00")
    shutil.copyfile(real, rollout)
    done = run_hook(hooks_of(hooks, "Stop")[0], stop, ws.root, "2026-07-02T09:10")
    assert done.returncode == 0, done.stderr
    run_hook(hooks_of(hooks, "SessionEnd")[0], {**{k: base[k] for k in ("session_id", "transcript_path", "cwd")},
                                                "hook_event_name": "SessionEnd", "reason": "other"},
             ws.root, "2026-07-02T09:30")
    events = check_graph(ws.root, [real])
    keys = [e["pattern_key"] for e in events]
    # the two `rg` calls that exited 1 with nothing to say found nothing: an answer, not a failure
    assert not any(k.startswith("err.exec_command.nonzero_exit.") for k in keys) and len(set(keys)) == 2
    assert any("test_failure" in k and e["area"] == "tests" for e in events for k in [e["pattern_key"]])
    check_nothing_promoted_from_exit_codes(ws.root, "2026-07-03T12:00")


@pytest.mark.parametrize("payload", [
    "not json", "", "{}", json.dumps({"hook_event_name": "Stop", "stop_hook_active": False,
                                      "transcript_path": "/nowhere/rollout.jsonl"}),
    json.dumps({"hook_event_name": "Stop", "stop_hook_active": False, "transcript_path": "BINARY"}),
    json.dumps({"hook_event_name": "Stop", "stop_hook_active": False, "transcript_path": "JSON"}),
])
def test_codex_stop_never_exits_2(ws, tmp_path, payload):
    """Whatever the payload or transcript, Codex's Stop hook never exits 2 (2 would make the agent go on) and
    prints nothing Codex would read as a Stop decision: 0, or 1 for a payload that is not JSON (the hooks' one
    rule for bad input: Codex reads 1 as a failed hook and ignores it)."""
    assert kg(ws.root, "install", "codex").returncode == 0
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "j.json").write_text('{"some": "config"}', encoding="utf-8")
    payload = payload.replace("BINARY", str(tmp_path / "b.bin")).replace("JSON", str(tmp_path / "j.json"))
    command = hooks_of(ws.root / ".codex" / "hooks.json", "Stop")[0]
    env = {**os.environ}
    done = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=ws.root, env=env,
                          timeout=120, check=False)
    assert (done.returncode, done.stdout) == (1 if payload == "not json" else 0, ""), done.stderr


# -- OpenClaw -----------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node runs OpenClaw's handler.js")
def test_openclaw_whole_sessions(ws, shared_data, tmp_path):
    folder = shared_data / "runtimes" / "openclaw" / "transcripts"
    real = [folder / "b3db607f-7ae8-4089-b806-44800e961672.jsonl",
            folder / "f967d602-325a-4a45-8d54-ee17484cfd96.jsonl", folder / "pi-coding-agent" / "large-session.jsonl"]
    assert kg(ws.root, "install", "openclaw").returncode == 0
    handler = ws.root / "hooks" / "kaizen-kg" / "handler.js"
    runner = tmp_path / "run.mjs"
    runner.write_text('const [, , file, ev] = process.argv;\nconst mod = await import("file://" + file);\n'
                      "const event = JSON.parse(ev);\nawait mod.default(event);\n"
                      "process.stdout.write(JSON.stringify(event));\n", encoding="utf-8")

    def fire(event: dict, now: str) -> dict:
        env = {**os.environ, "KG_NOW": now, "KG_HOOK_WAIT": "1"}
        done = subprocess.run(["node", str(runner), str(handler), json.dumps(event)], capture_output=True, text=True,
                              env=env, timeout=300, check=False)
        assert done.returncode == 0 and "kaizen-kg" not in done.stderr, done.stderr
        return json.loads(done.stdout)

    def boot(key: str, now: str) -> None:
        out = fire({"type": "agent", "action": "bootstrap", "sessionKey": key, "messages": [],
                    "context": {"workspaceDir": str(ws.root), "bootstrapFiles": []}}, now)
        assert out["context"]["bootstrapFiles"][0]["content"].startswith("# kaizen-kg brief")

    for day, path in enumerate(real, 1):
        copy = tmp_path / path.name
        lines = len(path.read_bytes().splitlines())
        boot(path.stem, f"2026-07-0{day}T09:00")
        prefix(path, lines // 2, copy)
        fire({"type": "command", "action": "stop", "sessionKey": path.stem, "messages": [],
              "context": {"sessionEntry": {"sessionFile": str(copy)}, "sessionId": path.stem}}, f"2026-07-0{day}T09:30")
        boot(path.stem, f"2026-07-0{day}T10:00")  # the gateway restarts; the session goes on in the same file
        shutil.copyfile(path, copy)
        for action in ("new", "reset"):  # /new, then a stray /reset: the second adds nothing
            fire({"type": "command", "action": action, "sessionKey": path.stem, "messages": [],
                  "context": {"previousSessionEntry": {"sessionFile": str(copy)}}}, f"2026-07-0{day}T11:00")
    events = check_graph(ws.root, real)
    enoent = [e for e in events if "ENOENT" in e["text"]]
    assert len(enoent) == 4 and len({e["pattern_key"] for e in enoent}) == 1
    # reflection dates each failure by its turn (Feb 26-27, 2026), not by when the hook reflected (July)
    report = check_nothing_promoted_from_exit_codes(ws.root, "2026-02-28T12:00")
    promoted = [*report["promoted"], *report["proposed"]]
    # the recurring ENOENT is ready, but as a rule it would only say that a read failed: it waits for a fix
    assert not any("ENOENT" in json.dumps(p) for p in promoted), promoted
    waiting = [w for w in report["waiting"] if w["pattern_key"] == enoent[0]["pattern_key"]]
    assert waiting and "not what to do" in waiting[0]["reason"], report["waiting"]


def test_a_session_end_whose_transcript_cannot_be_read_still_writes_the_summary(ws, tmp_path):
    assert kg(ws.root, "install", "claude-code").returncode == 0
    settings = ws.root / ".claude" / "settings.local.json"
    start = run_hook(hooks_of(settings, "SessionStart")[0], {"hook_event_name": "SessionStart", "source": "startup"},
                     ws.root, "2026-07-01T09:00")
    session = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"].split("- Session: ")[1].split()[0]
    (tmp_path / "x.json").write_text('{"not": "a transcript"}', encoding="utf-8")
    end = run_hook(hooks_of(settings, "SessionEnd")[0], {"hook_event_name": "SessionEnd", "reason": "other",
                                                          "transcript_path": str(tmp_path / "x.json")},
                   ws.root, "2026-07-01T10:00")
    assert end.returncode == 0 and "could not reflect on" in end.stderr and "kg reads" in end.stderr
    assert (ws.root / "memory" / "sessions" / f"{session}.md").exists()


def test_a_session_end_whose_reflection_wrote_the_summary_says_nothing_false(ws, shared_data, tmp_path):
    """Reflection that logs something writes the session summary and ends the session itself; the hook then
    must not tell the user there was no kg session and no summary."""
    real = shared_data / "runtimes" / "claude_code" / "transcripts" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    assert kg(ws.root, "install", "claude-code").returncode == 0
    settings = ws.root / ".claude" / "settings.local.json"
    base = {"session_id": real.stem, "transcript_path": str(real), "cwd": str(ws.root), "permission_mode": "default"}
    start = run_hook(hooks_of(settings, "SessionStart")[0], {**base, "hook_event_name": "SessionStart",
                                                              "source": "startup"}, ws.root, "2026-07-01T09:00")
    session = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"].split("- Session: ")[1].split()[0]
    end = run_hook(hooks_of(settings, "SessionEnd")[0], {**base, "hook_event_name": "SessionEnd", "reason": "other"},
                   ws.root, "2026-07-01T10:00")
    assert (end.returncode, end.stdout, end.stderr) == (0, "", "")
    assert len(error_events(ws.root)) == 3
    summary = (ws.root / "memory" / "sessions" / f"{session}.md").read_text(encoding="utf-8")
    assert "Reflected on" in summary
    again = kg(ws.root, "hook", "session-end", "--transcript", str(real), "--session", session, "--json",
               now="2026-07-01T10:05")
    assert json.loads(again.stdout)["notes"] == [f"session {session} ended already"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs OpenClaw's handler.js")
def test_openclaw_session_end_finds_the_transcript_by_session_id_and_refreshes_the_brief(ws, shared_data, tmp_path):
    """OpenClaw's session entry carries `sessionFile` only when it overrides the default path; /new and /reset
    usually give just the sessionId (a /reset may already have archived the file). The handler finds the
    transcript where OpenClaw keeps it, and the next session's saved brief holds what that session end logged."""
    real = shared_data / "runtimes" / "openclaw" / "transcripts" / "f967d602-325a-4a45-8d54-ee17484cfd96.jsonl"
    home = tmp_path / "home"
    sessions = home / ".openclaw" / "agents" / "ops" / "sessions"
    sessions.mkdir(parents=True)
    assert kg(ws.root, "install", "openclaw").returncode == 0
    handler = ws.root / "hooks" / "kaizen-kg" / "handler.js"
    runner = tmp_path / "run.mjs"
    runner.write_text('const [, , file, ev] = process.argv;\nconst mod = await import("file://" + file);\n'
                      "await mod.default(JSON.parse(ev));\n", encoding="utf-8")

    def fire(event: dict, now: str) -> None:
        env = {**os.environ, "KG_NOW": now, "KG_HOOK_WAIT": "1", "HOME": str(home)}
        done = subprocess.run(["node", str(runner), str(handler), json.dumps(event)], capture_output=True, text=True,
                              env=env, timeout=300, check=False)
        assert done.returncode == 0 and "kaizen-kg" not in done.stderr, done.stderr

    key = "agent:ops:telegram:direct:42"
    boot = {"type": "agent", "action": "bootstrap", "sessionKey": key, "messages": [],
            "context": {"workspaceDir": str(ws.root), "bootstrapFiles": []}}
    fire(boot, "2026-07-01T09:00")
    shutil.copyfile(real, sessions / real.name)
    fire({"type": "command", "action": "new", "sessionKey": key, "messages": [],
          "context": {"previousSessionEntry": {"sessionId": real.stem}, "sessionEntry": {"sessionId": "next"}}},
         "2026-07-01T10:00")
    events = check_graph(ws.root, [real])
    brief = (ws.root / "memory" / ".hook-context.txt").read_text(encoding="utf-8")
    assert "Pending High-Priority" in brief and all(e["id"] in brief for e in events), brief

    # the same session again under a /reset that archived its file first: found, and nothing is logged twice
    (sessions / real.name).rename(sessions / f"{real.name}.reset.2026-07-01T11-00-00.000Z")
    fire({"type": "command", "action": "reset", "sessionKey": key, "messages": [],
          "context": {"previousSessionEntry": {"sessionId": real.stem}}}, "2026-07-01T11:00")
    assert len(error_events(ws.root)) == len(events)


@pytest.mark.embedded_only("holds the Kùzu file lock (a team graph's writers take a lease on the server)")
def test_claude_code_session_end_answers_before_it_reflects(ws, shared_data, tmp_path):
    """Claude Code cancels SessionEnd hooks still running when it exits (their budget is 1.5 s unless a timeout
    raises it), and reflecting on a real transcript takes seconds on a loaded machine. The hook answers at once
    and a detached child does the work: here the graph is held, so the work cannot even start, and the hook has
    answered all the same; once the graph is free, the session's failures and summary arrive."""
    real = shared_data / "runtimes" / "claude_code" / "transcripts" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    assert kg(ws.root, "install", "claude-code").returncode == 0
    settings = ws.root / ".claude" / "settings.local.json"
    base = {"session_id": real.stem, "transcript_path": str(real), "cwd": str(ws.root), "permission_mode": "default"}
    start = run_hook(hooks_of(settings, "SessionStart")[0], {**base, "hook_event_name": "SessionStart",
                                                              "source": "startup"}, ws.root, "2026-07-01T09:00")
    session = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"].split("- Session: ")[1].split()[0]
    env = {**os.environ, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0"}
    env.pop("KG_WORKSPACE", None)
    holder = FileLock(ws.kg_dir / "graph.lock", timeout=30)
    holder.acquire()
    try:
        end = subprocess.run(hooks_of(settings, "SessionEnd")[0], shell=True, capture_output=True, text=True,
                             cwd=ws.root, env=env, timeout=60, check=False,
                             input=json.dumps({**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}))
        assert (end.returncode, end.stdout, end.stderr) == (0, "", "")
        assert not (ws.root / "memory" / "sessions" / f"{session}.md").exists()
    finally:
        holder.release()
    summary = ws.root / "memory" / "sessions" / f"{session}.md"
    deadline = time.monotonic() + 300
    while not summary.exists():  # the detached child, unblocked
        assert time.monotonic() < deadline, "the detached reflection never finished"
        time.sleep(0.05)
    assert len(error_events(ws.root)) == 3


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs OpenClaw's handler.js")
def test_openclaw_stop_aborts_a_run_and_leaves_the_session_open(ws, shared_data, tmp_path):
    """OpenClaw's /stop aborts the agent's current run; the conversation goes on in the same session. kg reflects
    on what is there but does not end its session (each /stop would otherwise split one conversation into
    several kg sessions, and a pattern would seem to recur across sessions sooner than it does)."""
    real = shared_data / "runtimes" / "openclaw" / "transcripts" / "f967d602-325a-4a45-8d54-ee17484cfd96.jsonl"
    assert kg(ws.root, "install", "openclaw").returncode == 0
    handler = ws.root / "hooks" / "kaizen-kg" / "handler.js"
    runner = tmp_path / "run.mjs"
    runner.write_text('const [, , file, ev] = process.argv;\nconst mod = await import("file://" + file);\n'
                      "await mod.default(JSON.parse(ev));\n", encoding="utf-8")

    def fire(event: dict, now: str) -> None:
        env = {**os.environ, "KG_NOW": now, "KG_HOOK_WAIT": "1"}
        done = subprocess.run(["node", str(runner), str(handler), json.dumps(event)], capture_output=True, text=True,
                              env=env, timeout=300, check=False)
        assert done.returncode == 0 and "kaizen-kg" not in done.stderr, done.stderr

    fire({"type": "agent", "action": "bootstrap", "sessionKey": "agent:main:main", "messages": [],
          "context": {"workspaceDir": str(ws.root), "bootstrapFiles": []}}, "2026-07-01T09:00")
    session = ws.current_session()
    opening = prefix(real, 5, tmp_path / real.name)  # the session so far: its start, nothing to log yet
    fire({"type": "command", "action": "stop", "sessionKey": "agent:main:main", "messages": [],
          "context": {"sessionEntry": {"sessionId": real.stem, "sessionFile": str(opening)}, "sessionId": real.stem}},
         "2026-07-01T09:10")
    assert ws.current_session() == session
    assert not (ws.root / "memory" / "sessions" / f"{session}.md").exists()


@pytest.mark.embedded_only("holds the Kùzu file lock (a team graph's writers take a lease on the server)")
def test_codex_stop_answers_before_it_reflects(ws, shared_data, tmp_path):
    """Codex ends a turn only once its Stop hooks have answered, and reflecting on the rollout takes seconds: the
    hook answers at once (nothing on stdout, exit 0) while a detached child reflects; with the graph held the
    work cannot even start, and the turn is not held up; once the graph is free, the failures arrive."""
    real = (shared_data / "runtimes" / "codex" / "transcripts"
            / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    assert kg(ws.root, "install", "codex").returncode == 0
    stop = {"session_id": "019e1625", "transcript_path": str(real), "cwd": str(ws.root), "model": "gpt-5",
            "permission_mode": "default", "hook_event_name": "Stop", "turn_id": "t1", "last_assistant_message": None,
            "stop_hook_active": False}
    env = {**os.environ, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0"}
    env.pop("KG_WORKSPACE", None)
    holder = FileLock(ws.kg_dir / "graph.lock", timeout=30)
    holder.acquire()
    try:
        done = subprocess.run(hooks_of(ws.root / ".codex" / "hooks.json", "Stop")[0], shell=True, capture_output=True,
                              text=True, cwd=ws.root, env=env, timeout=60, check=False, input=json.dumps(stop))
        assert (done.returncode, done.stdout) == (0, ""), done.stderr
    finally:
        holder.release()
    deadline = time.monotonic() + 300
    expected = len(failures(read_transcript(real), RULES).found)  # two: the other two are searches that found nothing
    while len(error_events(ws.root)) < expected:  # the detached child, unblocked
        assert time.monotonic() < deadline, "the detached reflection never finished"
        time.sleep(0.05)
    check_graph(ws.root, [real])
