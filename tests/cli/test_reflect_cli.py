"""`kg reflect` end to end on real and constructed transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOW = "--now 2026-11-30T18:00:00"
SECRET = "sk-ant-api03-" + "Q" * 60


def _claude_code(path: Path, session: str, error: str) -> Path:
    """A small Claude Code JSONL: the user asks, a Bash call fails, the user corrects the agent."""
    records = [
        {"type": "user", "uuid": "u1", "sessionId": session, "timestamp": "2026-11-30T10:00:00Z",
         "message": {"role": "user", "content": "Deploy the api service please"}},
        {"type": "assistant", "uuid": "a1", "sessionId": session, "timestamp": "2026-11-30T10:00:05Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": f"toolu-{session}", "name": "Bash",
              "input": {"command": f"ANTHROPIC_API_KEY={SECRET} ./deploy.sh"}}]}},
        {"type": "user", "uuid": "u2", "sessionId": session, "timestamp": "2026-11-30T10:00:09Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": f"toolu-{session}", "is_error": True,
              "content": f"Exit code 1\n{error}\nusing key {SECRET}"}]}},
        {"type": "user", "uuid": "u3", "sessionId": session, "timestamp": "2026-11-30T10:01:00Z",
         "message": {"role": "user", "content": "No, that's not right: always run the migrations before "
                                                "deploying."}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_dry_run_lists_findings_and_writes_nothing(run_kg, ws, tmp_path):
    t = _claude_code(tmp_path / "sess-a.jsonl", "sess-a", "Error: connection refused to db:5432")
    r = run_kg(f"reflect {t} --json {NOW}")
    assert r.exit_code == 0, r.stderr
    kinds = sorted((f["kind"], f["category"]) for f in r.json["findings"])
    # the rebuke is a correction, and the rule it states in general words ("always run ...") a preference too: one
    # entry with the same lesson, the rule, at the correction's priority (kg.reflect.detect._one_entry_per_rule)
    assert kinds == [("error", "error"), ("preference", "preference")]
    rule = next(f for f in r.json["findings"] if f["kind"] == "preference")
    # ("No, that's not right" once, calmly: one mild cue, so "medium"; rules' [correction] raise_when)
    assert rule["priority"] == "medium" and {"rejects", "imperative_rule"} <= set(rule["signals"])
    assert r.json["applied"] is False and r.json["session"] == "sess-a"
    assert run_kg("list --json").json == []


def test_apply_logs_once_and_redacts_every_byte(run_kg, ws, tmp_path):
    t = _claude_code(tmp_path / "sess-a.jsonl", "sess-a", "Error: connection refused to db:5432")
    first = run_kg(f"reflect {t} --apply --json {NOW}").json
    assert len(first["logged"]) == 2
    assert first["summary_file"] == "memory/sessions/sess-a.md"
    summary = (ws.root / first["summary_file"]).read_text(encoding="utf-8")
    assert summary.startswith("# Session Summary: sess-a") and "## Learnings" in summary
    again = run_kg(f"reflect {t} --apply --json {NOW}").json
    assert again["logged"] == [] and again["summary_file"] is None
    assert again["read_from"] > 1  # it read on from where the first left off (kg.reflect.window)
    rows = run_kg("list --json").json
    assert {r["session"] for r in rows if r["kind"] == "event"} == {"sess-a"}
    # nothing kg wrote anywhere in the workspace holds the key: graph, WAL, journal, logs, exports
    run_kg(f"export trail --learnings {NOW}")
    for file in ws.root.rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file


def test_the_same_failure_in_five_sessions_becomes_one_pattern(run_kg, ws, tmp_path):
    for n in range(5):
        t = _claude_code(tmp_path / f"sess-{n}.jsonl", f"sess-{n}",
                         f"psql: error: connection to server at \"10.0.0.{n}\", port 5432 failed: Connection refused")
        assert run_kg(f"reflect {t} --apply {NOW}").exit_code == 0
    status = run_kg(f"status --json {NOW}").json
    errors = [p for p in status["patterns"] if p["key"].startswith("err.")]
    assert len(errors) == 1 and errors[0]["recurrence"] == 5 and errors[0]["sessions"] == 5


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x01\x02binary", "looks binary"),
        (b'{"type": "user", "message": {"role": "user", "content": "hi"}}\n{"type": "user", "mess',
         None),  # a truncated last line is skipped and counted, not fatal
    ],
)
def test_bad_input(run_kg, tmp_path, content, message):
    f = tmp_path / "t.jsonl"
    f.write_bytes(content)
    r = run_kg(f"reflect {f}")
    if message:
        assert r.exit_code == 2 and message in r.stderr and "Traceback" not in r.stderr
    else:
        assert r.exit_code == 0 and r.stderr.startswith("Skipped: 1 ")


def test_unknown_format_is_a_usage_error(run_kg, tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("User: hi\n")
    r = run_kg(f"reflect {f} --format yaml")
    assert (r.exit_code, r.stderr) == (2, "Error: unknown transcript format 'yaml': use one of claude-code, "
                                          "codex, openclaw, aider, openai, specstory, text\n")


def test_real_claude_code_transcript(run_kg, shared_data):
    path = sorted((shared_data / "transcripts" / "claude_code").glob("*.jsonl*"))[0]
    r = run_kg(f"reflect {path} --json {NOW}")
    assert r.exit_code == 0
    assert r.json["format"] == "claude-code" and r.json["findings"]
    assert all(f["position"].startswith("line ") for f in r.json["findings"])


def test_an_aider_history_logs_each_chat_under_its_own_session(run_kg, ws, shared_data):
    """aider appends every chat to one .aider.chat.history.md, each opened by "# aider chat started at <time>": the
    findings of a chat are logged under that chat's session (before, all under the last chat's), and each session
    that logged something gets its own summary, dated by its own turns."""
    path = shared_data / "runtimes" / "aider" / "aquaticat_monochromatic" / ".aider.chat.history.md"
    r = run_kg(f"reflect {path} --apply --json --now 2026-12-02T10:00:00")
    assert r.exit_code == 0, r.stderr
    chats = ["2025-06-02-13-32-13", "2025-06-02-14-15-20", "2025-06-02-14-29-21"]
    assert r.json["sessions"] == chats
    assert r.json["session"] == chats[-1]
    assert {f["session"] for f in r.json["findings"]} == set(chats)
    by_session = {}
    for entry in r.json["logged"]:
        node = run_kg(f"show {entry} --json").json["node"]
        by_session.setdefault(node["session"], []).append(node["created_at"][:16])
    assert set(by_session) == set(chats)
    for sid, created in by_session.items():  # each entry dated within its own chat, never before it started
        assert min(created) >= sid[:10] + "T" + sid[11:13] + ":" + sid[14:16], (sid, created)
    assert len(r.json["summary_files"]) == 3
    assert r.json["summary_file"] == r.json["summary_files"][-1]
    assert "3 sessions, 2025-06-02-13-32-13 … 2025-06-02-14-29-21" in run_kg(f"reflect {path}").stdout
    rerun = run_kg(f"reflect {path} --apply --json --now 2026-12-02T10:00:00")  # once each: nothing new, no summary
    assert rerun.json["logged"] == [] and rerun.json["summary_files"] == []
    assert rerun.json["read_from"] > 1  # from where the first left off, not the whole history again
    # a session named by the caller still holds every turn
    again = run_kg(f"reflect {path} --json --session mine")
    assert again.json["sessions"] == ["mine"]


def test_an_aider_chat_has_one_id_in_the_graph_and_in_its_file_name(run_kg, ws, shared_data):
    """aider names a chat by when it started ("2025-06-02 14:29:21"); its session id held the colons while its summary
    file could not (memory/sessions/2025-06-02-14-29-21.md), so the id the user read in the file name answered "no
    session". One form, colons as dashes, everywhere."""
    path = shared_data / "runtimes" / "aider" / "aquaticat_monochromatic" / ".aider.chat.history.md"
    r = run_kg(f"reflect {path} --apply --json --now 2026-12-02T10:00:00")
    assert r.exit_code == 0, r.stderr
    assert [Path(f).stem for f in r.json["summary_files"]] == r.json["sessions"]
    ended = run_kg("session end --session 2025-06-02-14-29-21 --now 2026-12-02T11:00:00")
    assert ended.exit_code == 2 and "session 2025-06-02-14-29-21 ended already" in ended.stderr, ended.stderr
    rows = run_kg("list --json").json
    assert {e["session"] for e in rows if e["kind"] == "event"} == set(r.json["sessions"])


