"""What each Codex Stop costs as the session's rollout grows: `kg hook session-end --no-summary --runtime codex` with
a Stop payload (KG_HOOK_WAIT=1: the detached child's work, in the foreground), after each step of a growing rollout.

Two rollouts: the real one of ../shared/data/runtimes/codex (748 KB) replayed in --steps steps, and a synthetic long
one (~--mb MB) made by repeating its turns (call ids made unique per copy) and replayed the same way. Each kg replays
each rollout into a fresh workspace, --runs times; per step, the median wall time, CPU time (user + system of the
process) and peak memory (max RSS) of the hook. The baseline is another kg (`--baseline`, e.g. the main branch's)
measured in the same run, on the same files. Prints tables; never asserts. Target: this tree's cost per Stop flat in
the rollout's length.

    .venv/bin/python bench/reflect_incremental.py --baseline /work/main/.venv/bin/kg
    .venv/bin/python bench/reflect_incremental.py --baseline /work/main/.venv/bin/kg --steps 6 --mb 4 --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

REPO = Path(__file__).resolve().parent.parent
KG = str(Path(sys.executable).parent / "kg")
REAL = Path("/work/shared/data/runtimes/codex/transcripts/"
            "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
NOW = "2026-05-11T18:00:00"


def synthetic(src: bytes, mb: float) -> bytes:
    """The rollout's first line (session_meta) and then its other lines again and again, each copy's call ids its
    own, to about `mb` MB: a long session of turns like the real one's."""
    head, rest = src.split(b"\n", 1)
    out = [head + b"\n"]
    size, copy = len(out[0]), 0
    while size < mb * 1024 * 1024:
        part = re.sub(rb'"(call_[A-Za-z0-9]+)"', lambda m, c=copy: b'"%s_%d"' % (m.group(1), c), rest)
        out.append(part)
        size += len(part)
        copy += 1
    return b"".join(out)


def steps_of(data: bytes, n: int) -> list[int]:
    ends = [m.end() for m in re.finditer(rb"\n", data)]
    return [ends[min(len(ends) - 1, (len(ends) * (i + 1)) // n - 1)] for i in range(n)]


def stop(kg: str, root: Path, transcript: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """One Stop: (wall s, CPU s, peak RSS MB) of the hook's process."""
    payload = {"session_id": "019e1625-789d-76c0-80ab-3724b5ddb799", "transcript_path": str(transcript),
               "cwd": str(root), "hook_event_name": "Stop", "model": "gpt-5", "permission_mode": "default",
               "turn_id": "t", "stop_hook_active": False, "last_assistant_message": "done"}
    t = time.perf_counter()
    proc = subprocess.Popen([kg, "-w", str(root), "hook", "session-end", "--no-summary", "--runtime", "codex"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(json.dumps(payload).encode())
    proc.stdin.close()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{kg} failed ({proc.returncode}): {err.decode(errors='replace')[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def replay(kg: str, data: bytes, cuts: list[int], tmp: Path, env: dict[str, str]) -> list[tuple[float, float, float]]:
    root = tmp / "ws"
    subprocess.run([kg, "-w", str(root), "init"], check=True, capture_output=True, env=env)
    dest = tmp / REAL.name
    out = []
    with dest.open("wb") as fh:
        done = 0
        for end in cuts:
            fh.write(data[done:end])
            fh.flush()
            done = end
            out.append(stop(kg, root, dest, env))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True, help="another kg executable, e.g. /work/main/.venv/bin/kg")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--mb", type=float, default=10.0, help="size of the synthetic rollout")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "kg", "cli", "rules"], cwd=REPO, check=True)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {
        "KG_NOW": NOW, "KG_HOOK_WAIT": "1", "KG_SERVER": "0"}
    envs = {KG: {k: v for k, v in base_env.items() if k != "PYTHONDONTWRITEBYTECODE"},
            args.baseline: base_env | {"PYTHONDONTWRITEBYTECODE": "1"}}  # (no .pyc written into another tree)
    real = REAL.read_bytes()
    rollouts = {f"real {len(real) / 1e6:.2f} MB": real, f"synthetic {args.mb:g} MB": synthetic(real, args.mb)}
    for name, data in rollouts.items():
        cuts = steps_of(data, args.steps)
        runs: dict[str, list[list[tuple[float, float, float]]]] = {KG: [], args.baseline: []}
        for _ in range(args.runs):
            for kg in (KG, args.baseline):  # alternated: a noisy neighbour hits both alike
                with tempfile.TemporaryDirectory() as tmp:
                    runs[kg].append(replay(kg, data, cuts, Path(tmp), envs[kg]))
        rows = []
        for i, end in enumerate(cuts):
            row = [str(i + 1), f"{end / 1e6:.2f}"]
            for kg in (KG, args.baseline):
                w, c, m = (statistics.median(r[i][j] for r in runs[kg]) for j in range(3))
                row += [f"{w * 1000:.0f}", f"{c * 1000:.0f}", f"{m:.0f}"]
            rows.append(row)
        print(table(f"Per Stop on the {name} rollout, {args.steps} steps, median of {args.runs} run(s) "
                    f"(this tree vs baseline {args.baseline})",
                    ["step", "MB", "wall ms", "CPU ms", "RSS MB", "base wall ms", "base CPU ms", "base RSS MB"],
                    rows))


if __name__ == "__main__":
    main()
