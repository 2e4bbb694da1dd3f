"""A read-only workspace fails a read at once, with the read server on as with it off: the client took "cannot
open serve.lock" for "a server is starting" and waited its whole budget (~60 s) for one that never could."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kg.serve.client import servable

pytestmark = pytest.mark.embedded_only  # about the workspace's own folder and its lock files


@pytest.mark.parametrize(("open_errno", "expected"), [
    (None, True), (errno.ENOENT, True), (errno.EMFILE, True), (errno.EISDIR, True),
    (errno.EROFS, False), (errno.EACCES, False), (errno.EPERM, False),
])
def test_a_server_can_run_unless_its_lock_cannot_be_written(open_errno, expected):
    assert servable(open_errno) is expected


@contextmanager
def _read_only(folder: Path, spare: Path) -> Iterator[Path]:
    """`folder` seen read-only: `chmod -R a-w` for a user, a read-only bind mount for root (whom modes do not stop)."""
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)
        try:
            yield folder
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(folder)], check=True)
        return
    if not shutil.which("mount"):
        pytest.skip("needs `mount` to make a read-only view as root")
    view = spare / "read-only"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True).returncode != 0:
        pytest.skip("root here cannot bind-mount (no CAP_SYS_ADMIN): cannot make a read-only view")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount the bind mount read-only")
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


@pytest.mark.parametrize("argv", [["search", "docker socket"], ["hook", "session-start"]])
def test_a_read_in_a_read_only_workspace_answers_at_once_with_the_server_on(ws, tmp_path, argv):
    ws.log("error", "docker socket permission denied", now="2026-12-01T10:00:00", wait=True)
    trace = tmp_path / "trace.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVE_TRACE": str(trace)}
    kg = str(Path(sys.executable).with_name("kg"))
    with _read_only(ws.root, tmp_path) as root:
        # (the timeout only keeps a regression from holding the run for the client's whole budget)
        r = subprocess.run([kg, "-w", str(root), *argv], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           env=env, timeout=25)
    assert r.returncode == 0 and "docker socket permission denied" in r.stdout, r.stderr  # (QA6 #6: it failed)
    phases = trace.read_text(encoding="utf-8")
    assert "client: no server can run (the workspace is not writable)" in phases, phases
    assert "client waits" not in phases and "client spawns" not in phases, phases


def test_reads_of_a_read_only_workspace_work_and_writes_are_refused(ws, tmp_path):
    """QA6 #6: a backup, a read-only share or a sandbox mounting the project read-only: every read failed with
    "cannot open lock file", `kg doctor --dry-run` too, and `kg.analysis.load` raised a bare OSError."""
    ws.log("error", "docker socket permission denied", now="2026-12-01T10:00:00", wait=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    kg = str(Path(sys.executable).with_name("kg"))
    with _read_only(ws.root, tmp_path) as root:
        def run(*argv: str) -> subprocess.CompletedProcess:
            return subprocess.run([kg, "-w", str(root), *argv], stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, env=env, timeout=120)

        for argv in (["status"], ["list"], ["search", "docker socket"], ["doctor", "--dry-run"]):
            r = run(*argv)
            assert r.returncode == 0, (argv, r.stdout, r.stderr)
            assert "Traceback" not in r.stderr and "cannot open lock file" not in r.stderr, (argv, r.stderr)
        assert "docker socket permission denied" in run("list").stdout
        assert "read-only" in run("doctor", "--dry-run").stdout
        # QA5 #4: these reads took the writer's open and failed with "cannot open lock file ... Read-only file system"
        node = ws.list(limit=1)[0]["id"]
        for argv in (["show", node], ["patterns"], ["propose"], ["graph", "query"], ["graph", "explain", node]):
            r = run(*argv)
            assert r.returncode == 0, (argv, r.stdout, r.stderr)
            assert "Traceback" not in r.stderr and "cannot open lock file" not in r.stderr, (argv, r.stderr)
        assert "docker socket permission denied" in run("show", node).stdout
        loaded = subprocess.run([sys.executable, "-c", f"import kg.analysis as ka; print(len(ka.load({str(root)!r}"
                                 ").graph))"], capture_output=True, text=True, env=env, timeout=120)
        assert loaded.returncode == 0 and loaded.stdout.strip() == "1", loaded.stderr
        refused = run("log", "learning", "a note")
        assert refused.returncode == 1 and refused.stderr.startswith("Error: "), refused.stderr
        assert "Traceback" not in refused.stderr


def _unflushed_wal(side: Path) -> None:
    """Leave search.sqlite's write-ahead log non-empty, as a read server that still runs leaves it: a row written
    and deleted, by a process that ends without closing (the last close would checkpoint it)."""
    code = (f"import os, sqlite3; db = sqlite3.connect({str(side)!r}, isolation_level=None); "
            "db.execute('PRAGMA wal_autocheckpoint=0'); "
            "db.execute(\"INSERT INTO meta VALUES ('probe', '1')\"); db.execute(\"DELETE FROM meta WHERE key = "
            "'probe'\"); os._exit(0)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert side.with_name(side.name + "-wal").stat().st_size > 0


@pytest.mark.parametrize("wal", [False, True], ids=["no write-ahead log", "a write-ahead log left"])
def test_a_read_only_search_index_is_not_called_damaged_nor_sent_to_a_repair(ws, tmp_path, wal):
    """QA3 #6: with a write-ahead log left, `kg doctor --dry-run` called the healthy index "cannot be read or is
    damaged: attempt to write a readonly database" and sent to `kg doctor` (which cannot write there); without one,
    SQLite cannot open it read-only (no -shm it may make) and `kg search` said "`kg doctor` repairs it"."""
    ws.log("error", "docker socket permission denied", now="2026-12-01T10:00:00", wait=True)
    side = ws.kg_dir / "search.sqlite"
    for leftover in (side.with_name("search.sqlite-wal"), side.with_name("search.sqlite-shm")):
        leftover.unlink(missing_ok=True)  # (the writer's close checkpointed it)
    if wal:
        _unflushed_wal(side)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}
    kg = str(Path(sys.executable).with_name("kg"))
    with _read_only(ws.root, tmp_path) as root:
        doctor = subprocess.run([kg, "-w", str(root), "doctor", "--dry-run", "--json"], capture_output=True,
                                text=True, env=env, timeout=120)
        search = subprocess.run([kg, "-w", str(root), "search", "docker socket"], capture_output=True, text=True,
                                env=env, timeout=120)
    import json

    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "search index")
    assert check["status"] == "warning" and "was not checked for writing: the workspace is read-only" in \
        check["detail"] and "damaged" not in check["detail"], check
    assert search.returncode == 0 and "docker socket permission denied" in search.stdout, search.stderr
    assert "kg doctor" not in search.stdout + search.stderr, search.stdout


def test_a_read_only_view_of_a_served_workspace_is_answered_by_its_server(ws, tmp_path):
    """(QA11 #8) A read-only bind mount of a workspace (a container's `-v ws:/ws:ro`) could not be read while the
    owner's read server held the graph: the server ran the view's read as another workspace's, waited for the graph
    it held itself, and the reader failed after the retry budget, for as long as the owner kept working. The server
    answers a read of its own folder under any path."""
    if os.geteuid() != 0:
        pytest.skip("a view of the same folder under another path needs a bind mount (root)")
    ws.log("error", "docker socket permission denied", now="2026-12-01T10:00:00", wait=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_LOCK_TIMEOUT": "3"}
    kg = str(Path(sys.executable).with_name("kg"))
    started = subprocess.run([kg, "-w", str(ws.root), "serve", "start"], capture_output=True, text=True, env=env,
                             timeout=120)
    assert started.returncode == 0, started.stderr
    try:
        with _read_only(ws.root, tmp_path) as view:
            for argv in (["status"], ["search", "docker socket"]):
                r = subprocess.run([kg, "-w", str(view), *argv], stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, env=env, timeout=60)
                assert r.returncode == 0, (argv, r.stderr)
            assert "docker socket permission denied" in r.stdout, r.stdout
    finally:
        subprocess.run([kg, "-w", str(ws.root), "serve", "stop"], capture_output=True, env=env, timeout=120)
