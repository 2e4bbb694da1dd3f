"""A repeat (the same entry again in the same session and day: an agent retrying a failing command) folds into the
daily-log line and the `.learnings` entry it repeats, as a count, instead of being written again; the graph keeps
every event, `kg export trail` renders the same fold, and a person's edit stops the folding into that text."""

from __future__ import annotations

import json

from kg.memory import logs


def _log(run_kg, text: str, at: str, *extra: str) -> str:
    r = run_kg(["log", "error", text, "--json", "--now", f"2026-12-01T{at}", *extra])
    assert r.exit_code == 0, r.stderr
    return r.json["id"]


def test_repeats_in_a_session_fold_into_the_first_line_and_entry(run_kg, ws):
    (ws.root / ".learnings").mkdir()
    run_kg("session start --now 2026-12-01T10:00")
    first = _log(run_kg, "git push failed: no upstream branch", "10:35")
    # a retry's details differ (its tool call's id): still a repeat of the same failure
    again = [_log(run_kg, "git push failed: no upstream branch", at, "--details", f"Tool call id: call_{at}")
             for at in ("10:41", "10:52")]
    other = _log(run_kg, "npm ci failed: EACCES", "10:55")
    last = _log(run_kg, "git push failed: no upstream branch", "11:00")
    day = (ws.memory / "2026-12-01.md").read_text()
    assert day == ("# 2026-12-01\n\n### ❌×4 10:35 - Error: git push failed: no upstream branch\n"
                   "### ❌ 10:55 - Error: npm ci failed: EACCES\n")
    errors = (ws.root / ".learnings" / "ERRORS.md").read_text()
    assert errors.count("## [") == 2 and f"## [{other}]" in errors
    assert (f"- Repeats: 3 more: {again[0]} at 10:41, {again[1]} at 10:52, {last} at 11:00\n"
            "<!-- kaizen-kg:entry ") in errors
    # the graph keeps every event
    listed = run_kg("list --type error --json").json
    assert sorted(e["id"] for e in listed) == sorted([first, *again, other, last])
    # the export renders the same fold; a rebuilt file too
    run_kg("export trail --learnings --now 2026-12-01T12:00")
    exported = (ws.root / ".learnings" / "ERRORS.md").read_text()
    assert exported.count("## [") == 2 and "- Repeats: 3 more: " in exported
    (ws.root / ".learnings" / "ERRORS.md").unlink()
    run_kg("export trail --learnings --now 2026-12-01T12:00")
    assert (ws.root / ".learnings" / "ERRORS.md").read_text() == exported
    assert run_kg("export trail --learnings --json --now 2026-12-01T12:00").json["kept"] == []


def test_another_session_or_an_edited_line_is_not_folded_into(run_kg, ws):
    (ws.root / ".learnings").mkdir()
    run_kg("session start --now 2026-12-01T10:00")
    _log(run_kg, "pytest: connection refused", "10:00")
    run_kg("session end --summary 'first' --now 2026-12-01T10:30")
    run_kg("session start --now 2026-12-01T11:00")
    _log(run_kg, "pytest: connection refused", "11:05")  # another session: its own line
    day = ws.memory / "2026-12-01.md"
    assert day.read_text().count("- Error: pytest: connection refused\n") == 2
    # a person edits the session's line: kg appends the next repeat rather than touch their text
    day.write_text(day.read_text().replace("### ❌ 11:05 - Error: pytest: connection refused",
                                           "### ❌ 11:05 - Error: pytest: connection refused (the db was down)"))
    _log(run_kg, "pytest: connection refused", "11:10")
    text = day.read_text()
    assert "### ❌ 11:05 - Error: pytest: connection refused (the db was down)\n" in text
    assert text.endswith("### ❌ 11:10 - Error: pytest: connection refused\n")
    _log(run_kg, "pytest: connection refused", "11:20")
    assert day.read_text().endswith("### ❌×2 11:10 - Error: pytest: connection refused\n")
    errors = (ws.root / ".learnings" / "ERRORS.md").read_text()
    assert errors.count("## [") == 2 and errors.count("- Repeats: 2 more: ") == 1  # one entry per session


def test_ingest_folds_a_sessions_repeats_in_one_batch(run_kg, ws, tmp_path):
    (ws.root / ".learnings").mkdir()
    rows = [{"kind": "error", "summary": "edit failed: SEARCH block did not match", "session": "s1",
             "at": f"2026-12-01T09:0{i}"} for i in range(3)]
    rows.append({"kind": "error", "summary": "edit failed: SEARCH block did not match", "session": "s2",
                 "at": "2026-12-01T09:05"})
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = run_kg(["ingest", str(path), "--json"])
    assert r.exit_code == 0, r.stderr
    day = (ws.memory / "2026-12-01.md").read_text()
    assert day.count("edit failed") == 2 and "### ❌×3 09:00 - Error: edit failed" in day
    errors = (ws.root / ".learnings" / "ERRORS.md").read_text()
    assert errors.count("## [") == 2 and "- Repeats: 2 more: " in errors


def test_merge_folds_what_it_renders_and_keeps_entries_written_before_folding():
    base = {"entry_type": "error", "text": "disk full", "priority": "high", "status": "pending", "session": "s1"}
    a, b = ({**base, "id": f"ERR-20261201-00{i}", "created_at": f"2026-12-01T10:0{i}:00"} for i in (1, 2))
    folded = logs.merge_learnings(None, "Errors", [a, b])
    assert folded.count("## [") == 1 and "- Repeats: 1 more: ERR-20261201-002 at 10:02\n" in folded
    # a file from before: each entry on its own stays so, and nothing is appended twice
    before = "# Errors\n\n" + logs.learnings_entry(a) + logs.learnings_entry(b)
    assert logs.merge_learnings(before, "Errors", [a, b]) == before


def test_a_fold_killed_mid_write_is_put_back_before_the_next_write(run_kg, ws):
    """A fold rewrites only the end of a `.learnings` file, in place, keeping the bytes it replaces beside it first:
    a process killed mid-write leaves a torn end that the next write puts back from that copy."""
    (ws.root / ".learnings").mkdir()
    run_kg("session start --now 2026-12-01T10:00")
    _log(run_kg, "docker build failed: no space left on device", "10:00")
    errors = ws.root / ".learnings" / "ERRORS.md"
    whole = errors.read_bytes()
    at = whole.index(b"## [")
    # what a kill between the copy and the end of the in-place write leaves
    (ws.root / ".learnings" / ".kg-undo.ERRORS.md").write_bytes(b"%d\n" % at + whole[at:])
    errors.write_bytes(whole[:at] + b"## [ERR-2026120")
    other = _log(run_kg, "npm ci failed: EACCES", "10:05")
    text = errors.read_bytes()
    assert text.startswith(whole) and text.count(b"## [") == 2 and f"## [{other}]".encode() in text
    assert not (ws.root / ".learnings" / ".kg-undo.ERRORS.md").exists()
