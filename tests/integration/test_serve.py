"""The read server (kg/serve/), with real server processes in tmp workspaces and the real `kg` command: it
answers exactly what the command answers on its own, sees what was logged a moment ago, gives the graph to
whoever needs it, survives being killed, and stops when idle. (The rest of the suite runs with KG_SERVER=0.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

KG = str(Path(sys.executable).with_name("kg"))
NOW = "2026-06-01T12:00:00"


def kg(root: Path, *args: str, server: bool = True, input: str | None = None,
       env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "KG_SERVER": "1" if server else "0", **(env or {})}
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, input=input, env=full,
                          timeout=300)


def status(root: Path) -> dict:
    out = kg(root, "serve", "status", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def dead(pid: int) -> bool:
    """Gone, or a zombie nobody reaped (the server is detached from its parent)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_dead(pid: int, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not dead(pid):
        assert time.monotonic() < deadline, f"process {pid} is still alive"
        time.sleep(0.02)


@pytest.fixture
def served(tmp_path: Path):
    """A workspace with a little memory in it; its server (if any) is stopped afterwards."""
    root = tmp_path / "ws"
    assert kg(root.parent, "init", str(root), server=False).returncode == 0
    (root / "kg.toml").write_text("[rules.policy.serve]\nidle_seconds = 120\n", encoding="utf-8")
    for kind, text, extra in (
        ("error", "docker permission denied on /var/run/docker.sock", ["--area", "infra", "--priority", "high"]),
        ("learning", "add the user to the docker group to fix docker permission errors", ["--area", "infra"]),
        ("error", "git push rejected: no upstream branch", ["--pattern-key", "git.upstream"]),
        ("error", "git push failed: the branch has no upstream", ["--pattern-key", "git.upstream"]),
    ):
        out = kg(root, "log", kind, text, *extra, "--wait", "--now", NOW, server=False)
        assert out.returncode == 0, out.stderr
    yield root
    kg(root, "serve", "stop", server=False)


READS = [
    ["search", "docker permission"],
    ["search", "docker permission", "--json"],
    ["search", "git upstream", "--type", "error", "--limit", "1", "--json"],
    ["search", "nothing-like-this-anywhere"],
    ["inject", "-m", "why does docker say permission denied", "--json"],
    ["inject", "-m", "pushing a branch"],
    ["recall", "--message", "docker permission on the socket", "--json"],
    ["hook", "session-start", "-m", "fix the docker permission error"],
    ["hook", "session-start", "--json"],
    ["show", "ERR-20260601-001"],
    ["show", "ERR-20260601-001", "--json"],
    ["show", "ERR-29990101-001"],  # not there: exit 2 and its message
    ["status"],
    ["status", "--json"],
    ["search"],  # a usage error: exit 2 with the usage
    ["search", "docker", "--limit", "zero"],
]


def test_every_read_answers_as_the_command_does_alone(served: Path):
    for args in READS:  # once first: a read may leave state behind (recall builds the topic index)
        kg(served, "--now", NOW, *args, server=False)
    alone = [kg(served, "--now", NOW, *args, server=False) for args in READS]
    payload = json.dumps({"prompt": "docker permission again", "session_id": "s1"})
    hook_alone = kg(served, "--now", NOW, "hook", "session-start", "--runtime", "claude-code", server=False,
                    input=payload)
    started = json.loads(kg(served, "serve", "start", "--json").stdout)
    assert started["running"] and started["started"]
    for args, want in zip(READS, alone, strict=True):
        got = kg(served, "--now", NOW, *args)
        assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr), args
    hook = kg(served, "--now", NOW, "hook", "session-start", "--runtime", "claude-code", input=payload)
    assert (hook.returncode, hook.stdout, hook.stderr) == (hook_alone.returncode, hook_alone.stdout,
                                                            hook_alone.stderr)
    assert "docker" in hook.stdout
    after = status(served)
    assert after["pid"] == started["pid"] and after["requests"] == len(READS) + 1  # all of them were served


