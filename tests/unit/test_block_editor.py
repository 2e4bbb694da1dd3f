"""The one block editor (kg/lifecycle/blocks.py) as every writer but the lifecycle uses it: `write_block`, with
what kg wrote remembered in a state file. Real files in tmp_path."""

from __future__ import annotations

from pathlib import Path

from kg.lifecycle import blocks


def _write(path: Path, inner: str | None, state: Path, **kw):
    return blocks.write_block(path, "prefs", inner, state_dir=state, key="USER.md#prefs", **kw)


def test_text_outside_is_kept_byte_for_byte_and_crlf_files_get_crlf_lines(tmp_path):
    path, state = tmp_path / "USER.md", tmp_path / "state"
    before = b"Hello\r\n\xff raw byte\r\n"
    path.write_bytes(before)
    assert _write(path, "- a\n", state).action == "insert"
    text = path.read_bytes()
    assert text.startswith(before)
    assert b"<!-- kaizen-kg:begin prefs -->\r\n- a\r\n<!-- kaizen-kg:end prefs -->\r\n" in text
    assert _write(path, "- a\n- b\n", state).action == "update"
    assert _write(path, None, state).action == "remove"
    assert path.read_bytes() == before


def test_a_human_edit_inside_the_block_is_flagged_and_kept(tmp_path):
    path, state = tmp_path / "USER.md", tmp_path / "state"
    _write(path, "- a\n", state)
    edited = path.read_text().replace("- a\n", "- a\nmy own line\n")
    path.write_text(edited)
    plan = _write(path, "- a\n- b\n", state)
    assert plan.action == "flag" and "a human edited inside the kg block" in plan.reason
    assert path.read_text() == edited
    # moving the line out of the block clears the flag; kg writes again
    path.write_text(edited.replace("my own line\n", "") + "my own line\n")
    assert _write(path, "- a\n- b\n", state).action == "update"
    assert path.read_text().endswith("- b\n<!-- kaizen-kg:end prefs -->\nmy own line\n")


def test_a_removed_or_damaged_block_is_flagged_until_forced(tmp_path):
    path, state = tmp_path / "USER.md", tmp_path / "state"
    _write(path, "- a\n", state)
    path.write_text("mine\n")
    plan = _write(path, "- a\n", state, fix="pass --force")
    assert plan.action == "flag" and plan.reason.endswith("pass --force") and path.read_text() == "mine\n"
    assert _write(path, "- a\n", state, force=True).action == "insert"
    path.write_text(path.read_text().replace("<!-- kaizen-kg:end prefs -->\n", ""))
    plan = _write(path, "- b\n", state)
    assert plan.action == "flag" and "damaged" in plan.reason


def test_block_of_line_names_the_block_around_an_offset():
    text = "top\n<!-- kaizen-kg:begin a -->\n- x\n<!-- kaizen-kg:end a -->\nbottom\n"
    assert blocks.names(text) == ["a"]
    assert blocks.block_of_line(text, text.index("- x")) == "a"
    assert blocks.block_of_line(text, text.index("bottom")) is None
