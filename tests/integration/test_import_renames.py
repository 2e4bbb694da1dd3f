"""An imported entry whose id another entry of the graph holds is kept under a new id, not dropped. Two workspaces
give out the same ids (each one's first learning of a day is `LRN-<day>-001`), and so does the seed skill's
`.learnings/*.md`: importing one into the other counted every such entry "already present" and lost it. Real CLI,
real graphs (Kùzu, and a FalkorDB graph each in that pass); a kill between the rename's note and the rows it names,
and one after them, then the resumed import, on Kùzu."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fresh_workspace, kg_runner

DAY = "2026-12-04"


def _texts(run) -> dict[str, str]:
    listed = run(["list", "--limit", "1000", "--json"])
    assert listed.exit_code == 0, listed.stderr
    return {r["id"]: r["summary"] if "summary" in r else r["text"] for r in listed.json}


def _two_workspaces(ws, run_kg, tmp_path, request):
    for i, text in enumerate(("caching needs a key per tenant", "retries need backoff")):
        assert run_kg(["log", "learning", text, "--wait", "--now", f"{DAY}T1{i}:00"]).exit_code == 0
    other = fresh_workspace(tmp_path / "b", request)
    run_b = kg_runner(other.root)
    for hour, text in ((9, "docker volumes need an absolute path"), (12, "docker volumes again need an absolute path"),
                       (13, "the tests need a clean database")):
        key = ["--pattern-key", "docker.volume"] if "docker" in text else []
        r = run_b(["log", "learning", text, *key, "--wait", "--now", f"{DAY}T{hour:02d}:00", "--json"])
        assert r.exit_code == 0, r.stderr
    assert run_b(["edge", "add", "LRN-20261204-003", "LRN-20261204-001", "caused_by"]).exit_code == 0
    assert run_b(["export", "trail"]).exit_code == 0
    return other.root / "memory" / ".learning-trail.json"


def test_another_workspaces_trail_keeps_every_entry_and_its_edges(ws, run_kg, tmp_path, request):
    trail = _two_workspaces(ws, run_kg, tmp_path, request)
    own = _texts(run_kg)
    r = run_kg(["import", "trail", str(trail)])
    assert r.exit_code == 0, r.stderr
    assert "2 imported entries have ids other entries of this graph hold" in r.stderr
    texts = _texts(run_kg)
    assert {k: texts[k] for k in own} == own  # this workspace's entries as they were
    by_text = {v: k for k, v in texts.items()}
    for text in ("docker volumes need an absolute path", "docker volumes again need an absolute path",
                 "the tests need a clean database"):
        assert text in by_text, texts
    moved = by_text["docker volumes need an absolute path"]
    assert moved not in own and by_text["the tests need a clean database"] == "LRN-20261204-003"
    shown = run_kg(["show", "LRN-20261204-003"]).stdout
    assert f"caused_by──► [{moved}]" in shown, shown  # the trail's edge follows its entry
    pattern = [k for k, v in texts.items() if k.startswith("pat-") and "docker" in v]
    members = run_kg(["show", pattern[0]]).stdout
    assert moved in members and by_text["docker volumes again need an absolute path"] in members, members

    again = run_kg(["import", "trail", str(trail)])  # the same trail again: nothing new, nothing renamed again
    assert again.exit_code == 0 and "Imported 0 entries" in again.stdout, again.stdout + again.stderr
    assert "have ids other entries" not in again.stderr and _texts(run_kg) == texts
    later = run_kg(["log", "learning", "logged after the merge", "--wait", "--json", "--now", f"{DAY}T15:00"])
    assert later.exit_code == 0 and later.json["id"] not in texts


def test_a_seed_skill_learnings_file_whose_ids_this_workspace_gave_out(ws, run_kg, tmp_path):
    assert run_kg(["log", "learning", "kg's own first learning", "--wait", "--now", f"{DAY}T10:00"]).exit_code == 0
    md = tmp_path / "LEARNINGS.md"
    md.write_text("# Learnings\n\n## [LRN-20261204-001] best_practice\n\n**Logged**: 2026-12-04T08:30:00Z\n"
                  "**Priority**: medium\n**Status**: pending\n**Area**: backend\n\n### Summary\n"
                  "Run the migrations before the seed script\n")
    r = run_kg(["import", "trail", str(md)])
    assert r.exit_code == 0 and "Imported 1 entries" in r.stdout, r.stdout + r.stderr
    texts = _texts(run_kg)
    assert texts["LRN-20261204-001"] == "kg's own first learning"
    assert "Run the migrations before the seed script" in texts.values()


_KILLED = """
import os, sys
import kg.store as S
from kg.cli.app import run
when, fetch = sys.argv[2], S.Store._fetch
def killing(self, cypher, params):
    if when == "before" and cypher.lstrip().startswith("COPY ") and "Node" in cypher:
        os.kill(os.getpid(), 9)
    out = fetch(self, cypher, params)
    if when == "after" and cypher.lstrip().startswith("COPY ") and "Node" in cypher:
        os.kill(os.getpid(), 9)
    return out
