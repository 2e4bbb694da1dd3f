"""Search and injection speed: as the agent calls them (whole `kg` processes, the default), or in-process.

Whole processes (`--events 10000,100000`): a workspace of synthetic events (bench/common.py, bulk-loaded, with
patterns) plus a daily log mirroring each event, as `kg log` writes it. Each command runs `--runs` times per
query as a fresh process; the table gives the median wall time and the median peak RSS (from wait4), beside
the baseline measured in the same run: one Python process that opens an SQLite FTS5 table of the same texts
and prints its BM25 top 10.

    .venv/bin/python bench/search_speed.py [--events 10000,100000] [--runs 5] [--scale [--from DIR]] [--server]
`--compare KG` also runs another kg executable in the same rounds (an A/B against an older checkout).
`--scale` uses bench/scale.py's cached workspaces (seed entries imported with `kg import trail`) instead;
`--from DIR` copies them (DIR/scale-N, e.g. /work/main/bench/results) into a temporary folder first.
`--server` adds, in the same rounds, the commands answered by the workspace's read server (kg/serve/, warm) on
a second copy of the workspace, beside the one-shot path (KG_SERVER=0) on the first, and `kg status` to both;
the RSS is the client process's (the server's own peak is printed below the table), the CPU time the client's
plus the server's for that read.
Targets (issue 17): at 100k events `kg search` <= 0.3 s and <= 150 MB; at 1M <= 0.6 s.

In-process (`--in-process`): the old figures of issue 5, the workspace held open (`with ws:`).

The graph is filled with synthetic events (a Zipf vocabulary of English-like and Chinese words, 1 edge per 20
nodes, 365 daily logs), loaded in bulk with the full-text index dropped and rebuilt around the load (a
multi-row CREATE leaves Kùzu 0.11.3's index wrong otherwise). Queries are 2-4 words taken from random nodes.

    .venv/bin/python bench/search_speed.py [--events 100000] [--queries 200]
Targets (issue 5): search p50 <= 30 ms, inject p50 <= 100 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import kg
from kg.core.text import index_tokens
from kg.memory import inject, search, topics

FTS = "CALL CREATE_FTS_INDEX('Node', 'node_fts', ['tokens'], stemmer := 'porter')"


def vocabulary(rng: random.Random, n: int) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "sho", "vi", "den", "por", "gra", "xel", "qua", "bri", "ton"]
    common = ["error", "failed", "git", "push", "install", "test", "config", "timeout", "user", "file", "build",
              "deploy", "python", "script", "network", "database", "token", "cache", "memory", "agent"]
    zh = ["失败", "配置", "安装", "用户", "超时", "数据库", "部署", "缓存", "网络", "测试", "脚本", "权限"]
    words = common + zh
    while len(words) < n:
        words.append("".join(rng.choice(syll) for _ in range(rng.randint(2, 4))))
    return words


def sentence(rng: random.Random, vocab: list[str], weights: list[float]) -> str:
    return " ".join(rng.choices(vocab, weights=weights, k=rng.randint(6, 14)))


def build(root: Path, events: int, seed: int = 7) -> tuple[kg.Workspace, list[str]]:
    rng = random.Random(seed)
    vocab = vocabulary(rng, 6000)
    weights = [1 / (i + 1) for i in range(len(vocab))]
    ws = kg.init_workspace(root)
    start = datetime(2025, 1, 1)
    texts = []
    kinds = ["event"] * 90 + ["lesson"] * 6 + ["principle"] * 2 + ["knowledge"] * 2
    with ws.store() as st:
        st.execute("CALL DROP_FTS_INDEX('Node', 'node_fts')")
        batch = []
        for i in range(events):
            text = sentence(rng, vocab, weights)
            texts.append(text)
            at = start + timedelta(minutes=5 * i)
            kind = rng.choice(kinds)
            batch.append({"id": f"EVT-{i:07d}", "kind": kind, "entry_type": "learning" if kind == "event" else None,
                          "text": text, "priority": rng.choice(["low", "medium", "medium", "high"]),
                          "status": rng.choice(["pending", "resolved", "resolved"]),
                          "session": f"{at:%Y-%m-%d}-001", "at": at, "tokens": index_tokens(text)})
            if len(batch) == 5000 or i == events - 1:
                st.execute("UNWIND $rows AS r CREATE (:Node {id: r.id, kind: r.kind, entry_type: r.entry_type, "
                           "text: r.text, priority: r.priority, status: r.status, session: r.session, "
                           "created_at: r.at, updated_at: r.at, reinforced_at: r.at, pinned: false, "
                           "stale: false, tags: [], files: [], redactions: [], tokens: r.tokens})", {"rows": batch})
                batch = []
        edges = [{"a": f"EVT-{rng.randrange(events):07d}", "b": f"EVT-{rng.randrange(events):07d}"}
                 for _ in range(events // 20)]
        st.execute("UNWIND $rows AS r MATCH (a:Node {id: r.a}), (b:Node {id: r.b}) "
                   "CREATE (a)-[:related_to {manual: false, score: 0.5, reason: 'bench'}]->(b)", {"rows": edges})
        st.execute(FTS)
    for day in range(365):  # daily logs: the same texts, one line each
        at = start + timedelta(days=day)
        lines = "".join(f"### 💡 {at:%H:%M} - Insight: {t}\n" for t in texts[day::365])
        (ws.memory / f"{at:%Y-%m-%d}.md").write_text(f"# {at:%Y-%m-%d}\n\n{lines}", encoding="utf-8")
    topics.build(ws, now=start + timedelta(days=365))
    return ws, texts


def naive(ws: kg.Workspace, query: str) -> list[str]:
    """The naive way: scan every node for the query's words, rank by how many it contains."""
    terms = search.query_terms(query)
    with ws.store() as st:
        rows = st.execute("MATCH (n:Node) WHERE any(t IN $terms WHERE n.text CONTAINS t) "
                          "RETURN n.id AS id, n.text AS text", {"terms": terms})
    ranked = sorted(rows, key=lambda r: (-sum(t in r["text"] for t in terms), r["id"]))
    return [r["id"] for r in ranked[:10]]


