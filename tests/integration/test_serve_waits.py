"""Issues 20 and 22: what a read waits for while the read server starts, with real processes, real locks and
real Kùzu. A server killed before it listens is started again by the read that waits for it; a migration in
progress is waited for with a message saying so (or, past the bound, named in a plain exit 1), by reads and by
`kg cycle` alike, never answered with a bare "the graph is held"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import kg
from kg.serve import client, progress

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import until  # noqa: E402

KG = str(Path(sys.executable).with_name("kg"))
NOW = "2026-06-01T12:00:00"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "KG_SERVER": "1", **extra}


def _kg(root: Path, *args: str, server: bool = True, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env={**_env(**extra), "KG_SERVER": "1" if server else "0"})




def _phases(trace: Path) -> list[tuple[float, int, str]]:
    if not trace.exists():
        return []
    out = []
    for line in trace.read_text().splitlines():
        at, pid, phase = line.split(" ", 2)
        out.append((float(at), int(pid), phase))
    return out


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.serve]\nidle_seconds = 120\n", encoding="utf-8")
    for text in ("docker permission denied on the socket", "add the user to the docker group"):
        assert _kg(root, "log", "learning", text, "--wait", "--now", NOW, server=False).returncode == 0
    return root


def test_a_server_killed_before_it_listens_is_started_again_by_the_read(tmp_path, monkeypatch):
    monkeypatch.setenv("KG_SERVER", "1")
    root = _workspace(tmp_path)
    kg_dir = root / "memory" / ".kg"
    want = _kg(root, "--now", NOW, "search", "docker permission", "--json", server=False)
    assert want.returncode == 0, want.stderr
    trace = tmp_path / "trace"
    ws = kg.open_workspace(root)
    read = None
    try:
        with ws.store():  # the graph is held: the server the read starts cannot listen yet
            read = subprocess.Popen([KG, "-w", str(root), "--now", NOW, "search", "docker permission", "--json"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=_env(KG_SERVE_TRACE=str(trace), KG_LOCK_TIMEOUT="120"))
            until(lambda: any(p == "server start" or p.startswith("server start ") for _, _, p in _phases(trace)),
                   "the read started no server", read)
            first = next(pid for _, pid, p in _phases(trace) if p.startswith("server start"))
            os.kill(first, signal.SIGKILL)  # before it answers: it waits for the graph
            until(lambda: any(p == "client starts it again" for _, _, p in _phases(trace)),
                   "the read did not start it again", read)
        out, err = read.communicate(timeout=300)  # the graph is free: the new server answers
    finally:
        if read is not None and read.poll() is None:
            read.kill()
    assert (read.returncode, out, err) == (want.returncode, want.stdout, want.stderr)
    phases = _phases(trace)
    # (a timed bound on the restart, < 5 s after the kill, was dropped: a client starved that long at load ~15
    # fails it while doing the right thing; a read that gave up on the killed start instead runs on its own,
    # and then no second server answers it)
    servers = {pid for _, pid, p in phases if p.startswith("server start")}
    answered = {pid for _, pid, p in phases if p == "server answered"}
    assert len(servers) == 2 and answered == servers - {first}  # (before: it ran on its own, no server left)
    assert (read.pid, "client answered") in {(pid, p) for _, pid, p in phases}  # the read's answer came from it
    assert client.alive(kg_dir)
    _kg(root, "serve", "stop")


def _hold_migration(root: Path) -> tuple[progress.Marker, object]:
    """A migrating writer's state, for real: the graph held by this process and its marker on step 2 of 3."""
    ws = kg.open_workspace(root)
    held = ws.store()
    held.__enter__()
    marker = progress.Marker(ws.kg_dir, ["migration 0010_x", "rebuild the pattern aggregates", "build the index"])
    marker.step("rebuild the pattern aggregates")
    return marker, held


def _line(stream, proc) -> str:
    line = stream.readline()
    assert line, proc.communicate()
    return line


def test_a_read_and_a_cycle_wait_for_a_migration_saying_so_then_answer(tmp_path, monkeypatch):
    monkeypatch.setenv("KG_SERVER", "1")
    root = _workspace(tmp_path)
    want = _kg(root, "--now", NOW, "search", "docker", "--json", server=False)
    marker, held = _hold_migration(root)
    procs = []
    try:
        env = _env(KG_LOCK_TIMEOUT="30")  # counted from the migration's end
        for args, server in ((["search", "docker", "--json"], "1"), (["search", "docker", "--json"], "0"),
                             (["cycle", "--dry-run"], "1")):
            procs.append(subprocess.Popen([KG, "-w", str(root), "--now", NOW, *args], stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, env={**env, "KG_SERVER": server}))
        for proc in procs:  # each says what it waits for (before: "the graph is held by another process")
            line = _line(proc.stderr, proc)
            assert line.startswith("kg: upgrading the graph for this kg (step 2 of 3: rebuild the pattern "
                                   "aggregates), "), line
            assert line.endswith(f" s so far, by process {os.getpid()}; waiting for it, then answering\n"), line
        assert all(proc.poll() is None for proc in procs)
    finally:
        marker.done()
        held.__exit__(None, None, None)
    results = [proc.communicate(timeout=300) for proc in procs]
    for proc, (out, err) in zip(procs[:2], results[:2], strict=True):
        assert (proc.returncode, out, err) == (0, want.stdout, want.stderr)
    assert procs[2].returncode == 0, results[2]
    _kg(root, "serve", "stop")


