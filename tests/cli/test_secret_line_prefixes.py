"""QA qa1's repro through the real CLI: secrets in tool output whose lines carry what the tool printed before them
(`git diff`'s +, grep -n's `path:3:`, Claude Code's Read `     1→`) were stored as they were, in the graph and the
search index, by `kg log --error` and by the claude-code post-tool-use hook; the same lines bare were redacted. Every
byte of the workspace is scanned for them afterwards. The values are detect-secrets' planted test secrets
(Yelp/detect-secrets test_data, Apache-2.0)."""

from __future__ import annotations

import json

DIFF = "diff --git a/config.env b/config.env\n+mimi=gX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4"
GREP = ("files/file_with_secrets.py:3:SUPER_SEECRET_VALUE = "
        "'c3VwZXIgbG9uZyBzdHJpbmcgc2hvdWxkIGNhdXNlIGVub3VnaCBlbnRyb3B5'")
READ = ("     1\u2192-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "     2\u2192somethingSuperRandomAndSecretHereThatShouldNeverBeShared\n"
        "     3\u2192-----END OPENSSH PRIVATE KEY-----")
INI = "+secrets_for_no_one_to_find =\n+    hunter2\n+    password123\n+    BEEF0123456789a"
LEAKS = ["gX69YO4CvBsVjzAwYxdGyDd30t5", "c3VwZXIgbG9uZyBzdHJpbmcgc2hvdWxk", "somethingSuperRandom",
         "BEEF0123456789a", "password123"]


def _leaks(ws) -> list[tuple[str, str]]:
    return [(str(p.relative_to(ws.root)), s) for p in ws.root.rglob("*") if p.is_file() and "cache" not in p.parts
            for s in LEAKS if s.encode() in p.read_bytes()]


def test_kg_log_error_redacts_secrets_behind_tool_prefixes(ws, run_kg):
    for summary, error in [("git diff failed", DIFF), ("grep failed", GREP), ("read failed", READ),
                           ("deploy failed", INI)]:
        r = run_kg(["log", "error", summary, "--error", error, "--json"])
        assert r.exit_code == 0, r.stderr
        stored = json.loads(run_kg(["show", r.json["id"], "--json"]).stdout)["node"]["error_text"]
        assert "[REDACTED:" in stored and stored.split("\n")[0][:2] == error.strip()[:2]  # the prefix stays
        if summary == "read failed":  # the key block goes whole, its lines' numbers with it
            assert stored == "1\u2192[REDACTED:private_key]"
    assert _leaks(ws) == []


def test_the_claude_code_hook_redacts_a_git_diff_in_a_failed_calls_error(ws, run_kg):
    payload = {"session_id": "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "transcript_path": str(ws.root / "t.jsonl"),
               "cwd": str(ws.root), "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_use_id": "toolu_01ABCDEF", "tool_input": {"command": "git diff --exit-code config.env"},
               "error": "Exit code 1\n" + DIFF + "\n" + INI, "is_interrupt": False}
    done = run_kg("hook post-tool-use --runtime claude-code --json", input=json.dumps(payload),
                  env={"KG_HOOK_WAIT": "1"})
    assert done.exit_code == 0, done.stderr
    assert done.json["failed"] and done.json["logged"], done.stdout
    stored = json.loads(run_kg(["show", done.json["logged"], "--json"]).stdout)["node"]["error_text"]
    assert "+mimi=[REDACTED:high_entropy_secret]" in stored and "+[REDACTED:secret_list]" in stored
    assert _leaks(ws) == []


# The reviewer's second round: grep -n -C1 of one .env (its context lines are `2-`, not `2- `), a coloured `git diff`
# and a merge's combined diff (`++`) kept the key, through --details too.
GREP_CONTEXT = "1:DEBUG=1\n2-mimi=gX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4\n3-API_URL=https://x"
COLOURED = "\x1b[1mdiff --git a/.env b/.env\x1b[m\n\x1b[32m+mimi=gX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4\x1b[m"
COMBINED = "diff --cc .env\n++mimi=gX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4"


def test_kg_log_details_redacts_grep_context_coloured_and_combined_diffs(ws, run_kg):
    for summary, details in [("grep output", GREP_CONTEXT), ("coloured diff", COLOURED),
                             ("merge diff", COMBINED)]:
        r = run_kg(["log", "error", summary, "--details", details, "--json"])
        assert r.exit_code == 0, r.stderr
        stored = json.dumps(json.loads(run_kg(["show", r.json["id"], "--json"]).stdout)["node"])
        assert "mimi=[REDACTED:high_entropy_secret]" in stored, stored
    assert _leaks(ws) == []
