"""What the check for a damaged ids.json costs each writer's open of the graph (kg/ingest/ids_rebuild.py
`damaged`, before the drain), on an ids.json of 3 prefixes a day for one year and for ten.

    .venv/bin/python bench/ids_check.py
    .venv/bin/python bench/ids_check.py --runs 51

Baseline, measured in the same run: the journal's own read of the counters (`Journal._load_ids`), which every
`kg log` pays once under the journal lock. Prints medians and ratios; never asserts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import median_of, table


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=31)
    args = ap.parse_args()
    from kg.ingest.ids_rebuild import damaged
    from kg.ingest.journal import Journal

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for years in (1, 10):
            folder = Path(tmp) / f"y{years}"
            folder.mkdir()
            days = [date(2026, 1, 1) - timedelta(days=d) for d in range(365 * years)]
            counters = {f"{p}-{d:%Y%m%d}": 7 for d in days for p in ("ERR", "LRN", "pat")}
            (folder / "ids.json").write_text(json.dumps(counters, sort_keys=True))
            journal = Journal(folder, timeout=1)

            def load(journal: Journal = journal) -> None:
                journal._ids = None
                journal._load_ids()

            base, _ = median_of(load, args.runs)
            check, _ = median_of(lambda folder=folder: damaged(folder / "ids.json"), args.runs)
            rows.append([f"{len(counters):,} counters", f"{base * 1e3:.2f}", f"{check * 1e3:.2f}",
                         f"{check / base:.2f}"])
    print(table(f"ids.json read, median of {args.runs} runs (ms)",
                ["ids.json", "Journal._load_ids (baseline)", "damaged()", "ratio"], rows))


if __name__ == "__main__":
    main()