def median_ms(fn, queries: list[str]) -> float:
    times = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


SQLITE_SEARCH = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = " OR ".join('"' + w + '"' for w in sys.argv[2].split())
for row in db.execute("SELECT id, text FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (q,)):
    print(row[0], row[1])
"""
QUERIES = ["docker permission error", "kubectl migration timed out", "pytest fixture crashed",
           "what failed on the release yesterday"]


def build_process_workspace(root: Path, n: int) -> tuple[Path, datetime]:
    """A workspace of `n` synthetic events with their daily-log lines, and an SQLite FTS5 copy of the texts."""
    import sqlite3
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import build_workspace, synthetic_rows

    build_workspace(root, n)
    rows = synthetic_rows(n)
    days: dict[str, list[str]] = {}
    for r in rows:
        days.setdefault(f"{r['created_at']:%Y-%m-%d}", []).append(
            f"### ❌ {r['created_at']:%H:%M} - Error: {r['text']}\n")
    for day, lines in days.items():
        (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n" + "".join(lines), encoding="utf-8")
    db = sqlite3.connect(root / "fts5.db")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(r["id"], r["text"]) for r in rows])
    db.commit()
    db.close()
    return root, rows[-1]["created_at"] + timedelta(days=1)


def process(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds (user + system) of one child process. They come from
    /usr/bin/time, a small parent: a child forked from this (large) benchmark process would report the
    benchmark's RSS as its own peak. On a shared machine the CPU seconds say more than the wall time."""
    import subprocess

    t0 = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t0
    err = done.stderr.decode()
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {err}")
    kb, user, system = err.strip().splitlines()[-1].split()
    return wall, int(kb) / 1024, float(user) + float(system)


def scale_workspace(n: int) -> tuple[Path, datetime]:
    """bench/scale.py's cached workspace of `n` imported seed entries (built on first use), and an SQLite FTS5
    copy of the same texts beside it."""
    import os
    import sqlite3
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import scale

    root, _, _ = scale.build(n, {**os.environ, "KG_NOW": scale.moment(n)}, False)
    db = root / "fts5.db"
    if not db.exists():
        con = sqlite3.connect(db)
        con.execute("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text)")
        con.executemany("INSERT INTO t VALUES (?, ?)", ((e["id"], f"{e['summary']} {e['details']}")
                                                         for e in scale.entries(n)))
        con.commit()
        con.close()
    return root, datetime.fromisoformat(scale.moment(n))


def copied(src: Path, dest: Path) -> Path:
    """A private copy of a cached workspace (the cache is never opened in place), without a server's files."""
    import shutil

    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("serve.*"))
    return dest


