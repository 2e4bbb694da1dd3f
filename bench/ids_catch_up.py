"""What an allocation pays for the check of QA3 #2 (kg/ingest/ids_seen.py: a counter goes past the ids the side index
and the journal hold before its first id in a process): one `Journal.allocate` in a fresh process, on a copy of a
workspace of N bulk-loaded events (the side index built by a writer's open), against a baseline tree's allocate in
the same run (`--baseline-python ../base40/.venv/bin/python`): the journal lock and the read of ids.json, plus, in
this tree, the check (`Journal._catch_up`, its first call in the process). Prints medians and the ratio; never
asserts.

    .venv/bin/python bench/ids_catch_up.py --sizes 1000 10000 --runs 15 --baseline-python /work/base40/.venv/bin/python
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, table  # noqa: E402

CHILD = """
import sys, time
from pathlib import Path
from kg.ingest.journal import Journal
j = Journal(Path(sys.argv[1]), timeout=10)
t = time.perf_counter()
with j.locked():
    j._load_ids()
    if hasattr(j, "_catch_up"):  # this tree: the check alone, the first in the process (the allocate's fsync,
        j._catch_up(dict(j._ids), ["ERR-" + sys.argv[2]])  # ~100 ms on a loaded disk, would drown it)
print((time.perf_counter() - t) * 1e3)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--baseline-python", required=True)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            ws = build_workspace(Path(tmp) / f"ws{n}", n)
            with ws.store():
                pass  # the side index in step
            with sqlite3.connect(ws.kg_dir / "search.sqlite") as db:  # the day with the most errors: the longest range
                day, many = db.execute("SELECT substr(id, 5, 8) AS d, count(*) FROM node WHERE id LIKE 'ERR-%' "
                                       "GROUP BY d ORDER BY 2 DESC LIMIT 1").fetchone()
            times: dict[str, list[float]] = {"this tree": [], "baseline": []}
            for run in range(args.runs):
                for name, python in (("this tree", sys.executable), ("baseline", args.baseline_python)):
                    copy = Path(tmp) / f"c{n}-{run}-{name[0]}"
                    shutil.copytree(ws.kg_dir, copy)
                    out = subprocess.run([python, "-c", CHILD, str(copy), day], capture_output=True, text=True,
                                         check=True)
                    times[name].append(float(out.stdout))
                    shutil.rmtree(copy)
            mine, base = statistics.median(times["this tree"]), statistics.median(times["baseline"])
            rows.append([f"{n:,} ({many} that day)", f"{mine:.2f}", f"{base:.2f}", f"{mine / base:.2f}x"])
    print(table("one allocate in a fresh process (median ms)", ["events", "this tree", "baseline", "ratio"], rows))


if __name__ == "__main__":
    main()