@pytest.mark.parametrize("name", ["runtimes/LICENSES.md", "README.md", "labels/README.md",
                                  "transcripts/specstory/2025-05-21_improve-mcp-error-handling.md"])
def test_a_notes_document_is_refused_not_read_as_what_a_user_said(run_kg, ws, shared_data, name):
    """Plain text without 'User:' / 'Assistant:' is read a paragraph a user turn; a notes file given to `kg reflect`
    (the shared data's LICENSES.md, a README, a chat's written summary) made "corrections" and "preferences" of its
    paragraphs ("## Writes are never lost" became a preference). A markdown document is refused, saying why."""
    path = shared_data / name
    r = run_kg(f"reflect {path} --apply --json {NOW}")
    assert (r.exit_code, r.stdout) == (2, ""), r.stdout
    assert r.stderr.startswith(f"Error: {path} reads as a notes document (markdown headings or tables, and no "
                               "'User:' / 'Assistant:' turns), not a conversation: kg reflect reads "), r.stderr
    assert "start each turn with 'User:' or 'Assistant:'" in r.stderr and "Traceback" not in r.stderr
    assert run_kg("list --json").json == []


@pytest.mark.parametrize(("text", "turns"), [
    ("just a note\n\nsecond paragraph", 2),
    ("the build fails again\n# this line is a shell comment I pasted\nnpm test", 1),  # one '#' line, not first
    ("User: # Title\nAssistant: ok", 2),  # marked turns are a conversation whatever they hold
])
def test_plain_text_that_is_no_document_is_still_read(run_kg, tmp_path, text, turns):
    f = tmp_path / "said.txt"
    f.write_text(text, encoding="utf-8")
    r = run_kg(f"reflect {f} --json {NOW}")
    assert r.exit_code == 0 and r.json["format"] == "text" and r.json["turns"] == turns, r.stderr


def test_a_zstd_rollout_says_how_to_decompress_it(run_kg, tmp_path):
    """Codex keeps cold rollouts as `.jsonl.zst`; kg said it "looks binary (it has NUL bytes)"."""
    f = tmp_path / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl.zst"
    f.write_bytes(b'(\xb5/\xfd\x04Xi\x01\x00{"type":"session_meta","payload":{"id":"x"}}\n\x08\x125\xfb')  # `zstd -c`
    for args in ([], ["--apply"]):
        r = run_kg(["reflect", str(f), *args])
        assert r.exit_code == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr == f"Error: {f} is zstd-compressed: decompress it first with `zstd -d {f}` (it writes the " \
                           "file without `.zst` beside it) and reflect on that\n", r.stderr
