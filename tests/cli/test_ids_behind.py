"""QA3 #2: a readable memory/.kg/ids.json behind what the workspace holds (a backup of it restored, a copy made while
a log ran) gave out an id another entry had: `kg log --json` answered ERR-...-002 and the applier kept the entry as
-005, silently, so `kg show` and `kg resolve` of the answered id acted on another entry; `kg doctor` said the file
"is readable". A counter now goes on past the ids the side index and the journal hold before it gives out its first
id in a process, and `kg doctor` finds a counter behind (and raises it; `--dry-run` says it)."""

from __future__ import annotations

import json

import pytest

NOW = "2026-12-01T10:00:00"


def _log(run_kg, text: str, *more: str) -> dict:
    r = run_kg(["--now", NOW, "log", "error", text, "--json", *more])
    assert r.exit_code == 0, r.stderr
    return r.json


def _shown(run_kg, entry_id: str) -> str:
    r = run_kg(["--now", NOW, "show", entry_id, "--json"])
    assert r.exit_code == 0, r.stderr
    return r.json["text"] if "text" in r.json else r.json["node"]["text"]


@pytest.mark.embedded_only("the ids a restored ids.json is behind are read from the embedded store's side index")
def test_the_id_kg_log_answers_is_the_one_stored_when_ids_json_was_restored_from_a_backup(ws, run_kg):
    first = _log(run_kg, "first", "--wait")["id"]
    backup = (ws.kg_dir / "ids.json").read_bytes()
    later = [_log(run_kg, f"entry {n}", "--wait")["id"] for n in (2, 3, 4)]
    (ws.kg_dir / "ids.json").write_bytes(backup)
    answered = _log(run_kg, "NEW ENTRY")["id"]  # as the agent logs: answered once durable
    day = first.rsplit("-", 1)[0]
    assert answered == f"{day}-005" and answered not in [first, *later], answered  # (before: -002, stored as -005)
    assert _shown(run_kg, answered) == "NEW ENTRY"
    assert [_shown(run_kg, i) for i in later] == ["entry 2", "entry 3", "entry 4"]
    assert json.loads((ws.kg_dir / "ids.json").read_text())[day] == 5


def test_ids_still_in_the_journal_count_too(ws, run_kg):
    """A copy made mid-log: the journal holds entries acknowledged after the ids.json it carries."""
    first = _log(run_kg, "first", "--wait")["id"]
    backup = (ws.kg_dir / "ids.json").read_bytes()
    queued = [ws.log("error", f"queued {n}", now=NOW, apply=False).id for n in (1, 2)]  # durable, not applied
    (ws.kg_dir / "ids.json").write_bytes(backup)
    answered = _log(run_kg, "after the copy", "--wait")["id"]
    assert answered not in [first, *queued], (answered, queued)
    assert _shown(run_kg, answered) == "after the copy"
    assert [_shown(run_kg, i) for i in queued] == ["queued 1", "queued 2"]


@pytest.mark.embedded_only("the ids a restored ids.json is behind are read from the embedded store's side index")
def test_doctor_finds_a_counter_behind_says_it_in_a_dry_run_and_raises_it(ws, run_kg):
    first = _log(run_kg, "first", "--wait")["id"]
    day = first.rsplit("-", 1)[0]
    backup = (ws.kg_dir / "ids.json").read_bytes()
    for n in (2, 3):
        _log(run_kg, f"entry {n}", "--wait")
    for args in (["doctor", "--json"], ["doctor", "--repair", "--json"]):
        (ws.kg_dir / "ids.json").write_bytes(backup)
        dry = run_kg(["doctor", "--dry-run", "--json"])
        check = next(c for c in dry.json["checks"] if c["name"] == "ids")
        assert check["status"] == "error" and f"{day} at 1, an entry has 3" in check["detail"], check
        assert (ws.kg_dir / "ids.json").read_bytes() == backup  # a dry run changes nothing
        r = run_kg(args)
        assert r.exit_code == 0, r.stderr
        check = next(c for c in r.json["checks"] if c["name"] == "ids")
        assert check["status"] == "repaired" and "raised past them" in check["detail"], check
        assert json.loads((ws.kg_dir / "ids.json").read_text())[day] == 3
    again = run_kg(["doctor", "--json"])
    check = next(c for c in again.json["checks"] if c["name"] == "ids")
    assert check["status"] == "ok", check