def test_the_client_loads_no_graph_library(served: Path):
    kg(served, "serve", "start")
    env = {**os.environ, "KG_SERVER": "1"}
    out = subprocess.run([sys.executable, "-X", "importtime", KG, "-w", str(served), "search", "docker"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and "docker" in out.stdout
    loaded = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "kg.serve.client" in loaded
    assert not loaded & {"kuzu", "typer", "networkx", "rapidfuzz", "kg.workspace", "kg.cli.app"}


def test_an_entry_logged_while_it_runs_is_in_the_next_read(served: Path):
    pid = json.loads(kg(served, "serve", "start", "--json").stdout)["pid"]
    logged = kg(served, "log", "error", "zeppelin mooring mast collapsed", "--json")
    assert logged.returncode == 0, logged.stderr
    entry = json.loads(logged.stdout)["id"]
    hits = json.loads(kg(served, "search", "zeppelin mooring", "--json").stdout)
    assert any(h["ref"] == entry and h["source"] == "graph" for h in hits)
    shown = kg(served, "show", entry, "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["node"]["id"] == entry
    assert status(served)["pid"] == pid  # the applier left the entry to the server; nobody took the graph


def test_totals_and_lists_kept_by_the_server_follow_a_write(served: Path):
    """`status` and the session brief are answered from rows the server keeps (kg/serve/cache.py); an entry
    logged in between is counted and listed at once, as the command alone would."""
    pid = json.loads(kg(served, "serve", "start", "--json").stdout)["pid"]
    before = json.loads(kg(served, "--now", NOW, "status", "--json").stdout)
    kg(served, "--now", NOW, "hook", "session-start")
    logged = kg(served, "log", "error", "zeppelin mast collapsed", "--priority", "high", "--now", NOW, "--json")
    assert logged.returncode == 0, logged.stderr
    entry = json.loads(logged.stdout)["id"]
    for args in (["status", "--json"], ["hook", "session-start", "--json"]):
        got = kg(served, "--now", NOW, *args)
        assert entry in got.stdout, args
    after = json.loads(kg(served, "--now", NOW, "status", "--json").stdout)
    assert after["entries"]["error"] == before["entries"]["error"] + 1
    assert status(served)["pid"] == pid
    kg(served, "serve", "stop")
    for args in (["status", "--json"], ["hook", "session-start", "--json"]):
        alone = kg(served, "--now", NOW, *args, server=False)
        assert json.loads(alone.stdout)["pending_high" if args[0] == "status" else "counts"] == \
            json.loads(kg(served, "--now", NOW, *args).stdout)["pending_high" if args[0] == "status" else "counts"]


def test_a_process_that_needs_the_graph_gets_it(served: Path):
    pid = json.loads(kg(served, "serve", "start", "--json").stdout)["pid"]
    cycle = kg(served, "cycle", "--json", env={"KG_LOCK_TIMEOUT": "60"})
    assert cycle.returncode == 0, cycle.stderr
    wait_dead(pid)  # it let go of the graph and left
    waited = kg(served, "log", "error", "disk quota exceeded on /home", "--wait", "--json")
    assert waited.returncode == 0 and json.loads(waited.stdout)["applied"]
    listed = kg(served, "list", "--json")
    assert listed.returncode == 0 and json.loads(waited.stdout)["id"] in {r["id"] for r in json.loads(listed.stdout)}
    again = json.loads(kg(served, "serve", "start", "--json").stdout)  # the next read may start it again
    assert again["running"] and again["pid"] != pid
    assert "quota" in kg(served, "search", "disk quota").stdout


def test_a_killed_server_is_noticed_and_the_read_still_answers(served: Path):
    want = kg(served, "--now", NOW, "search", "docker permission", "--json", server=False)
    pid = json.loads(kg(served, "serve", "start", "--json").stdout)["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_dead(pid)
    assert (served / "memory" / ".kg" / "serve.sock").exists()  # what it left behind
    got = kg(served, "--now", NOW, "search", "docker permission", "--json")
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)
    now = status(served)
    assert not now["running"] or now["pid"] != pid  # cleaned up, or a new one started by that read
    logged = kg(served, "log", "error", "kill nine survivor entry", "--wait")
    assert logged.returncode == 0, logged.stderr


def test_the_first_read_starts_it_and_it_stops_when_idle(served: Path):
    from kg.serve import client, protocol

    (served / "kg.toml").write_text("[rules.policy.serve]\nidle_seconds = 1.0\n", encoding="utf-8")
    kg_dir = served / "memory" / ".kg"
    assert "docker" in kg(served, "search", "docker").stdout  # on its own, then it starts a server
    deadline = time.monotonic() + 120
    pid = None
    while pid is None:  # the server that read started (detached) comes up ...
        assert time.monotonic() < deadline, "no server was started"
        try:
            pid = protocol.ask(kg_dir, {"op": "status"}, 5.0)["pid"]
        except (OSError, protocol.Closed):
            time.sleep(0.02)
    wait_dead(pid)  # ... and, left alone, stops
    assert not client.alive(kg_dir) and not (kg_dir / "serve.sock").exists()


def test_an_idle_server_stops_and_removes_its_socket(served: Path):
    (served / "kg.toml").write_text("[rules.policy.serve]\nidle_seconds = 0.2\n", encoding="utf-8")
    wal = served / "memory" / ".kg" / "graph.kuzu.wal"
    assert wal.exists() and wal.stat().st_size  # the logs' writes, which every open replays until a checkpoint
    run = subprocess.Popen([KG, "-w", str(served), "serve", "run"], stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "KG_SERVER": "1"})
    _, err = run.communicate(timeout=300)
    assert run.returncode == 0 and err.strip() == "kg serve: stopped: idle for 0.2 s"
    assert not (served / "memory" / ".kg" / "serve.sock").exists()
    assert not wal.exists() or not wal.stat().st_size  # folded into the graph before the server let go
    assert kg(served, "log", "error", "after the idle stop", "--wait").returncode == 0


def test_serve_run_beside_a_running_server_fails_plainly(served: Path):
    """QA: `kg serve run` beside a live server printed "kg serve: stopped: another server runs ..." and exited 0,
    as if it had served; and with the server off it did the same."""
    try:
        assert kg(served, "serve", "start").returncode == 0
        second = kg(served, "serve", "run")
        assert second.returncode == 1, second.stderr
        assert second.stderr.startswith("Error: another server runs for this workspace: `kg serve status`")
        assert status(served)["running"]
    finally:
        kg(served, "serve", "stop", server=False)
    import fcntl

    with open(served / "memory" / ".kg" / "graph.lock", "a+") as held:  # another process holds the graph
        fcntl.flock(held, fcntl.LOCK_EX)
        busy = subprocess.run([KG, "-w", str(served), "serve", "run"], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "KG_SERVER": "1", "KG_LOCK_TIMEOUT": "1"})
    assert busy.returncode == 1 and busy.stderr.startswith("Error: cannot serve: "), busy.stderr
    (served / "kg.toml").write_text("[rules.policy.serve]\nenabled = false\n", encoding="utf-8")
    off = kg(served, "serve", "run")
    assert off.returncode == 1 and off.stderr.startswith("Error: the read server is off"), off.stderr


def test_off_means_no_server(served: Path):
    assert kg(served, "search", "docker", server=False).returncode == 0
    assert not (served / "memory" / ".kg" / "serve.sock").exists()
    assert kg(served, "serve", "start", server=False).returncode == 1
    (served / "kg.toml").write_text("[rules.policy.serve]\nenabled = false\n", encoding="utf-8")
    assert kg(served, "search", "docker").returncode == 0
    refused = kg(served, "serve", "start")
    assert refused.returncode == 1 and refused.stderr.startswith("Error: the read server is off")
    assert not status(served)["running"]
    (served / "kg.toml").write_text("[rules.policy.serve]\nidle_seconds = -1\n", encoding="utf-8")
    bad = kg(served, "serve", "start")
    assert bad.returncode == 2 and "idle_seconds" in bad.stderr


def test_a_long_workspace_path_and_a_private_socket(tmp_path: Path):
    root = tmp_path / ("deep-" * 12) / ("folder-" * 6) / "ws"
    assert len(str(root / "memory" / ".kg" / "serve.sock")) > 108
    assert kg(tmp_path, "init", str(root), server=False).returncode == 0
    # one moment for the entry and both searches: recency is part of the score, so two reads a second apart
    # at the wall clock's now differ in the fourth decimal
    at = ("--now", NOW)
    assert kg(root, *at, "log", "error", "a long path entry about sockets", "--wait", server=False).returncode == 0
    want = kg(root, *at, "search", "sockets", "--json", server=False)
    try:
        assert json.loads(kg(root, "serve", "start", "--json").stdout)["running"]
        sock = root / "memory" / ".kg" / "serve.sock"
        assert sock.stat().st_mode & 0o777 == 0o600
        got = kg(root, *at, "search", "sockets", "--json")
        assert (got.returncode, got.stdout) == (0, want.stdout)
        assert status(root)["requests"] == 1
    finally:
        kg(root, "serve", "stop", server=False)


def test_a_server_whose_workspace_was_removed_and_made_again_leaves_the_new_one_alone(served: Path):
    """A workspace removed (rm -rf) under its live server, then made again at the same path: the old server
    stops by itself, never removes the new server's socket, and the new workspace answers (before: the old one
    lived until idle, its exit unlinked the new socket, and reads then waited on a server nobody could reach)."""
    import shutil

    old = subprocess.Popen([KG, "-w", str(served), "serve", "run"], stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "KG_SERVER": "1"})
    sock = served / "memory" / ".kg" / "serve.sock"
    try:
        deadline = time.monotonic() + 300
        while not (sock.exists() and status(served).get("pid") == old.pid):
            assert old.poll() is None and time.monotonic() < deadline, "the first server did not listen"
        shutil.rmtree(served)
        assert kg(served.parent, "init", str(served), server=False).returncode == 0
        assert kg(served, "log", "learning", "use uv, not pip, in the new workspace", "--wait",
                  server=False).returncode == 0
        new = kg(served, "serve", "start")
        assert new.returncode == 0, new.stderr
        new_pid = status(served)["pid"]
        assert new_pid != old.pid
        _, err = old.communicate(timeout=60)  # idle_seconds is 120: it must stop well before, on its own
        assert "removed or replaced" in err, err
        assert sock.exists() and status(served)["pid"] == new_pid  # the new server's socket is untouched
        out = kg(served, "search", "uv", "--json")
        assert out.returncode == 0, out.stderr
        assert "new workspace" in out.stdout
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()
        kg(served, "serve", "stop")


