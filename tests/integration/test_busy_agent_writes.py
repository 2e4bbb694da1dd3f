"""Agent-facing writes on a busy graph. QA4: 16 `kg pref set` processes at once on one workspace, and 3 exited 1
on the graph lock (held past the retry budget by the others): an agent's preference was not saved. A set that waits
past the budget is now acknowledged once preferences.json holds it and its history row waits in
memory/.kg/preferences.pending.jsonl, as `kg log` is once journaled; the next `kg pref` that reaches the graph records
it. `kg session start` journals its start as the session-start hook does. Real processes through the real console
entry; the busy graph is a real process holding it open until the test closes its stdin; the parallel start is a
barrier of pipes (each process blocks on its stdin until all are started), no sleep."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KG = str(Path(sys.executable).parent / "kg")
_AFTER_STDIN = "import sys; sys.stdin.read(); sys.argv = ['kg', *sys.argv[1:]]\nfrom kg.cli.app import main\nmain()\n"
_HOLD = ("import sys, kg\nws = kg.open_workspace(sys.argv[1])\nwith ws.store():\n"
         "    print('held', flush=True)\n    sys.stdin.read()\n")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") or k.startswith("KG_STORE")}  # a team pass
    return {**env, "KG_NOW": "2026-07-01T10:00", "KG_SERVER": "0", **extra}


def _kg(root: Path, *argv: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *argv], capture_output=True, text=True, cwd=root, env=_env(**extra),
                          timeout=300)


def test_sixteen_parallel_pref_sets_all_succeed_and_all_are_kept(ws):
    """Each of 16 processes waits at most 3 s for the graph (KG_LOCK_TIMEOUT): before, those that waited longer
    exited 1 and their preference was missing; now every one exits 0 and every preference is in the file and,
    once a later `kg pref` reaches the graph, in the history under its own source, each once."""
    procs = [subprocess.Popen([sys.executable, "-c", _AFTER_STDIN, "-w", str(ws.root), "pref", "set", f"key{i}",
                               f"value {i}", "--source", f"agent{i}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ws.root, env=_env(KG_LOCK_TIMEOUT="3"))
             for i in range(16)]
    for p in procs:  # the barrier: all are started and blocked on stdin; closing them lets every one go at once
        p.stdin.close()
    done = [(p.wait(timeout=600), p.stdout.read(), p.stderr.read()) for p in procs]
    assert [code for code, _, _ in done] == [0] * 16, [err for code, _, err in done if code]
    want = {f"key{i}": f"value {i}" for i in range(16)}
    assert json.loads((ws.root / "memory" / "preferences.json").read_text(encoding="utf-8")) == want
    history = _kg(ws.root, "pref", "history", "--json", KG_LOCK_TIMEOUT="120")
    assert history.returncode == 0, history.stderr
    rows = json.loads(history.stdout)
    assert sorted((r["key"], r["value"], r["source"], r["action"]) for r in rows) == sorted(
        (f"key{i}", f"value {i}", f"agent{i}", "set") for i in range(16))
    assert len({r["id"] for r in rows}) == 16
    assert not (ws.root / "memory" / ".kg" / "preferences.pending.jsonl").exists()



@contextlib.contextmanager
def _held(root):
    """Another process holding the embedded graph's file lock until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=300)


