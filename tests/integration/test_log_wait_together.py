"""`kg log --wait` answers with the pattern its entry joined, also when other processes log at the same moment.

QA: four `kg log error ... --pattern-key k --wait --json` started together; three answered `"pattern": null`. The
command never passed `--wait` on (it only applied the entry in the foreground), so a process whose entry another
process's drain had applied left without opening the graph, and without the pattern it promises. Real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))


def test_every_log_that_waits_reports_its_pattern_while_others_log(ws):
    env = {**os.environ, "KG_SERVER": "0", "KG_NOW": "2026-12-05T09:00:00"}
    procs = [subprocess.Popen([KG, "-w", str(ws.root), "log", "error", f"the socket timed out {i}", "--pattern-key",
                               "net.socket_timeout", "--wait", "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for i in range(6)]
    answers = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        answers.append(json.loads(out))
    assert all(a["applied"] for a in answers)
    assert [a["pattern"] and a["pattern"]["key"] for a in answers] == ["net.socket_timeout"] * 6
    assert all(a["pattern"]["recurrence"] >= 1 for a in answers)
