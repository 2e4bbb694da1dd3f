"""A file a person set the permissions of keeps them when kg rewrites its block: kg replaces files atomically
(a temporary file renamed over the old one), and the new file used to take the default mode, so a USER.md made
read-only (0444) or private (0600) came back 0644 after `kg pref set` or a cycle's export."""

from __future__ import annotations

import stat

import pytest

from kg.core.files import write_atomic


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mode", [0o444, 0o600, 0o640])
def test_write_atomic_keeps_the_replaced_files_mode(tmp_path, mode):
    path = tmp_path / "USER.md"
    path.write_bytes(b"old\n")
    path.chmod(mode)
    write_atomic(path, b"new\n")
    assert path.read_bytes() == b"new\n" and _mode(path) == mode
    fresh = tmp_path / "NEW.md"
    write_atomic(fresh, b"x\n")
    assert _mode(fresh) & 0o600 == 0o600  # a new file still gets the usual mode


def test_pref_set_keeps_a_private_user_md_private(ws, run_kg):
    user = ws.root / "USER.md"
    user.write_bytes(b"# About me\r\nprivate notes\r\n")
    user.chmod(0o600)
    assert run_kg("pref set editor vim").exit_code == 0
    text = user.read_bytes()
    assert text.startswith(b"# About me\r\nprivate notes\r\n") and b"- **editor**: vim" in text
    assert _mode(user) == 0o600
