"""`kg log` speed and memory at 10k and 100k events, with a naive file-based version as the baseline.

    .venv/bin/python bench/log_speed.py [--sizes 10000,100000] [--runs 15]

Measured, per size:
- `kg log` end to end in a new process (the agent's path): median wall time, peak RSS;
- in-process `ws.log()` with the workspace held open (a hook or long-running agent): the median answer (at
  the ack; a background thread applies it), the wall time until 100 such logs are all applied (per log), and
  the median of `log(wait=True)`, which applies before answering;
- the naive baseline: a JSON trail that is loaded, appended to and rewritten on every log, with a linear
  scan for the pattern key — in a new process and in-process;
- importing a trail of N entries (`kg import trail`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, median_of, synthetic_rows, table  # noqa: E402

KG = str(Path(sys.executable).with_name("kg"))

NAIVE = r"""
import json, sys, datetime


def run(path, summary):
    with open(path) as fh:
        trail = json.load(fh)
    key = "git.push"
    count = sum(1 for e in trail["entries"] if e.get("pattern_key") == key)
    trail["entries"].append({"id": f"ERR-{len(trail['entries'])}", "summary": summary, "pattern_key": key,
                             "logged": datetime.datetime.now().isoformat(), "recurrence_count": count + 1})
    with open(path, "w") as fh:
        json.dump(trail, fh)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])
"""


def naive_trail(path: Path, n: int) -> None:
    entries = [{"id": r["id"], "type": "error", "summary": r["text"], "area": r["area"],
                "pattern_key": r["pattern_key"], "logged": r["created_at"].isoformat()} for r in synthetic_rows(n)]
    path.write_text(json.dumps({"version": 3, "entries": entries}))


LAUNCHER = r"""
import json, os, subprocess, sys, time
cmd, env = json.loads(sys.argv[1]), json.loads(sys.argv[2])
t = time.perf_counter()
proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rss_kb": usage.ru_maxrss, "code": os.waitstatus_to_exitcode(status),
                  "err": proc.stderr.read().decode()[-500:]}))
