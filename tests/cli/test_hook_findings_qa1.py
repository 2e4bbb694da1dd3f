"""What a find-only QA pass (qa1) reproduced in the runtime hooks and installs, each through the real console entry
with the payload shapes of the runtimes' hook docs (shared/data/runtimes) and their real transcripts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

KG = str(Path(sys.executable).parent / "kg")
A_ID = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"  # a real Claude Code session (its transcript holds three failures)
B_ID = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") or k.startswith("KG_STORE")}
    return {**env, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0", **extra}


def _hook(root: Path, argv: list[str], payload: dict | str, **extra: str) -> subprocess.CompletedProcess:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([KG, "-w", str(root), "hook", *argv], input=text, capture_output=True, text=True,
                          cwd=root, env=_env(**extra), timeout=300)


def _session_of(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, run.stderr
    text = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    return text.split("- Session: ")[1].split()[0]


def _failures(transcript: Path) -> list[dict]:
    """The transcript's failed tool calls as Claude Code's PostToolUseFailure payloads."""
    uses: dict[str, dict] = {}
    out = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        content = (json.loads(line).get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                uses[block["id"]] = block
            elif block.get("type") == "tool_result" and block.get("is_error"):
                use = uses[block["tool_use_id"]]
                error = block["content"] if isinstance(block["content"], str) else json.dumps(block["content"])
                out.append({"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": "/tmp",
                            "permission_mode": "default", "hook_event_name": "PostToolUseFailure",
                            "tool_name": use["name"], "tool_input": use["input"], "tool_use_id": use["id"],
                            "error": error, "is_interrupt": False})
    return out


def _entries(root: Path) -> list[dict]:
    run = subprocess.run([KG, "-w", str(root), "list", "--json"], capture_output=True, text=True, env=_env(),
                         timeout=120)
    assert run.returncode == 0, run.stderr
    return [e for e in json.loads(run.stdout) if e["id"].startswith("ERR-")]


# -- 2. a tool failure goes to the session of the payload's session_id ------------------------------------------
def test_claude_code_failure_lands_in_the_session_of_its_own_window(ws, shared_data, tmp_path):
    """Two windows: A starts, then B; A's failures belong to A's session, not to B's (the last started), and A's
    end writes a summary that holds them (it said "Open Items (none)", its errors in B's session)."""
    transcripts = shared_data / "runtimes" / "claude_code" / "transcripts"
    a = Path(shutil.copy(transcripts / f"{A_ID}.jsonl", tmp_path / f"{A_ID}.jsonl"))
    start = {"cwd": str(ws.root), "hook_event_name": "SessionStart", "source": "startup", "transcript_path": None}
    first = _session_of(_hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                              {**start, "session_id": A_ID}))
    second = _session_of(_hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                               {**start, "session_id": B_ID}))
    assert first != second
    failures = _failures(a)
    assert len(failures) == 3
    for payload in failures:
        run = _hook(ws.root, ["post-tool-use", "--runtime", "claude-code"], payload)
        assert run.returncode == 0, run.stderr
    errors = _entries(ws.root)
    assert len(errors) == 3 and {e["session"] for e in errors} == {first}
    _ended_with(ws, a, first, errors)


def _ended_with(ws, transcript, session, errors) -> None:
    """Window A's SessionEnd: the summary of `session` lists its failures, none logged twice."""
    end = _hook(ws.root, ["session-end", "--runtime", "claude-code"],
                {"session_id": A_ID, "transcript_path": str(transcript), "cwd": str(ws.root),
                 "hook_event_name": "SessionEnd", "reason": "other"}, KG_HOOK_WAIT="1")
    assert end.returncode == 0, end.stderr
    summary = (ws.root / "memory" / "sessions" / f"{session}.md").read_text(encoding="utf-8")
    assert all(e["id"] in summary for e in errors), summary
    assert len(_entries(ws.root)) == len(errors)  # the reflection found them logged already


def test_kg_session_in_the_hook_environment_names_the_session(ws):
    """KG_SESSION (as `kg log` takes it) names the session of a failure whose runtime session kg never saw; one kg
    started a session for keeps its own (a KG_SESSION inherited from another window's shell does not take it)."""
    start = {"cwd": str(ws.root), "hook_event_name": "SessionStart", "source": "startup", "transcript_path": None}
    first = _session_of(_hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                              {**start, "session_id": "sess-A"}))
    second = _session_of(_hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                               {**start, "session_id": "sess-B"}))
    payload = {"session_id": "sess-unknown", "transcript_path": "/x", "cwd": str(ws.root),
               "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "pytest -q"},
               "tool_use_id": "toolu_A1", "error": "Exit code 1\nModuleNotFoundError: No module named foo"}
    run = _hook(ws.root, ["post-tool-use", "--runtime", "claude-code"], payload, KG_SESSION=first)
    assert run.returncode == 0, run.stderr
    assert [e["session"] for e in _entries(ws.root)] == [first]
    run = _hook(ws.root, ["post-tool-use", "--runtime", "claude-code"],
                {**payload, "session_id": "sess-B", "tool_use_id": "toolu_B1"}, KG_SESSION=first)
    assert run.returncode == 0, run.stderr
    assert sorted(e["session"] for e in _entries(ws.root)) == [first, second]


