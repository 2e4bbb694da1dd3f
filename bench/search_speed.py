"""Search and injection speed at 100k events, in-process, with a naive baseline measured in the same run.

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
from kg.memory import inject, search, topics
from kg.text import index_tokens

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
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
