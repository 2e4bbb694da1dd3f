"""The cycle's conflict step through the real CLI: which rules contradict, the decisions it stores, and that a
second cycle at the same --now changes nothing (QA pass qa2, findings 1 and 2)."""

NOW = "2026-12-06T08:00"


def _principles(run_kg, *texts):
    ids = []
    for text in texts:
        r = run_kg(["node", "add", "principle", text, "--now", "2026-12-06T07:00", "--json"])
        assert r.exit_code == 0, r.stderr
        ids.append(r.json["id"])
    return ids


PNPM = (("pkg.npm", "npm install failed: lockfile mismatch", "always use pnpm in this repository"),
        ("pkg.pnpm", "pnpm not found on the CI runner", "never use pnpm in this repository"))


def _log_rules(run_kg, ws, *rules):
    """Each (pattern key, error, action) logged once a day on three days, the wait for a baseline off."""
    (ws.root / "kg.toml").write_text("[rules.lifecycle.verification]\nmin_baseline_days = 0\n", encoding="utf-8")
    for d in ("01", "02", "03"):
        for h, (key, error, action) in enumerate(rules):
            run_kg(["log", "error", error, "--pattern-key", key, "--action", action, "--session", f"a{d}", "--now",
                    f"2026-11-{d}T{9 + h:02d}:00"])


def _read(path):
    return path.read_bytes() if path.exists() else b""


def _pairs(run_kg):
    return {frozenset((d["a"], d["b"])): d for d in run_kg(["conflicts", "--json"]).json}


def test_decisions_made_in_one_cycle_each_get_their_own_id(run_kg, ws):
    tabs, no_tabs, squash, no_squash = _principles(
        run_kg, "Always indent with tabs", "Never indent with tabs", "Always squash commits before merging",
        "Never squash commits before merging")
    for a, b in ((tabs, no_tabs), (squash, no_squash)):
        assert run_kg(["edge", "add", a, b, "contradicts", "--now", "2026-12-06T07:00"]).exit_code == 0
    first = run_kg(["cycle", "--now", NOW, "--json"]).json
    made = [c["id"] for c in first["conflicts"]]
    assert len(made) == len(set(made)) >= 2, first["conflicts"]
    # each stored decision is the pair its line named (all had one id, the last row overwrote the rest)
    stored = _pairs(run_kg)
    assert {frozenset((c["a"], c["b"])): c["id"] for c in first["conflicts"]} == \
        {pair: d["id"] for pair, d in stored.items()}
    assert {frozenset((tabs, no_tabs)), frozenset((squash, no_squash))} <= set(stored)
    memory = _read(ws.root / "MEMORY.md")
    assert b"squash" not in memory and b"indent" not in memory  # two ties: neither side rendered
    again = run_kg(["cycle", "--now", NOW, "--json"]).json
    assert again["changed"] is False, again
    assert _read(ws.root / "MEMORY.md") == memory


def _promote_two_rules(run_kg, ws):
    _log_rules(run_kg, ws, ("ci.tests", "git push rejected: tests failing in CI", "always run pytest before git push"),
               ("git.env", "secret leaked: .env committed", "never commit the .env file; add it to .gitignore"))
    first = run_kg(["cycle", "--now", "2026-11-03T12:00", "--json"]).json
    assert len(first["promoted"]) == 2, first
    return first


def test_always_and_never_about_different_things_do_not_conflict(run_kg, ws):
    _promote_two_rules(run_kg, ws)
    tools = (ws.root / "TOOLS.md").read_text(encoding="utf-8")
    assert "- always run pytest before git push" in tools and ".gitignore" in tools
    again = run_kg(["cycle", "--now", "2026-11-03T12:00", "--json"]).json
    # the second cycle at the same --now called them a tie and deleted TOOLS.md
    assert again["conflicts"] == [] and again["changed"] is False, again
    assert (ws.root / "TOOLS.md").read_text(encoding="utf-8") == tools
    assert run_kg(["conflicts", "--json"]).json == []


def test_a_rule_and_its_opposite_about_one_thing_still_conflict(run_kg, ws):
    keep, drop = _principles(run_kg, "always use pnpm in this repository", "never use pnpm in this repository")
    report = run_kg(["cycle", "--now", NOW, "--json"]).json
    assert [(c["a"], c["b"], c["status"]) for c in report["conflicts"]] == [(keep, drop, "tie")], report["conflicts"]
    assert "shared: pnpm, repository" in report["conflicts"][0]["reason"]


