"""A file converted to CRLF (a Windows editor, git's autocrlf) still holds kg's own block: kg keeps writing it,
in the file's own line endings, and leaves every byte of the person's text as it was."""

from __future__ import annotations


def _crlf(path) -> bytes:
    data = path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    path.write_bytes(data)
    return data


def test_user_md_in_crlf_still_takes_a_new_preference(run_kg, ws):
    assert run_kg("pref set editor vim").exit_code == 0
    user = ws.root / "USER.md"
    user.write_bytes(b"My own notes\r\n\r\n" + user.read_bytes())
    before = _crlf(user)
    r = run_kg("pref set tabs spaces")
    assert r.exit_code == 0 and "Warning" not in r.stderr, r.stderr
    after = user.read_bytes()
    assert b"- **tabs**: spaces\r\n" in after
    assert after.startswith(b"My own notes\r\n\r\n") and b"\n" not in after.replace(b"\r\n", b"")
    assert after.replace(b"- **tabs**: spaces\r\n", b"") == before


def test_memory_md_in_crlf_is_still_exported(run_kg, ws):
    assert run_kg("node add principle 'Prefer small commits'").exit_code == 0
    assert run_kg("export memory").exit_code == 0
    memory = ws.root / "MEMORY.md"
    memory.write_bytes(b"# Notes a person keeps\r\n\r\n" + memory.read_bytes())
    before = _crlf(memory)
    assert run_kg("node add principle 'Test before merge'").exit_code == 0
    r = run_kg("export memory --json")
    assert r.exit_code == 0, r.stderr
    assert "human edited" not in r.stdout + r.stderr
    after = memory.read_bytes()
    assert b"- Test before merge\r\n" in after and b"\n" not in after.replace(b"\r\n", b"")
    assert after.replace(b"- Test before merge\r\n", b"") == before
    assert run_kg("export memory --json").exit_code == 0 and memory.read_bytes() == after
