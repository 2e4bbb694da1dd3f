"""Session ids: every form an older kg stored is kept, and a secret never reaches storage. An id given to kg
(`--session`, KG_SESSION, `kg ingest`, `kg import trail`) or a transcript's own id is its digest only when the
redaction rules find a secret in it (`kg log --session ghp_...` filed the entry under `[REDACTED:github_token]`, a
session `kg session end --session <the same id>` could not end; `kg import trail` stored it so still), else as it
is: `sprint42refactorWeek3x` or a ULID stayed raw in the older kg, and digesting them split a session in two after
an upgrade, and logged a failed call again. A runtime's id in sessions.json keeps the older kg's rule (a run of 20
of `[A-Za-z0-9_+/=]` mixed: `agent_main_telegram_direct_12345` was saved as its digest) or the rules' (a provider's
key of letters alone, `AKIA...`, went raw into the file). The real CLI on a real workspace."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.conftest import fresh_workspace, kg_runner

NOW = "2026-07-01T10:00:00"
GITHUB = "ghp_" + "u8JzPdE0" * 4 + "abcd"  # the redaction rules: github_token
AWS_LETTERS = "AKIA" + "QWERTYUIOPASDFGH"  # aws_access_key, letters alone: no digit
ULID = "01HZX3K8M9N2P4Q5R6S7T8V9W0"


def _old_digest(rid: str) -> str:  # the older kg's key of a runtime's token-like session id in sessions.json
    return "sha256-" + hashlib.sha256(rid.encode()).hexdigest()[:32]


def _files_hold(ws, secret: str) -> list[str]:
    return [str(p) for p in ws.root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.parametrize("secret", [GITHUB, AWS_LETTERS])
def test_a_secret_session_id_is_one_session_that_its_id_ends(ws, run_kg, secret):
    r = run_kg(["log", "error", "deploy failed", "--session", secret, "--now", NOW, "--json"])
    assert r.exit_code == 0, r.stderr
    entry = json.loads(run_kg(["show", r.json["id"], "--json"]).stdout)
    sid = entry["node"]["session"]
    assert sid.startswith("sha256-") and "REDACTED" not in sid
    # the same id, given again by another command, names the same session
    line = json.dumps({"kind": "error", "summary": "deploy failed again", "session": secret})
    assert run_kg(["ingest", "-", "--now", NOW, "--json"], input=line + "\n").exit_code == 0
    hits = run_kg(["search", "deploy", "--session", secret, "--now", NOW, "--json"])
    assert hits.exit_code == 0 and len({h["ref"] for h in hits.json if h["source"] == "graph"}) == 2, hits.stdout
    end = run_kg(["session", "end", "--session", secret, "--summary", "done", "--now", NOW, "--json"])
    assert end.exit_code == 0, end.stderr
    assert end.json["id"] == sid and end.json["events"] == 2
    assert (ws.root / "memory" / "sessions" / f"{sid}.md").is_file()
    assert _files_hold(ws, secret) == []


def test_a_runtime_session_id_of_letters_alone_the_rules_call_a_key_is_kept_as_its_digest(ws, run_kg):
    payload = {"session_id": AWS_LETTERS, "hook_event_name": "SessionStart", "source": "startup",
               "cwd": str(ws.root)}
    start = run_kg(["hook", "session-start", "--start-session", "--runtime", "codex", "--now", NOW, "--json"],
                   input=json.dumps(payload))
    assert start.exit_code == 0, start.stderr
    sid = start.json["session"]
    kept = json.loads((ws.root / "memory" / ".kg" / "sessions.json").read_text())["runtime"]
    assert AWS_LETTERS not in json.dumps(kept) and kept == {f"codex:{next(iter(kept))[6:]}": sid}
    assert next(iter(kept)).startswith("codex:sha256-")
    # its end, naming the same runtime session, ends that session
    end = run_kg(["hook", "session-end", "--runtime", "codex", "--runtime-session", AWS_LETTERS, "--now", NOW,
                  "--json"], input="")
    assert end.exit_code == 0, end.stderr
    assert end.json["session"] == sid and end.json["summary_file"]


@pytest.mark.parametrize("rid", ["my_session_for_issue_42", "agent:main:main", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
                                 "sprint42refactorWeek3x", ULID, "thread_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7"])
def test_ids_people_and_runtimes_give_out_stay_as_they_are(run_kg, rid):
    r = run_kg(["log", "learning", "use pnpm", "--session", rid, "--now", NOW, "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(run_kg(["show", r.json["id"], "--json"]).stdout)["node"]["session"] == rid


def _failed_deploy(tmp_path, sid):
    """A Claude Code transcript of session `sid` whose one Bash call failed, and the hook payload of that call."""
    error = "Exit code 1\nError: connection refused to db:5432"
    records = [
        {"type": "user", "uuid": "u1", "sessionId": sid, "timestamp": "2026-07-01T09:00:00Z",
         "message": {"role": "user", "content": "Deploy the api service please"}},
        {"type": "assistant", "uuid": "a1", "sessionId": sid, "timestamp": "2026-07-01T09:00:05Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "./deploy.sh"}}]}},
        {"type": "user", "uuid": "u2", "sessionId": sid, "timestamp": "2026-07-01T09:00:09Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_01", "is_error": True, "content": error}]}},
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    payload = {"session_id": sid, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "./deploy.sh"}, "tool_use_id": "toolu_01", "error": error,
               "transcript_path": str(transcript)}
    return transcript, payload


def test_a_transcripts_own_secret_session_id_meets_the_hooks_digest(ws, run_kg, tmp_path):
    """A transcript's session id named its kg session and keyed its reflection's state and call ids raw; a hook's
    payload session_id keyed the call the hook logged raw too. Both are kept as the digest now, and still agree:
    the call the hook logged is not logged again from the transcript."""
    transcript, payload = _failed_deploy(tmp_path, GITHUB)
    hooked = run_kg(["hook", "post-tool-use", "--now", NOW, "--json"], input=json.dumps(payload))
    assert hooked.exit_code == 0 and hooked.json["logged"], hooked.stderr
    done = run_kg(["reflect", str(transcript), "--apply", "--now", NOW, "--json"])
    assert done.exit_code == 0, done.stderr
    assert done.json["logged"] == [] and done.json["already_logged"] == 1, done.stdout
    assert done.json["session"].startswith("sha256-")
    assert _files_hold(ws, GITHUB) == []


def test_a_runtime_session_the_older_kg_saved_as_its_digest_is_ended_after_an_upgrade(ws, run_kg):
    """`agent_main_telegram_direct_12345` holds a run of 20 of `[A-Za-z0-9_]` with digits: the older kg saved it as
    its digest. Its session end, after the upgrade, ends that session, not "no current kg session"."""
    rid = "agent_main_telegram_direct_12345"
    start = run_kg(["hook", "session-start", "--start-session", "--runtime", "openclaw", "--runtime-session", rid,
                    "--now", NOW, "--json"], input="{}")
    assert start.exit_code == 0, start.stderr
    sid = start.json["session"]
    path = ws.root / "memory" / ".kg" / "sessions.json"
    data = json.loads(path.read_text())
    data["runtime"] = {f"openclaw:{_old_digest(rid)}": sid}  # as the older kg wrote it
    path.write_text(json.dumps(data))
    end = run_kg(["hook", "session-end", "--runtime", "openclaw", "--runtime-session", rid, "--now", NOW, "--json"],
                 input="{}")
    assert end.exit_code == 0, end.stderr
    assert end.json["session"] == sid and end.json["summary_file"], end.stdout
    assert json.loads(path.read_text())["runtime"] == {}


def test_a_failed_call_the_older_hook_logged_under_a_ulid_session_is_not_logged_again(ws, run_kg, tmp_path):
    """The older kg keyed a call in reflect-state.json by the payload's session id as it is (`call:<ULID>:<id>`);
    the reflection of that transcript after the upgrade finds it there."""
    transcript, payload = _failed_deploy(tmp_path, ULID)
    hooked = run_kg(["hook", "post-tool-use", "--now", NOW, "--json"], input=json.dumps(payload))
    assert hooked.exit_code == 0 and hooked.json["logged"], hooked.stderr
    state = (ws.root / "memory" / ".kg" / "reflect-state.json").read_text()
    assert f"call:{ULID}:toolu_01" in state  # the older kg's key
    done = run_kg(["reflect", str(transcript), "--apply", "--now", NOW, "--json"])
    assert done.exit_code == 0, done.stderr
    assert done.json["logged"] == [] and done.json["already_logged"] == 1, done.stdout
    assert done.json["session"] == ULID


def test_an_imported_entrys_secret_session_is_its_digest_as_everywhere(ws, run_kg, tmp_path, request):
    """`kg import trail` stored a `ghp_...` session as `[REDACTED:github_token]`: its digest now, the session
    `kg log --session` gives the same id."""
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    assert run_o(["log", "error", "deploy failed", "--session", "sprint42refactorWeek3x", "--now", NOW]).exit_code == 0
    out = other.root / "trail.json"
    assert run_o(["export", "trail", "--out", "trail.json", "--now", NOW]).exit_code == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [e["session"] for e in doc["entries"]] == ["sprint42refactorWeek3x"]
    doc["entries"][0]["session"] = GITHUB
    out.write_text(json.dumps(doc), encoding="utf-8")
    r = run_kg(["import", "trail", str(out), "--now", NOW, "--json"])
    assert r.exit_code == 0 and r.json["entries"] == 1, r.stdout + r.stderr
    logged = run_kg(["log", "error", "deploy failed again", "--session", GITHUB, "--now", NOW, "--json"])
    sid = json.loads(run_kg(["show", logged.json["id"], "--json"]).stdout)["node"]["session"]
    assert sid.startswith("sha256-")
    hits = run_kg(["search", "deploy", "--session", GITHUB, "--now", NOW, "--json"])
    assert hits.exit_code == 0 and len({h["ref"] for h in hits.json if h["source"] == "graph"}) == 2, hits.stdout
    assert _files_hold(ws, GITHUB) == []
