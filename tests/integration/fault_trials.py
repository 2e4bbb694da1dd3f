"""Kill -9 trials, shared by the CI suite (`test_fault.py`, a few
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
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))
SCENARIOS = ("log", "applier", "cycle", "import", "batch", "drain")

_BATCH = """
import sys, kg
ws = kg.open_workspace(sys.argv[1])
with ws:
    for i in range(int(sys.argv[3])):
        r = ws.log("learning", f"{sys.argv[2]} batch entry {i}", session="batch")
        print(r.id, flush=True)
"""


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("KG_") or k == "KG_SERVER"}  # tests: 0
    e["KG_LOCK_TIMEOUT"] = "30"
    return e


def until(ready, what: str, proc: subprocess.Popen | None = None, seconds: float = 120) -> None:
    """Poll `ready` (never a fixed sleep): fails naming `what` after `seconds`, or at once when `proc` ended."""
    deadline = time.monotonic() + seconds
    while not ready():
        assert proc is None or proc.poll() is None, (what, proc.communicate())
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def processes_of(root: Path, event: str) -> list[int]:
    """The live processes of `kg ... EVENT` in the workspace at `root` (a hook, the wrapper that ran it, or the
    detached child it forked, which keeps its command line); zombies do not count."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if str(root).encode() in argv and event.encode() in argv and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def children_done(root: Path, event: str) -> None:
    """Wait until the detached children of `kg ... EVENT` in the workspace have finished (on their pidfds: the
    kernel says when a process is gone; no polling, no sleep)."""
    import select

    for pid in processes_of(root, event):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            assert select.select([pidfd], [], [], 300)[0], f"the detached child of {event} never finished"
        finally:
            os.close(pidfd)


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
    elif scenario == "import":
        acked, failed = _import_trial(ws, rng, tag, span)
        if failed:  # the import run again after the kill must finish it: else the kill left it stuck
            tally.bricked += 1
            tally.notes.append(f"{tag}: import again failed: {failed[:200]}")
    elif scenario == "cycle":
        r = kg(ws, "log", "error", f"{tag} cycle entry", "--pattern-key", "fault.cycle", "--wait")
        acked = _ids_printed(r.stdout)
        _kill_after([KG, "-w", str(ws), "cycle"], rng.uniform(0.3, 2.0) * span)
    else:
        raise ValueError(scenario)
    check(ws, acked, tally, tag)


def _import_trial(ws: Path, rng: random.Random, tag: str, span: float) -> tuple[list[str], str]:
    """Kill `kg import trail` at a random moment, then run it again with no paths (it resumes an import cut
    short, or imports the file anew, skipping what is there): its answer acknowledges every entry. Returns
    those ids, plus one logged with --wait before the import began, and why the second run failed (if it did)."""
    before = _ids_printed(kg(ws, "log", "learning", f"{tag} before the import", "--wait").stdout)
    day = 20250101 + rng.randrange(28)
    entries = [{"id": f"ERR-{day}-{rng.randrange(10**6):06d}{i:03d}", "type": "error",
                "summary": f"{tag} imported failure {i}", "logged": f"2025-01-01T10:{i // 60:02d}:{i % 60:02d}",
                "pattern_key": f"fault.import.{i % 3}" if i % 2 else None} for i in range(60)]
    trail = ws.parent / f"{tag}.trail.json"
    trail.write_text(json.dumps({"entries": entries}))
    _kill_after([KG, "-w", str(ws), "import", "trail", str(trail)], rng.uniform(0.3, 3.0) * span)
    again = kg(ws, "import", "trail", *([] if (ws / "memory" / ".kg" / "import.json").exists() else [str(trail)]))
    trail.unlink()
    if again.returncode != 0:
        return before, again.stderr.strip() or f"exit {again.returncode}"
    return before + [e["id"] for e in entries], ""


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
