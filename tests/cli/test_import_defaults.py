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


def test_a_trail_saved_with_a_byte_order_mark_is_imported(ws, run_kg, tmp_path):
    """A trail JSON or LEARNINGS.md saved by a Windows editor starts with a UTF-8 byte order mark: the JSON was
    refused as "not valid JSON" and a markdown file's first entry could be lost to its glued first line."""
    entry = {"id": "LRN-20261101-001", "type": "learning", "summary": "saved with a BOM",
             "timestamp": "2026-11-01T10:00:00"}
    trail = tmp_path / "trail.json"
    trail.write_bytes(b"\xef\xbb\xbf" + json.dumps({"entries": [entry]}).encode("utf-8"))
    done = run_kg(f"import trail {trail} --json")
    assert done.exit_code == 0 and done.json["entries"] == 1, done.stderr
    assert "saved with a BOM" in run_kg("show LRN-20261101-001 --json").stdout
    md = tmp_path / "LEARNINGS.md"
    md.write_bytes(b"\xef\xbb\xbf" + (
        b"## [LRN-20261102-001] testing\n\n**Logged**: 2026-11-02T10:00:00\n**Priority**: medium\n**Status**: pending\n"
        b"**Area**: tests\n\n### Summary\nmarkdown saved with a BOM\n\n---\n"))
    done = run_kg(f"import trail {md} --json")
    assert done.exit_code == 0 and done.json["entries"] == 1, done.stderr + done.stdout
