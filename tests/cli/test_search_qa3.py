"""QA3's findings on search, through the real CLI and held open.

A query that is a pattern key lists that pattern first and its events right after it, whatever their words
(QA3 #4): `kg search db.migration.index` gave the pattern at 1, then entries that only shared "db" scoring higher,
and not the pattern's second event (its Chinese text holds no word of the key), under "(no memory holds
'migration', 'index': matched the other words)". One-off through the real CLI, held open (the cached view a
read server answers from) and through a real read server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kg
from kg.memory.search import search

KEY = "db.migration.index"
NOW = "2026-12-05T10:00:00"
EVENTS = ("数据库迁移失败：索引创建超时", "数据库迁移再次失败，索引锁等待超时")
DECOYS = ("test db not running, pytest could not connect", "the db was slow until the cache was warmed",
          "db backups run nightly at two", "rebuilt the search index of the docs site")


def _logged(run_kg) -> list[str]:
    for text in DECOYS:
        assert run_kg(["log", "learning", text, "--now", "2026-12-04T09:00:00"]).exit_code == 0
    ids = []
    for i, text in enumerate(EVENTS):
        done = run_kg(["log", "error", text, "--pattern-key", KEY, "--now", f"2026-12-0{i + 1}T09:00:00", "--wait",
                       "--json"])
        assert done.exit_code == 0, done.stderr
        ids.append(done.json["id"])
    return ids


def _order(hits: list[dict]) -> list[tuple[str, list[str]]]:
    return [(h["ref"], h["also"]) for h in hits]


def test_a_pattern_key_lists_its_pattern_then_its_events(ws, run_kg):
    first, second = _logged(run_kg)
    hits = run_kg(f"search {KEY} --limit 5 --json --now {NOW}").json
    assert hits[0]["kind"] == "pattern" and hits[0]["also"] == [first], _order(hits)
    assert hits[1]["ref"] == second, _order(hits)
    assert {h["match"] for h in hits} == {"terms"} and all(not h["unmatched"] for h in hits)
    out = run_kg(f"search {KEY} --limit 5 --now {NOW}").stdout
    assert "no memory holds" not in out, out

    with kg.open_workspace(ws.root) as held:
        for _ in range(2):  # the second query answers from the cached view
            got = search(held, KEY, limit=5, now=NOW)
            assert [(h.ref, h.also) for h in got[:2]] == [(hits[0]["ref"], [first]), (second, [])]


@pytest.mark.embedded_only("the read server serves an embedded graph (a team graph is read from its server)")
def test_a_pattern_key_through_the_read_server(ws, run_kg):
    _logged(run_kg)
    hits = run_kg(f"search {KEY} --limit 5 --json --now {NOW}").json
    env = {**os.environ, "KG_SERVER": "1"}
    kg_bin = str(Path(sys.executable).with_name("kg"))
    try:
        started = subprocess.run([kg_bin, "-w", str(ws.root), "serve", "start", "--json"], capture_output=True,
                                 text=True, env=env, timeout=300)
        assert json.loads(started.stdout)["running"], started.stderr
        served = subprocess.run([kg_bin, "-w", str(ws.root), "search", KEY, "--limit", "5", "--json", "--now", NOW],
                                capture_output=True, text=True, env=env, timeout=300)
        assert served.returncode == 0, served.stderr
        assert _order(json.loads(served.stdout)) == _order(hits)
        status = subprocess.run([kg_bin, "-w", str(ws.root), "serve", "status", "--json"], capture_output=True,
                                text=True, env=env, timeout=300)
        assert json.loads(status.stdout)["requests"] >= 1  # the server answered it
    finally:
        subprocess.run([kg_bin, "-w", str(ws.root), "serve", "stop"], capture_output=True, env=env, timeout=300)


def test_a_query_nothing_matches_shows_the_newest_memory_newest_first(ws, run_kg):
    """QA3 #5b: "showing the newest memory instead" listed them by score, so a critical entry of a month ago came
    before the last days' and the newest entry was cut from the top. One-off and held open."""
    for text, at, priority in (("principle of old", "2026-10-31T09:00:00", "critical"),
                               ("error of yesterday", "2026-12-03T09:00:00", "high"),
                               ("note of today", "2026-12-04T09:00:00", "low")):
        assert run_kg(["log", "learning", text, "--priority", priority, "--now", at]).exit_code == 0
    hits = run_kg(f"search zzqqxx --limit 2 --json --now {NOW}").json
    assert [(h["text"], h["match"]) for h in hits] == [("note of today", "recent"), ("error of yesterday", "recent")]
    with kg.open_workspace(ws.root) as held:
        assert [h.text for h in search(held, "zzqqxx", limit=3, now=NOW)] == [
            "note of today", "error of yesterday", "principle of old"]
