"""The first `kg cycle` after importing a large history (issue 16: ≤ 10 s at 100k events), against another
checkout's code in the same run, with where the time goes (statement timing in the store runner).

    .venv/bin/python bench/first_cycle.py --workspace bench/results/scale-100000 --runs 3 --compare ../main

The workspace (built by bench/scale.py) is copied afresh for every run, so each run is a first cycle; `now` is
the day after the imported history ends (its patterns are then ready to promote).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

NOW = "2026-01-07T12:00:00"
CHILD = r"""
import collections, json, sys, time
from datetime import datetime
import kg
from kg.lifecycle import api
from kg.store import Store
spent = collections.defaultdict(lambda: [0, 0.0])
run = Store.run
def timed(self, name, **params):
    t = time.perf_counter()
    try:
        return run(self, name, **params)
    finally:
        spent[name][0] += 1
        spent[name][1] += time.perf_counter() - t
Store.run = timed
from kg.lifecycle.cycle import Lifecycle
steps = collections.defaultdict(float)
def step(name, fn):
    def wrapped(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            steps[name] += time.perf_counter() - t
    return wrapped
for name in ("verify", "revert", "decay", "settle_conflicts", "promote", "export"):
    setattr(Lifecycle, name, step(name, getattr(Lifecycle, name)))
ws = kg.open_workspace(sys.argv[1])
t, cpu = time.perf_counter(), time.process_time()
rep = api.cycle(ws, now=datetime.fromisoformat(sys.argv[2])).as_dict()
total, cpu = time.perf_counter() - t, time.process_time() - cpu
print(json.dumps({"seconds": total, "cpu": cpu, "promoted": len(rep["promoted"]), "proposed": len(rep["proposed"]),
                  "waiting": len(rep["waiting"]), "statements": spent, "steps": steps}))
"""


def once(python: str, cwd: str, src: Path, now: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        shutil.copytree(src, ws, symlinks=True)
        out = subprocess.run([python, "-c", CHILD, str(ws), now], cwd=cwd, capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=Path, default=Path(__file__).parent / "results" / "scale-100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--now", default=NOW)
    ap.add_argument("--compare", type=Path, help="another checkout (with its .venv), run alternately")
    a = ap.parse_args()
    here = Path(__file__).resolve().parents[1]
    sides = {"this": (str(here / ".venv" / "bin" / "python"), str(here))}
    if a.compare:
        sides["compare"] = (str(a.compare.resolve() / ".venv" / "bin" / "python"), str(a.compare.resolve()))
    runs: dict[str, list[dict]] = {k: [] for k in sides}
    load = [os.getloadavg()[0]]
    for _ in range(a.runs):
        for name, (python, cwd) in sides.items():
            runs[name].append(once(python, cwd, a.workspace, a.now))
    load.append(os.getloadavg()[0])
    print(f"first cycle on {a.workspace.name}, now {a.now}, median of {a.runs} (runs alternate; 1-minute load "
          f"average {load[0]:.1f} before, {load[1]:.1f} after: wall time is only comparable within a run)")
    print("| side | seconds | CPU s | runs (s) | promoted / proposed / waiting |\n|---|---|---|---|---|")
    for name, rs in runs.items():
        r, each = rs[0], ", ".join(f"{x['seconds']:.2f}" for x in rs)
        print(f"| {name} | {statistics.median(x['seconds'] for x in rs):.2f} | "
              f"{statistics.median(x['cpu'] for x in rs):.2f} | {each} | "
              f"{r['promoted']} / {r['proposed']} / {r['waiting']} |")
    print("\n| step (median s) | " + " | ".join(runs) + " |\n|---|" + "---|" * len(runs))
    for st in ("verify", "revert", "decay", "settle_conflicts", "promote", "export"):
        print(f"| {st} | " + " | ".join(f"{statistics.median(x['steps'].get(st, 0) for x in rs):.2f}"
                                         for rs in runs.values()) + " |")
    for name, rs in runs.items():
        names = sorted(rs[0]["statements"], key=lambda k: -statistics.median(x["statements"].get(k, [0, 0])[1]
                                                                               for x in rs))
        print(f"\n{name}: statements by median seconds (calls)")
        for k in names[:12]:
            print(f"  {statistics.median(x['statements'].get(k, [0, 0])[1] for x in rs):6.2f}  "
                  f"{rs[0]['statements'][k][0]:4d}x  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
