"""How long `kg` takes to start: `kg log` (what every hook pays), `kg --version` and `kg --help` (the whole
app built), against `python -c pass` measured in the same run. Prints medians and ratios; never asserts.

    .venv/bin/python bench/cli_start.py --runs 11
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import median_of, table
from hook_speed import compiled_env

KG = str(Path(sys.executable).parent / "kg")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    env = compiled_env()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:  # detached drainers may linger
        root = Path(tmp) / "ws"
        subprocess.run([KG, "init", str(root)], check=True, capture_output=True, env=env)
        cases = [("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
                 ("kg --version", [KG, "--version"]),
                 ("kg --help", [KG, "--help"]),
                 ("kg log learning ...", [KG, "-w", str(root), "log", "learning", "start-up probe", "--no-link"])]
        rows, base = [], None
        for name, argv in cases:
            if subprocess.run(argv, capture_output=True, env=env).returncode:  # warm; absent in older kg
                rows.append([name, "n/a", ""])
                continue
            t, _ = median_of(lambda argv=argv: subprocess.run(argv, check=True, capture_output=True, env=env),
                             args.runs)
            base = base or t
            rows.append([name, f"{t * 1000:.0f}", f"{t / base:.2f}"])
    print(table("kg start-up", ["command", "median ms", "× baseline"], rows))


if __name__ == "__main__":
    main()
