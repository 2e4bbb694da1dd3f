"""Issue 22: the first command on a workspace made by an older kg (a graph that needs a real migration) does not
fail for the one-off upgrade: it says in one line on stderr that the graph is being upgraded and for how long so
far, waits, then answers (a `--json` caller gets its JSON). Real processes, real Kùzu, a real migration (the graph
taken back to the schema before migration 0010), held still with SIGSTOP while the command waits: no timing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import kg
from kg.serve import progress

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import until  # noqa: E402

KG = str(Path(sys.executable).with_name("kg"))
NOW = "2026-06-01T12:00:00"
# the graph as kg made it before migration 0010 (test_ready_spans does the same)
_DOWNGRADE = ("import kuzu, sys; db = kuzu.Database(sys.argv[1]); c = kuzu.Connection(db); "
              "c.execute('DROP TABLE ready_span'); "
              "c.execute(\"MATCH (m:Meta) WHERE m.key IN ['migration:0010_ready_spans', 'aggregate:ready_spans'] "
              "DELETE m\"); c.execute('CHECKPOINT'); c.close(); db.close()")


def _env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    return {**base, "KG_NOW": NOW, **extra}


def _kg(root: Path, *args: str, server: bool) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env=_env(KG_SERVER="1" if server else "0"))




def _old_workspace(tmp_path: Path) -> tuple[Path, str]:
    """A workspace with patterns ready to promote, its `kg status --json`, then its graph made old."""
    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.serve]\nidle_seconds = 120\n", encoding="utf-8")
    for i in range(4):
        for key in ("docker.sock", "git.upstream"):
            out = _kg(root, "log", "error", f"{key} failed again, time {i}", "--pattern-key", key,
                      "--session", f"s{i}", "--wait", server=False)
            assert out.returncode == 0, out.stderr
    want = _kg(root, "status", "--json", server=False)
    assert want.returncode == 0, want.stderr
    graph = root / "memory" / ".kg" / "graph.kuzu"
    subprocess.run([sys.executable, "-c", _DOWNGRADE, str(graph)], check=True, env=_env())
    return root, want.stdout


@pytest.mark.parametrize("server", [True, False], ids=["served", "on its own"])
def test_the_first_command_after_an_upgrade_says_so_once_waits_and_answers(tmp_path, server):
    root, want = _old_workspace(tmp_path)
    kg_dir = root / "memory" / ".kg"
    # served: its lock budget is far shorter than the upgrade it meets (held still below), and it waits anyway; on
    # its own, the budget counts from the upgrade's end, when the cycle that upgraded goes on holding the graph
    env = _env(KG_SERVER="1" if server else "0", KG_LOCK_TIMEOUT="0.2" if server else "60")
    migrator = None
    if not server:  # the upgrade is another command's (a writer's first open, which adds nothing), held still
        migrator = subprocess.Popen([KG, "-w", str(root), "cycle", "--dry-run"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        until(lambda: progress.current(kg_dir) is not None, "no migration began", migrator)
        os.kill(migrator.pid, signal.SIGSTOP)
    read = subprocess.Popen([KG, "-w", str(root), "status", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    stopped = None
    try:
        if server:  # the server this read started migrates: held still in its migration
            until(lambda: progress.current(kg_dir) is not None, "no migration began", read)
            stopped = progress.current(kg_dir)["pid"]
            os.kill(stopped, signal.SIGSTOP)
        line = read.stderr.readline()  # said while the upgrade is held still: the read waits, past its budget
        assert line.startswith("kg: upgrading the graph for this kg (step "), line
        assert " s so far, by process " in line and line.endswith("; waiting for it, then answering\n"), line
        assert read.poll() is None
    finally:
        for pid in (stopped, migrator.pid if migrator else None):
            if pid:
                os.kill(pid, signal.SIGCONT)
    out, err = read.communicate(timeout=300)
    assert read.returncode == 0, err
    assert err == ""  # one line, whatever the steps
    assert json.loads(out) == json.loads(want)  # the answer, as before the graph was made old
    if migrator is not None:
        assert migrator.wait(timeout=300) == 0, migrator.communicate()
    _kg(root, "serve", "stop", server=True)
    with kg.open_workspace(root).store() as st:
        assert "0010_ready_spans" in st.applied_migrations()  # (0011 follows it since the merge of main)


def test_a_side_index_rebuild_says_so_to_the_commands_it_shuts_out(tmp_path, monkeypatch):
    """The first writer after an upgrade that changed the side file's form rebuilds it (minutes at 1M, the graph
    held): while it does, the marker names it, so a waiter waits for it saying so (at 1M the first `kg log --wait`
    after an upgrade failed its 10 s budget, "the graph is held by another process")."""
    from kg.store import sideindex

    monkeypatch.setenv("KG_SERVER", "0")
    root = tmp_path / "ws"
    ws = kg.init_workspace(root)
    for text in ("docker permission denied", "git push rejected"):
        ws.log("error", text)
    seen = []
    add = sideindex.SideIndex._add

    def adding(self, at, rows):
        seen.append(progress.current(ws.kg_dir))  # asked as a waiter asks, while the rows go in
        return add(self, at, rows)

    monkeypatch.setattr(sideindex.SideIndex, "_add", adding)
    monkeypatch.setattr(sideindex, "MARKED_ROWS", 1)
    with ws.store() as st:
        assert sideindex.sync(st, rebuild=True).startswith("rebuilt ")
    assert seen and all(r is not None and r["what"].startswith("rebuild the search side index") for r in seen)
    assert progress.current(ws.kg_dir) is None and not (ws.kg_dir / progress.FILE).exists()


def test_a_waiter_says_nothing_of_a_short_fold_and_names_a_long_one_for_what_it_is(tmp_path, monkeypatch, capsys):
    """The read server folds its log as it lets go (~0.1 s on most graphs), and a command waiting behind it wrote
    "kg: upgrading the graph for this kg ..." on stderr for it: a line a served read's stderr must not carry (its
    output must be the one-off read's), naming an upgrade that was not one. A marker younger than SAY_AFTER is
    waited for silently; an older one is said once, as what its holder does. The graph lock is held for real (a
    waiter's look asks the kernel), and the fold's age is set on its marker: no sleep."""
    import fcntl

    from kg.serve.renew import FOLDING

    monkeypatch.delenv("KG_MIGRATION_WAIT", raising=False)
    with open(tmp_path / "graph.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held, as by the server that folds
        marker = progress.Marker(tmp_path, ["fold the write-ahead log into the graph"], doing=FOLDING)
        marker.step(marker.steps[0])
        watch = progress.Watch(tmp_path)
        assert watch.check() is True  # waited for, saying nothing yet
        assert capsys.readouterr().err == ""
        marker.started -= progress.SAY_AFTER + 1  # the same fold, SAY_AFTER + 1 s on
        marker.at = None
        marker.step(marker.steps[0])
        assert watch.check() is True and watch.check() is True
        err = capsys.readouterr().err
        assert err.startswith("kg: writing the read server's log into the graph (step 1 of 1: fold the write-ahead "
                              f"log into the graph), {progress.SAY_AFTER + 1:.0f} s so far, by process {os.getpid()}; "
                              "waiting for it, then answering\n") and err.count("\n") == 1, err
        marker.done()
        assert watch.check() is None
