"""`kg approve N` killed after the graph took the approval and before its file was renamed into place (QA8 #5): the
rule was in no file, `kg approve N` again refused ("already approved") and the killed write's temporary file stayed
beside the target. Approving it again writes the file, and the next write of that file removes what a dead writer
left (a minute old). The real console entry, killed (SIGKILL) at the rename by `kg.core.files.BEFORE_REPLACE`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.cli.test_resolve_proposals import _ok, _proposed

KILLED_AT_RENAME = """
import os, signal, sys
from kg.core import files
target = sys.argv.pop(1)
files.BEFORE_REPLACE = lambda path: os.kill(os.getpid(), signal.SIGKILL) if path.name == target else None
from kg.cli.entry import main
sys.argv = ["kg", *sys.argv[1:]]
sys.exit(main())
"""


def test_an_approve_killed_before_its_file_was_written_writes_it_when_approved_again(ws, run_kg):
    _proposed(run_kg)
    (proposal,) = _ok(run_kg("propose --json")).json
    target = ws.root / proposal["target"]
    before = target.read_bytes() if target.exists() else None
    env = {**os.environ, "KG_SERVER": "0", "KG_NOW": "2026-10-26T10:00:00"}
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_RENAME, target.name, "-w", str(ws.root), "approve", "1"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr)
    left = [n for n in os.listdir(ws.root) if n.startswith(f".{target.name}.") and n.endswith(".tmp")]
    assert left and (target.read_bytes() if target.exists() else None) == before  # what the kill leaves
    old = os.stat(ws.root / left[0]).st_mtime - 120  # (a live writer's in another pid namespace is never this old)
    os.utime(ws.root / left[0], (old, old))
    again = _ok(run_kg("approve 1 --json --now 2026-10-26T10:05:00")).json
    assert again["action"] == "approved already; its file written now", again
    assert [f["path"] for f in again["files"]] == [proposal["target"]], again
    assert proposal["text"].split("\n")[0][:40] in target.read_text(encoding="utf-8")
    assert not [n for n in os.listdir(ws.root) if n.startswith(f".{target.name}.") and n.endswith(".tmp")]
    r = run_kg("approve 1 --now 2026-10-26T10:06:00")  # written: a third approve has nothing to do
    assert r.exit_code == 2 and "already approved" in r.stderr, (r.exit_code, r.stderr)


def test_approving_again_claims_no_write_it_did_not_make(ws, run_kg):
    """Review: approving an approved proposal again answered "its file written now" for any export the cycle would
    make (another file's, or a flag for a person's edit in the block) though nothing of it was written."""
    _proposed(run_kg)
    (proposal,) = _ok(run_kg("propose --json")).json
    _ok(run_kg("approve 1 --now 2026-10-26T10:00:00"))
    target = ws.root / proposal["target"]
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace(proposal["text"].split("\n")[0][:20], "edited by a person", 1), encoding="utf-8")
    r = run_kg("approve 1 --json --now 2026-10-26T10:05:00")
    assert r.exit_code == 2 and "already approved" in r.stderr, (r.exit_code, r.stdout, r.stderr)
    assert "edited by a person" in target.read_text(encoding="utf-8")


def test_an_approve_whose_file_cannot_be_written_says_it_is_approved_and_how_to_write_it(ws, run_kg, monkeypatch):
    """(QA11 #1) On a full disk `kg approve 1` said "the disk is full ... (nothing half-written was kept)" though
    the graph had taken the approval: the proposal was gone from `kg propose` and the rule in no file."""
    import errno

    from kg.core import files

    _proposed(run_kg)
    (proposal,) = _ok(run_kg("propose --json")).json
    target = ws.root / proposal["target"]

    def full(path):
        if path.name == target.name:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(files, "BEFORE_REPLACE", full)
    r = run_kg("approve 1 --now 2026-10-26T10:00:00")
    assert r.exit_code == 1 and "proposal #1 is approved, but its file could not be written (the disk is full" in \
        r.stderr and "run `kg approve 1` again" in r.stderr, r.stderr
    monkeypatch.undo()
    again = _ok(run_kg("approve 1 --json --now 2026-10-26T10:05:00")).json
    assert again["action"] == "approved already; its file written now", again
    assert proposal["text"].split("\n")[0][:40] in target.read_text(encoding="utf-8")
