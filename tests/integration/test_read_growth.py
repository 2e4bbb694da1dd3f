"""Issues 17 and 22: what the agent's served reads ask of the graph follows what they return, not the graph's
size. Two workspaces imported from trails of 1,500 and 15,000 entries, with as many entries in the last 30 days
(the promotion window) and as many per session: each read is run as the read server runs it, as the first read
after a write (its kept answers forgotten), and its Kùzu statements are counted, with the rows each scan of the
node table read (Kùzu's PROFILE of the statement: NumOutputTuples of SCAN_NODE_TABLE), not timed. On 1a841eb
`kg status` and the session brief scanned the node table six times (counts of small edge tables planned from
the node side, the proposals' join), `kg list` twice, and every read counted the nodes three or four times.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import kg
from kg.ingest.trail import import_trail
from tests.conftest import baseline_wait_off

pytestmark = [pytest.mark.slow,
              pytest.mark.embedded_only("the read server and the side index are the embedded store's")]

END = datetime(2026, 3, 1)
RECENT = 1_500  # entries in the last 30 days, at both sizes
TOOLS = ["docker", "pytest", "git", "npm", "kubectl", "cargo", "terraform", "helm"]
FAILS = ["build timed out", "fixture crashed", "push was rejected", "lock file conflict", "rollout stalled"]
NOUNS = ["cache", "schema", "config", "socket", "queue", "runner", "token", "volume"]
READS = {
    "status": ["status"],
    "list": ["list", "--limit", "20"],
    "search": ["search", "docker build timed out"],
    "inject": ["inject", "--message", "the pytest fixture crashed on the schema"],
    "session-start": ["hook", "session-start"],
    "session-start -m": ["hook", "session-start", "-m", "git push was rejected on the runner"],
}


def _trail(n: int) -> dict:
    """`n` entries, the newest RECENT of them in the last 30 days before END, 40 to a session."""
    rng = random.Random(7)
    step = timedelta(days=30) / RECENT
    out = []
    for i in range(n):
        at = END - step * (n - i)
        tool, fail, noun = rng.choice(TOOLS), rng.choice(FAILS), rng.choice(NOUNS)
        kind = rng.choices(["error", "learning"], [3, 1])[0]
        prefix = "ERR" if kind == "error" else "LRN"
        out.append({"id": f"{prefix}-{at:%Y%m%d}-{i:06d}", "type": kind,
                    "category": "error" if kind == "error" else "correction",
                    "summary": f"{tool} {fail} on the {noun}", "details": f"seen in {noun} #{rng.randrange(10**5)}",
                    "area": rng.choice(["infra", "tooling", "tests"]),
                    "priority": rng.choices(["low", "medium", "high"], [3, 5, 2])[0],
                    "status": rng.choices(["pending", "resolved"], [1, 3])[0], "logged": at.isoformat(),
                    "pattern_key": f"{tool}.{noun}.{rng.randrange(max(1, n // 400))}" if rng.random() < 0.4 else None,
                    "session": f"{at:%Y-%m-%d}-{1 + (i // 40) % 9:03d}", "tags": [tool]})
    return {"version": 3, "entries": out, "graph": {"nodes": [], "edges": []}}


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory):
    made = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KG_SERVER", "0")
        for n in (RECENT, 10 * RECENT):
            root = tmp_path_factory.mktemp(f"grow{n}") / "ws"
            ws = kg.init_workspace(root)
            baseline_wait_off(root)  # about what reads ask of a larger graph, not the wait for a baseline
            ws = kg.open_workspace(root)
            trail = root / "memory" / ".learning-trail.json"
            trail.write_text(json.dumps(_trail(n)), encoding="utf-8")
            import_trail(ws, [trail], now=END)
            for i in range(3):
                # logged and linked, as an agent does: after the third of these, Kùzu planned the neighbour read
                # as a scan of the whole node table (before its join hint)
                ws.log("error", "docker build timed out on the cache", now=END - timedelta(minutes=3 - i),
                       pattern_key="docker.cache")
            made[n] = root
    return made


_COUNT = re.compile(r"MATCH \(n:Node\) RETURN count\(n\) AS n")  # a scan that reads no column: counted apart
_BOX = re.compile(r"│\s+([A-Z_]+)\[\d+\]\s+│(.*?)(?=┌|\Z)", re.S)


def _scans(st, cypher: str, params: dict) -> list[tuple[str, int]]:
    """(table, rows) of each table scan the statement runs, from Kùzu's PROFILE of it."""
    result = st._conn.execute("PROFILE " + cypher, params) if params else st._conn.execute("PROFILE " + cypher)
    plan = result.get_next()[0]
    out = []
    for name, body in _BOX.findall(plan):
        rows, table = re.search(r"NumOutputTuples: (\d+)", body), re.search(r"Tables?: ?([^\s│]+)", body)
        if name == "SCAN_NODE_TABLE" and rows and table:
            out.append((table.group(1), int(rows.group(1))))
    return out


