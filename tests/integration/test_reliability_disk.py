"""A disk that fills after the graph was opened for writing. Kùzu 0.11.3 writes a transaction's WAL at its commit and
aborts the process when it cannot ("terminate called ... No space left on device", SIGABRT): the workspace survives
that as a kill, but the user saw an abort instead of kg's answer, and a hook died noisily. The free-space floor
(`store.min_free_mb`) was checked only at the open. Now every write transaction and every commit checks it: the
write is refused (rolled back), what was acknowledged stays in the journal and is applied once there is room.
Real processes on a real small filesystem; the disk is filled from inside the process at a chosen moment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kg

pytestmark = pytest.mark.embedded_only("the free-space floor protects the Kùzu file's WAL; a team graph writes to "
                                       "its server")

# Runs the real console command; fills the disk holding the workspace (every byte) at `when`:
# "drain" as the journal's drain begins (after the open's check passed, before any write), or
# "write" right after the first write statement inside a transaction (the commit still to come).
_FILLING = """
import json, os, sys
import kg.ingest.drain as D
import kg.store as S
from kg.cli.app import run
root, when, argv = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
done = [False]
def fill():
    if not done[0]:
        done[0] = True
        st = os.statvfs(root)
        with open(os.path.join(os.path.dirname(root), "filler"), "wb") as fh:
            fh.write(b"\\0" * (st.f_bavail * st.f_frsize))
drain = D.drain
def draining(*a, **k):
    if when == "drain":
        fill()
    return drain(*a, **k)
D.drain = draining
fetch = S.Store._fetch
def fetching(self, cypher, params):
    out = fetch(self, cypher, params)
    if when == "write" and self._in_tx and "CREATE" in cypher.upper():
        fill()
    return out
