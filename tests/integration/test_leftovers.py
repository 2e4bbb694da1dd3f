"""Issue 20 leftovers, with real processes and signals: a writer killed while saving the id counters leaves a
temporary file that the next writer sweeps; a full-text index build that failed leaves hidden tables that
`kg doctor` finds and removes, and the next open builds the index cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import kg

KG = str(Path(sys.executable).with_name("kg"))


def _kg(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "KG_SERVER": "0"})


# A writer saving the counters as `Journal.allocate` does (under the journal lock, through `write_atomic`'s
# temporary file), stopped with the file open: where a SIGTERM or SIGKILL finds a `kg log` that is saving them
_SAVING = """
import sys, time, kg
from kg.core.files import atomic_writer
ws = kg.open_workspace(sys.argv[1])
with ws.journal.locked():
    with atomic_writer(ws.journal.ids_path) as fh:
        fh.write(b'{"ERR-20261201": 1')
        fh.flush()
        print("saving", flush=True)
        time.sleep(600)
"""


def test_a_writer_killed_while_saving_the_ids_leaves_no_temp_file_behind(tmp_path):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    kg_dir = root / "memory" / ".kg"
    assert _kg(root, "log", "learning", "the first entry", "--wait").returncode == 0
    given = (kg_dir / "ids.json").read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _SAVING, str(root)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "KG_SERVER": "0"})
    try:
        assert proc.stdout.readline().strip() == "saving"
        left = list(kg_dir.glob(".ids.json.*.tmp"))
        assert [p.name for p in left] == [f".ids.json.{proc.pid}.{p.name.split('.')[-2]}.tmp" for p in left]
        assert len(left) == 1
        proc.send_signal(signal.SIGTERM)  # Python's default for SIGTERM: no `finally`, the file stays
        assert proc.wait(60) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert left[0].exists() and (kg_dir / "ids.json").read_bytes() == given  # the old counters are intact
    out = _kg(root, "log", "learning", "the next entry", "--wait")
    assert out.returncode == 0, out.stderr
    assert not list(kg_dir.glob(".ids.json.*.tmp"))  # swept by the next writer, under the journal lock
    listed = _kg(root, "list", "--json")
    assert listed.returncode == 0 and len(__import__("json").loads(listed.stdout)) == 2


# A full-text index build that fails in a real process: the index dropped and checkpointed (as an import does
# before it loads), then CREATE_FTS_INDEX stopped by Kùzu's own query timeout ("Interrupted.", as a full buffer
# pool stops it at a million nodes): its hidden table `<id>_node_fts_appears_info` stays, without the index
_FAILED_BUILD = """
import sys, kuzu
from kg.store import _FTS_CREATE, _FTS_DROP
db = kuzu.Database(sys.argv[1], buffer_pool_size=256 * 1024 * 1024)
conn = kuzu.Connection(db)
try:
    conn.execute(_FTS_DROP)  # (a graph made before issue 22 has one)
except RuntimeError:
    pass
conn.execute("CHECKPOINT")
conn.execute("CALL force_checkpoint_on_close=false")
conn.set_query_timeout(int(sys.argv[2]))
try:
    conn.execute(_FTS_CREATE)
except RuntimeError as exc:
    print(exc)
conn.close()
db.close()
"""


def test_a_failed_index_build_is_found_by_doctor_and_rebuilt_cleanly(tmp_path):
    import json
    import re

    root = tmp_path / "ws"
    kg.init_workspace(root)
    for i in range(12):
        assert _kg(root, "log", "error", f"deploy step {i} failed on staging", "--wait").returncode == 0
    graph = root / "memory" / ".kg" / "graph.kuzu"
    from kg.doctor import _fts_leftovers
    from kg.workspace import open_workspace

    # a build cut at 1 ms may stop before it made any hidden table (seen on a fast run): cut it later until it
    # leaves some, as a timeout or a full buffer pool does
    for ms in (1, 3, 10, 30, 100, 300):
        built = subprocess.run([sys.executable, "-c", _FAILED_BUILD, str(graph), str(ms)], capture_output=True,
                               text=True, timeout=300, env={**os.environ, "KG_SERVER": "0"})
        assert built.returncode == 0, built.stdout + built.stderr
        if built.stdout.strip() == "Interrupted." and _fts_leftovers(open_workspace(root)):
            break
    assert built.stdout.strip() == "Interrupted.", built.stdout + built.stderr
    checked = _kg(root, "doctor", "--dry-run", "--json")
    index = [c for c in json.loads(checked.stdout)["checks"] if c["name"] == "full-text index"]
    assert checked.returncode == 1 and index[0]["status"] == "error", checked.stdout
    # the cut build may leave one hidden table or several: "(1_node_fts_appears_info, 1_node_fts_docs); run ..."
    named = re.search(r"\(([^()]*)\); run `kg doctor`", index[0]["detail"])
    tables = named.group(1).split(", ") if named else []
    assert tables and all(re.fullmatch(r"\d+_node_fts_\w+", t) for t in tables), index[0]["detail"]
    assert not list(graph.parent.glob("graph.kuzu.stale-fts-*"))  # a dry run rebuilt nothing
    repaired = _kg(root, "doctor", "--json")
    index = [c for c in json.loads(repaired.stdout)["checks"] if c["name"] == "full-text index"]
    assert index[0]["status"] == "repaired" and "appears_info" in index[0]["detail"], repaired.stdout
    again = _kg(root, "doctor", "--dry-run", "--json")  # nothing hidden is left, and the index is whole
    assert again.returncode == 0, again.stdout
    assert [c["status"] for c in json.loads(again.stdout)["checks"] if c["name"] == "full-text index"] == ["ok"]
    assert "none in the graph" in again.stdout  # (issue 22) the side index serves search and linking
    found = _kg(root, "search", "staging", "--limit", "20", "--json")
    assert found.returncode == 0 and len(json.loads(found.stdout)) == 12, found.stdout + found.stderr
    assert len(list(graph.parent.glob("graph.kuzu.stale-fts-*[0-9]"))) == 1  # rebuilt once: the next opens are clean