def fts5_copy(root: Path, n: int) -> None:
    """The SQLite FTS5 baseline's texts for bench/scale.py's workspace of `n` entries, beside it."""
    import sqlite3
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import scale

    con = sqlite3.connect(root / "fts5.db")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text)")
    con.executemany("INSERT INTO t VALUES (?, ?)", ((e["id"], f"{e['summary']} {e['details']}")
                                                     for e in scale.entries(n)))
    con.commit()
    con.close()


def server_peak_mb(root: Path) -> float | None:
    """The read server's peak RSS (VmHWM), asked for its pid."""
    from kg.serve import protocol

    try:
        pid = protocol.ask(root / "memory" / ".kg", {"op": "status"}, 10.0)["pid"]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, KeyError, ValueError, protocol.Closed):
        return None
    return None


def server_cpu(root: Path) -> tuple[int, float] | None:
    """The read server's pid and CPU seconds so far (user + system), so a served read is charged with the
    server's work as well as its client's."""
    import os

    from kg.serve import protocol

    try:
        pid = protocol.ask(root / "memory" / ".kg", {"op": "status"}, 10.0)["pid"]
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return pid, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, KeyError, ValueError, IndexError, protocol.Closed):
        return None


def command(prefix: list[str], *words: str, query: bool = True):
    """A command line for a query: `prefix` and `words`, then the query unless `query` is False."""
    return lambda q: [*prefix, *words, *([q] if query else [])]


