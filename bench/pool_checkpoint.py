"""Whether a writer with a small Kùzu page cache can drain and checkpoint a big graph (issue 22: the read
server's memory). Opens the workspace as the read server does (one query thread) with `POOL` MB, journals and
drains `N` entries, runs CHECKPOINT, and prints the outcome and the process's peak resident size. POOL 0 is the
workspace's own pool (`store.buffer_pool_mb`, 1 GiB by default).

    cp -a /work/scale/bench/results/scale-1000000 /tmp/c1m          # a copy: this writes to it
    .venv/bin/python bench/pool_checkpoint.py /tmp/c1m 0 0           # migrate it once, with the workspace's pool
    .venv/bin/python bench/pool_checkpoint.py /tmp/c1m 128 300

At 1M (Dec 2): 128 MB drains 300 entries (peak 328 MB) and then CHECKPOINT fails with "the buffer pool is full".
"""

from __future__ import annotations

import resource
import sys
import time

import kg
from kg.ingest.drain import drain_held


def main() -> int:
    root, pool, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ws = kg.open_workspace(root)
    ws.open_options = {"max_threads": 1, **({"buffer_pool_mb": pool} if pool else {})}
    t = time.monotonic()
    with ws.store() as st:
        print(f"opened in {time.monotonic() - t:.1f} s", flush=True)
        for i in range(n):
            keyed = {"pattern_key": f"probe.step{i % 7}"} if i % 3 else {}
            ws.log("error" if i % 3 else "learning", f"pool probe {pool} number {i}: build failed on step {i % 7}",
                   apply=False, **keyed)
        t = time.monotonic()
        report = drain_held(ws)
        print(f"drained {report.applied} entries in {time.monotonic() - t:.1f} s", flush=True)
        t = time.monotonic()
        try:
            st.execute("CHECKPOINT")
            print(f"checkpoint ok in {time.monotonic() - t:.1f} s")
        except Exception as exc:  # noqa: BLE001 - the finding
            print(f"CHECKPOINT FAILED: {exc}")
    print(f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
