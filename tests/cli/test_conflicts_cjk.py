"""Conflicts between Chinese rules (QA qa10 F1, F2) and a person's "these two do not conflict", through the real CLI
on a real graph: two unrelated preferences that both say 以后…都用… are both written, opposite Chinese rules are
raised as the English ones are, and `kg conflicts resolve --compatible` keeps both rules for good."""

BASELINE_OFF = "[rules.lifecycle.verification]\nmin_baseline_days = 0\n"


def _log(run_kg, ws, rules):
    """Each (category, pattern key, action) logged once a day on three days, at the same hour."""
    (ws.root / "kg.toml").write_text(BASELINE_OFF, encoding="utf-8")
    for d in ("01", "02", "03"):
        for category, key, action in rules:
            r = run_kg(["log", "learning", action, "--category", category, "--pattern-key", key,
                        "--action", action, "--session", f"s{d}", "--now", f"2026-09-{d}T10:00"])
            assert r.exit_code == 0, r.stderr


def _written(ws):
    return "".join(p.read_text(encoding="utf-8") for p in ws.root.glob("*.md"))


def test_two_unrelated_chinese_preferences_are_both_written(run_kg, ws):
    # F1: both start 以后…都用…; "direct contradiction (shared: 以后, 都用)" held both out of USER.md
    _log(run_kg, ws, [("preference", "zh.commit", "以后提交信息都用中文写。"),
                      ("preference", "zh.pnpm", "以后都用 pnpm 安装依赖，不要用 npm。")])
    cycle = run_kg(["cycle", "--now", "2026-09-04T08:00"])
    assert cycle.exit_code == 0, cycle.stderr
    assert "ties dec-" not in cycle.stdout, cycle.stdout
    assert run_kg(["conflicts", "--json", "--now", "2026-09-04T09:00"]).json == []
    written = _written(ws)
    assert "以后提交信息都用中文写" in written and "以后都用 pnpm 安装依赖" in written, written


def test_opposite_chinese_rules_are_a_conflict(run_kg, ws):
    # F2: 总是 / 不要 about one subject is the Chinese always / never
    for text in ("缩进总是用 tab。", "缩进不要用 tab。"):
        assert run_kg(["node", "add", "principle", text, "--now", "2026-11-20T09:00"]).exit_code == 0
    (d,) = run_kg(["conflicts", "--json", "--now", "2026-11-20T10:00"]).json
    assert "'总是' vs '不要'" in d["reason"] and "tab" in d["reason"], d


def test_a_person_says_two_rules_do_not_conflict_and_both_stay(run_kg, ws):
    a = run_kg(["node", "add", "principle", "always use yarn for frontend installs", "--now", "2026-11-20T09:00",
                "--json"]).json["id"]
    assert run_kg(["node", "add", "principle", "never use yarn for frontend installs", "--now",
                   "2026-11-20T09:00"]).exit_code == 0
    (d,) = run_kg(["conflicts", "--json", "--now", "2026-11-20T10:00"]).json
    listed = run_kg(["conflicts", "--now", "2026-11-20T10:00"]).stdout
    assert "--compatible" in listed, listed  # a tie says how to keep both
    # one of the two, not both, and not neither: a usage error
    for extra in ([], ["--winner", a, "--compatible"]):
        bad = run_kg(["conflicts", "resolve", d["id"], *extra, "--now", "2026-11-20T10:00"])
        assert bad.exit_code == 2 and bad.stderr == ("Error: give either --winner ID (one rule wins) or --compatible "
                                                     "(the two do not conflict)\n"), (bad.exit_code, bad.stderr)
    r = run_kg(["conflicts", "resolve", d["id"], "--compatible", "--now", "2026-11-20T10:00"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"⚖️  {d['id']}: {d['a']} and {d['b']} do not conflict: both are written"), r.stdout
    memory = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "always use yarn" in memory and "never use yarn" in memory, memory
    # remembered: a later cycle neither raises the pair again nor takes a rule out
    again = run_kg(["cycle", "--now", "2026-11-21T10:00", "--json"]).json
    assert again["conflicts"] == [], again["conflicts"]
    (kept,) = run_kg(["conflicts", "--json", "--now", "2026-11-21T11:00"]).json
    assert (kept["id"], kept["status"], kept["winner"], kept["override"]) == (d["id"], "compatible", "", True), kept
    assert "no conflict, both written" in run_kg(["conflicts", "--now", "2026-11-21T11:00"]).stdout
    memory = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "always use yarn" in memory and "never use yarn" in memory, memory
    why = run_kg(["why", "never use yarn for frontend installs", "--now", "2026-11-21T11:00"]).stdout
    assert "no conflict (a person said so" in why, why
    report = run_kg(["graph", "report", "--now", "2026-11-21T11:00"])
    assert report.exit_code == 0 and f"{d['a']} vs {d['b']}: no conflict (a person said so)" in report.stdout, \
        report.stdout
