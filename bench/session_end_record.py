"""How soon a Codex SessionEnd hook (`kg hook session-end --runtime codex`, as `kg install codex` writes it) has
recorded its hand-over in memory/.kg/ending/, and whether a session end killed at a given time is recovered by the
next session end (QA1 #4: Codex kills a SessionEnd hook after its timeout, 3 s at most; one killed before its
record left the session open for ever).

    .venv/bin/python bench/session_end_record.py --baseline /work/base40/.venv/bin/kg
    .venv/bin/python bench/session_end_record.py --runs 7 --kills 0.3,0.5,0.7,1.0

Per kg (this tree's, and `--baseline KG`'s, alternating in the same run), a fresh workspace per run:
- record: ms from the hook's exec to the rename that puts its record in ending/ (strace -f -tt), and, untraced,
  the hook's wall time until it answers (the detached child not waited for);
- kills: a session end SIGKILLed that many seconds after its start (`timeout -s KILL`), then the next session's
  start and end (that one in the foreground, KG_HOOK_WAIT=1): whether the killed session was ended, in how many
  runs. Prints medians and ratios; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import process_env, table

KG = str(Path(sys.executable).parent / "kg")
ROLLOUT = (Path(os.environ.get("KG_SHARED_DATA", "/work/shared/data")) / "runtimes" / "codex" / "transcripts"
           / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
STAMP = re.compile(r"^(\d+)\s+(\d+):(\d+):(\d+\.\d+) (\w+)\((.*)$")


def _payload(root: Path, sid: str, event: str) -> str:
    return json.dumps({"session_id": sid, "transcript_path": str(ROLLOUT), "cwd": str(root),
                       "hook_event_name": event, "source": "startup", "reason": "other", "model": "m",
                       "permission_mode": "default"})


def _hook(kg: str, root: Path, sid: str, event: str, *, prefix: list[str] | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    name = "session-start" if event == "SessionStart" else "session-end"
    extra = ["--start-session"] if event == "SessionStart" else []
    return subprocess.run([*(prefix or []), kg, "-w", str(root), "hook", name, *extra, "--runtime", "codex"],
                          input=_payload(root, sid, event), capture_output=True, text=True, cwd=root,
                          env=env or process_env(), timeout=600)


def _fresh(kg: str, base: Path) -> Path:
    root = Path(tempfile.mkdtemp(dir=base))
    subprocess.run([kg, "init", str(root)], capture_output=True, env=process_env(), check=True, timeout=600)
    return root


def _seconds(line: str) -> float | None:
    m = STAMP.match(line)
    return int(m.group(2)) * 3600 + int(m.group(3)) * 60 + float(m.group(4)) if m else None


def record_ms(kg: str, base: Path) -> tuple[float | None, float]:
    root = _fresh(kg, base)
    _hook(kg, root, "a0000000-0000-4000-8000-000000000001", "SessionStart")
    trace = root / "strace.txt"
    _hook(kg, root, "a0000000-0000-4000-8000-000000000001", "SessionEnd",
          prefix=["strace", "-f", "-tt", "-e", "trace=execve,rename,renameat,renameat2", "-o", str(trace)])
    _hook(kg, root, "a0000000-0000-4000-8000-000000000002", "SessionStart")
    t0 = time.monotonic()  # the hook as Codex waits for it, untraced (strace -f waits for the detached child too)
    _hook(kg, root, "a0000000-0000-4000-8000-000000000002", "SessionEnd")
    wall = time.monotonic() - t0
    lines = trace.read_text().splitlines()
    start = next((_seconds(x) for x in lines if " execve(" in x), None)
    done = next((_seconds(x) for x in lines if "rename" in x and "/ending/" in x and "= 0" in x), None)
    shutil.rmtree(root, ignore_errors=True)
    return (None if start is None or done is None else (done - start) * 1000), wall


def recovered(kg: str, base: Path, kill: float) -> bool:
    root = _fresh(kg, base)
    _hook(kg, root, "b0000000-0000-4000-8000-000000000001", "SessionStart")
    first = (root / "memory" / ".kg" / "current-session").read_text().strip()
    _hook(kg, root, "b0000000-0000-4000-8000-000000000001", "SessionEnd", prefix=["timeout", "-s", "KILL", str(kill)])
    _hook(kg, root, "b0000000-0000-4000-8000-000000000002", "SessionStart")
    _hook(kg, root, "b0000000-0000-4000-8000-000000000002", "SessionEnd", env={**process_env(), "KG_HOOK_WAIT": "1"})
    ok = (root / "memory" / "sessions" / f"{first}.md").exists()
    shutil.rmtree(root, ignore_errors=True)
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", help="another installation's kg, measured alternately in the same run")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kills", default="0.3,0.5,0.7,1.0", help="seconds after which a session end is killed")
    args = ap.parse_args()
    kgs = {"this tree": KG, **({"baseline": args.baseline} if args.baseline else {})}
    kills = [float(x) for x in args.kills.split(",") if x]
    base = Path(tempfile.mkdtemp(prefix="kg-end-record-"))
    rec: dict[str, list[float | None]] = {k: [] for k in kgs}
    wall: dict[str, list[float]] = {k: [] for k in kgs}
    saved: dict[tuple[str, float], int] = {}
    load = os.getloadavg()[0]
    for _ in range(args.runs):
        for name, kg in kgs.items():
            ms, w = record_ms(kg, base)
            rec[name].append(ms)
            wall[name].append(w)
            for kill in kills:
                saved[name, kill] = saved.get((name, kill), 0) + recovered(kg, base, kill)
    shutil.rmtree(base, ignore_errors=True)

    def med(xs: list[float | None]) -> str:
        got = [x for x in xs if x is not None]
        return f"{statistics.median(got):.0f}" + (f" ({len(xs) - len(got)} none)" if len(got) < len(xs) else "") \
            if got else "none"

    rows = [[name, med(rec[name]), f"{statistics.median(wall[name]):.2f}"]
            + [f"{saved[name, k]}/{args.runs}" for k in kills] for name in kgs]
    if args.baseline:
        mine = [x for x in rec["this tree"] if x is not None]
        theirs = [x for x in rec["baseline"] if x is not None]
        ratio = f"{statistics.median(mine) / statistics.median(theirs):.2f}x" if mine and theirs else "-"
        walls = statistics.median(wall["this tree"]) / statistics.median(wall["baseline"])
        rows.append(["ratio (this / baseline)", ratio, f"{walls:.2f}x"] + ["" for _ in kills])
    print(table(f"Codex SessionEnd: its record, and ends killed at a time ({args.runs} runs, load {load:.1f})",
                ["kg", "record ms (median)", "wall s (median)"] + [f"recovered, killed at {k}s" for k in kills],
                rows))


if __name__ == "__main__":
    main()
