"""CPU that one `kg log` costs the machine: the acknowledging process, and the detached applier it leaves.

On a 2-core machine with 8 agents logging, CPU is what readers wait for, so this counts CPU seconds (user +
system), not wall time. The bench makes itself a child subreaper (Linux `prctl`), so the detached applier,
which leaves its parent's session, is re-parented here and its CPU is collected too. Prints medians over
`--runs` logs (one at a time, and `--burst` at once, as parallel agents do), against `python -c pass` and
`python -c "import kuzu"` measured in the same run, and optionally an earlier kg (`--before`); never asserts.

    .venv/bin/python bench/log_cpu.py --runs 21 [--burst 8] [--before /path/to/old/kg]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table  # noqa: E402
from hook_speed import compiled_env  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
PR_SET_CHILD_SUBREAPER = 36


def _reap() -> tuple[float, int]:
    """CPU ms of every descendant left behind (re-parented to us), once they have all ended, and how many."""
    rest, count = 0.0, 0
    while True:
        try:
            _, _, usage = os.wait4(-1, 0)
        except ChildProcessError:
            return rest, count
        rest += (usage.ru_utime + usage.ru_stime) * 1000
        count += 1


def cpu_of(argvs: list[list[str]], env: dict[str, str]) -> tuple[float, float, int]:
    """Start every argv at once: (CPU ms of those processes, CPU ms of every descendant they left behind, how
    many descendants there were)."""
    procs = [subprocess.Popen(a, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for a in argvs]
    own = 0.0
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{' '.join(proc.args)} exited {proc.returncode}")
        own += (usage.ru_utime + usage.ru_stime) * 1000
    rest, count = _reap()
    return own, rest, count


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--burst", type=int, default=8, help="logs started at once in the burst rows")
    ap.add_argument("--before", help="another kg executable (an earlier version), measured in the same run")
    args = ap.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("prctl(PR_SET_CHILD_SUBREAPER) failed: this bench needs Linux")
    # No read server: one the applier starts under a burst (kg.ingest.background) lives until idle, and this
    # bench waits for every descendant; its CPU is a reader's cost, not a log's.
    env = {**compiled_env(), "KG_SERVER": "0"}
    kgs = [("", KG)] + ([("before: ", args.before)] if args.before else [])
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        cases: list[tuple[str, list[str], int]] = [
            ("python -c pass (baseline)", [sys.executable, "-c", "pass"], 1),
            ("python -c 'import kuzu'", [sys.executable, "-c", "import kuzu"], 1),
        ]
        for label, exe in kgs:
            root = Path(tmp) / f"ws{len(cases)}"
            subprocess.run([exe, "init", str(root)], check=True, capture_output=True, env=env)
            cases += [
                (f"{label}kg log learning ...", [exe, "-w", str(root), "log", "learning",
                                                  "cpu probe {i} for the bench", "--area", "tooling"], 1),
                (f"{label}kg log ... --json", [exe, "-w", str(root), "log", "error", "cpu probe {i} with --json",
                                               "--json"], 1),
                (f"{label}kg log, {args.burst} at once", [exe, "-w", str(root), "log", "error",
                                                          "burst probe {i}.{j} docker build failed"], args.burst),
            ]
        samples: dict[str, tuple[list[float], list[float], int]] = {name: ([], [], 0) for name, _, _ in cases}
        for i in range(args.runs + 1):  # interleaved, so drift in the machine's load hits every case alike
            for name, argv, n in cases:
                own, rest, count = cpu_of([[a.format(i=i, j=j) for a in argv] for j in range(n)], env)
                if i:  # the first round warms the caches
                    a, b, c = samples[name]
                    a.append(own / n)
                    b.append(rest / n)
                    samples[name] = (a, b, c + count)
                time.sleep(0.05)
        base = statistics.median(samples[cases[0][0]][0])
        rows = []
        for name, _, _ in cases:
            own, rest, count = samples[name]
            m_own, m_all = statistics.median(own), statistics.median([a + b for a, b in zip(own, rest, strict=True)])
            rows.append([name, f"{m_own:.0f}", f"{statistics.median(rest):.0f}", f"{m_all:.0f}",
                         f"{count / len(own):.1f}", f"{m_all / base:.1f}x"])
    print(table(f"CPU per log, median of {args.runs} (ms, user+system; burst rows: per log of the burst)",
                ["command", "answer", "detached", "total", "detached procs per run", "total / baseline"], rows))


if __name__ == "__main__":
    main()
