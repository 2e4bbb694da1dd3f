"""Auto-link speed: the time to link one new node into graphs of 10k, 100k (and 1M) nodes.

For each size a workspace is bulk-loaded with synthetic agent-log texts (a Zipf-distributed vocabulary mixed
with real wording from the shared transcripts), then N new nodes are linked one by one, each in a rolled-back
transaction so every probe sees the same graph. Two ways, in the same run:

- indexed: what kg does (`kg.graph.linking.candidates` + `plan_links`: rarest terms → full-text index → rapidfuzz),
  asking the side index (issue 22: the graph has no node_fts) and, in the same run, Kùzu's node_fts made for
  the probes (as kg did before; linking asks node_fts while a graph has it), with their ratio;
- naive:   the seed's way, a full scan of every node's text scored with the same pure functions.

    .venv/bin/python bench/link_speed.py                 # 10k and 100k
    .venv/bin/python bench/link_speed.py --sizes 10000,100000,1000000 --probes 30

Prints medians (ms) per size and the naive/indexed ratio. Workspaces are kept under --dir to re-run fast.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import kg
from kg.core.text import index_tokens
from kg.graph import linking
from kg.ingest.apply import node_params
from kg.store import _FTS_CREATE, Store, sideindex
from kg.store.rebuild import drop_fts

REAL = [
    "git push failed: the current branch has no upstream branch",
    "String to replace not found in file",
    "Pre-commit validation failed: code is not formatted, run mix format to fix",
    "permission denied when running the eval script",
    "File does not exist",
    "the user rejected the tool use and asked to wait",
    "ExUnit test failed in the transcript annotation live view",
    "dialyzer found a type mismatch in the trace context module",
    "credo flagged a refactoring opportunity in a nested function",
    "you seem to be editing the wrong files, be more careful",
    "i only wanted you to create a task, not work on it",
    "the generated pr.md references more commits than the branch has",
    "switch back to the main workspace and make a new task",
    "update the workflow rule so the task session is created first",
    "推送失败，当前分支没有上游分支",
    "不要解释，直接回答",
    "测试失败：找不到文件",
]
KINDS = ["event"] * 6 + ["lesson", "lesson", "principle", "knowledge"]
ENTRY = ["error", "learning", "feature"]
AREAS = ["tooling", "backend", "frontend", "tests", "docs", "config", "infra", "behavior"]


def vocabulary(rng: random.Random, size: int = 30000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = set()
    while len(out) < size:
        out.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 9))))
    return sorted(out)


def zipf(vocab: list[str]) -> list[float]:
    """Cumulative Zipf weights over the vocabulary (given to `choices` as cum_weights: passing plain weights
    makes it re-add 30k weights on every call, which made building 1M nodes take hours)."""
    return list(itertools.accumulate(1.0 / (i + 1) ** 1.05 for i in range(len(vocab))))


def make_text(rng: random.Random, vocab: list[str], weights: list[float]) -> str:
    words = rng.choices(vocab, cum_weights=weights, k=rng.randint(5, 11))
    if rng.random() < 0.5:
        base = rng.choice(REAL).split()
        cut = rng.randint(2, max(2, len(base)))
        words = base[:cut] + words[: rng.randint(2, 5)]
    return " ".join(words)


def build(path: Path, n: int, seed: int = 7) -> kg.Workspace:
    """A workspace with n nodes, bulk-loaded (the write path's one-statement-per-node rule is for the live
    index; here the index is dropped and rebuilt around the load)."""
    marker = path / ".bench-built"
    if marker.exists() and marker.read_text() == str(n):
        return kg.open_workspace(path)
    ws = kg.init_workspace(path)
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = zipf(vocab)
    t0 = datetime(2025, 1, 1)
    with ws.store() as st:
        batch = []
        for i in range(n):
            kind = rng.choice(KINDS)
            text = make_text(rng, vocab, weights)
            batch.append({
                "id": f"B{i:07d}", "kind": kind, "entry_type": rng.choice(ENTRY) if kind == "event" else None,
                "text": text, "area": rng.choice(AREAS), "at": t0 + timedelta(minutes=i),
                "tokens": index_tokens(text),
            })
            if len(batch) == 20000 or i == n - 1:
                st.execute("UNWIND $rows AS r CREATE (:Node {id: r.id, kind: r.kind, entry_type: r.entry_type, "
                           "text: r.text, area: r.area, status: 'pending', created_at: r.at, updated_at: r.at, "
                           "tokens: r.tokens, files: [], tags: [], redactions: [], pinned: false, stale: false})",
                           {"rows": batch})
                batch = []
        linking.rebuild_terms(st, linking.rules_of(ws.rules))
        sideindex.sync(st)
    marker.write_text(str(n))
    return ws


def naive(st: Store, doc: linking.Doc, rules: linking.LinkRules) -> list[linking.LinkDecision]:
    """The seed's way: score the new node against every node in the graph."""
    rows = st.execute("MATCH (n:Node) RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, "
                      "n.category AS category, n.area AS area, n.text AS text, n.created_at AS created_at")
    found = linking.Candidates([linking._doc(r) for r in rows if r["id"] != doc.id], {})
    return linking.plan_links(doc, found, set(), rules)


class _Rollback(Exception):
    """Leave the graph as it was: every probe sees the same graph."""


