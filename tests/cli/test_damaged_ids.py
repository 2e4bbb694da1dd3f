"""A damaged memory/.kg/ids.json (`printf '{garbage' > memory/.kg/ids.json`): `kg log` and every hook exited 1,
so every capture was lost, and `kg doctor --repair` said "restore it from a backup", which kg keeps none of. The
counters are rebuilt from the graph and the journal, which hold every id acknowledged; none is given out again."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_broken_kg_toml import _hook
from tests.cli.test_hook_imports import TRANSCRIPTS, _payloads

NOW = "2026-12-01T10:00:00"


def _damage(ws) -> None:
    (ws.kg_dir / "ids.json").write_text("{garbage", encoding="utf-8")


def _ids(run_kg) -> list[str]:
    r = run_kg(["--now", NOW, "list", "--limit", "1000", "--json"])
    assert r.exit_code == 0, r.stderr
    return [row["id"] for row in r.json]


def test_kg_log_rebuilds_the_counters_and_gives_no_id_twice(ws, run_kg):
    before = [run_kg(["--now", NOW, "log", "learning", f"entry {n}", "--wait", "--json"]).json["id"] for n in range(3)]
    queued = ws.log("learning", "acknowledged, still in the journal", now=NOW, apply=False).id  # not in the graph
    _damage(ws)
    r = run_kg(["--now", NOW, "log", "learning", "logged over a damaged ids.json", "--wait", "--json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["id"] not in [*before, queued], r.json["id"]
    assert json.loads((ws.kg_dir / "ids.json").read_text())["LRN-20261201"] == 5
    assert [p.name for p in ws.kg_dir.glob("ids.json.damaged-*")]  # what was there is kept
    assert sorted(_ids(run_kg)) == sorted([*before, queued, r.json["id"]])


def test_doctor_rebuilds_it_and_a_dry_run_says_how(ws, run_kg):
    run_kg(["--now", NOW, "log", "error", "first failure", "--wait"])
    given = json.loads((ws.kg_dir / "ids.json").read_text())
    _damage(ws)
    dry = run_kg(["doctor", "--dry-run", "--json"])
    ids = next(c for c in dry.json["checks"] if c["name"] == "ids")
    assert ids["status"] == "error" and "run `kg doctor` to rebuild it" in ids["detail"], ids
    for args in (["doctor", "--json"], ["doctor", "--repair", "--json"]):
        _damage(ws)
        r = run_kg(args)
        assert r.exit_code == 0, r.stderr
        ids = next(c for c in r.json["checks"] if c["name"] == "ids")
        assert ids["status"] == "repaired" and "rebuilt memory/.kg/ids.json" in ids["detail"], ids
        assert json.loads((ws.kg_dir / "ids.json").read_text()) == given


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="needs /work/shared/data/runtimes")
def test_a_hook_keeps_a_real_failed_tool_call_over_a_damaged_ids_json(ws, run_kg):
    run_kg(["log", "error", "an earlier failure", "--wait"])
    _damage(ws)
    call = next(p for p in _payloads() if p.pop("is_error") and p["tool_name"] == "Bash")
    failed = {k: v for k, v in call.items() if k != "tool_response"} | {
        "hook_event_name": "PostToolUseFailure", "error": call["tool_response"]}
    r = _hook(ws, ["hook", "post-tool-use", "--runtime", "claude-code"], json.dumps(failed))
    assert r.returncode == 0, r.stderr
    errors = run_kg(["list", "--type", "error", "--json"]).json
    assert len(errors) == 2 and len({e["id"] for e in errors}) == 2, errors


def test_a_missing_ids_json_is_rebuilt_and_the_id_answered_is_the_one_stored(ws, run_kg):
    """QA: with ids.json removed, doctor said "readable" and `kg log` answered ERR-...-001 (the first entry's id)
    while it stored the entry as ERR-...-003: `kg show`/`resolve` of the id it answered acted on another entry."""
    before = [run_kg(["--now", NOW, "log", "error", f"error {n}", "--wait", "--json"]).json["id"]
              for n in ("one", "two")]
    (ws.kg_dir / "ids.json").unlink()
    dry = run_kg(["doctor", "--dry-run", "--json"])
    ids = next(c for c in dry.json["checks"] if c["name"] == "ids")
    assert ids["status"] == "error" and "ids.json is missing" in ids["detail"], ids
    r = run_kg(["--now", NOW, "log", "error", "error three", "--wait", "--json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["id"] not in before, r.json["id"]
    shown = run_kg(["--now", NOW, "show", r.json["id"], "--json"])
    assert shown.exit_code == 0 and "error three" in shown.stdout, shown.stdout
    assert sorted(_ids(run_kg)) == sorted([*before, r.json["id"]])


def test_a_teammate_s_tagged_id_in_the_graph_does_not_move_the_rebuilt_counter(ws, run_kg):
    """The rebuild read every id as one number: a teammate's ERR-...-002001 (member 2's first, brought in by an
    imported trail) rebuilt this workspace's counter as 2001, so its next id jumped to ERR-...-2002. It reads ids as
    the allocator writes them (`Journal.counter_of`): the counter is this workspace's own highest, 1."""
    first = run_kg(["--now", NOW, "log", "error", "our first failure", "--wait", "--json"]).json["id"]
    assert run_kg(["--now", NOW, "export", "trail", "--out", "t.json"]).exit_code == 0
    trail = json.loads((ws.root / "t.json").read_text())
    day = first.rsplit("-", 1)[0]
    trail["entries"].append({**trail["entries"][0], "id": f"{day}-002001", "summary": "a teammate's first failure"})
    (ws.root / "t.json").write_text(json.dumps(trail))
    r = run_kg(["--now", NOW, "import", "trail", str(ws.root / "t.json")])
    assert r.exit_code == 0, r.stderr
    assert f"{day}-002001" in _ids(run_kg)  # the graph holds the tagged id and our untagged one
    _damage(ws)
    r = run_kg(["--now", NOW, "log", "error", "logged over a damaged ids.json", "--wait", "--json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["id"] == f"{day}-002", r.json["id"]
    assert json.loads((ws.kg_dir / "ids.json").read_text())[day] == 2
