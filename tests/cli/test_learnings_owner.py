"""`.learnings/*.md` has one writer (kg.memory.logs): `kg log` appends, `kg export trail` brings kg's own
entries up to date, and a human's edits, entries and notes survive the export byte for byte, flagged."""

from __future__ import annotations

from kg.memory import logs

NOW = "--now 2026-11-30T10:00"


def _entry(text: str, entry_id: str) -> str:
    """The entry `entry_id` as it stands in `text`: from its heading to the next entry's."""
    start = text.index(f"## [{entry_id}]")
    nxt = text.find("\n## [", start + 1)
    return text[start:] if nxt < 0 else text[start:nxt + 1]


def test_hand_edits_in_learnings_survive_export_trail(run_kg, ws):
    (ws.root / ".learnings").mkdir()
    a = run_kg(f"log error 'disk full on the build box' --details 'df showed 100%' --json {NOW}").json["id"]
    b = run_kg(f"log error 'npm install timed out' --json {NOW}").json["id"]
    c = run_kg(f"log learning 'use read not exec for files' --json {NOW}").json["id"]
    errors, lessons = ws.root / ".learnings" / "ERRORS.md", ws.root / ".learnings" / "LEARNINGS.md"
    text = errors.read_text()
    assert text.count("<!-- kaizen-kg:entry ") == 2
    # A person edits inside kg's entry a, writes an entry of their own and a note after the last entry
    edited = text.replace("df showed 100%\n", "df showed 100%\nThe CI cache was the culprit (found by Ada)\n")
    hand = ("## [ERR-20261129-042] tooling:written_by_hand\n\n**Logged**: 2026-11-29T09:00:00\n\n"
            "### Summary\nmy own entry\n\n---\n\n")
    errors.write_text(edited + hand + "Notes: ask infra about quotas\n")
    before = errors.read_bytes()
    mine_a = _entry(before.decode(), a)
    run_kg(f"resolve {a} --status resolved {NOW}")
    run_kg(f"resolve {b} --status resolved {NOW}")
    run_kg(f"resolve {c} --status resolved {NOW}")
    d = run_kg(f"log error 'the registry refused the push' --json {NOW}").json["id"]

    r = run_kg(f"export trail {NOW}")
    assert r.exit_code == 0, r.stderr
    after = errors.read_text()
    assert _entry(after, a) == mine_a  # the human's edit, byte for byte, and kg did not rewrite the entry
    assert "**Status**: resolved" in _entry(after, b)  # kg's untouched entry is brought up to date
    assert "**Status**: resolved" in _entry(lessons.read_text(), c)
    assert hand + "Notes: ask infra about quotas\n" in after  # the human's entry and note stay
    assert after.count(f"## [{d}]") == 1 and after.count(f"## [{a}]") == 1
    assert f"{a} in {errors}: {logs.EDITED}\n" in r.stderr
    assert f"ERR-20261129-042 in {errors}: {logs.NOT_IN_GRAPH}\n" in r.stderr  # only in the file: said so
    flagged = run_kg(f"export trail --json {NOW}").json["kept"]
    assert flagged == [{"file": str(errors), "id": a, "reason": logs.EDITED},
                       {"file": str(errors), "id": "ERR-20261129-042", "reason": logs.NOT_IN_GRAPH}]
    assert errors.read_text() == after  # a second export changes nothing


def test_an_entry_from_an_older_kg_gets_its_mark_and_a_hand_entry_stays_unmarked():
    entry = {"id": "ERR-20261130-001", "entry_type": "error", "text": "disk full", "created_at": "2026-11-30T10:00",
             "priority": "high", "status": "pending"}
    region = logs.learnings_region(entry)
    old_kg = "# Errors\n\n" + region.split("<!-- kaizen-kg:entry")[0] + logs.SEPARATOR
    report = logs.LearningsReport()
    assert logs.merge_learnings(old_kg, "Errors", [entry], report=report) == "# Errors\n\n" + region + logs.SEPARATOR
    assert report.updated == 1 and report.kept == []
    by_hand = old_kg.replace("disk full", "disk full (by hand)", 1)
    report = logs.LearningsReport()
    assert logs.merge_learnings(by_hand, "Errors", [entry], report=report) == by_hand
    assert report.kept == [{"file": "", "id": entry["id"], "reason": logs.UNMARKED}]