def test_failure_of_a_runtime_session_kg_never_saw_stays_out_of_another_windows_session(ws, shared_data, tmp_path):
    """Window A's hooks run, but kg never saw it start (hooks installed mid-session, or a start kg missed), while B
    started last: A's failures went into B's session (the current one, tied to B), and A's end, which ends nothing
    of B's, reflected into A's own session without them. They go where that end puts A's findings: the session
    named after A's session id, whose summary holds them."""
    transcripts = shared_data / "runtimes" / "claude_code" / "transcripts"
    a = Path(shutil.copy(transcripts / f"{A_ID}.jsonl", tmp_path / f"{A_ID}.jsonl"))
    start = {"cwd": str(ws.root), "hook_event_name": "SessionStart", "source": "startup", "transcript_path": None}
    other = _session_of(_hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                              {**start, "session_id": "aaaaaaaa-0000-4000-8000-000000000000"}))
    second = _session_of(_hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                               {**start, "session_id": B_ID}))
    for payload in _failures(a):
        run = _hook(ws.root, ["post-tool-use", "--runtime", "claude-code"], payload)
        assert run.returncode == 0, run.stderr
    errors = _entries(ws.root)
    assert len(errors) == 3 and {e["session"] for e in errors} == {A_ID}, (other, second, errors)
    _ended_with(ws, a, A_ID, errors)
    assert not (ws.root / "memory" / "sessions" / f"{second}.md").exists()  # B goes on


# -- 4. Codex's Stop on a workspace kg cannot write says so -------------------------------------------------------
@contextmanager
def _read_only(root: Path, where: Path) -> Iterator[Path]:
    """`root` bind-mounted read-only at `where` (root ignores chmod; the mount refuses root too)."""
    where.mkdir()
    made = subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(where)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"no read-only bind mount here: {made.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=True)  # a detached child may be in it


def test_codex_stop_on_a_read_only_workspace_fails_out_loud(ws, shared_data, tmp_path):
    """The Stop hook handed its reflection to a detached child and exited 0: the child failed unheard, and each
    turn's reflection was lost. Now the hook fails as it answers: an Error: line and exit 1, which Codex shows and
    ignores on Stop (codex/HOOKS.md section 2: only exit 2 or a block decision makes the turn go on), and
    nothing on stdout."""
    rollout = next((shared_data / "runtimes" / "codex" / "transcripts").glob("*13-28-45*.jsonl"))
    payload = {"session_id": "s1", "turn_id": "t", "transcript_path": str(rollout), "cwd": "/tmp",
               "hook_event_name": "Stop", "model": "m", "permission_mode": "default", "last_assistant_message": None,
               "stop_hook_active": False}
    with _read_only(ws.root, tmp_path / "ro") as ro:
        run = _hook(ro, ["session-end", "--no-summary", "--runtime", "codex"], payload)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("Error: ") and "Read-only file system" in run.stderr


