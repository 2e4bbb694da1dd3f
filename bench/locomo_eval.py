"""Retrieval on real data: LoCoMo conversations loaded as dated events, queried with their questions.

For each conversation: a fresh workspace; each conversation session becomes a kg session (`kg session start`
at the session's date), each dialog turn an event logged in it (`ws.log`, the speaker and text as the
summary, an image caption as details, the dialog id such as "D3:7" as a tag), and each turn is linked to the
next by a `led_to` edge (the reply it led to). Then `kg index build`. Every question with evidence is asked
with `kg search` (graph source); recall@k is the share of the question's evidence dialog ids among the top k.

The baseline, measured in the same run, is a plain BM25 (k1=1.2, b=0.75, no stemming, no stopwords) over the
same single turns. The graph-recall weights (rules/search.toml `[expand]`, `w_graph` in rules/memory.toml)
were chosen on conversations 1-3 only (`--split 3`); conversations 4-5 are held out and reported once.

    .venv/bin/python bench/locomo_eval.py [--data PATH] [--conversations N] [--no-edges] [--split 3 [--dev]]
                                          [--cache DIR]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import kg
from kg.core.text import words
from kg.memory import search, sessions, topics

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10)
DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


def session_keys(conv: dict) -> list[int]:
    return sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_") and not k.endswith("date_time")
                  and isinstance(conv[k], list))


def parse_when(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def turn_text(turn: dict) -> tuple[str, str | None]:
    summary = f"{turn['speaker']}: {turn['text']}".strip()
    caption = turn.get("blip_caption")
    return summary, (f"shared an image: {caption}" if caption else None)


def load(ws: kg.Workspace, sample: dict, *, edges: bool = True) -> int:
    conv = sample["conversation"]
    n = 0
    with ws:
        for number in session_keys(conv):
            start = parse_when(conv[f"session_{number}_date_time"])
            sid = sessions.start(ws, start)["id"]
            previous = None
            for j, turn in enumerate(conv[f"session_{number}"]):
                summary, details = turn_text(turn)
                res = ws.log("learning", summary, details=details, now=start + timedelta(seconds=j),
                             session=sid, tags=[turn["dia_id"]], source="conversation")
                if edges and previous is not None:
                    ws.edge_add(previous, res.id, "led_to", now=start + timedelta(seconds=j),
                                reason="the next turn of the conversation")
                previous = res.id
                n += 1
            sessions.end(ws, "", start + timedelta(hours=1), session=sid)
        topics.build(ws, now=start + timedelta(days=1))
    return n


def load_bulk(ws: kg.Workspace, sample: dict) -> int:
    """As `load`, through bulk logging: each session's turns in one `ws.log_many` (one journal write, one
    graph open, auto-linked as they go), threaded by `led_to`."""
    conv = sample["conversation"]
    n = 0
    with ws:  # one graph open for the conversation, as `load` has
        n = _load_bulk(ws, conv)
    return n


def _load_bulk(ws: kg.Workspace, conv: dict) -> int:
    n = 0
    for number in session_keys(conv):
        start = parse_when(conv[f"session_{number}_date_time"])
        sid = sessions.start(ws, start)["id"]
        items = []
        for j, turn in enumerate(conv[f"session_{number}"]):
            summary, details = turn_text(turn)
            items.append({"kind": "learning", "summary": summary, "details": details,
                          "at": start + timedelta(seconds=j), "tags": [turn["dia_id"]], "source": "conversation"})
        ws.log_many(items, session=sid, thread=True)
        n += len(items)
        sessions.end(ws, "", start + timedelta(hours=1), session=sid)
    topics.build(ws, now=start + timedelta(days=1))
    return n


def ingest_speed(data: Path, pick: list[int]) -> str:
    """Milliseconds per turn, single logs (`load`) against bulk logging (`load_bulk`), same conversations,
    fresh workspaces, alternating."""
    import json

    samples = json.loads(data.read_text(encoding="utf-8"))
    rows = []
    for i in pick:
        sample = samples[i]
        got = {}
        for name, loader in (("single ws.log + edge_add", load), ("ws.log_many (bulk)", load_bulk)):
            with tempfile.TemporaryDirectory() as tmp:
                ws = kg.init_workspace(Path(tmp) / "ws")
                t0, c0 = time.perf_counter(), time.process_time()
                turns = loader(ws, sample)
                got[name] = (time.perf_counter() - t0) * 1000 / turns
                cpu = (time.process_time() - c0) * 1000 / turns  # this process's (the machine is shared)
                with ws.store() as st:
                    edges = st.execute("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
            rows.append(f"{sample.get('sample_id', i):<10} {turns:>6} {name:<26} {got[name]:>8.1f} {cpu:>8.1f} "
                        f"{edges:>7}")
        rows.append(f"{'':<10} {'':>6} {'ratio bulk/single':<26} "
                    f"{got['ws.log_many (bulk)'] / got['single ws.log + edge_add']:>8.2f}")
    head = f"{'conv':<10} {'turns':>6} {'way':<26} {'ms/turn':>8} {'cpu ms':>8} {'edges':>7}"
    return "\n".join([head, "-" * len(head), *rows, "\ntarget (issue 17): <= 15 ms per entry with linking"])


def evidence_of(qa: dict) -> set[str]:
    out = set()
    for e in qa.get("evidence") or []:
        for part in str(e).replace(",", ";").split(";"):
            if part.strip():
                out.add(part.strip())
    return out


class BM25:
    """Plain Okapi BM25 over single turns: the baseline."""

    def __init__(self, docs: list[tuple[str, str]], k1: float = 1.2, b: float = 0.75):
        self.ids = [d[0] for d in docs]
        self.tfs = [Counter(words(d[1])) for d in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(1, len(self.lens))
        df = Counter(t for tf in self.tfs for t in tf)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.k1, self.b = k1, b

    def rank(self, query: str, k: int) -> list[str]:
        q = words(query)
        scores = []
        for i, tf in enumerate(self.tfs):
            s = 0.0
            for t in q:
                f = tf.get(t)
                if f:
                    norm = 1 - self.b + self.b * self.lens[i] / self.avg
                    s += self.idf[t] * f * (self.k1 + 1) / (f + self.k1 * norm)
            if s > 0:
                scores.append((-s, i))
        scores.sort()
        return [self.ids[i] for _, i in scores[:k]]


def run(data: Path, conversations: int | None = None, *, edges: bool = True, quiet: bool = False,
        pick: list[int] | None = None, cache: Path | None = None, bulk: bool = True) -> dict:
    import json

    samples = json.loads(data.read_text(encoding="utf-8"))[:conversations]
    if pick is not None:
        samples = [samples[i] for i in pick if i < len(samples)]
    totals = {"kg": defaultdict(list), "bm25": defaultdict(list)}
    timings = []
    empty = {"kg": 0, "bm25": 0}
    for sample in samples:
        with tempfile.TemporaryDirectory() as tmp:
            root = (cache / f"{sample.get('sample_id', '?')}{'' if edges else '-no-edges'}" if cache
                    else Path(tmp) / "ws")
            t0 = time.perf_counter()
            if root.exists() and (root / "memory").exists():  # loaded by an earlier run (--cache)
                ws, turns = kg.open_workspace(root), sum(len(sample["conversation"][f"session_{n}"])
                                                          for n in session_keys(sample["conversation"]))
            else:
                ws = kg.init_workspace(root)
                turns = load_bulk(ws, sample) if edges and bulk else load(ws, sample, edges=edges)
            load_s = time.perf_counter() - t0
            conv = sample["conversation"]
            docs = [(t["dia_id"], " ".join(x for x in turn_text(t) if x))
                    for n in session_keys(conv) for t in conv[f"session_{n}"]]
            base = BM25(docs)
            last = parse_when(conv[f"session_{session_keys(conv)[-1]}_date_time"]) + timedelta(days=1)
            with ws:
                for qa in sample["qa"]:
                    ev = evidence_of(qa)
                    if not ev:
                        continue
                    t1 = time.perf_counter()
                    hits = search.search(ws, qa["question"], limit=max(KS), now=last, sources=["graph"])
                    timings.append(time.perf_counter() - t1)
                    ranked: list[str] = []
                    for h in hits:
                        for tag in h.tags:
                            if tag not in ranked:
                                ranked.append(tag)
                    baseline = base.rank(qa["question"], max(KS))
                    cat = CATEGORIES.get(qa.get("category"), str(qa.get("category")))
                    for name, got in (("kg", ranked), ("bm25", baseline)):
                        empty[name] += not got
                        for k in KS:
                            r = len(ev & set(got[:k])) / len(ev)
                            totals[name][(cat, k)].append(r)
                            totals[name][("overall", k)].append(r)
        if not quiet:
            print(f"  {sample.get('sample_id', '?')}: {turns} turns loaded in {load_s:.1f}s", file=sys.stderr)
    out = {name: {f"{cat}@{k}": sum(v) / len(v) for (cat, k), v in t.items()} for name, t in totals.items()}
    out["empty"] = empty
    out["n"] = {cat: len(v) for (cat, k), v in totals["kg"].items() if k == KS[0]}
    timings.sort()
    out["search_ms_p50"] = 1000 * timings[len(timings) // 2] if timings else None
    return out


def table(result: dict) -> str:
    cats = ["overall"] + [c for c in CATEGORIES.values() if c in result["n"]]
    lines = [f"{'category':<12} {'n':>5} {'bm25@5':>8} {'kg@5':>8} {'bm25@10':>8} {'kg@10':>8} {'ratio@10':>9}",
             "-" * 64]
    for c in cats:
        b5, k5 = result["bm25"][f"{c}@5"], result["kg"][f"{c}@5"]
        b10, k10 = result["bm25"][f"{c}@10"], result["kg"][f"{c}@10"]
        ratio = k10 / b10 if b10 else float("nan")
        lines.append(f"{c:<12} {result['n'][c]:>5} {b5:>8.3f} {k5:>8.3f} {b10:>8.3f} {k10:>8.3f} {ratio:>9.2f}")
    lines.append(f"\nquestions with no hits: kg {result['empty']['kg']}, bm25 {result['empty']['bm25']}")
    lines.append(f"kg search p50 per question: {result['search_ms_p50']:.1f} ms (graph of one conversation)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--no-edges", action="store_true", help="ablation: do not link consecutive turns")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep each loaded conversation's workspace here and reuse it on later runs")
    parser.add_argument("--single", action="store_true", help="load with single logs (ws.log + edge_add), "
                        "not bulk logging")
    parser.add_argument("--ingest", type=int, default=None, metavar="N",
                        help="only measure ingest speed (ms per turn, single against bulk) on N conversations")
    parser.add_argument("--split", type=int, default=None, metavar="N",
                        help="report the first N conversations (tuned on) and the rest (held out) separately")
    parser.add_argument("--dev", action="store_true",
                        help="with --split: report the first N conversations only, never reading the held-out ones "
                        "(for tuning; the held-out figure is read once, at the end)")
    args = parser.parse_args()
    if args.ingest:
        print(ingest_speed(args.data, list(range(args.ingest))))
        return
    bulk = not args.single
    if args.split is None:
        print(table(run(args.data, args.conversations, edges=not args.no_edges, cache=args.cache, bulk=bulk)))
        return
    total = args.conversations or 5
    parts = [(f"conversations 1-{args.split} (tuned on)", list(range(args.split)))]
    if not args.dev and total > args.split:
        parts.append((f"conversations {args.split + 1}-{total} (held out)", list(range(args.split, total))))
    for title, pick in parts:
        print(f"\n{title}\n" + table(run(args.data, edges=not args.no_edges, pick=pick, cache=args.cache,
                                           bulk=bulk)))


if __name__ == "__main__":
    main()