def test_an_entry_deleted_by_hand_stays_deleted(run_kg, ws):
    (ws.root / ".learnings").mkdir()
    a, b = (run_kg(f"log error '{text}' --json {NOW}").json["id"] for text in ("disk full", "npm install timed out"))
    errors = ws.root / ".learnings" / "ERRORS.md"
    text = errors.read_text()
    start = text.index(f"## [{a}]")
    without = text[:start] + text[text.index("## [", start + 1):]
    errors.write_text(without)  # a person deletes a, which `kg log` appended (no export yet)
    c = run_kg(f"log error 'the registry refused the push' --json {NOW}").json["id"]
    r = run_kg(f"export trail --json {NOW}")
    assert r.exit_code == 0, r.stderr
    assert r.json["kept"] == [{"file": str(errors), "id": a, "reason": logs.DELETED}]
    after = errors.read_text()
    assert f"## [{a}]" not in after and after.count(f"## [{b}]") == after.count(f"## [{c}]") == 1
    said = run_kg(f"export trail {NOW}").stderr.splitlines(keepends=True)
    assert [ln for ln in said if not ln.startswith("Warning: this workspace's graph is a team graph")] == [
        f"{a} in {errors}: {logs.DELETED}\n"]
    assert errors.read_text() == after  # a second export changes nothing
    errors.unlink()  # a file removed whole is written again, every entry
    run_kg(f"export trail {NOW}")
    assert all(errors.read_text().count(f"## [{i}]") == 1 for i in (a, b, c))


def test_merge_leaves_out_what_kg_wrote_before():
    entry = {"id": "ERR-20261130-001", "entry_type": "error", "text": "disk full", "created_at": "2026-11-30T10:00",
             "priority": "high", "status": "pending"}
    report = logs.LearningsReport()
    gone = {entry["id"]}
    assert logs.merge_learnings("# Errors\n\n", "Errors", [entry], report=report, deleted=gone) == "# Errors\n\n"
    assert report.kept == [{"file": "", "id": entry["id"], "reason": logs.DELETED}] and report.appended == 0
    assert logs.merge_learnings(None, "Errors", [entry], deleted=gone) == "# Errors\n\n" + logs.learnings_entry(entry)


def test_an_entry_written_by_hand_is_reported_until_it_is_imported(run_kg, ws):
    """A QA pass: a hand-written entry (no kg mark, an id the graph does not hold) was kept but `kept` was empty
    and nothing was said, so nobody learned it lives only in that file."""
    run_kg(f"log learning '用户纠正：这个项目用 pnpm 而不是 npm' --category correction {NOW}")
    assert run_kg(f"export trail --learnings {NOW}").exit_code == 0
    lessons = ws.root / ".learnings" / "LEARNINGS.md"
    hand = ("\n## [LRN-20261204-001] correction:deploy_key\n\n**Logged**: 2026-12-04T09:00:00\n**Priority**: high\n"
            "**Status**: pending\n**Area**: infra\n\n### Summary\nhand-written entry\n\n---\n")
    with lessons.open("a", encoding="utf-8") as fh:
        fh.write(hand)
    before = lessons.read_text(encoding="utf-8")
    r = run_kg(f"export trail --learnings --json {NOW}")
    assert r.exit_code == 0, r.stderr
    assert r.json["kept"] == [{"file": str(lessons), "id": "LRN-20261204-001", "reason": logs.NOT_IN_GRAPH}]
    assert f"LRN-20261204-001 in {lessons}: {logs.NOT_IN_GRAPH}\n" in r.stderr
    assert lessons.read_text(encoding="utf-8") == before  # kept as it is
    imported = run_kg(f"import trail {lessons} --json {NOW}")
    assert imported.exit_code == 0 and imported.json["entries"] == 1, imported.stdout + imported.stderr
    again = run_kg(f"export trail --learnings --json {NOW}")
    assert again.exit_code == 0, again.stderr
    assert again.json["kept"] == [{"file": str(lessons), "id": "LRN-20261204-001", "reason": logs.UNMARKED}]


def test_export_trail_says_what_a_team_graph_leaves_out(run_kg, ws):
    """QA6 #5: on a team graph the trail carries no lifecycle (changes, proposals, blocks), and `kg export trail`
    printed the same line as a full one. It says so now; an embedded workspace's trail has it all and no warning.
    (Runs on both backends: tests/conftest.py KG_TEST_STORE.)"""
    run_kg(f"log error 'disk full on the build box' {NOW}")
    done = run_kg(f"export trail --json {NOW}")
    assert done.exit_code == 0, done.stderr
    if ws.store_url is not None:
        assert "Warning: this workspace's graph is a team graph" in done.stderr
        assert done.json["warnings"] and "not the applied changes" in done.json["warnings"][0]
    else:
        assert done.json["warnings"] == [] and "Warning" not in done.stderr
