"""What a long open of the graph is doing, for the processes it shuts out (issue 22).

A writer's open that migrates the graph, or rebuilds what a migration asked for (the pattern aggregates, the
full-text index), takes minutes at a million entries and holds the graph all along. It says so in
`memory/.kg/migrating.json` (its pid, the step it is on, when it began), written whole by rename and removed
when done. A read (through the read server or on its own) or a `kg cycle` that meets it waits for it as long as
it runs (the first command after an upgrade must not fail for a one-off upgrade), saying so in one line on
stderr (upgrading, how long so far) once the marker is `SAY_AFTER` old, then answers. With
`KG_MIGRATION_WAIT=SECONDS` it waits at most that long, then fails with exit 1 and says when to retry, never
with a bare "the graph is held". The read server's fold of its log uses the marker too (`kg.serve.renew`).

Standard library only: the light client (`kg.serve.client`) reads it before it knows whether it needs kg.
"""

from __future__ import annotations

import json
import os
import time

FILE = "migrating.json"  # in memory/.kg/
# A waiter says nothing of a wait for a marker younger than this (seconds): the read server folds its log as it
# lets go (kg/serve/renew.py), ~0.1 s on most graphs, and a line for that would only be noise on the stderr of a
# command (one a served read must match byte for byte); an upgrade or a fold that takes minutes is still said
SAY_AFTER = 2.0
UPGRADING = "upgrading the graph for this kg"  # what a marker's holder does, unless it names it (`Marker(doing=)`)


def wait_bound() -> float | None:
    """Seconds a read or a cycle waits for a migration in progress: KG_MIGRATION_WAIT, else None (as long as it
    runs: a killed migration stops counting at once, `current`)."""
    try:
        return max(0.0, float(os.environ["KG_MIGRATION_WAIT"]))
    except (KeyError, ValueError):
        return None


class Marker:
    """The writer's side: `step` before each step, `done` at the end (or when the open fails)."""

    def __init__(self, kg_dir: str | os.PathLike, steps: list[str], *, doing: str | None = None):
        self.path = os.path.join(kg_dir, FILE)
        self.steps = steps
        self.doing = doing  # what a waiter is told the holder does (None: `UPGRADING`)
        self.started = time.time()
        self.at: str | None = None

    def step(self, name: str) -> None:
        from kg.serve.protocol import trace

        if name == self.at:
            return
        self.at = name
        n = self.steps.index(name) + 1 if name in self.steps else len(self.steps)
        record = {"pid": os.getpid(), "step": n, "of": len(self.steps), "what": name, "started": self.started}
        if self.doing:
            record["doing"] = self.doing
        part = f"{self.path}.{os.getpid()}"
        try:
            with open(part, "w", encoding="utf-8") as fh:
                json.dump(record, fh)
            os.replace(part, self.path)
        except OSError:  # only a courtesy to the processes waiting: the migration goes on
            pass
        trace(f"migration step {n} of {len(self.steps)}: {name}")  # after the record: a reader of it sees the step

    def done(self) -> None:
        from kg.serve.protocol import trace

        trace("migration done")
        try:
            os.unlink(self.path)
        except OSError:
            pass


def current(kg_dir: str | os.PathLike) -> dict | None:
    """The migration in progress in this workspace (its record), or None: none, its process is gone (a
    killed migration: the next writer's open runs it again), or the graph is not held (a migration holds it all
    along: a marker without the lock is a killed one's, whose pid another process may have since been given)."""
    try:
        with open(os.path.join(kg_dir, FILE), "rb") as fh:
            record = json.loads(fh.read(4096))
        pid = int(record["pid"])
        int(record["step"]), int(record["of"]), float(record["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:
        pass  # another user's process: it is there
    return record if _graph_held(kg_dir) else None


def _graph_held(kg_dir: str | os.PathLike) -> bool:
    """Whether some process holds the graph's lock (`graph.lock`, a flock), asked of the kernel without taking
    it (`/proc/locks`), so a waiter's look never shuts a writer out. Where that cannot be read: True (the
    marker's pid is all there is to go by)."""
    try:
        st = os.stat(os.path.join(kg_dir, "graph.lock"))
    except OSError:
        return False  # no lock file: no open of this graph holds it
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                if fields[1:2] == ["FLOCK"] and want in fields:  # (not "->": a process waiting for it)
                    return True
    except OSError:
        return True
    return False


def sweep(kg_dir: str | os.PathLike) -> None:
    """A writer's open that holds the graph's lock: a marker not its own is a killed migration's; it goes, so
    no waiter mistakes a process that later got its pid for a migration."""
    path = os.path.join(kg_dir, FILE)
    try:
        with open(path, "rb") as fh:
            pid = json.loads(fh.read(4096)).get("pid")
    except FileNotFoundError:
        return
    except (OSError, ValueError, AttributeError):
        pid = None  # unreadable or half-written by a killed process: not this one's either
    if pid != os.getpid():
        try:
            os.unlink(path)
        except OSError:
            pass


def describe(record: dict) -> str:
    ago = max(0.0, time.time() - float(record["started"]))
    what = f": {record['what']}" if record.get("what") else ""
    doing = record.get("doing") or "migrating the graph"
    return f"{doing} (step {record['step']} of {record['of']}{what}), started {ago:.0f} s ago"


def waiting_line(record: dict, bound: float | None) -> str:
    """The one line a waiter writes: the graph is being upgraded, for how long so far, and that it waits."""
    ago = max(0.0, time.time() - float(record["started"]))
    what = f": {record['what']}" if record.get("what") else ""
    until = f" (at most {bound:g} s: KG_MIGRATION_WAIT)" if bound is not None else ""
    doing = record.get("doing") or UPGRADING
    return (f"kg: {doing} (step {record['step']} of {record['of']}{what}), {ago:.0f} s so far, by process "
            f"{record['pid']}; waiting for it{until}, then answering\n")


def give_up_line(record: dict) -> str:
    return (f"kg process {record['pid']} is {describe(record)}, and holds the graph until it is done (minutes "
            "at a million entries); try again in a few minutes, or wait longer: a larger KG_MIGRATION_WAIT, or none "
            "to wait as long as it runs")


class Watch:
    """A waiter's view: `check()` each round while it waits for the graph. It says once on stderr what it waits
    for (once the marker is `SAY_AFTER` seconds old: a short fold is waited for silently), and tells whether to
    keep waiting: True while a migration runs and its bound, if any (counted from this waiter's first sight of it),
    is not passed (the waiter's own budget then counts from the migration's end); None when no migration runs;
    False when the bound is passed (`record`: the migration)."""

    def __init__(self, kg_dir: str | os.PathLike, *, say: bool = True):
        self.kg_dir = kg_dir
        self.say = say
        self.bound = wait_bound()
        self.since: float | None = None
        self.shown: tuple | None = None
        self.record: dict | None = None

    def check(self) -> bool | None:
        record = current(self.kg_dir)
        if record is None:
            return None
        self.record = record
        now = time.monotonic()
        if self.since is None:
            self.since = now
        if self.bound is not None and now - self.since > self.bound:
            return False
        key = (record["pid"],)  # one line per migration, not per step
        if self.say and key != self.shown and time.time() - float(record["started"]) >= SAY_AFTER:
            self.shown = key
            _stderr(waiting_line(record, self.bound))
        return True


def _stderr(text: str) -> None:
    import sys

    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
