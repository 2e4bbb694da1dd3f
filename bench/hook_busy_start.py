"""How long `kg hook session-start --start-session --runtime claude-code` takes, as a whole process, when a writer
holds the graph: in production the read server answers this hook, and a writer that needs the graph (kg cycle,
import, doctor, `kg log --wait`) makes it let go, so the hook's client waits for a server that cannot open the
graph, then runs the command itself, which waits `busy_wait_seconds` and briefs from files with a journaled start.
Claude Code and Codex kill a hook past its timeout (kg installs SessionStart with 30 s; both default to 600 s),
and the agent then starts with no brief and no session.

    .venv/bin/python bench/hook_busy_start.py                # 2,000 events, 3 runs
    .venv/bin/python bench/hook_busy_start.py --events 20000 --runs 5
    .venv/bin/python bench/hook_busy_start.py --baseline /work/mtest/.venv/bin/kg     # another kg's busy case too
    .venv/bin/python bench/hook_busy_start.py --lock-timeout 30                     # [lock] timeout_seconds = 30

Baselines, in the same run: the same hook answered by a running read server with the graph free, and (with
`--baseline KG`) the busy case run by another installation's kg, alternating with this one's. The writer is a
real process that opens the graph read-write (asking the server to let go, as kg cycle does) and is then frozen
with SIGSTOP. Each run: the hook's wall time, its exit code, whether its brief names a session, and whether that
session is journaled (made by the next drain). Prints medians and the ratio; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, table

KG = str(Path(sys.executable).parent / "kg")
NOW = "2026-12-01T09:00"
HOOK_TIMEOUT = 30  # what `kg install claude-code|codex` writes for SessionStart
WRITER = """
import sys, kg
ws = kg.open_workspace(sys.argv[1])
with ws.store():
    print("held", flush=True)
    sys.stdin.read()
"""


LOCK_TIMEOUT: list[str] = []  # --lock-timeout: the hook's KG_LOCK_TIMEOUT (a workspace's [lock] timeout_seconds)


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("KG_") and k != "PYTHONDONTWRITEBYTECODE"}
    e["KG_NOW"] = NOW
    return e


def hook(root: Path, n: int, kg: str = KG) -> dict:
    payload = {"session_id": f"bench-{n}", "hook_event_name": "SessionStart", "source": "startup",
               "cwd": str(root)}
    t = time.perf_counter()
    e = {**env(), **({"KG_LOCK_TIMEOUT": LOCK_TIMEOUT[0]} if LOCK_TIMEOUT else {})}
    p = subprocess.run([kg, "-w", str(root), "hook", "session-start", "--start-session", "--runtime", "claude-code"],
                       input=json.dumps(payload), capture_output=True, text=True, env=e, timeout=900)
    wall = time.perf_counter() - t
    text = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"] if p.returncode == 0 else ""
    session = text.split("- Session: ")[1].split()[0] if "- Session: " in text else None
    return {"wall": wall, "code": p.returncode, "session": session, "busy": "busy" in text.lower(),
            "err": p.stderr.strip()[-200:]}


def serve(root: Path) -> None:
    """A running read server with the graph free (a served status starts it and waits for it)."""
    subprocess.run([KG, "-w", str(root), "status"], capture_output=True, env=env(), check=True, timeout=300)


def stop(root: Path) -> None:
    subprocess.run([KG, "-w", str(root), "serve", "stop"], capture_output=True, env=env(), timeout=300)


def held(root: Path) -> subprocess.Popen:
    w = subprocess.Popen([sys.executable, "-c", WRITER, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=env(), text=True)
    assert w.stdout.readline().strip() == "held"
    w.send_signal(signal.SIGSTOP)
    return w


def release(w: subprocess.Popen) -> None:
    w.send_signal(signal.SIGCONT)
    w.stdin.close()
    w.wait(timeout=300)


def journaled(root: Path, session: str | None) -> bool:
    import kg

    ws = kg.open_workspace(root)
    with ws.reading() as st:
        return bool(session) and bool(st.run("memory_session_get", id=session))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=2_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", help="another kg executable: its busy case too, alternating with this one's")
    ap.add_argument("--lock-timeout", help="KG_LOCK_TIMEOUT for the hook (as a workspace's [lock] timeout_seconds)")
    args = ap.parse_args()
    LOCK_TIMEOUT[:] = [args.lock_timeout] if args.lock_timeout else []
    with tempfile.TemporaryDirectory(prefix="rev-busy-") as tmp:
        root = Path(tmp) / "ws"
        build_workspace(root, args.events)
        serve(root)
        hook(root, 0)  # warm
        base, busy, made, other = [], [], [], []
        for i in range(args.runs):  # alternating: the machine's load falls on both alike
            serve(root)
            base.append(hook(root, 100 + i))
            w = held(root)
            try:
                busy.append(hook(root, 200 + i))
            finally:
                release(w)
            stop(root)
            made.append(journaled(root, busy[-1]["session"]))
            if args.baseline:
                serve(root)
                w = held(root)
                try:
                    other.append(hook(root, 300 + i, args.baseline))
                finally:
                    release(w)
                stop(root)
                other[-1]["made"] = journaled(root, other[-1]["session"])
        stop(root)

    def med(rows: list[dict]) -> float:
        return sorted(r["wall"] for r in rows)[len(rows) // 2]

    b = med(base)
    rows = [["served, graph free (baseline)", f"{b:.2f}", "1.00", f"{sum(r['code'] == 0 for r in base)}/{len(base)}",
             f"{sum(bool(r['session']) for r in base)}/{len(base)}", "-"],
            ["writer holds the graph (SIGSTOP)", f"{med(busy):.2f}", f"{med(busy) / b:.1f}",
             f"{sum(r['code'] == 0 for r in busy)}/{len(busy)}", f"{sum(bool(r['session']) for r in busy)}/{len(busy)}",
             f"{sum(made)}/{len(made)}"]]
    if other:
        rows.append([f"the same, {args.baseline}", f"{med(other):.2f}", f"{med(other) / b:.1f}",
                     f"{sum(r['code'] == 0 for r in other)}/{len(other)}",
                     f"{sum(bool(r['session']) for r in other)}/{len(other)}",
                     f"{sum(r['made'] for r in other)}/{len(other)}"])
    print(table(f"kg hook session-start --start-session --runtime claude-code, {args.events:,} events, median of "
                f"{args.runs}, KG_LOCK_TIMEOUT {args.lock_timeout or 'unset'} "
                f"(hook timeout installed: {HOOK_TIMEOUT} s)",
                ["case", "wall s", "× baseline", "exit 0", "session named", "made after"], rows))
    print("busy walls:", ", ".join(f"{r['wall']:.2f}" for r in busy))
    if other:
        print("baseline's busy walls:", ", ".join(f"{r['wall']:.2f}" for r in other))
    for r in busy + other:
        if r["code"]:
            print("stderr:", r["err"])


if __name__ == "__main__":
    main()