S.Store._fetch = killing
run(["-w", sys.argv[1], "import", "trail", sys.argv[3]])
"""


@pytest.mark.embedded_only("kills a process in the middle of its COPY into the Kùzu file")
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_killed_import_resumed_keeps_each_renamed_entry_once(ws, run_kg, tmp_path, request, when):
    trail = _two_workspaces(ws, run_kg, tmp_path, request)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    proc = subprocess.run([sys.executable, "-c", _KILLED, str(ws.root), when, str(trail)], capture_output=True,
                          text=True, env=env, cwd=Path(__file__).parents[2])
    assert proc.returncode == -9, proc.stderr
    resumed = run_kg(["import", "trail"])
    assert resumed.exit_code == 0, resumed.stderr
    texts = [v for k, v in _texts(run_kg).items() if k.startswith("LRN-")]
    for text in ("docker volumes need an absolute path", "docker volumes again need an absolute path",
                 "the tests need a clean database", "caching needs a key per tenant", "retries need backoff"):
        assert texts.count(text) == 1, texts


def test_the_same_file_read_in_another_time_zone_adds_nothing(ws, run_kg, tmp_path, monkeypatch):
    """A `Z` time is read as this machine's local time: imported again under another TZ, the entry's time differed
    from the node's and it was taken for another entry and kept twice (the reviewer's repro)."""
    import time

    md = tmp_path / "LEARNINGS.md"
    md.write_text("## [LRN-20261204-001] best_practice\n\n**Logged**: 2026-12-04T08:30:00Z\n\n### Summary\n"
                  "Run the migrations before the seed script\n")
    with monkeypatch.context() as zoned:
        for zone in ("UTC", "Europe/Berlin", "Asia/Kolkata"):
            zoned.setenv("TZ", zone)
            time.tzset()
            assert run_kg(["import", "trail", str(md)]).exit_code == 0
    time.tzset()
    assert list(_texts(run_kg).values()).count("Run the migrations before the seed script") == 1


def test_a_trail_rebuilt_after_a_rename_then_the_other_trail_again_adds_nothing(ws, run_kg, tmp_path, request):
    """This workspace kept the other's LRN-...-001 as -003; a graph rebuilt from this workspace's trail, then given
    the other trail again, kept it a second time (the rename was known only to the graph the import ran in)."""
    trail = _two_workspaces(ws, run_kg, tmp_path, request)
    assert run_kg(["import", "trail", str(trail)]).exit_code == 0
    assert run_kg(["export", "trail"]).exit_code == 0
    rebuilt = fresh_workspace(tmp_path / "rebuilt", request)
    run_c = kg_runner(rebuilt.root)
    assert run_c(["import", "trail", str(ws.root / "memory" / ".learning-trail.json")]).exit_code == 0
    again = run_c(["import", "trail", str(trail)])
    assert again.exit_code == 0 and "Imported 0 entries" in again.stdout, again.stdout + again.stderr
    texts = [v for k, v in _texts(run_c).items() if k.startswith("LRN-")]
    assert sorted(texts) == sorted(set(texts)) and len(texts) == 5, texts


def test_a_trail_pattern_whose_id_another_pattern_holds_keeps_its_own_key(ws, run_kg, tmp_path, request):
    """Both workspaces' first pattern was `pat-<day>-001`, of other keys: the trail's was dropped as present and its
    entries joined this graph's pattern of the other key (recurrence 4x), its own key gone."""
    other = fresh_workspace(tmp_path / "h", request)
    run_h = kg_runner(other.root)
    for i in (1, 2):
        assert run_kg(["log", "learning", f"cache lesson {i}", "--pattern-key", "caching.tenant", "--wait",
                       "--now", f"{DAY}T1{i}:00"]).exit_code == 0
        assert run_h(["log", "learning", f"docker lesson {i}", "--pattern-key", "docker.volume", "--wait",
                      "--now", f"{DAY}T0{i}:00"]).exit_code == 0
    assert run_h(["export", "trail"]).exit_code == 0
    assert run_kg(["import", "trail", str(other.root / "memory" / ".learning-trail.json")]).exit_code == 0
    listed = run_kg(["list", "--type", "pattern", "--json"]).json
    keys = {}
    for row in listed:
        shown = run_kg(["show", row["id"], "--json"]).json
        keys[shown["node"]["pattern_key"]] = sorted(e["other"] for e in shown["edges"] if e["type"] == "derived_from")
    texts = _texts(run_kg)
    assert {k: sorted(texts[i] for i in v) for k, v in keys.items()} == {
        "caching.tenant": ["cache lesson 1", "cache lesson 2"], "docker.volume": ["docker lesson 1", "docker lesson 2"]}


