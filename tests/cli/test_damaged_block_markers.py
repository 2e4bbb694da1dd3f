"""A kg block cut short (its end marker gone) is a flag, not a crash: `kg status`, `kg cycle` (text and JSON),
`kg verify` and the session-start hook go on and say what `kg doctor` says, that the block is damaged and kg leaves
it alone (a QA pass: each of them failed with "unexpected failure: BlockError" once a live rule's block was cut,
after the cycle's writes, so `kg cycle --json` printed no report). Real CLI, real files, the demo's real graph."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import kg_runner

# a team graph stays on the server, so a copy of the demo's folder has no rules (test_workspace_writes.py)
pytestmark = pytest.mark.embedded_only("copies the demo workspace's Kùzu file")

DAMAGED = "the kg block markers for 'kaizen-kg' are damaged (1 begin, 0 end)"


@pytest.fixture
def cut(demo_built, tmp_path):
    """A copy of the demo whose TOOLS.md kg block stops in the middle of its first line (no end marker)."""
    root = tmp_path / "ws"
    shutil.copytree(demo_built[0], root, symlinks=True)
    tools = root / "TOOLS.md"
    text = tools.read_text(encoding="utf-8")
    begin = text.index("<!-- kaizen-kg:begin kaizen-kg -->\n") + len("<!-- kaizen-kg:begin kaizen-kg -->\n")
    assert text[begin:].startswith("- ")  # a live rule of the demo
    tools.write_text(text[:begin + 8], encoding="utf-8")
    return root, demo_built[1], kg_runner(root)


def _flagged(flags: list[dict]) -> list[dict]:
    return [f for f in flags if f["path"] == "TOOLS.md" and f["block"] == "kaizen-kg" and DAMAGED in f["flag"]]


def test_status_cycle_and_verify_flag_a_cut_block_and_go_on(cut):
    root, now, run_kg = cut
    before = (root / "TOOLS.md").read_bytes()
    status = run_kg(f"status --now {now}")
    assert status.exit_code == 0, status.stderr
    assert f"TOOLS.md [kaizen-kg]: {DAMAGED}; kg leaves the block alone" in status.stdout
    data = run_kg(f"status --json --now {now}")
    assert data.exit_code == 0, data.stderr
    assert len(_flagged(data.json["lifecycle"]["flags"])) == 1
    paused = [v for v in data.json["lifecycle"]["verifications_paused"] if v["target"] == "TOOLS.md"]
    assert paused and {v["how"] for v in paused} == {"damaged"}

    assert run_kg(f"verify --dry-run --now {now}").exit_code == 0
    cycled = run_kg(f"cycle --json --now {now}")
    assert cycled.exit_code == 0, cycled.stderr
    report = json.loads(cycled.stdout)  # the report, printed after the cycle's writes
    assert len(_flagged(report["flags"])) == 1
    again = run_kg(f"cycle --now {now}")
    assert again.exit_code == 0, again.stderr
    assert f"⚠️  TOOLS.md: {DAMAGED}" in again.stdout
    assert (root / "TOOLS.md").read_bytes() == before  # kg left the damaged block alone


def test_the_session_start_hook_gives_its_brief_beside_a_cut_block(cut):
    root, now, run_kg = cut
    r = run_kg(f"hook session-start --runtime codex --now {now}")
    assert r.exit_code == 0, r.stderr
    brief = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert brief.startswith("# kaizen-kg brief")


def test_doctor_finds_an_end_marker_above_its_begin_as_the_others_do(ws, run_kg):
    """(QA5 #3) Swapped markers: export, cycle and status said "damaged (1 begin, 1 end)", `kg doctor` said ✅
    (it counted the markers, one each, and never asked their order)."""
    (ws.root / "MEMORY.md").write_text("# My notes\nhuman line A\n<!-- kaizen-kg:end kaizen-kg -->\n- a rule\n"
                                       "<!-- kaizen-kg:begin kaizen-kg -->\n", encoding="utf-8")
    from kg.lifecycle.blocks import BlockError, find

    with pytest.raises(BlockError, match=r"damaged \(1 begin, 1 end\)"):  # what export, cycle and status ask
        find((ws.root / "MEMORY.md").read_text(encoding="utf-8"), "kaizen-kg")
    r = run_kg(["doctor", "--json"])
    blocks = next(c for c in r.json["checks"] if c["name"] == "blocks")
    assert r.exit_code == 1 and blocks["status"] == "error", blocks
    assert "MEMORY.md [kaizen-kg]" in blocks["detail"] and "one begin line and one end line after it" in \
        blocks["detail"]
