"""A write made to a file kg is merging its block into, between kg's read and its replace, is never lost (a QA
pass: an agent appending to TOOLS.md while `kg cycle` exported lost ~75 ms of lines, 5 trials of 5). The write
is injected deterministically through `kg.core.files.BEFORE_REPLACE`, called after kg's new content is on disk
and before the file is checked and replaced: the real cycle merges again from the new text, or, when the file
keeps changing, leaves it as it is and says so (exit 1)."""

from __future__ import annotations

import pytest

from kg.core import files
from kg.core.errors import FileChanged

pytestmark = pytest.mark.baseline_wait_off("a file edited while kg writes it")

RULE = "start docker with sudo systemctl start docker first"


def _promotable(run_kg) -> None:
    for i in range(1, 5):
        r = run_kg(["log", "error", "docker build failed: Cannot connect to the Docker daemon", "--pattern-key",
                    "docker.daemon", "--action", RULE, "--session", f"s{i}", "--now", f"2026-12-0{i}T09:00:00"])
        assert r.exit_code == 0, r.stderr


def _appender(path, times: int | None):
    """A hook appending a human line to `path` each time kg is about to replace it (`times` at most)."""
    written: list[str] = []

    def hook(target) -> None:
        if target.name == path.name and (times is None or len(written) < times):
            line = f"- human note {len(written)}\n"
            with path.open("a") as f:
                f.write(line)
            written.append(line)
    return hook, written


def test_a_write_between_read_and_replace_is_merged_again(ws, run_kg, monkeypatch):
    _promotable(run_kg)
    tools = ws.root / "TOOLS.md"
    tools.write_text("# Tools\n\nMy own notes.\n")
    hook, written = _appender(tools, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("cycle --now 2026-12-05T06:15:00")
    assert r.exit_code == 0, r.stdout + r.stderr
    text = tools.read_text()
    assert written == ["- human note 0\n"]
    assert "My own notes.\n" in text and "- human note 0\n" in text and RULE in text, text


def test_a_file_that_keeps_changing_is_left_as_it_is_and_said(ws, run_kg, monkeypatch):
    _promotable(run_kg)
    tools = ws.root / "TOOLS.md"
    tools.write_text("# Tools\n\nMy own notes.\n")
    hook, written = _appender(tools, None)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("cycle --now 2026-12-05T06:15:00")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert "TOOLS.md was written by someone else while kg was updating it" in r.stdout + r.stderr
    assert tools.read_text() == "# Tools\n\nMy own notes.\n" + "".join(written) and len(written) >= 2
    r = run_kg("cycle --now 2026-12-05T07:15:00")  # the next run, the file left alone, brings it up to date
    assert r.exit_code == 0 and RULE in tools.read_text() and "".join(written) in tools.read_text()


def test_write_atomic_with_a_stale_base_leaves_the_file(tmp_path):
    path = tmp_path / "notes.md"
    path.write_bytes(b"read\nthen written\n")
    with pytest.raises(FileChanged):
        files.write_atomic(path, b"merged from read\n", base=b"read\n")
    assert path.read_bytes() == b"read\nthen written\n" and [p.name for p in tmp_path.iterdir()] == ["notes.md"]
    files.write_atomic(path, b"merged\n", base=b"read\nthen written\n")
    assert path.read_bytes() == b"merged\n"


def test_write_block_leaves_a_file_written_meanwhile(tmp_path, monkeypatch):
    """The block editor's one-file writer (USER.md's preferences, AGENTS.md, kg.toml) refuses, the file kept."""
    from kg.lifecycle import blocks

    path = tmp_path / "USER.md"
    path.write_text("# Me\n")
    hook, written = _appender(path, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        with pytest.raises(FileChanged):
            blocks.write_block(path, "prefs", "- short answers\n", state_dir=tmp_path / "state", key="USER.md")
    assert path.read_text() == "# Me\n- human note 0\n" and written
    blocks.write_block(path, "prefs", "- short answers\n", state_dir=tmp_path / "state", key="USER.md")
    assert path.read_text().startswith("# Me\n- human note 0\n") and "- short answers\n" in path.read_text()
