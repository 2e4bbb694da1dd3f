"""Issue 20 against a real workspace: nothing escapes it, nothing bricks it, bad input is answered as such."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kg.cli.app import run

from kg.store.lock import _announce


@pytest.fixture
def kg(ws, capsys):
    """`kg ARGS` through the console entry's own `run` (the path a user's shell takes, minus the fork)."""

    def call(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = run(["-w", str(ws.root), *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return call


def test_session_ids_never_become_paths_outside(ws, kg):
    agents = ws.root / "AGENTS.md"
    agents.write_text("# Rules a human wrote\n")
    code, _, err = kg("log", "learning", "x", "--session", "../../AGENTS", "--wait")
    assert code == 2 and err.startswith("Error: invalid session id '../../AGENTS'")
    for bad in ("../../AGENTS", "/abs/path", "../../../../usr/**/*"):
        assert kg("session", "end", "--session", bad)[0] == 2
        assert kg("search", "x", "--session", bad)[0] == 2
    assert kg("skill", "show", "../../AGENTS")[0] == 2
    (ws.kg_dir / "current-session").write_text("../../AGENTS")
    assert ws.current_session() is None  # a planted pointer is never used
    assert agents.read_text() == "# Rules a human wrote\n"
    assert not Path("/abs/path.md").exists()


def test_a_transcripts_session_id_cannot_name_a_path(ws, kg, tmp_path):
    agents = ws.root / "AGENTS.md"
    agents.write_text("# mine\n")
    lines = [{"type": "user", "sessionId": "../../AGENTS", "message": {"role": "user", "content":
              "No, that's wrong: always run the tests with pytest -q before pushing."}},
             {"type": "assistant", "sessionId": "../../AGENTS", "message": {"role": "assistant", "content": "ok"}}]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    code, out, err = kg("reflect", str(path), "--apply", "--json")
    assert code == 0, err
    assert "AGENTS" not in json.loads(out)["session"]
    assert agents.read_text() == "# mine\n"
    assert sorted(p.name for p in (ws.root).iterdir()) == ["AGENTS.md", "memory"]


def test_bad_input_answers_exit_2(ws, kg, tmp_path):
    cases = [
        ("log", "learning", "caf\udce9"),
        ("session", "end", "--summary", "caf\udce9"),
        ("trends", "99999999999999999999"),
        ("show", "LRN-\udce9"),
        ("why",),
        ("reflect", "/dev/zero"),
    ]
    for argv in cases:
        code, _, err = kg(*argv)
        assert code == 2 and "Error: " in err and "unexpected failure" not in err, (argv, err)
    code, _, err = kg("list", "--limit", "99999999999999999999")  # a limit past any count is "all" (not an overflow)
    assert code == 0 and "Traceback" not in err, err
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = kg("reflect", str(fifo))
    assert code == 2 and "not a regular file" in err


def test_hook_stdin_deep_json_and_oversize_are_bad_input(ws, monkeypatch, capsys):
    import io
    import sys

    # Under --runtime a hook answers bad input with an Error: line and exit 1, never 2: Claude Code and Codex read
    # a hook's exit 2 as "block" / "keep going" (the runtime contract wins over the CLI's usual exit 2). Without
    # --runtime it is bad input as for every command: exit 2.
    for hook, expected in ((["post-tool-use", "--runtime", "claude-code"], 1), (["post-tool-use"], 2),
                           (["session-start", "--runtime", "claude-code"], 1)):
        for payload in ("[" * 100_000 + "]" * 100_000, '{"a": "' + "x" * (17 * 1024 * 1024) + '"}'):
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload.encode())))
            code = run(["-w", str(ws.root), "hook", *hook])
            err = capsys.readouterr().err
            assert code == expected and err.startswith("Error: ") and "Traceback" not in err, err[:200]


def test_one_bad_journal_record_is_quarantined_not_blocking(ws, kg):
    ws.log("learning", "a good entry before", apply=False)
    with open(ws.journal.path, "a") as fh:
        fh.write('{"op":"log","id":"LRN-20261201-900"}\n')
        fh.write("garbled \x00 line\n")
    good = ws.log("learning", "a good entry after", apply=False)
    code, out, err = kg("list", "--json")
    assert code == 0, err
    assert "Warning: 2 journal line(s) could not be applied" in err
    assert {r["id"] for r in json.loads(out)} >= {good.id}
    rejected = [json.loads(x) for x in (ws.kg_dir / "journal.rejected").read_text().splitlines()]
    assert [r["reason"] for r in rejected] == ["not a JSON line (torn by a crash, or garbled)", "no 'fields' object"]
    assert not ws.journal.draining_files()
    code, out, _ = kg("status")
    assert "2 line(s) set aside in memory/.kg/journal.rejected" in out
    assert kg("list")[0] == 0  # and every later read works


@pytest.mark.embedded_only("gives the Kùzu file a full-text index with kuzu itself")
def test_an_old_graphs_index_is_dropped_and_search_and_linking_go_on(ws, kg):
    # issue 22: a graph made before carries node_fts; the next writer's open drops it (nothing asks it)
    ws.log("learning", "deploy script broke on staging", wait=True)
    give_legacy_fts(ws)
    code, out, err = kg("log", "learning", "the deploy script needs the staging flag", "--wait")
    assert code == 0, err
    code, out, err = kg("search", "deploy")
    assert code == 0 and "deploy script" in out, err
    code, out, _ = kg("doctor")
    assert code == 0 and "full-text index: none in the graph" in out
    assert not list(ws.kg_dir.glob("graph.kuzu.rollback*"))


@pytest.mark.embedded_only("deletes the Kùzu graph file")
def test_a_missing_graph_with_acknowledged_ids_is_reported_and_repaired(ws, kg):
    ids = [ws.log("learning", f"entry {i}", wait=True).id for i in range(3)]
    assert kg("export", "trail")[0] == 0
    for p in ws.kg_dir.glob("graph.kuzu*"):
        p.unlink()
    ws.graph_path.write_bytes(b"")  # zero-length
    code, out, err = kg("list")
    assert code == 1 and "is empty, but 3 id(s) were given out" in err and out == ""
    code, out, _ = kg("doctor")
    assert code == 1 and "❌ graph:" in out
    code, out, _ = kg("doctor", "--repair")
    assert code == 0 and "started a new graph" in out and "rebuilt 3 entries" in out
    code, out, _ = kg("list", "--json")
    assert {r["id"] for r in json.loads(out)} >= set(ids)
    assert list(ws.kg_dir.glob("graph.kuzu.empty-*"))


@pytest.mark.embedded_only("writes a zero-byte Kùzu graph file")
def test_a_zero_length_graph_with_nothing_acknowledged_is_started_afresh(ws, kg):
    """A create cut short leaves a zero-byte graph file; Kùzu failed on it ("unexpected failure: IndexError")."""
    for p in ws.kg_dir.glob("graph.kuzu*"):
        p.unlink()
    ws.graph_path.write_bytes(b"")
    assert kg("search", "anything")[0] == 0  # a reader too (its read-only open falls back to the writer's)
    ws.graph_path.write_bytes(b"")
    code, out, err = kg("list")
    assert (code, out, err) == (0, "Nothing matches.\n", "")
    assert ws.graph_path.stat().st_size > 0
    ws.graph_path.write_bytes(os.urandom(4096))  # damaged: an operational failure said plainly
    code, _, err = kg("list")
    assert code == 1 and err.startswith("Error: cannot open the graph") and "unexpected" not in err


def test_demo_force_refuses_a_workspace_it_did_not_make(ws, kg):
    (ws.root / "AGENTS.md").write_text("mine\n")
    code, _, err = kg("demo", str(ws.root), "--force")
    assert code == 2 and "is not a demo workspace made by `kg demo`" in err
    assert (ws.root / "AGENTS.md").read_text() == "mine\n"


def test_demo_refuses_a_file_as_its_folder(ws, kg):
    """(QA #12) `kg demo MEMORY.md` said "Error: Not a directory: ..." with exit 1: bad input is exit 2."""
    (ws.root / "MEMORY.md").write_text("mine\n")
    for where in ("MEMORY.md", "MEMORY.md/demo"):
        code, _, err = kg("demo", str(ws.root / where))
        assert code == 2 and "MEMORY.md is a file, not a folder" in err, (where, code, err)
    assert (ws.root / "MEMORY.md").read_text() == "mine\n"


def test_preferences_block_contract_in_user_md(ws, kg):
    real = ws.root / "PEOPLE.md"
    real.write_bytes(b"Hello\r\n\xff raw byte\r\n")
    (ws.root / "USER.md").symlink_to(real.name)
    assert kg("pref", "set", "tone", "brief")[0] == 0
    text = real.read_bytes()
    assert text.startswith(b"Hello\r\n\xff raw byte\r\n") and b"- **tone**: brief\r\n" in text
    edited = text.replace(b"- **tone**: brief\r\n", b"- **tone**: brief\r\nmy own line\r\n")
    real.write_bytes(edited)
    code, _, err = kg("pref", "set", "lang", "en")
    assert code == 0 and "a human edited inside the kg block" in err
    assert real.read_bytes() == edited  # flagged and kept, not overwritten
    real.write_bytes(edited.replace(b"my own line\r\n", b""))
    assert kg("pref", "set", "lang", "en")[0] == 0
    text = real.read_bytes()
    assert b"- **lang**: en\r\n" in text and b"\n\n" not in text.replace(b"\r\n", b"")
    assert (ws.root / "USER.md").is_symlink()
    (ws.memory / "preferences.json").write_text('{"a": 1e999999}')
    code, _, err = kg("pref", "set", "b", "c")
    assert code == 2 and "1e999999" in err
    assert (ws.memory / "preferences.json").read_text() == '{"a": 1e999999}'


def test_write_atomic_writes_through_a_link_and_leaves_no_temp(ws):
    from kg.core.errors import UnusableFile
    from kg.ingest.journal import write_atomic

    target = ws.root / "AGENTS.md"
    target.write_text("old\n")
    link = ws.root / "CLAUDE.md"
    link.symlink_to("AGENTS.md")
    write_atomic(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    with pytest.raises(UnusableFile, match="^memory is a folder, not a file: "):
        write_atomic(ws.memory, b"x")
    assert not [p for p in ws.root.rglob("*.tmp")]


def test_out_targets_never_overwrite_kg_state_or_devices(ws, kg, tmp_path):
    code, _, err = kg("export", "trail", "--out", str(ws.kg_dir / "ids.json"))
    assert code == 2 and "inside kg's own state folder" in err
    code, _, err = kg("export", "graph", "--out", "/dev/null")
    assert code == 2 and "outside the workspace" in err
    os.mkfifo(ws.root / "pipe")
    code, _, err = kg("export", "graph", "--out", "pipe")
    assert code == 2 and "not a regular file" in err
    real = ws.root / "exports" / "real.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = ws.root / "link.json"
    link.symlink_to(real)
    assert kg("export", "trail", "--out", str(link))[0] == 0
    assert link.is_symlink() and '"entries"' in real.read_text()


@pytest.mark.parametrize("command", [("export", "trail", "--out"), ("export", "graph", "--out"),
                                     ("graph", "show", "--type", "event", "--out")])
def test_out_targets_stay_inside_the_workspace(ws, kg, tmp_path, command):
    ws.log("learning", "an entry to export", now="2026-11-01T10:00")
    outside = tmp_path / "elsewhere.png"
    code, out, err = kg(*command, str(outside))
    assert (code, out) == (2, "") and not outside.exists()
    assert err.startswith(f"Error: --out {outside} is outside the workspace {ws.root}: ")
    assert "a relative path is taken from the workspace folder" in err
    code, _, err = kg(*command, "../escape.png")
    assert code == 2 and "outside the workspace" in err and not (tmp_path / "escape.png").exists()
    link = ws.root / "out-link.png"  # a link inside that points out is refused too, not written through
    link.symlink_to(outside)
    code, _, err = kg(*command, "out-link.png")
    assert code == 2 and "outside the workspace" in err and not outside.exists()


def test_a_relative_out_lands_in_the_workspace_whatever_the_current_folder(ws, kg, tmp_path, monkeypatch):
    ws.log("learning", "an entry to export", now="2026-11-01T10:00")
    (ws.root / "exports").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = kg("export", "graph", "--format", "json", "--out", "exports/g.json")
    assert code == 0, err
    assert (ws.root / "exports" / "g.json").is_file() and not (tmp_path / "exports").exists()


@pytest.fixture
def small_fs(small_tmpfs):
    """A real 12 MB filesystem."""
    return small_tmpfs(12)


@pytest.mark.embedded_only("the free-space guard protects the Kùzu file's WAL; a team graph writes to its server")
def test_disk_full_keeps_the_id_and_leaves_no_temp_files(small_fs, capsys):
    import kg as kglib

    (small_fs / "ws").mkdir()
    (small_fs / "ws" / "kg.toml").write_text("[rules.policy.store]\nmin_free_mb = 2\n")
    ws = kglib.init_workspace(small_fs / "ws")
    filler = small_fs / "filler"
    free = os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize
    filler.write_bytes(b"\0" * (free - 1024 * 1024))  # 1 MB left: below store.min_free_mb
    capsys.readouterr()
    code = run(["-w", str(ws.root), "log", "learning", "written on a full disk", "--wait", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    answer = json.loads(out)
    assert answer["applied"] is False and "disk holding" in answer["note"] and "full" in answer["note"]
    code = run(["-w", str(ws.root), "list"])
    assert code == 1 and "is full" in capsys.readouterr().err
    free = os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize
    with open(filler, "ab") as fh:
        fh.write(b"\0" * free)  # nothing left at all
    code = run(["-w", str(ws.root), "log", "learning", "no room for this one"])
    assert code == 1 and "cannot write to the workspace: the disk is full; free" in capsys.readouterr().err
    assert not [p for p in small_fs.rglob("*.tmp")]
    filler.unlink()
    capsys.readouterr()
    assert run(["-w", str(ws.root), "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows if r["text"] == "written on a full disk"] == [answer["id"]]
    assert not [r for r in rows if r["text"] == "no room for this one"]


def test_a_reader_drains_within_its_budget_and_says_what_it_left(tmp_path, capsys):
    """With `write.reader_drain_seconds = 0`, while another process waits for the graph (held here as a real
    waiter does, kg.store.lock._announce), a reader applies nothing and reads the graph as it is:
    its wait does not grow with the backlog. What it left is reported (status, search's note, the brief) and
    stays in the journal for the next drain: nothing lost, nothing twice."""
    import kg

    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.write]\nreader_drain_seconds = 0\n")
    ws = kg.open_workspace(root)
    ids = [ws.log("error", f"deploy step {i} failed on staging", now="2026-11-01T10:00", apply=False).id
           for i in range(12)]
    waiter = _announce(ws.kg_dir / "graph.lock.wait")  # contention, as a real waiter shows it
    data = ws.status(now="2026-11-02")
    assert data["journal_pending"] == 12 and data["entries"] == {}
    code = run(["-w", str(root), "search", "deploy", "--json", "--now", "2026-11-02"])
    err = capsys.readouterr().err
    assert code == 0 and err == ("Note: 12 entries logged moments ago are still being applied and not in this "
                                 "answer yet\n")
    assert run(["-w", str(root), "hook", "session-start", "--json", "--now", "2026-11-02"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["journal_pending"] == 12
    assert run(["-w", str(root), "status", "--json", "--now", "2026-11-02"]) == 0  # a read with nested reads
    assert json.loads(capsys.readouterr().out)["journal_pending"] == 12
    assert "- 12 entries logged moments ago still being applied (not counted here yet)" in out["text"]
    os.close(waiter)  # no contention: a reader applies the whole backlog, whatever its budget
    assert ws.status(now="2026-11-02")["entries"] == {"error": 12}
    assert ws.status(now="2026-11-02")["journal_pending"] == 0
    assert sorted(r["id"] for r in ws.list(type="error", limit=100)) == sorted(ids)  # every entry once
    assert not ws.journal.draining_files()


def test_a_budgeted_drain_stops_between_records_and_keeps_the_rest(ws):
    """The budget is checked before each record (a clock passed in, no sleeping): under contention, what the
    drain did not reach stays in its draining file, which then holds only the rest."""
    from kg.ingest.drain import drain

    for i in range(5):
        ws.log("error", f"step {i} failed", now="2026-11-01T10:00", apply=False)
    ws.log("error", "step 5 failed", now="2026-11-01T10:00", apply=False)
    ticks = iter([0.0, 0.4, 0.8, 1.2, 1.6])
    waiter = _announce(ws.kg_dir / "graph.lock.wait")  # contention: another process waits for the graph
    with ws.store(budget=0) as st:  # under contention a budget of 0 applies nothing: the drain below is the first
        assert ws.pending == 6
        report = drain(ws, st, budget=1.0, clock=lambda: next(ticks))
    os.close(waiter)
    assert (report.applied, report.pending, report.stopped) == (2, 4, "budget")
    assert ws.journal.pending_count() == 4
    assert ws.drain().applied == 4 and ws.journal.pending_count() == 0


def test_a_writer_still_applies_everything_before_it_works(tmp_path):
    import kg

    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.write]\nreader_drain_seconds = 0\n")
    ws = kg.open_workspace(root)
    last = [ws.log("error", f"step {i} failed", now="2026-11-01T10:00", apply=False) for i in range(20)][-1]
    assert ws.resolve(last.id, "resolved", now="2026-11-02")["previous"] == "pending"
    assert ws.journal.pending_count() == 0


def test_a_migration_cut_short_leaves_the_graph_as_the_previous_one_left_it(tmp_path, monkeypatch):
    """A migration runs in one transaction with its mark: one that fails half-way (as one killed half-way)
    leaves no table or column behind, so once it can run, it runs from the start instead of failing on a
    column made already, and the graph opens."""
    import kg.store as store_mod
    from kg.core.errors import SchemaError, StoreError
    from kg.store import Store

    real = store_mod.migrations()
    path, lock = tmp_path / "graph.kuzu", tmp_path / "graph.lock"
    with Store.open(path, lock_path=lock, lock_timeout=5):
        pass
    add = "ALTER TABLE Node ADD zz_probe INT64 DEFAULT 0"
    broken = (*real, ("0099_probe", (add, "CREATE NODE TABLE Broken(id STRING PRIMARY KEY, ")))
    monkeypatch.setattr(store_mod, "migrations", lambda: broken)
    with pytest.raises(SchemaError, match="migration 0099_probe failed"):
        with Store.open(path, lock_path=lock, lock_timeout=5):
            pass
    monkeypatch.setattr(store_mod, "migrations", lambda: real)
    with Store.open(path, lock_path=lock, lock_timeout=5) as st:  # opens: 0099 left nothing behind
        with pytest.raises(StoreError, match="zz_probe"):
            st.execute("MATCH (n:Node) RETURN n.zz_probe AS z")
    fixed = (*real, ("0099_probe", (add, "CREATE NODE TABLE IF NOT EXISTS Probe(id STRING PRIMARY KEY)")))
    monkeypatch.setattr(store_mod, "migrations", lambda: fixed)
    with Store.open(path, lock_path=lock, lock_timeout=5) as st:  # runs from its first statement again
        assert "0099_probe" in st.applied_migrations()
        assert st.execute("MATCH (n:Node) RETURN count(n.zz_probe) AS z") == [{"z": 0}]


def test_a_hook_payloads_fifo_transcript_is_refused_without_blocking(ws, tmp_path):
    """A session-end payload naming a FIFO as its transcript: the real `kg` process answers at once (a
    FIFO with no writer would block a plain open forever), says why, and exits 0 as a hook must."""
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    payload = {"session_id": "abc", "transcript_path": str(fifo), "cwd": str(ws.root),
               "hook_event_name": "SessionEnd", "reason": "exit"}
    res = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "hook", "session-end",
                          "--runtime", "claude-code", "--json"], input=json.dumps(payload), capture_output=True,
                         text=True, timeout=300, env={**os.environ, "KG_SERVER": "0"})
    assert res.returncode == 0, res.stderr
    note = json.loads(res.stdout)["notes"][0]
    assert note.startswith(f"Error: could not reflect on {fifo}: the transcript {fifo} is not a regular file")


# A `kg import trail` that SIGKILLs itself `after` statements past its DROP_FTS_INDEX (0: right after the drop,
# before anything else): a deterministic kill at the phase that bricked a soak's workspace (issue 20).
_KILLED_IMPORT = """
import os, sys
import kg.store as S
from kg.cli.app import run
after, seen, fetch = int(sys.argv[2]), [], S.Store._fetch
def killing(self, cypher, params):
    out = fetch(self, cypher, params)
    if seen or "DROP_FTS_INDEX" in cypher or cypher.lstrip().startswith("COPY "):
        if len(seen) == after:
            os.kill(os.getpid(), 9)
        seen.append(cypher)
    return out
S.Store._fetch = killing
run(["-w", sys.argv[1], "import", "trail", sys.argv[3]])
"""


_LEGACY_FTS = ("import kuzu, sys; from kg.store import _FTS_CREATE, FTS_RETIRED; db = kuzu.Database(sys.argv[1]); "
               "c = kuzu.Connection(db); c.execute(_FTS_CREATE); "
               "c.execute('MATCH (m:Meta {key: $k}) DELETE m', {'k': FTS_RETIRED}); "
               "c.execute('CHECKPOINT'); c.close(); db.close()")


def give_legacy_fts(ws) -> None:
    """The graph as one made before issue 22: with Kùzu's own full-text index node_fts, and without the mark of
    its drop (in another process)."""
    subprocess.run([sys.executable, "-c", _LEGACY_FTS, str(ws.graph_path)], check=True,
                   env={k: v for k, v in os.environ.items() if not k.startswith("KG_")})


def _import_killed(ws, tmp_path: Path, after: int, copy: bool = True, legacy: bool = False
                   ) -> tuple[list[str], list[str]]:
    """`kg import trail` killed `after` statements after its first bulk statement: its first COPY (issue 22:
    no full-text index is dropped or built); with `legacy`, on a graph that still has node_fts, whose drop at
    the writer's open comes first. Without `copy`, as a kg before the import kept a copy to roll back to
    (kg/store/rollback.py) left it: the graph as the kill left it is all there is, repaired in place."""
    before = [ws.log("learning", f"logged before the import {i}", wait=True).id for i in range(2)]
    if legacy:
        give_legacy_fts(ws)
    entries = [{"id": f"ERR-20250102-{i:06d}", "type": "error", "summary": f"imported failure {i}",
                "logged": f"2025-01-02T10:00:{i:02d}", "pattern_key": f"fault.import.{i % 3}"} for i in range(30)]
    trail = tmp_path / "b.trail.json"
    trail.write_text(json.dumps({"entries": entries}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    proc = subprocess.run([sys.executable, "-c", _KILLED_IMPORT, str(ws.root), str(after), str(trail)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == -9, proc.stderr  # killed at the phase, not finished nor failed
    if not copy:
        for name in ("graph.kuzu.rollback.json", "graph.kuzu.rollback"):
            (ws.kg_dir / name).unlink()
    return before, [e["id"] for e in entries]


@pytest.mark.embedded_only("kills a process holding the Kùzu file right after it dropped the full-text index")
def test_an_import_killed_right_after_dropping_the_index_does_not_brick_the_workspace(ws, kg, tmp_path):
    # kuzu 0.11.3 replays that drop wrongly: every command then failed with "Cannot find table catalog entry
    # with id 9223372036854775814"; the next writer's open rebuilds the graph, every row kept
    before, imported = _import_killed(ws, tmp_path, after=0, copy=False, legacy=True)
    code, out, err = kg("list", "--limit", "1000", "--json")
    assert code == 0, err
    assert "rebuilt the graph, whose full-text index a kill had left half-dropped" in err
    assert {r["id"] for r in json.loads(out)} >= set(before)
    assert list(ws.kg_dir.glob("graph.kuzu.stale-fts-*"))  # the old file kept
    code, out, err = kg("import", "trail", str(tmp_path / "b.trail.json"))  # killed in its open: run again
    assert code == 0, err
    code, out, err = kg("list", "--limit", "1000", "--json")
    assert code == 0 and {r["id"] for r in json.loads(out)} >= set(before + imported), err
    code, out, err = kg("search", "imported failure")
    assert code == 0 and "ERR-20250102-" in out, err
    assert kg("log", "learning", "logged after the repair", "--wait")[0] == 0
    code, out, _ = kg("doctor")
    assert code == 0 and "full-text index: none in the graph" in out


@pytest.mark.embedded_only("kills a process holding the Kùzu file one statement after it dropped the index")
def test_the_index_drop_is_checkpointed_before_the_import_goes_on(ws, kg, tmp_path):
    # killed one statement later, the drop is in the file, not the write-ahead log: nothing to rebuild
    before, _ = _import_killed(ws, tmp_path, after=1, legacy=True)
    code, out, err = kg("list", "--limit", "1000", "--json")
    assert code == 0, err
    assert "rebuilt the graph" not in err and not list(ws.kg_dir.glob("graph.kuzu.stale-fts-*"))
    assert {r["id"] for r in json.loads(out)} >= set(before)


@pytest.mark.embedded_only("kills a process holding the Kùzu file right after it dropped the full-text index")
def test_doctor_repairs_a_graph_a_killed_import_left_half_dropped(ws, kg, tmp_path):
    before, _ = _import_killed(ws, tmp_path, after=0, copy=False, legacy=True)
    code, out, err = kg("doctor")
    assert code == 0, out + err
    assert "🔧 full-text index: rebuilt the graph, whose full-text index a kill had left half-dropped" in out
    code, out, err = kg("list", "--limit", "1000", "--json")
    assert code == 0 and {r["id"] for r in json.loads(out)} >= set(before), err
