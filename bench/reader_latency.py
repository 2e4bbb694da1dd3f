"""Issue 20: readers are never starved. Wall time of `kg search`, `kg status` and `kg hook session-start`
(whole processes) while 0, 1, 4 and 8 agents log in parallel (each agent a loop of `kg log`, each of which
answers at the ack and leaves a detached applier), plus `kg cycle` and `kg graph report` (an analysis load)
under the heaviest load: how many fail with "graph is held". Prints tables; never asserts.

    nice -n 10 .venv/bin/python bench/reader_latency.py [--agents 0 1 4 8] [--reads 6] [--prefill 60]
        [--kg before=/path/to/other/kg]

- `--kg LABEL=EXE` (repeatable): measure other kg executables too (an earlier version), each on its own fresh
  workspace, alternating with this one at every load level, so before/after figures share the run's load;

- p50 / p95 / max: seconds per read, over `--reads` reads of each command (interleaved, 0.2 s apart);
- pending: the entries a read reported as still being applied (`journal_pending` in status/--json, the note
  on stderr): the read did not wait for them (`write.reader_drain_seconds`);
- logging throughput: the entries the agents acknowledged while the reads ran (and the backlog they left);
- no-graph: `kg pref list`, the same start-up with no graph, read beside them: what the machine's load alone
  costs (the baseline in the same run); the ratio is p50 over that.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))
from common import table  # noqa: E402
from fault_trials import KG  # noqa: E402
from fault_trials import env as _trial_env  # noqa: E402


def env() -> dict[str, str]:
    """The trials' environment, with .pyc writing allowed (as after pip install): a kg run from sources that
    were never byte-compiled would measure the compiler on every start."""
    return {k: v for k, v in _trial_env().items() if k != "PYTHONDONTWRITEBYTECODE"}

READS = {
    "search": ("search", "deploy staging", "--json"),
    "status": ("status", "--json"),
    "session-start": ("hook", "session-start", "--json"),
}
_PENDING = re.compile(r"(\d+) entr(?:y|ies) logged moments ago")


def _pending(cmd: str, out: str, err: str) -> int:
    if cmd in ("status", "session-start"):
        try:
            return int(json.loads(out).get("journal_pending") or 0)
        except (ValueError, AttributeError):
            return 0
    m = _PENDING.search(err)
    return int(m.group(1)) if m else 0


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[max(0, int(round(0.95 * len(xs))) - 1)]


def _start_agents(ws: Path, n: int, kg: str = KG) -> list[subprocess.Popen]:
    script = (f'i=0; while true; do i=$((i+1)); {kg} -w {ws} log error "agent $A deploy step $i failed on staging" '
              '--area infra >/dev/null 2>&1; done')
    return [subprocess.Popen(["bash", "-c", script], env={**env(), "A": str(a)}, start_new_session=True)
            for a in range(n)]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        p.wait()


def _run(ws: Path, *args: str, timeout: float = 1200, kg: str = KG
         ) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    r = subprocess.run([kg, "-w", str(ws), *args], capture_output=True, text=True, env=env(), timeout=timeout)
    return time.perf_counter() - t, r


def logged(ws: Path) -> int:
    """How many entries the agents' `kg log`s acknowledged so far (their ids are ERR-..., given out in
    memory/.kg/ids.json)."""
    try:
        ids = json.loads((ws / "memory" / ".kg" / "ids.json").read_text())
    except (OSError, ValueError):
        return 0
    return sum(v for k, v in ids.items() if k.startswith("ERR-"))


def _heavy(ws: Path, args: tuple[str, ...], kg: str, timeout: float) -> tuple[float, bool, bool]:
    """One heavy command's wall time, whether it failed (a timeout counts), whether it said "is held"."""
    t = time.perf_counter()
    try:
        r = subprocess.run([kg, "-w", str(ws), *args], capture_output=True, text=True, env=env(), timeout=timeout)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t, True, False
    return time.perf_counter() - t, r.returncode != 0, "is held" in r.stderr


