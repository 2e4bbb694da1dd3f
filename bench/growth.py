"""How the graph file grows on the log path: N entries through `kg ingest` in chunks, whole processes.

A QA pass's 30k-entry ingest grew graph.kuzu to 1.2 GB at ~13k entries (60 MB at 1k) and every apply after that
failed ("the buffer pool is full"). kg/store/compact.py bounds the file. This runs the same chunks into fresh
workspaces with each variant: this kg as it is (`compact`: its packaged rules), this kg with compaction off (a
rules folder whose `store.compact_floor_mb` no file reaches), and a baseline kg (`--baseline`, main's). After each
chunk: graph.kuzu and its write-ahead log, the pages its tables use (`CALL storage_info`, read-only in another
process), the chunk's wall and CPU time and its peak resident memory (the process's own, from wait4).

The entries are the QA pass's: small, over a 26-word vocabulary, 30 % with one of 60 pattern keys, the same seed.

    .venv/bin/python bench/growth.py --entries 5000 --chunk 1000 [--baseline /work/base38/.venv/bin/kg]
        [--variants compact off baseline] [--workdir /tmp/growth]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
KG = Path(sys.executable).with_name("kg")
NOW = "2026-11-20T10:00:00Z"
WORDS = ("build test deploy cache index query parser config docker git npm pytest lint schema migrate token retry "
         "timeout async thread socket json yaml http auth session").split()
_LIVE = ("import kuzu, sys; db = kuzu.Database(sys.argv[1], read_only=True); c = kuzu.Connection(db); t = 0\n"
         "for (n,) in c.execute('CALL show_tables() RETURN name').get_all():\n"
         "    t += c.execute(f\"CALL storage_info('{n}') RETURN sum(num_pages)\").get_next()[0] or 0\n"
         "print(t * 4096)")


def entries(n: int) -> list[str]:
    """The QA pass's generator (/work/tmp-qa6/scale/gen.py), seed 7."""
    rng = random.Random(7)
    start = datetime(2026, 9, 1, 8, 0)
    out = []
    for i in range(n):
        at = start + timedelta(seconds=i * (86400 * 80 // n))
        kind = rng.choice(["learning", "error", "learning", "feature"])
        ws = rng.sample(WORDS, 5)
        e = {"kind": kind, "summary": f"{' '.join(ws)} item {i} when running {ws[0]} on {ws[1]}",
             "at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "session": f"s-{at:%Y%m%d}-{i // 40}",
             "details": f"details about {ws[2]} and {ws[3]} #{i}", "area": rng.choice(["backend", "tests", "infra",
                                                                                      "docs"]), "tags": ws[:2]}
        if rng.random() < 0.3:
            e["pattern_key"] = f"key.{rng.randrange(60)}"
        if kind == "learning":
            e["category"] = rng.choice(["correction", "best_practice", "knowledge_gap"])
        out.append(json.dumps(e))
    return out


def run_chunk(kg: str, root: Path, src: Path, rules: Path | None, env: dict[str, str]) -> dict:
    argv = [kg, "-w", str(root), *(["--rules", str(rules)] if rules else []), "--now", NOW, "ingest", str(src),
            "--json"]
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:  # (not pipes: wait4 reaps it)
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out_f, stderr=err_f, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read().decode(), err_f.read().decode()
    try:
        answer = json.loads(out)
    except ValueError:
        answer = {"applied": False, "note": (out + err)[-300:]}
    return {"code": os.waitstatus_to_exitcode(status), "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024, "applied": answer.get("applied"), "note": answer.get("note", ""),
            "compacted": len(answer.get("compacted") or [])}


def sizes(root: Path) -> tuple[int, int, int]:
    kg_dir = root / "memory" / ".kg"
    graph, wal = kg_dir / "graph.kuzu", kg_dir / "graph.kuzu.wal"
    file = graph.stat().st_size if graph.exists() else 0
    log = wal.stat().st_size if wal.exists() else 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    proc = subprocess.run([sys.executable, "-c", _LIVE, str(graph)], capture_output=True, text=True, env=env)
    live = int(proc.stdout.strip() or 0) if proc.returncode == 0 else -1
    return file, log, live


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=5000)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--baseline", default="", help="another kg (main's) to run the same chunks with")
    ap.add_argument("--variants", nargs="+", default=["compact", "off", "baseline"])
    ap.add_argument("--workdir", default="")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="kg-growth-"))
    work.mkdir(parents=True, exist_ok=True)
    lines = entries(args.entries)
    chunks = []
    for i in range(0, len(lines), args.chunk):
        path = work / f"chunk-{i // args.chunk:03d}.jsonl"
        path.write_text("\n".join(lines[i:i + args.chunk]) + "\n", encoding="utf-8")
        chunks.append(path)
    off = work / "rules-off"
    off.mkdir(exist_ok=True)
    (off / "policy.toml").write_text("[store]\ncompact_floor_mb = 1048576\n", encoding="utf-8")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("KG_")}, "KG_SERVER": "0"}
    kgs = {"compact": (str(KG), None), "off": (str(KG), off), "baseline": (args.baseline, None)}
    print(f"{'variant':9} {'entries':>7} {'graph MB':>9} {'wal MB':>7} {'live MB':>8} {'wall s':>7} {'cpu s':>6} "
          f"{'rss MB':>7} {'compacted':>9}  note")
    for variant in args.variants:
        kg, rules = kgs[variant]
        if not kg:
            continue
        root = work / f"ws-{variant}"
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run([kg, "init", str(root)], check=True, capture_output=True, env=env)
        for n, src in enumerate(chunks, 1):
            r = run_chunk(kg, root, src, rules, env)
            file, log, live = sizes(root)
            note = "" if r["applied"] else (r["note"] or f"exit {r['code']}")[:80]
            print(f"{variant:9} {min(n * args.chunk, args.entries):7d} {file / 2**20:9.1f} {log / 2**20:7.1f} "
                  f"{live / 2**20:8.1f} {r['wall']:7.1f} {r['cpu']:6.1f} {r['rss_mb']:7.0f} {r['compacted']:9d}  "
                  f"{note}", flush=True)


if __name__ == "__main__":
    main()