def test_past_the_bound_a_read_and_a_cycle_fail_naming_the_migration(tmp_path, monkeypatch):
    monkeypatch.setenv("KG_SERVER", "1")
    root = _workspace(tmp_path)
    marker, held = _hold_migration(root)
    try:
        for args, server in ((["search", "docker", "--json"], True), (["search", "docker"], True), (["status"], False),
                             (["cycle", "--dry-run"], True), (["status", "--json"], False)):
            ran = _kg(root, *args, server=server, KG_LOCK_TIMEOUT="0.3", KG_MIGRATION_WAIT="0.5")
            assert ran.returncode == 1, (args, ran.stderr)
            last = ran.stderr.strip().splitlines()[-1]
            assert last.startswith(f"Error: kg process {os.getpid()} is migrating the graph (step 2 of 3: rebuild "
                                   "the pattern aggregates), started "), (args, ran.stderr)
            assert "try again in a few minutes" in last and "held by another process" not in ran.stderr
            # with --json it is said on stdout too, as every failure is: by the read server's client first (the
            # reads after it back off from a server that could not start, and run on their own)
            said = json.loads(ran.stdout) if "--json" in args else None
            assert said in (None, {"error": last.removeprefix("Error: "), "exit_code": 1}), (args, ran.stdout)
    finally:
        marker.done()
        held.__exit__(None, None, None)
    _kg(root, "serve", "stop")


def test_a_real_migration_names_its_steps_and_clears_them(tmp_path, monkeypatch):
    from kg.store import migrating

    root = _workspace(tmp_path)
    ws = kg.open_workspace(root)
    with ws.store() as st:
        assert migrating.plan(st) == []  # the common open: nothing to say
        st.run("agg_flag_clear")  # what a migration that asks for a rebuild leaves (0009)
        assert migrating.plan(st) == [migrating.AGGREGATES]
    trace = tmp_path / "trace"
    monkeypatch.setenv("KG_SERVE_TRACE", str(trace))
    with ws.store() as st:
        assert migrating.plan(st) == []  # rebuilt by this open
    assert [p for _, _, p in _phases(trace)] == [f"migration step 1 of 1: {migrating.AGGREGATES}", "migration done"]
    assert progress.current(ws.kg_dir) is None and not (ws.kg_dir / progress.FILE).exists()


def test_a_killed_migrations_marker_is_not_a_migration_for_the_process_later_given_its_pid(tmp_path):
    """A SIGKILLed migration leaves `migrating.json`; its pid, given later to another process (here: this test's
    own, alive and migrating nothing), made every waiter wait KG_MIGRATION_WAIT then fail. A marker counts only
    while the graph's lock is held, and the next writer's open (which holds the lock) removes it."""
    root = _workspace(tmp_path)
    kg_dir = root / "memory" / ".kg"
    progress.Marker(kg_dir, ["migration 0010_x"]).step("migration 0010_x")  # left behind, pid alive
    assert (kg_dir / progress.FILE).exists()
    assert progress.current(kg_dir) is None  # no one holds the graph: no migration runs
    held = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=_env(KG_SERVER="0"))
    try:
        assert held.stdout.readline().strip() == "held", held.communicate()
        assert not (kg_dir / progress.FILE).exists()  # the writer's open swept it
        assert progress.current(kg_dir) is None
        mine = progress.Marker(kg_dir, ["migration 0010_x"])  # a marker made while the lock is held is live
        mine.step("migration 0010_x")
        assert progress.current(kg_dir)["pid"] == os.getpid()
        mine.done()
    finally:
        held.communicate("", timeout=120)
    assert held.returncode == 0
    progress.Marker(kg_dir, ["migration 0010_x"]).step("migration 0010_x")
    assert _kg(root, "log", "learning", "after a killed migration", "--wait", server=False).returncode == 0
    assert not (kg_dir / progress.FILE).exists()


HOLD = """
import sys, kg
ws = kg.open_workspace(sys.argv[1])
with ws.store():
    print("held", flush=True)
    sys.stdin.read()
"""