def test_a_server_whose_graph_file_was_removed_stops_and_leaves_no_stub(served: Path):
    """graph.kuzu (and its log) removed under a live server (a sync tool, a person "resetting"): the server kept
    answering from the deleted file and applying into it, and on stop folded its log into a new 4 KB stub at the
    path that Kùzu could not open ("unordered_map::at"; QA11 #10). It stops by itself, writes nothing there, and
    the next command says the graph is missing and how to start it again; an entry logged meanwhile is kept."""
    old = subprocess.Popen([KG, "-w", str(served), "serve", "run"], stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "KG_SERVER": "1"})
    kg_dir = served / "memory" / ".kg"
    try:
        deadline = time.monotonic() + 300
        while not ((kg_dir / "serve.sock").exists() and status(served).get("pid") == old.pid):
            assert old.poll() is None and time.monotonic() < deadline, "the server did not listen"
        for name in ("graph.kuzu", "graph.kuzu.wal"):
            (kg_dir / name).unlink(missing_ok=True)
        assert kg(served, "log", "learning", "logged after the graph was removed", server=False).returncode == 0
        _, err = old.communicate(timeout=60)  # idle_seconds is 120: it must stop well before, on its own
        assert "graph file was removed or replaced" in err, err
        assert not list(kg_dir.glob("graph.kuzu*")), list(kg_dir.iterdir())
        read = kg(served, "status")
        assert read.returncode == 1 and "is missing" in read.stderr and "kg doctor --repair" in read.stderr, read
        assert kg(served, "doctor", "--repair", server=False).returncode in (0, 1)
        listed = kg(served, "list", "--json", server=False)
        assert listed.returncode == 0, listed.stderr
        assert "logged after the graph was removed" in listed.stdout and "docker group" in listed.stdout
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()
        kg(served, "serve", "stop")


