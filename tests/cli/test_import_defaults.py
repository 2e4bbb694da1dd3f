"""`kg import trail` keeps an entry whose priority, status or category kg does not know, with the kind's default,
and says so (QA pass: `"priority": "urgent"` became medium without a word)."""

from __future__ import annotations

import json


def test_an_unknown_vocabulary_value_is_kept_with_the_default_and_said(ws, run_kg, tmp_path):
    trail = tmp_path / "trail.json"
    entries = [{"id": f"LRN-20261101-00{i}", "type": "learning", "summary": f"lesson {i}", "priority": p,
                "timestamp": "2026-11-01T10:00:00"} for i, p in enumerate(["urgent", "urgent", "high"], 1)]
    trail.write_text(json.dumps({"entries": entries}), encoding="utf-8")
    done = run_kg(f"import trail {trail} --json")
    assert done.exit_code == 0, done.stderr
    assert done.json["entries"] == 3 and done.json["defaulted"] == {"priority 'urgent'": 2}
    assert "Warning: priority 'urgent' is not a value kg knows: 2 entries took the kind's default" in done.stderr
    shown = run_kg("show LRN-20261101-001 --json").json["node"]
    assert shown["priority"] == "medium"
    assert run_kg("show LRN-20261101-003 --json").json["node"]["priority"] == "high"
