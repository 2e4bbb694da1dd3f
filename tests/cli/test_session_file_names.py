"""Session summary files get portable names (no ':', which Windows and some sync tools refuse), and the files an
older kg named with ':' are still found. A real aider history, reflected on under a session id holding ':' (as an older
kg named its chats, "2025-06-02-14:29:21"; it now names them with dashes, tests/cli/test_reflect_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

AIDER = Path("/work/shared/data/runtimes/aider/aquaticat_monochromatic/.aider.chat.history.md")
SID = "2025-06-02-14:29:21"


@pytest.mark.skipif(not AIDER.is_file(), reason="needs /work/shared/data/runtimes")
def test_new_summary_file_is_portable_and_old_names_are_still_read(run_kg, ws):
    r = run_kg(f"reflect {AIDER} --format aider --apply --json --session {SID}")
    assert r.exit_code == 0, r.stderr
    sessions = ws.root / "memory" / "sessions"
    new = sessions / "2025-06-02-14-29-21.md"
    assert new.is_file() and not [p for p in sessions.iterdir() if ":" in p.name]
    assert f"# Session Summary: {SID}" in new.read_text()
    hit = run_kg(f"search CONVENTIONS --source sessions --session {SID} --json")  # a line of it, not a heading
    assert hit.exit_code == 0 and new.name in hit.stdout, hit.stdout

    # A workspace an older kg wrote: the summary under its old name is still the session's file.
    old = sessions / f"{SID}.md"
    new.rename(old)
    hit = run_kg(f"search CONVENTIONS --source sessions --session {SID} --json")  # a line of it, not a heading
    assert hit.exit_code == 0 and old.name in hit.stdout, hit.stdout
    again = run_kg(f"session end --session {SID}")
    assert again.exit_code == 2 and "ended already" in again.stderr and old.name in again.stderr, again.stderr
    assert not new.exists()
