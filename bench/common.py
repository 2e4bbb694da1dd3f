"""Shared helpers for the benchmarks: synthetic but realistic workspaces, timing and a table printer.

Benchmarks print tables of medians and ratios against a baseline measured in the same run; they never
assert. Machines here are shared and noisy, so compare ratios, not absolute numbers across runs.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

AREAS = ["frontend", "backend", "infra", "tests", "docs", "config", "behavior", "tooling"]
TOOLS = ["git", "pytest", "npm", "pnpm", "docker", "kubectl", "psql", "curl", "make", "cargo", "pip", "node"]
FAILS = ["failed", "timed out", "was rejected", "crashed", "returned exit code 1", "could not connect",
         "raised KeyError", "hit a permission error", "ran out of memory", "found no such file"]
NOUNS = ["branch", "lock file", "database", "token", "migration", "fixture", "config", "cache", "endpoint",
         "container", "schema", "build", "release", "index", "queue", "session", "report", "service"]


def synthetic_rows(n: int, *, seed: int = 7, start: datetime = datetime(2026, 1, 1)) -> list[dict[str, Any]]:
    """`n` event rows in the Node table's shape, with recurring wording and pattern keys."""
    from kg.core.text import index_tokens
    from kg.store import NODE_COLUMNS

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        tool, fail, noun = rng.choice(TOOLS), rng.choice(FAILS), rng.choice(NOUNS)
        area = rng.choice(AREAS)
        text = f"{tool} {fail} on the {noun} while working on {rng.choice(NOUNS)} #{rng.randrange(5000)}"
        at = start + timedelta(minutes=7 * i)
        row = {c: None for c in NODE_COLUMNS}
        row.update(id=f"ERR-{at:%Y%m%d}-{100000 + i}", kind="event", entry_type="error", text=text,
                   category="error", priority="high", status="pending", area=area, source="error",
                   session=f"bench-{i // 40}", files=[], tags=[], redactions=[], created_at=at, updated_at=at,
                   reinforced_at=at, pinned=False, stale=False, tokens=index_tokens(text),
                   pattern_key=f"{tool}.{noun}" if rng.random() < 0.3 else None)
        rows.append(row)
    return rows


def build_workspace(path: Path, n: int) -> Any:
    """A workspace holding `n` synthetic events (bulk-loaded), with their patterns attached."""
    import kg
    from kg.store.bulk import bulk_load_edges, bulk_load_nodes

    ws = kg.init_workspace(path)
    rows = synthetic_rows(n)
    with ws.store() as st:
        bulk_load_nodes(st, rows)
        keys = sorted({r["pattern_key"] for r in rows if r["pattern_key"]})
        patterns = []
        from kg.store import NODE_COLUMNS

        for j, key in enumerate(keys):
            p = {c: None for c in NODE_COLUMNS}
            p.update(id=f"pat-20260101-{j + 1:03d}", kind="pattern", text=key, pattern_key=key, status="active",
                     files=[], tags=[], redactions=[], created_at=rows[0]["created_at"],
                     updated_at=rows[0]["created_at"], reinforced_at=rows[0]["created_at"], pinned=False,
                     stale=False, tokens=key)
            patterns.append(p)
        bulk_load_nodes(st, patterns)
        pid = {p["pattern_key"]: p["id"] for p in patterns}
        links = [{"src": pid[r["pattern_key"]], "dst": r["id"], "created_at": r["created_at"], "manual": False,
                  "score": 1.0, "reason": "bench"} for r in rows if r["pattern_key"]]
        bulk_load_edges(st, "derived_from", links, scratch=ws.kg_dir)
        st.run("pattern_reinforce_bulk")
        from kg.graph import linking

        linking.rebuild_terms(st, linking.rules_of(ws.rules))  # what `kg link reindex` does after a bulk load
    with ws.journal.locked():
        ws.journal.observe([f"pat-20260101-{len(keys):03d}"])
    return ws


def median_of(func: Callable[[], Any], runs: int) -> tuple[float, list[float]]:
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        func()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), samples


def table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [f"\n{title}", line, "-" * len(line)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def no_child(conn: Any, wait_s: float = 60.0) -> None:
    """Return once a FalkorDB server has no child alive: a GRAPH.COPY forked beside one hangs the server
    (kg/store/falkor_clone.py). For a bench's own server, which nothing else uses."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        info = conn.info("persistence")
        if not any(info.get(k) for k in ("rdb_bgsave_in_progress", "aof_rewrite_in_progress",
                                         "module_fork_in_progress")):
            return
        time.sleep(0.05)
    raise SystemExit("the bench's server kept a child alive for a minute")


# -- this build beside another, each command a new process ---------------------------------------------------
def process_env() -> dict[str, str]:
    """A benchmarked kg process's environment: none of this shell's KG_ settings, the read server off."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("KG_")}, "KG_SERVER": "0"}


def timed_process(argv: list[str]) -> float:
    """Seconds one kg process takes, start to exit."""
    t = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=process_env())
    return time.perf_counter() - t


def cpu_process(argv: list[str]) -> float:
    """CPU seconds (user + system) one kg process and its children take: steadier than wall time on a loaded
    machine (its load is other processes' time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, capture_output=True, env=process_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare_builds(base: Path, builds: dict[str, str], runs: int,
                   commands: Callable[[int, str, list[str]], list[tuple[str, list[str]]]],
                   measure: Callable[[list[str]], float] = timed_process) -> dict[tuple[str, str], list[float]]:
    """Each build (name -> its kg) on its own copy of workspace `base` (made beside it), alternating which goes
    first run by run; `commands(run, kg, ["-w", copy])` gives that run's (what, argv). Samples by (what, build):
    wall seconds, or what `measure` gives (`cpu_process`)."""
    copies = {}
    for name in builds:
        copies[name] = base.parent / name
        shutil.copytree(base, copies[name])
    samples: dict[tuple[str, str], list[float]] = {}
    for i in range(runs):
        for name, kg in (builds.items() if i % 2 == 0 else reversed(builds.items())):
            for what, argv in commands(i, kg, ["-w", str(copies[name])]):
                samples.setdefault((what, name), []).append(measure(argv))
    return samples


def ratio_rows(samples: dict[tuple[str, str], list[float]], names: list[str]) -> list[list[str]]:
    """A table's rows of `compare_builds`' samples: each command's median per build (s), then this build's over
    each other's (the first name is this build)."""
    whats = list(dict.fromkeys(w for w, _ in samples))
    return [[w, *(f"{statistics.median(samples[(w, n)]):.3f}" for n in names),
             *(f"{statistics.median(samples[(w, names[0])]) / statistics.median(samples[(w, n)]):.2f}x"
               for n in names[1:])] for w in whats]
