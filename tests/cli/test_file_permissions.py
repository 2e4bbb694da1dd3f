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


def test_an_immutable_file_is_said_with_a_fix_that_can_work(ws, run_kg):
    """QA2 #7: TOOLS.md made immutable (`chattr +i`; mode still 644) was said to be read-only with `chmod u+w` as the
    fix, which cannot help. Now the message names what can: the attribute, a read-only mount, another owner."""
    import shutil
    import subprocess

    from kg.core.files import target_problem

    tools = ws.root / "TOOLS.md"
    tools.write_text("# Tools\n")
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(tools)], capture_output=True).returncode:
        pytest.skip("no chattr here, or this file system keeps no immutable attribute")
    try:
        why = target_problem(tools, root=ws.root)
    finally:
        subprocess.run(["chattr", "-i", str(tools)], check=True)
    assert why.startswith("TOOLS.md cannot be written though its mode (644) allows it: an immutable attribute")
    assert "chmod" not in why
