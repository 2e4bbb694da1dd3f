"""An acknowledged log whose id another entry already holds in the graph is kept under a new id, never skipped as
"already there" (kg/ingest/apply.py `_renamed`); a replay of it (a drain a crash cut short) is still skipped.

The QA pass's case (a lost write): on a team graph member 1 gives out plain ids (`LRN-20261204-001`), and so does
an embedded workspace; when another member imports that workspace's trail, its plain ids land in the team graph,
and member 1's next log of the same id was acknowledged, then skipped by the drain as a replay.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kg
from kg.ingest.apply import apply_records
from tests.conftest import fresh_workspace

KG = str(Path(sys.executable).with_name("kg"))
NOW = "2026-12-04T10:00:00"


def journaled(ws, text: str) -> dict:
    """The journal record of one log, left unapplied."""
    ws.log("learning", text, now=NOW, apply=False)
    with ws.journal.locked():
        (record,) = [r for r in json.loads("[" + ",".join(ws.journal.path.read_text().splitlines()) + "]")
                     if r.get("op") == "log"]
    return record


def texts(ws) -> list[str]:
    return sorted(r["text"] for r in ws.list() if r["kind"] == "event")


def test_a_log_whose_id_another_entry_holds_is_kept_under_a_new_id_and_replays_once(tmp_path, request, capfd):
    mine = fresh_workspace(tmp_path / "mine", request)
    theirs = fresh_workspace(tmp_path / "theirs", request)
    mine.log("learning", "prefer yarn workspaces", now=NOW)
    record = journaled(theirs, "use pnpm, not npm")  # the same plain id, another entry
    assert record["id"] == mine.list()[0]["id"]
    with mine.store() as st:
        done = apply_records(mine, st, [copy.deepcopy(record)])
    assert len(done) == 1 and done[0] != record["id"], done
    assert f"the entry logged as {record['id']} is kept as {done[0]}" in capfd.readouterr().err
    assert texts(mine) == ["prefer yarn workspaces", "use pnpm, not npm"]
    with mine.store() as st:  # the drain replays the same record after a crash: nothing new
        assert apply_records(mine, st, [copy.deepcopy(record)]) == []
    assert texts(mine) == ["prefer yarn workspaces", "use pnpm, not npm"]
    assert mine.log("learning", "the next one", now=NOW).id not in {record["id"], done[0]}


def test_a_replay_of_an_applied_log_is_still_skipped(tmp_path, request):
    ws = fresh_workspace(tmp_path / "ws", request)
    record = journaled(ws, "the entry itself")
    with ws.store() as st:  # the open drains the journal: the record is applied
        assert apply_records(ws, st, [copy.deepcopy(record)]) == []
    assert texts(ws) == ["the entry itself"]


@pytest.mark.falkordb
def test_member_one_keeps_its_log_after_another_member_imports_plain_ids(tmp_path, falkordb_url):
    env = {k: v for k, v in os.environ.items() if k != "KG_STORE"} | {"KG_SERVER": "0", "KG_NOW": NOW}

    def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, (args, done.stderr)
        return done

    first, second = tmp_path / "first", tmp_path / "second"
    run(tmp_path, "init", str(first), "--store", falkordb_url)
    run(first, "log", "error", "first: webpack ran out of memory")
    kg.init_workspace(second)
    run(second, "log", "error", "second: flaky selenium test")
    run(second, "log", "learning", "second: use pnpm, not npm")
    run(second, "export", "trail")
    run(second, "init", "--store", falkordb_url)
    run(second, "import", "trail")
    logged = json.loads(run(first, "log", "learning", "first: prefer yarn workspaces", "--wait", "--json").stdout)
    assert logged["applied"] is True
    listed = json.loads(run(first, "list", "--json").stdout)
    assert "first: prefer yarn workspaces" in [r["text"] for r in listed], listed
