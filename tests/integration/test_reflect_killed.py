"""`kg reflect --apply` (and the session end's reflection) killed at any point while it logs, then run again, logs
each finding once: the entries are journaled one by one before the state that says they were logged is written,
so the state first notes what the run is about to log (kg/reflect/state.py `pending`) and the next run looks
those up in the graph (QA: a kill 3 s into a 1 MB transcript logged all 18 findings twice on the rerun)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_data_dir

NOW = "2026-12-05T06:00:00"
SRC = shared_data_dir() / "runtimes" / "claude_code" / "transcripts" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"

# The real CLI in a child that SIGKILLs itself once `after` entries are durable in the journal (before the next
# is appended, or before the state is written when there is none): a point in the run chosen exactly, no timing.
_KILLED = """
import os, sys
from kg.ingest.journal import Journal
from kg.cli.app import run
after, append = int(sys.argv[1]), Journal.append
done = []
def killing(self, records):
    logs = [r for r in records if r.get("op") == "log"]
    if logs and len(done) >= after:
        os.kill(os.getpid(), 9)
    out = append(self, records)
    done.extend(logs)
    return out
Journal.append = killing
import kg.reflect.state as S
write = S.write_atomic
def final(path, data):
    if len(done) >= after and b'"pending"' not in data:  # the state that says they were logged
        os.kill(os.getpid(), 9)
    return write(path, data)
S.write_atomic = final
run(sys.argv[2:])
"""


def _events(run_kg) -> list[str]:
    listed = run_kg(["list", "--type", "event", "--limit", "500", "--json"])
    assert listed.exit_code == 0, listed.stderr
    return sorted(e["text"] for e in listed.json)


def _killed(ws, after: int, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_NOW": NOW, "KG_SERVER": "0"}
    proc = subprocess.run([sys.executable, "-c", _KILLED, str(after), "-w", str(ws.root), *args],
                          capture_output=True, text=True, env=env, cwd=Path(__file__).parents[2])
    assert proc.returncode == -9, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def once(tmp_path_factory, request):
    """What one reflection that is never killed logs."""
    from tests.conftest import fresh_workspace, kg_runner

    ws = fresh_workspace(tmp_path_factory.mktemp("once") / "ws", request)
    run_kg = kg_runner(ws.root)
    assert run_kg(["--now", NOW, "reflect", "--apply", str(SRC)]).exit_code == 0
    texts = _events(run_kg)
    assert len(texts) == 3, texts
    return texts


@pytest.mark.parametrize("after", [0, 1, 2, 3])
def test_a_reflection_killed_after_any_entry_logs_each_once_when_run_again(ws, run_kg, once, after):
    _killed(ws, after, "reflect", "--apply", str(SRC))
    again = run_kg(["--now", NOW, "reflect", "--apply", str(SRC)])
    assert again.exit_code == 0, again.stderr
    assert f"Logged {3 - after}" in again.stdout or (after == 3 and "Logged 0" in again.stdout), again.stdout
    assert _events(run_kg) == once
    assert "Logged 0" in run_kg(["--now", NOW, "reflect", "--apply", str(SRC)]).stdout


@pytest.mark.parametrize("after", [0, 2])
def test_a_session_end_killed_while_it_reflects_logs_each_once(ws, run_kg, once, after):
    _killed(ws, after, "hook", "session-end", "--transcript", str(SRC))
    again = run_kg(["--now", NOW, "hook", "session-end", "--transcript", str(SRC)])
    assert again.exit_code == 0, again.stderr
    assert _events(run_kg) == once
