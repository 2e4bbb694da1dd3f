"""How long the session-start hook takes (it runs before every agent session: target ≤ 0.5 s) and an MCP
tool call's round trip, on a workspace of N events.

    .venv/bin/python bench/hook_speed.py            # 100k events
    .venv/bin/python bench/hook_speed.py --events 20000 --runs 5

Baseline, measured in the same run: `kg --help` (the process start every hook pays) and, in-process, the
library call alone. Prints medians and ratios; never asserts.

kg's own modules are byte-compiled first and the children run without PYTHONDONTWRITEBYTECODE: an installed
package has its .pyc files, and compiling kg from source on every start would add ~40 ms to each figure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, median_of, table

KG = str(Path(sys.executable).parent / "kg")
NOW = "2026-12-01T09:00"
HIT = "kubectl migration timed out"  # a first message with graph hits (and their neighbours) to inject
REPO = Path(__file__).resolve().parent.parent


def compiled_env() -> dict[str, str]:
    """kg's sources byte-compiled, and an environment whose children may write .pyc files (as after pip
    install), so that the figures measure an installed kg rather than the compiler."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "kg", "cli", "rules"], cwd=REPO, check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        ws = build_workspace(root, args.events)
        env = compiled_env()
        env_now = {**env, "KG_NOW": NOW}

        def cli(*argv: str) -> None:
            subprocess.run([KG, "-w", str(root), *argv], check=True, capture_output=True, env=env_now, input=b"")

        cli("hook", "session-start")  # warm the OS cache (and compile anything not compiled yet)
        cli("hook", "session-start", "-m", "git push failed")
        subprocess.run([KG, "--help"], check=True, capture_output=True, env=env)
        rows = []
        base, _ = median_of(lambda: subprocess.run([KG, "--help"], check=True, capture_output=True, env=env),
                            args.runs)
        rows.append(["kg --help (process start, baseline)", f"{base * 1000:.0f}", "1.00"])
        for label, argv in [
            ("kg hook session-start", ("hook", "session-start")),
            ("kg hook session-start --runtime claude-code", ("hook", "session-start", "--runtime", "claude-code")),
            ("kg hook session-start -m 'git push failed' (no graph hit)",
             ("hook", "session-start", "-m", "git push failed")),
            (f"kg hook session-start -m '{HIT}'", ("hook", "session-start", "-m", HIT)),
            ("kg hook post-tool-use (a success: no write)", ("hook", "post-tool-use")),
        ]:
            med, _ = median_of(lambda a=argv: cli(*a), args.runs)
            rows.append([label, f"{med * 1000:.0f}", f"{med / base:.2f}"])

        from kg.runtimes import hooks

        lib, _ = median_of(lambda: hooks.session_start_brief(ws, NOW), args.runs)
        rows.append(["in-process session_start_brief()", f"{lib * 1000:.0f}", f"{lib / base:.2f}"])
        rows += mcp_rows(root, args.runs, base)
        print(table(f"Session hooks and MCP on {args.events:,} events (median of {args.runs} runs)",
                    ["what", "median ms", "× kg --help"], rows))


def mcp_rows(root: Path, runs: int, base: float) -> list[list[str]]:
    try:
        import anyio
        from mcp import Client
    except ImportError:
        return [["MCP (mcp package not installed)", "-", "-"]]
    import time
    from statistics import median

    from kg.runtimes.mcp_server import build_server

    out: dict[str, float] = {}

    async def run() -> None:
        async with Client(build_server(root)) as client:
            for name, arguments in [("status", {}), ("search", {"query": "kubectl migration", "limit": 5}),
                                    ("log", {"kind": "learning", "summary": "bench note"}), ("propose", {})]:
                await client.call_tool(name, arguments)
                samples = []
                for _ in range(runs):
                    t = time.perf_counter()
                    r = await client.call_tool(name, arguments)
                    samples.append(time.perf_counter() - t)
                    assert not r.is_error, r
                out[name] = median(samples)

    anyio.run(run)
    return [[f"MCP call_tool {k!r} (in-process client)", f"{v * 1000:.0f}", f"{v / base:.2f}"] for k, v in out.items()]


if __name__ == "__main__":
    main()
