"""What a kg.toml costs the post-tool-use hook (it runs after every failed tool call). A hook opens its workspace
with `fallback` (kg/workspace.py): with [rules.NAME] overrides in kg.toml it loads every rule file as the
commands do (kg/core/rulecheck.py), so that a mistake costs the packaged rules, not the capture.

    .venv/bin/python bench/hook_config.py            # 1,000 events, 7 runs per row
    .venv/bin/python bench/hook_config.py --runs 5

Baseline, measured in the same run and interleaved with the other rows: the same hook with no kg.toml. Each
run logs a new failure (a fresh error text), applied before the hook answers (KG_HOOK_WAIT=1). Prints medians
and ratios; never asserts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, table
from hook_speed import compiled_env

KG = str(Path(sys.executable).parent / "kg")
CASES = {
    "no kg.toml (baseline)": None,
    "kg.toml, one valid [rules.lifecycle] override": "[rules.lifecycle.promotion]\nmin_recurrence = 4\n",
    "kg.toml with a TOML typo (packaged rules, warning)": "[rules.lifecycle\nx = 1\n",
    "kg.toml with an unknown key (packaged rules, warning)": "[rules.lifecycle.promotion]\nmin_occurrences = 3\n",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:  # a detached child may still write
        root = Path(tmp) / "ws"
        build_workspace(root, args.events)
        env = {**compiled_env(), "KG_NOW": "2026-12-01T09:00", "KG_HOOK_WAIT": "1", "KG_SERVER": "0"}
        samples: dict[str, list[float]] = {name: [] for name in CASES}
        n = 0

        def hook() -> float:
            nonlocal n
            n += 1
            payload = {"session_id": "bench", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                       "tool_input": {"command": f"make build-{n}"}, "error": f"Exit code 2\nmake: *** no rule {n}"}
            t = time.perf_counter()
            subprocess.run([KG, "-w", str(root), "hook", "post-tool-use", "--runtime", "claude-code"], check=True,
                           capture_output=True, env=env, input=json.dumps(payload).encode())
            return time.perf_counter() - t

        hook()  # warm the OS cache
        for _ in range(args.runs):
            for name, text in CASES.items():  # interleaved: a load that rises mid-run falls on every row
                toml = root / "kg.toml"
                toml.unlink(missing_ok=True)
                if text is not None:
                    toml.write_text(text, encoding="utf-8")
                samples[name].append(hook())
        (root / "kg.toml").unlink(missing_ok=True)
        base = statistics.median(samples["no kg.toml (baseline)"])
        rows = [[name, f"{statistics.median(s) * 1000:.0f}", f"{statistics.median(s) / base:.2f}"]
                for name, s in samples.items()]
        print(table(f"post-tool-use hook, {args.events:,} events, median of {args.runs} runs",
                    ["case", "ms", "ratio"], rows))


if __name__ == "__main__":
    main()
