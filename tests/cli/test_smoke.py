def test_log_then_show(run_kg):
    r = run_kg("log error 'git push failed' --area tooling --pattern-key git.push --json")
    assert r.exit_code == 0, r.stderr
    entry = r.json
    assert entry["id"].startswith("ERR-")
    shown = run_kg(f"show {entry['id']} --json")
    assert shown.json["node"]["text"] == "git push failed"
