"""How kg's agent-facing commands scale: 10k, 100k and 1M entries, whole processes, beside the seed's files
and a one-process SQLite FTS5 over the same entries.

For each size a seed-style trail (`memory/.learning-trail.json` and `.learnings/*.md`, realistic wording,
about one entry in three carrying one of n/20 pattern keys) is written and imported with `kg import trail`;
the workspace is cached under bench/results/scale-N/ (gitignored) and reused by later runs. Each command is
run as its own process (`kg ...`) several times: the table gives the median wall time and the peak resident
memory (the process's own, from wait4), and the growth factor from the size 10x smaller; each run goes round
every size and both kgs, so a load that changes during the run hits them alike. Reads are answered
by the workspace's read server (started by the first read, as for an agent); its peak memory is its own row,
and the CPU it spent on each read (from /proc, median) is the command's "(server CPU s)" row: on a shared
machine wall time mostly measures the queue for a core. The server keeps answers that only a write changes, so
a read repeated with nothing logged between is partly answered from them; each read's "(cold)" rows ask this
kg's server to forget them first (KG_READ_CACHE=0), as for the first read after an agent's `kg log`. Each size
is read at its own moment, an hour after its last entry (`KG_NOW`), as an agent reads a memory it is still
writing: the patterns ready to promote and the recent entries are then as many at every size. The SQLite FTS5
row asks for any of the query's words (as kg's index does), best first. `kg log` is the acknowledged write
(applied after, by the server); the first `kg cycle --dry-run` runs once, this kg's and the baseline's (up to
--baseline-cycle-up-to), and with --workdir, once the reads are measured, a `kg cycle` that writes and a dry run
after it (what a periodic job pays once the first cycle has run).

    .venv/bin/python bench/scale.py --sizes 10000 100000 [--runs 5] [--rebuild] [--baseline ../main/.venv/bin/kg]
        [--workdir /tmp/scale-run] [--import-sizes 10000 100000] [--cycle-up-to 100000] [--baseline-cycle-up-to N]
With --workdir the cached workspaces are copied there (and for the baseline too) and measured on the copies, so
the cache is never opened, migrated or written. --import-sizes imports the cached trail again, with this kg and
the baseline's, into fresh workspaces under the workdir: both imports' wall, CPU and peak memory in one run.
Targets (issue 22): import <= 30 s per 100k and <= 2 GB at 1M; status, list, search, inject, hook
session-start [-m] <= 0.6 s and <= 300 MB at 1M; growth per 10x <= 1.5x.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import AREAS, FAILS, NOUNS, TOOLS, table  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
KG = str(REPO / ".venv" / "bin" / "kg")
START = datetime(2025, 12, 1)  # the first entry; one every 31 s
QUERIES = ["git push failed", "docker build timed out", "npm lock file", "pytest fixture crashed"]
COMMANDS = [
    ("log", ["log", "error", "bench: the docker build timed out on the cache", "--pattern-key", "docker.bench"]),
    ("status", ["status"]),
    ("list --limit 20", ["list", "--limit", "20"]),
    ("search", ["search", QUERIES[0]]),
    ("inject -m", ["inject", "--message", "the docker build timed out again"]),
    ("hook session-start", ["hook", "session-start"]),
    ("hook session-start -m", ["hook", "session-start", "-m", "pytest fixture crashed on the schema"]),
]


# -- the data -----------------------------------------------------------------------------------------------
def entries(n: int, seed: int = 11):
    """Seed-format trail entries, oldest first: 40 per session, a few per minute."""
    rng = random.Random(seed)
    keys = max(1, n // 20)
    start = START
    for i in range(n):
        tool, fail, noun = rng.choice(TOOLS), rng.choice(FAILS), rng.choice(NOUNS)
        kind = rng.choices(["error", "learning", "feature"], [6, 3, 1])[0]
        at = start + timedelta(seconds=31 * i)
        prefix = {"error": "ERR", "learning": "LRN", "feature": "FEAT"}[kind]
        text = (f"{tool} {fail} on the {noun} while working on the {rng.choice(NOUNS)}"
                if kind == "error" else f"use {tool} with the {noun} flag before the {rng.choice(NOUNS)} step"
                if kind == "learning" else f"add a {noun} option to {tool}")
        key = f"{tool}.{noun}.{rng.randrange(keys // 200 + 1)}" if rng.random() < 0.33 else None
        yield {"id": f"{prefix}-{at:%Y%m%d}-{i:07d}", "type": kind,
               "category": {"error": "error", "learning": "correction", "feature": "feature_request"}[kind],
               "summary": text, "details": f"seen while running {tool} in {rng.choice(AREAS)} #{rng.randrange(10**6)}",
               "suggested_action": f"check the {noun} first", "area": rng.choice(AREAS),
               "priority": rng.choices(["low", "medium", "high", "critical"], [3, 5, 2, 0.1])[0],
               "status": rng.choices(["pending", "resolved"], [1, 3])[0], "logged": at.isoformat(),
               "source": "error" if kind == "error" else "conversation", "pattern_key": key,
               "session": f"{at:%Y-%m-%d}-{1 + (i // 40) % 9:03d}", "files": [], "tags": [tool]}


def no_server(kg: str, where: Path, env: dict) -> None:
    """Stop the workspace's read server and wait until none runs: a server still upgrading the copy (its first
    read migrates and rebuilds the side file) holds the graph, and a cycle started then failed on the lock."""
    for _ in range(600):
        done = subprocess.run([kg, "-w", str(where), "serve", "stop"], capture_output=True, text=True, env=env)
        if "No read server was running" in done.stdout + done.stderr:
            return
        time.sleep(1)


def cycle_row(results: dict, name: str, n: int, argv: list[str], env: dict) -> None:
    """One cycle, once, with no read server on the graph: its wall time and peak memory, and its CPU on a row
    of its own."""
    no_server(argv[0], Path(argv[2]), env)
    results.setdefault(name, {})[n] = measure(argv, {**env, "KG_LOCK_TIMEOUT": "900"})[:2]
    results.setdefault(f"{name} (CPU s)", {})[n] = (LAST_CPU[0], float("nan"))


def moment(n: int) -> str:
    """An hour after the last of `n` entries: when the agent reads its memory."""
    return (START + timedelta(seconds=31 * (n - 1), hours=1)).isoformat(timespec="seconds")


def write_seed_files(root: Path, n: int) -> None:
    """The trail JSON, streamed (never the whole document in memory), and the .learnings/*.md files."""
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / ".learnings").mkdir(exist_ok=True)
    md = {k: open(root / ".learnings" / f, "w", encoding="utf-8") for k, f in
          (("learning", "LEARNINGS.md"), ("error", "ERRORS.md"), ("feature", "FEATURE_REQUESTS.md"))}
    with open(root / "memory" / ".learning-trail.json", "w", encoding="utf-8") as out:
        out.write('{"version": 3, "entries": [\n')
        for i, e in enumerate(entries(n)):
            out.write((",\n" if i else "") + json.dumps(e, ensure_ascii=False))
            md[e["type"]].write(f"## [{e['id']}] {e['category']}\n\n**Logged**: {e['logged']}\n**Priority**: "
                                f"{e['priority']}\n**Status**: {e['status']}\n**Area**: {e['area']}\n\n### Summary\n"
                                f"{e['summary']}\n\n### Details\n{e['details']}\n\n---\n\n")
        out.write('\n], "graph": {"nodes": [], "edges": []}}\n')
    for fh in md.values():
        fh.close()


# -- measuring ----------------------------------------------------------------------------------------------
LAST_CPU = [0.0]


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB (the process itself: its own children are detached appliers), exit code.
    The CPU seconds of the last call are kept in LAST_CPU (on a shared machine wall time hides the work)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    if code:
        print(f"  ! {' '.join(argv[3:])}: exit {code}: {err.strip()[:300]}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024, code


def _complete(trail: Path) -> bool:
    """Whether write_seed_files finished this trail (its closing line is written last)."""
    try:
        with open(trail, "rb") as fh:
            fh.seek(-64, os.SEEK_END)
            return fh.read().endswith(b'"edges": []}}\n')
    except OSError:
        return False


def build(n: int, env: dict[str, str], rebuild: bool) -> tuple[Path, float | None, float | None]:
    root = RESULTS / f"scale-{n}"
    done = root / ".built"
    if done.exists() and not rebuild:
        info = json.loads(done.read_text())
        return root, info["seconds"], info["mb"]
    trail = root / "memory" / ".learning-trail.json"
    if not rebuild and _complete(trail):  # the seed files of an unfinished build: keep them, start a new graph
        subprocess.run(["rm", "-rf", str(root / "memory" / ".kg")], check=True)
    else:
        if root.exists():
            subprocess.run(["rm", "-rf", str(root)], check=True)
        root.mkdir(parents=True)
        write_seed_files(root, n)
    subprocess.run([KG, "init", str(root)], check=True, capture_output=True, env=env)
    wall, mb, code = measure([KG, "-w", str(root), "import", "trail", str(root / "memory" / ".learning-trail.json")],
                             env)
    if code:
        raise SystemExit(f"import of {n} entries failed")
    done.write_text(json.dumps({"seconds": wall, "mb": mb, "cpu": LAST_CPU[0]}))
    print(f"import of {n:,}: {wall:.0f} s wall, {LAST_CPU[0]:.0f} s CPU, {mb:.0f} MB", file=sys.stderr)
    return root, wall, mb


LAST_GRAPH_MB = [float("nan")]


def fresh_import(kg: str, trail_root: Path, into: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """`kg import trail` of a cached trail into a new workspace: wall s, peak MB, CPU s (and the graph file's
    MB in `LAST_GRAPH_MB`)."""
    subprocess.run(["rm", "-rf", str(into)], check=True)
    subprocess.run([kg, "init", str(into)], check=True, capture_output=True, env=env)
    trail = trail_root / "memory" / ".learning-trail.json"
    wall, mb, code = measure([kg, "-w", str(into), "import", "trail", str(trail)], env)
    if code:
        raise SystemExit(f"import into {into} failed")
    cpu = LAST_CPU[0]
    graph = into / "memory" / ".kg" / "graph.kuzu"
    LAST_GRAPH_MB[0] = graph.stat().st_size / 2**20 if graph.exists() else float("nan")
    subprocess.run([kg, "-w", str(into), "serve", "stop"], capture_output=True, env=env)
    subprocess.run(["rm", "-rf", str(into)], check=True)
    return wall, mb, cpu


def copy_to(src: Path, dst: Path) -> Path:
    """A fresh copy of a cached workspace (the cache itself is never opened). A cache that is a symlink (to
    another checkout's bench/results) is copied as the folder it names: `cp -a` of the link alone made the
    "copy" the cache itself, and the measured reads and logs wrote into it."""
    subprocess.run(["rm", "-rf", str(dst)], check=True)
    dst.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(src.resolve()), str(dst)], check=True)
    if dst.is_symlink() or dst.resolve() == src.resolve():
        raise SystemExit(f"{dst} is not a copy of {src}: refusing to measure on the cache")
    return dst


def server_pid(kg: str, root: Path, env: dict[str, str]) -> int | None:
    done = subprocess.run([kg, "-w", str(root), "serve", "status", "--json"], capture_output=True, text=True,
                          env=env)
    try:
        return json.loads(done.stdout or "{}").get("pid")
    except ValueError:
        return None


def cpu_of(pid: int | None) -> float:
    """A process's CPU seconds so far (user + system, from /proc), nan when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError):
        return float("nan")


IDLE = 7.0  # seconds the read server is left idle before its resident memory is read: past [serve]
# renew_idle_seconds (5 s), after which this kg's server opens its graph again when it grew (kg/serve/renew.py)


def server_peak_mb(root: Path, env: dict[str, str], kg: str = KG) -> tuple[float, float]:
    """The workspace's read server (it answered the reads above, warm, and applied the logs): its peak resident
    memory, and its resident memory once left idle `IDLE` seconds; then it is stopped, so the cached workspace is
    left closed."""
    done = subprocess.run([kg, "-w", str(root), "serve", "status", "--json"], capture_output=True, text=True, env=env)
    pid = json.loads(done.stdout or "{}").get("pid")

    def field(name: str) -> float:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith(name):
                    return int(line.split()[1]) / 1024
        except (OSError, ValueError):
            pass
        return float("nan")

    peak = field("VmHWM:")
    time.sleep(IDLE)
    idle = field("VmRSS:")
    subprocess.run([kg, "-w", str(root), "serve", "stop"], capture_output=True, env=env)
    return peak, idle


def seed_rows(root: Path, runs: int) -> dict[str, tuple[float, float]]:
    """The seed's way, in one process each: a log appends to ERRORS.md and rewrites the trail JSON; a search
    greps the files."""
    trail = root / "memory" / ".learning-trail.json"
    out = {}
    code = ("import json,sys,pathlib;p=pathlib.Path(sys.argv[1]);d=json.loads(p.read_text());"
            "d['entries'].append({'id':'ERR-20261201-x','summary':'x'});p.with_suffix('.tmp').write_text("
            "json.dumps(d));pathlib.Path(sys.argv[2]).open('a').write('## [ERR-20261201-x] error\\n')")
    samples = [measure([sys.executable, "-c", code, str(trail), str(root / ".learnings" / "SEED-LOG.md")],
                       dict(os.environ)) for _ in range(runs)]
    out["log (seed: rewrite trail)"] = (statistics.median(s[0] for s in samples), max(s[1] for s in samples))
    (root / "memory" / ".learning-trail.tmp").unlink(missing_ok=True)
    (root / ".learnings" / "SEED-LOG.md").unlink(missing_ok=True)
    grep = ["grep", "-ri", "-c", "-E", QUERIES[0].replace(" ", "|"), str(root / ".learnings"), str(trail)]
    samples = [measure(grep, dict(os.environ)) for _ in range(runs)]
    out["search (seed: grep files)"] = (statistics.median(s[0] for s in samples), max(s[1] for s in samples))
    return out


def fts5_rows(root: Path, n: int, runs: int) -> dict[str, tuple[float, float]]:
    """A one-process SQLite FTS5 over the same entries: the query only (the database is built once)."""
    db = RESULTS / f"fts5-{n}.sqlite"
    if not db.exists():
        con = sqlite3.connect(db)
        con.execute("CREATE VIRTUAL TABLE e USING fts5(id UNINDEXED, summary, details)")
        con.executemany("INSERT INTO e VALUES (?, ?, ?)", ((x["id"], x["summary"], x["details"]) for x in entries(n)))
        con.commit()
        con.close()
    con = sqlite3.connect(db)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        con.execute("SELECT id FROM e WHERE e MATCH ? ORDER BY rank LIMIT 10",
                    (" OR ".join(QUERIES[0].split()),)).fetchall()
        times.append(time.perf_counter() - t)
    con.close()
    return {"search (SQLite FTS5, in-process)": (statistics.median(times), float("nan"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached workspaces")
    ap.add_argument("--build-only", action="store_true", help="build (or find) the workspaces, measure nothing")
    ap.add_argument("--baseline", help="another checkout's kg (e.g. ../main/.venv/bin/kg), run in the same loop "
                                       "on --baseline-root (a copy of the workspace in that kg's schema)")
    ap.add_argument("--baseline-root", default="/tmp/scale-base-{n}", help="the baseline's workspace per size")
    ap.add_argument("--workdir", help="measure on copies of the cached workspaces made here (never the cache)")
    ap.add_argument("--import-sizes", type=int, nargs="*", default=[],
                    help="import these sizes' trails again, this kg and the baseline's, into the workdir")
    ap.add_argument("--no-cold", action="store_true",
                    help="leave out the (cold) rows: each read answered as the first after a write (KG_READ_CACHE=0 "
                         "makes the read server forget its kept answers first; a baseline that predates it ignores it)")
    ap.add_argument("--cycle-up-to", type=int, default=10**9, help="the first cycle --dry-run only up to this size "
                    "(with --workdir, then a cycle that writes and a dry run after it, once the reads are measured)")
    ap.add_argument("--baseline-cycle-up-to", type=int, default=10**9,
                    help="the baseline's cycles only up to this size (its first at 1M took ~1,000 s on 786aecf)")
    args = ap.parse_args()
    if args.import_sizes and not args.workdir:
        ap.error("--import-sizes needs --workdir")
    RESULTS.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "kg", "cli", "rules"], cwd=REPO, check=True)
    base_env = {**os.environ}
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    results: dict[str, dict[int, tuple[float, float]]] = {}
    sizes: dict[int, tuple[dict[str, str], Path, Path | None]] = {}  # size -> (env, workspace, baseline's)
    floor = [str(REPO / ".venv" / "bin" / "python"), "-c", "pass"]
    for n in args.sizes:
        env = {**base_env, "KG_NOW": moment(n)}
        root, secs, mb = build(n, env, args.rebuild)
        if args.build_only:
            continue
        built = json.loads((root / ".built").read_text())
        if n in args.import_sizes:  # both kgs, this run, fresh workspaces
            for tag, kg in [("", KG)] + ([(" [baseline]", args.baseline)] if args.baseline else []):
                wall, mb, cpu = fresh_import(kg, root, Path(args.workdir) / f"import-{n}", env)
                results.setdefault(f"import trail{tag}", {})[n] = (wall, mb)
                results.setdefault(f"import trail{tag} (CPU s)", {})[n] = (cpu, float("nan"))
                results.setdefault(f"import trail{tag} (graph MB)", {})[n] = (LAST_GRAPH_MB[0], float("nan"))
        else:
            results.setdefault("import trail (cached build)", {})[n] = (secs, mb)
            results.setdefault("import trail (cached build) (CPU s)", {})[n] = (built.get("cpu", float("nan")),
                                                                             float("nan"))
        base = Path(args.baseline_root.format(n=n)) if args.baseline else None
        if args.workdir:
            cache = root
            root = copy_to(cache, Path(args.workdir) / f"scale-{n}")
            if base:
                base = copy_to(cache, Path(args.workdir) / f"base-{n}")
        # the first read, cold (it starts the read server; on a workspace built by an older kg it migrates and
        # builds the aggregates), then the first cycle after the import, once: a dry run writes nothing
        results.setdefault("kg status (first: cold, migrates)", {})[n] = measure([KG, "-w", str(root), "status"],
                                                                                 env)[:2]
        if base:
            results.setdefault("kg status (first: cold, migrates) [baseline]", {})[n] = measure(
                [args.baseline, "-w", str(base), "status"], env)[:2]
        # the first writer upgrades the side file (rebuilt when its form changed, kg/store/sideindex.py): done by
        # a log that waits for the graph, not by the read server's first drain (p17: that one-off rebuild was
        # ~15 MB of the "read server peak" at 100k, 215 MB for main, ~200 once steady)
        for tag, kg, where in [("", KG, root)] + ([(" [baseline]", args.baseline, base)] if base else []):
            results.setdefault(f"kg log --wait (first writer: upgrades the side file){tag}", {})[n] = measure(
                [kg, "-w", str(where), "log", "error", "bench: the first writer after the upgrade", "--wait"], env)[:2]
        # the read servers start again after the one-off upgrade: "read server peak" is what the agent's reads
        # cost, not a migration's or a side-file rebuild's (a 1M copy upgraded in the server peaked at 1 GB)
        for kg, where in [(KG, root)] + ([(args.baseline, base)] if base else []):
            subprocess.run([kg, "-w", str(where), "serve", "stop"], capture_output=True, env=env)
        cycles = [("", KG, root)] + ([(" [baseline]", args.baseline, base)] if base else [])
        if n <= args.cycle_up_to:  # the first cycle after the import (a dry run writes nothing), both kgs
            for tag, kg, where in cycles:
                if tag and n > args.baseline_cycle_up_to:
                    continue
                cycle_row(results, f"kg cycle --dry-run (first){tag}", n, [kg, "-w", str(where), "cycle",
                                                                              "--dry-run"], env)
        sizes[n] = (env, root, base)
    if args.build_only:
        return
    # Every size's reads in one loop, each run going round the sizes (and both kgs): the machine's load over the
    # run hits every size alike, so the growth factors compare like with like (measured one size after another,
    # a load that rose between two sizes read as growth: 10k->100k search 1.40 on a quiet machine, 2.05 while
    # helpers' tests ran, the same tree).
    for name, argv in COMMANDS:
        runs = []  # (size, tag, kg, workspace, env)
        for n, (env, root, base) in sizes.items():
            runs.append((n, "", KG, root, env))
            if base and base.exists():
                runs.append((n, " [baseline]", args.baseline, base, env))
            if name != "log" and not args.no_cold:  # this kg's server, each read as the first after a write
                runs.append((n, " (cold)", KG, root, env))
                if base and base.exists():  # and the baseline's, in the same loop (it honours KG_READ_CACHE since
                    runs.append((n, " [baseline] (cold)", args.baseline, base, env))  # the read cache's landing)
        for _, _, kg, where, env in runs:
            measure([kg, "-w", str(where), *argv], env)  # warm the page cache; migrate; drain
        samples: dict[tuple[int, str], list] = {(n, tag): [] for n, tag, *_ in runs}
        cpus: dict[tuple[int, str], list] = {(n, tag): [] for n, tag, *_ in runs}
        served: dict[tuple[int, str], list] = {(n, tag): [] for n, tag, *_ in runs}
        pids = {(n, tag): server_pid(kg, where, env) for n, tag, kg, where, env in runs}
        for _ in range(args.runs):  # interleaved: the machine's load hits every size and both kgs alike
            for n, tag, kg, where, env in runs:
                before = cpu_of(pids[n, tag])
                samples[n, tag].append(measure([kg, "-w", str(where), *argv],
                                               {**env, "KG_READ_CACHE": "0"} if tag.endswith(" (cold)") else env))
                cpus[n, tag].append(LAST_CPU[0])
                served[n, tag].append(cpu_of(pids[n, tag]) - before)
        for n, tag, *_ in runs:
            results.setdefault(f"kg {name}{tag}", {})[n] = (statistics.median(s[0] for s in samples[n, tag]),
                                                           max(s[1] for s in samples[n, tag]))
            results.setdefault(f"kg {name}{tag} (CPU s)", {})[n] = (statistics.median(cpus[n, tag]), float("nan"))
            if name != "log":  # a read the server answered: the CPU it spent on it
                results.setdefault(f"kg {name}{tag} (server CPU s)", {})[n] = (
                    statistics.median(served[n, tag]), float("nan"))
    for n, (env, root, base) in sizes.items():
        cycles = [("", KG, root)] + ([(" [baseline]", args.baseline, base)] if base else [])
        results.setdefault("python start-up, no kg (floor)", {})[n] = (
            statistics.median(measure(floor, env)[0] for _ in range(args.runs)), float("nan"))
        for tag, kg, where in [("", KG, root)] + ([(" [baseline]", args.baseline, base)] if base and base.exists()
                                                   else []):
            peak, idle = server_peak_mb(where, env, kg)
            results.setdefault(f"read server peak (MB){tag}", {})[n] = (float("nan"), peak)
            results.setdefault(f"read server resident, {IDLE:g} s idle after the reads (MB){tag}", {})[n] = (
                float("nan"), idle)
        for name, value in {**seed_rows(root, args.runs), **fts5_rows(root, n, args.runs)}.items():
            results.setdefault(name, {})[n] = value
        disk = sum(f.stat().st_size for f in (root / "memory" / ".kg").glob("graph.kuzu*"))
        results.setdefault("graph on disk (MB)", {})[n] = (disk / 2**20, float("nan"))
        if args.workdir and n <= args.cycle_up_to:  # the cycles that write, last: they change what reads show
            for tag, kg, where in cycles:
                if tag and n > args.baseline_cycle_up_to:
                    continue
                cycle_row(results, f"kg cycle (first, writes){tag}", n, [kg, "-w", str(where), "cycle"], env)
                cycle_row(results, f"kg cycle --dry-run (after a cycle){tag}", n,
                          [kg, "-w", str(where), "cycle", "--dry-run"], env)
        if args.workdir:  # the copies go: a 1M workspace is 1.7 GB
            for where in (root, base):
                if where and where.exists():
                    subprocess.run([KG, "-w", str(where), "serve", "stop"], capture_output=True, env=env)
                    subprocess.run(["rm", "-rf", str(where)], check=True)
    header = ["command"]
    for n in args.sizes:
        header += [f"{n:,} s", "MB"] + (["x/10x"] if n != args.sizes[0] else [])
    rows = []
    for name, by_size in results.items():
        row = [name]
        prev = None
        for n in args.sizes:
            s, mb = by_size.get(n, (float("nan"), float("nan")))
            row += [f"{s:.4f}" if s == s else "-", f"{mb:.0f}" if mb == mb else "-"]
            if n != args.sizes[0]:
                row.append(f"{s / prev:.2f}" if prev and s == s and re.match(r"kg |search|log|import", name) else "-")
            prev = s
        rows.append(row)
    print(table(f"Scale (median of {args.runs} runs, whole processes, {os.cpu_count()} cores)", header, rows))


if __name__ == "__main__":
    main()
