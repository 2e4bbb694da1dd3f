"""What kg/store/strings.py's FILL costs: a Meta row made (a tally's `tly_add` of a new key) with the NULL value
set to '' in its transaction, against the same statement without it, in the same run on the same graph.

A fresh graph per Meta size (the rows are tally rows); the two forms alternate in rounds; medians in ms and the
ratio FILL / without. A graph's first write of a tally is the case: a later add of the same key makes no row.

    .venv/bin/python bench/meta_fill.py [--sizes 0,2000,20000] [--runs 100]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0,2000,20000")
    ap.add_argument("--runs", type=int, default=100)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="meta-fill-"))
    print("| Meta rows | with FILL ms | without ms | ratio |")
    print("|---:|---:|---:|---:|")
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            folder = root / f"g{n}"
            folder.mkdir()
            path = list_tears.fresh(folder)
            with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10) as st:
                if n:
                    st._execute_raw("UNWIND range(1, $n) AS i CREATE (:Meta {key: 'tally:x' + CAST(i AS STRING), "
                                    "kind: 'tally', id: 'x', n: 1, value: ''})", {"n": n})
                times: dict[str, list[float]] = {"fill": [], "none": []}
                made = strings.makes_meta
                for round_ in range(4):
                    form = ("fill", "none")[round_ % 2]
                    strings.makes_meta = made if form == "fill" else (lambda cypher: False)
                    for i in range(args.runs):
                        t = time.perf_counter()
                        st.run("tly_add", key=f"tally:{form}{round_}-{i}", id="p", d=1)
                        times[form].append(time.perf_counter() - t)
                strings.makes_meta = made
            fill, none = (statistics.median(times[f]) * 1000 for f in ("fill", "none"))
            print(f"| {n} | {fill:.3f} | {none:.3f} | {fill / none:.2f} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