@pytest.mark.embedded_only("holds the embedded graph's file lock from another process")
def test_a_pref_set_while_another_process_holds_the_graph_is_saved_and_its_history_follows(ws):
    with _held(ws.root):
        first = _kg(ws.root, "pref", "set", "answer_style", "concise", KG_LOCK_TIMEOUT="0.5")
        unset = _kg(ws.root, "pref", "unset", "answer_style", KG_LOCK_TIMEOUT="0.5")
        again = _kg(ws.root, "pref", "set", "tone", "plain", "--json", KG_LOCK_TIMEOUT="0.5")
    assert (first.returncode, first.stdout) == (0, "📌 answer_style = concise\n"), first.stderr
    assert first.stderr == ("The graph is busy: the preference is saved in memory/preferences.json; its history "
                            "row waits in memory/.kg/preferences.pending.jsonl for the next `kg pref` command or "
                            "`kg cycle`\n")
    assert unset.returncode == 0 and unset.stderr == first.stderr, unset.stderr
    assert again.returncode == 0 and json.loads(again.stdout)["history_pending"] is True
    assert json.loads((ws.root / "memory" / "preferences.json").read_text(encoding="utf-8")) == {"tone": "plain"}
    pending = ws.root / "memory" / ".kg" / "preferences.pending.jsonl"
    waiting = pending.read_bytes()
    assert len(waiting.splitlines()) == 3
    history = _kg(ws.root, "pref", "history", "--json")  # the graph is free: the waiting rows are recorded, in order
    assert history.returncode == 0, history.stderr
    assert [(r["key"], r["action"], r["value"], r["source"]) for r in json.loads(history.stdout)] == [
        ("answer_style", "set", "concise", "user"), ("answer_style", "unset", None, "user"),
        ("tone", "set", "plain", "user")]
    assert not pending.exists()
    (pending.parent / "preferences.draining.jsonl").write_bytes(waiting)  # as a crash before its removal leaves it
    assert _kg(ws.root, "pref", "set", "tone", "brief").returncode == 0  # recorded once each: no replay, no hand edit
    rows = json.loads(_kg(ws.root, "pref", "history", "--json").stdout)
    assert [(r["key"], r["action"]) for r in rows] == [("answer_style", "set"), ("answer_style", "unset"),
                                                        ("tone", "set"), ("tone", "set")]


@pytest.mark.embedded_only("holds the embedded graph's file lock from another process")
def test_the_periodic_cycle_records_the_waiting_history_rows(ws):
    """Only a `kg pref` command recorded them: agents that set no preference again left them out of the history for
    good. The cycle records them (a dry run does not)."""
    with _held(ws.root):
        assert _kg(ws.root, "pref", "set", "tone", "plain", KG_LOCK_TIMEOUT="0.5").returncode == 0
    pending = ws.root / "memory" / ".kg" / "preferences.pending.jsonl"
    assert pending.exists()
    dry = _kg(ws.root, "cycle", "--dry-run")
    assert dry.returncode == 0 and pending.exists(), dry.stderr
    done = _kg(ws.root, "cycle")
    assert done.returncode == 0 and not pending.exists(), done.stderr
    assert not (pending.parent / "preferences.draining.jsonl").exists()
    with ws.reading() as st:
        rows = st.run("memory_pref_history", key="")
    assert [(r["key"], r["action"], r["value"]) for r in rows] == [("tone", "set", json.dumps("plain"))]


@pytest.mark.embedded_only("holds the embedded graph's file lock from another process")
def test_a_session_start_while_another_process_holds_the_graph_is_journaled(ws):
    """`kg session start` exited 1 on a held graph (as pref set did) while the session-start hook journals the
    start: it now does the same, the session current at once, the next command that reaches the graph makes it."""
    with _held(ws.root):
        started = _kg(ws.root, "session", "start", KG_LOCK_TIMEOUT="0.5")
        logged = _kg(ws.root, "log", "learning", "logged while the graph was held", "--json", KG_LOCK_TIMEOUT="0.5")
    assert (started.returncode, started.stdout) == (0, "🟢 Session 2026-07-01-001 started\n"), started.stderr
    assert started.stderr == ("The graph is busy: the session start is journaled (it is the current session now) and "
                              "the next kg command that reaches the graph makes it\n")
    assert logged.returncode == 0, logged.stderr
    ended = _kg(ws.root, "session", "end", "--summary", "done", "--json")
    assert ended.returncode == 0, ended.stderr
    assert (json.loads(ended.stdout)["id"], json.loads(ended.stdout)["events"]) == ("2026-07-01-001", 1)
