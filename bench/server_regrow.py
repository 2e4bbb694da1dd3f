"""The read server's resident memory after it applied an agent's logs, and once idle (issue 17: ≤ 150 MB at 100k).

Kùzu keeps resident what an open graph wrote: at 100k entries three `kg log`s with a pattern key take a server
from ~124 to ~170 MB, under `[serve] renew_above_mb` (250, set for a 1M graph's fresh open), and it stayed there
until it stopped; `renew_grew_mb` gives the growth back once idle (kg/serve/renew.py). Each run, on a fresh copy
of bench/scale.py's cached workspace: three reads start the server (search, inject -m, search), then three
pattern-keyed logs, which the server applies; the server's VmRSS after the reads, once the logs are applied,
after `--idle` seconds idle, and after one more read.

    .venv/bin/python bench/server_regrow.py --size 100000 --runs 3 --baseline ../main/.venv/bin/kg

The cache is bench/results/scale-N (build it with `bench/scale.py --sizes N --build-only`, or copy one with
cp -r); the baseline runs the same steps on its own copy, alternating with this kg. Prints medians; never
asserts.
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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

KG = str(Path(sys.executable).parent / "kg")
RESULTS = Path(__file__).resolve().parent / "results"
STEPS = ("after the reads", "logs applied", "idle", "after the next read")


def _run(kg: str, root: Path, *args: str, server: bool = True) -> str:
    env = {**os.environ, "KG_NOW": "2026-12-03T12:00:00", "KG_SERVER": "1" if server else "0"}
    return subprocess.run([kg, "-w", str(root), *args], capture_output=True, text=True, env=env,
                          timeout=1800).stdout


def _rss(kg: str, root: Path) -> float:
    pid = json.loads(_run(kg, root, "serve", "status", "--json") or "{}").get("pid")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _applied(root: Path) -> bool:
    kg_dir = root / "memory" / ".kg"
    journal = kg_dir / "journal.jsonl"
    return (not journal.exists() or journal.stat().st_size == 0) and not any(kg_dir.glob("draining-*.jsonl"))


def one(kg: str, cache: Path, work: Path, idle: float) -> list[float]:
    root = work / "ws"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(cache, root, symlinks=True)
    _run(kg, root, "status", server=False)  # an upgrade's migration and side files: not this figure
    _run(kg, root, "log", "learning", "a warm-up entry for the side files", "--wait", server=False)
    _run(kg, root, "serve", "start")  # a server folds the log it lets go of: the figures start from a folded graph
    _run(kg, root, "serve", "stop")  # (a server opening on an upgrade's unfolded log holds ~10-40 MB more)
    _run(kg, root, "search", "docker permission")
    _run(kg, root, "inject", "-m", "docker build failed")
    _run(kg, root, "search", "database lock")
    time.sleep(idle)
    got = [_rss(kg, root)]
    for i in range(3):
        _run(kg, root, "log", "error", f"the deploy {i} failed on a lock timeout", "--pattern-key", f"ops.deploy{i}")
    deadline = time.monotonic() + 600
    while not _applied(root) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    got.append(_rss(kg, root))
    time.sleep(idle)
    got.append(_rss(kg, root))
    _run(kg, root, "search", "docker permission")
    got.append(_rss(kg, root))
    _run(kg, root, "serve", "stop")
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--idle", type=float, default=9.0, help="seconds idle (past renew_idle_seconds, 5 s)")
    ap.add_argument("--baseline", help="another installation's kg, run alternating with this one")
    args = ap.parse_args()
    cache = RESULTS / f"scale-{args.size}"
    if not (cache / "memory" / ".kg").is_dir():
        print(f"no cached workspace at {cache}: run bench/scale.py --sizes {args.size} --build-only", file=sys.stderr)
        return 2
    kgs = {"this kg": KG, **({"baseline": args.baseline} if args.baseline else {})}
    seen: dict[str, list[list[float]]] = {name: [] for name in kgs}
    with tempfile.TemporaryDirectory(prefix="kg-regrow-") as tmp:
        for _ in range(args.runs):
            for name, kg in kgs.items():
                seen[name].append(one(kg, cache, Path(tmp), args.idle))
    header = ["server VmRSS (MB), median", *kgs]
    rows = [[step, *(f"{statistics.median(r[i] for r in seen[name]):.0f}" for name in kgs)]
            for i, step in enumerate(STEPS)]
    print(table(f"read server at {args.size:,} entries, {args.runs} runs", header, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
