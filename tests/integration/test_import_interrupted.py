"""An import killed with kill -9 was invisible: `kg status` showed the graph as before it, `kg doctor` was all ok,
including "temporary files: none left behind" beside its `.import-edges-<pid>.jsonl`, and nothing said to run it
again. Now status, doctor and the session brief say it was interrupted and give the command that resumes it; that
command finishes it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_reliability import _import_killed  # noqa: E402


@pytest.mark.embedded_only("kills a process in the middle of its COPY into the Kùzu file")
def test_status_and_doctor_name_an_interrupted_import_and_the_command_that_resumes_it(ws, run_kg, tmp_path):
    before, imported = _import_killed(ws, tmp_path, after=1)
    assert list(ws.kg_dir.glob(".import-edges-*.jsonl"))

    status = run_kg(["status", "--json"])
    assert status.exit_code == 0, status.stderr
    left = status.json["import_unfinished"]
    assert left["running"] is False and left["paths"] == [str((tmp_path / "b.trail.json").resolve())]
    assert left["resume"] == f"kg -w {shlex.quote(str(ws.root))} import trail"
    text = run_kg(["status"]).stdout
    assert "was interrupted" in text and f"Run `{left['resume']}` to resume it" in text, text
    brief = run_kg(["hook", "session-start", "--json"])
    assert brief.exit_code == 0 and f"Run `{left['resume']}` to resume it" in brief.json["text"], brief.stderr

    doctor = run_kg(["doctor", "--json"])
    assert doctor.exit_code == 1, doctor.stdout  # not all is well until it is run again
    checks = {c["name"]: c for c in doctor.json["checks"]}
    assert checks["import"]["status"] == "error" and left["resume"] in checks["import"]["detail"]
    assert checks["temporary files"]["status"] == "repaired" and ".import-edges-" in checks["temporary files"][
        "detail"]

    resumed = run_kg(shlex.split(left["resume"])[3:])  # (`kg -w ROOT` is the runner's own)
    assert resumed.exit_code == 0, resumed.stderr
    assert run_kg(["status", "--json"]).json["import_unfinished"] is None
    listed = run_kg(["list", "--limit", "1000", "--json"]).json
    assert {r["id"] for r in listed} >= set(before + imported)
    assert all(c["name"] != "import" for c in run_kg(["doctor", "--json"]).json["checks"])
