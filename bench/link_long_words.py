"""Linking's answers for long words (over FTS5 porter's 64 bytes) against Kùzu's own full-text index (node_fts).

FTS5's porter tokenizer passes a token over 64 bytes through unstemmed; Kùzu's stemmer stems it, so linking on the
side index answered otherwise than node_fts for a long identifier in another inflection. This builds one graph with
node_fts, one node per word (English endings porter changes in each of its steps, after heads of letters of both
classes, of `y`s, of consonants only, and of `é`s), asks node_fts and `sidelink.candidates` for each word, and counts
the words whose answers (ids and scores) differ. With `--baseline REV`, the same in a second process whose
kg/store/linktext.py is REV's (the side file is built by each process from the same graph). Prints a table.

    .venv/bin/python bench/link_long_words.py [--baseline 3ac3c2d]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENDINGS = """relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli
analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti
sensibiliti triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner
gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate
angulariti homologous effective bowdlerize probate rate cease controll roll caresses ponies ties caress cats feed agreed
plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky
generalizations oscillators overrides yyyying""".split()
HEADS = {"mixed": "abstractsingletonproxyfactorybeanconfiguration", "y": "xyzzyplughtwistymazeofpassages",
         "consonants": "bcdfghjklmnpqrstvwxz", "non-ASCII": "caf" + "é" * 26}


def words() -> list[tuple[str, str]]:
    out = {}
    for kind, head in HEADS.items():
        for e in ENDINGS:
            for n in (62, 66, 70, 90):
                out.setdefault((head * 5)[:max(n - len(e), 1)] + e, kind)
    return [(w, k) for w, k in out.items()]


def measure(linktext_source: str | None) -> dict[str, list[int]]:
    if linktext_source is not None:  # REV's linking text, as that tree wrote it
        import kg.store.linktext as lt
        from kg.store import sidefile, sideindex, sidelink

        exec(compile(linktext_source, "linktext(baseline)", "exec"), lt.__dict__)
        for module in (sidefile, sideindex, sidelink):  # (each took the function by name at its import)
            module.link_text = lt.link_text
    from kg.ingest.apply import node_params
    from kg.store import _FTS_CREATE, Store, sidelink

    ws = words()
    graph = Path(tempfile.mkdtemp()) / "memory" / ".kg" / "graph.kuzu"
    graph.parent.mkdir(parents=True)
    got: dict[str, list[int]] = {}
    with Store.open(graph, lock_path=graph.with_name("graph.lock"), lock_timeout=30.0) as st:
        st.execute(_FTS_CREATE)
        st.forget_prepared()
        at = datetime(2026, 1, 5, 10)
        with st.transaction():
            for i, (w, _) in enumerate(ws):
                st.run("node_create", **node_params(f"A-{i:04d}", "event", f"{w} broke the build",
                                                    at + timedelta(minutes=i)))
        for w, kind in ws:
            rows = st.execute("CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := 50) RETURN node.id AS id, score",
                              {"q": w})
            expected = sorted((r["id"], round(r["score"], 6)) for r in rows)
            mine = sorted((i, round(s, 6)) for i, _, s in sidelink.candidates(st, [w], 50))
            got.setdefault(kind, [0, 0])[0] += 1
            got[kind][1] += mine != expected
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="a git revision whose kg/store/linktext.py to compare with")
    ap.add_argument("--child", choices=["this", "baseline"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        source = None
        if args.child == "baseline":
            source = subprocess.run(["git", "show", f"{args.baseline}:kg/store/linktext.py"], cwd=HERE.parent,
                                    capture_output=True, text=True, check=True).stdout
        print(json.dumps(measure(source)))
        return 0
    runs = [("this tree", "this")] + ([(f"baseline {args.baseline}", "baseline")] if args.baseline else [])
    results = {}
    for name, child in runs:
        cmd = [sys.executable, __file__, "--child", child] + (["--baseline", args.baseline] if args.baseline else [])
        results[name] = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    print(f"| heads | words | {' | '.join(f'differ ({n})' for n in results)} |")
    print("|---|---|" + "---|" * len(results))
    for kind in HEADS:
        first = next(iter(results.values()))[kind]
        print(f"| {kind} | {first[0]} | {' | '.join(str(r[kind][1]) for r in results.values())} |")
    total = [sum(r[k][1] for k in HEADS) for r in results.values()]
    print(f"| all | {sum(v[0] for v in next(iter(results.values())).values())} | {' | '.join(map(str, total))} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
