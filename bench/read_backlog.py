"""QA3 #1: the reads that follow a bulk `kg ingest` that could not reach the graph (its entries journaled, none
applied). Wall time of whole processes on a copy of the demo workspace holding that backlog: `kg hook
session-start`, `kg status` and `kg search` (on their own, KG_SERVER=0, and through the read server), and `kg mcp`
answering `log` then `status`; with the `journal_pending` each answer reported, and the seconds until the journal was
empty behind them (the detached applier, the server, the MCP drain thread), with every entry in the graph. Prints a
table; never asserts.

    .venv/bin/python bench/read_backlog.py [--entries 1500] [--kg before=/path/to/other/kg]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import table  # noqa: E402

KG = str(Path(sys.executable).with_name("kg"))
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    return {**env, "KG_LOCK_TIMEOUT": "600", **extra}


def _backlog(kg: str, demo: Path, ws: Path, entries: int) -> None:
    """A copy of the demo workspace, then `kg ingest` of `entries` learnings while the graph's lock is held."""
    from kg.store.lock import FileLock

    shutil.copytree(demo, ws, symlinks=True)
    src = ws.parent / f"{ws.name}.jsonl"
    src.write_text("".join(json.dumps({"kind": "learning", "at": f"2026-11-{1 + i % 28:02d}T10:00:00",
                                       "summary": f"bulk entry {i} about widget {i % 97} and gadget {i % 13}"}) + "\n"
                           for i in range(entries)), encoding="utf-8")
    holder = FileLock(ws / "memory" / ".kg" / "graph.lock", timeout=60)
    holder.acquire()
    try:
        subprocess.run([kg, "-w", str(ws), "ingest", str(src), "--json"], env=_env(KG_LOCK_TIMEOUT="0"),
                       capture_output=True, check=True)
    finally:
        holder.release()


def _pending(out: str, err: str) -> str:
    """What the read said it left: `journal_pending` in its JSON, or the note `kg search` writes on stderr."""
    try:
        data = json.loads(out)
    except ValueError:
        data = None
    if isinstance(data, dict) and "journal_pending" in data:
        return str(data["journal_pending"])
    note = re.search(r"Note: (\d+) entr", err)
    return note.group(1) if note else "0"


def _timed(kg: str, ws: Path, argv: list[str], **env: str) -> tuple[float, str]:
    start = time.monotonic()
    done = subprocess.run([kg, "-w", str(ws), *argv], env=_env(**env), capture_output=True, text=True)
    return time.monotonic() - start, _pending(done.stdout, done.stderr)


def _mcp(kg: str, ws: Path) -> tuple[float, str, float]:
    """`kg mcp`: seconds to answer `status` right after a `log`, its journal_pending, and seconds until it ended
    (stdin closed after that answer: it applies the rest first)."""
    started = time.monotonic()
    proc = subprocess.Popen([kg, "-w", str(ws), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=_env(KG_SERVER="0"))
    calls = [("initialize", HELLO), ("tools/call", {"name": "log", "arguments": {"kind": "learning",
                                                                                  "summary": "bench probe"}}),
             ("tools/call", {"name": "status", "arguments": {}})]
    took, pending = 0.0, "-"
    for key, (method, params) in enumerate(calls):
        asked = time.monotonic()
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": key, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        if key == 0:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        if key == 2:
            took = time.monotonic() - asked
            pending = str((answer["result"].get("structuredContent") or {}).get("journal_pending", "-"))
    proc.stdin.close()
    proc.wait()
    return took, pending, time.monotonic() - started


def _drained(kg: str, ws: Path, entries: int, since: float) -> str:
    """Seconds from `since` until the journal is empty (polled), and whether every entry is in the graph."""
    kg_dir = ws / "memory" / ".kg"
    while any(p.name.startswith(("journal", "draining")) and p.suffix == ".jsonl" for p in kg_dir.iterdir()):
        time.sleep(0.5)
    waited = time.monotonic() - since
    subprocess.run([kg, "-w", str(ws), "serve", "stop"], env=_env(), capture_output=True)
    out = subprocess.run([kg, "-w", str(ws), "list", "--type", "learning", "--limit", str(10 * entries), "--json"],
                         env=_env(KG_SERVER="0"), capture_output=True, text=True)
    bulk = sum(1 for n in json.loads(out.stdout) if n["text"].startswith("bulk entry "))
    return f"{waited:.1f} s, {bulk}/{entries} in the graph"


def run(label: str, kg: str, demo: Path, root: Path, entries: int) -> list[list[str]]:
    rows = []
    reads = [("hook session-start (alone)", ["hook", "session-start", "-m", "pnpm", "--json"], {"KG_SERVER": "0"}),
             ("status (alone)", ["status", "--json"], {"KG_SERVER": "0"}),
             ("status (read server)", ["status", "--json"], {}),
             ("search (read server)", ["search", "widget", "--json"], {})]
    for name, argv, env in reads:
        ws = root / f"{label}-{len(rows)}"
        _backlog(kg, demo, ws, entries)
        took, pending = _timed(kg, ws, argv, **env)
        rows.append([label, name, f"{took:.2f}", pending, _drained(kg, ws, entries, time.monotonic() - took)])
    ws = root / f"{label}-mcp"
    _backlog(kg, demo, ws, entries)
    took, pending, ended = _mcp(kg, ws)
    rows.append([label, "mcp: status after log", f"{took:.2f}", pending, f"server ended after {ended:.1f} s"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=1500)
    ap.add_argument("--kg", action="append", default=[], metavar="LABEL=EXE", help="another kg to measure too")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-backlog-") as tmp:
        root = Path(tmp)
        os.environ["HOME"] = str(root / "home")
        demo = root / "demo"
        subprocess.run([KG, "demo", "--force", str(demo)], env=_env(), capture_output=True, check=True)
        rows = []
        for label, kg in [("this", KG), *(k.split("=", 1) for k in args.kg)]:
            rows += run(label, kg, demo, root, args.entries)
    print(table(f"Reads after a bulk `kg ingest` of {args.entries} entries that could not reach the graph",
                ["kg", "read", "s", "journal_pending", "journal empty after, from the read's start"], rows))


if __name__ == "__main__":
    main()
