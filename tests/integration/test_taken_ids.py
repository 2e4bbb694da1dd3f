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


def test_kg_log_wait_reports_the_id_its_entry_was_kept_under(tmp_path, request):
    """`kg log --wait` answered with the journaled id after the drain had kept the entry under another: `kg show` on
    it showed the other entry (the reviewer's find)."""
    mine = fresh_workspace(tmp_path / "mine", request)
    theirs = fresh_workspace(tmp_path / "theirs", request)
    taken = theirs.log("learning", "use pnpm, not npm", now=NOW)
    with mine.store() as st:  # their entry is in my graph under the id my next log is given
        apply_records(mine, st, [journaled(fresh_workspace(tmp_path / "other", request), "use pnpm, not npm")])
    result = mine.log("learning", "prefer yarn workspaces", now=NOW, wait=True)
    assert result.applied and result.id != taken.id
    assert mine.show(result.id)["node"]["text"] == "prefer yarn workspaces"


def test_a_replay_of_an_applied_log_is_still_skipped(tmp_path, request):
    ws = fresh_workspace(tmp_path / "ws", request)
    record = journaled(ws, "the entry itself")
    with ws.store() as st:  # the open drains the journal: the record is applied
        assert apply_records(ws, st, [copy.deepcopy(record)]) == []
    assert texts(ws) == ["the entry itself"]


@pytest.mark.falkordb
def test_another_member_cannot_import_plain_ids_so_member_one_keeps_its_next_log(tmp_path, falkordb_url):
    """The QA pass's repro, through real processes: member 2 imported an embedded workspace's trail (plain ids) into
    the team graph, and member 1's next log of one of those ids was acknowledged and lost. The import is now refused
    before anything is written (exit 2, naming member 1), and member 1's log lands under the id it was given."""
    env = {k: v for k, v in os.environ.items() if k != "KG_STORE"} | {"KG_SERVER": "0", "KG_NOW": NOW}

    def run(root: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == code, (args, done.stderr)
        return done

    first, second = tmp_path / "first", tmp_path / "second"
    run(tmp_path, "init", str(first), "--store", falkordb_url)
    run(first, "log", "error", "first: webpack ran out of memory")
    kg.init_workspace(second)
    run(second, "log", "error", "second: flaky selenium test")
    run(second, "log", "learning", "second: use pnpm, not npm")
    run(second, "export", "trail")
    run(second, "init", "--store", falkordb_url, "--force")
    refused = run(second, "import", "trail", code=2)
    assert "plain ids are member 1's, and this workspace is member 2" in refused.stderr, refused.stderr
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    logged = json.loads(run(first, "log", "learning", "first: prefer yarn workspaces", "--wait", "--json").stdout)
    assert logged["applied"] is True
    listed = {r["id"]: r["text"] for r in json.loads(run(first, "list", "--json").stdout)}
    assert listed[logged["id"]] == "first: prefer yarn workspaces", listed
    assert "second: use pnpm, not npm" not in listed.values()


def test_a_turn_threaded_after_a_log_an_earlier_batch_renamed_follows_it(tmp_path, request):
    """`after` was remapped only inside the batch that renamed its turn: the next batch's turn was threaded
    (`led_to`) from the other entry that holds the old id (the reviewer's find, with 66 turns over two batches)."""
    mine = fresh_workspace(tmp_path / "mine", request)
    other = fresh_workspace(tmp_path / "other", request)
    mine.log_many([{"kind": "learning", "summary": "turn one of mine", "session": "s1"},
                   {"kind": "learning", "summary": "turn two of mine", "session": "s1"}], now=NOW, thread=True,
                  apply=False)
    # another's entry takes the id my first turn was given, after it was given (an allocation goes past the ids
    # the graph holds already, QA3 #2: an entry that came in before would not meet it)
    with mine.store(apply_journal=False) as st:
        apply_records(mine, st, [journaled(other, "their note")])
    with mine.journal.locked():
        records = [json.loads(line) for line in mine.journal.path.read_text().splitlines()]
    first, second = [r for r in records if r.get("op") == "log"]
    journaled_as = first["id"]
    assert second.get("after") == journaled_as
    with mine.store(apply_journal=False) as st:  # one batch each, as a drain cut between them applies them
        (one,) = apply_records(mine, st, [first])
        (two,) = apply_records(mine, st, [second])
    assert one != journaled_as
    led = [e for e in mine.show(two)["edges"] if e["type"] == "led_to" and e["direction"] == "in"]
    assert [e["other"] for e in led] == [one], led
