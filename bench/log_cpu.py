"""CPU that one `kg log` costs the machine: the acknowledging process, and the detached applier it leaves.

On a 2-core machine with 8 agents logging, CPU is what readers wait for, so this counts CPU seconds (user +
system), not wall time. The bench makes itself a child subreaper (Linux `prctl`), so the detached applier,
which leaves its parent's session, is re-parented here and its CPU is collected too. Prints medians over
`--runs` logs, against `python -c pass` and `python -c "import kuzu"` measured in the same run; never asserts.

    .venv/bin/python bench/log_cpu.py --runs 21
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


def cpu_of(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU ms of the process, CPU ms of every descendant it left behind, how many there were)."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    own = (usage.ru_utime + usage.ru_stime) * 1000
    rest, count = 0.0, 0
    while True:  # the detached applier(s), re-parented to us
        try:
            _, _, usage = os.wait4(-1, 0)
        except ChildProcessError:
            break
        rest += (usage.ru_utime + usage.ru_stime) * 1000
        count += 1
    return own, rest, count


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("prctl(PR_SET_CHILD_SUBREAPER) failed: this bench needs Linux")
    env = compiled_env()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([KG, "init", str(root)], check=True, capture_output=True, env=env)
        cases = [
            ("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
            ("python -c 'import kuzu'", [sys.executable, "-c", "import kuzu"]),
            ("kg log learning ...", [KG, "-w", str(root), "log", "learning", "cpu probe {i} for the bench",
                                     "--area", "tooling"]),
            ("kg log ... --json", [KG, "-w", str(root), "log", "error", "cpu probe {i} with --json", "--json"]),
            ("kg log ... --no-link", [KG, "-w", str(root), "log", "learning", "cpu probe {i}", "--no-link"]),
        ]
        samples: dict[str, tuple[list[float], list[float], int]] = {name: ([], [], 0) for name, _ in cases}
        for i in range(args.runs + 1):  # interleaved, so drift in the machine's load hits every case alike
            for name, argv in cases:
                own, rest, count = cpu_of([a.format(i=i) for a in argv], env)
                if i:  # the first round warms the caches
                    a, b, n = samples[name]
                    a.append(own)
                    b.append(rest)
                    samples[name] = (a, b, n + count)
                time.sleep(0.05)
        base = statistics.median(samples[cases[0][0]][0])
        rows = []
        for name, _ in cases:
            own, rest, count = samples[name]
            m_own, m_all = statistics.median(own), statistics.median([a + b for a, b in zip(own, rest, strict=True)])
            rows.append([name, f"{m_own:.0f}", f"{statistics.median(rest):.0f}", f"{m_all:.0f}",
                         f"{count}/{len(own)}", f"{m_all / base:.1f}x"])
    print(table(f"CPU per process, median of {args.runs} (ms, user+system)",
                ["command", "answer", "detached", "total", "detached procs", "total / baseline"], rows))


if __name__ == "__main__":
    main()
