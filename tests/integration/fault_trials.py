"""Kill -9 trials and the parallel-logging reader probe, shared by the CI suite (`test_fault.py`, a few
trials) and the soak bench (`bench/fault_soak.py`, many).

A trial starts the real `kg` (or a Python batch) in a workspace, kills it with SIGKILL at a random moment,
then checks the workspace: it opens (not bricked), every entry whose id was acknowledged (printed, or
journaled) is in the graph (not lost), and no summary is stored twice (not duplicated).
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))
SCENARIOS = ("log", "applier", "cycle", "batch", "drain")

_BATCH = """
import sys, kg
ws = kg.open_workspace(sys.argv[1])
with ws:
    for i in range(int(sys.argv[3])):
        r = ws.log("learning", f"{sys.argv[2]} batch entry {i}", session="batch")
        print(r.id, flush=True)
"""


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    e["KG_LOCK_TIMEOUT"] = "30"
    return e


def kg(ws: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KG, "-w", str(ws), *args], capture_output=True, text=True, env=env(), timeout=timeout)


@dataclass
class Tally:
    trials: int = 0
    acknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    bricked: int = 0
    notes: list[str] = field(default_factory=list)

    def row(self, name: str) -> list[str]:
        return [name, str(self.trials), str(self.acknowledged), str(self.lost), str(self.duplicated),
                str(self.bricked)]


def _ids_printed(text: str) -> list[str]:
    out = []
    for token in text.replace("[", " ").replace("]", " ").split():
        if token.count("-") == 2 and token.split("-")[0] in ("LRN", "ERR", "FEAT") and token[-1].isdigit():
            out.append(token)
    return out


def _journaled(ws: Path) -> list[str]:
    ids = []
    for path in [ws / "memory" / ".kg" / "journal.jsonl", *sorted((ws / "memory" / ".kg").glob("draining-*"))]:
        try:
            lines = path.read_bytes().splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            try:
                ids.append(json.loads(line)["id"])
            except (ValueError, KeyError, TypeError):
                pass
    return ids


def _kill_after(cmd: list[str], delay: float) -> str:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env(),
                            start_new_session=True)
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the process group: kg and anything it started in it
    except ProcessLookupError:
        pass
    out, _ = proc.communicate()
    return out.decode("utf-8", "replace")


def _kill_detached_appliers(tag: str, delay: float) -> int:
    """After `delay`, kill the detached applier(s) that a `kg log` of this trial forked: they carry the
    parent's command line, which holds the trial's unique tag (so only processes this trial started are
    touched). Returns how many were still running."""
    time.sleep(delay)
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(tag.encode() in a for a in argv) and any(a.endswith(b"/kg") for a in argv):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed


_SPAN: dict[str, float] = {}


def _span(ws: Path) -> float:
    """How long a `kg log --wait` takes here and now (the machine may be loaded): kill points are drawn
    across that span, so they fall before, during and after the acknowledgement."""
    if "log" not in _SPAN:
        t = time.perf_counter()
        kg(ws, "log", "learning", "timing probe entry", "--wait")
        _SPAN["log"] = max(0.3, time.perf_counter() - t)
    return _SPAN["log"]


def trial(ws: Path, scenario: str, rng: random.Random, tally: Tally, tag: str) -> None:
    """One kill -9 trial of `scenario` in workspace `ws` (made with `kg init`)."""
    acked: list[str] = []
    span = _span(ws)
    if scenario == "log":
        out = _kill_after([KG, "-w", str(ws), "log", "learning", f"{tag} logged entry", "--wait"],
                          rng.uniform(0.3, 1.3) * span)
        acked = _ids_printed(out)
    elif scenario == "applier":
        r = kg(ws, "log", "learning", f"{tag} applier entry")
        acked = _ids_printed(r.stdout)
        _kill_detached_appliers(tag, rng.uniform(0.0, 0.6) * span)
    elif scenario == "batch":
        out = _kill_after([sys.executable, "-c", _BATCH, str(ws), tag, "30"], rng.uniform(0.8, 3.0) * span)
        acked = [x for x in out.split() if x.startswith("LRN-")]
    elif scenario == "drain":
        before = set(_journaled(ws))
        prefill = ("import sys, kg\nws = kg.open_workspace(sys.argv[1])\n"
                   "for i in range(20): ws.log('error', f'{sys.argv[2]} queued failure {i}', apply=False)")
        subprocess.run([sys.executable, "-c", prefill, str(ws), tag], check=True, env=env())
        acked = [i for i in _journaled(ws) if i not in before]
        _kill_after([KG, "-w", str(ws), "list", "--limit", "1"], rng.uniform(0.3, 3.0) * span)
    elif scenario == "cycle":
        r = kg(ws, "log", "error", f"{tag} cycle entry", "--pattern-key", "fault.cycle", "--wait")
        acked = _ids_printed(r.stdout)
        _kill_after([KG, "-w", str(ws), "cycle"], rng.uniform(0.3, 2.0) * span)
    else:
        raise ValueError(scenario)
    check(ws, acked, tally, tag)


def check(ws: Path, acked: list[str], tally: Tally, tag: str) -> None:
    tally.trials += 1
    tally.acknowledged += len(acked)
    r = kg(ws, "list", "--limit", "1000000", "--json")
    if r.returncode != 0:
        tally.bricked += 1
        tally.notes.append(f"{tag}: list failed: {r.stderr.strip()[:200]}")
        return
    rows = json.loads(r.stdout)
    have = {row["id"] for row in rows}
    missing = [i for i in acked if i not in have]
    tally.lost += len(missing)
    if missing:
        tally.notes.append(f"{tag}: lost {missing[:3]}")
    texts = [row["text"] for row in rows if row.get("entry_type") and row["text"].startswith(tag + " ")]
    tally.duplicated += len(texts) - len(set(texts))


def reader_latency(ws: Path, *, agents: int = 8, reads: int = 10, logs_per_agent: int = 400,
                   command: tuple[str, ...] = ("search", "deploy")) -> dict[str, float]:
    """Readers' wall time while `agents` processes log in a loop (each `kg log` answers and leaves a
    detached applier). Returns p50/p95/max seconds and how many reads failed."""
    script = ("for i in $(seq 1 {n}); do {kg} -w {ws} log error \"agent $A deploy step $i failed\" >/dev/null "
              "2>&1; done").format(n=logs_per_agent, kg=KG, ws=ws)
    writers = [subprocess.Popen(["bash", "-c", script], env={**env(), "A": str(a)}, start_new_session=True)
               for a in range(agents)]
    times, failed, waits, refs = [], 0, [], []
    try:
        time.sleep(2.0)  # let the stream build up
        for _ in range(reads):
            t = time.perf_counter()
            r = kg(ws, *command)
            times.append(time.perf_counter() - t)
            failed += r.returncode != 0
            t = time.perf_counter()
            kg(ws, "pref", "list")  # the same start-up, no graph: what the machine's load alone costs
            refs.append(time.perf_counter() - t)
            w = subprocess.run([sys.executable, "-c", _LOCK_PROBE, str(ws)], capture_output=True, text=True,
                               env=env())
            waits.append(float(w.stdout or "nan"))
            time.sleep(0.3)
    finally:
        for w in writers:
            try:
                os.killpg(w.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            w.wait()
    def p95(xs: list[float]) -> float:
        xs = sorted(xs)
        return xs[max(0, int(round(0.95 * len(xs))) - 1)]

    return {"p50": statistics.median(times), "p95": p95(times), "max": max(times), "failed": failed,
            "reads": len(times), "ref_p50": statistics.median(refs), "ref_p95": p95(refs),
            "wait_p50": statistics.median(waits), "wait_p95": p95(waits)}


# A reader's wait for the graph alone: the lock a reader takes (announcing itself, as `kg search` does).
_LOCK_PROBE = """
import sys, time
from pathlib import Path
from kg.store.lock import FileLock
lock = FileLock(Path(sys.argv[1]) / "memory" / ".kg" / "graph.lock", timeout=120)
t = time.perf_counter(); lock.acquire(); print(time.perf_counter() - t); lock.release()
"""
