"""A writer killed (SIGKILL) after the journal's fsync acknowledged its entry and before it wrote the entry's readable
copies (QA8 #1/#2): the graph got the entry, the day's log never got its line, nor `.learnings` its entry; and a
`kg log` killed between its daily-log line and the day's repeats index made the next repeat a second line instead
of a count. The next holder of the journal lock writes the missing copies (kg/ingest/copies.py), once; the index is
written before the line. The real console entry, killed at the named function."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

KILLED_AT = """
import importlib, os, signal, sys
module, name = sys.argv.pop(1).split(":")
owner = importlib.import_module(module)
*path, name = name.split(".")
for part in path:
    owner = getattr(owner, part)
setattr(owner, name, lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))
from kg.cli.entry import main
sys.argv = ["kg", *sys.argv[1:]]
sys.exit(main())
"""
NOW = "2026-03-20T10:00:00"


def killed(root: Path, at: str, *args: str) -> None:
    env = {**os.environ, "KG_SERVER": "0", "KG_NOW": NOW}
    r = subprocess.run([sys.executable, "-c", KILLED_AT, at, "-w", str(root), *args], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == -signal.SIGKILL, (r.returncode, r.stderr)


def day(root: Path) -> list[str]:
    path = root / "memory" / "2026-03-20.md"
    return [x for x in path.read_text(encoding="utf-8").splitlines() if x.startswith("### ")] if path.exists() else []


def test_a_log_killed_before_its_daily_line_gets_it_from_the_next_command(ws, run_kg):
    (ws.root / ".learnings").mkdir()
    killed(ws.root, "kg.memory.logs:append_daily_lines", "log", "error", "make build failed: no foo.h", "--session",
           "s1")
    assert day(ws.root) == [] and not (ws.root / ".learnings" / "ERRORS.md").exists()  # what the kill leaves
    assert list((ws.root / "memory" / ".kg").glob("copying.*.json"))
    r = run_kg(f"log learning 'use pnpm, not npm' --now {NOW[:-3]}")
    assert r.exit_code == 0, r.stderr
    assert day(ws.root) == ["### ❌ 10:00 - Error: make build failed: no foo.h",
                            "### 💡 10:00 - Insight: use pnpm, not npm"]
    assert "make build failed: no foo.h" in (ws.root / ".learnings" / "ERRORS.md").read_text(encoding="utf-8")
    assert not list((ws.root / "memory" / ".kg").glob("copying.*.json"))
    texts = [e["text"] for e in run_kg("list --json").json]
    assert sorted(texts) == ["make build failed: no foo.h", "use pnpm, not npm"]
    run_kg(f"log learning 'another one' --now {NOW[:-3]}")  # finished once: no second line
    assert day(ws.root).count("### ❌ 10:00 - Error: make build failed: no foo.h") == 1


def test_a_log_killed_after_its_copies_leaves_them_as_they_are(ws, run_kg):
    """Killed after the day's log and `.learnings` were written (before the note was removed): nothing twice."""
    (ws.root / ".learnings").mkdir()
    killed(ws.root, "kg.ingest.copies:_unlink_note", "log", "error", "npm test failed: jest not found")
    assert list((ws.root / "memory" / ".kg").glob("copying.*.json"))
    assert run_kg(f"log learning 'something else' --now {NOW[:-3]}").exit_code == 0
    assert day(ws.root).count("### ❌ 10:00 - Error: npm test failed: jest not found") == 1
    errors = (ws.root / ".learnings" / "ERRORS.md").read_text(encoding="utf-8")
    assert errors.count("npm test failed: jest not found") == 1, errors


def test_an_entry_never_journaled_gets_no_copy(ws, run_kg):
    """Killed before the journal's append: the entry was never acknowledged, so no line is written for it."""
    killed(ws.root, "kg.ingest.journal:Journal.append", "log", "error", "never acknowledged")
    assert run_kg(f"log learning 'the next entry' --now {NOW[:-3]}").exit_code == 0
    assert day(ws.root) == ["### 💡 10:00 - Insight: the next entry"]
    assert [e["text"] for e in run_kg("list --json").json] == ["the next entry"]


def test_an_ingest_killed_before_its_daily_lines_gets_them_from_its_rerun(ws, run_kg, tmp_path):
    rows = [{"kind": "error", "summary": "pytest failed: database not running", "at": "2026-03-20T10:00:00",
             "session": "s1"},
            {"kind": "learning", "summary": "use pnpm not npm", "at": "2026-03-20T10:05:00", "session": "s1"}]
    src = tmp_path / "history.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    killed(ws.root, "kg.memory.logs:append_daily_lines", "ingest", str(src))
    r = run_kg(f"ingest {src} --now 2026-03-25T12:00")
    assert r.exit_code == 0 and "nothing logged again" in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert day(ws.root) == ["### ❌ 10:00 - Error: pytest failed: database not running",
                            "### 💡 10:05 - Insight: use pnpm not npm"]