S.Store._fetch = fetching
code = run(["-w", root, *argv])
sys.exit(code if done[0] else 100 + code)  # 100+: the disk was never filled
"""


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("KG_")}, "KG_SERVER": "0",
            "KG_NOW": "2026-03-01T09:00", "KG_LOCK_TIMEOUT": "120"}


def _filled(root: Path, when: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _FILLING, str(root), when, json.dumps(argv)],
                          capture_output=True, text=True, env=_env(), timeout=300)


def _kg(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "kg"), "-w", str(root), *argv], capture_output=True,
                          text=True, env=_env(), timeout=300)


@pytest.mark.parametrize(("when", "link"), [("drain", False), ("write", False), ("write", True)])
def test_a_disk_that_fills_after_the_open_refuses_the_write_and_keeps_the_entry(small_tmpfs, when, link):
    """`link`: the waiting entries are alike, so applying them makes a pattern, whose new id is saved in
    memory/.kg/ids.json on the full disk (an OSError, not the graph's refusal)."""
    disk = small_tmpfs(64)
    root = disk / "ws"
    ws = kg.init_workspace(root)
    assert _kg(root, "log", "learning", "an entry before the disk filled", "--wait").returncode == 0
    # acknowledged, not applied yet: the drain's first transaction writes pages of WAL, not a few bytes that fit
    # in the WAL file's last page
    waiting = [ws.log("learning", f"step {i} of the release checklist: " + "verify the artefact " * 60,
                      now="2026-03-01T08:00", apply=False, link=link).id for i in range(8)]
    full = _filled(root, when, "log", "error", "the deploy script broke on a full disk", "--wait", "--json")
    # (before: Kùzu aborted the process, exit -6 and its C++ message, with no kg answer)
    assert full.returncode == 0, (full.returncode, full.stderr)
    assert "terminate called" not in full.stderr and "Traceback" not in full.stderr, full.stderr
    answer = json.loads(full.stdout)
    assert answer["applied"] is False and "recorded in the journal" in answer["note"], answer
    # a command that writes while the disk is still full: kg's error and exit 1, nothing quarantined
    still = _kg(root, "cycle")
    assert (still.returncode, still.stderr.startswith("Error: the disk holding")) == (1, True), still.stderr
    (disk / "filler").unlink()
    rows = json.loads(_kg(root, "list", "--limit", "50", "--json").stdout)
    assert [r["id"] for r in rows if r["text"] == "the deploy script broke on a full disk"] == [answer["id"]]
    assert sorted(r["id"] for r in rows if r["id"].startswith("LRN-") and r["text"].startswith("step ")) == sorted(
        waiting)
    assert not (root / "memory" / ".kg" / "journal.rejected").exists()
    assert _kg(root, "doctor").returncode == 0


def test_a_session_start_hook_on_a_full_disk_briefs_from_files_and_keeps_its_session(small_tmpfs, shared_data):
    """Claude Code's SessionStart on a disk below the floor: the brief from files with kg's error in it, and the
    session started (journaled: a few bytes), instead of a failed hook and no session."""
    disk = small_tmpfs(64)
    root = disk / "ws"
    kg.init_workspace(root)
    (root / "AGENTS.md").write_text("# Agents\n\n<!-- kaizen-kg:begin rules -->\n- Run the linter before every "
                                    "commit.\n<!-- kaizen-kg:end rules -->\n", encoding="utf-8")
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    (disk / "filler").write_bytes(b"\0" * (free - 2 * 1024 * 1024))  # 2 MB left: below store.min_free_mb (8)
    transcript = sorted(shared_data.joinpath("runtimes", "claude_code", "transcripts").glob("*.jsonl"))[0]
    payload = {"session_id": transcript.stem, "transcript_path": None, "cwd": str(root),
               "permission_mode": "default", "hook_event_name": "SessionStart", "source": "startup"}
    started = subprocess.run([str(Path(sys.executable).parent / "kg"), "-w", str(root), "hook", "session-start",
                              "--start-session", "--runtime", "claude-code"], input=json.dumps(payload),
                             capture_output=True, text=True, env=_env(), timeout=300)
    assert started.returncode == 0, started.stderr  # (before: exit 1 with the error, no brief and no session)
    text = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- Error: the disk holding" in text and "Run the linter before every commit." in text
    sid = text.split("- Session: ")[1].split()[0]
    assert "(started now" in text
    logged = _kg(root, "log", "error", "the linter crashed on a full disk", "--json")
    assert logged.returncode == 0, logged.stderr
    entry = json.loads(logged.stdout)["id"]
    (disk / "filler").unlink()
    ws = kg.open_workspace(root)
    with ws.reading() as st:
        assert st.run("memory_session_get", id=sid)[0]["ended_at"] is None
        assert [n["id"] for n in st.run("memory_session_nodes", id=sid)] == [entry]


def test_a_file_size_limit_is_a_full_disk(tmp_path):
    """`ulimit -f` (RLIMIT_FSIZE): a write past it fails as a full disk does, so Kùzu aborted the process (`terminate
    called ... IOException`, exit 134) in `kg ingest`, `kg log --wait` and `kg cycle` (QA5 #2). The floor counts the
    room the limit leaves the graph's files as free space: the write is refused with kg's error, what was
    acknowledged waits in the journal, and is applied once the limit is gone."""
    import resource

    root = tmp_path / "ws"
    kg.init_workspace(root)
    graph = root / "memory" / ".kg" / "graph.kuzu"
    limit = graph.stat().st_size + 1024 * 1024  # 1 MB of room: below store.min_free_mb (8)

    def limited(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(Path(sys.executable).parent / "kg"), "-w", str(root), *argv], input=stdin,
                              capture_output=True, text=True, env=_env(), timeout=300,
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))

    lines = "".join(json.dumps({"kind": "error", "summary": f"build step {i} failed: " + "x" * 300,
                                "error": "E" * 600}) + "\n" for i in range(300))
    ingested = limited("ingest", "-", "--json", stdin=lines)
    assert ingested.returncode == 0, ingested.stderr
    assert "terminate called" not in ingested.stderr and "Traceback" not in ingested.stderr, ingested.stderr
    answer = json.loads(ingested.stdout)
    assert answer["applied"] is False and "ulimit -f" in answer["note"], answer
    logged = limited("log", "learning", "a lesson under a file size limit", "--wait", "--json")
    assert logged.returncode == 0 and "terminate called" not in logged.stderr, logged.stderr
    cycled = limited("cycle")
    assert cycled.returncode == 1 and cycled.stderr.startswith("Error: the file size limit"), cycled.stderr
    assert "terminate called" not in cycled.stderr
    assert _kg(root, "cycle").returncode == 0  # no limit: a writer applies what waits in the journal
    rows = json.loads(_kg(root, "list", "--limit", "400", "--json").stdout)
    assert len([r for r in rows if r["id"].startswith("ERR-")]) == 300
    assert [r["text"] for r in rows if r["id"].startswith("LRN-")] == ["a lesson under a file size limit"]
    assert _kg(root, "doctor").returncode == 0