def probe(ws: kg.Workspace, n_probes: int, naive_probes: int, seed: int = 99, index: str = "side"
          ) -> dict[str, list[float]]:
    rng = random.Random(seed)
    vocab = vocabulary(random.Random(7))
    weights = zipf(vocab)
    rules = linking.rules_of(ws.rules)
    out: dict[str, list[float]] = {"indexed": [], "naive": [], "links": []}
    with ws.store() as st:
        if index == "node_fts":  # as graphs carried it before issue 22 (dropped again below)
            st.execute(_FTS_CREATE)
            st.forget_prepared()
        try:
            _probes(st, rules, rng, vocab, weights, n_probes, naive_probes, out)
        finally:
            if index == "node_fts":
                drop_fts(st)
    return out


def _probes(st: Store, rules: linking.LinkRules, rng: random.Random, vocab: list[str], weights: list[float],
            n_probes: int, naive_probes: int, out: dict[str, list[float]]) -> None:
    if True:
        for i in range(n_probes):
            text = make_text(rng, vocab, weights)
            doc = linking.Doc(id=f"P{i:05d}", kind=rng.choice(["event", "lesson", "principle"]), text=text,
                              entry_type="error", area="tooling", created_at=datetime(2030, 1, 1))
            rules.memo.clear()
            try:
                with st.transaction():
                    st.run("node_create", **node_params(doc.id, doc.kind, text, doc.created_at))
                    t = time.perf_counter()  # the node exists (as in the write path); time the linking
                    found = linking.candidates(st, doc, rules, count=True)  # as the write path does
                    linking.index_terms(st, text, rules, found=found)
                    linking.match_pattern(doc, found, rules)
                    links = linking.link_node(st, doc.id, rules, now=doc.created_at, doc=doc, found=found,
                                              existing=set())  # a new node has no edges yet
                    out["indexed"].append((time.perf_counter() - t) * 1000)
                    out["links"].append(len(links))
                    if i < naive_probes:
                        rules.memo.clear()
                        t = time.perf_counter()
                        naive(st, doc, rules)
                        out["naive"].append((time.perf_counter() - t) * 1000)
                    raise _Rollback
            except _Rollback:
                pass


def log_speed(path: Path, n_logs: int, seed: int = 5) -> dict[str, list[float]]:
    """`ws.log()` end to end (journal, daily file, graph write, patterns, links) on a copy of a built
    workspace held open, with linking on and off, interleaved."""
    import shutil
    import tempfile

    rng = random.Random(seed)
    vocab = vocabulary(random.Random(7))
    weights = zipf(vocab)
    out: dict[str, list[float]] = {"link": [], "no-link": []}
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "ws"
        shutil.copytree(path, copy)
        ws = kg.open_workspace(copy)
        with ws:
            ws.log("error", "warm up the index", area="tooling", now="2030-01-01T00:00:00")
            for i in range(n_logs):
                for link in (True, False):
                    text = make_text(rng, vocab, weights)
                    t = time.perf_counter()
                    ws.log("error", text, area="tooling", link=link, now=f"2030-01-02T10:{i % 60:02d}:00",
                           wait=True)  # applied before it answers: this measures the linking
                    out["link" if link else "no-link"].append((time.perf_counter() - t) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--probes", type=int, default=30)
    ap.add_argument("--naive-probes", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/kg-bench-link")
    ap.add_argument("--logs", type=int, default=15, help="ws.log() calls per mode on the smallest size")
    args = ap.parse_args()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        t = time.perf_counter()
        ws = build(Path(args.dir) / f"n{n}", n)
        built = time.perf_counter() - t
        res = probe(ws, args.probes, args.naive_probes)
        old = probe(ws, args.probes, 0, index="node_fts")  # the same probes, the same run
        idx, nv = statistics.median(res["indexed"]), statistics.median(res["naive"])
        p90 = sorted(res["indexed"])[int(0.9 * (len(res["indexed"]) - 1))]
        rows.append((n, idx, p90, nv, nv / idx, statistics.mean(res["links"]), built,
                     statistics.median(old["indexed"]), statistics.mean(old["links"])))
        print(f"  built/opened {n:,} nodes in {built:.1f}s", file=sys.stderr)
    print(f"{'nodes':>10} {'indexed ms':>11} {'p90 ms':>8} {'naive ms':>10} {'naive/indexed':>14} {'links/node':>11} "
          f"{'node_fts ms':>12} {'side/node_fts':>14} {'links (node_fts)':>17}")
    for n, idx, p90, nv, ratio, links, _, kz, kz_links in rows:
        print(f"{n:>10,} {idx:>11.1f} {p90:>8.1f} {nv:>10.1f} {ratio:>13.1f}x {links:>11.1f} "
              f"{kz:>12.1f} {idx / kz:>13.2f}x {kz_links:>17.1f}")
    if args.logs:
        n0 = rows[0][0]
        res = log_speed(Path(args.dir) / f"n{n0}", args.logs)
        on, off = statistics.median(res["link"]), statistics.median(res["no-link"])
        print(f"ws.log() at {n0:,} nodes, median of {args.logs}: {on:.1f} ms with linking, {off:.1f} ms with "
              f"--no-link ({on - off:+.1f} ms)")
    if len(rows) > 1:
        (n0, i0, *_), (n1, i1, *_) = rows[0], rows[-1]
        print(f"growth: {n1 / n0:.0f}x the nodes cost {i1 / i0:.2f}x the time (indexed median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
