"""Bulk logging (`ws.log_many`) with auto-linking: CPU per entry, and the graph it leaves, against another
checkout of kg (`--main DIR`, its own .venv) measured in the same run on the same input.

Two inputs, each logged into a fresh workspace, one `ws.log_many` per session (threaded, as a transcript):
- `locomo`: the turns of LoCoMo conversations (../shared/data/locomo, speaker and text as the summary, the
  image caption as details, the dialog id as a tag), held out from nothing: only speed and equality are read;
- `seed`: a seed-style batch of agent errors and learnings (bench/common.py's synthetic wording, pattern keys
  on 30 %, high priorities, eight areas), batches of 40 entries a session.

Per input and per kg: the median over `--runs` of CPU ms per entry (user + system of this process, Kùzu's
threads included: the machine is shared, wall time is printed too), and a fingerprint of the graph it left:
every edge (ends, type, manual, score, reason), every pattern and its members, the keyword counts and the
maintained tallies. Equal fingerprints mean the same links, patterns and counts, entry for entry.

    .venv/bin/python bench/log_bulk.py [--conversations 2] [--seed-entries 400] [--runs 3] [--main /work/main]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


def locomo_sessions(conversations: int) -> list[tuple[str, list[dict[str, Any]]]]:
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))[:conversations]
    out = []
    for c, sample in enumerate(samples):
        conv = sample["conversation"]
        keys = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_")
                      and not k.endswith("date_time") and isinstance(conv[k], list))
        for number in keys:
            start = datetime.strptime(conv[f"session_{number}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
            items = []
            for j, turn in enumerate(conv[f"session_{number}"]):
                caption = turn.get("blip_caption")
                items.append({"kind": "learning", "summary": f"{turn['speaker']}: {turn['text']}".strip(),
                              "details": f"shared an image: {caption}" if caption else None,
                              "at": (start + timedelta(seconds=j)).isoformat(), "tags": [turn["dia_id"]],
                              "source": "conversation"})
            out.append((f"locomo-{c}-{number}", items))
    return out


def seed_sessions(n: int, per_session: int = 40) -> list[tuple[str, list[dict[str, Any]]]]:
    from common import synthetic_rows

    items = []
    for i, row in enumerate(synthetic_rows(n, seed=11)):
        item = {"kind": "error" if i % 3 else "learning", "summary": row["text"], "area": row["area"],
                "at": row["created_at"].isoformat(), "priority": "high" if i % 4 == 0 else "medium"}
        if row["pattern_key"]:
            item["pattern_key"] = row["pattern_key"]
        items.append(item)
    return [(f"seed-{k // per_session}", items[k:k + per_session]) for k in range(0, len(items), per_session)]


def fingerprint(ws: Any) -> dict[str, Any]:
    """The graph's links, patterns and counts, in a stable order (ids are allocated the same way each run)."""
    with ws.store() as st:
        q = st.execute
        edges = [[r["a"], r["t"], r["b"], r["m"], round(r["s"] or 0, 6), r["why"]] for r in q(
            "MATCH (a:Node)-[r]->(b:Node) RETURN a.id AS a, label(r) AS t, b.id AS b, r.manual AS m, "
            "r.score AS s, r.reason AS why")]
        nodes = [[r["id"], r["kind"], r["key"], r["text"]] for r in q(
            "MATCH (n:Node) RETURN n.id AS id, n.kind AS kind, n.pattern_key AS key, n.text AS text")]
        terms = [[r["t"], r["df"]] for r in q("MATCH (x:Term) RETURN x.term AS t, x.df AS df")]
        tallies = [[r["k"], r["n"]] for r in q("MATCH (t:Tally) RETURN t.key AS k, t.n AS n") if r["n"]]
    parts = {"edges": sorted(edges), "nodes": sorted(nodes), "terms": sorted(terms), "tallies": sorted(tallies)}
    return {k: [len(v), hashlib.sha256(json.dumps(v, default=str).encode()).hexdigest()[:12]]
            for k, v in parts.items()}


def measure(which: str, size: int, runs: int) -> dict[str, Any]:
    """In this process (this checkout's kg): CPU and wall ms per entry, medians of `runs`, and the fingerprint."""
    import kg

    sessions = locomo_sessions(size) if which == "locomo" else seed_sessions(size)
    entries = sum(len(items) for _, items in sessions)
    cpu, wall, prints = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            ws = kg.init_workspace(Path(tmp) / "ws")
            with ws:  # one graph open for the whole load, as an importer holds it
                c0, t0 = time.process_time(), time.perf_counter()
                for sid, items in sessions:
                    ws.log_many(items, session=sid, thread=True, now=items[0]["at"])
                cpu.append((time.process_time() - c0) * 1000 / entries)
                wall.append((time.perf_counter() - t0) * 1000 / entries)
            prints.append(fingerprint(ws))
    return {"entries": entries, "cpu": statistics.median(cpu), "wall": statistics.median(wall),
            "cpu_runs": cpu, "same_each_run": all(p == prints[0] for p in prints), "print": prints[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=2, help="LoCoMo conversations (input `locomo`)")
    ap.add_argument("--seed-entries", type=int, default=400, help="entries of the seed-style batch")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--main", type=Path, default=None, help="another checkout of kg (with .venv) to compare")
    ap.add_argument("--only", choices=["locomo", "seed"], default=None)
    ap.add_argument("--worker", nargs=2, metavar=("INPUT", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(measure(args.worker[0], int(args.worker[1]), args.runs)))
        return 0
    inputs = [(w, s) for w, s in (("locomo", args.conversations), ("seed", args.seed_entries))
              if args.only in (None, w)]
    kgs = [("this branch", Path(sys.executable))]
    if args.main:
        kgs.append(("main", args.main / ".venv" / "bin" / "python"))
    head = (f"{'input':<8} {'entries':>7} {'kg':<12} {'cpu ms/entry':>12} {'wall ms':>8}  "
            "graph (edges, nodes, terms, tallies)")
    print(head + "\n" + "-" * len(head))
    for which, size in inputs:
        got = {}
        for name, python in kgs:  # each kg in its own process, the bench script the same
            out = subprocess.run([str(python), __file__, "--worker", which, str(size), "--runs", str(args.runs)],
                                 capture_output=True, text=True, cwd=HERE.parent if name != "main" else args.main)
            if out.returncode:
                raise SystemExit(f"{name}: {out.stderr[-2000:]}")
            got[name] = res = json.loads(out.stdout.splitlines()[-1])
            shape = " ".join(f"{k}={n}:{h}" for k, (n, h) in res["print"].items())
            print(f"{which:<8} {res['entries']:>7} {name:<12} {res['cpu']:>12.1f} {res['wall']:>8.1f}  {shape}"
                  + ("" if res["same_each_run"] else "  (differs between runs!)"))
        if "main" in got:
            a, b = got["this branch"], got["main"]
            print(f"{'':<8} {'':>7} {'ratio':<12} {a['cpu'] / b['cpu']:>12.2f} {a['wall'] / b['wall']:>8.2f}  "
                  f"same graph as main: {'yes' if a['print'] == b['print'] else 'NO'}")
    print("\ntarget (issue 17): <= 15 ms per entry with linking")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