def measure(ws: Path, agents: int, reads: int, heavy: int, kg: str = KG, heavy_timeout: float = 600
            ) -> tuple[dict[str, dict], dict[str, tuple]]:
    before, started = logged(ws), time.perf_counter()
    procs = _start_agents(ws, agents, kg)
    times: dict[str, list[float]] = {c: [] for c in (*READS, "no-graph")}
    fails: dict[str, int] = {c: 0 for c in times}
    pend: dict[str, list[int]] = {c: [] for c in times}
    held: dict[str, tuple] = {}
    try:
        time.sleep(2.0 if agents else 0)  # let the stream build up
        for _ in range(reads):
            for cmd, args in READS.items():
                dt, r = _run(ws, *args, kg=kg)
                times[cmd].append(dt)
                fails[cmd] += r.returncode != 0
                pend[cmd].append(_pending(cmd, r.stdout, r.stderr))
                time.sleep(0.2)
            dt, r = _run(ws, "pref", "list", kg=kg)
            times["no-graph"].append(dt)
        for name, args in (("cycle", ("cycle", "--json")), ("graph report", ("graph", "report", "--json"))):
            done = [_heavy(ws, args, kg, heavy_timeout) for _ in range(heavy)]
            held[name] = (sum(f for _, f, _ in done), sum(h for _, _, h in done), [t for t, _, _ in done])
    finally:
        _stop(procs)
    seconds = time.perf_counter() - started
    import kg as kg_lib

    held["backlog"] = (kg_lib.open_workspace(ws).journal.pending_count(), 0)  # acknowledged, not yet applied
    held["logged"] = (logged(ws) - before, int(seconds * 1000))  # entries, and the milliseconds they took
    return {c: (times[c], fails[c], pend[c]) for c in times}, held


def merge(parts: list) -> tuple[dict[str, dict], dict[str, tuple[int, int]]]:
    """The slices of one level for one kg, as one set of figures (`first`: the median of the slices' first
    reads, each of which started the read server, or found it started)."""
    stats, held = {}, {}
    for c in parts[0][0]:
        times = [t for raw, _ in parts for t in raw[c][0]]
        pend = [p for raw, _ in parts for p in raw[c][2]]
        stats[c] = {"p50": statistics.median(times), "p95": _p95(times), "max": max(times),
                    "first": statistics.median(raw[c][0][0] for raw, _ in parts),
                    "failed": sum(raw[c][1] for raw, _ in parts), "pending": statistics.median(pend) if pend else 0,
                    "n": len(times)}
    backlog = [h.pop("backlog")[0] for _, h in parts]
    made = [h.pop("logged") for _, h in parts]
    stats["logged"] = {"entries": sum(e for e, _ in made), "seconds": sum(ms for _, ms in made) / 1000}
    for _, h in parts:
        held.update(h)
    stats["backlog"] = {"max": max(backlog)}
    return stats, held


