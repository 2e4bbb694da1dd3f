"""The memory commands through the real CLI: exact output and exit codes."""


def test_session_start_and_end(run_kg, ws):
    r = run_kg("session start --now 2026-05-27T09:00")
    assert (r.exit_code, r.stdout) == (0, "🟢 Session 2026-05-27-001 started\n")
    run_kg("log learning 'ran the migration' --category task --now 2026-05-27T10:00")
    r = run_kg("session end --summary 'migrated the db' --now 2026-05-27T18:00 --json")
    assert r.exit_code == 0 and r.json["file"] == "memory/sessions/2026-05-27-001.md"
    r = run_kg("session end --summary again")
    assert r.exit_code == 2
    assert r.stderr == "Error: no session to end: run `kg session start` first, or name one with --session\n"


def test_pref_commands(run_kg):
    assert run_kg("pref set answer_style '直接回答，不要解释' --now 2026-01-01").stdout == \
        "📌 answer_style = 直接回答，不要解释\n"
    assert run_kg("pref get answer_style").stdout == "直接回答，不要解释\n"
    assert run_kg("pref list --json").json == [{"key": "answer_style", "value": "直接回答，不要解释"}]
    r = run_kg("pref unset nope")
    assert (r.exit_code, r.stderr) == (2, "Error: no preference 'nope': `kg pref list` shows them\n")
    r = run_kg("pref set 'bad key' x")
    assert r.exit_code == 2 and r.stderr.startswith("Error: invalid preference key 'bad key'")


def test_pref_broken_file(run_kg, ws):
    (ws.memory / "preferences.json").write_text("{oops", encoding="utf-8")
    r = run_kg("pref set tone casual")
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: memory/preferences.json is not valid JSON (line 1, column 2: ")
    assert "kg will not overwrite it" in r.stderr
    assert (ws.memory / "preferences.json").read_text(encoding="utf-8") == "{oops"


def test_score_and_trends(run_kg):
    r = run_kg("score 8 7 9 8 7 --now 2026-01-01T10:00")
    assert r.stdout == "📊 Scored: avg=7.8/10 (acc=8 use=7 eff=9 ton=8 pro=7)\n"
    r = run_kg("score 8 7 9 8 12")
    assert (r.exit_code, r.stderr) == (2, "Error: proactiveness must be from 0 to 10, not 12\n")
    run_kg("score 9 9 9 9 9 --now 2026-01-02T10:00")
    r = run_kg("trends 7 --now 2026-01-03")
    assert r.stdout.endswith("  Trend: ↑ (7.8 → 9.0)\n")
    assert run_kg("trends 7 --now 2026-03-01").stdout == "No scores in the last 7 days.\n"


def test_search_inject_recall_skill(run_kg):
    run_kg("log error 'git push failed: auth not configured' --now 2026-01-05T10:00")
    r = run_kg("search 'git push' --now 2026-01-06")
    assert r.exit_code == 0
    assert r.stdout.startswith("🔍 1 result(s) for 'git push':\n  1. [")
    assert ("graph ERR-20260105-001 (error) · 2026-01-05 10:00\n     → git push failed: auth not configured\n"
            in r.stdout)
    # nothing matches: no results, said first; the newest memory after, not scored as matches
    assert run_kg("search 'nothing here'").stdout.startswith(
        "No results for 'nothing here'.\n  (nothing matched; showing the newest memory instead: 1, not matches)\n"
        "  1. graph ERR-20260105-001 (error) · 2026-01-05 10:00\n")
    r = run_kg("inject --message 'git push again' --budget 300 --now 2026-01-06 --json")
    assert r.json["chars"] <= 300 and "git push failed" in r.json["block"]
    r = run_kg("index build --now 2026-01-06 --json")
    assert r.exit_code == 0 and r.json["file"] == "memory/.memory-index.json"
    r = run_kg("recall bogus")
    assert r.exit_code == 2 and r.stderr.startswith("Error: unknown topic 'bogus': use one of weather, code")
    r = run_kg("skill new deploy-docs -d 'Publish docs' --trigger 'deploy docs' --step 'make html' "
               "--now 2026-01-06")
    assert r.stdout == "🛠️  created memory/skills/deploy-docs.md\n"
    r = run_kg("skill find 'deploy the docs' --json")
    assert r.json[0]["slug"] == "deploy-docs"
    assert run_kg("skill check --tool-calls 2 --message '记住这个'").stdout == "yes: the user said '记住'\n"
    assert run_kg("skill check").stdout == "no\n"


def test_retention_reads_lifecycle_rules(run_kg):
    r = run_kg("retention --json")
    assert r.exit_code == 0 and "append-only" not in r.json["daily_logs"]  # repeats fold into their first line
    assert r.json["daily_logs"].startswith("kept forever; lines are added at the end")
    assert "90 days" in r.json["learning_entries"]


def test_starting_a_session_over_an_open_one_says_it_was_not_ended(run_kg):
    # the open session's summary is never written unless someone ends it: a silent switch lost it
    first = run_kg("session start --now 2026-05-27T09:00 --json").json["id"]
    r = run_kg("session start --now 2026-05-27T11:00 --json")
    assert r.json["previous"] == first and r.json["previous_open"] is True
    assert r.stderr == (f"Session {first} was not ended: `kg session end --session {first}` writes its summary\n")
    run_kg(f"session end --session {r.json['id']} --summary done --now 2026-05-27T12:00")
    r = run_kg("session start --now 2026-05-27T13:00 --json")
    assert r.json["previous_open"] is False and r.stderr == ""


def test_the_topic_index_copies_no_secret_of_a_file_an_agent_wrote(run_kg, ws):
    """`kg index build` copies the first lines of each memory file: one an agent wrote by hand (kg's own are
    redacted when written) had its password and token copied whole into memory/.memory-index.json."""
    token = "ghp_" + "Qm2Lk7Rt4Vb8Np3Hs6Jd1Fg5Wc0YaQe7TZx9"
    (ws.root / "memory" / "2026-01-05-notes.md").write_text(
        f"# Deploy notes\nthe staging password is Vq8rTz2LmK4x\nCI uses {token} to push\nrotate both monthly\n",
        encoding="utf-8")
    assert run_kg("index build --now 2026-01-06").exit_code == 0
    index = (ws.root / "memory" / ".memory-index.json").read_text(encoding="utf-8")
    assert "Vq8rTz2LmK4x" not in index and token[4:20] not in index, index
    assert "rotate both monthly" in index and "[REDACTED:" in index


def test_the_topic_index_copies_no_key_block_or_value_under_its_label(run_kg, ws):
    """(review) The first lines were redacted one by one: a key block's body, or a key on the line after its label,
    was copied whole."""
    body = "MIIEpAIBAAKCAQEA7bq3xk2Yd9Qm1Lk7Rt4Vb8Np3Hs6Jd1Fg5Wc0YaQe7TZx9Ab3d"
    (ws.root / "memory" / "2026-01-05-keys.md").write_text(
        f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n", encoding="utf-8")
    assert run_kg("index build --now 2026-01-06").exit_code == 0
    index = (ws.root / "memory" / ".memory-index.json").read_text(encoding="utf-8")
    assert body[10:40] not in index, index
