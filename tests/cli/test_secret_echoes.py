"""The QA pass of 2026-12-03, through the real CLI: a password found once in an entry (or a tool call) was kept
where it was repeated; in prose it was not found at all, nor an AWS secret key beside its key id; and commands
echoed what the user typed. After each, every byte of the workspace is grepped for the secret in any case (the QA's
`grep -rl -a -i`), and so is what the command printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PW = "Hx7pQ2mZ9vL4"
NOW = ["--now", "2026-12-03T10:00"]


def _holding(root: Path, secret: str) -> list[str]:
    """Every file under `root` holding `secret` in any case, as `grep -rl -a -i`."""
    needle = secret.lower().encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and needle in p.read_bytes().lower())


def test_a_password_said_twice_in_a_learning_is_gone_from_every_file(run_kg, ws):
    r = run_kg(["log", "learning", f"PGPASSWORD={PW} works for staging; the staging password is {PW}",
                "--json", *NOW])
    assert r.exit_code == 0, r.stderr
    assert PW.lower() not in r.stdout.lower(), r.stdout
    assert r.json["summary"].endswith("the staging password is [REDACTED:password_in_prose]"), r.json
    assert run_kg(["export", "trail", "--learnings", *NOW]).exit_code == 0
    assert _holding(ws.root, PW) == []


def test_reflect_keys_and_headings_are_built_from_redacted_text(run_kg, ws, tmp_path):
    transcript = tmp_path / "qa-s.txt"
    transcript.write_text(
        "User: deploy it\n"
        f"Assistant: Running curl -u admin:{PW} https://api.example.com\n"
        f"User: No, that is wrong. Never pass the password {PW} on the command line, always use "
        f"PGPASSWORD={PW} instead.\n")
    r = run_kg(["reflect", str(transcript), "--apply", "--json", *NOW])
    assert r.exit_code == 0, r.stderr
    assert PW.lower() not in r.stdout.lower(), r.stdout
    keys = [f["pattern_key"] for f in r.json["findings"]]
    assert keys and all(k and "[redacted" not in k for k in keys), keys
    run_kg(["session", "end", *NOW])
    assert run_kg(["export", "trail", "--learnings", *NOW]).exit_code == 0
    assert _holding(ws.root, PW) == []


def test_a_failed_claude_code_call_loses_the_password_its_error_repeats(ws, tmp_path):
    sid = "5b6c7d8e-0000-4000-8000-000000000001"
    base = {"sessionId": sid, "cwd": str(ws.root), "version": "2.0.0", "isSidechain": False, "userType": "external"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "timestamp": "2026-12-03T10:00:00Z",
         "message": {"role": "user", "content": "deploy it to staging"}},
        {**base, "type": "assistant", "uuid": "a1", "timestamp": "2026-12-03T10:00:05Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_01QA", "name": "Bash",
              "input": {"command": f"curl -fsS -u admin:{PW} https://api.example.com/deploy"}}]}},
        {**base, "type": "user", "uuid": "u2", "timestamp": "2026-12-03T10:00:07Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_01QA", "is_error": True,
              "content": f"Exit code 22\ncurl: (22) The requested URL returned error: 401 (user admin, "
                         f"password {PW} rejected)"}]}},
    ]
    path = tmp_path / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    payload = {"session_id": sid, "transcript_path": str(path), "cwd": str(ws.root), "hook_event_name": "SessionEnd",
               "reason": "other", "permission_mode": "default"}
    env = {k: v for k, v in os.environ.items() if k != "KG_NOW"} | {"KG_HOOK_WAIT": "1", "KG_SERVER": "0"}
    kg = [str(Path(sys.executable).parent / "kg"), "-w", str(ws.root)]
    end = subprocess.run(kg + ["hook", "session-end", "--runtime", "claude-code", "--json"], env=env, text=True,
                         input=json.dumps(payload), capture_output=True)
    assert end.returncode == 0, end.stderr
    assert json.loads(end.stdout)["reflect"]["logged"], end.stdout
    assert PW.lower() not in (end.stdout + end.stderr).lower()
    assert subprocess.run(kg + ["export", "trail", "--learnings"], env=env, capture_output=True).returncode == 0
    assert _holding(ws.root, PW) == []


def test_an_aws_secret_key_beside_its_key_id_is_not_kept(run_kg, ws):
    secret = "Zx8kLq2Wm9Vt4Rb7Nc1Yp3Hd6Gf0Js5Ae2Ku8Io4"
    r = run_kg(["log", "error", f"aws creds AKIA4HK7QWERTYUIOP2Z / {secret}", "--json", *NOW])
    assert r.exit_code == 0, r.stderr
    assert r.json["summary"] == "aws creds [REDACTED:aws_access_key] / [REDACTED:aws_secret_key]"
    assert _holding(ws.root, secret) == [] and _holding(ws.root, "AKIA4HK7QWERTYUIOP2Z") == []


KEY = "sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ"


def test_what_a_command_echoes_is_redacted(run_kg, ws):
    start = run_kg(["hook", "session-start", "-m", f"my key is {KEY}", "--json", *NOW])
    assert start.exit_code == 0, start.stderr
    assert start.json["message"] == "my key is [REDACTED:openai_key]"
    inject = run_kg(["inject", "-m", f"deploy with {KEY}", "--json", *NOW])
    assert inject.json["message"] == "deploy with [REDACTED:openai_key]"
    show = run_kg(["show", KEY])
    assert (show.exit_code, show.stderr) == (2, "Error: no node '[REDACTED:openai_key]': `kg list` shows the ids\n")
    status = run_kg(["resolve", "ERR-20261203-001", "--status", f"password={PW}"])
    assert status.exit_code == 2 and PW not in status.stderr and "[REDACTED:" in status.stderr, status.stderr
    now = run_kg(["--now", KEY, "status"])
    assert (now.exit_code, now.stderr) == (2, "Error: invalid --now '[REDACTED:openai_key]': use ISO 8601, for "
                                              "example 2026-11-30 or 2026-11-30T10:35:00\n")
    assert _holding(ws.root, KEY) == []


def test_a_live_failed_call_loses_the_password_its_error_repeats(run_kg, ws):
    payload = {"session_id": "s-live", "transcript_path": str(ws.root / "none.jsonl"), "cwd": str(ws.root),
               "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "toolu_live",
               "tool_input": {"command": f"curl -fsS -u admin:{PW} https://api.example.com/deploy"},
               "error": f"curl: (22) 401: user admin with {PW.lower()} rejected", "is_interrupt": False}
    r = run_kg(["hook", "post-tool-use", "--runtime", "claude-code", *NOW], input=json.dumps(payload))
    assert r.exit_code == 0, r.stderr
    errors = run_kg(["list", "--type", "error", "--json"]).json
    assert len(errors) == 1 and errors[0]["text"].endswith("user admin with [REDACTED:cli_credential] rejected"), errors
    assert run_kg(["export", "trail", "--learnings", *NOW]).exit_code == 0
    assert _holding(ws.root, PW) == []