def test_always_and_never_sharing_one_common_word_do_not_conflict(run_kg, ws):
    """'run' is in both rules and says nothing of what they are about: they tied and neither was written (a review
    of 73d39f08)."""
    _log_rules(run_kg, ws, ("ci.tests", "git push rejected: tests failing in CI", "Always run pytest before git push"),
               ("db.prod", "migration dropped a production table", "Never run migrations against production"))
    first = run_kg(["cycle", "--now", "2026-11-03T12:00", "--json"]).json
    assert len(first["promoted"]) == 2 and first["conflicts"] == [], first
    tools = (ws.root / "TOOLS.md").read_text(encoding="utf-8")
    assert "- Always run pytest before git push" in tools and "- Never run migrations against production" in tools


def test_chinese_rules_about_detail_still_conflict(run_kg, ws):
    """要详细 was read as 要详 + 详细: 要详 was its topic, 要简 the other's, none shared, so no conflict and MEMORY.md
    held both (a review of 73d39f08)."""
    detailed, concise = _principles(run_kg, "要详细", "要简洁")
    report = run_kg(["cycle", "--now", NOW, "--json"]).json
    assert [(c["a"], c["b"], c["status"]) for c in report["conflicts"]] == [(detailed, concise, "tie")], report
    memory = _read(ws.root / "MEMORY.md").decode()
    assert "要详细" not in memory and "要简洁" not in memory, memory


def test_rules_promoted_together_that_conflict_are_settled_in_that_cycle(run_kg, ws):
    _log_rules(run_kg, ws, *PNPM)
    first = run_kg(["cycle", "--now", "2026-11-03T12:00", "--json"]).json
    assert len(first["promoted"]) == 2 and [c["status"] for c in first["conflicts"]] == ["tie"], first
    tools = _read(ws.root / "TOOLS.md")
    assert b"pnpm" not in tools  # a tie holds both back
    # the second cycle at the same --now found the tie and deleted the TOOLS.md the first had written
    again = run_kg(["cycle", "--now", "2026-11-03T12:00", "--json"]).json
    assert again["changed"] is False, again
    assert _read(ws.root / "TOOLS.md") == tools


def test_a_tie_does_not_take_a_confirmed_rule_out(run_kg, ws):
    # scores from priority alone, medium as high: the new principle ties with the promoted rule
    (ws.root / "kg.toml").write_text(
        "[rules.lifecycle.verification]\nmin_baseline_days = 0\n[rules.lifecycle.conflicts]\nrecency_max = 0\n"
        "recurrence_weight = 0\n[rules.lifecycle.conflicts.base_priority]\nmedium = 60\n", encoding="utf-8")
    for d in ("01", "02", "03"):
        run_kg(["log", "error", "npm install failed: lockfile mismatch", "--pattern-key", "pkg.npm", "--action",
                "always use pnpm in this repository", "--session", f"a{d}", "--now", f"2026-11-{d}T09:00"])
    run_kg(["cycle", "--now", "2026-11-03T12:00"])
    (v,) = run_kg(["cycle", "--now", "2026-11-10T13:00", "--json"]).json["verified"]
    assert v["verdict"] == "confirmed", v
    _principles(run_kg, "never use pnpm in this repository")
    (c,) = run_kg(["cycle", "--now", "2026-11-10T15:00", "--json"]).json["conflicts"]
    assert (c["status"], c["score_a"], c["score_b"]) == ("tie", 60, 60), c
    # the verified rule stays in its file, the tie listed for review (both were taken out)
    assert "- always use pnpm in this repository\n" in (ws.root / "TOOLS.md").read_text(encoding="utf-8")
    assert "never use pnpm" not in _read(ws.root / "MEMORY.md").decode()
    assert "TIE (kept " in run_kg(["conflicts"]).stdout