# -- 5. a NUL in a payload's path is bad input --------------------------------------------------------------------
def test_a_nul_in_a_payload_path_is_bad_input(ws):
    """JSON may spell a NUL ("\\u0000"); no path holds one. It was met at the first open: "unexpected failure:
    ValueError: embedded null byte / Please report this", or "kg hook failed: ValueError" under --runtime."""
    nul = "/tmp/a\x00b.jsonl"
    cases = [(["session-end"], {"session_id": "x", "transcript_path": nul}, 2),
             (["session-end", "--runtime", "claude-code"],
              {"session_id": "x", "transcript_path": nul, "cwd": str(ws.root), "hook_event_name": "SessionEnd",
               "reason": "other"}, 1),
             (["session-start", "--start-session", "--runtime", "claude-code"],
              {"session_id": "x", "transcript_path": nul, "cwd": str(ws.root), "hook_event_name": "SessionStart",
               "source": "startup"}, 1),
             (["post-tool-use"], {"session_id": "x", "transcript_path": "/x", "cwd": "/tmp/a\x00b",
                                  "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                                  "tool_input": {"command": "ls"}, "tool_use_id": "t1", "error": "Exit code 1"}, 2)]
    for argv, payload, code in cases:
        run = _hook(ws.root, argv, payload, KG_HOOK_WAIT="1")
        assert run.returncode == code and run.stdout == "", (argv, run.stderr)
        assert run.stderr.startswith("Error: the hook payload on stdin holds a NUL character in "), run.stderr
        assert "ValueError" not in run.stderr


# -- 3 and 6. an install whose hooks will not run says so, and so does kg doctor ---------------------------------
def _kg(root: Path, *argv: str, path: str | None = None) -> subprocess.CompletedProcess:
    env = _env() if path is None else {**_env(), "PATH": path}
    return subprocess.run([KG, *argv], capture_output=True, text=True, cwd=root, env=env, timeout=300)


def _doctor_warnings(root: Path, path: str | None = None) -> list[str]:
    run = _kg(root, "doctor", "--json", path=path)
    assert run.returncode == 0, run.stderr
    return [c["detail"] for c in json.loads(run.stdout)["checks"]
            if c["name"] == "runtime installs" and c["status"] == "warning"]


def test_codex_install_with_hooks_turned_off_says_they_will_not_run(ws):
    """A person's `hooks = false` stays (theirs, outside kg's blocks, and it turns off every hook of theirs too), but
    the install no longer reports it updated features.hooks with no note, and kg doctor names it."""
    config = ws.root / ".codex" / "config.toml"
    config.parent.mkdir()
    for text, force in (("[features]\nhooks = false\n", ()), ("features.hooks = false\n", ("--force",)),
                        ("[features]\ncodex_hooks = false\n", ())):
        config.write_text(text, encoding="utf-8")
        run = _kg(ws.root, "install", "codex", "--json", *force)
        assert run.returncode == 0, run.stderr
        done = json.loads(run.stdout)
        assert any("Codex hooks are turned off" in n and "will not run" in n for n in done["notes"]), done["notes"]
        detail = next(c["detail"] for c in done["changes"] if c["path"] == ".codex/config.toml")
        assert "features.hooks" not in detail
        assert config.read_text(encoding="utf-8").startswith(text)
        assert any("turns Codex hooks off" in w for w in _doctor_warnings(ws.root)), text
    config.write_text("[features]\nhooks = true\n", encoding="utf-8")
    done = json.loads(_kg(ws.root, "install", "codex", "--json").stdout)
    assert not any("turned off" in n for n in done["notes"])
    assert not any("Codex hooks off" in w for w in _doctor_warnings(ws.root))


def test_shared_install_with_kg_off_path_says_its_hooks_will_not_be_found(ws):
    """`--shared` writes hooks calling bare `kg`; with no `kg` on PATH the install said "the session begins with
    kg's brief" and kg doctor said nothing."""
    off = "/usr/bin:/bin"
    run = _kg(ws.root, "install", "claude-code", "--shared", "--json", path=off)
    assert run.returncode == 0, run.stderr
    done = json.loads(run.stdout)
    assert any("`kg` is not on PATH" in n for n in done["notes"]), done["notes"]
    assert done["next"][0].startswith("Put kg on PATH")
    warnings = _doctor_warnings(ws.root, off)
    assert any("settings.json calls `kg`" in w and "hooks will not run" in w for w in warnings), warnings
    on = f"{Path(KG).parent}:{off}"
    run = _kg(ws.root, "install", "claude-code", "--shared", "--json", path=on)
    assert not any("not on PATH" in n for n in json.loads(run.stdout)["notes"])
    assert _doctor_warnings(ws.root, on) == []


# -- 8. a session end for a runtime session kg never saw does not deny the summary it wrote ----------------------
def test_end_of_a_session_kg_never_saw_does_not_deny_its_summary(ws, shared_data, tmp_path):
    """The reflection names the session by the transcript's own id and writes its summary; stderr said "no
    current kg session: no summary written" beside it."""
    a = Path(shutil.copy(shared_data / "runtimes" / "claude_code" / "transcripts" / f"{A_ID}.jsonl",
                         tmp_path / "copy.jsonl"))
    run = _hook(ws.root, ["session-end", "--runtime", "claude-code"],
                {"session_id": A_ID, "transcript_path": str(a), "cwd": str(ws.root), "hook_event_name": "SessionEnd",
                 "reason": "other"}, KG_HOOK_WAIT="1")
    assert run.returncode == 0 and run.stdout == "", run.stderr
    summary = ws.root / "memory" / "sessions" / f"{A_ID}.md"
    assert summary.exists() and len(_entries(ws.root)) == 3
    assert "no summary written" not in run.stderr, run.stderr


# -- 9. the brief of a session dated by its transcript does not say "started now" -----------------------------
def test_brief_of_a_replayed_session_says_when_it_is_dated(ws, shared_data):
    """A SessionStart whose new transcript already holds timed lines opens a session dated when it began; the brief
    said "Session: 2025-09-03-001 (started now)"."""
    transcript = shared_data / "runtimes" / "claude_code" / "transcripts" / f"{B_ID}.jsonl"
    start = {"cwd": str(ws.root), "hook_event_name": "SessionStart", "source": "startup"}
    run = _hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                {**start, "session_id": B_ID, "transcript_path": str(transcript)})
    assert run.returncode == 0, run.stderr
    text = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    line = next(x for x in text.splitlines() if x.startswith("- Session: "))
    assert line.startswith("- Session: 2025-09-03-001 (started, dated 2025-09-03 ") and "transcript began" in line
    run = _hook(ws.root, ["session-start", "--start-session", "--runtime", "claude-code"],
                {**start, "session_id": "sess-new", "transcript_path": None})
    text = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- Session: 2026-07-01-001 (started now)" in text
