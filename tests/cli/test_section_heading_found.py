"""A section heading kg inserts its block under is found on the file's last line without a line ending, and on its
first line after a UTF-8 BOM: kg inserts under it, and appends no second identical heading (QA1 #6). The BOM, the
line endings and every other byte stay as they were. The real CLI on a real MEMORY.md."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.baseline_wait_off("a principle promoted on a workspace's first days")

HEADING = b"## Self-Improvement Principles"


def _promote_a_principle(run_kg) -> dict:
    for s in (1, 2):
        assert run_kg(f"session start --now 2026-11-2{s}T09:00:00").exit_code == 0
        for i in (1, 2):
            r = run_kg(["log", "learning", "Caching the API client halves latency", "--category", "insight",
                        "--pattern-key", "perf.cache_client", "--action", "Reuse one API client per process",
                        "--now", f"2026-11-2{s}T09:1{i}:00"])
            assert r.exit_code == 0, r.stderr
        assert run_kg(f"session end --summary x --now 2026-11-2{s}T17:00:00").exit_code == 0
    r = run_kg("cycle --json --now 2026-11-23T06:15:00")
    assert r.exit_code == 0, r.stderr
    return r.json


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("before, expected", [
    (b"# Memory\n\n- human fact\n\n" + HEADING, b"# Memory\n\n- human fact\n\n" + HEADING + b"\n<BLOCK>"),  # last line
    (BOM + HEADING + b"\r\n\r\n- human fact\r\n", BOM + HEADING + b"\r\n<BLOCK>\r\n- human fact\r\n"),  # BOM, CRLF
    (BOM + HEADING, BOM + HEADING + b"\n<BLOCK>"),  # both
], ids=["last-line", "bom-crlf", "bom-last-line"])
def test_the_heading_is_found_and_no_second_one_is_appended(ws, run_kg, before, expected):
    memory = ws.root / "MEMORY.md"
    memory.write_bytes(before)
    d = _promote_a_principle(run_kg)
    assert [(f["path"], f["action"]) for f in d["files"]] == [("MEMORY.md", "insert")], d["files"]
    after = memory.read_bytes()
    block = re.search(rb"<!-- kaizen-kg:begin .*?<!-- kaizen-kg:end \S+ -->\r?\n", after, re.S)
    assert block and b"Reuse one API client per process" in block[0], after
    assert after == expected.replace(b"<BLOCK>", block[0])  # one heading; BOM and line endings as they were


@pytest.mark.parametrize("before", [b"# Memory\n\n" + HEADING, BOM + HEADING + b"\r\n\r\n- fact\r\n", BOM + HEADING],
                         ids=["last-line", "bom-crlf", "bom-last-line"])
def test_removing_the_block_again_restores_the_file_byte_for_byte(before):
    from kg.lifecycle import blocks

    text = before.decode("utf-8", "surrogateescape")
    section = HEADING.decode()
    ins = blocks.plan_sync(text, "kaizen-kg", "- a rule\n", expected_hash=None, glue="", created_file=False,
                           section=section)
    assert ins.action == "insert" and ins.text is not None and ins.text.count(section) == 1
    gone = blocks.plan_sync(ins.text, "kaizen-kg", None, expected_hash=ins.hash, glue=ins.glue, created_file=False)
    assert gone.action == "remove" and gone.text == text
