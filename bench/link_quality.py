"""Link and dedup quality on the labelled pairs in tests/data/link_pairs.jsonl.

Each pair carries two texts (real wording from ../shared/data/transcripts and the seed's examples, English,
Chinese and mixed), what each is (`ka`/`kb`: an entry type — error, learning, feature — or a node kind) and
three labels: related (should be linked), duplicate (the same thing said twice: should share a pattern),
contradicts (must never be merged; should get a `contradicts` edge).

The decisions are kg's own pure functions with the packaged rules (`rules/linking.toml`); rarity weights
come from the pair texts themselves as a small corpus, as the graph's keyword table would give them.

    .venv/bin/python bench/link_quality.py            # the table
    .venv/bin/python bench/link_quality.py --errors   # and every wrong decision
    .venv/bin/python bench/link_quality.py --graph WS --sample 300   # linking's candidates: side index vs node_fts

`--graph` (issue 22) asks a real graph's two full-text indexes the same linking queries (bench/link_agreement.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kg.graph import linking

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "link_pairs.jsonl"
ENTRY_TYPES = {"error", "learning", "feature"}


def load(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def doc(node_id: str, text: str, what: str, *, as_event: bool = False) -> linking.Doc:
    """A pair end as a node: an entry type makes a logged event; with `as_event`, a statement (lesson,
    principle ...) is compared as a logged learning, so dedup is judged on every pair."""
    if what in ENTRY_TYPES:
        return linking.Doc(node_id, "event", text, entry_type=what, area="tooling")
    if as_event:
        return linking.Doc(node_id, "event", text, entry_type="learning", area="tooling")
    return linking.Doc(node_id, what, text, area="tooling")


def weights_for(pairs: list[dict], rules: linking.LinkRules) -> dict[str, float]:
    texts = {p[k] for p in pairs for k in ("a", "b")}
    df: dict[str, int] = {}
    for t in texts:
        for term in set(linking.terms(t, rules)):
            df[term] = df.get(term, 0) + 1
    return {t: linking.idf(c, len(texts)) for t, c in df.items()}


def evaluate(pairs: list[dict], rules: linking.LinkRules | None = None) -> dict:
    rules = rules or linking.default_rules()
    weights = weights_for(pairs, rules)
    out = {"pairs": len(pairs), "link": [0, 0, 0, 0], "dedup": [0, 0, 0, 0], "contra": [0, 0, 0, 0],
           "wrong_merges": 0, "contradiction_pairs": 0, "errors": []}

    def tally(key: str, truth: bool, guess: bool) -> None:
        # [true positive, false positive, false negative, true negative]
        out[key][0 if truth and guess else 1 if guess else 2 if truth else 3] += 1

    for i, p in enumerate(pairs):
        a, b = doc(f"a{i}", p["a"], p["ka"]), doc(f"b{i}", p["b"], p["kb"])
        link = linking.decide_link(b, a, rules, weights)
        tally("link", p["related"], link is not None)
        tally("contra", p["contradicts"], link is not None and link.type == "contradicts")
        ea, eb = doc(f"a{i}", p["a"], p["ka"], as_event=True), doc(f"b{i}", p["b"], p["kb"], as_event=True)
        dup = linking.duplicate(eb, ea, rules, weights)
        tally("dedup", p["duplicate"], dup is not None)
        if p["contradicts"]:
            out["contradiction_pairs"] += 1
            if dup is not None:
                out["wrong_merges"] += 1
        if (link is not None) != p["related"] or (dup is not None) != p["duplicate"] or (
                p["contradicts"] != (link is not None and link.type == "contradicts")):
            sim = linking.similarity(linking.terms(p["b"], rules), linking.terms(p["a"], rules), rules, weights)
            out["errors"].append({"a": p["a"], "b": p["b"], "labels": [p["related"], p["duplicate"],
                                                                       p["contradicts"]],
                                  "link": link.type if link else None, "dup": dup is not None,
                                  "score": sim.score})
    return out


def prf(counts: list[int]) -> tuple[float, float, float]:
    tp, fp, fn, _ = counts
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--errors", action="store_true", help="list every wrong decision")
    ap.add_argument("--graph", type=Path, help="a workspace whose graph has node_fts: compare the indexes")
    ap.add_argument("--sample", type=int, default=300, help="with --graph: nodes asked")
    ap.add_argument("--tail", type=int, default=100, help="with --graph: nodes asked inside a transaction")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/link-agreement"), help="with --graph: the copy")
    args = ap.parse_args()
    if args.graph:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from link_agreement import run

        print(run(args.graph, args.sample, args.tail, args.workdir))
        return 0
    res = evaluate(load())
    print(f"{res['pairs']} labelled pairs ({DATA.relative_to(DATA.parent.parent.parent)})")
    print(f"{'decision':<22} {'precision':>9} {'recall':>7} {'f1':>6}   tp  fp  fn  tn")
    for key, name in (("link", "link (related)"), ("dedup", "dedup (same pattern)"),
                      ("contra", "contradicts edge")):
        p, r, f = prf(res[key])
        tp, fp, fn, tn = res[key]
        print(f"{name:<22} {p:>9.2f} {r:>7.2f} {f:>6.2f}  {tp:>3} {fp:>3} {fn:>3} {tn:>3}")
    print(f"wrong merges of contradicting texts: {res['wrong_merges']} of {res['contradiction_pairs']} "
          "contradicting pairs")
    if args.errors:
        for e in res["errors"]:
            print(f"- labels(rel,dup,contra)={e['labels']} got link={e['link']} dup={e['dup']} "
                  f"score={e['score']:.2f}\n    a: {e['a']}\n    b: {e['b']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