def test_a_graph_replaced_under_the_server_is_not_mixed_with_its_log(served: Path, tmp_path: Path):
    """An older copy of graph.kuzu put back under a live server (a restore by hand): the server's own write-ahead log
    stayed beside it and the next open replayed it onto the copy, mixing the two graphs unseen (review). The server
    sets its own log aside as it stops; the copy opens as it was."""
    kg_dir = served / "memory" / ".kg"
    copy = tmp_path / "copy.kuzu"
    import shutil

    assert kg(served, "serve", "start").returncode == 0
    assert kg(served, "serve", "stop").returncode == 0  # a server folds its log into the graph as it stops
    assert not (kg_dir / "graph.kuzu.wal").exists() or (kg_dir / "graph.kuzu.wal").stat().st_size == 0
    shutil.copy2(kg_dir / "graph.kuzu", copy)  # the graph as it is now, whole in its file: four entries
    old = subprocess.Popen([KG, "-w", str(served), "serve", "run"], stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "KG_SERVER": "1"})
    try:
        deadline = time.monotonic() + 300
        while not ((kg_dir / "serve.sock").exists() and status(served).get("pid") == old.pid):
            assert old.poll() is None and time.monotonic() < deadline, "the server did not listen"
        assert kg(served, "log", "learning", "applied by the server into the graph it holds",
                  server=False).returncode == 0
        while "applied by the server" not in kg(served, "list", "--json").stdout:  # (served: it applied it)
            assert time.monotonic() < deadline, "the server did not apply the entry"
        assert (kg_dir / "graph.kuzu.wal").exists()
        os.replace(copy, kg_dir / "graph.kuzu")  # the older copy put back, by hand
        _, err = old.communicate(timeout=60)
        assert "graph file was removed or replaced" in err, err
        assert not (kg_dir / "graph.kuzu.wal").exists() and list(kg_dir.glob("graph.kuzu.wal.of-a-removed-graph-*"))
        listed = kg(served, "list", "--json", server=False)
        assert listed.returncode == 0 and "docker group" in listed.stdout, listed.stderr
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()
        kg(served, "serve", "stop")


def test_a_read_is_answered_in_the_workspace_zone_whoever_asks(served: Path):
    """A server started by a UTC job answered an LA shell's `--since 1h` in UTC: what was logged a moment ago
    fell 8 hours outside the window and was not found. Every process reads and writes the workspace's clock zone
    now (kg/workspace_zone.py), the server's and the shell's alike."""
    here = {"TZ": "America/Los_Angeles"}
    assert kg(served, "log", "error", "logged just now by the shell", "--wait", server=False, env=here).returncode == 0
    assert kg(served, "status", env={"TZ": "UTC"}).returncode == 0  # the UTC job starts the server
    assert status(served)["running"]
    listed = kg(served, "list", "--since", "1h", env=here)
    assert listed.returncode == 0, listed.stderr
    assert "logged just now by the shell" in listed.stdout
    found = kg(served, "search", "logged just now", "--since", "1h", env=here)
    assert "logged just now by the shell" in found.stdout, found.stdout