def _asked(root: Path, monkeypatch) -> dict[str, tuple[int, int, int]]:
    """(statements, rows of the node table scanned, node counts) of each read, as the read server answers the
    first read after a write."""
    import kg.cli.common as common

    from kg.serve.cache import ReadCache, may_write
    from kg.serve.server import Server, _stamp
    from kg.store import Store
    from kg.workspace import open_workspace

    counts: Counter[str] = Counter()
    fetch = Store._fetch

    def counted(self, cypher, params):
        columns, rows = fetch(self, cypher, params)
        counts["statements"] += 1
        if not may_write(cypher):  # (a write would run twice)
            counted_only = _COUNT.fullmatch(" ".join(cypher.split())) is not None
            counts["node counts"] += counted_only
            for table, n in _scans(self, cypher, params):
                counts[f"scanned {table}"] += 0 if counted_only else n
        return columns, rows

    monkeypatch.setattr(Store, "_fetch", counted)
    ws = open_workspace(root)
    ws.open_options = {"max_threads": 1}
    out = {}
    env = {**os.environ, "KG_NOW": END.isoformat(), "KG_READ_CACHE": "0"}
    with ws.store(apply_journal=False) as held:
        cache = ReadCache(held).install()
        common._served[:] = [ws]
        try:
            server = Server(ws, 600.0, _stamp(ws), cache=cache)
            server.baseline = set(ws.__dict__)
            for name, argv in READS.items():
                server.run({"argv": argv, "env": env, "cwd": str(root)})  # the first: opens the side index
                counts.clear()
                answer = server.run({"argv": argv, "env": env, "cwd": str(root)})
                assert answer["code"] == 0, name
                out[name] = (counts["statements"], counts["scanned Node"], counts["node counts"])
        finally:
            common._served.clear()
            cache.uninstall()
    monkeypatch.undo()
    return out


def test_served_reads_ask_no_more_of_a_graph_ten_times_the_size(workspaces, monkeypatch):
    """Per read: at most one node count (the side index's stamp check, once per change of the graph), no more
    rows of the node table scanned, and no more statements than the search's candidate cap adds (it re-reads by
    key the candidates whose score may still change, at most `[search] candidates` of them, and more of them
    tie in a larger graph)."""
    from kg.memory.rules import memory_rules
    from kg.workspace import open_workspace

    rules = memory_rules(open_workspace(workspaces[RECENT])).search
    cap = max(rules.candidates, 3 * rules.limit)
    small = _asked(workspaces[RECENT], monkeypatch)
    big = _asked(workspaces[10 * RECENT], monkeypatch)
    grew = {name: (small[name], big[name]) for name in READS
            if big[name][0] > small[name][0] + cap or big[name][1] > small[name][1] + 50 or big[name][2] > 1}
    assert not grew, f"(statements, node rows scanned, node counts) at {RECENT:,} and {10 * RECENT:,}: {grew}"
