"""What kg/store/strings.py's `read_back` costs a read: the embedded store turning a Node's '' pattern_key back into
None, against the same reads without it, in the same run on the same graph.

A fresh graph per size (nodes half events, half patterns; a third of them with no key, ''); three reads: every
pattern's key (`bulk_pattern_keys`, as a link pass loads them), every node whole (`nodes_all`, as a trail export
reads them) and one node by key (`node_get`, as `kg show`). The two forms alternate in rounds; medians in ms and
the ratio with / without.

    .venv/bin/python bench/key_readback.py [--sizes 1000,20000] [--runs 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import list_tears  # noqa: E402 - a fresh graph with kg's schema

from kg.store import Store, strings  # noqa: E402

READS = (("bulk_pattern_keys", {}), ("nodes_all", {}), ("node_get", {"id": "N7"}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,20000")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="key-readback-"))
    print("| nodes | read | with read_back ms | without ms | ratio |")
    print("|---:|---|---:|---:|---:|")
    kept = strings.read_back
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            folder = root / f"g{n}"
            folder.mkdir()
            path = list_tears.fresh(folder)
            with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10) as st:
                rows = [{"id": f"N{i}", "kind": "pattern" if i % 2 == 0 else "event", "text": f"text {i}",
                         "key": "" if i % 3 == 0 else f"key-{i}"} for i in range(1, n + 1)]
                st._execute_raw("UNWIND $rows AS r CREATE (:Node {id: r.id, kind: r.kind, text: r.text, "
                                "status: 'active', pattern_key: r.key, created_at: timestamp('2026-05-01 09:00:00')})",
                                {"rows": rows})
                for name, params in READS:
                    times: dict[str, list[float]] = {"with": [], "without": []}
                    for round_ in range(4):
                        form = ("with", "without")[round_ % 2]
                        strings.read_back = kept if form == "with" else (lambda cypher, columns, rows: None)
                        for _ in range(args.runs):
                            t = time.perf_counter()
                            st.run(name, **params)
                            times[form].append(time.perf_counter() - t)
                    strings.read_back = kept
                    w, wo = (statistics.median(times[f]) * 1000 for f in ("with", "without"))
                    print(f"| {n} | {name} | {w:.3f} | {wo:.3f} | {w / wo:.2f} |")
    finally:
        strings.read_back = kept
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