def test_two_trails_that_share_ids_imported_in_one_run_keep_every_entry(ws, run_kg, tmp_path, request):
    """Two other workspaces' trails given to one `kg import trail`: the second's LRN-...-001 was a "duplicate id in
    the imported files" and skipped (lost, exit 0), where imported one after the other it is kept under a new id.
    A repeat of one file (the same trail named twice) is still loaded once."""
    trails = []
    for name, texts in (("x", ("x caching lesson", "x retry lesson")), ("y", ("y docker lesson",))):
        other = fresh_workspace(tmp_path / name, request)
        run_o = kg_runner(other.root)
        for hour, text in enumerate(texts, start=8 if name == "x" else 14):
            assert run_o(["log", "learning", text, "--wait", "--now", f"{DAY}T{hour:02d}:00"]).exit_code == 0
        assert run_o(["export", "trail"]).exit_code == 0
        trails.append(tmp_path / f"{name}.json")
        trails[-1].write_bytes((other.root / "memory" / ".learning-trail.json").read_bytes())
    r = run_kg(["import", "trail", *map(str, trails), "--json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["entries"] == 3 and not r.json["skipped"], r.json
    texts = sorted(v for k, v in _texts(run_kg).items() if k.startswith("LRN-"))
    assert texts == ["x caching lesson", "x retry lesson", "y docker lesson"]
    again = run_kg(["import", "trail", *map(str, trails), str(trails[0]), "--json"])
    assert again.exit_code == 0 and again.json["entries"] == 0, again.stdout + again.stderr
    assert sorted(v for k, v in _texts(run_kg).items() if k.startswith("LRN-")) == texts


def test_another_workspaces_principle_and_lesson_of_the_same_ids_are_kept(ws, run_kg, tmp_path, request):
    """Each workspace's first principle of a day is `pri-<day>-001`, its first lesson `les-<day>-001`: the other
    workspace's were counted "already present" and lost (only entries were renamed). Its edge follows them."""
    other = fresh_workspace(tmp_path / "k", request)
    run_k = kg_runner(other.root)
    for run, hour, who in ((run_kg, "09", "own"), (run_k, "14", "other")):
        assert run(["node", "add", "principle", f"{who}: prefer small commits", "--now", f"{DAY}T{hour}:00"]
                   ).exit_code == 0
        assert run(["node", "add", "lesson", f"{who}: check the lockfile", "--now", f"{DAY}T{hour}:05"]).exit_code == 0
        assert run(["edge", "add", f"les-{DAY.replace('-', '')}-001", f"pri-{DAY.replace('-', '')}-001", "supports"]
                   ).exit_code == 0
    assert run_k(["export", "trail"]).exit_code == 0
    trail = other.root / "memory" / ".learning-trail.json"
    r = run_kg(["import", "trail", str(trail)])
    assert r.exit_code == 0 and "kept under new ids" in r.stderr, r.stdout + r.stderr
    texts = _texts(run_kg)
    by_text = {v: k for k, v in texts.items()}
    assert {"own: prefer small commits", "other: prefer small commits", "own: check the lockfile",
            "other: check the lockfile"} <= set(by_text), texts
    lesson, principle = by_text["other: check the lockfile"], by_text["other: prefer small commits"]
    assert lesson.startswith("les-") and principle.startswith("pri-") and lesson != f"les-{DAY.replace('-', '')}-001"
    assert f"supports──► [{principle}]" in run_kg(["show", lesson]).stdout
    again = run_kg(["import", "trail", str(trail)])
    assert again.exit_code == 0 and "kept under new ids" not in again.stderr and _texts(run_kg) == texts


_KILLED_FIRST_RUN = """
import os, sys
import kg.ingest.importing as imp
imp._build_index = lambda ws, st: os.kill(os.getpid(), 9)  # the first run of files killed at its end
from kg.cli.app import run
run(["-w", sys.argv[1], "import", "trail", *sys.argv[2:]])
"""


@pytest.mark.embedded_only("kills a process holding the Kùzu file")
def test_a_kill_in_the_first_run_of_files_that_share_ids_resumes_every_file(ws, run_kg, tmp_path, request):
    """Files that share ids are imported one run after another; the mark named only the first run's files, so a
    kill there, then `kg import trail` (which finishes what the mark names), lost the later files (the reviewer)."""
    trails = []
    for name, hour in (("m", "08"), ("n", "15")):
        other = fresh_workspace(tmp_path / name, request)
        run_o = kg_runner(other.root)
        assert run_o(["log", "learning", f"{name} lesson", "--wait", "--now", f"{DAY}T{hour}:00"]).exit_code == 0
        assert run_o(["export", "trail"]).exit_code == 0
        trails.append(tmp_path / f"{name}.json")
        trails[-1].write_bytes((other.root / "memory" / ".learning-trail.json").read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    proc = subprocess.run([sys.executable, "-c", _KILLED_FIRST_RUN, str(ws.root), *map(str, trails)],
                          capture_output=True, text=True, env=env, cwd=Path(__file__).parents[2])
    assert proc.returncode == -9, proc.stderr
    resumed = run_kg(["import", "trail"])
    assert resumed.exit_code == 0, resumed.stderr
    assert sorted(v for k, v in _texts(run_kg).items() if k.startswith("LRN-")) == ["m lesson", "n lesson"]
    assert not (ws.kg_dir / "import.json").exists()


def test_two_workspaces_entries_made_at_the_same_second_are_both_kept(ws, run_kg, tmp_path, request):
    """Each workspace's first learning of the day, logged by a hook at 10:00 sharp, is `LRN-<day>-001`: the other's
    was taken for this one's (the same id, the same second) and dropped as "already present", exit 0, no warning.
    The same text at the same second is still the same entry: the trail again, or this workspace's own, adds none."""
    other = fresh_workspace(tmp_path / "s", request)
    run_s = kg_runner(other.root)
    for run, text in ((run_kg, "pin the node version in CI"), (run_s, "the staging database needs a VPN")):
        r = run(["log", "learning", text, "--wait", "--json", "--now", f"{DAY}T10:00"])
        assert r.exit_code == 0 and r.json["id"] == "LRN-20261204-001", r.stdout + r.stderr
    assert run_s(["export", "trail"]).exit_code == 0
    trail = other.root / "memory" / ".learning-trail.json"
    r = run_kg(["import", "trail", str(trail), "--json"])
    assert r.exit_code == 0 and (r.json["entries"], r.json["already_present"]) == (1, 0), r.stdout + r.stderr
    assert any("LRN-20261204-001 as LRN-20261204-002" in w for w in r.json["warnings"]), r.json["warnings"]
    texts = _texts(run_kg)
    assert texts == {"LRN-20261204-001": "pin the node version in CI",
                     "LRN-20261204-002": "the staging database needs a VPN"}, texts
    assert run_kg(["export", "trail"]).exit_code == 0
    for again in (trail, ws.root / "memory" / ".learning-trail.json"):
        r = run_kg(["import", "trail", str(again), "--json"])
        assert r.exit_code == 0 and r.json["entries"] == 0 and not r.json["warnings"], r.stdout + r.stderr
    assert _texts(run_kg) == texts


def test_this_workspaces_own_learnings_imported_again_add_nothing(ws, run_kg):
    """`.learnings/*.md` written by `kg export trail --learnings`, read back: the entries are this workspace's own (the
    same id, the same second) though a summary does not survive the markdown round trip or a person edited it in
    LEARNINGS.md. Taken for another workspace's by their text, each was kept again under a new id, with a warning
    blaming another workspace."""
    for i, text in enumerate(("## [LRN-1] not a heading", "### Summary inside",
                              "use --- as the front matter separator")):
        assert run_kg(["log", "learning", text, "--wait", "--now", f"{DAY}T1{i}:00"]).exit_code == 0
    assert run_kg(["export", "trail", "--learnings"]).exit_code == 0
    md = ws.root / ".learnings" / "LEARNINGS.md"
    md.write_text(md.read_text(encoding="utf-8").replace("use --- as", "use three dashes as"), encoding="utf-8")
    before = _texts(run_kg)
    r = run_kg(["import", "trail", str(ws.root / ".learnings"), "--json"])
    assert r.exit_code == 0 and r.json["entries"] == 0 and not r.json["warnings"], r.stdout + r.stderr
    assert _texts(run_kg) == before
