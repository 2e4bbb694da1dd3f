"""Repeats in the plain files: how many daily-log lines and `.learnings` entries real runtime transcripts make
(`kg reflect --apply` into a fresh workspace that keeps `.learnings/`), with this build and, with `--kg`, another
build in the same run (the graph's entries must be equal: only the files fold); then what one `kg log` pays in
`.learnings` for a repeat (a fold into the file's end) and for an entry that repeats nothing, beside a plain append
of the same entry, on a file of `--entries` entries. Medians; never asserts.

    .venv/bin/python bench/log_repeats.py [--kg before=../main/.venv/bin/kg] [--entries 80000] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

REPO = Path(__file__).resolve().parent.parent
RUNTIMES = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data")) / "runtimes"
KG = str(Path(sys.executable).parent / "kg")
TRANSCRIPTS = ["claude_code/transcripts/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
               "claude_code/transcripts/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
               "aider/aquaticat_monochromatic/.aider.chat.history.md",
               "aider/afi-protocol_afi-core/.aider.chat.history.md",
               "codex/transcripts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
               "openclaw/transcripts/f967d602-325a-4a45-8d54-ee17484cfd96.jsonl",
               "openclaw/transcripts/pi-coding-agent/large-session.jsonl"]


def counts(kg: str, transcript: Path, folder: Path) -> tuple[int, int, int]:
    """(entries in the graph, daily-log entry lines, .learnings entries) after reflecting on `transcript`."""
    env = {k: v for k, v in os.environ.items() if k != "KG_WORKSPACE"}
    subprocess.run([kg, "init", str(folder)], capture_output=True, check=True, env=env)
    (folder / ".learnings").mkdir()
    subprocess.run([kg, "-w", str(folder), "reflect", str(transcript), "--apply", "--now", "2026-12-02T12:00"],
                   capture_output=True, check=True, env=env)
    listed = subprocess.run([kg, "-w", str(folder), "list", "--limit", "100000", "--json"], capture_output=True,
                            text=True, check=True, env=env)
    entries = sum(1 for e in json.loads(listed.stdout) if e.get("entry_type"))
    daily = sum(1 for p in (folder / "memory").glob("20*.md") for ln in p.read_text().splitlines()
                if ln.startswith("### ") and "Session summary" not in ln)
    learned = sum(p.read_text().count("\n## [") for p in (folder / ".learnings").glob("*.md"))
    return entries, daily, learned


def speed(n: int, runs: int) -> list[list[str]]:
    from kg.memory import logs

    base = {"entry_type": "error", "priority": "high", "status": "pending", "session": "s1", "details": "x" * 300}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".learnings").mkdir()
        (root / "memory" / ".kg").mkdir(parents=True)
        path = root / ".learnings" / "ERRORS.md"
        path.write_text("# Errors\n\n" + "".join(logs.learnings_entry(
            {**base, "id": f"ERR-20261130-{i:06d}", "text": f"failure number {i}",
             "created_at": "2026-11-30T10:00:00"}) for i in range(n)))
        size = path.stat().st_size / 1e6
        first = {**base, "text": "git push failed: no upstream branch", "created_at": "2026-12-01T10:00:00"}
        logs.append_learning(root, {**first, "id": "ERR-20261201-000001"})

        def median(fn) -> float:
            times = []
            for k in range(runs):
                t = time.perf_counter()
                fn(k)
                times.append(time.perf_counter() - t)
            return 1000 * statistics.median(times)

        plain = median(lambda k: logs.append_text(path, logs.learnings_entry(
            {**base, "id": f"ERR-20261201-P{k}", "text": f"plain {k}", "created_at": "2026-12-01T10:00:00"})))
        fold = median(lambda k: logs.append_learning(root, {**first, "id": f"ERR-20261201-R{k}"}))
        other = median(lambda k: logs.append_learning(root, {**first, "id": f"ERR-20261201-D{k}",
                                                             "text": f"distinct {k}"}))
        rows.append([f"{n:,} entries, {size:.0f} MB", f"{plain:.2f}", f"{fold:.1f}", f"{other:.2f}",
                     f"{fold / plain:.0f}x"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kg", action="append", default=[], metavar="NAME=PATH", help="another build's kg, compared")
    ap.add_argument("--entries", type=int, default=80000, help="entries in the .learnings file timed")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-counts", action="store_true", help="only the speed table")
    args = ap.parse_args()
    builds = [("this", KG)] + [tuple(x.split("=", 1)) for x in args.kg]  # type: ignore[misc]
    if not args.no_counts:
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            for rel in TRANSCRIPTS:
                row = [rel.split("/")[0] + " " + Path(rel).name[:24]]
                for name, kg in builds:
                    e, d, learned = counts(kg, RUNTIMES / rel, Path(tmp) / f"{name}-{len(rows)}")
                    row += [str(e), str(d), str(learned)]
                rows.append(row)
        head = ["transcript"] + [f"{n} {c}" for n, _ in builds for c in ("entries", "daily lines", ".learnings")]
        print(table("kg reflect --apply: graph entries, daily-log lines, .learnings entries", head, rows))
    print(table(f"one .learnings write (ms, median of {args.runs}): a plain append, a repeat folded, an entry that "
                "repeats nothing", ["file", "plain append", "fold", "no repeat", "fold / plain"],
                speed(args.entries, args.runs)))


if __name__ == "__main__":
    main()
