"""How long `kg` takes to start: `kg log` (what every hook pays), `kg --version` and `kg --help` (the whole
app built), and `kg search` answered by a running read server (the client alone: kg/serve/client.py), against
`python -c pass` measured in the same run; `kg log` with the parsed secret rules cached in the workspace (the
default), in `KG_CACHE_DIR` (where every process found them before: ~/.cache/kg), and with no usable cache.
Prints median wall time, the client's median CPU time and peak RSS (from wait4), and ratios; never asserts.

    .venv/bin/python bench/cli_start.py --runs 11
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table
from hook_speed import compiled_env

KG = str(Path(sys.executable).parent / "kg")


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one process."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise subprocess.CalledProcessError(status, argv)
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    env = {k: v for k, v in compiled_env().items() if k != "KG_CACHE_DIR"}
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:  # detached drainers may linger
        root = Path(tmp) / "ws"
        subprocess.run([KG, "init", str(root)], check=True, capture_output=True, env=env)
        subprocess.run([KG, "-w", str(root), "log", "error", "docker permission denied on the socket"],
                       check=True, capture_output=True, env=env)
        served = {**env, "KG_SERVER": "1"}
        (Path(tmp) / "a-file").write_text("")  # a cache folder under a file cannot be made: every process parses
        log = [KG, "-w", str(root), "log", "learning", "start-up probe", "--no-link"]
        cases = [("python -c pass (baseline)", [sys.executable, "-c", "pass"], env),
                 ("kg --version", [KG, "--version"], env),
                 ("kg --help", [KG, "--help"], env),
                 ("kg log learning ... (rules cached in the workspace)", log, env),
                 ("kg log, rules cached in KG_CACHE_DIR (the old per-user place)", log,
                  {**env, "KG_CACHE_DIR": str(Path(tmp) / "user-cache")}),
                 ("kg log, no usable cache (rules parsed in memory)", log,
                  {**env, "KG_CACHE_DIR": str(Path(tmp) / "a-file" / "kg")}),
                 ("kg search (read server up)", [KG, "-w", str(root), "search", "docker permission"], served)]
        started = subprocess.run([KG, "-w", str(root), "serve", "start"], capture_output=True, env=served)
        rows, base = [], None
        try:
            live = []
            for name, argv, case_env in cases:
                try:
                    once(argv, case_env)  # warm; absent in older kg
                    live.append((name, argv, case_env))
                except subprocess.CalledProcessError:
                    rows.append([name, "n/a", "", "", ""])
            got: dict[str, list] = {name: [] for name, _, _ in live}
            for _ in range(args.runs):  # interleaved: the machine's load drifts alike for every case
                for name, argv, case_env in live:
                    got[name].append(once(argv, case_env))
            for name, _, _ in live:
                wall, cpu, rss = (statistics.median(g[i] for g in got[name]) for i in range(3))
                base = base or wall
                rows.append([name, f"{wall * 1000:.0f}", f"{cpu * 1000:.0f}", f"{rss:.0f}", f"{wall / base:.2f}"])
        finally:
            if started.returncode == 0:
                subprocess.run([KG, "-w", str(root), "serve", "stop"], capture_output=True, env=served)
    print(table("kg start-up (the server's own work for the search is not in the client's CPU)",
                ["command", "median ms", "client CPU ms", "peak RSS MB", "× baseline"], rows))


if __name__ == "__main__":
    main()
