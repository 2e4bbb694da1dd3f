"""The agent's everyday commands through the real CLI: exact output, stderr and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOW = "--now 2026-11-30T10:35:00"


def test_log_prints_id_and_json(run_kg):
    r = run_kg(f"log error 'git push failed' --area tooling {NOW}")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "📝 [ERR-20261130-001] git push failed\n", "")
    j = run_kg(f"log learning 'use pnpm' --category correction --json {NOW}").json
    assert j["id"] == "LRN-20261130-001" and j["applied"] is True and j["redacted"] == []


def test_log_reports_redaction_kind_never_the_secret(run_kg):
    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    r = run_kg(f"log error 'push with {secret} failed' --json {NOW}")
    assert r.json["redacted"] == ["github_token"]
    assert secret not in r.stdout + r.stderr
    assert r.stderr == "Redacted before storing: github_token\n"



def test_a_usage_error_does_not_echo_a_pasted_secret(ws):
    # a secret pasted where an option was expected comes back in click's "No such option: ..." message; the
    # real command's error funnel (not the in-process runner's) prints it
    secret = "ghp_Runzqw7wZyVGOeUvfJIssDj4PTTKtb2TxxDB"
    r = subprocess.run([str(Path(sys.executable).with_name("kg")), "search", f"--{secret}"], capture_output=True,
                       text=True, env={**os.environ, "KG_WORKSPACE": str(ws.root)}, timeout=60)
    assert r.returncode == 2 and "No such option" in r.stderr
    assert secret not in r.stdout + r.stderr and "[REDACTED:github_token]" in r.stderr

@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("log error ''", "Error: the summary is empty: say in one line what happened\n"),
        ("log error x --priority urgent", "Error: unknown priority 'urgent': use one of critical, high, medium, low\n"),
        ("show NOPE-1", "Error: no node 'NOPE-1': `kg list` shows the ids\n"),
        ("edge add a b causes", "Error: unknown edge type 'causes': use one of caused_by, led_to, supports, "
                                "contradicts, related_to, derived_from\n"),
        ("node add idea x", "Error: unknown node type 'idea': use one of event, lesson, principle, knowledge, "
                            "pattern\n"),
        ("list --type widget", "Error: unknown type 'widget': use one of event, lesson, principle, knowledge, "
                               "pattern, learning, error, feature\n"),
        ("log error x --now yesterday", "Error: invalid --now 'yesterday': use ISO 8601, for example 2026-11-30 "
                                        "or 2026-11-30T10:35:00\n"),
        ("init ''", "Error: the folder to make a workspace of is empty: name one, or leave it out for here\n"),
        ("init --force", "Error: --force only applies with --store (it moves a workspace that holds entries to a "
                         "team graph): add --store falkordb://HOST:PORT/GRAPH, or leave --force out\n"),
        ("-w '' init", "Error: the workspace folder is empty: name one with -w/--workspace, or leave it out to use "
                       "the one this folder is in\n"),
        ("status --now ''", "Error: invalid --now '': use ISO 8601, for example 2026-11-30 or 2026-11-30T10:35:00\n"),
        ("resolve ERR-20990101-001", "Error: no node or pattern 'ERR-20990101-001': `kg list` shows the ids, "
                                     "`kg patterns` the pattern keys\n"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(run_kg, args, message):
    r = run_kg(args)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", message)


def test_init_force_without_store_is_refused_and_makes_nothing(run_kg, tmp_path):
    """Review: `kg init . --force` said "Workspace ready" (exit 0), as if --force had done something."""
    r = run_kg(["init", str(tmp_path / "new"), "--force"])
    assert (r.exit_code, r.stdout) == (2, "") and r.stderr.startswith("Error: --force only applies with --store")
    assert not (tmp_path / "new").exists()


def test_one_megabyte_summary_is_refused(run_kg):
    r = run_kg(["log", "error", "x" * 1_048_576])
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: the summary is 1,048,576 characters; the limit is 2,000")


def test_outside_a_workspace(run_kg, tmp_path):
    r = run_kg("status", workspace=tmp_path)
    assert r.exit_code == 2
    assert r.stderr == f"Error: {tmp_path} is not a kg workspace: run `kg init {tmp_path}` to make one\n"


def test_show_list_status_resolve(run_kg):
    a = run_kg(f"log error 'timeout calling the API' --pattern-key api.timeout --session s1 --json {NOW}").json
    run_kg(f"log error 'API call timed out' --pattern-key api.timeout --session s2 {NOW}")
    les = run_kg(f"node add lesson 'retry with backoff' --json {NOW}").json
    e = run_kg(f"edge add {les['id']} {a['id']} caused_by {NOW}")
    assert e.stdout == f"🔗 Edge created: [{les['id']}] ──caused_by──► [{a['id']}]\n"
    shown = run_kg(f"show {les['id']} --json").json
    assert shown["edges"][0]["other"] == a["id"] and shown["edges"][0]["manual"] is True
    rows = run_kg("list --type error --json").json
    assert [r["id"] for r in rows] == ["ERR-20261130-002", "ERR-20261130-001"]
    st = run_kg(f"status --json {NOW}").json
    assert st["entries"] == {"error": 2} and st["sessions"] == 2
    assert [(p["key"], p["recurrence"], p["sessions"]) for p in st["patterns"]] == [("api.timeout", 2, 2)]
    r = run_kg(f"resolve {a['id']} --status resolved {NOW}")
    assert r.stdout == f"{a['id']}: pending → resolved\n"


def test_trail_round_trip_through_the_cli(run_kg, ws, tmp_path):
    run_kg(f"log error 'disk full on the build box' --area infra --pattern-key disk.full {NOW}")
    run_kg(f"log feature 'export as CSV' --user-context 'finance needs it' {NOW}")
    out = run_kg(f"export trail --learnings --json {NOW}").json
    assert out["entries"] == 2
    trail = json.loads((ws.root / "memory" / ".learning-trail.json").read_text())
    assert [e["id"] for e in trail["entries"]] == ["ERR-20261130-001", "FEAT-20261130-001"]
    import kg

    other = kg.init_workspace(tmp_path / "other")
    r = run_kg(f"import trail {ws.root / 'memory' / '.learning-trail.json'} --json", workspace=other.root)
    assert r.json["entries"] == 2
    again = run_kg(f"import trail {ws.root / '.learnings'} --json", workspace=other.root)
    assert again.json["entries"] == 0 and again.json["already_present"] == 2


def test_import_hand_written_learnings_with_bad_bytes(run_kg, tmp_path):
    hand = tmp_path / "LEARNINGS.md"
    hand.write_bytes(
        b"# Learnings\n\n## [LRN-20260505-003] correction:use_read_not_exec\n\n"
        b"**Logged**: 2026-05-05T10:30:00\n**Priority**: high\n**Status**: pending\n**Area**: tooling\n\n"
        b"### Summary\nPrefer the read tool over exec for viewing files\n\n### Details\nexec cat hit a @BAD@ byte\n\n"
        b"### Metadata\n- Source: user_feedback\n- Pattern-Key: tools.read_over_exec\n- Tags: tools, files\n\n"
        b"## [not-an-id] broken entry\n\n### Summary\nignored\n".replace(b"@BAD@", b"\xff")
    )
    r = run_kg(f"import trail {hand} --json")
    assert r.exit_code == 0
    assert r.json["entries"] == 1 and r.json["skipped"] == {"entry without a LRN/ERR/FEAT id": 1}
    assert "not valid UTF-8" in r.stderr
    node = run_kg("show LRN-20260505-003 --json").json["node"]
    assert (node["category"], node["priority"], node["area"], node["pattern_key"]) == (
        "correction", "high", "tooling", "tools.read_over_exec")
    assert node["tags"] == ["tools", "files"]
    assert node["text"] == "Prefer the read tool over exec for viewing files"
    assert node["details"] == "exec cat hit a \ufffd byte"


def test_import_rejects_broken_json(run_kg, tmp_path):
    bad = tmp_path / "trail.json"
    bad.write_text('{"entries": [')
    r = run_kg(f"import trail {bad}")
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {bad} is not valid JSON")


@pytest.mark.embedded_only("holds the Kùzu file lock (a team graph's readers take no lock)")
def test_no_traceback_when_the_graph_is_held(ws, tmp_path):
    """A real second process holds the graph lock: reads fail with exit 1 and a clear message, logs queue."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, kg; from kg.store.lock import FileLock\n"
         f"l = FileLock(__import__('pathlib').Path({str(ws.kg_dir / 'graph.lock')!r}), timeout=5); l.acquire()\n"
         "print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        kg_bin = str(Path(sys.executable).with_name("kg"))
        env = {**os.environ, "KG_WORKSPACE": str(ws.root), "KG_LOCK_TIMEOUT": "0.3"}
        read = subprocess.run([kg_bin, "list"], capture_output=True, text=True, env=env, timeout=60)
        assert read.returncode == 1 and "Traceback" not in read.stderr
        assert read.stderr.startswith("Error: the graph is held by another process (pid ")
        log = subprocess.run([kg_bin, "log", "error", "queued while busy", "--json", "--wait"],
                             capture_output=True, text=True, env=env, timeout=60)
        assert log.returncode == 0 and json.loads(log.stdout)["applied"] is False
        assert "recorded in the journal" in log.stderr
        # without --wait the answer never waits for the graph; the detached drainer finds it busy too
        log = subprocess.run([kg_bin, "log", "error", "answered at once", "--json"], capture_output=True,
                             text=True, env=env, timeout=60)
        answered = json.loads(log.stdout)
        assert log.returncode == 0 and answered["applied"] is False and answered["queued"] is True
        assert log.stderr == ""
    finally:
        holder.communicate("", timeout=30)
    env["KG_LOCK_TIMEOUT"] = "30"  # the detached drainer may still hold the graph for a moment
    listed = subprocess.run([kg_bin, "list", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert sorted(r["text"] for r in json.loads(listed.stdout)) == ["answered at once", "queued while busy"]


def test_a_rules_folder_that_is_none_or_holds_an_unknown_file_is_refused(run_kg, tmp_path):
    """`--rules DIR` with a missing folder, a file, or a misspelt rule file passed in silence (exit 0) and the
    packaged rules applied: the override the user meant was never read."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "typo").mkdir()
    (tmp_path / "typo" / "lifecyle.toml").write_text("[promotion]\nmin_recurrence = 5\n")
    for folder, said in ((tmp_path / "none", "does not exist"), (tmp_path / "file", "is not a folder"),
                         (tmp_path / "typo", "lifecyle.toml: not a rule file kg knows")):
        r = run_kg(["--rules", str(folder), "status"])
        assert r.exit_code == 2 and r.stderr.startswith("Error: ") and said in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1
    (tmp_path / "typo" / "lifecyle.toml").rename(tmp_path / "typo" / "lifecycle.toml")
    assert run_kg(["--rules", str(tmp_path / "typo"), "status"]).exit_code == 0


def test_the_chinese_character_table_is_read_from_the_package_only(run_kg, tmp_path, ws):
    """rules/hanzi.toml folds traditional Chinese alike in every workspace: a kg.toml [rules.hanzi] (or a hanzi.toml
    in --rules) was accepted and then ignored (QA10). It is refused, saying why and what to do."""
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "hanzi.toml").write_text('[fold]\npairs = "錯错"\n', encoding="utf-8")
    r = run_kg(["--rules", str(tmp_path / "own"), "status"])
    assert r.exit_code == 2 and "hanzi.toml cannot be overridden" in r.stderr and "remove it" in r.stderr, r.stderr
    toml = ws.root / "kg.toml"
    before = toml.read_text(encoding="utf-8") if toml.exists() else ""
    toml.write_text(before + '\n[rules.hanzi.fold]\npairs = "錯错"\n', encoding="utf-8")
    r = run_kg(["status"])
    assert r.exit_code == 2 and "[rules.hanzi]" in r.stderr and "cannot be overridden" in r.stderr, r.stderr