def test_rules_a_conflict_keeps_out_of_their_file_are_not_judged_on_those_days(run_kg, ws):
    """Both sides of a tie are left out of TOOLS.md, yet kg's block holds what kg wrote, which read as "in
    effect": a week later both were "confirmed" (0 mistakes in 7 days) for days neither was in any file (QA2)."""
    _log_rules(run_kg, ws, *PNPM)
    first = run_kg(["cycle", "--now", "2026-11-03T12:00", "--json"]).json
    changes = sorted(p["change"] for p in first["promoted"])
    assert len(changes) == 2 and [c["status"] for c in first["conflicts"]] == ["tie"], first
    # paused in the cycle that set them aside (the next one at the same --now changes nothing)
    assert sorted((w["change"], w["action"], w.get("how")) for w in first["withdrawn"]) == \
        [(c, "paused", "aside") for c in changes], first["withdrawn"]
    still = run_kg(["cycle", "--now", "2026-11-04T08:00", "--json"]).json["withdrawn"]
    assert sorted((w["change"], w["action"], w.get("how")) for w in still) == \
        [(c, "still paused", "aside") for c in changes], still
    later = run_kg(["cycle", "--now", "2026-11-10T13:00", "--json"]).json
    assert later["verified"] == [], later["verified"]  # (both "confirmed" before)
    status = run_kg(["status"]).stdout
    assert "set aside by a conflict" in status, status
    monitoring = {m["id"]: m for m in run_kg(["verify", "--json", "--now", "2026-11-10T14:00"]).json["monitoring"]}
    assert all(monitoring[c].get("how") == "aside" for c in changes), monitoring
    # a person settles it: the winner is back in its file and judged again, the loser stays out
    (decision,) = run_kg(["conflicts", "--json"]).json
    won = run_kg(["conflicts", "resolve", decision["id"], "--winner", "a", "--now", "2026-11-10T15:00"])
    assert won.exit_code == 0, won.stderr
    monitoring = {m["id"]: m for m in run_kg(["verify", "--json", "--now", "2026-11-10T16:00"]).json["monitoring"]}
    assert sorted(bool(monitoring[c]["withdrawn_since"]) for c in changes) == [False, True], monitoring
    # (the winner resumed by the resolve that wrote it back, at 15:00: before, by the next cycle, its hours back
    # counted as out)
    back = run_kg(["cycle", "--now", "2026-11-11T08:00", "--json"]).json["withdrawn"]
    assert [w["action"] for w in back] == ["still paused"], back
    tools = (ws.root / "TOOLS.md").read_text(encoding="utf-8")
    assert ("always use pnpm" in tools) != ("never use pnpm" in tools), tools  # the winner alone


THIRD = ("ci.cache", "docker build cache miss on the CI runner", "always pass --cache-from to docker build in CI")


def _resolved_with(run_kg, ws, spoil) -> dict:
    """Two rules tied and set aside in TOOLS.md beside a third; `spoil(path)` the file; a person resolves the tie.
    The monitoring after it, and after the next cycle."""
    _log_rules(run_kg, ws, *PNPM, THIRD)
    first = run_kg(["cycle", "--now", "2026-11-03T12:00", "--json"]).json
    assert [c["status"] for c in first["conflicts"]] == ["tie"], first
    (decision,) = run_kg(["conflicts", "--json"]).json
    spoil(ws.root / "TOOLS.md")
    won = run_kg(["conflicts", "resolve", decision["id"], "--winner", "a", "--now", "2026-11-10T15:00"])
    assert won.exit_code == 0, won.stderr
    after = run_kg(["cycle", "--now", "2026-11-11T08:00"])
    assert after.exit_code == 0 or "read-only" in after.stdout, after.stdout  # (1: a file it could not write, said)
    return {m["text"]: m for m in run_kg(["verify", "--json", "--now", "2026-11-11T09:00"]).json["monitoring"]}


def test_a_rule_let_back_into_a_file_kg_cannot_write_stays_paused(run_kg, ws):
    """The winner of a resolve is written back by the export that follows: resumed then, not before. A read-only
    TOOLS.md keeps kg's last block, which held neither side: before, a block unchanged since kg's write counted
    every rule of it as in effect, and the winner's verification counted days in no file (review of ee6d09d0)."""
    def read_only(path):
        path.chmod(0o440)

    monitoring = _resolved_with(run_kg, ws, read_only)
    assert all(monitoring[r]["withdrawn_since"] for r in (PNPM[0][2], PNPM[1][2])), monitoring
    assert "pnpm" not in (ws.root / "TOOLS.md").read_text(encoding="utf-8")


def test_a_rule_let_back_into_a_block_a_person_edited_stays_paused(run_kg, ws):
    def edited(path):
        lines = path.read_text(encoding="utf-8").splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("<!-- kaizen-kg:begin"))
        path.write_text("\n".join([*lines[:at + 1], "- a line a person added", *lines[at + 1:]]) + "\n",
                        encoding="utf-8")

    monitoring = _resolved_with(run_kg, ws, edited)
    assert all(monitoring[r]["withdrawn_since"] for r in (PNPM[0][2], PNPM[1][2])), monitoring