def processes(sizes: list[int], runs: int, use_scale: bool = False, compare: str | None = None,
              source: Path | None = None, server: bool = False) -> None:
    import os
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from hook_speed import compiled_env

    kg_bin = str(Path(sys.executable).parent / "kg")
    env = compiled_env()
    out: list[list[str]] = []
    notes: list[str] = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            if use_scale and source is not None:
                sys.path.insert(0, str(Path(__file__).resolve().parent))
                import scale

                root, now = copied(source / f"scale-{n}", Path(tmp) / "ws"), datetime.fromisoformat(scale.moment(n))
                fts5_copy(root, n)
            else:
                root, now = scale_workspace(n) if use_scale else build_process_workspace(Path(tmp) / "ws", n)
            print(f"built {n:,} events in {time.perf_counter() - t0:.0f}s", flush=True)
            # a loaded machine can keep a process on the graph past the default 10 s lock budget
            env_now = {**env, "KG_NOW": f"{now:%Y-%m-%dT%H:%M}", "KG_LOCK_TIMEOUT": "300", "KG_SERVER": "0"}
            kg = [kg_bin, "-w", str(root)]
            commands = [
                ("SQLite FTS5, one process (baseline)",
                 command([sys.executable, "-c", SQLITE_SEARCH, str(root / "fts5.db")])),
                ("kg search", command(kg, "search")),
                ("kg inject -m", command(kg, "inject", "--message")),
                ("kg hook session-start -m", command(kg, "hook", "session-start", "-m")),
            ]
            envs: dict[str, dict[str, str]] = {}
            if server:  # the same commands answered by a warm read server, on a second copy of the workspace
                twin = copied(root, Path(tmp) / "twin")
                served = [kg_bin, "-w", str(twin)]
                served_env = {**env_now, "KG_SERVER": "1"}
                commands += [("kg status", command(kg, "status", query=False)),
                             ("served: kg search", command(served, "search")),
                             ("served: kg inject -m", command(served, "inject", "--message")),
                             ("served: kg hook session-start -m",
                              command(served, "hook", "session-start", "-m")),
                             ("served: kg status", command(served, "status", query=False))]
                envs = {label: served_env for label, _ in commands if label.startswith("served:")}
                process([*served, "serve", "start"], served_env)
            servers = {label: twin for label in envs}  # which workspace's server answers a label
            if compare:  # another kg (an older checkout's .venv/bin/kg), in the same rounds
                other = [compare, "-w", str(root)]
                commands += [("other kg: search", command(other, "search")),
                             ("other kg: inject -m", command(other, "inject", "--message")),
                             ("other kg: hook session-start -m", command(other, "hook", "session-start", "-m"))]
                if server:  # and its read server, on a third copy
                    triplet = copied(root, Path(tmp) / "triplet")
                    other_served = [compare, "-w", str(triplet)]
                    more = [("other kg served: search", command(other_served, "search")),
                            ("other kg served: inject -m", command(other_served, "inject", "--message")),
                            ("other kg served: hook session-start -m",
                             command(other_served, "hook", "session-start", "-m")),
                            ("other kg served: status", command(other_served, "status", query=False))]
                    commands += more
                    envs.update({label: served_env for label, _ in more})
                    servers.update({label: triplet for label, _ in more})
                    process([*other_served, "serve", "start"], served_env)
            for label, argv in commands:  # warm the OS cache, compile, build the common-term list
                process(argv(QUERIES[0]), envs.get(label, env_now))
            samples: dict[str, list[tuple[float, float, float]]] = {label: [] for label, _ in commands}
            for _ in range(runs):  # paired: every command once per round, so load hits them alike
                for q in QUERIES:
                    for label, argv in commands:
                        before = server_cpu(servers[label]) if label in envs else None
                        wall, rss, cpu = process(argv(q), envs.get(label, env_now))
                        after = server_cpu(servers[label]) if before else None
                        if before and after and after[0] == before[0]:
                            cpu += after[1] - before[1]  # the server's share of this read
                        samples[label].append((wall, rss, cpu))
            if server:
                for name, where, stop in (("the read server", twin, served),
                                          *((("the other kg's read server", triplet, other_served),)
                                            if compare else ())):
                    peak = server_peak_mb(where)
                    notes.append(f"{n:,}: {name}'s own peak RSS {peak:.0f} MB" if peak else
                                 f"{n:,}: {name} was not running at the end (it was restarted)")
                    process([*stop, "serve", "stop"], served_env)
            base = statistics.median(x[0] for x in samples[commands[0][0]])
            base_cpu = statistics.median(x[2] for x in samples[commands[0][0]])
            for label, _ in commands:
                wall = statistics.median(x[0] for x in samples[label])
                cpu = statistics.median(x[2] for x in samples[label])
                out.append([f"{n:,}", label, f"{wall * 1000:.0f}", f"{cpu * 1000:.0f}",
                            f"{statistics.median(x[1] for x in samples[label]):.0f}",
                            f"{max(x[1] for x in samples[label]):.0f}", f"{wall / base:.2f}", f"{cpu / base_cpu:.2f}"])
    os.environ.pop("KG_NOW", None)
    from common import table

    print(table(f"Whole processes: median of {runs} x {len(QUERIES)} queries (load average {os.getloadavg()[0]:.1f}, "
                f"{os.cpu_count()} cores)", ["events", "command", "wall ms", "CPU ms", "RSS MB", "peak RSS MB",
                                             "wall x base", "CPU x base"], out))
    for line in notes:
        print(line)
    print("\ntargets at 100k: kg search <= 300 ms and <= 150 MB; at 1M <= 600 ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="10000,100000", help="sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compare", default=None, metavar="KG",
                        help="also run another kg executable (e.g. /work/main/.venv/bin/kg) in the same rounds")
    parser.add_argument("--scale", action="store_true",
                        help="use bench/scale.py's cached workspaces of imported seed entries (built on first use)")
    parser.add_argument("--from", dest="source", type=Path, default=None, metavar="DIR",
                        help="with --scale: copy DIR/scale-N (e.g. /work/main/bench/results) instead of building")
    parser.add_argument("--server", action="store_true",
                        help="also the commands answered by a warm read server (kg/serve/), and kg status")
    parser.add_argument("--in-process", action="store_true", help="the in-process figures (issue 5)")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(x) for x in args.events.split(",")]
    if not args.in_process:
        processes(sizes, args.runs, args.scale, args.compare, args.source, args.server)
        return
    args.events = sizes[-1]
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ws, texts = build(Path(tmp) / "ws", args.events)
        print(f"built {args.events:,} events in {time.perf_counter() - t0:.0f}s")
        queries = []
        for _ in range(args.queries):
            words = rng.choice(texts).split()
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
        now = datetime(2026, 1, 1)
        with ws:
            search.search(ws, queries[0], now=now)  # warm-up: loads rules and the common-term list
            rows = [
                ("search (graph + files)", median_ms(lambda q: search.search(ws, q, now=now), queries)),
                ("search (graph only)", median_ms(lambda q: search.search(ws, q, now=now, sources=["graph"]),
                                                  queries)),
                ("inject (budget 2000)", median_ms(lambda q: inject.inject(ws, q, now=now), queries)),
                ("naive CONTAINS scan", median_ms(lambda q: naive(ws, q), queries)),
            ]
    base = rows[-1][1]
    print(f"\n{'operation':<26} {'p50 ms':>8} {'vs naive':>9}")
    print("-" * 45)
    for name, ms in rows:
        print(f"{name:<26} {ms:>8.1f} {ms / base:>8.2f}x")
    print("\ntargets: search p50 <= 30 ms, inject p50 <= 100 ms")


if __name__ == "__main__":
    main()