def test_a_log_killed_before_the_repeats_index_still_folds_the_next_repeats(ws, run_kg):
    killed(ws.root, "kg.memory.logs:_prune_index", "log", "error", "npm test failed: jest not found", "--session",
           "s1")
    for minute in ("01", "02"):
        r = run_kg(f"log error 'npm test failed: jest not found' --session s1 --now 2026-03-20T10:{minute}")
        assert r.exit_code == 0, r.stderr
    assert day(ws.root) == ["### ❌×3 10:00 - Error: npm test failed: jest not found"]


def test_a_copy_that_failed_after_the_append_is_written_by_the_next_command(ws, run_kg, monkeypatch):
    """(review M4) A writer that raised after the journal's fsync (a full disk at the daily log, Ctrl-C) removed its
    note on the way out: the entry reached the graph, its daily-log line never came. And (QA10) `kg log` said it
    failed, exit 1, for an entry the journal held: a caller would log it twice. It is acknowledged with a warning;
    its note is kept as an acknowledged writer's, so the copy comes once the disk has room, after the drain too."""
    import errno

    from kg.memory import logs

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "memory/2026-03-20.md")

    monkeypatch.setattr(logs, "append_daily_lines", full)
    r = run_kg(f"log error 'make build failed: no bar.h' --now {NOW[:-3]}")
    # the entry is acknowledged: exit 0 and its id (exit 1 "nothing half-written was kept" had it logged twice)
    assert r.exit_code == 0 and "ERR-20260320-001" in r.stdout, r.stderr
    said = "could not write memory/2026-03-20.md now (the disk is full); kg writes it once the disk has room"
    assert said in r.stderr, r.stderr
    assert run_kg("list --json").exit_code == 0  # a drain, a sweep: the copy fails again and its note stays
    assert len(list((ws.root / "memory" / ".kg").glob("copying.*.acked.json"))) == 1
    monkeypatch.undo()
    assert run_kg(f"log learning 'after the disk was freed' --now {NOW[:-3]}").exit_code == 0
    assert day(ws.root) == ["### ❌ 10:00 - Error: make build failed: no bar.h",
                            "### 💡 10:00 - Insight: after the disk was freed"]


def test_an_entry_written_whose_id_could_not_be_noted_is_not_written_again(ws, run_kg, monkeypatch):
    """(review of the acknowledged note) `.learnings` got the entry, then the disk filled before its id was noted as
    written: the kept note had every later lock holder append the same entry again."""
    import errno

    from kg.memory import logs

    (ws.root / ".learnings").mkdir(exist_ok=True)

    def full(root, ids):
        raise OSError(errno.ENOSPC, "No space left on device", str(root / logs.WRITTEN))

    monkeypatch.setattr(logs, "_note_written", full)
    assert run_kg(f"log learning 'use the shared venv' --now {NOW[:-3]}").exit_code == 0
    assert run_kg(f"log learning 'and pin its python' --now {NOW[:-3]}").exit_code == 0
    monkeypatch.undo()
    for text in ("once the disk has room", "and again"):
        assert run_kg(f"log learning '{text}' --now {NOW[:-3]}").exit_code == 0
    text = (ws.root / ".learnings" / "LEARNINGS.md").read_text(encoding="utf-8")
    assert [text.count(f"[LRN-20260320-00{i}]") for i in (1, 2, 3, 4)] == [1, 1, 1, 1], text
    assert not list((ws.root / "memory" / ".kg").glob("copying.*"))


def test_a_copy_cut_short_by_a_full_disk_leaves_no_torn_line(tmp_path):
    """A nearly full disk takes part of a write and says nothing: the line was cut with no warning and no note.
    The rest is written or fails, and a failed line is taken back whole."""
    import errno

    from kg.memory import logs

    path = tmp_path / "day.md"
    path.write_text("### first\n", encoding="utf-8")
    real, calls = os.write, []

    def part_then_full(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data[:5]))
        raise OSError(errno.ENOSPC, "No space left on device")

    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(logs.os, "write", part_then_full)
        with pytest.raises(OSError) as exc:
            logs.append_text(path, "### second line\n")
    assert exc.value.filename == str(path) and path.read_text(encoding="utf-8") == "### first\n"
    logs.append_text(path, "### second line\n")
    assert path.read_text(encoding="utf-8") == "### first\n### second line\n"
