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


def test_a_byte_order_mark_at_the_start_is_taken(ws, run_kg, tmp_path):
    """A JSON-lines file saved by a Windows editor starts with a UTF-8 byte order mark: its first line was
    "not JSON (Unexpected UTF-8 BOM)", exit 2, from a file and from stdin alike."""
    body = "\n".join(json.dumps({"kind": "error", "summary": s}) for s in ("npm ci failed", "pnpm install hung"))
    lines = tmp_path / "windows.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8") + b"\r\n")
    from_file = run_kg(f"ingest {lines} --json")
    assert from_file.exit_code == 0, from_file.stderr
    assert from_file.json["logged"] == 2
    from_stdin = run_kg("ingest - --json", input="\ufeff" + body + "\n")
    assert from_stdin.exit_code == 0, from_stdin.stderr
    ids = from_file.json["ids"] + from_stdin.json["ids"]
    texts = sorted(run_kg(f"show {i} --json").json["node"]["text"] for i in ids)
    assert texts == ["npm ci failed", "npm ci failed", "pnpm install hung", "pnpm install hung"]