def _prepare(ws: Path, kg: str, prefill: int) -> None:
    """A workspace made and filled by the kg measured on it (through its command line): one filled by this
    checkout's library may hold a migration an earlier kg refuses ("written by a newer kg")."""
    subprocess.run([kg, "init", str(ws)], check=True, capture_output=True, env=env())
    for i in range(prefill):
        subprocess.run([kg, "-w", str(ws), "log", "error", f"deploy step {i} failed on staging", "--area", "infra",
                        "--wait"], check=True, capture_output=True, env={**env(), "KG_SERVER": "0"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, nargs="+", default=[0, 1, 4, 8])
    ap.add_argument("--reads", type=int, default=6, help="reads of each command per load level")
    ap.add_argument("--heavy", type=int, default=3, help="kg cycle / kg graph report runs per load level")
    ap.add_argument("--prefill", type=int, default=60, help="entries in the workspace before the agents start")
    ap.add_argument("--rounds", type=int, default=1,
                    help="split each level's reads into this many slices, alternating the kgs slice by slice "
                         "(a shared machine's load drifts: alternation gives every kg the same)")
    ap.add_argument("--heavy-timeout", type=float, default=600,
                    help="seconds before a heavy command (kg cycle, kg graph report) is stopped and counted failed")
    ap.add_argument("--kg", action="append", default=[], metavar="LABEL=EXE",
                    help="another kg executable to measure in the same run (an earlier version)")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "kg", "cli", "rules"], cwd=HERE.parent, check=True)
    kgs = [("", KG)] + [(f"{label}: ", exe) for label, _, exe in (k.partition("=") for k in args.kg)]
    with tempfile.TemporaryDirectory(prefix="kg-readers-") as tmp:
        spaces = []
        for i, (_, exe) in enumerate(kgs):
            ws = Path(tmp) / f"ws{i}"
            _prepare(ws, exe, args.prefill)
            spaces.append(ws)
        rows, heavy_rows, log_rows = [], [], []
        for n in args.agents:
            samples: dict[str, list] = {label: [] for label, _ in kgs}
            slice_reads = max(1, args.reads // max(1, args.rounds))
            for r in range(max(1, args.rounds)):
                for (label, exe), ws in zip(kgs, spaces, strict=True):
                    heavy = args.heavy if r == args.rounds - 1 else 0
                    samples[label].append(measure(ws, n, slice_reads, heavy, exe, args.heavy_timeout))
                    part = samples[label][-1][0]
                    print(f"# slice {r + 1}, {label}{n} agents: " + ", ".join(
                        f"{c} {statistics.median(part[c][0]):.2f}/{max(part[c][0]):.2f}" for c in part)
                        + " s (median/max)", flush=True)
                    # the next slice starts as the first did: no server, no backlog (applied here, unmeasured)
                    subprocess.run([exe, "-w", str(ws), "serve", "stop"], capture_output=True, env=env())
                    subprocess.run([exe, "-w", str(ws), "status", "--json"], capture_output=True,
                                   env={**env(), "KG_SERVER": "0"})
            for label, _ in kgs:
                stats, held = merge(samples[label])
                base = stats["no-graph"]["p50"]
                for cmd in (*READS, "no-graph"):
                    d = stats[cmd]
                    rows.append([str(n), label + cmd, f"{d['p50']:.2f}", f"{d['p95']:.2f}", f"{d['max']:.2f}",
                                 f"{d['first']:.2f}", f"{d['failed']}/{d['n']}", f"{d['pending']:g}",
                                 f"{d['p50'] / base:.1f}"])
                for name, (failed, is_held, took) in held.items():
                    heavy_rows.append([str(n), label + name, f"{failed}/{args.heavy}", str(is_held),
                                       f"{statistics.median(took):.1f}" if took else "-",
                                       f"{max(took):.1f}" if took else "-"])
                print(f"# {label}{n} agents: journal backlog when the agents stopped, at most "
                      f"{stats['backlog']['max']} entries", flush=True)
                made = stats["logged"]
                log_rows.append([str(n), label.rstrip(": ") or "this kg", str(made["entries"]),
                                 f"{made['seconds']:.0f}", f"{made['entries'] / max(made['seconds'], 1e-9):.2f}",
                                 str(stats["backlog"]["max"])])
        print(table("reader latency (seconds, whole processes) while N agents log; first: the first read of the "
                    "level, which starts the read server", [
                        "agents", "command", "p50", "p95", "max", "first", "failed", "pending p50",
                        "p50 / no-graph"], rows))
        print(table("logging throughput beside the reads: entries the agents' `kg log`s acknowledged",
                    ["agents", "kg", "logged", "seconds", "per second", "backlog at the end (max)"], log_rows))
        print(table("heavy commands under the same load (a timeout counts as failed)",
                    ["agents", "command", "failed", "'graph is held'", "median s", "max s"], heavy_rows))


if __name__ == "__main__":
    main()
