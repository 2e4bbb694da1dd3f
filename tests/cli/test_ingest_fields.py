"""`kg ingest` takes a line's fields as `kg log` names them (QA pass): `{"error": ...}` failed with "unknown
field(s): error" though README says any `kg log` field works (its flag is --error, the field error_text), and the
message listed no field that works."""

from __future__ import annotations

import json


def test_flag_named_fields_are_taken_and_a_wrong_one_lists_the_fields(ws, run_kg, tmp_path):
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps({"kind": "error", "summary": "npm ci failed", "error": "EINTEGRITY sha512 mismatch",
                                 "pattern-key": "npm.integrity"}) + "\n", encoding="utf-8")
    done = run_kg(f"ingest {lines} --json")
    assert done.exit_code == 0, done.stderr
    (eid,) = done.json["ids"]
    node = run_kg(f"show {eid} --json").json["node"]
    assert node["error_text"] == "EINTEGRITY sha512 mismatch" and node["pattern_key"] == "npm.integrity"

    lines.write_text(json.dumps({"kind": "error", "summary": "x", "eror": "typo"}) + "\n", encoding="utf-8")
    bad = run_kg(f"ingest {lines}")
    assert bad.exit_code == 2
    assert "unknown field(s): eror" in bad.stderr and "details" in bad.stderr and "error_text" in bad.stderr
