"""Each member of a pattern made from near-duplicates names its own partner and the words the two share (QA3 #2):
every earlier member took the new event's reason, so on a chatty history the first said it was a "near-duplicate
of" itself and the rest named an event they did not resemble, on words they did not hold."""

from __future__ import annotations

import json

DISK = "docker build failed: disk quota exceeded on the runner"
FIXTURE = "pytest crashed: fixture database timeout in conftest"
BOTH = "docker build disk quota exceeded, then pytest fixture database timeout"


def test_each_member_of_a_new_pattern_names_its_own_partner_and_shared_words(ws, run_kg, tmp_path):
    lines = tmp_path / "in.jsonl"
    lines.write_text("\n".join(json.dumps({"kind": "error", "summary": s, "area": "tooling", "at": at}) for s, at in (
        (DISK, "2026-05-01T10:00:00"), (FIXTURE, "2026-05-02T10:00:00"), (BOTH, "2026-05-03T10:00:00"))) + "\n",
        encoding="utf-8")
    done = run_kg(f"ingest {lines} --json")
    assert done.exit_code == 0, done.stderr
    disk, fixture, both = done.json["ids"]
    (pattern,) = run_kg("patterns --json").json
    members = {m["id"]: m["reason"] for m in run_kg(f"patterns show {pattern['key']} --json").json["members"]}
    # the two earlier events are near the new one, not near each other: the pattern takes the first and those
    # near it (QA4 #10: a chain through the new event joined the fixture timeout to the disk quota), and each
    # member names its own partner, on its own words
    assert set(members) == {disk, both} and fixture not in members
    assert members[disk].startswith(f"near-duplicate of {both}: shared build, disk, docker"), members
    assert members[both].startswith(f"near-duplicate of {disk}: shared build, disk, docker"), members
