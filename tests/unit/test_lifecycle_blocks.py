"""The marked-block editor: human text byte for byte, reversible inserts, human edits flagged. No database."""

from __future__ import annotations

import pytest

from kg.lifecycle import blocks

NAME = "kaizen-kg"
B = blocks.BEGIN.format(name=NAME)
E = blocks.END.format(name=NAME)


def sync(current, desired, *, state=None, section="", force=False):
    state = state or {}
    return blocks.plan_sync(current, NAME, desired, expected_hash=state.get("hash"), glue=state.get("glue", ""),
                            created_file=state.get("created", False), section=section, force=force)


@pytest.mark.parametrize("current,section,expected_text,glue", [
    (None, "", f"{B}\n- a\n{E}\n", ""),
    (None, "## Rules", f"## Rules\n\n{B}\n- a\n{E}\n", "## Rules\n\n"),
    ("", "", f"{B}\n- a\n{E}\n", ""),
    ("# T\n", "", f"# T\n\n{B}\n- a\n{E}\n", "\n"),
    ("# T", "", f"# T\n\n{B}\n- a\n{E}\n", "\n\n"),
    ("# T\n\n", "", f"# T\n\n{B}\n- a\n{E}\n", ""),
    ("# T\n", "## Rules", f"# T\n\n## Rules\n\n{B}\n- a\n{E}\n", "\n## Rules\n\n"),
    ("# T\n## Rules\nhuman\n", "## Rules", f"# T\n## Rules\n{B}\n- a\n{E}\nhuman\n", ""),
    ("a\r\nb\r\n", "", f"a\r\nb\r\n\r\n{B}\r\n- a\r\n{E}\r\n", "\r\n"),
])
def test_insert_then_remove_restores_bytes(current, section, expected_text, glue):
    plan = sync(current, "- a\n", section=section)
    assert plan.text == expected_text and plan.glue == glue
    assert plan.action == ("create" if current is None else "insert")
    state = {"hash": plan.hash, "glue": plan.glue, "created": plan.action == "create"}
    back = sync(plan.text, None, state=state)
    if current is None:
        assert back.action == "delete"
    else:
        assert back.action == "remove" and back.text == current


def test_update_keeps_every_byte_outside():
    text = f"top \xe9 text\n{B}\n- a\n{E}\ntail without newline"
    plan = sync(text, "- a\n- b\n", state={"hash": blocks.digest("- a\n")})
    assert plan.action == "update"
    assert plan.text == f"top \xe9 text\n{B}\n- a\n- b\n{E}\ntail without newline"


def test_no_change_is_none():
    text = f"x\n{B}\n- a\n{E}\n"
    assert sync(text, "- a\n", state={"hash": blocks.digest("- a\n")}).action == "none"


@pytest.mark.parametrize("inner,desired,action", [
    ("- a\n- mine\n", "- a\n- b\n", "flag"),      # human edit inside: flagged
    ("- a\n- mine\n", None, "flag"),              # even when kg wants the block gone
    ("- a\n- b\n", "- a\n- b\n", "none"),         # the edit equals what kg wants: accepted
])
def test_human_edit_inside_is_flagged(inner, desired, action):
    text = f"x\n{B}\n{inner}{E}\n"
    plan = sync(text, desired, state={"hash": blocks.digest("- a\n")})
    assert plan.action == action
    if action == "flag":
        assert "human edited" in plan.reason and plan.text is None


def test_force_overwrites_a_human_edit_inside_only():
    text = f"x\n{B}\n- mine\n{E}\ny\n"
    plan = sync(text, "- a\n", state={"hash": blocks.digest("- a\n")}, force=True)
    assert plan.text == f"x\n{B}\n- a\n{E}\ny\n"


def test_block_removed_by_hand_is_flagged():
    plan = sync("x\n", "- a\n", state={"hash": blocks.digest("- a\n")})
    assert plan.action == "flag" and "removed" in plan.reason


def test_damaged_markers_are_flagged():
    plan = sync(f"x\n{B}\n- a\n", "- a\n", state={})
    assert plan.action == "flag" and "damaged" in plan.reason


def test_glue_edited_by_hand_is_left_alone():
    plan = sync("# T\n", "- a\n", section="## Rules")
    edited = plan.text.replace("## Rules", "## My rules")
    back = sync(edited, None, state={"hash": plan.hash, "glue": plan.glue})
    assert back.text == "# T\n\n## My rules\n\n"


def test_file_io_round_trip_keeps_non_utf8_bytes(tmp_path):
    path = tmp_path / "TOOLS.md"
    raw = b"caf\xe9 latin-1 line\n"
    path.write_bytes(raw)
    plan = sync(blocks.read(path), "- a\n")
    blocks.apply(path, plan)
    back = sync(blocks.read(path), None, state={"hash": plan.hash, "glue": plan.glue})
    blocks.apply(path, back)
    assert path.read_bytes() == raw