"""


def child_peak_rss_mb(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and peak RSS of one child process.

    The child is started by a small launcher process: on Linux a child's ru_maxrss includes the memory of
    the process that forked it (before exec), so forking from this large benchmark process would report the
    benchmark's own size. The launcher is ~10 MB, an upper bound on that error."""
    out = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, json.dumps(cmd), json.dumps(env)],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    if result["code"] != 0:
        raise SystemExit(f"{cmd} failed: {result['err']}")
    return result["wall"], result["rss_kb"] / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    # Byte-compile kg first, as an installed package is: with PYTHONDONTWRITEBYTECODE set (this sandbox sets
    # it) every `kg` process would otherwise compile kg's modules from source (~40 ms each).
    import kg.cli
    import kg.rules

    for pkg in (kg, kg.cli, kg.rules):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(pkg.__file__).parent)], check=True,
                       capture_output=True)
    rows = []
    tails: list[str] = []  # log()'s tail: a log past the backlog bound applies everything waiting
    base = Path(tempfile.mkdtemp(prefix="kg-bench-"))
    try:
        for n in sizes:
            ws = build_workspace(base / f"ws{n}", n)
            env = {**os.environ, "KG_WORKSPACE": str(ws.root)}
            # warm the page cache and replay nothing: one throw-away run
            child_peak_rss_mb([KG, "log", "error", "warm-up", "--wait"], env)
            cli: dict[str, tuple[list[float], list[float]]] = {}
            for mode, extra in (("answer", []), ("wait", ["--wait"])):
                walls, peaks = [], []
                for i in range(args.runs):
                    wall, peak = child_peak_rss_mb([KG, "log", "error", f"git push failed on the branch {i}",
                                                    "--area", "tooling", "--pattern-key", "git.branch", *extra], env)
                    walls.append(wall)
                    peaks.append(peak)
                    # let the detached drainer finish (a reading command waits for the graph and drains
                    # whatever is left) so the next run starts from the same state
                    subprocess.run([KG, "list", "--limit", "1"], env=env, check=True, capture_output=True)
                cli[mode] = (walls, peaks)

            counter = iter(range(10**9))

            def one(ws=ws, counter=counter, **kw):  # bound here (ruff B023); used in this size only
                return ws.log("error", f"pytest timed out on the fixture {next(counter)}", area="tests",
                              pattern_key="pytest.fixture", **kw)

            with ws:
                # held open (a long-running agent, a hook server): answers at the ack, a thread applies
                start = time.perf_counter()
                inproc, samples = median_of(one, 100)
                tails.append(f"{n:,}: p90 {sorted(samples)[89] * 1e3:.1f} ms, max {max(samples) * 1e3:.0f} ms")
                ws.drain()  # waits for the thread: every entry is in the graph now
                background = (time.perf_counter() - start) / 100
                applied, _ = median_of(lambda: one(wait=True), 100)  # applied before it answers

            trail = base / f"naive{n}.json"
            naive_trail(trail, n)
            naive_walls = []
            for i in range(max(5, args.runs // 3)):
                wall, _ = child_peak_rss_mb([sys.executable, "-c", NAIVE, str(trail), f"failure {i}"], dict(os.environ))
                naive_walls.append(wall)
            naive_walls.sort()
            naive_cli = naive_walls[len(naive_walls) // 2]
            ns: dict = {"__name__": "naive"}
            exec(compile(NAIVE, "naive", "exec"), ns)  # noqa: S102 - the baseline, measured in-process
            naive_in, _ = median_of(lambda ns=ns, trail=trail: ns["run"](str(trail), "failure"), 5)

            med = statistics.median
            answer, wait = med(cli["answer"][0]), med(cli["wait"][0])
            rows.append([f"{n:,}", f"{answer * 1e3:.0f} ms", f"{med(cli['answer'][1]):.0f} MB",
                         f"{wait * 1e3:.0f} ms", f"{med(cli['wait'][1]):.0f} / {max(cli['wait'][1]):.0f} MB",
                         f"{naive_cli * 1e3:.0f} ms", f"{naive_cli / answer:.1f}x / {naive_cli / wait:.1f}x",
                         f"{inproc * 1e3:.2f} ms", f"{background * 1e3:.1f} ms", f"{applied * 1e3:.1f} ms",
                         f"{naive_in * 1e3:.0f} ms", f"{naive_in / inproc:.0f}x / {naive_in / applied:.0f}x"])
        print(table("kg log (medians; ratio = naive / kg, higher is better for kg)",
                    ["events", "kg log", "RSS", "kg log --wait", "RSS median / max", "naive CLI",
                     "ratio (log / --wait)", "log()", "until applied", "log(wait=True)", "naive in-proc",
                     "ratio (log() / wait)"], rows))
        print("kg log: answers once the entry is durable; a detached child applies it. --wait: applies it "
              "(links, pattern) before answering.\nIn-process, the workspace held open (`with ws:`): log() "
              "answers once the entry is durable and a background thread applies it; 'until applied' is the "
              "wall time from the first of 100 such logs until all 100 are in the graph, per log. "
              "log(wait=True) applies it before answering.")
        print("log() tail (past `background_max_queued` waiting entries a log applies them all): " + "; ".join(tails))

        # import a trail of the largest size
        n = max(sizes)
        import kg
        from kg.ingest.trail import build_trail

        entries_doc = build_trail([{**r, "created_at": r["created_at"].isoformat(), "updated_at": None}
                                   for r in synthetic_rows(n, seed=11)], [], {}, synthetic_rows(1)[0]["created_at"])
        trail_path = base / "trail.json"
        trail_path.write_text(json.dumps(entries_doc, default=str))  # its export time is a datetime
        t = time.perf_counter()
        report = kg.ingest.trail.import_trail(kg.init_workspace(base / "imported"), [trail_path])
        took = time.perf_counter() - t
        print(table("import trail", ["entries", "imported", "time", "target"],
                    [[f"{n:,}", f"{report.entries:,}", f"{took:.1f} s", "≤ 30 s"]]))
        print(f"\nmax RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
              f"targets: kg log ≤ 300 ms and ≤ 200 MB at 100k; log() ≤ 10 ms at 100k")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
