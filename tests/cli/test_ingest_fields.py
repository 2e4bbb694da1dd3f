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
    from_stdin = run_kg("ingest - --again --json", input="\ufeff" + body + "\n")  # the same lines again
    assert from_stdin.exit_code == 0, from_stdin.stderr
    ids = from_file.json["ids"] + from_stdin.json["ids"]
    texts = sorted(run_kg(f"show {i} --json").json["node"]["text"] for i in ids)
    assert texts == ["npm ci failed", "npm ci failed", "pnpm install hung", "pnpm install hung"]


def test_a_list_field_given_as_text_is_split_on_commas_and_any_other_type_is_refused(ws, run_kg, tmp_path):
    """QA3 #3: `"tags": "alpha,beta"` was stored as ten one-letter tags (the string iterated), a path in `files` as
    one entry per character, a 300-character tag text refused as "too many tags (300...)", and `{"a": 1}` stored
    as its key. A text is split on commas as `kg log --tags a,b --files x,y` splits it; any other type is refused,
    naming the line and the field, before anything is written."""
    lines = tmp_path / "in.jsonl"
    lines.write_text("\n".join(json.dumps(e) for e in (
        {"kind": "learning", "summary": "t", "tags": "alpha, beta"},
        {"kind": "learning", "summary": "f", "files": "src/app.py"},
        {"kind": "learning", "summary": "g", "files": ["a.py", "b.py"], "tags": ["x" * 300]},
    )) + "\n", encoding="utf-8")
    done = run_kg(f"ingest {lines} --json")
    assert done.exit_code == 0, done.stderr
    nodes = [run_kg(f"show {i} --json").json["node"] for i in done.json["ids"]]
    assert [(n["tags"], n["files"]) for n in nodes] == [
        (["alpha", "beta"], []), ([], ["src/app.py"]), (["x" * 300], ["a.py", "b.py"])]

    for field, value, said in (("tags", {"a": 1}, "tags is an object"), ("files", 5, "files is a number"),
                               ("tags", ["ok", 2], "tags holds a number"), ("files", [None], "files holds null")):
        lines.write_text(json.dumps({"kind": "learning", "summary": "first"}) + "\n\n"
                         + json.dumps({"kind": "learning", "summary": "bad", field: value}) + "\n", encoding="utf-8")
        bad = run_kg(f"ingest {lines}")
        assert bad.exit_code == 2, (field, value, bad.stdout)
        assert f"{lines}:3: {said}" in bad.stderr and "Traceback" not in bad.stderr  # its line, past a blank one
    assert "first" not in {r["text"] for r in run_kg("list --json").json}  # nothing of a refused batch was written


def test_an_imported_entry_with_a_list_field_of_another_type_is_skipped_and_said(ws, run_kg, tmp_path):
    """The import read a text of tags as kg log does, but took an object as no tags and a list's numbers as
    text: it is skipped, the warning naming its id and the field, as any entry `prepare` refuses."""
    trail = tmp_path / "trail.json"
    entries = [{"id": "LRN-20261101-001", "type": "learning", "summary": "kept", "tags": "alpha,beta",
                "files": "src/app.py", "timestamp": "2026-11-01T10:00:00"},
               {"id": "LRN-20261101-002", "type": "learning", "summary": "object tags", "tags": {"a": 1},
                "timestamp": "2026-11-01T10:00:00"}]
    trail.write_text(json.dumps({"entries": entries}), encoding="utf-8")
    done = run_kg(f"import trail {trail} --json")
    assert done.exit_code == 0, done.stderr
    assert done.json["entries"] == 1
    assert "LRN-20261101-002: tags is an object" in done.stderr
    node = run_kg("show LRN-20261101-001 --json").json["node"]
    assert (node["tags"], node["files"]) == (["alpha", "beta"], ["src/app.py"])


def test_the_same_input_again_logs_nothing_unless_asked(ws, run_kg, tmp_path):
    """QA5 #3: a bulk ingest killed after its entries were journaled (an agent's shell timeout; it printed nothing)
    and run again stored every entry twice: 600 lines became 1,200 entries and every pattern's count doubled. The
    same lines again are answered with what they gave the first time; --again logs them a second time; other lines,
    or the same lines for another session, are another input."""
    lines = tmp_path / "in.jsonl"
    lines.write_text("\n".join(json.dumps({"kind": "error", "summary": f"npm ci failed {n}",
                                           "at": "2026-12-01T10:00:00"}) for n in range(3)) + "\n", encoding="utf-8")
    first = run_kg(f"ingest {lines} --json")
    assert first.exit_code == 0, first.stderr
    again = run_kg(f"ingest {lines} --json")
    assert again.exit_code == 0, again.stderr
    assert again.json["logged"] == 0 and again.json["already"]["entries"] == 3
    assert again.json["already"]["first"] == first.json["ids"][0] and "--again" in again.stderr
    assert len(run_kg("list --type event --limit 0 --json").json) == 3
    assert run_kg(f"ingest {lines} --session other --json").json["logged"] == 3
    assert run_kg(f"ingest {lines} --again --json").json["logged"] == 3
    lines.write_text(lines.read_text(encoding="utf-8") + json.dumps({"kind": "error", "summary": "x"}) + "\n",
                     encoding="utf-8")
    assert run_kg(f"ingest {lines} --json").json["logged"] == 4
    assert len(run_kg("list --type event --limit 0 --json").json) == 13
